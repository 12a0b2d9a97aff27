# The raw-lock contract of detail/lock_shell.hpp (raw_contract): a raw lock that keeps it makes
# every kind of lock, and one that misses a member is refused with that member's name. Compiles
# with the build's compiler (-fsyntax-only), so it runs in every build, cross builds included.
set(_rc_dir ${CMAKE_CURRENT_LIST_DIR})
set(_rc_inc "${PROJECT_SOURCE_DIR}/include;${PROJECT_SOURCE_DIR}/arch")
function(spinwise_contract_test name case match)
  add_test(NAME raw_contract.${name}
           COMMAND ${CMAKE_COMMAND} -DCXX=${CMAKE_CXX_COMPILER} -DSOURCE=${_rc_dir}/raw_contract.cpp
                   "-DINCLUDES=${_rc_inc}" -DCASE=${case} "-DMATCH=${match}" -P ${_rc_dir}/run_contract.cmake)
  set_tests_properties(raw_contract.${name} PROPERTIES TIMEOUT 120 LABELS raw_contract)
endfunction()
spinwise_contract_test(kept 0 "")
spinwise_contract_test(no_policy 1 "names its wait policy")
spinwise_contract_test(no_try_acquire 2 "bool try_acquire\\(\\)")
spinwise_contract_test(acquire_fast_type 3 "acquire_fast\\(\\), returning bool or first_try")
spinwise_contract_test(no_acquire_slow 4 "bool acquire_slow\\(")
spinwise_contract_test(no_release 5 "void release\\(\\)")
spinwise_contract_test(timed_without_deadline 6 "taking a clock_deadline where kTimedWaits")
spinwise_contract_test(no_try_acquire_shared 7 "bool try_acquire_shared\\(\\)")
spinwise_contract_test(no_release_sx 8 "void release_sx\\(\\)")
spinwise_contract_test(no_word 9 "holds its word")
