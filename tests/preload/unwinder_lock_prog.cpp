// A program whose _Unwind_Backtrace takes a pthread lock before it unwinds, as libunwind's does
// (a program such as perf links libunwind, whose _Unwind_Backtrace then stands before libgcc's
// for every library, the interposer's included). Under the per-lock profile the interposer's
// first capture of a call site reaches this lock call; once that capture came before the kind
// was set and the program hung in its first lock call (src/preload/profile.cpp,
// profile_warm_unwinder). profile_check.py's `unwinder_lock` runs it: it must exit 0, having
// been through its own _Unwind_Backtrace.

#include <dlfcn.h>
#include <pthread.h>
#include <unwind.h>

#include <atomic>
#include <cstdio>

namespace {
pthread_mutex_t g_unwinder = PTHREAD_MUTEX_INITIALIZER;
std::atomic<long> g_unwinds{0};
}  // namespace

// Exported from the program (ENABLE_EXPORTS): it precedes libgcc_s's for every module.
extern "C" _Unwind_Reason_Code _Unwind_Backtrace(_Unwind_Trace_Fn fn, void* arg) {
  using unwind_fn = _Unwind_Reason_Code (*)(_Unwind_Trace_Fn, void*);
  static const auto next = reinterpret_cast<unwind_fn>(dlsym(RTLD_NEXT, "_Unwind_Backtrace"));
  pthread_mutex_lock(&g_unwinder);
  ++g_unwinds;
  pthread_mutex_unlock(&g_unwinder);
  return next != nullptr ? next(fn, arg) : _URC_END_OF_STACK;
}

int main() {
  static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  std::printf("unwinds %ld\n", g_unwinds.load());
  return 0;
}
