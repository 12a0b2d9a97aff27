# Runs spinwise-calibrate once and checks its exit code and output, for ctest.
#   cmake -DTOOL=<path> [-DEMULATOR=a|b|c] -DARGS=a|b|c -DEXPECT_RC=n [-DEXPECT_OUT=regex]
#         [-DENV=VAR=value] [-DCHECK_PROFILE=<file>] [-DCHECK_ABSENT=a|b] [-DSTDOUT_JSON=key]
#         -P run_cli.cmake
# Lists use '|' because ';' does not survive add_test; EXPECT_RC may list several (0|3). EXPECT_OUT is matched against stdout and
# stderr together. CHECK_PROFILE: the file must exist and be a version-1 spinwise profile.
# CHECK_ABSENT: files removed before the run that must still not exist after it (a refused run
# writes nothing). STDOUT_JSON: stdout alone must be one JSON document whose member `key` is a
# non-empty string (a refusal document).
cmake_policy(SET CMP0057 NEW)  # if(IN_LIST) in script mode
string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "|" ";" emulator "${EMULATOR}")
set(cmd ${emulator} ${TOOL} ${args})
if(ENV)
  set(cmd ${CMAKE_COMMAND} -E env ${ENV} ${cmd})
endif()
if(CHECK_PROFILE)
  file(REMOVE "${CHECK_PROFILE}")
endif()
string(REPLACE "|" ";" absent "${CHECK_ABSENT}")
foreach(f IN LISTS absent)
  file(REMOVE "${f}")
endforeach()
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
string(REPLACE ";" " " shown "${cmd}")
string(REPLACE "|" ";" expect_rcs "${EXPECT_RC}")  # 0|3: either
if(NOT "${rc}" IN_LIST expect_rcs)
  message(FATAL_ERROR "'${shown}' exited with ${rc}, expected ${EXPECT_RC}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED EXPECT_OUT AND NOT "${out}${err}" MATCHES "${EXPECT_OUT}")
  message(FATAL_ERROR "'${shown}' output does not match '${EXPECT_OUT}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(STDOUT_JSON)
  string(JSON value ERROR_VARIABLE jerr GET "${out}" "${STDOUT_JSON}")
  if(jerr OR value STREQUAL "" OR value STREQUAL "NOTFOUND")
    message(FATAL_ERROR "'${shown}': stdout is not a JSON document with a non-empty '${STDOUT_JSON}' (${jerr})\nstdout:\n${out}")
  endif()
endif()
if(CHECK_PROFILE)
  if(NOT EXISTS "${CHECK_PROFILE}")
    message(FATAL_ERROR "'${shown}' did not write ${CHECK_PROFILE}")
  endif()
  file(READ "${CHECK_PROFILE}" doc)
  string(JSON format ERROR_VARIABLE jerr GET "${doc}" format)
  string(JSON version ERROR_VARIABLE jerr2 GET "${doc}" version)
  if(NOT format STREQUAL "spinwise-profile" OR NOT version EQUAL 1)
    message(FATAL_ERROR "${CHECK_PROFILE} is not a version-1 spinwise profile (${jerr}${jerr2})")
  endif()
endif()
foreach(f IN LISTS absent)
  if(EXISTS "${f}")
    message(FATAL_ERROR "'${shown}' wrote ${f}, but a refused run must write nothing")
  endif()
endforeach()
