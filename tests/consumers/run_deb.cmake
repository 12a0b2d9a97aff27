# consumer.deb: the Debian packages of spinwise's own build tree (tools/cmake/SpinwisePackaging.cmake),
# made by cpack from BUILD_DIR as tools/package.sh makes them, then
#   - read with dpkg-deb: the packages expected and no other, each one's name, version (VERSION-1),
#     architecture (dpkg's), and Depends: dpkg-shlibdeps' for the programs and the interposer, no
#     compiler and no -dev package among them; the -dev packages' own;
#   - listed with dpkg-deb -c: every path under ./usr/, the files each package must hold, no file
#     in two packages, no benchmark;
#   - unpacked with dpkg -x into one root: no text file names the build or source tree and no
#     program or shared object names the build tree (an RPATH, a generated path);
#   - used from there: spinwise-calibrate --version, --help, --advise from a saved profile and a
#     --quick measurement; a C program under the unpacked interposer writes its statistics;
#     C++ and C99 consumers built against the unpacked -dev packages with CMake and pkg-config
#     (run_consumer.cmake's prefix mode).
# The root and the packages are removed when every check passed (kept for a look otherwise).
#   cmake -DCPACK=<cpack> -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCXX=... -DVERSION=...
#         -DLIBDIR=... -DBINDIR=... -DINCLUDEDIR=... -DDATADIR=... -DRUNTIME_DEPS=a,b -DTOOLS=a,b
#         -DBENCH_TOOLS=a,b -DSQLITE=ON|OFF -DPRELOAD=ON|OFF -P run_deb.cmake
cmake_minimum_required(VERSION 3.21)
include(${CMAKE_CURRENT_LIST_DIR}/../common/run_and_check.cmake)  # run(), fail()
set(driver consumer.deb)

foreach(list TOOLS BENCH_TOOLS RUNTIME_DEPS)
  string(REPLACE "," ";" ${list} "${${list}}")
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
find_program(DPKG dpkg REQUIRED)
find_program(DPKG_DEB dpkg-deb REQUIRED)
find_program(CC NAMES gcc cc REQUIRED)
run(${DPKG} --print-architecture)
string(STRIP "${last_output}" arch)
set(deb_version ${VERSION}-1)

# The packages this tree makes, and what each must hold (paths under the packaging prefix /usr).
set(packages libspinwise-dev)
set(libspinwise-dev_files ${INCLUDEDIR}/spinwise/spinwise.hpp ${INCLUDEDIR}/spinwise/arch/generic.hpp
    ${INCLUDEDIR}/spinwise/version.h ${INCLUDEDIR}/spinwise/spinwise.h ${LIBDIR}/libspinwise_runtime.a
    ${LIBDIR}/libspinwise_c.a ${LIBDIR}/cmake/spinwise/spinwiseConfig.cmake
    ${LIBDIR}/cmake/spinwise/spinwiseRuntimeTargets.cmake ${LIBDIR}/cmake/spinwise/spinwiseCTargets.cmake
    ${LIBDIR}/cmake/spinwise/spinwise-state.dynlist ${DATADIR}/pkgconfig/spinwise.pc
    ${LIBDIR}/pkgconfig/spinwise-runtime.pc ${LIBDIR}/pkgconfig/spinwise-c.pc)
# What a consumer of the static runtime links besides it; a C program's -lstdc++.
set(libspinwise-dev_depends "libstdc\\+\\+-([0-9]+-)?dev")
foreach(dep IN ITEMS SpinwiseHwloc:libhwloc-dev SpinwiseNuma:libnuma-dev)
  string(REPLACE ":" ";" dep "${dep}")
  list(GET dep 0 module)
  list(GET dep 1 package)
  if(module IN_LIST RUNTIME_DEPS)
    list(APPEND libspinwise-dev_depends ${package})
  endif()
endforeach()
if(SQLITE)
  list(APPEND packages libspinwise-sqlite-dev)
  set(libspinwise-sqlite-dev_files ${INCLUDEDIR}/spinwise/sqlite.h ${LIBDIR}/libspinwise_sqlite.a
      ${LIBDIR}/cmake/spinwise/spinwiseSqliteTargets.cmake ${LIBDIR}/pkgconfig/spinwise-sqlite.pc)
  string(REPLACE "." "\\." v "${deb_version}")
  set(libspinwise-sqlite-dev_depends "libspinwise-dev \\(= ${v}\\)" libsqlite3-dev)
endif()
if(PRELOAD)
  list(APPEND packages libspinwise-preload)
  set(libspinwise-preload_files ${LIBDIR}/libspinwise-preload.so)
  set(libspinwise-preload_depends "libc6 \\(>= ")  # dpkg-shlibdeps ran
  set(libspinwise-preload_shlibs_only ON)
endif()
if(TOOLS)
  list(APPEND packages spinwise-tools)
  set(spinwise-tools_files "")
  foreach(tool IN LISTS TOOLS)
    list(APPEND spinwise-tools_files ${BINDIR}/${tool})
  endforeach()
  set(spinwise-tools_depends "libc6 \\(>= " "libstdc\\+\\+6")
  if(PRELOAD)  # spinwise-run: Python, addr2line and the interposer of the same version
    string(REPLACE "." "\\." v "${deb_version}")
    list(APPEND spinwise-tools_depends python3 binutils "libspinwise-preload \\(= ${v}\\)")
  endif()
  set(spinwise-tools_shlibs_only ON)
endif()

run(${CPACK} -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK_DIR}/debs)
file(GLOB made RELATIVE ${WORK_DIR}/debs ${WORK_DIR}/debs/*.deb)
set(want "")
foreach(p IN LISTS packages)
  list(APPEND want ${p}_${deb_version}_${arch}.deb)
endforeach()
list(SORT made)
list(SORT want)
if(NOT made STREQUAL want)
  fail("cpack made '${made}', not '${want}'")
endif()

set(all_files "")
foreach(p IN LISTS packages)
  set(deb ${WORK_DIR}/debs/${p}_${deb_version}_${arch}.deb)
  set(expected_Package ${p})
  set(expected_Version ${deb_version})
  set(expected_Architecture ${arch})
  foreach(field IN ITEMS Package Version Architecture)
    run(${DPKG_DEB} --field ${deb} ${field})
    string(STRIP "${last_output}" got)
    if(NOT got STREQUAL expected_${field})
      fail("${p}: ${field} is '${got}', not '${expected_${field}}'")
    endif()
  endforeach()
  # dpkg-deb -I: the control fields as an administrator reads them.
  run(${DPKG_DEB} -I ${deb})
  if(NOT last_output MATCHES "\n Maintainer: [^\n]+<[^\n]+>\n" OR NOT last_output MATCHES "\n Description: [^\n]+\n  [^\n]+")
    fail("${p}: no Maintainer or no description:\n${last_output}")
  endif()
  string(REGEX MATCH "\n Depends: ([^\n]*)" depends "${last_output}")
  set(depends "${CMAKE_MATCH_1}")
  foreach(d IN LISTS ${p}_depends)
    if(NOT depends MATCHES "(^|, |\\| )${d}")
      fail("${p}: Depends '${depends}' lacks ${d}")
    endif()
  endforeach()
  # What is installed for a program to run: the libraries it links, never a compiler.
  if(${p}_shlibs_only AND depends MATCHES "(^|[ ,|])(gcc|g\\+\\+|cpp|clang|[^ ,|(]+-dev)([ ,|(]|$)")
    fail("${p}: Depends '${depends}' names ${CMAKE_MATCH_2}, which a host that only runs it does not need")
  endif()
  message(STATUS "consumer.deb: ${p} ${deb_version} ${arch}, Depends: ${depends}")

  # dpkg-deb -c: the files, every one under ./usr/, each in one package only.
  run(${DPKG_DEB} -c ${deb})
  string(REGEX MATCHALL "[^\n]+" lines "${last_output}")
  set(files "")
  foreach(l IN LISTS lines)
    if(NOT l MATCHES "^[-dl][^ ]+ +[^ ]+ +[0-9]+ [0-9-]+ [0-9:]+ \\./(.*)$")
      fail("${p}: cannot read the line '${l}' of dpkg-deb -c")
    endif()
    string(REGEX REPLACE " -> .*$" "" path "${CMAKE_MATCH_1}")
    if(NOT path MATCHES "^usr/")
      fail("${p}: '${path}' is not under /usr")
    endif()
    if(NOT l MATCHES "^d")
      list(APPEND files ${path})
    endif()
  endforeach()
  foreach(f IN LISTS ${p}_files)
    if(NOT "usr/${f}" IN_LIST files)
      fail("${p}: no /usr/${f} among '${files}'")
    endif()
  endforeach()
  foreach(f IN LISTS files)
    if(f IN_LIST all_files)
      fail("${p}: /${f} is in another package too")
    endif()
    foreach(tool IN LISTS BENCH_TOOLS)
      if(f MATCHES "/${tool}$")
        fail("${p}: holds the benchmark /${f}")
      endif()
    endforeach()
  endforeach()
  # The programs' and the interposer's packages hold those and nothing else.
  if(${p}_shlibs_only)
    set(rest ${files})
    foreach(f IN LISTS ${p}_files)
      list(REMOVE_ITEM rest usr/${f})
    endforeach()
    foreach(f IN LISTS rest)
      if(NOT (p STREQUAL "spinwise-tools" AND f MATCHES "^usr/${BINDIR}/[^/]+$"))
        fail("${p}: holds /${f}, which belongs in another package")
      endif()
    endforeach()
  endif()
  list(APPEND all_files ${files})
  list(LENGTH files n)
  message(STATUS "consumer.deb: ${p}: ${n} files, the expected ones among them, all under /usr")
endforeach()

# Unpacked: nothing names the tree it was built in.
set(root ${WORK_DIR}/root)
foreach(p IN LISTS packages)
  run(${DPKG} -x ${WORK_DIR}/debs/${p}_${deb_version}_${arch}.deb ${root})
endforeach()
foreach(f IN LISTS all_files)
  set(dirs ${BUILD_DIR})
  # A static library's debug information names where it was compiled, in a build with -g as in
  # Debian's own (which moves it to a -dbgsym package): only the build tree is looked for in
  # programs and shared objects, both trees in text files, nothing in the archives.
  if(f MATCHES "\\.a$")
    continue()
  elseif(NOT f MATCHES "\\.so$" AND NOT f MATCHES "^usr/${BINDIR}/")
    list(APPEND dirs ${SOURCE_DIR})
  endif()
  foreach(dir IN LISTS dirs)
    string(REGEX REPLACE "([][+.*()^$?|\\\\])" "\\\\\\1" dir_re "${dir}")
    file(STRINGS ${root}/${f} hits REGEX "${dir_re}")
    if(hits)
      list(GET hits 0 hit)
      fail("/${f} names ${dir}: '${hit}'")
    endif()
  endforeach()
endforeach()
message(STATUS "consumer.deb: unpacked, no file names the build tree or the source tree")

# The tools, run from the unpacked root as an operator runs them from /usr/bin.
if(TOOLS)
  set(calibrate ${root}/usr/${BINDIR}/spinwise-calibrate)
  run(${calibrate} --version)
  string(STRIP "${last_output}" got)
  if(NOT got STREQUAL "spinwise-calibrate ${VERSION}")
    fail("spinwise-calibrate --version said '${got}'")
  endif()
  run(${calibrate} --help)
  if(NOT last_output MATCHES "--advise")
    fail("spinwise-calibrate --help does not mention --advise:\n${last_output}")
  endif()
  run(${calibrate} --advise mariadb --from-profile ${SOURCE_DIR}/tests/calibration/advice/broadwell.json)
  if(NOT last_output MATCHES "\\[mariadbd\\]\ninnodb_spin_wait_delay = [0-9]+\n")
    fail("spinwise-calibrate --advise mariadb gave no setting:\n${last_output}")
  endif()
  run(${calibrate} --quick --cpus 0)
  message(STATUS "consumer.deb: spinwise-calibrate --version, --help, --advise, --quick ran from the unpacked package")
endif()

# The interposer, unpacked: a program's pthread mutex is spinwise's, and its statistics are written.
if(PRELOAD)
  file(WRITE ${WORK_DIR}/locker.c "#include <pthread.h>\nint main(void) {\n  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;\n  pthread_mutex_lock(&m);\n  pthread_mutex_unlock(&m);\n  return 0;\n}\n")
  run(${CC} -pthread ${WORK_DIR}/locker.c -o ${WORK_DIR}/locker)
  set(stats ${WORK_DIR}/preload-stats.json)
  run(${CMAKE_COMMAND} -E env LD_PRELOAD=${root}/usr/${LIBDIR}/libspinwise-preload.so SPINWISE_PRELOAD_STATS=${stats}
      ${WORK_DIR}/locker)
  if(NOT EXISTS ${stats})
    fail("a program under the unpacked libspinwise-preload.so wrote no statistics")
  endif()
  file(READ ${stats} got)
  if(NOT got MATCHES "\"spinwise.lock_stats\"" OR NOT got MATCHES "\"acquisitions\": *[1-9]")
    fail("the unpacked interposer's statistics count no acquisition:\n${got}")
  endif()
  message(STATUS "consumer.deb: a program ran under the unpacked libspinwise-preload.so, its mutex counted")
  # spinwise-run finds the interposer beside itself in the unpacked tree, as in /usr, and passes
  # the program's exit status through.
  if(EXISTS ${root}/usr/${BINDIR}/spinwise-run)
    run(${root}/usr/${BINDIR}/spinwise-run -- ${WORK_DIR}/locker)
    message(STATUS "consumer.deb: the unpacked spinwise-run found its interposer and ran a program")
  endif()
endif()

# The -dev packages, unpacked: C++ and C99 consumers with CMake and pkg-config.
run(${CMAKE_COMMAND} -DMODE=prefix -DPREFIX=${root}/usr -DSOURCE_DIR=${SOURCE_DIR} -DWORK_DIR=${WORK_DIR}/consumers
    -DGENERATOR=${GENERATOR} -DCXX=${CXX} -DLIBDIR=${LIBDIR} -DINCLUDEDIR=${INCLUDEDIR} -DDATADIR=${DATADIR}
    -DRUNTIME_STATIC=ON -DSQLITE=${SQLITE} -P ${SOURCE_DIR}/tests/consumers/run_consumer.cmake)
string(REGEX MATCHALL "consumer prefix/[^\n]+" lines "${last_output}")
foreach(l IN LISTS lines)
  message(STATUS "consumer.deb: ${l}")
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "consumer.deb: passed; the packages and the unpacked root are removed")
