// spinwise-calibrate: measure what one relax instruction costs on every CPU of this machine,
// write the profile engines load, and print the settings that keep spin waits the same length in
// time (spinwise's and MySQL's). See docs/calibration.md.
//
// --watch SECONDS follows each CPU's relax cost over time instead (docs/calibration.md, "Watching
// the relax cost over time"): a table or JSON, and a gnuplot timeline with --plot.
//
// --advise mysql|mariadb prints the my.cnf lines for a real engine instead (docs/engines.md): the
// spin settings that give the spin time per round the engine's defaults gave before Skylake.
//
// Exit codes: 0 measured (warnings are printed); 1 the measurement or the output failed;
// 2 usage error (bad flag or value, unknown CPU or relax kind; with --advise: an engine, version
// or architecture the advice does not cover); 3 --strict and a measurement was not stable (with
// --advise: the PAUSE measurement is not stable and its spread could change the advice; no advice
// is printed).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/version.hpp"

using namespace spinwise::calibrate_tool;  // NOLINT(google-build-using-namespace): the tool's own

namespace {

// --tune: its options checked (nothing is measured or set on a usage error), then the run.
int tune_main(const CLI::App& app, tune_request& tune, const std::string& engine_name,
              const std::string& candidates_arg, const std::string& format) {
  for (const char* other : {"--advise", "--watch", "--c2c", "--from-profile", "--output", "--plot", "--cpus",
                            "--backends", "--trials", "--quick", "--strict", "--engine-version",
                            "--mariadb-multiplier", "--target-ns", "--cycles", "--interval-ms"}) {
    if (app.get_option(other)->count() > 0) {
      std::fprintf(stderr, "spinwise-calibrate: %s does not go with --tune\n", other);
      return kExitUsage;
    }
  }
  if (!sw::parse_engine(engine_name, tune.which)) {
    std::fprintf(stderr, "spinwise-calibrate: --tune '%s': unknown engine (known: mysql, mariadb)\n",
                 engine_name.c_str());
    return kExitUsage;
  }
  if (!tune.address.socket.empty() && (!tune.address.host.empty() || tune.address.port != 0)) {
    std::fprintf(stderr, "spinwise-calibrate: --tune: --socket, or --host and --port, not both\n");
    return kExitUsage;
  }
  if (tune.counter.empty() ||
      tune.counter.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                     "0123456789_") != std::string::npos) {
    std::fprintf(stderr, "spinwise-calibrate: --counter '%s' is not a status counter's name\n",
                 tune.counter.c_str());
    return kExitUsage;
  }
  if (!candidates_arg.empty()) {
    std::vector<int> values;
    if (!sw::parse_cpu_list(candidates_arg, values) || values.empty()) {  // the same list syntax
      std::fprintf(stderr, "spinwise-calibrate: --candidates '%s': expected values such as 0,1,4\n",
                   candidates_arg.c_str());
      return kExitUsage;
    }
    for (int v : values) {
      if (v < 0 || static_cast<unsigned>(v) > kTuneDelayMax) {
        std::fprintf(stderr, "spinwise-calibrate: --candidates: %d is outside the safe range 0..%u\n", v,
                     kTuneDelayMax);
        return kExitUsage;
      }
      tune.candidates.push_back(static_cast<unsigned>(v));
    }
  }
  tune.format = format;
  return run_tune(tune);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "spinwise-calibrate: measure what one relax instruction (PAUSE, ISB, ...) costs on every CPU of this\n"
      "machine, in counter ticks, nanoseconds and core cycles; write a profile engines load\n"
      "(SPINWISE_PROFILE); print the settings that keep spin waits the same length in time.",
      "spinwise-calibrate"};
  std::string cpus_arg = "all", backends_arg = "all", format = "table", output, cycles_arg = "auto";
  std::uint32_t trials = 0;
  double target_ns = 0, watch_s = 0, interval_ms = 500;
  std::string plot;
  bool quick = false, c2c = false, list_backends = false, strict = false;
  std::string advise, engine_version, from_profile;
  unsigned mariadb_multiplier = 0;
  app.set_version_flag("--version", "spinwise-calibrate " + str(sw::kVersion));
  app.add_option("--cpus", cpus_arg, "CPUs to measure: all (default), or a list such as 0,2,4-7");
  CLI::Option* backends_opt = app.add_option(
      "--backends", backends_arg,
      "relax kinds to measure: all (default: every kind this CPU supports; with --watch: the active kind), "
      "or a list such as pause,tpause");
  app.add_option("--trials", trials,
                 "trials per CPU and relax kind, 3..100000 (default 101; 15 with --quick; with --watch: per "
                 "sample, default 15)")
      ->check(CLI::Range(std::uint32_t{3}, sw::kMaxCalibrationTrials));
  app.add_flag("--quick", quick,
               "quick calibration: no warm-up, 15 short trials (well under 1 ms per CPU and kind)");
  CLI::Option* c2c_opt =
      app.add_flag("--c2c", c2c, "also measure the core-to-core cache-line latency matrix");
  app.add_option(
         "--format", format,
         "stdout format: table (default) or json (the profile document; with --watch: the watch document)")
      ->check(CLI::IsMember({"table", "json"}));
  app.add_option("--output,-o", output,
                 "write the profile (JSON; with --watch: the watch document) to this file (atomically: temp "
                 "file + rename)");
  CLI::Option* target_opt = app.add_option("--target-ns", target_ns,
                                           "spin time per delay unit the recommendations aim at, in ns "
                                           "(default: 200, time_policy's delay unit, what 50 PAUSEs took "
                                           "before Skylake; another value is a knob to set, never applied "
                                           "by the profile)")
                                ->check(CLI::Range(0.001, 1e7));
  CLI::Option* cycles_opt = app.add_option("--cycles", cycles_arg,
                                           "core-cycle source: auto (perf_event, else estimate), perf (fail "
                                           "without a PMU), estimate (never use perf)")
                                ->check(CLI::IsMember({"auto", "perf", "estimate"}));
  CLI::Option* watch_opt = app.add_option(
      "--watch", watch_s,
      "follow each CPU's relax cost over this many seconds instead: the quick measurement, pinned to "
      "each CPU every --interval-ms; per CPU min/median/max over time and a verdict (stable or drifting)");
  CLI::Option* interval_opt = app.add_option(
      "--interval-ms", interval_ms, "with --watch: time between samples in ms (default 500, at least 1)");
  CLI::Option* plot_opt = app.add_option(
      "--plot", plot,
      "with --watch: draw ns per relax over time, one line per CPU, into this PNG (needs gnuplot)");
  app.add_flag(
      "--strict", strict,
      "exit with 3 when a measurement is noisy, bimodal or drifting (with --watch: not stable over time)");
  CLI::Option* advise_opt = app.add_option(
      "--advise", advise,
      "print the my.cnf lines for a real engine instead of the table: mysql (8.0.16-8.4) or mariadb (10.6, "
      "10.11); with --format json, the same as data");
  CLI::Option* version_opt = app.add_option("--engine-version", engine_version,
                                            "with --advise: the engine's version, e.g. 8.0.36, 8.4 or 10.11 "
                                            "(default: MySQL 8.0.30+, MariaDB 10.11)");
  CLI::Option* multiplier_opt = app.add_option(
      "--mariadb-multiplier", mariadb_multiplier,
      "with --advise mariadb: the server's my_cpu_relax_multiplier (100 or 200), when read from it (default: "
      "what MariaDB's start-up timing gives for the PAUSE cost measured here)");
  CLI::Option* from_profile_opt = app.add_option(
      "--from-profile", from_profile,
      "with --advise: advise from this saved profile (spinwise-calibrate -o) instead of measuring now");
  tune_request tune;
  std::string tune_engine, candidates_arg;
  CLI::Option* tune_opt = app.add_option(
      "--tune", tune_engine,
      "measure innodb_spin_wait_delay on the running server instead: mariadb or mysql; steps the live "
      "setting "
      "over a few candidates under the server's own load, then puts the original back (docs/operators.md)");
  const std::vector<CLI::Option*> tune_opts = {
      app.add_option("--socket", tune.address.socket, "with --tune: the server's Unix socket"),
      app.add_option("--host", tune.address.host, "with --tune: the server's host (TCP; default 127.0.0.1)"),
      app.add_option("--port", tune.address.port, "with --tune: the server's TCP port")
          ->check(CLI::Range(1u, 65535u)),
      app.add_option("--user", tune.address.user,
                     "with --tune: the user (default: the option files', else the login name); the password "
                     "comes from MYSQL_PWD or the option files' [client] group, never the command line"),
      app.add_option("--defaults-file", tune.address.defaults_file,
                     "with --tune: read the [client] options (user, password) from this file"),
      app.add_option(
          "--candidates", candidates_arg,
          "with --tune: the values to measure, e.g. 0,1,4 (the current value is added; each in 0.." +
              std::to_string(kTuneDelayMax) + "; default: the advice, 0, the current value, neighbours)"),
      app.add_option("--rounds", tune.rounds,
                     "with --tune: rounds over the candidates, 2..50 (default: as many as fit --time-limit, "
                     "at most 12)")
          ->check(CLI::Range(std::size_t{2}, std::size_t{50})),
      app.add_option("--round-seconds", tune.round_s,
                     "with --tune: seconds the counter is read over, per candidate and round (default 5)")
          ->check(CLI::Range(0.2, 600.0)),
      app.add_option("--settle-seconds", tune.settle_s,
                     "with --tune: seconds at a new setting before its round is read (default 1)")
          ->check(CLI::Range(0.0, 60.0)),
      app.add_option(
             "--time-limit", tune.time_limit_s,
             "with --tune: the whole run's limit in seconds (default 300); a plan that does not fit is "
             "refused before anything is set, and when the limit passes mid-plan the complete rounds "
             "decide if there are 6 or more")
          ->check(CLI::Range(1.0, 3600.0)),
      app.add_option("--counter", tune.counter,
                     "with --tune: the SHOW GLOBAL STATUS counter read as throughput (default Questions)"),
      app.add_option("--max-drift", tune.max_drift,
                     "with --tune: stop without a verdict when a round is this many times above or below the "
                     "same setting's earlier rounds (default 2)")
          ->check(CLI::Range(1.1, 1000.0)),
      app.add_flag("--apply", tune.apply,
                   "with --tune: leave the winner set (default: the original is put back)")};
  app.add_flag("--list-backends", list_backends,
               "print the relax kinds this CPU supports, one per line, and exit");
  app.footer(
      "Exit codes: 0 measured (warnings are printed); 1 the measurement or writing the output failed;\n"
      "            2 usage error (bad flag or value, unknown CPU or relax kind; --advise: an engine,\n"
      "            version or architecture not covered); 3 --strict and a measurement was not stable\n"
      "            (--advise: the PAUSE measurement is not stable enough to decide; no advice).\n"
      "Environment: SPINWISE_NO_PERF=1 never uses perf_event; SPINWISE_RELAX picks the relax kind engines "
      "use.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }

  if (list_backends) {
    // The relax kinds this CPU can issue through this build's backend, one per line.
    for (sw::relax_kind k : sw::kAllRelaxKinds) {
      if (sw::relax_supported(k)) std::printf("%s\n", str(sw::to_string(k)).c_str());
    }
    return kExitOk;
  }

  if (tune_opt->count() > 0) return tune_main(app, tune, tune_engine, candidates_arg, format);
  for (const CLI::Option* o : tune_opts) {
    if (o->count() > 0) {
      std::fprintf(stderr, "spinwise-calibrate: %s only applies to --tune\n", o->get_name().c_str());
      return kExitUsage;
    }
  }

  const bool advising = advise_opt->count() > 0;
  // Before anything is measured: its load average is what else the host was doing.
  const sw::run_context here = advising ? sw::detect_run_context() : sw::run_context{};
  sw::engine which = sw::engine::mysql;
  if (advising && !sw::parse_engine(advise, which)) {
    std::fprintf(stderr, "spinwise-calibrate: --advise '%s': unknown engine (known: mysql, mariadb)\n",
                 advise.c_str());
    return kExitUsage;
  }
  const auto advice_request = [&] {
    advise_request rq;
    rq.which = which;
    rq.version = engine_version;
    rq.multiplier_given = multiplier_opt->count() > 0;
    rq.multiplier = mariadb_multiplier;
    rq.target_ns = target_ns;
    rq.format = format;
    return rq;
  };
  if (!advising) {
    for (const CLI::Option* o : {version_opt, multiplier_opt, from_profile_opt}) {
      if (o->count() > 0) {
        std::fprintf(stderr, "spinwise-calibrate: %s only applies to --advise\n", o->get_name().c_str());
        return kExitUsage;
      }
    }
  } else {
    for (const CLI::Option* o : {watch_opt, c2c_opt}) {
      if (o->count() > 0) {
        std::fprintf(stderr, "spinwise-calibrate: %s does not go with --advise\n", o->get_name().c_str());
        return kExitUsage;
      }
    }
    // Usage errors before anything is measured.
    {
      sw::engine_advice_input request;
      request.which = which;
      request.version = engine_version;
      request.arch =
          from_profile_opt->count() > 0 ? "x86_64" : str(sw::backend_name());  // a profile's: later
      if (multiplier_opt->count() > 0) request.mariadb_multiplier = mariadb_multiplier;
      if (const std::string why = sw::advice_request_error(request); !why.empty()) {
        std::fprintf(stderr, "spinwise-calibrate: --advise: %s\n", why.c_str());
        return kExitUsage;
      }
    }
    std::vector<sw::relax_kind> asked;
    std::string bad;
    if (backends_opt->count() > 0 && parse_backends(backends_arg, asked, bad) && !asked.empty() &&
        std::find(asked.begin(), asked.end(), sw::relax_kind::pause) == asked.end()) {
      std::fprintf(stderr, "spinwise-calibrate: --advise needs PAUSE measured: --backends %s leaves it out\n",
                   backends_arg.c_str());
      return kExitUsage;
    }
    if (from_profile_opt->count() > 0) {
      for (const CLI::Option* o : {app.get_option("--cpus"), backends_opt, app.get_option("--trials"),
                                   app.get_option("--quick"), cycles_opt, app.get_option("--output")}) {
        if (o->count() > 0) {
          std::fprintf(stderr, "spinwise-calibrate: %s measures; it does not go with --from-profile\n",
                       o->get_name().c_str());
          return kExitUsage;
        }
      }
      return advise_from_profile(advice_request(), from_profile);
    }
    // Only PAUSE enters the engines' spin: measure it alone (other kinds cannot be advised).
    if (backends_opt->count() == 0 && sw::relax_supported(sw::relax_kind::pause)) backends_arg = "pause";
  }

  const bool watching = watch_opt->count() > 0;
  if (!watching && (interval_opt->count() > 0 || plot_opt->count() > 0)) {
    std::fprintf(stderr, "spinwise-calibrate: %s only applies to --watch\n",
                 interval_opt->count() > 0 ? "--interval-ms" : "--plot");
    return kExitUsage;
  }
  if (watching) {
    for (const CLI::Option* o : {c2c_opt, target_opt, cycles_opt}) {
      if (o->count() > 0) {
        std::fprintf(stderr, "spinwise-calibrate: %s does not apply to --watch\n", o->get_name().c_str());
        return kExitUsage;
      }
    }
  }

  sw::calibration_options opt;
  if (cpus_arg != "all" && !sw::parse_cpu_list(cpus_arg, opt.cpus)) {
    std::fprintf(stderr, "spinwise-calibrate: invalid --cpus '%s': expected all, or a list such as 0,2,4-7\n",
                 cpus_arg.c_str());
    return kExitUsage;
  }
  if (cpus_arg != "all" && opt.cpus.empty()) {
    std::fprintf(stderr, "spinwise-calibrate: --cpus '%s' names no CPU\n", cpus_arg.c_str());
    return kExitUsage;
  }
  std::string why;
  if (!parse_backends(backends_arg, opt.kinds, why)) {
    std::fprintf(stderr, "spinwise-calibrate: %s\n", why.c_str());
    return kExitUsage;
  }
  if (watching) {
    sw::watch_options wo;
    wo.cpus = opt.cpus;
    // --backends all, given, means every kind; not given, the kind engines use.
    if (backends_opt->count() > 0) {
      wo.kinds = opt.kinds;
      if (wo.kinds.empty()) {
        for (sw::relax_kind k : sw::kAllRelaxKinds) {
          if (sw::relax_supported(k)) wo.kinds.push_back(k);
        }
      }
    }
    wo.duration_s = watch_s;
    wo.interval_ms = interval_ms;
    if (trials != 0) wo.trials = trials;
    if (why = sw::check_watch_options(wo); !why.empty()) {
      std::fprintf(stderr, "spinwise-calibrate: --watch %g --interval-ms %g: %s\n", watch_s, interval_ms,
                   why.c_str());
      return kExitUsage;
    }
    return run_watch(wo, format, output, plot, strict);
  }

  opt.trials = trials;
  opt.quick = quick;
  opt.target_ns = target_ns;
  sw::parse_cycles_source(cycles_arg, opt.cycles);
  if (why = sw::check_calibration_options(opt); !why.empty()) {
    std::fprintf(stderr, "spinwise-calibrate: %s\n", why.c_str());
    return kExitUsage;
  }

  // The output is checked before the measurement, as --watch does: a missing directory is said at
  // once, naming the file asked for, not after a minute of measuring.
  if (!output.empty()) {
    if (why = cannot_create(output); !why.empty()) {
      std::fprintf(stderr, "spinwise-calibrate: %s (nothing was measured)\n", why.c_str());
      return kExitFailure;
    }
  }
  progress_line progress;
  opt.progress = [&progress](const sw::calibration_progress& p) { progress.update(p); };
  sw::calibration_result result;
  if (!measure(opt, c2c, progress, result)) return kExitFailure;
  if (advising) return advise_measured(advice_request(), opt, std::move(result), progress, here, output);
  return print_calibration(result, format, output, strict);
}
