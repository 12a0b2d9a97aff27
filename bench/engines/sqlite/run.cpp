// The run (options.hpp's run()): the JSON line's head, the arm's mutexes, the shared modes'
// connection and table, the threads through their phases (set-up, warm-up, the measured window,
// stop, finish), then the report (report.hpp) and the line printed.
#include <sqlite3.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "arm.hpp"
#include "db.hpp"
#include "options.hpp"
#include "report.hpp"
#include "spinwise/relax_table.hpp"
#include "spinwise/runtime/run_context.hpp"
#include "workload.hpp"

namespace spinwise::sqlite_bench {
namespace {

constexpr const char* kFormat = "spinwise.sqlite_bench";
constexpr int kFormatVersion = 1;

}  // namespace

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
  for (int i = 0; i < o.threads; ++i)
    threads.emplace_back(
        [&, i] { run_thread(o, i, main_db.get(), st, results[static_cast<std::size_t>(i)]); });
  while (st.ready.load(std::memory_order_acquire) < o.threads)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));

  st.phase.store(kWarmup, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup));
  window w;
  w.stats0 = spinwise::take_stats_snapshot();
  w.u0 = usage_now();
  w.t0 = clock_type::now();
  st.phase.store(kMeasure, std::memory_order_release);
  if (o.ops == 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
    st.phase.store(kStop, std::memory_order_release);
  }
  while (st.stopped.load(std::memory_order_acquire) < o.threads)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  w.t1 = clock_type::now();
  w.u1 = usage_now();
  w.stats1 = spinwise::take_stats_snapshot();
  st.phase.store(kFinish, std::memory_order_release);
  for (std::thread& t : threads) t.join();

  const totals done = add_figures(out, results, w, failures);
  const rows_check rows = check_rows(o.m, results, main_db.get(), failures);
  main_db.reset();
  if (o.m == mode::wal) {
    const std::string where = dir.path();
    if (!dir.remove()) failures.push_back("could not remove " + where + ": " + std::strerror(errno));
  }
  add_checks(out, done, rows, failures);
  add_spinwise_stats(out, o, w, failures);
  return finish(out);
}

}  // namespace spinwise::sqlite_bench
