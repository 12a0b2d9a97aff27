#pragma once
// Clang thread-safety attributes (-Wthread-safety), spelled as SPINWISE_ macros that expand to
// nothing on compilers without them. Every spinwise lock is a capability; use spinwise's guards
// (libstdc++'s std::lock_guard carries no annotations) for GUARDED_BY checking to see the locks.
//
//   struct table {
//     spinwise::ttas_mutex mu;
//     int rows SPINWISE_GUARDED_BY(mu) = 0;
//   };

#if defined(__clang__) && defined(__has_attribute)
#define SPINWISE_TSA_(x) __attribute__((x))
#else
#define SPINWISE_TSA_(x)
#endif

#define SPINWISE_CAPABILITY(name) SPINWISE_TSA_(capability(name))
#define SPINWISE_SCOPED_CAPABILITY SPINWISE_TSA_(scoped_lockable)
#define SPINWISE_GUARDED_BY(x) SPINWISE_TSA_(guarded_by(x))
#define SPINWISE_PT_GUARDED_BY(x) SPINWISE_TSA_(pt_guarded_by(x))
#define SPINWISE_ACQUIRED_BEFORE(...) SPINWISE_TSA_(acquired_before(__VA_ARGS__))
#define SPINWISE_ACQUIRED_AFTER(...) SPINWISE_TSA_(acquired_after(__VA_ARGS__))
#define SPINWISE_REQUIRES(...) SPINWISE_TSA_(requires_capability(__VA_ARGS__))
#define SPINWISE_REQUIRES_SHARED(...) SPINWISE_TSA_(requires_shared_capability(__VA_ARGS__))
#define SPINWISE_ACQUIRE(...) SPINWISE_TSA_(acquire_capability(__VA_ARGS__))
#define SPINWISE_ACQUIRE_SHARED(...) SPINWISE_TSA_(acquire_shared_capability(__VA_ARGS__))
#define SPINWISE_RELEASE(...) SPINWISE_TSA_(release_capability(__VA_ARGS__))
#define SPINWISE_RELEASE_SHARED(...) SPINWISE_TSA_(release_shared_capability(__VA_ARGS__))
#define SPINWISE_RELEASE_GENERIC(...) SPINWISE_TSA_(release_generic_capability(__VA_ARGS__))
#define SPINWISE_TRY_ACQUIRE(...) SPINWISE_TSA_(try_acquire_capability(__VA_ARGS__))
#define SPINWISE_TRY_ACQUIRE_SHARED(...) SPINWISE_TSA_(try_acquire_shared_capability(__VA_ARGS__))
#define SPINWISE_EXCLUDES(...) SPINWISE_TSA_(locks_excluded(__VA_ARGS__))
#define SPINWISE_ASSERT_CAPABILITY(x) SPINWISE_TSA_(assert_capability(x))
#define SPINWISE_ASSERT_SHARED_CAPABILITY(x) SPINWISE_TSA_(assert_shared_capability(x))
#define SPINWISE_RETURN_CAPABILITY(x) SPINWISE_TSA_(lock_returned(x))
#define SPINWISE_NO_THREAD_SAFETY_ANALYSIS SPINWISE_TSA_(no_thread_safety_analysis)
