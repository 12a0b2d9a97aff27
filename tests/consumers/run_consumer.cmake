# Builds and runs one consumer of spinwise the way an engine would consume it.
#   cmake -DMODE=installed|subdirectory|fetchcontent -DSOURCE_DIR=... -DWORK_DIR=... -P run_consumer.cmake
# installed:     configure spinwise alone, cmake --install into a prefix, then find_package(CONFIG)
#                and pkg-config against that prefix.
# subdirectory:  add_subdirectory(<spinwise source>).
# fetchcontent:  FetchContent_Declare(spinwise URL <tarball of the source> URL_HASH SHA256=...).

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "consumer ${MODE}: '${cmd}' failed (${rc}):\n${out}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(consumer_src ${SOURCE_DIR}/tests/consumers/project)
set(gen -G "${GENERATOR}")

if(MODE STREQUAL "installed")
  set(prefix ${WORK_DIR}/prefix)
  run(${CMAKE_COMMAND} ${gen} -S ${SOURCE_DIR} -B ${WORK_DIR}/spinwise-build -DCMAKE_BUILD_TYPE=Release
      -DCMAKE_INSTALL_PREFIX=${prefix} -DSPINWISE_BUILD_TESTS=OFF -DSPINWISE_BUILD_BENCH=OFF
      -DSPINWISE_BUILD_TOOLS=OFF -DSPINWISE_INSTALL=ON)
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/spinwise-build)
  run(${CMAKE_COMMAND} --install ${WORK_DIR}/spinwise-build)
  run(${CMAKE_COMMAND} ${gen} -S ${consumer_src} -B ${WORK_DIR}/build -DCONSUME=find_package
      -DCMAKE_PREFIX_PATH=${prefix})
  # The pkg-config file must describe the same headers: compile the consumer with its flags too.
  find_program(PKG_CONFIG pkg-config REQUIRED)
  set(ENV{PKG_CONFIG_PATH} ${prefix}/share/pkgconfig)
  run(${PKG_CONFIG} --cflags --libs spinwise)
  string(STRIP "${last_output}" pc_flags)
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  run(c++ -std=c++17 ${consumer_src}/headers_only.cpp ${pc_flags} -o ${WORK_DIR}/pkgconfig_consumer)
  run(${WORK_DIR}/pkgconfig_consumer)
elseif(MODE STREQUAL "subdirectory")
  run(${CMAKE_COMMAND} ${gen} -S ${consumer_src} -B ${WORK_DIR}/build -DCONSUME=add_subdirectory
      -DSPINWISE_SOURCE=${SOURCE_DIR})
elseif(MODE STREQUAL "fetchcontent")
  # A release tarball of the source tree (what a URL download would bring), without build trees.
  set(tarball ${WORK_DIR}/spinwise-src.tar.gz)
  execute_process(COMMAND ${CMAKE_COMMAND} -E tar czf ${tarball} CMakeLists.txt include arch src tools bench tests
                  WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer fetchcontent: could not pack the source tree")
  endif()
  file(SHA256 ${tarball} sha)
  run(${CMAKE_COMMAND} ${gen} -S ${consumer_src} -B ${WORK_DIR}/build -DCONSUME=fetchcontent
      -DSPINWISE_URL=file://${tarball} -DSPINWISE_SHA256=${sha})
else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()

run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
message(STATUS "consumer ${MODE}: ${last_output}")
# Not top level: spinwise's own tests, benchmarks and tools must not have been built.
if(NOT MODE STREQUAL "installed")
  file(GLOB_RECURSE leaked ${WORK_DIR}/build/*spinwise_arch_test* ${WORK_DIR}/build/*spinwise-calibrate)
  if(leaked)
    message(FATAL_ERROR "consumer ${MODE}: spinwise built its own tests or tools as a subproject: ${leaked}")
  endif()
endif()
