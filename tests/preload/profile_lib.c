/* A shared library's function that waits for a lock, for the profile's symbolization of a
   library (profile_prog lib, profile_check.py). */
#include <pthread.h>

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"), noinline)) void profile_lib_wait(pthread_mutex_t* m) {
  pthread_mutex_lock(m);
  pthread_mutex_unlock(m);
}

#ifdef __cplusplus
}
#endif
