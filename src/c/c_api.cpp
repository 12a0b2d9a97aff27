// spinwise::c: <spinwise/spinwise.h> over the C++ locks, knobs, profiles and statistics. Nothing
// here is a second implementation: a C lock is a C++ lock living in the C object's storage, a
// knob call is apply_knobs, a report is the runtime's. What is here: the kinds' table, the
// dispatch on a lock's kind byte, the translation of deadlines and errors, and the catch of every
// exception at the boundary.
//
// A C lock object (SPINWISE_LOCK_BYTES, 8-aligned):
//
//   byte 0       kind: 0 the default (hybrid), 1.. the other kinds, kDestroyed after destroy
//   bytes 1..7   zero
//   bytes 8..63  the C++ lock (with_stats<c.<kind>>), then zeros
//
// Invariant: all zero is an unlocked lock of kind 0. It holds because every C++ lock's
// constructor is constexpr and writes only zeros (static_asserts below for size, alignment and a
// constexpr, noexcept construction; the bytes themselves: ConstructionIsAllZeroAndFree in
// tests/locks/conformance_test.cpp and InitWritesZeros in tests/c_api/c_api_test.c). So a
// statically initialized C lock is used as the C++ lock its zeros already are, without a
// constructor call (as glibc's PTHREAD_MUTEX_INITIALIZER is a pthread_mutex_t nobody initialized).

#include <time.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "c_lock_kinds.hpp"
#include "spinwise/hybrid_shared_mutex.hpp"
#include "spinwise/knob_registry.hpp"
#include "spinwise/runtime/knob_config.hpp"
#include "spinwise/runtime/profile.hpp"
#include "spinwise/runtime/stats_report.hpp"
#include "spinwise/spin_shared_mutex.hpp"
#include "spinwise/spinwise.h"

namespace {

using namespace spinwise;

constexpr std::size_t kStorageOffset = 8;
constexpr std::size_t kStorageBytes = SPINWISE_LOCK_BYTES - kStorageOffset;
constexpr unsigned char kDestroyed = 0xff;

// --- the kinds -------------------------------------------------------------------------------

SPINWISE_STATS_CLASS(c_hybrid, "c.hybrid")
SPINWISE_STATS_CLASS(c_adaptive, "c.adaptive")
SPINWISE_STATS_CLASS(c_tas, "c.tas")
SPINWISE_STATS_CLASS(c_ttas, "c.ttas")
SPINWISE_STATS_CLASS(c_ticket, "c.ticket")
SPINWISE_STATS_CLASS(c_mcs, "c.mcs")
SPINWISE_STATS_CLASS(c_rw_hybrid, "c.rwlock.hybrid")
SPINWISE_STATS_CLASS(c_rw_spin, "c.rwlock.spin")

// The mutex kinds are c_lock_kinds.hpp's, each counting into its class c.<kind>; the adaptive
// kind's class is one, so every C adaptive mutex learns one budget.
using hybrid_lock = c_kinds::hybrid::lock<c_hybrid>;
using adaptive_lock = c_kinds::adaptive::lock<c_adaptive>;
using tas_lock = c_kinds::tas::lock<c_tas>;
using ttas_lock = c_kinds::ttas::lock<c_ttas>;
using ticket_lock = c_kinds::ticket::lock<c_ticket>;
using mcs_lock = c_kinds::mcs::lock<c_mcs>;

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

using mutex_kinds =
    kind_table<kind_row<hybrid_lock, SPINWISE_MUTEX_HYBRID>, kind_row<adaptive_lock, SPINWISE_MUTEX_ADAPTIVE>,
               kind_row<tas_lock, SPINWISE_MUTEX_TAS>, kind_row<ttas_lock, SPINWISE_MUTEX_TTAS>,
               kind_row<ticket_lock, SPINWISE_MUTEX_TICKET>, kind_row<mcs_lock, SPINWISE_MUTEX_MCS>>;
static_assert(fits<hybrid_lock>() && fits<adaptive_lock>() && fits<tas_lock>() && fits<ttas_lock>() &&
              fits<ticket_lock>() && fits<mcs_lock>());

using rwlock_kinds =
    kind_table<kind_row<hybrid_shared_mutex::with_stats<c_rw_hybrid>, SPINWISE_RWLOCK_HYBRID>,
               kind_row<spin_shared_mutex::with_stats<c_rw_spin>, SPINWISE_RWLOCK_SPIN>>;
static_assert(fits<hybrid_shared_mutex::with_stats<c_rw_hybrid>>() &&
              fits<spin_shared_mutex::with_stats<c_rw_spin>>());

static_assert(sizeof(spinwise_mutex_t) == SPINWISE_LOCK_BYTES &&
              sizeof(spinwise_rwlock_t) == SPINWISE_LOCK_BYTES);
static_assert(alignof(spinwise_mutex_t) == 8 && alignof(spinwise_rwlock_t) == 8 &&
                  alignof(spinwise_recursive_mutex_t) == 8,
              "the header promises 8-byte alignment on every target");

// The names, by kind value.
constexpr const auto& kMutexNames = c_kinds::kNames;
constexpr const char* kRwlockNames[] = {"hybrid", "spin"};

template <std::size_t N>
int kind_by_name(const char* const (&names)[N], const char* name) noexcept {
  if (name == nullptr) return -1;
  for (std::size_t i = 0; i < N; ++i) {
    if (std::strcmp(names[i], name) == 0) return static_cast<int>(i);
  }
  return -1;
}

// --- lock objects ----------------------------------------------------------------------------

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
int to_deadline(const struct timespec* t, monotonic_clock::time_point& at) noexcept {
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

// --- the recursive mutex's owner and depth ---------------------------------------------------

// The owner is the thread's process-wide token (c_lock_kinds.hpp, as SQLite's recursive mutexes
// name theirs), not an address of this module's own: a plugin with its own copy of this library
// takes a recursive mutex its host holds on the same thread as the owner it is.
struct recursion {
  std::atomic<const void*> owner;  // nullptr: none; else the owner's this_thread_token(). Written by
                                   // the owner only, so a thread reads its own token here only while
                                   // it owns
  std::uint32_t depth;             // the owner's only
};
static_assert(sizeof(recursion) <= sizeof(spinwise_recursive_mutex_t::owner_) &&
              alignof(recursion) <= alignof(spinwise_recursive_mutex_t));
static_assert(std::atomic<const void*>::is_always_lock_free);

recursion& recursion_of(spinwise_recursive_mutex_t* r) noexcept {
  return *std::launder(reinterpret_cast<recursion*>(r->owner_.bytes));
}

using c_kinds::this_thread_token;

template <class Acquire>
int recursive_acquire(spinwise_recursive_mutex_t* r, Acquire&& acquire) noexcept {
  if (r == nullptr) return EINVAL;
  recursion& rec = recursion_of(r);
  const void* self = this_thread_token();
  if (rec.owner.load(std::memory_order_relaxed) == self) {
    if (rec.depth == UINT32_MAX) return EAGAIN;
    ++rec.depth;
    return 0;
  }
  const int rc = acquire(&r->mutex_);
  if (rc != 0) return rc;
  rec.owner.store(self, std::memory_order_relaxed);  // the mutex orders it for the next owner
  rec.depth = 1;
  return 0;
}

// --- errors and messages ---------------------------------------------------------------------

// The calling thread's last message: a fixed, trivially destructible buffer, as SQLite's plug-in
// keeps its own (src/sqlite/sqlite.cpp). glibc runs pthread key destructors after the thread's C++
// thread_local destructors, and a call from one must work (the header promises no abort): a
// thread_local std::string was destroyed by then, and writing it was a use after free. 1 KiB a
// thread holds every message the knob and profile code writes, entry, key and bounds included.
constexpr std::size_t kMessageBytes = 1024;
thread_local char tl_message[kMessageBytes];

// Copies `m`, cut to fit with "..." at the end (before a UTF-8 sequence, never inside one).
void set_message(std::string_view m) noexcept {
  if (m.size() < kMessageBytes) {
    if (!m.empty()) std::memcpy(tl_message, m.data(), m.size());  // an empty view's data() may be null
    tl_message[m.size()] = '\0';
    return;
  }
  constexpr std::string_view kCut = "...";
  std::size_t n = kMessageBytes - 1 - kCut.size();
  while (n > 0 && (static_cast<unsigned char>(m[n]) & 0xc0) == 0x80) --n;  // m[n] continues a sequence
  std::memcpy(tl_message, m.data(), n);
  std::memcpy(tl_message + n, kCut.data(), kCut.size());
  tl_message[n + kCut.size()] = '\0';
}

// A spinwise error_code as the errno value of the std::errc condition it is equivalent to (the
// same that `ec == std::errc::...` tests in C++); EINVAL for one without a condition.
int errno_of(const std::error_code& ec) noexcept {
  if (!ec) return 0;
  const std::error_condition c = ec.default_error_condition();
  return c.category() == std::generic_category() ? c.value() : EINVAL;
}

template <class Status>
int outcome(const Status& st) noexcept {
  if (st.ok()) {
    set_message({});
    return 0;
  }
  set_message(st.message);
  return errno_of(st.error_code());
}

// Runs f at the boundary: no exception leaves.
template <class F>
int guarded(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    set_message("spinwise: out of memory");
    return ENOMEM;
  } catch (const std::exception& e) {
    set_message(e.what());
    return EIO;
  } catch (...) {
    set_message("spinwise: unexpected failure");
    return EIO;
  }
}

// Knob names and values are one entry of a batch: nothing in them may start another entry.
bool plain_knob_word(const char* s, bool value) noexcept {
  if (s == nullptr || *s == '\0') return false;
  for (; *s != '\0'; ++s) {
    if (*s == ',' || *s == '=' || *s == '\n' || *s == '\r' || *s == '#' || (!value && *s == '.'))
      return false;
  }
  return true;
}

}  // namespace

extern "C" {

// --- mutex -----------------------------------------------------------------------------------

int spinwise_mutex_init(spinwise_mutex_t* m, int kind) { return init_lock<mutex_kinds>(m, kind); }

int spinwise_mutex_init_kind(spinwise_mutex_t* m, const char* kind_name) {
  return init_lock<mutex_kinds>(m, kind_by_name(kMutexNames, kind_name));
}

int spinwise_mutex_destroy(spinwise_mutex_t* m) { return destroy_lock<mutex_kinds>(m); }

const char* spinwise_mutex_kind_name(const spinwise_mutex_t* m) {
  return m != nullptr && mutex_kinds::known(kind_of(m)) ? kMutexNames[kind_of(m)] : nullptr;
}

int spinwise_mutex_lock(spinwise_mutex_t* m) {
  return with_lock<mutex_kinds>(m, [](auto* l) noexcept {
    l->lock();
    return 0;
  });
}

int spinwise_mutex_trylock(spinwise_mutex_t* m) {
  return with_lock<mutex_kinds>(m, [](auto* l) noexcept { return l->try_lock() ? 0 : EBUSY; });
}

int spinwise_mutex_timedlock(spinwise_mutex_t* m, const struct timespec* abstime) {
  monotonic_clock::time_point at;
  if (const int rc = to_deadline(abstime, at); rc != 0) return rc;
  return with_lock<mutex_kinds>(m, [&](auto* l) noexcept { return l->try_lock_until(at) ? 0 : ETIMEDOUT; });
}

int spinwise_mutex_unlock(spinwise_mutex_t* m) {
  return with_lock<mutex_kinds>(m, [](auto* l) noexcept {
    if (!l->is_locked()) return EPERM;
    l->unlock();
    return 0;
  });
}

// --- rwlock ----------------------------------------------------------------------------------

int spinwise_rwlock_init(spinwise_rwlock_t* rw, int kind) { return init_lock<rwlock_kinds>(rw, kind); }

int spinwise_rwlock_init_kind(spinwise_rwlock_t* rw, const char* kind_name) {
  return init_lock<rwlock_kinds>(rw, kind_by_name(kRwlockNames, kind_name));
}

int spinwise_rwlock_destroy(spinwise_rwlock_t* rw) { return destroy_lock<rwlock_kinds>(rw); }

const char* spinwise_rwlock_kind_name(const spinwise_rwlock_t* rw) {
  return rw != nullptr && rwlock_kinds::known(kind_of(rw)) ? kRwlockNames[kind_of(rw)] : nullptr;
}

int spinwise_rwlock_rdlock(spinwise_rwlock_t* rw) {
  return with_lock<rwlock_kinds>(rw, [](auto* l) noexcept {
    l->lock_shared();
    return 0;
  });
}

int spinwise_rwlock_tryrdlock(spinwise_rwlock_t* rw) {
  return with_lock<rwlock_kinds>(rw, [](auto* l) noexcept { return l->try_lock_shared() ? 0 : EBUSY; });
}

int spinwise_rwlock_timedrdlock(spinwise_rwlock_t* rw, const struct timespec* abstime) {
  monotonic_clock::time_point at;
  if (const int rc = to_deadline(abstime, at); rc != 0) return rc;
  return with_lock<rwlock_kinds>(
      rw, [&](auto* l) noexcept { return l->try_lock_shared_until(at) ? 0 : ETIMEDOUT; });
}

// An unlock of a mode nobody holds is EPERM and changes nothing: the lock word would wrap around
// (readers inside 0 -> 2^20 - 1, or W 0 -> all ones in spin_shared_mutex) and say EBUSY for ever.
int spinwise_rwlock_rdunlock(spinwise_rwlock_t* rw) {
  return with_lock<rwlock_kinds>(rw, [](auto* l) noexcept {
    if (!l->is_locked_shared()) return EPERM;
    l->unlock_shared();
    return 0;
  });
}

int spinwise_rwlock_wrlock(spinwise_rwlock_t* rw) {
  return with_lock<rwlock_kinds>(rw, [](auto* l) noexcept {
    l->lock();
    return 0;
  });
}

int spinwise_rwlock_trywrlock(spinwise_rwlock_t* rw) {
  return with_lock<rwlock_kinds>(rw, [](auto* l) noexcept { return l->try_lock() ? 0 : EBUSY; });
}

int spinwise_rwlock_timedwrlock(spinwise_rwlock_t* rw, const struct timespec* abstime) {
  monotonic_clock::time_point at;
  if (const int rc = to_deadline(abstime, at); rc != 0) return rc;
  return with_lock<rwlock_kinds>(rw, [&](auto* l) noexcept { return l->try_lock_until(at) ? 0 : ETIMEDOUT; });
}

int spinwise_rwlock_wrunlock(spinwise_rwlock_t* rw) {
  return with_lock<rwlock_kinds>(rw, [](auto* l) noexcept {
    if (!l->is_locked()) return EPERM;
    l->unlock();
    return 0;
  });
}

// --- recursive mutex -------------------------------------------------------------------------

int spinwise_recursive_mutex_init(spinwise_recursive_mutex_t* r, int kind) {
  if (r == nullptr) return EINVAL;
  const int rc = spinwise_mutex_init(&r->mutex_, kind);
  if (rc == 0) std::memset(r->owner_.bytes, 0, sizeof r->owner_.bytes);
  return rc;
}

int spinwise_recursive_mutex_init_kind(spinwise_recursive_mutex_t* r, const char* kind_name) {
  if (r == nullptr) return EINVAL;
  const int rc = spinwise_mutex_init_kind(&r->mutex_, kind_name);
  if (rc == 0) std::memset(r->owner_.bytes, 0, sizeof r->owner_.bytes);
  return rc;
}

int spinwise_recursive_mutex_destroy(spinwise_recursive_mutex_t* r) {
  return r == nullptr ? EINVAL : spinwise_mutex_destroy(&r->mutex_);
}

int spinwise_recursive_mutex_lock(spinwise_recursive_mutex_t* r) {
  return recursive_acquire(r, [](spinwise_mutex_t* m) noexcept { return spinwise_mutex_lock(m); });
}

int spinwise_recursive_mutex_trylock(spinwise_recursive_mutex_t* r) {
  return recursive_acquire(r, [](spinwise_mutex_t* m) noexcept { return spinwise_mutex_trylock(m); });
}

int spinwise_recursive_mutex_timedlock(spinwise_recursive_mutex_t* r, const struct timespec* abstime) {
  monotonic_clock::time_point at;
  if (const int rc = to_deadline(abstime, at); rc != 0) return rc;
  return recursive_acquire(
      r, [&](spinwise_mutex_t* m) noexcept { return spinwise_mutex_timedlock(m, abstime); });
}

int spinwise_recursive_mutex_unlock(spinwise_recursive_mutex_t* r) {
  // A destroyed (or never a) mutex is EINVAL, as for every call but init, before the owner test.
  if (r == nullptr || !mutex_kinds::known(kind_of(&r->mutex_))) return EINVAL;
  recursion& rec = recursion_of(r);
  if (rec.owner.load(std::memory_order_relaxed) != this_thread_token()) return EPERM;
  if (--rec.depth != 0) return 0;
  rec.owner.store(nullptr, std::memory_order_relaxed);
  return spinwise_mutex_unlock(&r->mutex_);
}

unsigned spinwise_recursive_mutex_depth(const spinwise_recursive_mutex_t* r) {
  if (r == nullptr) return 0;
  const recursion& rec = recursion_of(const_cast<spinwise_recursive_mutex_t*>(r));
  return rec.owner.load(std::memory_order_relaxed) == this_thread_token() ? rec.depth : 0u;
}

// --- knobs and profiles ----------------------------------------------------------------------

int spinwise_set_knob(const char* lock_class, const char* knob, const char* value) {
  if (!plain_knob_word(lock_class, false) || !plain_knob_word(knob, false) || !plain_knob_word(value, true)) {
    set_message(
        "spinwise_set_knob: a class, a knob and a value, none empty or NULL, none with ',', '=' or '#'");
    return EINVAL;
  }
  return guarded([&] {
    return outcome(apply_knobs(std::string(lock_class) + "." + knob + "=" + value, knob_text_format::list));
  });
}

int spinwise_apply_knobs(const char* text) {
  if (text == nullptr) return EINVAL;
  return guarded([&] { return outcome(apply_knobs(text, knob_text_format::list)); });
}

int spinwise_check_knobs(const char* text) {
  if (text == nullptr) return EINVAL;
  return guarded([&] { return outcome(check_knobs(text, knob_text_format::list)); });
}

int spinwise_load_knobs(const char* path) {
  if (path == nullptr) return EINVAL;
  return guarded([&] { return outcome(load_knobs(path)); });
}

int spinwise_load_profile(const char* path) {
  if (path == nullptr) return EINVAL;
  return guarded([&] { return outcome(load_profile(path)); });
}

int spinwise_configure_from_env(void) {
  return guarded([] {
    const startup_status st = configure_from_env();
    if (st.ok()) {
      set_message({});
      return 0;
    }
    set_message(st.message());
    return errno_of(st.error_code());
  });
}

const char* spinwise_last_message(void) { return tl_message; }

// --- statistics ------------------------------------------------------------------------------

int spinwise_stats_report(int format, char* buf, size_t size, size_t* needed) {
  if (buf == nullptr && size != 0) return EINVAL;
  return guarded([&] {
    const stats_snapshot s = take_stats_snapshot();
    std::string report;
    switch (format) {
      case SPINWISE_STATS_TEXT:
        report = format_stats_text(s);
        break;
      case SPINWISE_STATS_JSON:
        report = format_stats_json(s);
        break;
      case SPINWISE_STATS_PROMETHEUS:
        report = format_stats_prometheus(s);
        break;
      default:
        set_message("spinwise_stats_report: no such format");
        return EINVAL;
    }
    if (needed != nullptr) *needed = report.size() + 1;
    if (report.size() + 1 > size) return ERANGE;
    std::memcpy(buf, report.c_str(), report.size() + 1);
    set_message({});
    return 0;
  });
}

int spinwise_stats_reset(void) {
  return guarded([] {
    reset_stats();
    return 0;
  });
}

const char* spinwise_strerror(int code) {
  switch (code) {
    case 0:
      return "success";
    case EINVAL:
      return "invalid argument (NULL, an unknown kind or name, a bad time, a malformed knob entry)";
    case EBUSY:
      return "the lock is held";
    case ETIMEDOUT:
      return "the deadline passed before the lock was taken";
    case EPERM:
      return "the caller does not hold the lock";
    case EAGAIN:
      return "the recursive mutex is held at its deepest depth";
    case ENOMEM:
      return "out of memory";
    case EDOM:
      return "a knob value outside its bounds";
    case ERANGE:
      return "the buffer is too small";
    case ENOENT:
      return "no such file";
    case EIO:
      return "the file could not be read, or an unexpected failure";
    case EFBIG:
      return "the file is too large";
    case EEXIST:
      return "the name is taken";
    case ENOTSUP:
      return "not supported on this CPU or build";
    default: {
      // glibc's words for a code it does not know, in a buffer of the thread as glibc's: trivially
      // destructible, so this works in a pthread key destructor too.
      thread_local char unknown[sizeof "Unknown error -2147483648"];
      std::snprintf(unknown, sizeof unknown, "Unknown error %d", code);
      return unknown;
    }
  }
}

int spinwise_version(void) { return SPINWISE_VERSION; }

}  // extern "C"
