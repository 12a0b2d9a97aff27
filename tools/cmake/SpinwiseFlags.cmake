# Warning and sanitizer flags for spinwise's own targets. Nothing here reaches a consumer:
# an engine that links spinwise::spinwise keeps its own flags.

set(_spinwise_san_flags "")
if(SPINWISE_SANITIZE STREQUAL "thread")
  set(_spinwise_san_flags -fsanitize=thread)
elseif(SPINWISE_SANITIZE STREQUAL "address")
  set(_spinwise_san_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
endif()

# A target built in unity mode (its UNITY_BUILD: every target under CMAKE_UNITY_BUILD=ON, as in
# tools/test.sh's sanitizer and cross stages, and the test programs of several sources in every
# build) includes each source into a generated one, so GCC takes every type of a source's anonymous
# namespace for a header's and -Wsubobject-linkage fires on each gtest fixture there: no finding
# in that build.
set(_spinwise_unity_flags "")
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(_spinwise_unity_flags $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:$<TARGET_PROPERTY:UNITY_BUILD>>>:-Wno-subobject-linkage>)
endif()

function(spinwise_target_flags target)
  target_compile_options(${target} PRIVATE -Wall -Wextra $<$<BOOL:${SPINWISE_WERROR}>:-Werror>
                                           ${_spinwise_san_flags} ${_spinwise_unity_flags})
  if(_spinwise_san_flags)
    target_link_options(${target} PRIVATE ${_spinwise_san_flags})
  endif()
endfunction()
