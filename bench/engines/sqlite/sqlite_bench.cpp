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
//
// This file parses the options; the rest is split by job: options.hpp (the options, the exit
// codes), db.{hpp,cpp} (SQLite, thinly), arm.{hpp,cpp} (installing the arm's mutexes),
// workload.{hpp,cpp} (a thread and its operation), run.cpp (the run's phases) and report.{hpp,cpp}
// (the figures, the checks and spinwise's statistics in the JSON line).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <string>

#include "options.hpp"
#include "spinwise/runtime/knob_config.hpp"

int main(int argc, char** argv) {
  using namespace spinwise::sqlite_bench;
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
