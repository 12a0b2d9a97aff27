# Compiles raw_contract.cpp with one case (-fsyntax-only, the build's compiler).
#   -DCXX=... -DSOURCE=... -DINCLUDES="a;b" -DCASE=<n> -DMATCH=<regex>
# CASE 0 must compile without a warning; any other must fail, and with an error line that
# matches MATCH (the static_assert's message): a case that fails for another reason (a typo, a
# header missing) fails the test.
include(${CMAKE_CURRENT_LIST_DIR}/../../common/run_and_check.cmake)
set(args -std=c++17 -fsyntax-only -Wall -Wextra -DSPINWISE_CONTRACT_CASE=${CASE})
foreach(i IN LISTS INCLUDES)
  list(APPEND args -I${i})
endforeach()
run_and_capture(${CXX} ${args} ${SOURCE})
if(CASE EQUAL 0)
  expect_clean_compile("expected the raw lock that keeps the contract to compile")
  return()
endif()
expect_compile_errors("expected the shell to refuse case ${CASE}, but it compiled")
list(GET errors 0 first)
expect_match(first "static.assert" "the first error is not the contract's static_assert:\n${first}\n")
expect_match(first "${MATCH}" "the contract's first error does not name '${MATCH}'")
message(STATUS "refused as expected: ${first}")
