# What the cmake -P test drivers share (thread_safety/run_clang_tsa.cmake,
# raw_contract/run_contract.cmake, tsan/run_lock_order.cmake, tsan/sx_model.cmake,
# stress/run_cli.cmake, the consumers/ drivers): run one command, keep all it said, and fail the
# test with a reason and that whole output (`all`) when a check does not hold.

# Runs the command in ARGN; sets rc, out, err and all (stdout, a newline, stderr) in the caller.
macro(run_and_capture)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(all "${out}\n${err}")
endmacro()

# The command exited with 0 (expect_success) or did not (expect_failure: rc is a non-zero code or
# a message such as "Child aborted").
function(expect_success why)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${why}:\n${all}")
  endif()
endfunction()
function(expect_failure why)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${why}:\n${all}")
  endif()
endfunction()

# The variable named `var` (as if() reads it) matches `regex` (expect_match) or does not
# (expect_no_match).
function(expect_match var regex why)
  if(NOT ${var} MATCHES "${regex}")
    message(FATAL_ERROR "${why}:\n${all}")
  endif()
endfunction()
function(expect_no_match var regex why)
  if(${var} MATCHES "${regex}")
    message(FATAL_ERROR "${why}:\n${all}")
  endif()
endfunction()

# For the drivers that compile one case and judge the compiler's verdict
# (thread_safety/run_clang_tsa.cmake, raw_contract/run_contract.cmake), after run_and_capture:
# it compiled without a warning (expect_clean_compile), or it failed with at least one error line,
# which `errors` lists in the caller (expect_compile_errors); `why` says what was expected.
function(expect_clean_compile why)
  expect_success("${why} (rc ${rc})")
  expect_no_match(all "warning:" "expected no warnings")
  message(STATUS "compiled cleanly")
endfunction()
function(expect_compile_errors why)
  expect_failure("${why}")
  string(REGEX MATCHALL "[^\n]*error:[^\n]*" errors "${all}")
  if(NOT errors)
    message(FATAL_ERROR "compile failed without an error line (rc ${rc}):\n${all}")
  endif()
  set(errors "${errors}" PARENT_SCOPE)
endfunction()

# For drivers that run many commands and stop at the first that fails (tests/consumers/*.cmake):
# each sets `driver` to the name its messages start with.
# fail(what): stops the driver with "<driver>: <what>".
function(fail what)
  message(FATAL_ERROR "${driver}: ${what}")
endfunction()
# run(command...): runs it and fails with the command and all it said unless it exits 0; sets
# last_output (its standard output) in the caller.
function(run)
  run_and_capture(${ARGN})
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    fail("'${cmd}' failed (${rc}):\n${out}${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()
