# `secmode run` itself, off a terminal (pinned) and on one (util-linux
# `script`), with --json; `secmode report` draws the same report again from
# the saved run; `secmode compare` of the run with itself. Label cli only:
# the asan build's run of a whole quick run is SuiteTest's.
include(${CMAKE_CURRENT_LIST_DIR}/../support/expect_run.cmake)

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corrupt)
file(WRITE ${WORK}/corrupt/results.json "{\"schema\":")

# One run off a terminal, pinned: stdout holds the summary alone, the log
# goes to stderr; results.json and the report say where the measuring
# thread ran; and the report is drawn again from results.json alone.
execute_process(COMMAND ${SECMODE} run --quick --modes sys --sizes 64 --repetitions 5 --pin 0
                --out ${WORK}/ok
                RESULT_VARIABLE rc OUTPUT_VARIABLE ok_out ERROR_VARIABLE ok_err)
if(NOT rc EQUAL 0 OR NOT ok_out MATCHES "results:" OR ok_out MATCHES "measuring"
   OR NOT ok_err MATCHES "measuring round 5 of 5 \\.\\.\\. done")
  message(FATAL_ERROR "secmode run off a terminal: exit ${rc}, stdout:\n${ok_out}\nstderr:\n${ok_err}")
endif()
foreach(f results.json report.md report.html micro.csv)
  if(NOT EXISTS ${WORK}/ok/${f})
    message(FATAL_ERROR "secmode run did not write ${f} into ${WORK}/ok")
  endif()
endforeach()
file(READ ${WORK}/ok/results.json pin_json)
string(JSON pinned GET "${pin_json}" method pinned_cpu)
if(NOT pinned STREQUAL "0")
  message(FATAL_ERROR "secmode run --pin 0 recorded method.pinned_cpu ${pinned}")
endif()
file(READ ${WORK}/ok/report.md pin_md)
if(NOT pin_md MATCHES "pinned to CPU 0")
  message(FATAL_ERROR "report.md does not say the run was pinned")
endif()
expect_run(0 "report.md" ${SECMODE} report ${WORK}/ok --out ${WORK}/again)
foreach(f report.md report.html micro.csv)
  file(READ ${WORK}/ok/${f} first)
  file(READ ${WORK}/again/${f} second)
  if(NOT first STREQUAL second)
    message(FATAL_ERROR "secmode report drew a different ${f} from the same results.json")
  endif()
endforeach()
# On a terminal (util-linux `script` gives it one): the progress line, with
# its step counts, elapsed time and time left, redrawn in place; the
# summary says "results:".
find_program(SCRIPT script)
if(SCRIPT)
  execute_process(COMMAND ${SCRIPT} -qec "${SECMODE} run --quick --modes sys --sizes 64 --out ${WORK}/tty"
                  /dev/null RESULT_VARIABLE rc OUTPUT_VARIABLE tty_out ERROR_VARIABLE tty_err)
  if(NOT rc EQUAL 0 OR NOT tty_out MATCHES "\\[1/5\\] measuring round 1 of 3"
     OR NOT tty_out MATCHES "\\[5/5\\] section e2e · [0-9]+:[0-9][0-9] elapsed · (about|finishing)"
     OR NOT tty_out MATCHES "measuring round 3 of 3 \\.\\.\\. done" OR NOT tty_out MATCHES "results:")
    message(FATAL_ERROR "secmode run on a terminal: exit ${rc}, output:\n${tty_out}${tty_err}")
  endif()
endif()
# --json: stdout is the summary alone, valid JSON naming what was written.
execute_process(COMMAND ${SECMODE} run --quick --modes sys --sizes 64 --json --out ${WORK}/js
                RESULT_VARIABLE rc OUTPUT_VARIABLE js ERROR_VARIABLE js_err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "secmode run --json exited ${rc}: ${js_err}")
endif()
string(JSON out_dir GET "${js}" out_dir)
string(JSON first_file GET "${js}" files 0)
if(NOT out_dir STREQUAL "${WORK}/js" OR NOT first_file STREQUAL "${WORK}/js/results.json")
  message(FATAL_ERROR "secmode run --json printed an unexpected summary:\n${js}")
endif()
if(NOT js_err MATCHES "measuring round 1 of 3")
  message(FATAL_ERROR "secmode run --json did not put its progress on stderr:\n${js_err}")
endif()
# The run compared with itself: every row is on both sides, and with one run
# a side none gets a verdict, whatever its repetitions; a folder of two
# copies of it a side has runs but no spread between them.
expect_run(0 " too few runs." ${SECMODE} compare ${WORK}/ok
           ${WORK}/ok/results.json)
file(REMOVE_RECURSE ${WORK}/set)
file(MAKE_DIRECTORY ${WORK}/set/1 ${WORK}/set/2)
file(COPY ${WORK}/ok/results.json DESTINATION ${WORK}/set/1)
file(COPY ${WORK}/ok/results.json DESTINATION ${WORK}/set/2)
expect_run(0 " runs without spread." ${SECMODE} compare ${WORK}/set
           ${WORK}/set)
expect_run(0 "## micro" ${SECMODE} compare --markdown ${WORK}/ok ${WORK}/ok)
expect_run(2 "B: ${WORK}/none: no such file" ${SECMODE} compare ${WORK}/ok ${WORK}/none)
expect_run(1 "not valid JSON" ${SECMODE} compare ${WORK}/corrupt ${WORK}/ok)
expect_run(2 "--alpha" ${SECMODE} compare --alpha 2 ${WORK}/ok ${WORK}/ok)
expect_run(2 "B is required" ${SECMODE} compare ${WORK}/ok)
file(REMOVE_RECURSE ${WORK})
