# Clang thread-safety analysis over the locks and guards: good.cpp must compile cleanly under
# -Werror=thread-safety, and each case of bad.cpp must fail with the thread-safety error it names.
# Runs clang on the host (-fsyntax-only), so it also runs in cross and sanitizer builds.
find_program(SPINWISE_CLANGXX NAMES clang++ clang++-16 clang++-15 clang++-14)
if(NOT SPINWISE_CLANGXX)
  message(WARNING "spinwise: clang++ not found; the thread-safety compile tests are not registered")
else()
  set(_tsa_dir ${CMAKE_CURRENT_LIST_DIR})
  set(_tsa_inc "${PROJECT_SOURCE_DIR}/include;${PROJECT_SOURCE_DIR}/arch")
  function(spinwise_tsa_test name source expect match defines)
    add_test(NAME thread_safety.${name}
             COMMAND ${CMAKE_COMMAND} -DCLANGXX=${SPINWISE_CLANGXX} -DSOURCE=${_tsa_dir}/${source}
                     "-DINCLUDES=${_tsa_inc}" "-DDEFINES=${defines}" -DEXPECT=${expect} "-DMATCH=${match}"
                     -P ${_tsa_dir}/run_clang_tsa.cmake)
    set_tests_properties(thread_safety.${name} PROPERTIES TIMEOUT 120 LABELS thread_safety)
  endfunction()
  # The failing cases of `source` that all give the error `match`, one test a `name=case` in ARGN
  # (compiled with SPINWISE_TSA_CASE=case).
  function(spinwise_tsa_rejects source match)
    foreach(pair IN LISTS ARGN)
      string(REPLACE "=" ";" pair "${pair}")
      list(GET pair 0 name)
      list(GET pair 1 case)
      spinwise_tsa_test(${name} ${source} fail "${match}" "SPINWISE_TSA_CASE=${case}")
    endforeach()
  endfunction()

  spinwise_tsa_test(good good.cpp pass "" "")
  set(_w "writing variable 'rows' requires holding mutex '[^']*mu' exclusively")
  foreach(lock tas ttas ticket mcs hybrid)
    spinwise_tsa_test(unguarded_write.${lock} bad.cpp fail "${_w}" "SPINWISE_TSA_CASE=1;SPINWISE_TSA_LOCK=spinwise::${lock}_mutex")
  endforeach()
  spinwise_tsa_rejects(bad.cpp "${_w}" after_guard_scope=2 unchecked_try_lock=5)
  spinwise_tsa_test(requires_not_held bad.cpp fail "calling function 'bump' requires holding mutex '[^']*mu' exclusively"
                    "SPINWISE_TSA_CASE=3")
  spinwise_tsa_test(write_under_shared_guard bad.cpp fail "writing variable 'value' requires holding mutex '[^']*rw' exclusively"
                    "SPINWISE_TSA_CASE=4")
  spinwise_tsa_test(double_lock bad.cpp fail "acquiring mutex '[^']*mu' that is already held" "SPINWISE_TSA_CASE=6")
  spinwise_tsa_test(held_at_return bad.cpp fail "mutex '[^']*mu' is still held at the end of function" "SPINWISE_TSA_CASE=7")
endif()
