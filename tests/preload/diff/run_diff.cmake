# Runs one differential scenario of tests/preload/diff (PROGRAM, called NAME) in one MODE:
#   oracle  without the interposer: glibc's output, kept in WORKDIR/NAME.oracle.out; the scenario
#           must exit 0 and report no hang there (a scenario that fails on glibc is broken itself)
#   kind    LD_PRELOAD=PRELOAD SPINWISE_PRELOAD_LOCK=KIND: the output must be glibc's, line for line
# and prints one verdict line, "preload_diff: NAME KIND: PASS | DIFF | HANG (...)", with the
# unified diff against glibc's output for DIFF and HANG. HANG: the scenario's watchdog named the
# step that hung, or the whole process ran past LIMIT seconds and was killed.
# STATS=ON: SPINWISE_PRELOAD_STATS names WORKDIR/NAME.KIND.stats.json (statistics on).
# ASAN_OPTIONS: set for a program built with ASan.
cmake_minimum_required(VERSION 3.19)
foreach(v NAME PROGRAM MODE WORKDIR LIMIT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_diff.cmake: ${v} is not set")
  endif()
endforeach()
file(MAKE_DIRECTORY "${WORKDIR}")
# Not NAME.glibc.out: that is the `glibc` kind's output, written while other kinds' tests read the
# oracle (ctest -j): an oracle emptied under a reader failed fork_with_stats.ttas in a clean clone.
set(oracle_file "${WORKDIR}/${NAME}.oracle.out")

# Runs the program with the environment set here (for the program only: `cmake -E env` would load
# the interposer itself). Sets <prefix>_rc, <prefix>_out, <prefix>_err, <prefix>_file.
function(run_scenario prefix label)
  unset(ENV{LD_PRELOAD})
  unset(ENV{SPINWISE_PRELOAD_LOCK})
  unset(ENV{SPINWISE_PRELOAD_STATS})
  if(ASAN_OPTIONS)
    set(ENV{ASAN_OPTIONS} "${ASAN_OPTIONS}")
  endif()
  if(NOT label STREQUAL "glibc-oracle")
    set(ENV{LD_PRELOAD} "${PRELOAD}")
    set(ENV{SPINWISE_PRELOAD_LOCK} "${label}")
    if(STATS)
      file(REMOVE "${WORKDIR}/${NAME}.${label}.stats.json")
      set(ENV{SPINWISE_PRELOAD_STATS} "${WORKDIR}/${NAME}.${label}.stats.json")
    endif()
  endif()
  set(out_file "${WORKDIR}/${NAME}.${label}.out")
  # Into files, not pipes: a child that outlives a killed scenario cannot hold the run open.
  execute_process(COMMAND "${PROGRAM}" RESULT_VARIABLE rc OUTPUT_FILE "${out_file}"
                  ERROR_FILE "${WORKDIR}/${NAME}.${label}.err" TIMEOUT ${LIMIT})
  file(READ "${out_file}" out)
  file(READ "${WORKDIR}/${NAME}.${label}.err" err)
  set(${prefix}_rc "${rc}" PARENT_SCOPE)
  set(${prefix}_out "${out}" PARENT_SCOPE)
  set(${prefix}_err "${err}" PARENT_SCOPE)
  set(${prefix}_file "${out_file}" PARENT_SCOPE)
endfunction()

function(run_oracle)
  run_scenario(o glibc-oracle)
  message("${o_out}")
  if(o_err)
    message("stderr:\n${o_err}")
  endif()
  if(NOT o_rc EQUAL 0 OR o_out MATCHES "HANG in step")
    message(FATAL_ERROR "preload_diff: ${NAME} failed on plain glibc (exit ${o_rc}): the scenario itself is broken")
  endif()
  file(WRITE "${oracle_file}" "${o_out}")
endfunction()

if(MODE STREQUAL "oracle")
  run_oracle()
  message("preload_diff: ${NAME} glibc-oracle: ok")
  return()
elseif(NOT MODE STREQUAL "kind")
  message(FATAL_ERROR "run_diff.cmake: unknown MODE '${MODE}'")
endif()

if(NOT EXISTS "${oracle_file}")
  run_oracle()
endif()
run_scenario(k ${KIND})
execute_process(COMMAND diff -u --label "glibc" --label "${KIND}" "${oracle_file}" "${k_file}"
                OUTPUT_VARIABLE delta RESULT_VARIABLE diff_rc)
if(k_rc MATCHES "timeout")
  set(verdict "HANG (the whole scenario ran past ${LIMIT} s and was killed)")
elseif(k_out MATCHES "HANG in step: ([^\n]*)")
  set(verdict "HANG (in step: ${CMAKE_MATCH_1})")
elseif(diff_rc EQUAL 0 AND k_rc EQUAL 0)
  set(verdict "PASS")
else()
  set(verdict "DIFF")
  if(diff_rc EQUAL 0)
    set(verdict "DIFF (same output, but exit ${k_rc})")
  endif()
endif()
message("preload_diff: ${NAME} ${KIND}: ${verdict}")
if(verdict STREQUAL "PASS")
  return()
endif()
message("--- ${NAME} under LD_PRELOAD, SPINWISE_PRELOAD_LOCK=${KIND}, against glibc's output (exit ${k_rc}):\n${delta}")
if(k_err)
  message("stderr:\n${k_err}")
endif()
message(FATAL_ERROR "preload_diff: ${NAME} ${KIND}: ${verdict}")
