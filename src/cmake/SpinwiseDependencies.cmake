# How spinwise's own targets find their dependencies (not installed: consumers find the runtime's
# optional libraries with FindSpinwiseHwloc.cmake and FindSpinwiseNuma.cmake).

# A header-only library `target` needs privately: its CMake package natively; in a cross build the
# toolchain file exposes the host's header-only copy on the include path instead, so check that
# `header` compiles, and stop with `hint` (what to install) when it does not.
function(spinwise_header_only_dependency target package min_version imported header hint)
  find_package(${package} ${min_version} CONFIG QUIET)
  if(${package}_FOUND)
    target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:${imported}>)
    return()
  endif()
  include(CheckIncludeFileCXX)
  string(MAKE_C_IDENTIFIER "SPINWISE_HAVE_${header}" _have)
  check_include_file_cxx(${header} ${_have})
  if(NOT ${_have})
    message(FATAL_ERROR "${hint}")
  endif()
endfunction()
