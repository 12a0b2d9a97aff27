// spinwise-stress: replays the statistics-latch incident and the hot-page latch (see workload.hpp,
// README.md "spinwise-stress: replaying the incident").
#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.hpp"
#include "report.hpp"
#include "sweep.hpp"

namespace {

using namespace spinwise::stress;

// Writes `text` to `path` ("-" = stdout). Returns false with a message on stderr when it cannot.
bool write_to(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text << std::flush;
    return true;
  }
  std::ofstream f(path);
  f << text;
  f.close();
  if (!f) {
    std::fprintf(stderr, "spinwise-stress: error: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

std::string csv_of(const std::vector<run_result>& runs) {
  std::string s = csv_header() + "\n";
  for (const run_result& r : runs) s += csv_row(r) + "\n";
  return s;
}

std::string join_dir(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

int run(const cli_options& o) {
  const bool stdout_taken = o.json_path == "-" || o.csv_path == "-";
  std::ostream& human = stdout_taken ? std::cerr : std::cout;
  std::vector<run_result> runs;
  nlohmann::json extra = nlohmann::json::object();
  std::string json_path = o.json_path, csv_path = o.csv_path, png_path = o.png_path;

  if (o.sweep) {
    const std::string base = "sweep-" + std::string(to_string(o.workload.sc));
    if (json_path.empty()) json_path = join_dir(o.out_dir, base + ".json");
    if (csv_path.empty()) csv_path = join_dir(o.out_dir, base + ".csv");
    if (png_path.empty()) png_path = join_dir(o.out_dir, base + ".png");
    const std::vector<sweep_point> pts = sweep_points(o.sweep_opts);
    human << "sweep: " << pts.size() << " points x " << o.sweep_opts.repeat << " runs x " << o.workload.duration_s
          << " s = about " << static_cast<long>(pts.size() * o.sweep_opts.repeat * o.workload.duration_s + 0.5)
          << " s\n";
    runs = run_sweep(o.workload, o.sweep_opts, human);
    extra["sweep"] = {{"delays", o.sweep_opts.delays},
                      {"time_policy_delay", o.sweep_opts.time_delay},
                      {"time_policy_unit_ns", o.sweep_opts.unit_ns},
                      {"repeat", o.sweep_opts.repeat}};
  } else {
    runs.push_back(run_workload(o.workload));
    if (!o.quiet) human << format_run(runs.back());
  }

  bool ok = true;
  if (!json_path.empty()) ok &= write_to(json_path, make_document(runs, extra).dump(2) + "\n");
  if (!csv_path.empty()) ok &= write_to(csv_path, csv_of(runs));
  if (o.sweep) {
    const machine_info m = this_machine();
    const std::string title = "spinwise-stress " + std::string(to_string(o.workload.sc)) + ", " +
                              o.workload.lock.lock + ", " + std::to_string(o.workload.threads) + " threads on " +
                              std::to_string(m.cpus) + " CPUs (" + m.cpu_model + "), " + m.date.substr(0, 10);
    const std::string err = render_png(runs, png_path, title);
    if (!err.empty()) {
      std::fprintf(stderr, "spinwise-stress: error: no plot: %s\n", err.c_str());
      ok = false;
    } else {
      human << "wrote " << csv_path << ", " << json_path << ", " << png_path << "\n";
    }
  }
  for (const run_result& r : runs) {
    if (r.double_executed || r.missing || r.exclusion_errors) {
      std::fprintf(stderr, "spinwise-stress: error: accounting broken (double %llu, missing %llu, exclusion %llu)\n",
                   static_cast<unsigned long long>(r.double_executed), static_cast<unsigned long long>(r.missing),
                   static_cast<unsigned long long>(r.exclusion_errors));
      ok = false;
    }
  }
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
