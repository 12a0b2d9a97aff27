// spinwise-sqlite-bench: one arm of the SQLite side-by-side (bench/engines/sqlite/run.sh,
// docs/engines.md "SQLite"). A real, unmodified libsqlite3 under N threads, on SQLite's own mutexes
// (--arm sqlite) or on spinwise's (spinwise_sqlite_install(<arm>)); one JSON line of results.
//
// One process runs one arm: SQLite takes its mutex methods once, before sqlite3_initialize, and
// keeps them until sqlite3_shutdown. Every arm goes through the same start-up: initialize and shut
// down once (so that SQLite has filled in its own methods), read the methods in place with
// SQLITE_CONFIG_GETMUTEX (the sqlite arm saves them and leaves them installed; the JSON says where
// they live), install spinwise's for a spinwise arm, set SQLITE_CONFIG_MEMSTATUS, initialize.
//
// The modes put a different SQLite mutex on the path that the threads share:
//   private       a ":memory:" database per thread (SQLITE_OPEN_NOMUTEX: no connection mutex).
//                 Only the process-wide statics are shared; with this Debian build (no lookaside:
//                 SQLITE_OMIT_LOOKASIDE) every allocation takes static_mem while memory statistics
//                 are on. Short sections. --memstatus off is the control without that lock.
//   shared-cache  one shared-cache in-memory database, a connection per thread (NOMUTEX): the
//                 shared B-tree's mutex (sqlite.fast) around every B-tree call. Medium sections.
//                 Shared-cache table locks answer SQLITE_LOCKED while another connection writes
//                 the table; the operation is reset and retried (after a sched_yield, so that the
//                 writer runs) and the retries are counted.
//   serialized    one connection (SQLITE_OPEN_FULLMUTEX) for every thread: its recursive mutex
//                 around each whole API call. Long sections.
//   wal           a file database in WAL mode (journal_mode=WAL, synchronous=NORMAL: how SQLite is
//                 deployed most), a connection per thread (NOMUTEX), in a new directory under
//                 --dir (default $TMPDIR or /tmp), removed after the run. Shared: the WAL index's
//                 shared-memory mutex (sqlite.fast) at every transaction's start and end, and the
//                 static ones. One writer at a time: an INSERT that finds the write lock taken is
//                 SQLITE_BUSY, reset and retried after a sched_yield (counted, as LOCKED above; no
//                 busy handler, whose sleeps of 1 ms and more would hide every mutex).
//
// An operation, identical in every arm: one INSERT of a 32-byte row under a new key, then one point
// SELECT of a random key this thread inserted before (or just now), prepared statements
// reset/bind/step; the SELECT checks that the row is there and is the one written. Its latency is
// taken with steady_clock around both statements, retries included.
//
// Exit status: 0 every check passed; 1 a check or a SQLite call failed (the JSON line says which,
// "ok": false); 2 usage.
#include <dlfcn.h>
#include <limits.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "histogram.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/detail/cpu_time.hpp"
#include "spinwise/relax_time.hpp"
#include "spinwise/runtime/knob_config.hpp"
#include "spinwise/runtime/run_context.hpp"
#include "spinwise/runtime/stats_report.hpp"
#include "spinwise/sqlite.h"

namespace {

using json = nlohmann::ordered_json;
using clock_type = std::chrono::steady_clock;

constexpr const char* kFormat = "spinwise.sqlite_bench";
constexpr int kFormatVersion = 1;
constexpr int kExitFailed = 1;  // a check or a SQLite call failed: the JSON line says which
constexpr int kExitUsage = 2;
constexpr std::string_view kClassPrefix = "sqlite.";  // spinwise::sqlite's statistics classes
constexpr const char* kSharedCacheUri = "file:spinwise_sqlite_bench?mode=memory&cache=shared";
constexpr int kValueBytes = 32;
// Keys are (thread + 1) << 40 | n: unique across threads in the shared modes, never 0, and far
// from any count one run reaches.
constexpr int kKeyShift = 40;

// --- options ---------------------------------------------------------------------------------

enum class mode { private_db, shared_cache, serialized, wal };

struct options {
  std::string arm = "sqlite";
  std::string mode_name = "private";
  int threads = 2;
  double seconds = 2.0;
  std::uint64_t ops = 0;  // per thread; 0: run for `seconds`
  double warmup = 0.5;
  bool memstatus = true;
  std::string dir;  // wal: where its directory is made; empty: $TMPDIR, else /tmp
  mode m = mode::private_db;
  std::string db_file;  // wal: <its directory>/bench.db, set by run() before any connection opens
};

// --- operation latencies ---------------------------------------------------------------------

// The tools' histogram (bench/common/histogram.hpp): exact below 64 ns, then 32 buckets per power
// of two, so a percentile read as its bucket's upper bound is at most 1/32 above the true value.
// Each thread fills its own; they are merged after the run, so the percentiles weigh every
// operation alike.
using spinwise::bench::latency_histogram;

// --- SQLite, thinly ----------------------------------------------------------------------------

struct db_closer {
  void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
};
struct stmt_finalizer {
  void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
};
using db_ptr = std::unique_ptr<sqlite3, db_closer>;
using stmt_ptr = std::unique_ptr<sqlite3_stmt, stmt_finalizer>;

// A failed SQLite call, with what was being done; rc SQLITE_OK: none.
struct sqlite_error {
  int rc = SQLITE_OK;
  std::string what;
  explicit operator bool() const noexcept { return rc != SQLITE_OK; }
};

sqlite_error fail(int rc, const std::string& what, sqlite3* db = nullptr) {
  std::string msg = what + ": " + sqlite3_errstr(rc);
  // On a connection other threads share (serialized), errmsg may be another thread's: the code is
  // this call's, the message a hint.
  if (db != nullptr) msg += std::string(" (") + sqlite3_errmsg(db) + ")";
  return {rc, msg};
}

// SQLITE_LOCKED: a shared-cache table lock; SQLITE_BUSY: WAL's write lock (or a checkpoint), taken
// by another connection. Either is retried after a reset and a yield.
bool held_elsewhere(int rc) noexcept { return (rc & 0xff) == SQLITE_LOCKED || (rc & 0xff) == SQLITE_BUSY; }

int open_flags(mode m) {
  switch (m) {
    case mode::private_db:
      return SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    case mode::shared_cache:
      return SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI |
             SQLITE_OPEN_SHAREDCACHE;
    case mode::serialized:
      return SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
    case mode::wal:
      return SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  }
  return 0;
}

const char* open_flags_text(mode m) {
  switch (m) {
    case mode::private_db:
      return "READWRITE|CREATE|NOMUTEX";
    case mode::shared_cache:
      return "READWRITE|CREATE|NOMUTEX|URI|SHAREDCACHE";
    case mode::serialized:
      return "READWRITE|CREATE|FULLMUTEX";
    case mode::wal:
      return "READWRITE|CREATE|NOMUTEX";
  }
  return "";
}

// The wal mode's database: a file in a directory of its own, made for the run and removed after it
// with whatever SQLite left there (the -wal and -shm files), also when the run fails.
class scratch_dir {
 public:
  scratch_dir() = default;
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  ~scratch_dir() { remove(); }

  // Makes <parent>/spinwise-sqlite-XXXXXX; an empty string on success, else why not.
  std::string make(std::string parent) {
    if (parent.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    }
    std::string templ = parent + "/spinwise-sqlite-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr)
      return "cannot make a directory in " + parent + ": " + std::strerror(errno);
    path_ = templ;
    return {};
  }
  const std::string& path() const noexcept { return path_; }
  // False when the directory is still there (something else was left in it).
  bool remove() noexcept {
    if (path_.empty()) return true;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      ::unlink((path_ + "/bench.db" + suffix).c_str());
    const bool gone = ::rmdir(path_.c_str()) == 0;
    path_.clear();
    return gone;
  }

 private:
  std::string path_;
};

std::string db_name(const options& o) {
  switch (o.m) {
    case mode::shared_cache:
      return kSharedCacheUri;
    case mode::wal:
      return o.db_file;
    default:
      return ":memory:";
  }
}

sqlite_error open_db(const options& o, db_ptr& out) {
  sqlite3* db = nullptr;
  const std::string name = db_name(o);
  const int rc = sqlite3_open_v2(name.c_str(), &db, open_flags(o.m), nullptr);
  out.reset(db);  // sqlite3_open_v2 may hand back a handle on failure too: closed with `out`
  if (rc != SQLITE_OK) return fail(rc, "sqlite3_open_v2 " + name, db);
  return {};
}

// Steps `s` until it is done (or gives a row, with `want_row`), retrying what another connection
// holds (held_elsewhere) after a reset and a yield; counts the retries into `retries`.
int step_retrying(sqlite3_stmt* s, bool want_row, std::uint64_t& retries) {
  for (;;) {
    const int rc = sqlite3_step(s);
    if (!held_elsewhere(rc))
      return (want_row && rc == SQLITE_ROW) || (!want_row && rc == SQLITE_DONE) ? SQLITE_OK : rc;
    sqlite3_reset(s);
    ++retries;
    sched_yield();
  }
}

sqlite_error prepare(sqlite3* db, const char* sql, stmt_ptr& out) {
  for (;;) {
    sqlite3_stmt* s = nullptr;
    const int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr);
    out.reset(s);
    if (rc == SQLITE_OK) return {};
    if (!held_elsewhere(rc)) return fail(rc, std::string("prepare ") + sql, db);
    sched_yield();  // the schema's table lock, held by a writer of the shared cache (or WAL's lock)
  }
}

sqlite_error exec(sqlite3* db, const char* sql) {
  std::uint64_t retries = 0;
  stmt_ptr s;
  if (sqlite_error e = prepare(db, sql, s)) return e;
  const int rc = step_retrying(s.get(), false, retries);
  return rc == SQLITE_OK ? sqlite_error{} : fail(rc, sql, db);
}

// A PRAGMA that answers one row: sets `answer` to its first column ("" when it gives no row).
sqlite_error pragma(sqlite3* db, const char* sql, std::string& answer) {
  stmt_ptr s;
  if (sqlite_error e = prepare(db, sql, s)) return e;
  answer.clear();
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s.get(), 0));
    if (answer.empty() && text != nullptr) answer = text;
  }
  return rc == SQLITE_DONE ? sqlite_error{} : fail(rc, sql, db);
}

// What every wal connection runs first: commits that write the WAL without an fsync each (the
// checkpoints still sync), SQLite's advice for WAL.
sqlite_error wal_connection(sqlite3* db) {
  std::string answer;
  return pragma(db, "PRAGMA synchronous=NORMAL", answer);
}

// SELECT COUNT(*) and PRAGMA integrity_check of the table, after the run.
struct table_check {
  std::int64_t rows = -1;
  std::string integrity;  // "ok", or integrity_check's first lines
  sqlite_error error;
};

table_check check_table(sqlite3* db) {
  table_check c;
  std::uint64_t retries = 0;
  stmt_ptr count;
  if ((c.error = prepare(db, "SELECT COUNT(*) FROM t", count))) return c;
  if (int rc = step_retrying(count.get(), true, retries); rc != SQLITE_OK) {
    c.error = fail(rc, "SELECT COUNT(*)", db);
    return c;
  }
  c.rows = sqlite3_column_int64(count.get(), 0);
  stmt_ptr check;
  if ((c.error = prepare(db, "PRAGMA integrity_check", check))) return c;
  int rc;
  int lines = 0;
  while ((rc = sqlite3_step(check.get())) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(check.get(), 0));
    if (lines++ < 5) c.integrity += (c.integrity.empty() ? "" : "; ") + std::string(text ? text : "(null)");
  }
  if (rc != SQLITE_DONE) c.error = fail(rc, "PRAGMA integrity_check", db);
  return c;
}

// --- installing the arm's mutexes --------------------------------------------------------------

struct mutex_setup {
  std::string mutexes;         // "sqlite" or "spinwise <kind>"
  bool methods_saved = false;  // SQLITE_CONFIG_GETMUTEX gave a complete table (kept, for the sqlite arm)
  std::string methods_from;    // the object file that holds the xMutexEnter in place at initialize
  sqlite_error error;
};

std::string object_of(const void* function) {
  Dl_info info{};
  if (function == nullptr || dladdr(function, &info) == 0 || info.dli_fname == nullptr) return "unknown";
  char path[PATH_MAX];
  return realpath(info.dli_fname, path) != nullptr ? path : info.dli_fname;
}

sqlite3_mutex_methods current_methods(int& rc) {
  sqlite3_mutex_methods m{};
  rc = sqlite3_config(SQLITE_CONFIG_GETMUTEX, &m);
  return m;
}

mutex_setup install_arm(const options& o) {
  mutex_setup s;
  // SQLite fills in its own methods at its first initialize; before it GETMUTEX reads an empty
  // table. Initialize and shut down once, in every arm alike, to read what SQLite would use.
  if (int rc = sqlite3_initialize(); rc != SQLITE_OK) {
    s.error = fail(rc, "sqlite3_initialize (first)");
    return s;
  }
  if (int rc = sqlite3_shutdown(); rc != SQLITE_OK) {
    s.error = fail(rc, "sqlite3_shutdown");
    return s;
  }
  int rc = SQLITE_OK;
  const sqlite3_mutex_methods own = current_methods(rc);
  if (rc != SQLITE_OK) {
    s.error = fail(rc, "sqlite3_config(SQLITE_CONFIG_GETMUTEX)");
    return s;
  }
  if (o.arm == "sqlite") {
    // Saved and left installed: SQLite initializes with the table it already holds.
    s.mutexes = "sqlite";
    s.methods_saved = own.xMutexAlloc != nullptr && own.xMutexEnter != nullptr && own.xMutexLeave != nullptr;
    s.methods_from = object_of(reinterpret_cast<const void*>(own.xMutexEnter));
  } else {
    if (int irc = spinwise_sqlite_install(o.arm.c_str()); irc != SQLITE_OK) {
      s.error = {irc, std::string("spinwise_sqlite_install: ") + spinwise_sqlite_message()};
      return s;
    }
    s.mutexes = std::string("spinwise ") + o.arm;
    const sqlite3_mutex_methods now = current_methods(rc);
    s.methods_from = rc == SQLITE_OK ? object_of(reinterpret_cast<const void*>(now.xMutexEnter)) : "unknown";
  }
  if (int mrc = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, o.memstatus ? 1 : 0); mrc != SQLITE_OK) {
    s.error = fail(mrc, "sqlite3_config(SQLITE_CONFIG_MEMSTATUS)");
    return s;
  }
  if (int irc = sqlite3_initialize(); irc != SQLITE_OK) {
    s.error = fail(irc, "sqlite3_initialize");
    return s;
  }
  // What SQLite runs on now, as spinwise::sqlite knows it: nullptr is SQLite's own.
  const char* kind = spinwise_sqlite_kind();
  const std::string running = kind == nullptr ? "sqlite" : std::string("spinwise ") + kind;
  if (running != s.mutexes) s.error = {SQLITE_ERROR, "asked for " + s.mutexes + ", running on " + running};
  return s;
}

// --- the run -----------------------------------------------------------------------------------

// The run's phases, advanced by the main thread. Threads poll it: at the top of every operation,
// and every millisecond while they wait between phases.
enum run_phase : int { kSetup, kWarmup, kMeasure, kStop, kFinish };

struct shared_state {
  std::atomic<int> phase{kSetup};
  std::atomic<int> ready{0};    // threads set up (connection, statements)
  std::atomic<int> stopped{0};  // threads out of the measured loop
};

// What one thread did; padded so that no two threads' counters share a line.
struct alignas(spinwise::kCacheLinePad) thread_result {
  std::uint64_t ops = 0;             // in the measured window
  std::uint64_t inserts = 0;         // every successful INSERT, warm-up included (the row count)
  std::uint64_t locked_retries = 0;  // in the measured window
  std::uint64_t select_misses = 0;   // a SELECT that did not find its row, or found another
  latency_histogram latency;
  sqlite_error error;
  std::optional<table_check> check;  // private mode: its own database's
};

void wait_for(const shared_state& st, int p) {
  while (st.phase.load(std::memory_order_acquire) < p)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// One 64-bit xorshift step: the SELECT's key choice, cheap and the same in every arm.
std::uint64_t next_random(std::uint64_t& x) noexcept {
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}

class worker {
 public:
  worker(const options& o, int index, sqlite3* shared_db, shared_state& st, thread_result& r)
      : o_(o), index_(index), db_(shared_db), st_(st), r_(r), rng_(0x9e3779b97f4a7c15ULL * (index + 1)) {}

  void run() {
    r_.error = set_up();
    st_.ready.fetch_add(1, std::memory_order_acq_rel);
    wait_for(st_, kWarmup);
    if (!r_.error) loop();
    st_.stopped.fetch_add(1, std::memory_order_acq_rel);
    wait_for(st_, kFinish);
    insert_.reset();
    select_.reset();
    if (o_.m == mode::private_db && !r_.error) r_.check = check_table(db_);
    own_.reset();
  }

 private:
  sqlite_error set_up() {
    if (o_.m != mode::serialized) {
      if (sqlite_error e = open_db(o_, own_)) return e;
      db_ = own_.get();
    }
    if (o_.m == mode::wal) {
      if (sqlite_error e = wal_connection(db_)) return e;
    }
    if (o_.m == mode::private_db) {
      if (sqlite_error e = exec(db_, "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)")) return e;
    }
    if (sqlite_error e = prepare(db_, "INSERT INTO t(k, v) VALUES(?1, ?2)", insert_)) return e;
    return prepare(db_, "SELECT v FROM t WHERE k = ?1", select_);
  }

  std::int64_t key(std::uint64_t n) const noexcept {
    return static_cast<std::int64_t>((static_cast<std::uint64_t>(index_) + 1) << kKeyShift | n);
  }

  // The row's value names its key, so that a SELECT can tell its row from another.
  void fill_value(std::int64_t k) noexcept {
    for (int i = 0; i < kValueBytes; i += 8) std::memcpy(value_ + i, &k, 8);
  }

  void loop() {
    std::uint64_t retries = 0;
    for (;;) {
      const int p = st_.phase.load(std::memory_order_acquire);
      if (p >= kStop || (o_.ops != 0 && p == kMeasure && r_.ops >= o_.ops)) return;
      const bool measured = p == kMeasure;
      const auto t0 = clock_type::now();
      if (sqlite_error e = operation(retries)) {
        r_.error = e;
        return;
      }
      if (measured) {
        r_.latency.record(static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now() - t0).count()));
        ++r_.ops;
        r_.locked_retries += retries;
      }
      retries = 0;
    }
  }

  // INSERT a new row, then SELECT one this thread inserted before (or just now).
  sqlite_error operation(std::uint64_t& retries) {
    const std::int64_t k = key(r_.inserts);
    fill_value(k);
    sqlite3_bind_int64(insert_.get(), 1, k);
    sqlite3_bind_blob(insert_.get(), 2, value_, kValueBytes, SQLITE_STATIC);
    int rc = step_retrying(insert_.get(), false, retries);
    sqlite3_reset(insert_.get());
    if (rc != SQLITE_OK) return fail(rc, "INSERT", db_);
    ++r_.inserts;

    const std::int64_t want = key(next_random(rng_) % r_.inserts);
    sqlite3_bind_int64(select_.get(), 1, want);
    rc = step_retrying(select_.get(), true, retries);
    if (rc == SQLITE_OK) {
      const void* v = sqlite3_column_blob(select_.get(), 0);
      std::int64_t got = 0;
      if (v != nullptr && sqlite3_column_bytes(select_.get(), 0) == kValueBytes) std::memcpy(&got, v, 8);
      if (got != want) ++r_.select_misses;
    } else if (rc == SQLITE_DONE) {
      ++r_.select_misses;
      rc = SQLITE_OK;
    }
    sqlite3_reset(select_.get());
    return rc == SQLITE_OK ? sqlite_error{} : fail(rc, "SELECT", db_);
  }

  const options& o_;
  const int index_;
  sqlite3* db_;  // the shared connection (serialized), else own_'s
  db_ptr own_;
  stmt_ptr insert_, select_;
  shared_state& st_;
  thread_result& r_;
  std::uint64_t rng_;
  unsigned char value_[kValueBytes] = {};
};

// The statistics of spinwise's SQLite classes that counted an acquisition in the window (a class
// SQLite allocated a mutex of but did not enter there, such as sqlite.recursive under NOMUTEX, is
// left out; the process has no other classes, but say so).
spinwise::stats_snapshot sqlite_classes(spinwise::stats_snapshot s) {
  s.classes.erase(std::remove_if(s.classes.begin(), s.classes.end(),
                                 [](const spinwise::lock_class_stats& c) {
                                   return c.name.compare(0, kClassPrefix.size(), kClassPrefix) != 0 ||
                                          c.totals.acquisitions == 0;
                                 }),
                  s.classes.end());
  return s;
}

double seconds_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct process_usage {
  std::uint64_t cpu_ns = 0;
  long voluntary = 0, involuntary = 0;  // context switches, every thread of the process
};

process_usage usage_now() {
  process_usage u;
  u.cpu_ns = spinwise::detail::process_cpu_ns();
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) == 0) {
    u.voluntary = ru.ru_nvcsw;
    u.involuntary = ru.ru_nivcsw;
  }
  return u;
}

const char* mode_name(mode m) {
  switch (m) {
    case mode::private_db:
      return "private";
    case mode::shared_cache:
      return "shared-cache";
    case mode::serialized:
      return "serialized";
    case mode::wal:
      return "wal";
  }
  return "";
}

int run(options o) {
  json out;
  out["format"] = kFormat;
  out["version"] = kFormatVersion;
  out["arm"] = o.arm;
  out["mode"] = mode_name(o.m);
  out["threads"] = o.threads;
  out["memstatus"] = o.memstatus ? "on" : "off";
  if (o.ops != 0) {
    out["ops_per_thread"] = o.ops;
  } else {
    out["seconds"] = o.seconds;
  }
  out["warmup_s"] = o.warmup;
  const char* knobs = std::getenv("SPINWISE_KNOBS");
  out["knobs"] = knobs != nullptr ? json(knobs) : json(nullptr);  // applied in main()

  spinwise::run_context ctx = spinwise::detect_run_context();
  ctx.relax_ns = spinwise::relax_ns_here();  // the relax the spinwise kinds convert delays with

  std::vector<std::string> failures;
  auto finish = [&](json& doc) {
    doc["ok"] = failures.empty();
    doc["failures"] = failures;
    doc["run"] = json::parse(spinwise::run_context_json(ctx));
    std::puts(doc.dump().c_str());
    return failures.empty() ? 0 : kExitFailed;
  };

  const mutex_setup mx = install_arm(o);
  scratch_dir dir;
  if (o.m == mode::wal) {
    if (std::string why = dir.make(o.dir); !why.empty()) {
      failures.push_back(why);
      return finish(out);
    }
    o.db_file = dir.path() + "/bench.db";
  }
  out["sqlite"] = {{"version", sqlite3_libversion()},
                   {"library", object_of(reinterpret_cast<const void*>(&sqlite3_libversion))},
                   {"threadsafe", sqlite3_threadsafe()},
                   {"mutexes", mx.mutexes},
                   {"mutex_methods_saved", mx.methods_saved},
                   {"mutex_methods_from", mx.methods_from},
                   {"open", db_name(o)},
                   {"open_flags", open_flags_text(o.m)}};
  if (mx.error) {
    failures.push_back(mx.error.what);
    return finish(out);
  }

  // The shared modes' connection, opened and given its table before the threads start: in
  // shared-cache mode it also keeps the in-memory database alive, and runs the checks. In wal mode
  // it turns the file to WAL (persistent: every later connection finds it so).
  db_ptr main_db;
  if (o.m != mode::private_db) {
    sqlite_error e = open_db(o, main_db);
    if (!e && o.m == mode::wal) {
      std::string journal;
      e = pragma(main_db.get(), "PRAGMA journal_mode=WAL", journal);
      if (!e && journal != "wal") e = {SQLITE_ERROR, "PRAGMA journal_mode=WAL answered '" + journal + "'"};
      if (!e) e = wal_connection(main_db.get());
    }
    if (!e) e = exec(main_db.get(), "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)");
    if (e) {
      failures.push_back(e.what);
      return finish(out);
    }
  }

  shared_state st;
  std::vector<thread_result> results(static_cast<std::size_t>(o.threads));
  std::vector<std::thread> threads;
  threads.reserve(results.size());
  for (int i = 0; i < o.threads; ++i) {
    threads.emplace_back(
        [&, i] { worker(o, i, main_db.get(), st, results[static_cast<std::size_t>(i)]).run(); });
  }
  while (st.ready.load(std::memory_order_acquire) < o.threads)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));

  st.phase.store(kWarmup, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup));
  const spinwise::stats_snapshot stats0 = spinwise::take_stats_snapshot();
  const process_usage u0 = usage_now();
  const auto t0 = clock_type::now();
  st.phase.store(kMeasure, std::memory_order_release);
  if (o.ops == 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
    st.phase.store(kStop, std::memory_order_release);
  }
  while (st.stopped.load(std::memory_order_acquire) < o.threads)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  const auto t1 = clock_type::now();
  const process_usage u1 = usage_now();
  const spinwise::stats_snapshot stats1 = spinwise::take_stats_snapshot();
  st.phase.store(kFinish, std::memory_order_release);
  for (std::thread& t : threads) t.join();

  // --- the figures
  latency_histogram latency;
  std::uint64_t ops = 0, inserts = 0, retries = 0, misses = 0;
  std::uint64_t ops_min = UINT64_MAX, ops_max = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const thread_result& r = results[i];
    latency.merge(r.latency);
    ops += r.ops;
    inserts += r.inserts;
    retries += r.locked_retries;
    misses += r.select_misses;
    ops_min = std::min(ops_min, r.ops);
    ops_max = std::max(ops_max, r.ops);
    if (r.error) failures.push_back("thread " + std::to_string(i) + ": " + r.error.what);
  }
  const double wall = seconds_between(t0, t1);
  const double cpu = static_cast<double>(u1.cpu_ns - u0.cpu_ns) * 1e-9;
  const double per_op = ops > 0 ? 1.0 / static_cast<double>(ops) : 0.0;
  out["wall_s"] = wall;
  out["ops"] = ops;
  out["ops_per_s"] = wall > 0 ? static_cast<double>(ops) / wall : 0.0;
  out["ops_per_thread_min"] = ops_min;
  out["ops_per_thread_max"] = ops_max;
  out["latency_ns"] = {{"count", latency.count()},
                       {"p50", latency.percentile(50)},
                       {"p90", latency.percentile(90)},
                       {"p99", latency.percentile(99)},
                       {"p999", latency.percentile(99.9)},
                       {"max", latency.max()},
                       {"bounds", "upper bounds of 1/32-octave buckets: at most 3.2% above"}};
  out["cpu_s"] = cpu;
  out["cpu_ns_per_op"] = cpu * 1e9 * per_op;
  out["cpus_busy"] = wall > 0 ? cpu / wall : 0.0;
  out["voluntary_ctx_switches_per_op"] = static_cast<double>(u1.voluntary - u0.voluntary) * per_op;
  out["involuntary_ctx_switches_per_op"] = static_cast<double>(u1.involuntary - u0.involuntary) * per_op;
  out["locked_retries"] = retries;
  out["locked_retries_per_op"] = static_cast<double>(retries) * per_op;
  if (ops == 0) failures.push_back("no operation ran in the measured window");

  // --- the checks: every row there, the database sound
  std::int64_t rows = 0;
  std::string integrity = "ok";
  if (o.m == mode::private_db) {
    for (std::size_t i = 0; i < results.size(); ++i) {
      const std::optional<table_check>& c = results[i].check;
      if (!c) {
        integrity = "not checked";
        continue;
      }
      if (c->error) failures.push_back("thread " + std::to_string(i) + ": " + c->error.what);
      rows += std::max<std::int64_t>(c->rows, 0);
      if (c->integrity != "ok" && integrity == "ok")
        integrity = "thread " + std::to_string(i) + ": " + c->integrity;
    }
  } else {
    const table_check c = check_table(main_db.get());
    if (c.error) failures.push_back(c.error.what);
    rows = c.rows;
    integrity = c.integrity;
  }
  main_db.reset();
  if (o.m == mode::wal) {
    const std::string where = dir.path();
    if (!dir.remove()) failures.push_back("could not remove " + where + ": " + std::strerror(errno));
  }
  if (rows != static_cast<std::int64_t>(inserts)) {
    failures.push_back("rows counted " + std::to_string(rows) + " != inserts done " +
                       std::to_string(inserts));
  }
  if (integrity != "ok") failures.push_back("integrity_check: " + integrity);
  if (misses != 0) failures.push_back(std::to_string(misses) + " SELECTs did not find their row");
  out["check"] = {
      {"inserts", inserts}, {"rows_counted", rows}, {"integrity", integrity}, {"select_misses", misses}};

  // --- spinwise's statistics of SQLite's mutexes (a spinwise arm counts every acquisition)
  if (o.arm == "sqlite") {
    out["spinwise_stats"] = nullptr;
  } else {
    const spinwise::stats_snapshot d = sqlite_classes(spinwise::diff_stats(stats0, stats1));
    std::uint64_t acquisitions = 0;
    for (const spinwise::lock_class_stats& c : d.classes) acquisitions += c.totals.acquisitions;
    if (acquisitions == 0)
      failures.push_back("a spinwise arm, but no acquisition counted in any sqlite.* class");
    out["spinwise_stats"] = json::parse(spinwise::format_stats_json(d));
  }
  return finish(out);
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  std::string memstatus = "on";
  CLI::App app{
      "spinwise-sqlite-bench: a real libsqlite3 under N threads, on SQLite's own mutexes or on "
      "spinwise's; one JSON line (bench/engines/sqlite/run.sh runs the arms side by side)"};
  app.add_option("--arm", o.arm, "whose mutexes: sqlite (SQLite's own) or a spinwise kind")
      ->check(CLI::IsMember({"sqlite", "hybrid", "adaptive", "ttas", "ticket", "tas", "mcs"}))
      ->capture_default_str();
  app.add_option("--mode", o.mode_name, "private, shared-cache, serialized or wal")
      ->check(CLI::IsMember({"private", "shared-cache", "serialized", "wal"}))
      ->capture_default_str();
  app.add_option("--dir", o.dir, "wal: where the database's directory is made (default $TMPDIR, else /tmp)");
  app.add_option("--threads", o.threads, "threads")->check(CLI::Range(1, 1024))->capture_default_str();
  auto* seconds = app.add_option("--seconds", o.seconds, "length of the measured window")
                      ->check(CLI::Range(0.01, 3600.0))
                      ->capture_default_str();
  app.add_option("--ops", o.ops, "instead of --seconds: operations per thread in the window")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 32))
      ->excludes(seconds);
  app.add_option("--warmup", o.warmup, "seconds of load before the window")
      ->check(CLI::Range(0.0, 600.0))
      ->capture_default_str();
  app.add_option("--memstatus", memstatus, "SQLITE_CONFIG_MEMSTATUS: on (SQLite's default) or off")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints help, or the error and a hint
    return e.get_exit_code() == 0 ? rc : kExitUsage;
  }
  // SPINWISE_PROFILE, SPINWISE_KNOBS and SPINWISE_RELAX, as an engine applies them: a spinwise
  // arm runs with the knobs given (hybrid_mutex.spin_loops=..., for example). One that fails to
  // apply stops the run rather than measuring the defaults under another name.
  if (const spinwise::startup_status st = spinwise::configure_from_env(); !st.ok()) {
    std::fprintf(stderr, "spinwise-sqlite-bench: %s\n", st.message().c_str());
    return kExitUsage;
  }
  o.memstatus = memstatus == "on";
  o.m = o.mode_name == "private"        ? mode::private_db
        : o.mode_name == "shared-cache" ? mode::shared_cache
        : o.mode_name == "wal"          ? mode::wal
                                        : mode::serialized;
  return run(o);
}
