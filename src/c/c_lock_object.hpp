#pragma once
// A C lock object of spinwise::c (<spinwise/spinwise.h>'s spinwise_mutex_t, spinwise_rwlock_t):
// its layout, the table of the kinds it may hold, and the calls every C lock makes through it
// (init, destroy, dispatch on the kind byte), with the translation of a C deadline. Used by
// c_api.cpp (the mutexes and the recursive mutex) and c_rwlock.cpp (the rwlocks).
//
// A C lock object (SPINWISE_LOCK_BYTES, 8-aligned):
//
//   byte 0       kind: 0 the default (hybrid), 1.. the other kinds, kDestroyed after destroy
//   bytes 1..7   zero
//   bytes 8..63  the C++ lock (with_stats<c.<kind>>), then zeros
//
// Invariant: all zero is an unlocked lock of kind 0. It holds because every C++ lock's
// constructor is constexpr and writes only zeros (static_asserts: fits() below for each kind's size,
// alignment and a constexpr, noexcept construction, and the C types' size and alignment; the bytes
// themselves: ConstructionIsAllZeroAndFree in tests/locks/conformance_test.cpp and InitWritesZeros
// in tests/c_api/c_api_test.c). So a statically initialized C lock is used as the C++ lock its
// zeros already are, without a constructor call (as glibc's PTHREAD_MUTEX_INITIALIZER is a
// pthread_mutex_t nobody initialized).

#include <time.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>

#include "spinwise/spinwise.h"

// An unnamed namespace in a header: everything in it is a constant, a template or inline, and each
// source that includes it keeps its own copy with internal linkage, as when the API was one
// source. So no symbol of these leaves the library's objects: spinwise::c exports the spinwise_*
// functions only.
namespace {

constexpr std::size_t kStorageOffset = 8;
constexpr std::size_t kStorageBytes = SPINWISE_LOCK_BYTES - kStorageOffset;
constexpr unsigned char kDestroyed = 0xff;

template <class Lock, int Kind>
struct kind_row {
  using type = Lock;
  static constexpr int kind = Kind;
};

template <class... Rows>
struct kind_table {
  // Calls f(type*) for the row of `kind`; EINVAL for none.
  template <class F>
  static int visit(int kind, unsigned char* storage, F&& f) noexcept {
    int rc = EINVAL;
    (void)((Rows::kind == kind ? (rc = f(std::launder(reinterpret_cast<typename Rows::type*>(storage))), true)
                               : false) ||
           ...);
    return rc;
  }
  static bool known(int kind) noexcept { return ((Rows::kind == kind) || ...); }
  // Makes `storage` an unlocked lock of `kind` (known(kind)), zeros after it.
  static void construct(int kind, unsigned char* storage) noexcept {
    (void)((Rows::kind == kind ? (new (storage) typename Rows::type, true) : false) || ...);
    (void)((Rows::kind == kind ? (std::memset(storage + sizeof(typename Rows::type), 0,
                                              kStorageBytes - sizeof(typename Rows::type)),
                                  true)
                               : false) ||
           ...);
  }
};

// What makes a C++ lock usable here, for every row: it fits, its alignment is the object's, its
// construction never throws and is a constant expression (so it is constant bytes: zeros, as the
// tests check), and forgetting one without its destructor leaks nothing. The TSan build's locks
// have a destructor (a hook) and so are no literal types: the other builds check them.
template <class L>
constexpr bool constant_constructible() {
  L l{};
  (void)l;
  return true;
}

template <class L>
constexpr bool fits() {
  static_assert(sizeof(L) <= kStorageBytes, "the C lock object is too small for this kind");
  static_assert(kStorageOffset % alignof(L) == 0 && alignof(L) <= alignof(spinwise_mutex_t),
                "the C lock object is not aligned for this kind");
  static_assert(std::is_nothrow_default_constructible_v<L>);
#if !defined(SPINWISE_TSAN_HOOKS)
  static_assert(std::is_trivially_destructible_v<L>);
  static_assert(constant_constructible<L>(), "a C lock's zeros must be its constructed state");
#endif
  return true;
}

static_assert(sizeof(spinwise_mutex_t) == SPINWISE_LOCK_BYTES &&
              sizeof(spinwise_rwlock_t) == SPINWISE_LOCK_BYTES);
static_assert(alignof(spinwise_mutex_t) == 8 && alignof(spinwise_rwlock_t) == 8 &&
                  alignof(spinwise_recursive_mutex_t) == 8,
              "the header promises 8-byte alignment on every target");

// A kind's value by its name in `names` (the kinds' names, by value); -1 for none.
template <std::size_t N>
int kind_by_name(const char* const (&names)[N], const char* name) noexcept {
  if (name == nullptr) return -1;
  for (std::size_t i = 0; i < N; ++i) {
    if (std::strcmp(names[i], name) == 0) return static_cast<int>(i);
  }
  return -1;
}

// --- a lock object's calls -------------------------------------------------------------------

template <class Object>
unsigned char* bytes_of(Object* o) noexcept {
  return o->opaque_.bytes;
}
template <class Object>
int kind_of(const Object* o) noexcept {
  return o->opaque_.bytes[0];
}

template <class Kinds, class Object, class F>
int with_lock(Object* o, F&& f) noexcept {
  if (o == nullptr) return EINVAL;
  return Kinds::visit(kind_of(o), bytes_of(o) + kStorageOffset, f);
}

template <class Kinds, class Object>
int init_lock(Object* o, int kind) noexcept {
  if (o == nullptr || !Kinds::known(kind)) return EINVAL;
  unsigned char* b = bytes_of(o);
  std::memset(b, 0, kStorageOffset);
  b[0] = static_cast<unsigned char>(kind);
  Kinds::construct(kind, b + kStorageOffset);
  return 0;
}

// EBUSY while held: it takes the lock exclusively to see (so a destroy never races a holder).
template <class Kinds, class Object>
int destroy_lock(Object* o) noexcept {
  const int rc = with_lock<Kinds>(o, [](auto* l) noexcept {
    if (!l->try_lock()) return EBUSY;
    l->unlock();
    using L = std::remove_pointer_t<decltype(l)>;
    l->~L();  // the TSan build forgets the mutex; otherwise nothing
    return 0;
  });
  if (rc == 0) bytes_of(o)[0] = kDestroyed;
  return rc;
}

// CLOCK_MONOTONIC itself, as a std clock: the deadline code compares only with its now().
struct monotonic_clock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<monotonic_clock>;
  static constexpr bool is_steady = true;
  static time_point now() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
  }
};

// EINVAL for NULL or tv_nsec outside [0, 1e9). Seconds beyond the nanosecond range are clamped:
// a deadline centuries away is never reached, one centuries ago has passed.
inline int to_deadline(const struct timespec* t, monotonic_clock::time_point& at) noexcept {
  constexpr long kNsPerS = 1'000'000'000;
  if (t == nullptr || t->tv_nsec < 0 || t->tv_nsec >= kNsPerS) return EINVAL;
  constexpr std::int64_t kMaxS = INT64_MAX / kNsPerS - 1;
  const auto s = static_cast<std::int64_t>(t->tv_sec);
  if (s > kMaxS) {
    at = monotonic_clock::time_point::max();
  } else if (s < -kMaxS) {
    at = monotonic_clock::time_point::min();
  } else {
    at = monotonic_clock::time_point(std::chrono::nanoseconds(s * kNsPerS + t->tv_nsec));
  }
  return 0;
}

}  // namespace
