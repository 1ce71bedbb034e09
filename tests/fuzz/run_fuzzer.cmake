# One bounded fuzz run: `cmake -DFUZZER=... -DNAME=... -DSEEDS=... -DWORK=...
# -DARTIFACTS=... -DSECONDS=... [-DKEEP=1] [-DSEED=n] -P run_fuzzer.cmake`.
# The ctests (CMakeLists.txt) and `make fuzz` (Makefile) both run fuzzers
# through it, so the limits below are the same everywhere:
#   -max_total_time=SECONDS: wall time, not a run count;
#   -rss_limit_mb=2048: the whole process;
#   -malloc_limit_mb=256: one allocation. The largest legitimate one is a
#     64-READ COMPOUND reply (64 MiB of data, 128 MiB of vector capacity);
#     anything larger is a length taken from the input unchecked;
#   -timeout=25: seconds per input.
# The working corpus WORK comes first (libFuzzer writes new inputs into the
# first directory), the committed seeds second, so the source tree is never
# written. WORK starts empty unless KEEP is set (`make fuzz` keeps its
# corpus between runs). Fails if the target crashed, leaked or hit a limit
# (the input is then in ARTIFACTS/NAME-*), or if there are no seeds.
foreach(var FUZZER NAME SEEDS WORK ARTIFACTS SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzzer.cmake: ${var} not set")
  endif()
endforeach()
if(NOT DEFINED SEED)
  set(SEED 1)
endif()
file(GLOB seeds "${SEEDS}/*")
list(LENGTH seeds count)
if(count EQUAL 0)
  message(FATAL_ERROR "no seeds in ${SEEDS}: run `make fuzz-corpus` and commit them")
endif()
if(NOT KEEP)
  file(REMOVE_RECURSE "${WORK}")
endif()
file(MAKE_DIRECTORY "${WORK}" "${ARTIFACTS}")
# The asan preset's sanitizer settings, for runs outside ctest.
get_filename_component(source_dir "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
if(NOT DEFINED ENV{ASAN_OPTIONS})
  set(ENV{ASAN_OPTIONS} "detect_leaks=1:abort_on_error=1:strict_string_checks=1")
endif()
if(NOT DEFINED ENV{UBSAN_OPTIONS})
  set(ENV{UBSAN_OPTIONS} "print_stacktrace=1:halt_on_error=1")
endif()
if(NOT DEFINED ENV{LSAN_OPTIONS})
  set(ENV{LSAN_OPTIONS} "suppressions=${source_dir}/tests/lsan.supp:print_suppressions=0")
endif()
execute_process(
  COMMAND "${FUZZER}" -max_total_time=${SECONDS} -rss_limit_mb=2048 -malloc_limit_mb=256
          -timeout=25 -seed=${SEED} -print_final_stats=1 -artifact_prefix=${ARTIFACTS}/${NAME}-
          "${WORK}" "${SEEDS}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NAME} failed (exit ${rc}); the input is in ${ARTIFACTS}/${NAME}-*")
endif()
