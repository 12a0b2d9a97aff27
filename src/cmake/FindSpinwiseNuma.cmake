# Finds libnuma for spinwise::runtime (memory placement of the --c2c cache line) and defines the
# imported target SpinwiseNuma::numa. Installed next to spinwiseConfig.cmake for static consumers.
find_path(SpinwiseNuma_INCLUDE_DIR numa.h)
find_library(SpinwiseNuma_LIBRARY NAMES numa)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(SpinwiseNuma REQUIRED_VARS SpinwiseNuma_LIBRARY SpinwiseNuma_INCLUDE_DIR)
if(SpinwiseNuma_FOUND AND NOT TARGET SpinwiseNuma::numa)
  add_library(SpinwiseNuma::numa UNKNOWN IMPORTED GLOBAL)
  set_target_properties(SpinwiseNuma::numa PROPERTIES IMPORTED_LOCATION "${SpinwiseNuma_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${SpinwiseNuma_INCLUDE_DIR}")
endif()
mark_as_advanced(SpinwiseNuma_INCLUDE_DIR SpinwiseNuma_LIBRARY)
