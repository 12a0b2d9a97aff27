# Runs the TSan SX-model child (sx_model_child.cpp) in one mode and checks TSan's
# verdict: -DCHILD=... -DMODE=<mode> -DEXPECT=race|clean
include(${CMAKE_CURRENT_LIST_DIR}/../../common/run_and_check.cmake)
set(ENV{TSAN_OPTIONS} "halt_on_error=0:exitcode=0:report_signal_unsafe=0")
run_and_capture(${CHILD} ${MODE})
expect_success("child exited with ${rc}")
expect_match(out "x=" "child did not finish")
if(EXPECT STREQUAL "race")
  expect_match(err "WARNING: ThreadSanitizer: data race" "${MODE}: TSan reported no data race")
  message(STATUS "${MODE}: data race reported, as expected")
else()
  expect_no_match(err "ThreadSanitizer" "${MODE}: TSan reported something")
  message(STATUS "${MODE}: no report, as expected")
endif()
