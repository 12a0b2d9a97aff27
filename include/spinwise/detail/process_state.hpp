#pragma once
// spinwise's process-wide state: one per process, however many modules include the headers.
//
// An engine is one executable and many shared objects (storage engines, plugins, extensions), most
// built with -fvisibility=hidden. A header-inline variable with hidden visibility is one copy per
// module: the host sets spin_wait_delay 30 and the plugin's latches still wait with 6. So every
// process-wide object of spinwise lives behind one of three symbols that are always exported:
//
//   shared_process_state   the knob words, the relax table, the active relax kind, the counter
//                          rate, the statistics classes, the registered knob classes
//   shared_thread_state    the calling thread's jitter generator and exit flag
//   shared_error_category  spinwise's std::error_category (<spinwise/errc.hpp>): error codes
//                          compare categories by address
//
// All are non-template inline variables with default visibility (SPINWISE_PROCESS_WIDE), which
// the dynamic linker unifies: the first definition in the lookup scope wins, and GCC marks them
// STB_GNU_UNIQUE, so that even modules loaded with dlopen(RTLD_LOCAL) share one copy. What depends
// on a user type (a Tag's knob overrides, a statistics class) cannot be a template variable: a
// template instantiated on a hidden type is hidden, whatever its own attribute says. Such state is a
// named slot in shared_process_state, found by a key (the type's name, or the statistics class's
// name) once per module and cached there.
//
// The rule for multi-module processes (docs/integration.md): a module whose state the others must
// see has to be in the dynamic linker's lookup scope with these symbols exported. Shared
// objects export them by themselves. An executable exports them when a shared object it links
// refers to them, or when it is linked with spinwise::export_state (a dynamic list naming them);
// a host that only dlopen()s its plugins needs the latter.
//
// The layout is part of the ABI: the symbols carry a version, and modules built from spinwise
// versions with different layouts keep separate states rather than share a misread one. v2: the
// statistics shards (stats_shards.hpp) gained a counter. v3: the shards count per lock mode and carry
// the class's run-time switches; the thread state points at the thread's lock tracking record.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>

#include "spinwise/config.hpp"

#if defined(__GNUC__) || defined(__clang__)
#define SPINWISE_PROCESS_WIDE __attribute__((visibility("default")))
#else
#define SPINWISE_PROCESS_WIDE
#endif

namespace spinwise {

// CPUs a profile can describe. Larger CPU numbers use the profile's fallback value.
inline constexpr std::size_t kMaxRelaxCpus = 1024;

namespace detail {

inline constexpr std::size_t kRelaxKinds = 7;
inline constexpr std::uint8_t kRelaxUnresolved = 0xff;
inline constexpr std::size_t kStatePad = 128;  // two 64-byte lines: no false sharing with a prefetch pair

// A process-wide 64-bit word found by name, on its own cache-line pair. Never freed.
struct named_slot {
  alignas(kStatePad) std::atomic<std::uint64_t> value{0};
  named_slot* next = nullptr;
  const char* key = nullptr;
  std::size_t key_len = 0;
};

// A process-wide object found by name, owned by whoever created it first. Never freed.
struct named_object {
  named_object* next = nullptr;
  int kind = 0;  // what the object is (object_kind): names are unique per kind
  const char* key = nullptr;
  std::size_t key_len = 0;
  void* object = nullptr;
};

// A tiny lock for the rare writers of the lists below: constant-initialized, usable during static
// initialization of any module, and the same type in every module (std::mutex would do too, but a
// spin lock keeps the layout independent of the C++ library).
struct state_lock {
  std::atomic<bool> held{false};
  void lock() noexcept {
    while (held.exchange(true, std::memory_order_acquire)) {
      while (held.load(std::memory_order_relaxed)) {
      }
    }
  }
  bool try_lock() noexcept {
    return !held.load(std::memory_order_relaxed) && !held.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { held.store(false, std::memory_order_release); }
};

struct process_state {
  // The active relax kind (arch.hpp); read with a relaxed load per relax.
  alignas(kStatePad) std::atomic<std::uint8_t> relax{kRelaxUnresolved};
  std::atomic<std::uint64_t> counter_hz{0};      // counter ticks per second, 0 = not measured
  std::atomic<std::uint64_t> jitter_streams{0};  // threads seeded so far (jitter.hpp)

  // The relax table (relax_table.hpp). 0 = unknown.
  alignas(kStatePad) std::atomic<std::uint8_t> relax_ns_kind{
      kRelaxUnresolved};                                // the kind the table describes
  std::atomic<float> relax_ns_fallback{0.0f};           // the profile's value for other CPUs
  std::atomic<float> relax_ns_quick[kRelaxKinds] = {};  // quick measurement, per kind
  std::atomic<float> relax_ns_cpu[kMaxRelaxCpus] = {};

  // Knob words by key (knob_word.hpp), statistics classes and registered knob classes by name.
  alignas(kStatePad) state_lock lists_lock;
  std::atomic<named_slot*> slots{nullptr};
  std::atomic<named_object*> objects{nullptr};
  std::atomic<void*> stats_classes{nullptr};  // head of the statistics class list (stats_shards.hpp)
  std::atomic<void*> knob_classes{nullptr};   // head of the registered knob class list (knob_class.hpp)
};

struct thread_state {
  std::uint64_t jitter = 0;  // 0 = not seeded yet
  bool stats_exiting = false;
  bool tracking_exiting = false;
  void* tracked = nullptr;  // the thread's detail::tracked_thread (lock_tracking.hpp), once it has one
};

SPINWISE_PROCESS_WIDE inline process_state shared_process_state_v4;
SPINWISE_PROCESS_WIDE inline thread_local thread_state shared_thread_state_v4;

SPINWISE_ALWAYS_INLINE process_state& process() noexcept { return shared_process_state_v4; }
SPINWISE_ALWAYS_INLINE thread_state& this_thread_state() noexcept { return shared_thread_state_v4; }

inline bool key_equals(const char* a, std::size_t alen, std::string_view b) noexcept {
  return alen == b.size() && (alen == 0 || std::memcmp(a, b.data(), alen) == 0);
}

inline const char* copy_key(std::string_view key) noexcept {
  auto* k = static_cast<char*>(std::malloc(key.size() + 1));
  if (k == nullptr) return nullptr;
  if (!key.empty()) std::memcpy(k, key.data(), key.size());
  k[key.size()] = '\0';
  return k;
}

// The lists are append-only: a node's fields are written before the release store of the head
// that publishes it, and never change or go away. So a lookup walks them without the lock (acquire
// on the head); only an insertion takes it. A waiter's first use of a key that some thread created
// before never waits for anyone (before this, a thread stopped inside the lock, or inside a
// function-local static's guard around the lookup, held every first waiter of its class).
inline named_slot* lookup_slot(std::string_view key) noexcept {
  named_slot* s = process().slots.load(std::memory_order_acquire);
  while (s != nullptr && !key_equals(s->key, s->key_len, key)) s = s->next;
  return s;
}

// How a lookup that must create its entry treats a busy lists_lock: wait for it, or give up
// (the caller then uses the entry's initial value this once, and asks again next time).
enum class on_busy : bool { wait, give_up };

// Takes lists_lock to insert, or, with on_busy::give_up, only if it is free: false (and *busy set)
// when it is not.
inline bool lock_lists(on_busy mode, bool* busy) noexcept {
  state_lock& l = process().lists_lock;
  if (mode == on_busy::wait) {
    l.lock();
    return true;
  }
  if (l.try_lock()) return true;
  if (busy != nullptr) *busy = true;
  return false;
}

// The process-wide word named `key`, created holding `initial` by the first module that asks.
// Returns nullptr when memory is short (callers then fall back to a module-local word) or, with
// on_busy::give_up, when it would have to wait: `busy` says which.
SPINWISE_COLD inline std::atomic<std::uint64_t>* find_slot(std::string_view key, std::uint64_t initial,
                                                           on_busy mode = on_busy::wait,
                                                           bool* busy = nullptr) noexcept {
  if (named_slot* found = lookup_slot(key)) return &found->value;
  process_state& p = process();
  if (!lock_lists(mode, busy)) return nullptr;
  named_slot* s = lookup_slot(key);
  if (s == nullptr) {
    const char* k = copy_key(key);
    s = k == nullptr ? nullptr : new (std::nothrow) named_slot;
    if (s != nullptr) {
      s->value.store(initial, std::memory_order_relaxed);
      s->key = k;
      s->key_len = key.size();
      s->next = p.slots.load(std::memory_order_relaxed);
      p.slots.store(s, std::memory_order_release);
    } else {
      std::free(const_cast<char*>(k));
    }
  }
  p.lists_lock.unlock();
  return s == nullptr ? nullptr : &s->value;
}

enum object_kind : int { kStatsClassObject = 1, kKnobClassObject = 2, kTrackingObject = 3 };

inline named_object* lookup_object(int kind, std::string_view key) noexcept {
  named_object* o = process().objects.load(std::memory_order_acquire);
  while (o != nullptr && !(o->kind == kind && key_equals(o->key, o->key_len, key))) o = o->next;
  return o;
}

// The process-wide object of `kind` named `key`: the existing one (found without the lock), or
// `make()` (called under lists_lock; it returns a new object or nullptr) published under that
// name. nullptr when memory is short or, with on_busy::give_up, when it would have to wait
// (`busy` says so). Slow: callers cache the pointer.
template <class Make>
SPINWISE_COLD void* find_object(int kind, std::string_view key, Make&& make, on_busy mode = on_busy::wait,
                                bool* busy = nullptr) noexcept {
  if (named_object* found = lookup_object(kind, key)) return found->object;
  process_state& p = process();
  if (!lock_lists(mode, busy)) return nullptr;
  named_object* o = lookup_object(kind, key);
  void* result = o == nullptr ? nullptr : o->object;
  if (o == nullptr) {
    const char* k = copy_key(key);
    auto* node = k == nullptr ? nullptr : new (std::nothrow) named_object;
    void* obj = node == nullptr ? nullptr : make();
    if (obj != nullptr) {
      node->kind = kind;
      node->key = k;
      node->key_len = key.size();
      node->object = obj;
      node->next = p.objects.load(std::memory_order_relaxed);
      p.objects.store(node, std::memory_order_release);
      result = obj;
    } else {
      delete node;
      std::free(const_cast<char*>(k));
    }
  }
  p.lists_lock.unlock();
  return result;
}

// A pointer found once and kept: a constant-initialized atomic, so no function-local static's
// guard (a thread stopped inside a guard holds every other first caller). Callers that race on
// the first use each look up the same entry and store the same pointer.
template <class T, class Key>
struct found_once {
  static inline std::atomic<T*> ptr{nullptr};
};

// A name for T that is the same in every module built by one compiler, without RTTI: the
// signature of this function as the compiler spells it.
template <class T>
constexpr std::string_view type_signature() noexcept {
#if defined(__GNUC__) || defined(__clang__)
  return __PRETTY_FUNCTION__;
#else
  return __FUNCSIG__;
#endif
}

// True when the signature names a type without linkage (an anonymous namespace, a lambda, an
// unnamed or local class, as GCC and Clang spell them): no other module can name such a type, so
// state keyed by it stays in the module.
constexpr bool names_type_without_linkage(std::string_view sig) noexcept {
  for (std::string_view mark :
       {"{anonymous}", "(anonymous", "<lambda", "(lambda", "<unnamed", "(unnamed", ")::"}) {
    if (sig.find(mark) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace detail
}  // namespace spinwise
