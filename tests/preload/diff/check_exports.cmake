# libspinwise-preload.so (PRELOAD) exports only the pthread functions it interposes
# (docs/preload.md), and what a version script adds (its version nodes, absolute symbols):
# `nm -D --defined-only` lists nothing else. Anything more is spinwise's runtime leaking into
# every program the library is preloaded into, where its symbols interpose the program's own.
# ALLOWED: further names that may appear (spinwise_preload_constructed, the marker
# tests/preload/conformance.cpp looks up with dlsym, is one).
cmake_minimum_required(VERSION 3.19)
execute_process(COMMAND nm -D --defined-only "${PRELOAD}" OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm -D --defined-only ${PRELOAD} failed (${rc})")
endif()
string(REPLACE "\n" ";" lines "${syms}")
set(extra "")
set(functions 0)
foreach(line IN LISTS lines)
  if(NOT line MATCHES "^[0-9a-fA-F]* *([A-Za-z]) (.+)$")
    continue()
  endif()
  set(type "${CMAKE_MATCH_1}")
  set(name "${CMAKE_MATCH_2}")
  string(REGEX REPLACE "@.*" "" base "${name}")
  if(type STREQUAL "A")
    continue()  # a version node
  elseif(base MATCHES "^pthread_" AND type MATCHES "^[TWi]$")
    math(EXPR functions "${functions} + 1")
  elseif(NOT base IN_LIST ALLOWED)
    list(APPEND extra "${type} ${name}")
  endif()
endforeach()
list(LENGTH extra n)
message("preload_diff: exports: ${functions} pthread functions, ${n} other symbols")
if(n GREATER 0)
  list(SUBLIST extra 0 40 shown)
  string(REPLACE ";" "\n  " shown "${shown}")
  message(FATAL_ERROR "libspinwise-preload.so exports ${n} symbols beyond the pthread functions, e.g.:\n  ${shown}")
endif()
