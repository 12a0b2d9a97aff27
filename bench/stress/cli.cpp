#include "cli.hpp"

#include <CLI/CLI.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "spinwise/knob_text.hpp"
#include "spinwise/runtime/lock_watch.hpp"
#include "spinwise/version.hpp"

namespace spinwise::stress {

namespace {

constexpr const char* kDescription =
    "spinwise-stress: replays the MySQL statistics-latch incident (stats-lock) and the SQL Server\n"
    "last-page latch hot spot (hot-page) against a spinwise lock, on this CPU or an emulated one.\n"
    "Defaults follow the incidents; docs/stress.md, \"Defaults, and why each follows the incident\", says "
    "why each does.";

std::string list_locks_text() {
  std::ostringstream o;
  o << "locks (policies; the first is the default):\n";
  for (const lock_info& i : lock_catalog()) {
    o << "  " << i.name << (i.shared ? "  [shared]" : "") << "  (";
    for (std::size_t k = 0; k < i.policies.size(); ++k) o << (k ? ", " : "") << to_string(i.policies[k]);
    o << ")\n";
  }
  return o.str();
}

// A flag's whole number of ms in 1..max; else std::invalid_argument naming the flag and the text.
std::uint32_t ms_in_range(const char* flag, const std::string& text, std::uint32_t max) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v < 1 || v > max) {
    throw std::invalid_argument(std::string(flag) + " must be a whole number in 1.." + std::to_string(max) +
                                " (ms), got '" + text + "'");
  }
  return static_cast<std::uint32_t>(v);
}

}  // namespace

// The flags of one command line. `onto_base`: a --compare setting's flags follow the base's, and a
// flag given in both takes the setting's value. `repeat_given`: whether --repeat was.
static parse_outcome parse_flags(int argc, const char* const* argv, bool onto_base, bool* repeat_given) {
  parse_outcome out;
  cli_options& o = out.options;
  workload_config& w = o.workload;

  CLI::App app{kDescription, "spinwise-stress"};
  if (onto_base) app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.get_formatter()->column_width(34);
  app.set_version_flag("--version", "spinwise-stress " + std::string(kVersion), "print the version and exit");
  std::string scenario_s = "stats-lock", policy_s, cpu_s, sweep_cpus_s;
  std::uint32_t delay = 0, mult = 0, loops = 0, unit = 0;
  double duration = w.duration_s, warmup = -1;

  app.add_option("--scenario", scenario_s,
                 "stats-lock (the MySQL incident) or hot-page (SQL Server hot page)")
      ->capture_default_str();
  app.add_option("--lock", w.lock.lock,
                 "lock under test (--list-locks); default hybrid_mutex (stats-lock), sx_lock (hot-page)");
  auto* o_policy = app.add_option("--policy", policy_s,
                                  "wait policy: innodb, time, exp_backoff, no_backoff, adaptive (default: "
                                  "the lock's library default, --list-locks)");
  auto* o_delay =
      app.add_option("--spin-wait-delay", delay, "innodb/time: delay per round is [0, this) units (6)");
  auto* o_mult = app.add_option("--pause-multiplier", mult, "innodb: relaxes per delay unit (50)");
  auto* o_loops = app.add_option("--spin-loops", loops, "spin rounds before yield and park (innodb/time 30)");
  auto* o_unit = app.add_option("--delay-unit-ns", unit,
                                "time policy: one delay unit in ns (200); implies --policy time");
  auto* o_relax = app.add_option("--relax-ns", w.relax_ns, "emulate a relax instruction of this many ns");
  auto* o_cpu =
      app.add_option("--cpu-model", cpu_s,
                     "emulate this CPU's relax: broadwell (10 cycles at 3 GHz), skylake (140), native");
  o_relax->excludes(o_cpu);
  app.add_option(
         "--relax-drift", w.relax_drift,
         "the emulated relax's cost wanders in [1, this] x nominal, a new level every 2-5 ms from --seed; "
         "the time policies still convert at the nominal length (1 = off)")
      ->capture_default_str();
  app.add_option("--threads", w.threads,
                 "worker threads (default 12.5 per CPU, the incident's 100 on 8 cores)");
  app.add_option("--fanout", w.fanout,
                 "sub-queries per request (stats-lock 256, as in the incident; hot-page 1)");
  app.add_option("--clients", w.clients,
                 "closed-loop clients (stats-lock 1: one burst at a time; hot-page 100 users)");
  app.add_option("--duration", duration, "seconds per run, warm-up included")->capture_default_str();
  app.add_option("--warmup", warmup, "seconds not measured at the start (default min(1, duration/5))");
  app.add_option(
         "--min-requests", w.min_requests,
         "the window goes on past --duration until it has counted this many requests (0: a fixed time)")
      ->capture_default_str();
  app.add_option("--max-duration", w.max_duration_s,
                 "seconds a run may last for --min-requests, warm-up included (default 3 x --duration)");
  app.add_option("--calibrate-ms", w.calibrate_ms,
                 "calibrate the work loop over this many ms, once per process (0: a 0.1 ms snapshot)")
      ->capture_default_str();
  app.add_option("--seed", w.seed, "seed of the workload's and the spin jitter's generators")
      ->capture_default_str();
  app.add_option("--work-before-ns", w.work_before_ns, "CPU work before taking the latch")
      ->capture_default_str();
  app.add_option("--cs-ns", w.cs_ns, "critical section: CPU work while holding the latch")
      ->capture_default_str();
  app.add_option("--work-after-ns", w.work_after_ns, "CPU work after releasing the latch")
      ->capture_default_str();
  app.add_option("--inserts", w.inserts, "hot-page: inserts per transaction (last page, X)")
      ->capture_default_str();
  app.add_option("--updates", w.updates, "hot-page: updates per transaction (random page, X)")
      ->capture_default_str();
  app.add_option("--selects", w.selects, "hot-page: selects per transaction (random page, S)")
      ->capture_default_str();
  app.add_option("--rows-per-page", w.rows_per_page, "hot-page: inserts before the last page moves on")
      ->capture_default_str();
  app.add_option("--pages", w.pages, "hot-page: pages (each with its own latch)")->capture_default_str();
  app.add_option("--sample-ms", w.sample_ms, "running-thread sampling period")->capture_default_str();
  // Text, so that a bad value, out of range or no number, gets one message (ms_in_range).
  std::string stall_ms, stuck_ms;
  auto* o_stall = app.add_option("--stall-holder-ms", stall_ms,
                                 "fault, once per run: the first latch acquisition after the middle of "
                                 "the planned window ((warmup + duration) / 2 s into the run) keeps its "
                                 "latch this many ms longer, asleep; 1..600000");
  auto* o_stuck = app.add_option("--stuck-after-ms", stuck_ms,
                                 "track the stress locks' holders and waiters and report each wait that "
                                 "lasts this long (one line on stderr unless --quiet; the JSON's "
                                 "stuck_reports); sites: hybrid_mutex, hybrid_shared_mutex, sx_lock; the "
                                 "std locks are not tracked; 1..86400000");
  for (auto* opt : {o_stall, o_stuck}) opt->type_name("MS");
  app.add_option("--json", o.json_path, "write the run(s) as JSON to this file (- for stdout)");
  app.add_option("--csv", o.csv_path, "write the run(s) as CSV to this file (- for stdout)");
  app.add_option(
      "--metrics", o.metrics_path,
      "write the lock statistics at the end, in the Prometheus text exposition format, to this file "
      "(- for stdout): every class of the process, cumulative over its runs");
  app.add_option("--png", o.png_path, "sweep: write the plot here (needs gnuplot)");
  app.add_option("--out-dir", o.out_dir,
                 "sweep: directory for sweep-<scenario>.{csv,json,png} not named otherwise");
  auto* o_sweep =
      app.add_flag("--sweep", o.sweep,
                   "spin_wait_delay x emulated CPU with the innodb policy, plus the time policy per CPU");
  std::string delays_s;
  auto* o_sd =
      app.add_option("--sweep-delays", delays_s, "sweep: spin_wait_delay values (0,1,2,4,6,10,20,30,50)");
  auto* o_sc =
      app.add_option("--sweep-cpus", sweep_cpus_s,
                     "sweep: emulated CPUs: broadwell, skylake, native, or <n>ns for a relax of n ns "
                     "(broadwell,skylake,native)");
  auto* o_su =
      app.add_option("--sweep-unit-ns", o.sweep_opts.unit_ns, "sweep: the time policy's delay_unit_ns (200)");
  for (auto* opt : {o_sd, o_sc, o_su}) opt->needs(o_sweep);
  o.repeat = 0;  // not given, until it is
  auto* o_sr = app.add_option("--repeat", o.repeat,
                              "runs per setting, reported as median, min..max and 95% interval "
                              "(default 1; 5 with --compare, whose verdicts need at least 4)");
  app.add_option("--order-seed", o.order_seed,
                 "interleave the settings' runs A B A B (0) or shuffled per round from this seed")
      ->capture_default_str();
  std::vector<std::string> compare_help;  // parse_cli takes --compare's settings before this parser
  app.add_option("--compare", compare_help,
                 "\"FLAGS A\" \"FLAGS B\" ...: run each quoted set of flags on top of the others, "
                 "interleaved, and judge B/A");
  app.add_flag("--dry-run", o.dry_run, "print the settings and the order of their runs, run nothing");
  app.add_flag("--quiet", o.quiet, "print no per-run summary");
  app.add_flag("--list-locks", o.list_locks, "list the locks and their policies, then exit");
  app.add_flag("--list-knobs", o.list_knobs,
               "list the library's knobs (class.knob, value, default, bounds; SPINWISE_KNOBS), then exit");

  std::ostringstream help, err;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    out.exit_code = app.exit(e, help, err);
    if (out.exit_code == 0) {
      out.message = help.str();
    } else {
      out.exit_code = 2;
      out.message =
          std::string("spinwise-stress: error: ") + e.what() + "\n(spinwise-stress --help lists the flags)\n";
    }
    return out;
  }
  if (o.list_locks) {
    out.message = list_locks_text();
    return out;
  }
  if (o.list_knobs) {
    out.message = format_knob_table();
    return out;
  }

  try {
    if (repeat_given != nullptr) *repeat_given = o_sr->count() > 0;
    if (o_sr->count() > 0 && (o.repeat < 1 || o.repeat > 100)) {
      throw std::invalid_argument("--repeat must be in 1..100, got " + std::to_string(o.repeat));
    }
    if (!parse_scenario(scenario_s, w.sc)) {
      throw std::invalid_argument("--scenario must be stats-lock or hot-page, not '" + scenario_s + "'");
    }
    if (!policy_s.empty()) {
      policy_kind p{};
      if (!parse_policy(policy_s, p)) {
        throw std::invalid_argument(
            "--policy must be innodb, time, exp_backoff, no_backoff or adaptive, not '" + policy_s + "'");
      }
      w.lock.policy = p;
    }
    if (o_unit->count() > 0) {
      if (w.lock.policy && *w.lock.policy != policy_kind::time) {
        throw std::invalid_argument("--delay-unit-ns belongs to --policy time, not " +
                                    std::string(to_string(*w.lock.policy)));
      }
      w.lock.policy = policy_kind::time;
      w.lock.delay_unit_ns = unit;
    }
    if (o_delay->count() > 0) w.lock.spin_wait_delay = delay;
    if (o_mult->count() > 0) w.lock.pause_multiplier = mult;
    if (o_loops->count() > 0) w.lock.spin_loops = loops;
    if (o_cpu->count() > 0 && !parse_cpu_model(cpu_s, w.cpu)) {
      throw std::invalid_argument("--cpu-model must be broadwell, skylake or native, not '" + cpu_s + "'");
    }
    if (o_relax->count() > 0) w.cpu = cpu_model::custom;
    if (o_stall->count() > 0)
      w.stall_holder_ms = ms_in_range("--stall-holder-ms", stall_ms, kMaxStallHolderMs);
    if (o_stuck->count() > 0) o.stuck_after_ms = ms_in_range("--stuck-after-ms", stuck_ms, kMaxStuckAfterMs);
    w.duration_s = duration;
    w.warmup_s = warmup;
    if (w.threads == 0 && app.count("--threads") > 0)
      throw std::invalid_argument("--threads must be at least 1");
    if (w.clients == 0 && app.count("--clients") > 0)
      throw std::invalid_argument("--clients must be at least 1");
    if (w.fanout == 0 && app.count("--fanout") > 0)
      throw std::invalid_argument("--fanout must be at least 1");

    if (o.sweep) {
      for (auto* opt : {o_delay, o_cpu, o_relax, o_policy, o_unit}) {
        if (opt->count() > 0) {
          throw std::invalid_argument(
              opt->get_name() + " is set by --sweep (use --sweep-delays, --sweep-cpus, --sweep-unit-ns)");
        }
      }
      if (o_sd->count() > 0) {
        o.sweep_opts.delays.clear();
        std::stringstream ss(delays_s);
        for (std::string item; std::getline(ss, item, ',');) {
          std::size_t used = 0;
          unsigned long v = 0;
          try {
            v = std::stoul(item, &used);
          } catch (const std::exception&) {
            used = 0;
          }
          if (used == 0 || used != item.size() || v > 1000) {
            throw std::invalid_argument("--sweep-delays takes comma-separated integers in 0..1000, not '" +
                                        item + "'");
          }
          o.sweep_opts.delays.push_back(static_cast<std::uint32_t>(v));
        }
        if (o.sweep_opts.delays.empty()) throw std::invalid_argument("--sweep-delays is empty");
      }
      if (o_sc->count() > 0) {
        o.sweep_opts.cpus.clear();
        std::stringstream ss(sweep_cpus_s);
        for (std::string item; std::getline(ss, item, ',');) {
          cpu_model m{};
          if (parse_cpu_model(item, m)) {
            o.sweep_opts.cpus.push_back(m);
            continue;
          }
          std::size_t used = 0;
          double ns = 0;
          try {
            ns = std::stod(item, &used);
          } catch (const std::exception&) {
            used = 0;
          }
          if (used == 0 || item.substr(used) != "ns" || !(ns >= 0.1 && ns <= 10'000)) {
            throw std::invalid_argument(
                "--sweep-cpus takes broadwell, skylake, native or <n>ns (n in 0.1..10000); not '" + item +
                "'");
          }
          o.sweep_opts.relax_ns.push_back(ns);
        }
        if (o.sweep_opts.cpus.empty() && o.sweep_opts.relax_ns.empty())
          throw std::invalid_argument("--sweep-cpus is empty");
      }
      if (o.sweep_opts.unit_ns < 1 || o.sweep_opts.unit_ns > 10000) {
        throw std::invalid_argument("--sweep-unit-ns must be in 1..10000");
      }
      workload_config probe = w;
      if (probe.lock.lock.empty()) probe.lock.lock = std::string(default_lock(w.sc));
      const lock_info* li = find_lock(probe.lock.lock);
      if (li != nullptr && !li->spinwise) {
        throw std::invalid_argument(
            "--sweep needs a spinwise lock (one with the innodb and time policies), not " + probe.lock.lock);
      }
      probe.lock.policy = policy_kind::innodb;
      probe = resolve(probe);
      apply_knobs(probe.lock);  // --pause-multiplier / --spin-loops range errors now
      w.lock.lock = probe.lock.lock;
    } else if (!o.png_path.empty() || !o.out_dir.empty()) {
      throw std::invalid_argument(std::string(o.png_path.empty() ? "--out-dir" : "--png") + " needs --sweep");
    }
    w = resolve(w);
    if (!o.sweep) apply_knobs(w.lock);  // range errors now, before any thread starts
  } catch (const std::invalid_argument& e) {
    out.exit_code = 2;
    out.message = std::string("spinwise-stress: error: ") + e.what() + "\n";
    return out;
  }
  out.run = true;
  return out;
}

namespace {

// An argument that is a --compare setting rather than the next flag: one quoted argument that is
// empty (the base configuration itself), holds a blank ("--spin-wait-delay 30"), or is no flag.
bool is_setting_text(const std::string& a) {
  return a.empty() || a[0] != '-' || a.find_first_of(" \t\n") != std::string::npos;
}

// A setting's text as arguments: split at blanks, '...' and "..." quote.
std::vector<std::string> split_setting(const std::string& text) {
  std::vector<std::string> args;
  std::string cur;
  bool in_arg = false;
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        cur += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_arg = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_arg) args.push_back(cur);
      cur.clear();
      in_arg = false;
    } else {
      cur += c;
      in_arg = true;
    }
  }
  if (quote != 0) throw std::invalid_argument("unbalanced quote");
  if (in_arg) args.push_back(cur);
  return args;
}

// Flags that say how to run or what to write, not what a setting is.
bool is_session_flag(const std::string& arg) {
  const std::string name = arg.substr(0, arg.find('='));
  for (const char* f :
       {"--compare", "--sweep", "--sweep-delays", "--sweep-cpus", "--sweep-unit-ns", "--repeat",
        "--order-seed", "--dry-run", "--json", "--csv", "--png", "--out-dir", "--stuck-after-ms", "--quiet",
        "--list-locks", "--list-knobs", "--help", "-h", "--version"}) {
    if (name == f) return true;
  }
  return false;
}

parse_outcome refuse(std::string what) {
  parse_outcome out;
  out.exit_code = 2;
  out.message = "spinwise-stress: error: " + std::move(what) + "\n";
  return out;
}

parse_outcome parse_args(const std::vector<std::string>& args, bool onto_base, bool* repeat_given) {
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parse_flags(static_cast<int>(argv.size()), argv.data(), onto_base, repeat_given);
}

}  // namespace

// --compare's settings are taken out first (CLI11 would read a quoted "--policy time" as one
// unknown flag); the rest is the base configuration, and each setting is its flags parsed after
// the base's by the same parser, so a setting says what differs and a bad flag in it is refused
// as it would be on its own.
parse_outcome parse_cli(int argc, const char* const* argv) {
  std::vector<std::string> base, settings;
  bool compare = false;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (i > 0 && (a == "--compare" || a.rfind("--compare=", 0) == 0)) {
      compare = true;
      if (a != "--compare") settings.push_back(a.substr(std::string("--compare=").size()));
      while (i + 1 < argc && is_setting_text(argv[i + 1])) settings.emplace_back(argv[++i]);
      continue;
    }
    base.push_back(a);
  }
  bool repeat_given = false;
  parse_outcome out = parse_args(base, false, &repeat_given);
  if (!out.run) return out;  // help, version, a list, or a bad flag
  cli_options& o = out.options;
  if (!repeat_given) o.repeat = compare ? 5 : 1;
  o.sweep_opts.repeat = o.repeat;
  o.sweep_opts.order_seed = o.order_seed;
  if (!compare) return out;

  if (o.sweep) {
    return refuse(
        "--compare and --sweep do not go together (a sweep compares its own points; --repeat and "
        "--order-seed apply to it)");
  }
  if (settings.size() < 2 || settings.size() > 26) {
    return refuse(
        "--compare takes 2 to 26 settings, each one quoted argument, e.g. --compare "
        "\"--spin-wait-delay 6\" \"--spin-wait-delay 30\"; got " +
        std::to_string(settings.size()));
  }
  for (std::size_t i = 0; i < settings.size(); ++i) {
    const std::string label(1, static_cast<char>('A' + i));
    const std::string where = "--compare setting " + label + " (\"" + settings[i] + "\"): ";
    std::vector<std::string> flags;
    try {
      flags = split_setting(settings[i]);
    } catch (const std::invalid_argument& e) {
      return refuse(where + e.what());
    }
    std::string args;
    for (const std::string& f : flags) {
      if (is_session_flag(f)) {
        return refuse(where + f.substr(0, f.find('=')) +
                      " is not a setting's flag: give it outside --compare's quoted settings");
      }
      args += (args.empty() ? "" : " ") + f;
    }
    std::vector<std::string> all = base;
    all.insert(all.end(), flags.begin(), flags.end());
    parse_outcome p = parse_args(all, true, nullptr);
    if (!p.run) {
      const std::string prefix = "spinwise-stress: error: ";
      std::string why = p.message.rfind(prefix, 0) == 0 ? p.message.substr(prefix.size()) : p.message;
      return refuse(where + why.substr(0, why.find_last_not_of('\n') + 1));
    }
    o.compare.push_back({label, args, p.options.workload});
  }
  return out;
}

}  // namespace spinwise::stress
