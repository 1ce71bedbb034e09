# A validation run in two shards (as on two hosts; here one after the other
# on this machine) and joined by `secmode merge` holds every chosen point
# once, in grid order, each row with the host that measured it; a shard
# that holds no point and a merge with a shard missing are refused by name.
include(${CMAKE_CURRENT_LIST_DIR}/../support/expect_run.cmake)

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
# Two points, one per shard: each point is a real measurement of seconds.
set(points "^(shared-s8-skew0|perconn-s16-skew10ms)$")
foreach(i 0 1)
  expect_run(0 "results:" ${SECMODE} nconnect --validate --points ${points} --shard ${i}/2
             --out ${WORK}/shard${i})
endforeach()
expect_run(2 "holds no point" ${SECMODE} nconnect --validate --points "^shared-s8-skew0$"
           --shard 1/2 --out ${WORK}/empty)
if(EXISTS ${WORK}/empty)
  message(FATAL_ERROR "a refused shard created its output directory")
endif()
expect_run(2 "shard 1/2 is missing" ${SECMODE} merge ${WORK}/shard0 --out ${WORK}/partial)
expect_run(0 "merged 2 shards (nconnect validation shards), 2 rows" ${SECMODE} merge
           ${WORK}/shard1 ${WORK}/shard0 --out ${WORK}/merged)
file(READ ${WORK}/merged/results.json merged)
foreach(i 0 1)
  string(JSON index GET "${merged}" nconnect ${i} grid_index)
  string(JSON row_host GET "${merged}" nconnect ${i} host)
  if(NOT index EQUAL i)
    message(FATAL_ERROR "merged row ${i} has grid_index ${index}")
  endif()
  if(row_host STREQUAL "")
    message(FATAL_ERROR "merged row ${i} has no host")
  endif()
endforeach()
string(JSON shards LENGTH "${merged}" sections nconnect-validation shards)
if(NOT shards EQUAL 2)
  message(FATAL_ERROR "the merged section lists ${shards} shards, not 2")
endif()
file(READ ${WORK}/merged/report.md report)
string(FIND "${report}" "This validation ran in 2 shards" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "the merged report does not say it ran in shards")
endif()
file(REMOVE_RECURSE ${WORK})
