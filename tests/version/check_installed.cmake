# Installs BUILD_DIR's headers component into WORK_DIR/prefix and checks that the installed tree
# reports VERSION (project(VERSION)) everywhere: spinwise/version.h and version.hpp are there, the package
# version file says VERSION, and a program that includes
# <spinwise/config.hpp> from the installed tree alone sees SPINWISE_VERSION_STRING == VERSION.
#   cmake -DBUILD_DIR=... -DWORK_DIR=... -DINCLUDEDIR=... -DLIBDIR=... -DCXX=... -DVERSION=... -P check_installed.cmake
function(fail what)
  message(FATAL_ERROR "version.installed: ${what}")
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --component headers
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  fail("cmake --install --component headers failed (${rc}):\n${out}")
endif()

foreach(header ${prefix}/${INCLUDEDIR}/spinwise/version.h ${prefix}/${INCLUDEDIR}/spinwise/version.hpp)
  if(NOT EXISTS ${header})
    fail("${header} was not installed")
  endif()
endforeach()

set(PACKAGE_FIND_VERSION ${VERSION})
include(${prefix}/${LIBDIR}/cmake/spinwise/spinwiseConfigVersion.cmake)
if(NOT PACKAGE_VERSION STREQUAL VERSION OR NOT PACKAGE_VERSION_EXACT)
  fail("spinwiseConfigVersion.cmake says ${PACKAGE_VERSION}, not ${VERSION}")
endif()

set(tu ${WORK_DIR}/installed_version.cpp)
file(WRITE ${tu} "#include <spinwise/config.hpp>\n#include <string_view>\n"
                 "static_assert(std::string_view(SPINWISE_VERSION_STRING) == \"${VERSION}\");\n"
                 "static_assert(spinwise::kVersion == \"${VERSION}\");\n")
execute_process(COMMAND ${CXX} -std=c++17 -fsyntax-only -I${prefix}/${INCLUDEDIR} ${tu}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  fail("a program including <spinwise/config.hpp> from ${prefix}/${INCLUDEDIR} does not compile (${rc}):\n${out}")
endif()
message(STATUS "version.installed: headers, package and compile all say ${VERSION}")
