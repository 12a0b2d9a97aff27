# ThreadSanitizer sees spinwise locks as mutexes (detail/tsan.hpp hooks): taking two of them in
# opposite orders must produce a lock-order-inversion report naming both, for every lock, the
# shared ones included (sx_lock_sx: sx_lock taken in SX). TSan builds only.
if(SPINWISE_SANITIZE STREQUAL "thread")
  add_executable(spinwise_tsan_lock_order_child ${CMAKE_CURRENT_LIST_DIR}/lock_order_child.cpp)
  target_link_libraries(spinwise_tsan_lock_order_child PRIVATE spinwise::spinwise)
  spinwise_target_flags(spinwise_tsan_lock_order_child)
  foreach(lock tas ttas ticket mcs hybrid spin_shared_mutex hybrid_shared_mutex sx_lock sx_lock_sx)
    foreach(mode inverted ordered)
      add_test(NAME tsan.lock_order.${lock}.${mode}
               COMMAND ${CMAKE_COMMAND} -DCHILD=$<TARGET_FILE:spinwise_tsan_lock_order_child> -DLOCK=${lock}
                       -DMODE=${mode} -P ${CMAKE_CURRENT_LIST_DIR}/run_lock_order.cmake)
      set_tests_properties(tsan.lock_order.${lock}.${mode} PROPERTIES TIMEOUT 120 LABELS tsan)
    endforeach()
  endforeach()
endif()
