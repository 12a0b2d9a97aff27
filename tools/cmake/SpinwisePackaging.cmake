# Debian packages of the install components, by CPack (tools/package.sh builds them; any tree
# configured with SPINWISE_INSTALL makes them with `cpack -G DEB`). Included by the top-level
# CMakeLists.txt after every install rule, so that each component is known here.
#   spinwise-tools          tools: every program installed with COMPONENT tools (spinwise-calibrate)
#   libspinwise-preload     preload: libspinwise-preload.so, the LD_PRELOAD interposer
#   libspinwise-dev         headers, runtime, c: the headers, the static libraries, the CMake package
#                           and the .pc files
#   libspinwise-sqlite-dev  sqlite: its own package, so that only its users get SQLite's dev files
# The benchmarks (bench) are in none. A component missing from this map stops the configure, so a
# new one is given a package, not dropped from all of them.
#
# Depends: dpkg-shlibdeps reads what the programs and the interposer link (libc6, libstdc++6,
# libhwloc15, ...): no compiler. The -dev packages hold no shared object, so theirs are named here:
# what a consumer of the static runtime links besides it (hwloc, libnuma), and the C++ library's
# dev files, which a C program linking the static spinwise-c needs (-lstdc++: libstdc++.so is in
# libstdc++-<gcc>-dev, which gcc alone does not bring).
#
# A shared runtime is not packaged: its library would need a package of its own, named after its
# SOVERSION, for the tools to depend on. tools/package.sh configures a static one.

set(_spinwise_pkg_groups tools=tools preload=preload headers=dev runtime=dev c=dev sqlite=sqlite)
set(_spinwise_pkg_left_out bench Unspecified)

if(SPINWISE_RUNTIME_SHARED)
  message(STATUS "Debian packages: not configured (SPINWISE_RUNTIME_SHARED is ON; they hold a static runtime)")
  return()
endif()
find_program(SPINWISE_DPKG dpkg)
if(NOT SPINWISE_DPKG)
  message(STATUS "Debian packages: not configured (no dpkg here)")
  return()
endif()

set(SPINWISE_PACKAGE_MAINTAINER "spinwise maintainers <maintainers@spinwise.invalid>"
    CACHE STRING "The Maintainer field of spinwise's Debian packages (whoever builds and ships them)")

get_cmake_property(_spinwise_components COMPONENTS)
set(CPACK_COMPONENTS_ALL "")
foreach(_comp IN LISTS _spinwise_components)
  if(_comp IN_LIST _spinwise_pkg_left_out)
    continue()
  endif()
  set(_group "")
  foreach(_pair IN LISTS _spinwise_pkg_groups)
    if(_pair MATCHES "^${_comp}=(.+)$")
      set(_group ${CMAKE_MATCH_1})
    endif()
  endforeach()
  if(NOT _group)
    message(FATAL_ERROR "install component '${_comp}' is in no Debian package: "
                        "give it one in tools/cmake/SpinwisePackaging.cmake")
  endif()
  string(TOUPPER ${_comp} _COMP)
  set(CPACK_COMPONENT_${_COMP}_GROUP ${_group})
  list(APPEND CPACK_COMPONENTS_ALL ${_comp})
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME spinwise)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ONE_PER_GROUP)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # <name>_<version>-<release>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${SPINWISE_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)  # the programs and the interposer; static libraries are left whole
set(_spinwise_deb_version "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")
# Each package's description below starts with its own synopsis line. CPackDeb puts the project's
# summary above it unless the summary is CPack's default, so it is set to that default.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_NAME} built using CMake")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME spinwise-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SUGGESTS "gnuplot-nox | gnuplot")  # spinwise-calibrate --watch --plot
# spinwise-run is a Python script that runs programs under the interposer and names their lock sites
# with addr2line; dpkg-shlibdeps adds what the compiled tools link.
if(TARGET spinwise_preload)
  set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "python3, binutils, libspinwise-preload (= ${_spinwise_deb_version})")
endif()
set(CPACK_DEBIAN_TOOLS_DESCRIPTION "spinwise's tools: measure this CPU's spin waits, advise engines
spinwise-calibrate measures what one relax instruction (PAUSE, ISB) costs on every CPU, writes
the calibration profile that engines built with spinwise load, and prints MySQL's and MariaDB's
InnoDB spin settings for this CPU (spinwise-calibrate --advise mariadb).")

set(CPACK_DEBIAN_PRELOAD_PACKAGE_NAME libspinwise-preload)
set(CPACK_DEBIAN_PRELOAD_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PRELOAD_DESCRIPTION "spinwise's LD_PRELOAD interposer for pthread locks
libspinwise-preload.so puts an unmodified program's pthread mutexes, read-write locks and
condition variables on spinwise's locks: LD_PRELOAD=libspinwise-preload.so program.")

set(_spinwise_dev_depends "")
if(SPINWISE_RUNTIME_USES_HWLOC)
  list(APPEND _spinwise_dev_depends libhwloc-dev)
endif()
if(SPINWISE_RUNTIME_USES_NUMA)
  list(APPEND _spinwise_dev_depends libnuma-dev)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  string(REGEX MATCH "^[0-9]+" _gcc_major "${CMAKE_CXX_COMPILER_VERSION}")
  list(APPEND _spinwise_dev_depends "libstdc++-${_gcc_major}-dev | libstdc++-dev")
else()
  list(APPEND _spinwise_dev_depends libstdc++-dev)
endif()
string(REPLACE ";" ", " _spinwise_dev_depends "${_spinwise_dev_depends}")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libspinwise-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${_spinwise_dev_depends}")
set(CPACK_DEBIAN_DEV_DESCRIPTION "spinwise: spin locks measured and tuned for the CPU (development files)
The C++17 headers (spinwise::spinwise), the static runtime (calibration, profiles, statistics:
spinwise::runtime) and the C API (spinwise::c), with their CMake package
(find_package(spinwise)) and pkg-config files (spinwise, spinwise-runtime, spinwise-c).")

set(CPACK_DEBIAN_SQLITE_PACKAGE_NAME libspinwise-sqlite-dev)
set(CPACK_DEBIAN_SQLITE_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_SQLITE_PACKAGE_DEPENDS "libspinwise-dev (= ${_spinwise_deb_version}), libsqlite3-dev")
set(CPACK_DEBIAN_SQLITE_DESCRIPTION "spinwise: SQLite's mutexes on spinwise's locks (development files)
The static spinwise::sqlite library and <spinwise/sqlite.h>, for a program that links the
system's SQLite (find_package(spinwise COMPONENTS sqlite), pkg-config spinwise-sqlite).")

include(CPack)
