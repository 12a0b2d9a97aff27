# Builds and runs the consumers of spinwise an engine would be, one way of consuming per MODE.
#   cmake -DMODE=installed|prefix|shared|subdirectory|fetchcontent -DSOURCE_DIR=... -DWORK_DIR=...
#         -DGENERATOR=... -DCXX=<compiler> [mode arguments] -P run_consumer.cmake
# installed:     plain `cmake --install` of spinwise's own build tree (BUILD_DIR) into a prefix other
#                than the configured one: the layout (tools in, benchmarks out), find_package with and
#                without COMPONENTS runtime (header-only with hwloc and libnuma disabled), COMPONENTS c
#                (a C99 program), pkg-config (relocated prefix; spinwise-runtime.pc links; spinwise-c.pc
#                links a C99 program built by gcc -std=c99 -Wall -Wextra -Werror); with SQLITE,
#                spinwise-sqlite.pc and COMPONENTS sqlite each build and run a C99 program on SQLite;
#                C programs linked the three usual ways on the same prefix (link_c.cmake); then
#                `--component bench` alone.
#                Arguments: BUILD_DIR, LIBDIR, BINDIR, INCLUDEDIR, DATADIR (the tree's GNUInstallDirs),
#                RUNTIME_STATIC, RUNTIME_DEPS, TOOLS, BENCH_TOOLS (lists separated by ','), SQLITE.
# prefix:        a prefix installed by other means (PREFIX; consumer.deb's unpacked Debian packages): the
#                installed mode's find_package and pkg-config consumers, C++ and C99, on it.
#                Arguments: PREFIX, LIBDIR, INCLUDEDIR, DATADIR, RUNTIME_STATIC, SQLITE.
# shared:        configure spinwise alone with SPINWISE_RUNTIME_SHARED=ON (tools and benchmarks on),
#                build only the libraries (spinwise_runtime, spinwise_c, and spinwise_sqlite with SQLITE),
#                plain install to another prefix with a datadir two levels deep: no executables, the
#                SONAME and links, find_package(COMPONENTS runtime) and pkg-config without --static,
#                each consumer NEEDing the SONAME (with SQLITE also a spinwise-sqlite.pc consumer).
#                Arguments: VERSION, SOVERSION, SQLITE.
# subdirectory:  add_subdirectory(<spinwise source>): the consumer links spinwise::runtime, which is
#                built as a subproject (and nothing else of spinwise is).
# fetchcontent:  FetchContent_Declare(spinwise URL <tarball of the source> URL_HASH SHA256=...): the
#                targets an engine gets (spinwise::runtime and spinwise::c defined), a header-only
#                consumer built; the runtime's build as a subproject is the subdirectory mode's (the
#                same CMake code: building it twice proved nothing more and cost ~100 s).
cmake_minimum_required(VERSION 3.21)  # this script's policies (IN_LIST), as in the project's
include(${CMAKE_CURRENT_LIST_DIR}/../common/run_and_check.cmake)  # run(), fail()
set(driver "consumer ${MODE}")

function(expect_files)
  foreach(f IN LISTS ARGN)
    if(NOT EXISTS ${f})
      fail("${f} was not installed")
    endif()
  endforeach()
endfunction()

function(expect_no_files)
  foreach(f IN LISTS ARGN)
    if(EXISTS ${f} OR IS_SYMLINK ${f})
      fail("${f} was installed")
    endif()
  endforeach()
endfunction()

# Configures tests/consumers/project into WORK_DIR/<name> with the given -D arguments, builds its
# `consumer` and what it links (a vendored spinwise's other libraries are not built), and runs it.
function(consume name)
  run(${CMAKE_COMMAND} ${gen} -S ${consumer_src} -B ${WORK_DIR}/${name} ${cxx_arg} ${ARGN})
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/${name} --target consumer)
  run(${WORK_DIR}/${name}/consumer)
  string(STRIP "${last_output}" out)
  message(STATUS "consumer ${MODE}/${name}: built with CMake, ran ${out}")
endfunction()

# `pkg-config --cflags spinwise` names <prefix>/include (spelled through ${pcfiledir}).
function(check_pc_include prefix includedir)
  run(${PKG_CONFIG} --cflags-only-I spinwise)
  string(STRIP "${last_output}" flag)
  if(NOT flag MATCHES "^-I(.+)$")
    fail("pkg-config --cflags-only-I spinwise gave '${flag}'")
  endif()
  file(REAL_PATH "${CMAKE_MATCH_1}" got)
  file(REAL_PATH "${prefix}/${includedir}" want)
  if(NOT got STREQUAL want)
    fail("pkg-config --cflags spinwise gave '${flag}', which is ${got}, not ${want}")
  endif()
endfunction()

# Compiles and links `source` into WORK_DIR/<name> with the flags `pkg-config <args>` gives, runs it.
function(pc_program name source)
  run(${PKG_CONFIG} ${ARGN})
  string(STRIP "${last_output}" pc_flags)
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  run(${CXX} -std=c++17 ${source} ${pc_flags} -o ${WORK_DIR}/${name})
  run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${pc_libdir} ${WORK_DIR}/${name})
  string(REPLACE ";" " " args "${ARGN}")
  message(STATUS "consumer ${MODE}/${name}: built with pkg-config ${args}, ran")
endfunction()

# The same for a C source, compiled as strict C99 with warnings as errors.
function(pc_c_program name source)
  run(${PKG_CONFIG} ${ARGN})
  string(STRIP "${last_output}" pc_flags)
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  run(${CC} -std=c99 -Wall -Wextra -Werror ${source} ${pc_flags} -o ${WORK_DIR}/${name})
  run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${pc_libdir} ${WORK_DIR}/${name})
  string(REPLACE ";" " " args "${ARGN}")
  message(STATUS "consumer ${MODE}/${name}: C99, built with pkg-config ${args}, ran")
endfunction()

# The SONAME of `file` (readelf -d), or the NEEDED entries with `what`=NEEDED.
function(dynamic_entries out file what)
  run(${READELF} -d ${file})
  string(REGEX MATCHALL "\\(${what}\\)[^\n]*\\[[^]]+\\]" lines "${last_output}")
  set(names "")
  foreach(l IN LISTS lines)
    string(REGEX REPLACE ".*\\[([^]]+)\\]" "\\1" n "${l}")
    list(APPEND names ${n})
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

# The consumers of an installed prefix (`prefix`, with LIBDIR, INCLUDEDIR, DATADIR, RUNTIME_STATIC
# and SQLITE): CMake's find_package (header-only, COMPONENTS runtime, c, and sqlite) and pkg-config
# (relocated: the prefix is not the one the tree was configured for), C++ and C99 programs.
function(consume_prefix)
  set(cmakedir ${prefix}/${LIBDIR}/cmake/spinwise)
  # Header-only: if the config looked for hwloc or libnuma, the disabled packages would fail it.
  consume(headers -DCONSUME=find_package_headers -DCMAKE_PREFIX_PATH=${prefix}
          -DCMAKE_DISABLE_FIND_PACKAGE_SpinwiseHwloc=ON -DCMAKE_DISABLE_FIND_PACKAGE_SpinwiseNuma=ON)
  consume(runtime -DCONSUME=find_package -DCMAKE_PREFIX_PATH=${prefix})
  consume(c -DCONSUME=find_package_c -DCMAKE_PREFIX_PATH=${prefix})
  # pkg-config, relocated: the tree was configured for another prefix.
  find_program(PKG_CONFIG pkg-config REQUIRED)
  set(ENV{PKG_CONFIG_PATH} "${prefix}/${LIBDIR}/pkgconfig:${prefix}/${DATADIR}/pkgconfig")
  check_pc_include(${prefix} ${INCLUDEDIR})
  pc_program(pkgconfig_headers ${consumer_src}/headers_only.cpp --cflags --libs spinwise)
  if(RUNTIME_STATIC)
    pc_program(pkgconfig_runtime ${consumer_src}/consumer.cpp --cflags --libs --static spinwise-runtime)
  else()
    pc_program(pkgconfig_runtime ${consumer_src}/consumer.cpp --cflags --libs spinwise-runtime)
  endif()
  # The C API from C: gcc, not the C++ driver, links it (a static spinwise-c names libstdc++).
  find_program(CC NAMES gcc cc REQUIRED)
  if(RUNTIME_STATIC)
    pc_c_program(pkgconfig_c ${consumer_src}/c_consumer.c --cflags --libs --static spinwise-c)
  else()
    pc_c_program(pkgconfig_c ${consumer_src}/c_consumer.c --cflags --libs spinwise-c)
  endif()

  # SQLite's mutexes: pkg-config (a static spinwise-sqlite names libstdc++) and COMPONENTS sqlite.
  if(SQLITE)
    expect_files(${prefix}/${INCLUDEDIR}/spinwise/sqlite.h ${cmakedir}/spinwiseSqliteTargets.cmake
                 ${prefix}/${LIBDIR}/pkgconfig/spinwise-sqlite.pc)
    if(RUNTIME_STATIC)
      expect_files(${prefix}/${LIBDIR}/libspinwise_sqlite.a)
      pc_c_program(pkgconfig_sqlite ${consumer_src}/sqlite_consumer.c --cflags --libs --static spinwise-sqlite)
    else()
      expect_files(${prefix}/${LIBDIR}/libspinwise_sqlite.so)
      pc_c_program(pkgconfig_sqlite ${consumer_src}/sqlite_consumer.c --cflags --libs spinwise-sqlite)
    endif()
    consume(sqlite -DCONSUME=find_package_sqlite -DCMAKE_PREFIX_PATH=${prefix})
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(consumer_src ${SOURCE_DIR}/tests/consumers/project)
set(gen -G "${GENERATOR}")
if(NOT CXX)
  set(CXX c++)
endif()
set(cxx_arg -DCMAKE_CXX_COMPILER=${CXX})
foreach(list TOOLS BENCH_TOOLS RUNTIME_DEPS)
  string(REPLACE "," ";" ${list} "${${list}}")
endforeach()

if(MODE STREQUAL "installed")
  set(prefix ${WORK_DIR}/prefix)
  set(pc_libdir ${prefix}/${LIBDIR})
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
  # Development files and tools; never a benchmark.
  set(cmakedir ${prefix}/${LIBDIR}/cmake/spinwise)
  expect_files(${prefix}/${INCLUDEDIR}/spinwise/spinwise.hpp ${prefix}/${INCLUDEDIR}/spinwise/arch/generic.hpp
               ${prefix}/${INCLUDEDIR}/spinwise/runtime/relax_cost.hpp
               ${cmakedir}/spinwiseConfig.cmake ${cmakedir}/spinwiseConfigVersion.cmake
               ${cmakedir}/spinwiseTargets.cmake ${cmakedir}/spinwiseRuntimeTargets.cmake
               ${prefix}/${DATADIR}/pkgconfig/spinwise.pc ${prefix}/${LIBDIR}/pkgconfig/spinwise-runtime.pc
               ${prefix}/${INCLUDEDIR}/spinwise/spinwise.h ${cmakedir}/spinwiseCTargets.cmake
               ${prefix}/${LIBDIR}/pkgconfig/spinwise-c.pc)
  if(RUNTIME_STATIC)
    expect_files(${prefix}/${LIBDIR}/libspinwise_runtime.a ${prefix}/${LIBDIR}/libspinwise_c.a)
  else()
    expect_files(${prefix}/${LIBDIR}/libspinwise_runtime.so ${prefix}/${LIBDIR}/libspinwise_c.so)
  endif()
  foreach(tool IN LISTS TOOLS)
    expect_files(${prefix}/${BINDIR}/${tool})
  endforeach()
  expect_no_files(${prefix}/${BINDIR}/spinwise-bench ${prefix}/${BINDIR}/spinwise-stress)

  consume_prefix()
  # The control for the header-only case: COMPONENTS runtime of a static runtime built with hwloc
  # or libnuma does look for it, so disabling it must fail the configure, with the reason.
  if(RUNTIME_DEPS)
    list(GET RUNTIME_DEPS 0 dep)
    execute_process(COMMAND ${CMAKE_COMMAND} ${gen} -S ${consumer_src} -B ${WORK_DIR}/runtime-without-dep ${cxx_arg}
                            -DCONSUME=find_package -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_DISABLE_FIND_PACKAGE_${dep}=ON
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    string(REGEX REPLACE "[ \n]+" " " out "${out}")  # CMake wraps the reason
    if(rc EQUAL 0 OR NOT out MATCHES "built with ${dep}, which was not found")
      fail("find_package(spinwise COMPONENTS runtime) without ${dep} did not fail as it should (${rc}):\n${out}")
    endif()
    message(STATUS "consumer ${MODE}: COMPONENTS runtime without ${dep} fails, as it should")
  endif()

  # C programs on this install the three usual ways (cc with pkg-config and no --static, a C-only
  # CMake project, Meson): link_c.cmake, on the same prefix rather than an install of its own.
  run(${CMAKE_COMMAND} -DPREFIX=${prefix} -DWORK_DIR=${WORK_DIR}/link_c -DGENERATOR=${GENERATOR}
      -P ${SOURCE_DIR}/tests/consumers/link_c.cmake)
  string(REPLACE ";" "," link_c_out "${last_output}")
  string(REPLACE "\n" ";" link_c_out "${link_c_out}")
  foreach(l IN LISTS link_c_out)
    if(l MATCHES "link_c: (.*)")
      message(STATUS "consumer ${MODE}/link_c: ${CMAKE_MATCH_1}")
    endif()
  endforeach()

  # The bench component, asked for: the benchmarks and nothing else.
  if(BENCH_TOOLS)
    set(bench_prefix ${WORK_DIR}/bench-prefix)
    run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${bench_prefix} --component bench)
    file(GLOB_RECURSE got RELATIVE ${bench_prefix} ${bench_prefix}/*)
    set(want "")
    foreach(tool IN LISTS BENCH_TOOLS)
      list(APPEND want ${BINDIR}/${tool})
    endforeach()
    list(SORT got)
    list(SORT want)
    if(NOT got STREQUAL want)
      fail("--component bench installed '${got}', not '${want}'")
    endif()
    message(STATUS "consumer ${MODE}: --component bench installed ${got}")
  endif()
elseif(MODE STREQUAL "prefix")
  # A prefix installed by other means (consumer.deb: the Debian packages, unpacked).
  set(prefix ${PREFIX})
  set(pc_libdir ${prefix}/${LIBDIR})
  consume_prefix()
elseif(MODE STREQUAL "shared")
  # A non-default layout: a datadir two levels deep, so the .pc's way back to its
  # prefix is ../../.. and not the usual ../..
  set(prefix ${WORK_DIR}/prefix)
  set(pc_libdir ${prefix}/lib)
  # No build type (no optimization) and unity mode: what is checked is the packaging, and -O0
  # compiles the libraries in about half the time, unity in half again (the runtime's JSON sources
  # parse one large header each; both consumers 101 -> 52 CPU-seconds on the 2-vCPU Zen 4 guest).
  # The release stage's own build compiles each source alone.
  run(${CMAKE_COMMAND} ${gen} -S ${SOURCE_DIR} -B ${WORK_DIR}/spinwise-build ${cxx_arg} -DCMAKE_BUILD_TYPE=
      -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/configured-prefix
      -DCMAKE_INSTALL_DATADIR=share/engine -DSPINWISE_RUNTIME_SHARED=ON -DSPINWISE_BUILD_TESTS=OFF
      -DCMAKE_UNITY_BUILD=ON
      -DSPINWISE_BUILD_TOOLS=ON -DSPINWISE_BUILD_BENCH=ON -DSPINWISE_INSTALL=ON)
  # Only the libraries: the tools and benchmarks configured beside them are not built.
  set(libraries spinwise_runtime spinwise_c)
  if(SQLITE)
    list(APPEND libraries spinwise_sqlite)
  endif()
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/spinwise-build --target ${libraries})
  run(${CMAKE_COMMAND} --install ${WORK_DIR}/spinwise-build --prefix ${prefix})
  if(EXISTS ${WORK_DIR}/configured-prefix)
    fail("the install went to the configured prefix, not --prefix")
  endif()
  file(GLOB bin_files ${prefix}/bin/*)
  if(bin_files)
    fail("a library-only build installed executables: ${bin_files}")
  endif()
  set(lib ${prefix}/lib/libspinwise_runtime.so)
  expect_files(${lib}.${VERSION} ${lib}.${SOVERSION} ${lib} ${prefix}/share/engine/pkgconfig/spinwise.pc
               ${prefix}/lib/pkgconfig/spinwise-runtime.pc)
  expect_no_files(${prefix}/lib/libspinwise_runtime.a)
  if(NOT IS_SYMLINK ${lib}.${SOVERSION} OR NOT IS_SYMLINK ${lib})
    fail("${lib} and ${lib}.${SOVERSION} should be links to ${lib}.${VERSION}")
  endif()
  find_program(READELF readelf REQUIRED)  # binutils
  dynamic_entries(soname ${lib}.${VERSION} SONAME)
  if(NOT soname STREQUAL "libspinwise_runtime.so.${SOVERSION}")
    fail("SONAME of ${lib}.${VERSION} is '${soname}', not libspinwise_runtime.so.${SOVERSION}")
  endif()
  message(STATUS "consumer ${MODE}: SONAME ${soname}")

  consume(runtime -DCONSUME=find_package -DCMAKE_PREFIX_PATH=${prefix})
  dynamic_entries(needed ${WORK_DIR}/runtime/consumer NEEDED)
  if(NOT "libspinwise_runtime.so.${SOVERSION}" IN_LIST needed)
    fail("the find_package consumer does not need libspinwise_runtime.so.${SOVERSION} (NEEDED: ${needed})")
  endif()

  find_program(PKG_CONFIG pkg-config REQUIRED)
  set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig:${prefix}/share/engine/pkgconfig")
  check_pc_include(${prefix} include)
  pc_program(pkgconfig_runtime ${consumer_src}/consumer.cpp --cflags --libs spinwise-runtime)
  dynamic_entries(needed ${WORK_DIR}/pkgconfig_runtime NEEDED)
  if(NOT "libspinwise_runtime.so.${SOVERSION}" IN_LIST needed)
    fail("the pkg-config consumer does not need libspinwise_runtime.so.${SOVERSION} (NEEDED: ${needed})")
  endif()
  if(SQLITE)
    find_program(CC NAMES gcc cc REQUIRED)
    pc_c_program(pkgconfig_sqlite ${consumer_src}/sqlite_consumer.c --cflags --libs spinwise-sqlite)
    dynamic_entries(needed ${WORK_DIR}/pkgconfig_sqlite NEEDED)
    if(NOT "libspinwise_sqlite.so.${SOVERSION}" IN_LIST needed)
      fail("the spinwise-sqlite consumer does not need libspinwise_sqlite.so.${SOVERSION} (NEEDED: ${needed})")
    endif()
  endif()
elseif(MODE STREQUAL "subdirectory")
  # Unity mode, as the shared mode's build (a user's choice add_subdirectory must build with too).
  consume(build -DCONSUME=add_subdirectory -DSPINWISE_SOURCE=${SOURCE_DIR} -DCMAKE_UNITY_BUILD=ON)
elseif(MODE STREQUAL "fetchcontent")
  # A release tarball of the source tree (what a URL download would bring), without build trees.
  set(tarball ${WORK_DIR}/spinwise-src.tar.gz)
  execute_process(COMMAND ${CMAKE_COMMAND} -E tar czf ${tarball} CMakeLists.txt include arch src tools bench tests
                  WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    fail("could not pack the source tree")
  endif()
  file(SHA256 ${tarball} sha)
  consume(build -DCONSUME=fetchcontent -DSPINWISE_URL=file://${tarball} -DSPINWISE_SHA256=${sha})
else()
  fail("unknown MODE '${MODE}'")
endif()

# Not top level: spinwise's own tests, benchmarks and tools are not even defined (the consumer
# project checks that at configure time), and none was built.
if(MODE MATCHES "^(subdirectory|fetchcontent)$")
  file(GLOB_RECURSE leaked ${WORK_DIR}/build/*spinwise_arch_test* ${WORK_DIR}/build/*spinwise-calibrate)
  if(leaked)
    fail("spinwise built its own tests or tools as a subproject: ${leaked}")
  endif()
endif()
