// spinwise-stress: replays the statistics-latch incident and the hot-page latch (see workload.hpp,
// README.md "spinwise-stress: replaying the incident").
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.hpp"
#include "report.hpp"
#include "session.hpp"
#include "spinwise/runtime/atomic_file.hpp"
#include "spinwise/runtime/stats_report.hpp"
#include "stuck_watch.hpp"
#include "sweep.hpp"

namespace {

using namespace spinwise::stress;

// Writes `text` to `path` ("-" = stdout). Returns false with a message on stderr when it cannot.
bool write_to(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text << std::flush;
    return true;
  }
  std::string why;
  if (!spinwise::write_file_atomically(path, text, &why)) {
    std::fprintf(stderr, "spinwise-stress: error: %s\n", why.c_str());
    return false;
  }
  return true;
}

std::string join_dir(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

// Where the run's files go: the flags' paths, and for a sweep sweep-<scenario>.* in --out-dir
// for those not named.
struct output_paths {
  std::string json, csv, png, metrics;
};

output_paths outputs_of(const cli_options& o) {
  output_paths p{o.json_path, o.csv_path, o.png_path, o.metrics_path};
  if (o.sweep) {
    const std::string base = "sweep-" + std::string(to_string(o.workload.sc));
    if (p.json.empty()) p.json = join_dir(o.out_dir, base + ".json");
    if (p.csv.empty()) p.csv = join_dir(o.out_dir, base + ".csv");
    if (p.png.empty()) p.png = join_dir(o.out_dir, base + ".png");
  }
  return p;
}

// "" when every output can be written, else why not: checked before anything runs, so that a sweep
// of minutes is not lost to a typo in a path. --out-dir is created (as mkdir -p would).
std::string unwritable(const output_paths& p, const std::string& out_dir) {
  if (!out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) return "cannot create --out-dir " + out_dir + ": " + ec.message();
  }
  for (const std::string* f : {&p.json, &p.csv, &p.png, &p.metrics}) {
    if (f->empty() || *f == "-") continue;
    std::filesystem::path dir = std::filesystem::path(*f).parent_path();
    if (dir.empty()) dir = ".";
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      return "cannot write " + *f + ": " + dir.string() + ": " + (ec ? ec.message() : "Not a directory") +
             " (nothing was run)";
    }
    if (::access(dir.c_str(), W_OK) != 0) {
      return "cannot write " + *f + ": " + dir.string() + ": " + std::strerror(errno) + " (nothing was run)";
    }
  }
  return "";
}

// The sweep's grid, for the JSON document beside its runs; says how long the sweep will take.
nlohmann::json sweep_grid(const cli_options& o, std::ostream& human) {
  const std::vector<sweep_point> pts = sweep_points(o.sweep_opts);
  human << "sweep: " << pts.size() << " points x " << o.sweep_opts.repeat << " runs x "
        << o.workload.duration_s << " s = about "
        << static_cast<long>(pts.size() * o.sweep_opts.repeat * o.workload.duration_s + 0.5) << " s"
        << (o.sweep_opts.repeat > 1 ? ", points interleaved " + order_name({o.repeat, o.order_seed}) : "")
        << "\n";
  return {{"delays", o.sweep_opts.delays},
          {"time_policy_delay", o.sweep_opts.time_delay},
          {"time_policy_unit_ns", o.sweep_opts.unit_ns},
          {"repeat", o.sweep_opts.repeat}};
}

bool plot_sweep(const cli_options& o, const std::vector<run_result>& runs, const output_paths& p,
                std::ostream& human) {
  const spinwise::run_context m = this_run();
  const std::string title = "spinwise-stress " + std::string(to_string(o.workload.sc)) + ", " +
                            o.workload.lock.lock + ", " + std::to_string(o.workload.threads) +
                            " threads on " + std::to_string(m.cpus_allowed) + " CPUs (" +
                            m.machine.cpu_model + "), " + m.date.substr(0, 10);
  const std::string err = render_png(runs, p.png, title);
  if (!err.empty()) {
    std::fprintf(stderr, "spinwise-stress: error: no plot: %s\n", err.c_str());
    return false;
  }
  human << "wrote " << p.csv << ", " << p.json << ", " << p.png << "\n";
  return true;
}

// A run whose accounting does not close is a bug in the tool or the lock: say so, and fail.
bool accounting_closes(const std::vector<run_result>& runs) {
  bool ok = true;
  for (const run_result& r : runs) {
    if (r.double_executed || r.missing || r.exclusion_errors) {
      std::fprintf(
          stderr, "spinwise-stress: error: accounting broken (double %llu, missing %llu, exclusion %llu)\n",
          static_cast<unsigned long long>(r.double_executed), static_cast<unsigned long long>(r.missing),
          static_cast<unsigned long long>(r.exclusion_errors));
      ok = false;
    }
  }
  return ok;
}

int run(const cli_options& o) {
  const bool stdout_taken = o.json_path == "-" || o.csv_path == "-" || o.metrics_path == "-";
  std::ostream& human = stdout_taken ? std::cerr : std::cout;
  const output_paths paths = outputs_of(o);
  session s = plan_session(o);
  if (o.dry_run) {
    std::cout << plan_text(s.plan, s.settings, s.order);
    return 0;
  }
  if (const std::string why = unwritable(paths, o.out_dir); !why.empty()) {
    std::fprintf(stderr, "spinwise-stress: error: %s\n", why.c_str());
    return 2;
  }
  nlohmann::json extra = nlohmann::json::object();
  if (o.sweep) extra["sweep"] = sweep_grid(o, human);
  std::optional<stuck_watch> watch;  // before the first run builds its latches (stuck_watch.hpp)
  if (o.stuck_after_ms > 0) watch.emplace(o.stuck_after_ms, !o.quiet);
  run_session(s, o, run_workload, human);
  if (watch) {
    watch->stop();  // before the outputs: no report arrives while they are written
    const std::vector<spinwise::stuck_wait_report> reports = watch->reports();
    extra["stuck_reports"] = stuck_reports_json(reports);
    if (!o.quiet) {
      human << "stuck waits reported: " << reports.size() << " (waits of " << o.stuck_after_ms
            << " ms or more, --stuck-after-ms)\n"
            << std::flush;
    }
  }

  bool ok = true;
  if (!paths.json.empty()) ok &= write_to(paths.json, session_document(s, extra).dump(2) + "\n");
  if (!paths.csv.empty()) ok &= write_to(paths.csv, session_csv(s));
  if (o.sweep) ok &= plot_sweep(o, s.runs, paths, human);
  if (!paths.metrics.empty())
    ok &= write_to(paths.metrics, spinwise::format_stats_prometheus(spinwise::take_stats_snapshot()));
  ok &= accounting_closes(s.runs);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const parse_outcome p = parse_cli(argc, argv);
  if (!p.run) {
    std::fputs(p.message.c_str(), p.exit_code == 0 ? stdout : stderr);
    return p.exit_code;
  }
  try {
    return run(p.options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spinwise-stress: error: %s\n", e.what());
    return 1;
  }
}
