cmake_minimum_required(VERSION 3.25)
# The layering check itself: it must fail on a tree with an upward include
# and a library that includes CLI11, naming both.
execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${TREE} -P ${CHECKER}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "the layering check passed a tree with upward includes:\n${out}${err}")
endif()
foreach(expected "gss/upward.cc: #include \"suite/suite.h\"" "render/cli11.cc: #include <CLI/CLI.hpp>"
                 "smb/angle.cc: #include <harness/modes.h>")
  string(FIND "${err}" "${expected}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "the layering check did not name '${expected}':\n${err}")
  endif()
endforeach()
