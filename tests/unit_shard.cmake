# cmake -DBIN=tilegen_unit_tests -DSHARD=i -DSHARDS=n -P unit_shard.cmake: runs the i-th of n
# equal ranges of the unit tests, in one fixed shuffled order (doctest's --order-by=rand with a
# constant seed, the same in every shard), so that `ctest -j` spreads them over the cores and the
# slow ones (the interpreter running lowered samples) do not all land in one shard.
# -DEXCLUDE=filters (doctest's --test-case-exclude, comma-separated wildcards) leaves cases out of
# every shard; the sanitizer build sets it through TILEGEN_UNIT_EXCLUDE (tests/CMakeLists.txt).
set(filter "")
if(EXCLUDE)
  set(filter "--test-case-exclude=${EXCLUDE}")
endif()
execute_process(COMMAND ${BIN} --list-test-cases --order-by=rand --rand-seed=1 ${filter} OUTPUT_VARIABLE listing
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${BIN} --list-test-cases failed (${rc})")
endif()
string(REGEX MATCH "passing the current filters: ([0-9]+)" _ "${listing}")
set(total ${CMAKE_MATCH_1})
if(NOT total)
  message(FATAL_ERROR "could not read the number of test cases from ${BIN} --list-test-cases")
endif()
math(EXPR first "${total} * ${SHARD} / ${SHARDS} + 1")
math(EXPR last "${total} * (${SHARD} + 1) / ${SHARDS}")
message(STATUS "unit tests ${first}..${last} of ${total}")
execute_process(COMMAND ${BIN} --order-by=rand --rand-seed=1 ${filter} --first=${first} --last=${last}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "unit tests ${first}..${last} of ${total} failed (${rc})")
endif()
