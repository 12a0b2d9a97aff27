# Finds hwloc (>= 2.4, for the cpukinds API) for spinwise::runtime and defines the imported
# target SpinwiseHwloc::hwloc. find_path/find_library rather than pkg-config, so that a cross
# build looks in its sysroot only (the host's hwloc.pc would describe x86 libraries).
# Installed next to spinwiseConfig.cmake: a consumer of a static spinwise::runtime needs it too.
find_path(SpinwiseHwloc_INCLUDE_DIR hwloc.h)
find_library(SpinwiseHwloc_LIBRARY NAMES hwloc)
set(SpinwiseHwloc_VERSION "")
if(SpinwiseHwloc_INCLUDE_DIR AND EXISTS "${SpinwiseHwloc_INCLUDE_DIR}/hwloc.h")
  file(STRINGS "${SpinwiseHwloc_INCLUDE_DIR}/hwloc.h" _sw_api REGEX "^#define HWLOC_API_VERSION 0x[0-9a-fA-F]+")
  if(_sw_api MATCHES "0x([0-9a-fA-F][0-9a-fA-F][0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])")
    math(EXPR _sw_major "0x${CMAKE_MATCH_1}")
    math(EXPR _sw_minor "0x${CMAKE_MATCH_2}")
    math(EXPR _sw_patch "0x${CMAKE_MATCH_3}")
    set(SpinwiseHwloc_VERSION "${_sw_major}.${_sw_minor}.${_sw_patch}")
  endif()
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(SpinwiseHwloc REQUIRED_VARS SpinwiseHwloc_LIBRARY SpinwiseHwloc_INCLUDE_DIR
                                  VERSION_VAR SpinwiseHwloc_VERSION)
if(SpinwiseHwloc_FOUND AND SpinwiseHwloc_VERSION VERSION_LESS 2.4)
  set(SpinwiseHwloc_FOUND FALSE)
endif()
if(SpinwiseHwloc_FOUND AND NOT TARGET SpinwiseHwloc::hwloc)
  add_library(SpinwiseHwloc::hwloc UNKNOWN IMPORTED GLOBAL)
  set_target_properties(SpinwiseHwloc::hwloc PROPERTIES IMPORTED_LOCATION "${SpinwiseHwloc_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${SpinwiseHwloc_INCLUDE_DIR}")
endif()
mark_as_advanced(SpinwiseHwloc_INCLUDE_DIR SpinwiseHwloc_LIBRARY)
