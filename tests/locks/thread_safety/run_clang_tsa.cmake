# Compiles one thread-safety case with clang -fsyntax-only -Wthread-safety -Werror=thread-safety.
#   -DCLANGXX=... -DSOURCE=... -DINCLUDES="a;b" -DDEFINES="X=1;Y=2" -DEXPECT=pass|fail -DMATCH=<regex>
# pass: must compile. fail: must fail, every error must be a thread-safety one, and one must
# match MATCH: a case that fails for any other reason (a typo, a missing header) fails the test.
include(${CMAKE_CURRENT_LIST_DIR}/../../common/run_and_check.cmake)
set(args -std=c++17 -fsyntax-only -Wthread-safety -Wthread-safety-beta -Werror=thread-safety)
foreach(i IN LISTS INCLUDES)
  list(APPEND args -I${i})
endforeach()
foreach(d IN LISTS DEFINES)
  list(APPEND args -D${d})
endforeach()
run_and_capture(${CLANGXX} ${args} ${SOURCE})
if(EXPECT STREQUAL "pass")
  expect_clean_compile("expected a clean compile, got")
  return()
endif()
expect_compile_errors("expected a thread-safety error, but it compiled")
foreach(e IN LISTS errors)
  expect_match(e "\\[-Werror,-Wthread-safety" "failed for a reason other than thread safety:\n${e}\n")
endforeach()
expect_match(all "${MATCH}" "thread-safety error(s), but none matching '${MATCH}'")
message(STATUS "rejected as expected: ${errors}")
