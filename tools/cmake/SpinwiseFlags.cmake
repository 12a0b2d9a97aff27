# Warning and sanitizer flags for spinwise's own targets. Nothing here reaches a consumer:
# an engine that links spinwise::spinwise keeps its own flags.

set(_spinwise_san_flags "")
if(SPINWISE_SANITIZE STREQUAL "thread")
  set(_spinwise_san_flags -fsanitize=thread)
elseif(SPINWISE_SANITIZE STREQUAL "address")
  set(_spinwise_san_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
endif()

function(spinwise_target_flags target)
  target_compile_options(${target} PRIVATE -Wall -Wextra $<$<BOOL:${SPINWISE_WERROR}>:-Werror>
                                           ${_spinwise_san_flags})
  if(_spinwise_san_flags)
    target_link_options(${target} PRIVATE ${_spinwise_san_flags})
  endif()
endfunction()
