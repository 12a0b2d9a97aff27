# Runs `TOOL --version` and requires exactly "NAME VERSION" and a newline on stdout, nothing on
# stderr, exit status 0.
#   cmake -DTOOL=<path> -DNAME=<tool name> -DVERSION=<PROJECT_VERSION> [-DEMULATOR=a|b|c] -P check_tool.cmake
string(REPLACE "|" ";" emulator "${EMULATOR}")
execute_process(COMMAND ${emulator} ${TOOL} --version RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 50)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NAME} --version exited with ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(NOT out STREQUAL "${NAME} ${VERSION}\n" OR NOT err STREQUAL "")
  message(FATAL_ERROR "${NAME} --version printed '${out}' (stderr '${err}'), not '${NAME} ${VERSION}': "
                      "the tool does not report project(VERSION)")
endif()
message(STATUS "${NAME} --version: ${out}")
