# expect_run(expected_rc must_contain COMMAND...): runs a command in a CMake
# script test and fails unless it exits with expected_rc and its output
# contains must_contain.
# expected_rc "fail" means any non-zero status.
function(expect_run expected_rc must_contain)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(expected_rc STREQUAL "fail")
    if(rc EQUAL 0)
      message(FATAL_ERROR "`${ARGN}` succeeded, expected failure\n${out}\n${err}")
    endif()
  elseif(NOT rc EQUAL expected_rc)
    message(FATAL_ERROR "`${ARGN}` exited ${rc}, expected ${expected_rc}\n${out}\n${err}")
  endif()
  string(FIND "${out}${err}" "${must_contain}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "`${ARGN}` output lacks '${must_contain}':\n${out}\n${err}")
  endif()
endfunction()
