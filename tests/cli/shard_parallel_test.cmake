# A sweep in shards run by GNU parallel (as over ssh hosts, here on this
# machine) and joined by `secmode merge` has the rows of the same sweep run
# whole, and the merge refuses an incomplete set by name.
include(${CMAKE_CURRENT_LIST_DIR}/../support/expect_run.cmake)

find_program(PARALLEL parallel)
if(NOT PARALLEL)
  message(FATAL_ERROR "GNU parallel is not installed (Debian package `parallel`; `make test` "
                      "installs it)")
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(sweep nconnect --sweep --quick --ops 2000 --threads 1)
expect_run(0 "results:" ${SECMODE} ${sweep} --out ${WORK}/whole)
execute_process(COMMAND ${PARALLEL} --will-cite -j 2 --halt now,fail=1
                        ${SECMODE} ${sweep} --shard {}/3 --out ${WORK}/shard{} ::: 0 1 2
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "GNU parallel running the shards exited ${rc}:\n${out}\n${err}")
endif()
expect_run(2 "shard 2/3 is missing" ${SECMODE} merge ${WORK}/shard0 ${WORK}/shard1 --out
           ${WORK}/partial)
expect_run(0 "merged 3 shards (nconnect sweep shards), 36 rows" ${SECMODE} merge ${WORK}/shard2 ${WORK}/shard0
           ${WORK}/shard1 --out ${WORK}/merged)
file(READ ${WORK}/whole/results.json whole)
file(READ ${WORK}/merged/results.json merged)
string(JSON whole_rows GET "${whole}" nconnect)
string(JSON merged_rows GET "${merged}" nconnect)
if(NOT whole_rows STREQUAL merged_rows)
  message(FATAL_ERROR "the merged shards' rows differ from the whole sweep's")
endif()
foreach(f report.md results.json)
  if(NOT EXISTS ${WORK}/merged/${f})
    message(FATAL_ERROR "secmode merge wrote no ${f}")
  endif()
endforeach()
expect_run(2 "--shard: only with --sweep or --validate" ${SECMODE} nconnect --shard 0/2)
expect_run(2 "needs 0 <= I < N" ${SECMODE} ${sweep} --shard 3/3 --out ${WORK}/bad)
if(EXISTS ${WORK}/bad)
  message(FATAL_ERROR "a refused shard created its output directory")
endif()
file(REMOVE_RECURSE ${WORK})
