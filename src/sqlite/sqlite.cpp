// spinwise::sqlite: every mutex SQLite uses on a spinwise lock, through SQLite's own plug-in point
// (sqlite3_config(SQLITE_CONFIG_MUTEX)), for an unmodified libsqlite3. The locks are the C API's
// kinds, the same C++ types (src/c/c_api.cpp); nothing here is a lock of its own. What is here: the
// object SQLite gets for a mutex (a lock, its holder and, for SQLite's recursive type, a depth),
// the static mutexes, one methods table per kind, and install.
//
// A mutex object (to SQLite an opaque sqlite3_mutex*):
//
//   ops     enter, try, leave, destroy for its (kind, SQLite type): each type is its own lock type,
//           since each is its own statistics class. Copied into the object at allocation, so that
//           SQLite's sqlite3_mutex_enter is its call through its table to x_enter and one call
//           from there to the lock, with no table of ours to load in between (SQLite's own path
//           is its table and then pthread_mutex_lock: two indirect calls, as here).
//   holder  the holding thread's token, nullptr while nobody holds it
//   depth   how often the holder entered it: SQLite's recursive type only
//   lock    the C++ lock, Lock::with_stats<sqlite.<type>>
//
// Invariant: holder is the token of the thread that holds the lock, nullptr while none does. Only
// the holder writes it: after the lock is taken and, cleared, before it is released. So a thread
// that compares holder with its own token reads its own last store or a later one of another
// thread (coherence: never an older value of its own), and Held/Notheld are exact for the caller
// with relaxed loads; the lock orders depth and holder for the next holder.
//
// Cost over the lock itself, uncontended: enter is a TLS address and a relaxed store, leave a
// relaxed store; a recursive enter loads holder first. Every acquisition also counts into the
// type's statistics class (a per-thread shard, lock_stats.hpp), as with every with_stats lock.

#include "spinwise/sqlite.h"

#include <sqlite3.h>

#include <array>
#include <atomic>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../c/c_lock_kinds.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/park_behind_sleepers.hpp"

namespace {

using namespace spinwise;

// --- the statistics classes, one per SQLite mutex type ---------------------------------------

SPINWISE_STATS_CLASS(sqlite_fast, "sqlite.fast")
SPINWISE_STATS_CLASS(sqlite_recursive, "sqlite.recursive")
SPINWISE_STATS_CLASS(sqlite_static_main, "sqlite.static_main")
SPINWISE_STATS_CLASS(sqlite_static_mem, "sqlite.static_mem")
SPINWISE_STATS_CLASS(sqlite_static_open, "sqlite.static_open")
SPINWISE_STATS_CLASS(sqlite_static_prng, "sqlite.static_prng")
SPINWISE_STATS_CLASS(sqlite_static_lru, "sqlite.static_lru")
SPINWISE_STATS_CLASS(sqlite_static_pmem, "sqlite.static_pmem")
SPINWISE_STATS_CLASS(sqlite_static_app1, "sqlite.static_app1")
SPINWISE_STATS_CLASS(sqlite_static_app2, "sqlite.static_app2")
SPINWISE_STATS_CLASS(sqlite_static_app3, "sqlite.static_app3")
SPINWISE_STATS_CLASS(sqlite_static_vfs1, "sqlite.static_vfs1")
SPINWISE_STATS_CLASS(sqlite_static_vfs2, "sqlite.static_vfs2")
SPINWISE_STATS_CLASS(sqlite_static_vfs3, "sqlite.static_vfs3")

// SQLite's static mutex ids, SQLITE_MUTEX_STATIC_MAIN (2) .. SQLITE_MUTEX_STATIC_VFS3 (13), in order.
constexpr int kFirstStatic = SQLITE_MUTEX_STATIC_MAIN;
using static_classes =
    std::tuple<sqlite_static_main, sqlite_static_mem, sqlite_static_open, sqlite_static_prng,
               sqlite_static_lru, sqlite_static_pmem, sqlite_static_app1, sqlite_static_app2,
               sqlite_static_app3, sqlite_static_vfs1, sqlite_static_vfs2, sqlite_static_vfs3>;
constexpr int kStatics = static_cast<int>(std::tuple_size_v<static_classes>);
static_assert(SQLITE_MUTEX_STATIC_MEM == kFirstStatic + 1 && SQLITE_MUTEX_STATIC_OPEN == kFirstStatic + 2 &&
                  SQLITE_MUTEX_STATIC_PRNG == kFirstStatic + 3 &&
                  SQLITE_MUTEX_STATIC_LRU == kFirstStatic + 4 &&
                  SQLITE_MUTEX_STATIC_PMEM == kFirstStatic + 5 &&
                  SQLITE_MUTEX_STATIC_APP1 == kFirstStatic + 6 &&
                  SQLITE_MUTEX_STATIC_APP3 == kFirstStatic + 8 &&
                  SQLITE_MUTEX_STATIC_VFS1 == kFirstStatic + 9 &&
                  SQLITE_MUTEX_STATIC_VFS3 == kFirstStatic + kStatics - 1,
              "static_classes lists SQLite's static mutexes by id");
template <int Id>
using static_class = std::tuple_element_t<Id - kFirstStatic, static_classes>;

// --- the kinds: the C API's (c_lock_kinds.hpp) ------------------------------------------------
// Their adaptive kind learns a spin budget per SQLite type (the Tag is the type's class): the
// types hold their locks for very different times (static_mem around an allocation's bookkeeping,
// a recursive connection mutex around a whole statement step), so one budget would fit none.
using namespace c_kinds;

// SQLite's hybrid kind: the C API's hybrid, except that its fast and recursive mutexes (the shared
// B-tree's, a serialized connection's: sections of a whole B-tree operation or statement step) do
// not spin behind a sleeper of their type (park_behind_sleepers.hpp). With more threads than CPUs,
// spinning there cost 0.79-0.88x SQLite's own mutexes' operations/s at 1.9-2.4x their CPU per
// operation (bench/results/sqlite-emr/); the static mutexes' short sections keep the spin, which
// pays there even oversubscribed (bench/results/sqlite-emr-sleepers/).
struct sqlite_hybrid {
  template <class Class>
  using lock = std::conditional_t<
      std::is_same_v<Class, sqlite_fast> || std::is_same_v<Class, sqlite_recursive>,
      hybrid_mutex_t<park_behind_sleepers<hybrid_mutex::policy, Class>, class_stats<Class>>,
      hybrid::lock<Class>>;
};

// --- mutex objects ---------------------------------------------------------------------------

struct mutex;

struct mutex_ops {
  void (*enter)(mutex*) noexcept;
  int (*try_enter)(mutex*) noexcept;  // SQLITE_OK or SQLITE_BUSY
  void (*leave)(mutex*) noexcept;
  void (*destroy)(mutex*) noexcept;  // nullptr for a static mutex: never freed
};

struct mutex {
  constexpr explicit mutex(const mutex_ops& o) noexcept : ops(o) {}
  const mutex_ops ops;
  std::atomic<const void*> holder{nullptr};
  std::uint32_t depth = 0;
};
static_assert(std::atomic<const void*>::is_always_lock_free);

template <class Lock>
struct mutex_with : mutex {
  constexpr explicit mutex_with(const mutex_ops& o) noexcept : mutex(o) {}
  Lock lock;
};

template <class Lock>
Lock& lock_of(mutex* m) noexcept {
  return static_cast<mutex_with<Lock>*>(m)->lock;
}

// The calling thread's token (c_lock_kinds.hpp): the C API's recursive mutexes name theirs alike.
const void* self() noexcept { return this_thread_token(); }

// SQLite's fast and static types: not recursive. SQLite never enters one it holds (that would
// wait forever, as with its own pthread mutexes).
template <class Lock>
struct plain_ops {
  static void enter(mutex* m) noexcept {
    lock_of<Lock>(m).lock();
    m->holder.store(self(), std::memory_order_relaxed);
  }
  static int try_enter(mutex* m) noexcept {
    if (!lock_of<Lock>(m).try_lock()) return SQLITE_BUSY;
    m->holder.store(self(), std::memory_order_relaxed);
    return SQLITE_OK;
  }
  static void leave(mutex* m) noexcept {
    m->holder.store(nullptr, std::memory_order_relaxed);
    lock_of<Lock>(m).unlock();
  }
};

// SQLite's recursive type: the holder enters again without the lock, depth + 1; the last leave
// releases it. SQLite nests a connection's mutex a few levels deep, far from 2^32.
template <class Lock>
struct recursive_ops {
  static void enter(mutex* m) noexcept {
    const void* me = self();
    if (m->holder.load(std::memory_order_relaxed) == me) {
      ++m->depth;
      return;
    }
    lock_of<Lock>(m).lock();
    m->holder.store(me, std::memory_order_relaxed);
    m->depth = 1;
  }
  static int try_enter(mutex* m) noexcept {
    const void* me = self();
    if (m->holder.load(std::memory_order_relaxed) == me) {
      ++m->depth;
      return SQLITE_OK;
    }
    if (!lock_of<Lock>(m).try_lock()) return SQLITE_BUSY;
    m->holder.store(me, std::memory_order_relaxed);
    m->depth = 1;
    return SQLITE_OK;
  }
  static void leave(mutex* m) noexcept {
    if (--m->depth != 0) return;
    m->holder.store(nullptr, std::memory_order_relaxed);
    lock_of<Lock>(m).unlock();
  }
};

template <class Lock>
void destroy(mutex* m) noexcept {
  delete static_cast<mutex_with<Lock>*>(m);
}

template <class Lock, template <class> class Ops>
constexpr mutex_ops kAllocatedOps = {&Ops<Lock>::enter, &Ops<Lock>::try_enter, &Ops<Lock>::leave,
                                     &destroy<Lock>};
template <class Lock>
constexpr mutex_ops kStaticOps = {&plain_ops<Lock>::enter, &plain_ops<Lock>::try_enter,
                                  &plain_ops<Lock>::leave, nullptr};

// A fast or recursive mutex: from operator new, never from SQLite's allocator, so that a mutex
// depends neither on how SQLite's memory is configured (SQLITE_CONFIG_MALLOC, a fixed heap) nor on
// whether it is up yet. nullptr when out of memory, as SQLite expects.
template <class Kind, class Class, template <class> class Ops>
mutex* allocate() noexcept {
  using L = typename Kind::template lock<Class>;
  return new (std::nothrow) mutex_with<L>(kAllocatedOps<L, Ops>);
}

// The static mutexes: objects with static storage, constant-initialized (every lock's constructor
// is constexpr), so they exist before any code runs and xMutexInit has nothing to set up. Each on
// its own line: SQLite's hottest mutexes are statics (static_mem on every allocation while memory
// statistics are on, static_pmem and static_lru in the page cache), entered by different threads.
template <class Kind, int Id>
alignas(kCacheLinePad) mutex_with<typename Kind::template lock<static_class<Id>>> static_mutex{
    kStaticOps<typename Kind::template lock<static_class<Id>>>};

// What makes that so, for every kind: its object is a constant expression. (Not in the TSan
// build, whose locks have a destructor, a hook, and so are no literal types.)
#if !defined(SPINWISE_TSAN_HOOKS)
template <class... Kinds>
constexpr bool constant_initialized() {
  return ((
              mutex_with<typename Kinds::template lock<sqlite_static_main>>{
                  kStaticOps<typename Kinds::template lock<sqlite_static_main>>},
              true) &&
          ...);
}
static_assert(constant_initialized<sqlite_hybrid, adaptive, tas, ttas, ticket, mcs>(),
              "a static SQLite mutex must need no constructor call");
#endif

template <class Kind, std::size_t... I>
constexpr std::array<mutex*, kStatics> static_table(std::index_sequence<I...>) {
  return {&static_mutex<Kind, kFirstStatic + static_cast<int>(I)>...};
}
template <class Kind>
constexpr std::array<mutex*, kStatics> kStaticMutexes =
    static_table<Kind>(std::make_index_sequence<kStatics>{});

// --- SQLite's methods ------------------------------------------------------------------------

mutex* object(sqlite3_mutex* p) noexcept { return reinterpret_cast<mutex*>(p); }
sqlite3_mutex* handle(mutex* m) noexcept { return reinterpret_cast<sqlite3_mutex*>(m); }

// Thread-safe and idempotent, trivially: there is nothing to initialize or to tear down.
int x_init() noexcept { return SQLITE_OK; }
int x_end() noexcept { return SQLITE_OK; }

template <class Kind>
sqlite3_mutex* x_alloc(int id) noexcept {
  switch (id) {
    case SQLITE_MUTEX_FAST:
      return handle(allocate<Kind, sqlite_fast, plain_ops>());
    case SQLITE_MUTEX_RECURSIVE:
      return handle(allocate<Kind, sqlite_recursive, recursive_ops>());
    default:
      // An id SQLite does not define: no mutex, rather than another id's.
      if (id < kFirstStatic || id >= kFirstStatic + kStatics) return nullptr;
      return handle(kStaticMutexes<Kind>[static_cast<std::size_t>(id - kFirstStatic)]);
  }
}

void x_free(sqlite3_mutex* p) noexcept {
  mutex* m = object(p);
  if (m != nullptr && m->ops.destroy != nullptr) m->ops.destroy(m);
}

// Enter, try and leave are never given NULL: SQLite's sqlite3_mutex_* filter it.
void x_enter(sqlite3_mutex* p) noexcept { object(p)->ops.enter(object(p)); }
int x_try(sqlite3_mutex* p) noexcept { return object(p)->ops.try_enter(object(p)); }
void x_leave(sqlite3_mutex* p) noexcept { object(p)->ops.leave(object(p)); }

// NULL as SQLite's sqlite3_mutex_held / _notheld answer it: both true (they are assert helpers:
// "no mutex" is held and not held alike).
int x_held(sqlite3_mutex* p) noexcept {
  return p == nullptr || object(p)->holder.load(std::memory_order_relaxed) == self();
}
int x_notheld(sqlite3_mutex* p) noexcept {
  return p == nullptr || object(p)->holder.load(std::memory_order_relaxed) != self();
}

template <class Kind>
constexpr sqlite3_mutex_methods methods_of() {
  return {&x_init, &x_end, &x_alloc<Kind>, &x_free, &x_enter, &x_try, &x_leave, &x_held, &x_notheld};
}

struct kind_entry {
  const char* name;
  sqlite3_mutex_methods methods;
};
// The C API's names, in its order (c_lock_kinds.hpp).
constexpr kind_entry kKinds[] = {
    {kNames[0], methods_of<sqlite_hybrid>()}, {kNames[1], methods_of<adaptive>()},
    {kNames[2], methods_of<tas>()},           {kNames[3], methods_of<ttas>()},
    {kNames[4], methods_of<ticket>()},        {kNames[5], methods_of<mcs>()},
};
constexpr const char* kKnownKinds = kNameList;
constexpr const char* kEnvVar = "SPINWISE_SQLITE_LOCK";

// --- state and messages ----------------------------------------------------------------------

std::atomic<const char*> g_installed{nullptr};  // the name in kKinds last installed

// A fixed buffer: writing a message never allocates and never throws.
thread_local char tl_message[256];

__attribute__((format(printf, 1, 2))) void set_message(const char* format, ...) noexcept {
  va_list ap;
  va_start(ap, format);
  std::vsnprintf(tl_message, sizeof tl_message, format, ap);
  va_end(ap);
}
void clear_message() noexcept { tl_message[0] = '\0'; }

// `kind`, or the environment's, or hybrid; nullptr with a message for an unknown name.
const kind_entry* resolve(const char* caller, const char* kind) noexcept {
  const bool from_env = kind == nullptr;
  if (from_env) {
    kind = std::getenv(kEnvVar);
    if (kind == nullptr || *kind == '\0') return &kKinds[0];
  }
  for (const kind_entry& k : kKinds) {
    if (std::strcmp(k.name, kind) == 0) return &k;
  }
  set_message("%s: unknown lock kind '%s'%s%s (known: %s)", caller, kind, from_env ? " from " : "",
              from_env ? kEnvVar : "", kKnownKinds);
  return nullptr;
}

}  // namespace

extern "C" {

int spinwise_sqlite_install(const char* kind) {
  const kind_entry* k = resolve("spinwise_sqlite_install", kind);
  if (k == nullptr) return SQLITE_ERROR;
  // SQLite copies the table; it reads, never writes it.
  const int rc = sqlite3_config(SQLITE_CONFIG_MUTEX, const_cast<sqlite3_mutex_methods*>(&k->methods));
  if (rc == SQLITE_MISUSE) {
    set_message(
        "spinwise_sqlite_install: SQLite is initialized already (by sqlite3_initialize or a first "
        "sqlite3_open): its mutexes are in use; install before that, or after sqlite3_shutdown()");
    return rc;
  }
  if (rc != SQLITE_OK) {
    set_message(
        "spinwise_sqlite_install: sqlite3_config(SQLITE_CONFIG_MUTEX) failed: %s%s", sqlite3_errstr(rc),
        sqlite3_threadsafe() == 0 ? " (this libsqlite3 is built without mutexes, SQLITE_THREADSAFE=0)" : "");
    return rc;
  }
  g_installed.store(k->name, std::memory_order_release);
  clear_message();
  return SQLITE_OK;
}

const char* spinwise_sqlite_kind(void) { return g_installed.load(std::memory_order_acquire); }

const struct sqlite3_mutex_methods* spinwise_sqlite_methods(const char* kind) {
  const kind_entry* k = resolve("spinwise_sqlite_methods", kind);
  if (k == nullptr) return nullptr;
  clear_message();
  return &k->methods;
}

const char* spinwise_sqlite_message(void) { return tl_message; }

}  // extern "C"
