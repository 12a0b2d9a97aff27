// spinwise-bench: spinwise's locks beside std, glibc, oneTBB and abseil, in one binary, one run.
//
//   spinwise-bench [--mode quick|full] [spinwise-bench flags] [--benchmark_* flags] [-- Google Benchmark
//   flags]
//
// Every figure worth quoting is a ratio against a peer measured in the same run
// (bench/micro/report.py makes the tables and plots). See --help and docs/benchmarks.md.

#include <benchmark/benchmark.h>
#include <gnu/libc-version.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <typeindex>
#include <utility>
#include <vector>

#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define SPINWISE_BENCH_HAVE_SINGLE_THREADED 1
#endif

#include "console.hpp"
#include "cs_loop.hpp"
#include "estimate.hpp"
#include "lock_list.hpp"
#include "run_record.hpp"
#include "scenarios.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/knob_text.hpp"
#include "spinwise/relax_table.hpp"
#include "spinwise/runtime/c2c.hpp"
#include "spinwise/runtime/knob_config.hpp"
#include "spinwise/runtime/run_context.hpp"
#include "spinwise/version.hpp"

namespace sb = spinwise::bench;

namespace {

constexpr const char* kDescription =
    "spinwise-bench: measures spinwise's locks beside std, glibc, oneTBB and abseil peers in one run\n"
    "(Google Benchmark). Every figure worth quoting is a ratio against a peer of the same run.";

constexpr const char* kFooter =
    "LIST is comma-separated integers.\n"
    "Google Benchmark's own flags pass through: any --benchmark_* flag, and everything after --. They\n"
    "win over the mode's defaults, e.g.\n"
    "  spinwise-bench --mode quick --benchmark_out=run.json --benchmark_out_format=json\n"
    "  spinwise-bench --scenarios contended -- --benchmark_filter=hybrid\n"
    "SPINWISE_KNOBS (docs/knobs.md) is applied first, as an engine's start-up applies it.\n"
    "Exit codes: 0 ran (a benchmark that failed says so in its output); 1 --estimate refused a request "
    "(answered with its error); 2 bad command line or SPINWISE_KNOBS.";

const std::vector<std::string> kScenarios{"uncontended", "handoff", "contended", "rw"};

// Spellings of spinwise-bench 0.1, accepted and not listed: the flags are kebab-case now, as in
// spinwise-stress and spinwise-calibrate.
constexpr std::pair<const char*, const char*> kOldSpellings[] = {
    {"--cs_ns", "--cs-ns"},
    {"--local_ns", "--local-ns"},
    {"--rw_cs_ns", "--rw-cs-ns"},
    {"--rw_local_ns", "--rw-local-ns"},
    {"--read_pct", "--read-pct"},
    {"--max_run_ms", "--max-run-ms"},
    {"--handoff_delay_ns", "--handoff-delay-ns"},
    {"--list_locks", "--list-locks"},
};

std::string respell(const std::string& arg) {
  for (const auto& [old_name, name] : kOldSpellings) {
    const std::string o = old_name;
    if (arg == o || arg.rfind(o + "=", 0) == 0) return name + arg.substr(o.size());
  }
  return arg;
}

struct config {
  std::string mode = "full";
  std::vector<long> threads{1, 2, 3, 4, 8, 16, 32};
  std::vector<long> cs_ns, local_ns, rw_cs_ns, rw_local_ns;
  std::vector<long> read_pct{50, 90, 99};
  long handoff_delay_ns = 2000;
  long max_run_ms = 0;   // 0: the mode's default
  long repetitions = 0;  // 0: the mode's default (quick 1, full 3)
  std::set<std::string> scenarios{kScenarios.begin(), kScenarios.end()};
  bool list_locks = false;
  bool list_knobs = false;
  bool estimate = false;
  std::vector<std::string> benchmark_flags;  // for Google Benchmark, in the order given
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "spinwise-bench: error: %s\n(spinwise-bench --help lists the flags)\n", msg.c_str());
  std::exit(2);
}

// Parses the command line; exits with 0 after --help or --version, with 2 on a bad flag or value.
// Nothing has run by then: every flag is checked first.
config parse_flags(int argc, char** argv) {
  config c;
  // Everything after "--" is Google Benchmark's; before it, CLI11 parses spinwise-bench's own
  // flags and leaves the rest, which may only be --benchmark_* flags.
  std::vector<std::string> own;
  int i = 1;
  for (; i < argc && std::string(argv[i]) != "--"; ++i) own.push_back(respell(argv[i]));
  std::vector<std::string> after_dashes(argv + std::min(i + 1, argc), argv + argc);
  std::reverse(own.begin(), own.end());  // CLI11 takes a vector in reverse order

  CLI::App app{kDescription, "spinwise-bench"};
  app.get_formatter()->column_width(30);
  app.footer(kFooter);
  app.allow_extras();
  app.set_version_flag("--version", "spinwise-bench " + std::string(spinwise::kVersion));
  constexpr long kMaxNs = 10'000'000;  // 10 ms: longer is not a spin lock's business
  std::vector<std::string> scenarios;
  app.add_option("--mode", c.mode,
                 "quick: every benchmark once, at least 10 ms each (well under a minute on 2 CPUs; the smoke "
                 "test; its numbers are indicative only); full: the whole grid, 3 repetitions in random "
                 "interleaving, at least 0.3 s each (docs/benchmarks.md says how long)")
      ->check(CLI::IsMember({"quick", "full"}))
      ->capture_default_str();
  app.add_option("--scenarios", scenarios, "any of uncontended,handoff,contended,rw (default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember(kScenarios))
      ->type_name("LIST");
  auto list = [&](const char* name, std::vector<long>& v, long lo, long hi, const char* what) {
    return app.add_option(name, v, what)->delimiter(',')->check(CLI::Range(lo, hi))->type_name("LIST");
  };
  list("--threads", c.threads, 1, sb::kMaxThreads,
       "thread counts for contended and rw (default 1,2,3,4,8,16,32)");
  auto* o_cs = list("--cs-ns", c.cs_ns, 0, kMaxNs,
                    "contended: critical-section lengths in ns (quick 100; full 0,100,1000)");
  auto* o_local = list("--local-ns", c.local_ns, 0, kMaxNs,
                       "contended: work outside the lock in ns (quick 100; full 100,1000)");
  auto* o_rw_cs =
      list("--rw-cs-ns", c.rw_cs_ns, 0, kMaxNs, "rw: critical-section lengths in ns (quick and full 100)");
  auto* o_rw_local = list("--rw-local-ns", c.rw_local_ns, 0, kMaxNs,
                          "rw: work outside the lock in ns (quick 100; full 100,1000)");
  list("--read-pct", c.read_pct, 0, 100, "read shares of the rw scenario, percent (default 50,90,99)");
  app.add_option("--max-run-ms", c.max_run_ms,
                 "stop a contended, rw or handoff run's work after this many ms and report what it did until "
                 "then (counter capped=1): quick 250, full 3000")
      ->check(CLI::Range(1L, 600'000L))
      ->type_name("N");
  // A spread needs repeats: report.py gives every ratio its interval from them. Interleaved, so
  // that drift (another tenant, thermal state) falls on every lock alike, not on one.
  app.add_option("--repetitions", c.repetitions,
                 "run each benchmark N times (1-100), in random interleaving when N > 1; report.py gives "
                 "each median its interval from them (quick 1, full 3; --benchmark_repetitions in short)")
      ->check(CLI::Range(1L, 100L))
      ->type_name("N");
  app.add_option("--handoff-delay-ns", c.handoff_delay_ns,
                 "how long the owner waits after the waiter announced itself before it releases, so the "
                 "waiter is really inside lock()")
      ->check(CLI::Range(0L, kMaxNs))
      ->type_name("N")
      ->capture_default_str();
  app.add_flag("--list-locks", c.list_locks,
               "print the locks and the peers that were compiled out, then exit");
  app.add_flag("--list-knobs", c.list_knobs,
               "print the library's knobs (class.knob, value, default, bounds; SPINWISE_KNOBS), then exit");
  app.add_flag("--estimate", c.estimate,
               "measure nothing: answer JSON Lines requests for spinwise's statistics (median intervals, "
               "ratios, geometric means) from stdin on stdout, then exit; bench/micro/report.py's "
               "(docs/benchmarks.md)");

  try {
    app.parse(own);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) std::exit(app.exit(e));  // --help, --version
    usage_error(e.what());
  }
  for (const std::string& extra : app.remaining()) {
    if (extra.rfind("--benchmark_", 0) != 0) {
      usage_error("'" + extra +
                  "' is not a spinwise-bench flag (Google Benchmark's go as --benchmark_*=... or after --)");
    }
    c.benchmark_flags.push_back(extra);
  }
  c.benchmark_flags.insert(c.benchmark_flags.end(), after_dashes.begin(), after_dashes.end());
  for (const std::string& f : c.benchmark_flags) {
    if (c.repetitions > 0 && f.rfind("--benchmark_repetitions", 0) == 0) {
      usage_error("--repetitions and " + f + " both given: give one");
    }
  }

  if (!scenarios.empty()) c.scenarios = {scenarios.begin(), scenarios.end()};
  const bool quick = c.mode == "quick";
  if (o_cs->count() == 0) c.cs_ns = quick ? std::vector<long>{100} : std::vector<long>{0, 100, 1000};
  if (o_local->count() == 0) c.local_ns = quick ? std::vector<long>{100} : std::vector<long>{100, 1000};
  if (o_rw_cs->count() == 0) c.rw_cs_ns = {100};
  if (o_rw_local->count() == 0) c.rw_local_ns = quick ? std::vector<long>{100} : std::vector<long>{100, 1000};
  if (c.max_run_ms == 0) c.max_run_ms = quick ? 250 : 3000;
  if (c.repetitions == 0) c.repetitions = quick ? 1 : 3;
  for (auto* v : {&c.threads, &c.cs_ns, &c.local_ns, &c.rw_cs_ns, &c.rw_local_ns, &c.read_pct}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  return c;
}

std::string join(const std::vector<long>& v) {
  std::string s;
  for (long x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// The floor under a handoff: the one-way core-to-core latency between the handoff's two CPUs, in
// ns; -1, with the reason in bench.c2c_method, when it could not be measured.
void add_c2c_context() {
  std::string one_way = "-1", method;
  int a = 0, b = 0;
  if (!sb::handoff_cpus(a, b)) {
    method = "not measured: needs two CPUs";
  } else {
    const spinwise::c2c_result r = sb::measure_oneway(a, b);
    if (const double ns = sb::oneway_ns(r); ns > 0) {
      one_way = std::to_string(ns);
      method = "cpus " + std::to_string(a) + "," + std::to_string(b) + ": " + r.method;
    } else {
      method = "not measured: " + (r.errors.empty() ? std::string("no result") : r.errors.front());
    }
  }
  benchmark::AddCustomContext("bench.c2c_oneway_ns", one_way);
  benchmark::AddCustomContext("bench.c2c_method", method);
}

// Everything a reader of the JSON needs to know what was measured where.
void add_context(const config& c, int argc, char** argv, const std::vector<std::string>& catalogue) {
  // The run context as spinwise-stress and --advise write it, flat: run.cpu_model, run.cpus_allowed, ...
  spinwise::run_context run = spinwise::detect_run_context();
  run.relax_ns = spinwise::relax_ns_here();
  for (const auto& [key, value] : spinwise::run_context_fields(run)) benchmark::AddCustomContext(key, value);
  benchmark::AddCustomContext("bench.glibc", gnu_get_libc_version());
  benchmark::AddCustomContext("bench.mode", c.mode);
  const char* knobs = std::getenv("SPINWISE_KNOBS");
  benchmark::AddCustomContext("bench.knobs", knobs != nullptr && *knobs != '\0' ? knobs : "none");
  benchmark::AddCustomContext("bench.threads", join(c.threads));
  benchmark::AddCustomContext("bench.cs_ns", join(c.cs_ns));
  benchmark::AddCustomContext("bench.local_ns", join(c.local_ns));
  benchmark::AddCustomContext("bench.rw_cs_ns", join(c.rw_cs_ns));
  benchmark::AddCustomContext("bench.rw_local_ns", join(c.rw_local_ns));
  benchmark::AddCustomContext("bench.read_pct", join(c.read_pct));
  benchmark::AddCustomContext("bench.handoff_delay_ns", std::to_string(c.handoff_delay_ns));
  benchmark::AddCustomContext("bench.max_run_ms", std::to_string(c.max_run_ms));
  benchmark::AddCustomContext("bench.work_ns_per_iteration", std::to_string(sb::work_ns_per_iteration()));
  std::string missing;
  for (const auto& m : sb::missing_peers()) missing += (missing.empty() ? "" : "; ") + m;
  benchmark::AddCustomContext("bench.peers_missing", missing.empty() ? "none" : missing);
  std::string cmd;
  for (int i = 0; i < argc; ++i) cmd += (i ? " " : "") + std::string(argv[i]);
  benchmark::AddCustomContext("bench.command", cmd);
#if SPINWISE_BENCH_HAVE_SINGLE_THREADED
  benchmark::AddCustomContext("bench.libc_single_threaded", std::to_string(int(__libc_single_threaded)));
#endif
  for (const auto& entry : catalogue) {
    const auto eq = entry.find('=');
    benchmark::AddCustomContext("lock." + entry.substr(0, eq), entry.substr(eq + 1));
  }
  if (c.scenarios.count("handoff") != 0) add_c2c_context();
}

// Registers every benchmark of the selected scenarios; returns the lock catalogue (name=kind[,fifo]).
std::vector<std::string> register_all(const config& c) {
  std::vector<std::string> catalogue;
  auto note = [&](const sb::lock_info& i) {
    const std::string e = std::string(i.name) + "=" + sb::kind_name(i.kind) + (i.fifo ? ",fifo" : "");
    if (std::find(catalogue.begin(), catalogue.end(), e) == catalogue.end()) catalogue.push_back(e);
  };
  // A policy variant that is the default alias is the same type: measure it once.
  auto first_time = [](std::map<std::type_index, std::string>& seen, std::type_index t, const char* name) {
    const auto [it, fresh] = seen.emplace(t, name);
    if (fresh) return true;
    std::fprintf(stderr, "spinwise-bench: %s is the same type as %s; measured once, as %s\n", name,
                 it->second.c_str(), it->second.c_str());
    return false;
  };
  const bool unc = c.scenarios.count("uncontended") != 0;
  const bool hand = c.scenarios.count("handoff") != 0;
  const bool cont = c.scenarios.count("contended") != 0;
  const bool rw = c.scenarios.count("rw") != 0;
  // Uncontended runs never wait, so a fixed count bounds them; in quick mode it also keeps Google
  // Benchmark from accepting a 1-iteration trial that a preemption stretched past the 10 ms minimum.
  auto single = [&c](benchmark::internal::Benchmark* b) {
    if (c.mode == "quick") b->Iterations(200000);
    b->UseRealTime();
  };
  auto threads = [&c](benchmark::internal::Benchmark* b) {
    for (long t : c.threads) b->Threads(static_cast<int>(t));
    b->UseRealTime();
  };

  if (unc) {
    single(benchmark::RegisterBenchmark("uncontended/xchg_floor", sb::run_uncontended<sb::xchg_floor>));
    note({"xchg_floor", sb::lock_kind::floor, false});
  }

  std::map<std::type_index, std::string> seen_x;
  sb::exclusive_locks([&](auto tag, const sb::lock_info& info) {
    using L = typename decltype(tag)::type;
    if (!first_time(seen_x, typeid(L), info.name)) return;
    note(info);
    const std::string n = info.name;
    if (unc) single(benchmark::RegisterBenchmark(("uncontended/" + n).c_str(), sb::run_uncontended<L>));
    if (hand) {
      const std::uint64_t delay = sb::iterations_for_ns(static_cast<double>(c.handoff_delay_ns));
      benchmark::RegisterBenchmark(("handoff/" + n).c_str(), [delay](benchmark::State& st) {
        sb::run_handoff<L>(st, delay);
      })->UseRealTime();
    }
    if (cont) {
      for (long cs : c.cs_ns) {
        for (long local : c.local_ns) {
          auto holder = std::make_shared<sb::arena_holder<L>>();
          const std::uint64_t cs_it = sb::iterations_for_ns(static_cast<double>(cs));
          const std::uint64_t local_it = sb::iterations_for_ns(static_cast<double>(local));
          const std::string name =
              "contended/" + n + "/cs_ns:" + std::to_string(cs) + "/local_ns:" + std::to_string(local);
          threads(benchmark::RegisterBenchmark(name.c_str(), [holder, cs_it, local_it](benchmark::State& st) {
            sb::run_contended<L>(st, *holder, cs_it, local_it);
          }));
        }
      }
    }
  });

  std::map<std::type_index, std::string> seen_s;
  sb::shared_locks([&](auto tag, const sb::lock_info& info) {
    using L = typename decltype(tag)::type;
    if (!first_time(seen_s, typeid(L), info.name)) return;
    note(info);
    const std::string n = info.name;
    if (unc) {
      if (!seen_x.count(typeid(L))) {
        single(benchmark::RegisterBenchmark(("uncontended/" + n).c_str(), sb::run_uncontended<L>));
      }
      single(
          benchmark::RegisterBenchmark(("uncontended_shared/" + n).c_str(), sb::run_uncontended_shared<L>));
    }
    if (rw) {
      for (long pct : c.read_pct) {
        for (long cs : c.rw_cs_ns) {
          for (long local : c.rw_local_ns) {
            auto holder = std::make_shared<sb::arena_holder<L>>();
            const std::uint64_t cs_it = sb::iterations_for_ns(static_cast<double>(cs));
            const std::uint64_t local_it = sb::iterations_for_ns(static_cast<double>(local));
            const auto permille = static_cast<unsigned>(pct * 10);
            const std::string name = "rw/" + n + "/read_pct:" + std::to_string(pct) +
                                     "/cs_ns:" + std::to_string(cs) + "/local_ns:" + std::to_string(local);
            threads(benchmark::RegisterBenchmark(name.c_str(),
                                                 [holder, cs_it, local_it, permille](benchmark::State& st) {
                                                   sb::run_rw<L>(st, *holder, cs_it, local_it, permille);
                                                 }));
          }
        }
      }
    }
  });
  return catalogue;
}

}  // namespace

int main(int argc, char** argv) {
  const config c = parse_flags(argc, argv);
  if (c.estimate) return sb::run_estimate(std::cin, std::cout);
  // SPINWISE_KNOBS, as an engine's start-up reads it: a setting to benchmark without a rebuild
  // (e.g. SPINWISE_KNOBS=hybrid_shared_mutex.delay_unit_ns=500). All or nothing; a bad one is a
  // usage error, before anything runs. --list-knobs shows the result.
  if (const spinwise::knob_config_status st = spinwise::load_knobs_from_env(); !st) {
    std::fprintf(stderr, "spinwise-bench: %s\n", st.message.c_str());
    return 2;
  }
  if (c.list_knobs) {
    std::fputs(spinwise::format_knob_table().c_str(), stdout);
    return 0;
  }

#if SPINWISE_BENCH_HAVE_ABSL
  // Debian's abseil may be built without NDEBUG, which turns on deadlock detection: a lock-order
  // graph updated on every Lock(). Nobody runs a production mutex that way.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
  for (const auto& m : sb::missing_peers()) std::fprintf(stderr, "spinwise-bench: skipping %s\n", m.c_str());

  // glibc takes a cheaper, non-atomic path in pthread_mutex_lock until the process has created a
  // thread; a real program has threads, so the uncontended numbers must be taken after one.
  std::thread([] {}).join();
  sb::configure_stats_variants();  // +stats_off and +tracking: the run-time switches' costs
  sb::calibrate_work();
  sb::run_cap() = std::chrono::milliseconds(c.max_run_ms);
  (void)spinwise::relax_ns_here();

  // The mode's defaults first, so any --benchmark_* flag the user gives overrides them.
  std::vector<std::string> args{argv[0]};
  if (c.mode == "quick") {
    // Time-bounded, not a fixed count: a FIFO lock with a preempted next owner, or a pinned
    // handoff on a loaded machine, can take milliseconds per acquisition, and a fixed count would
    // then take minutes. Google Benchmark stops at the first trial run that lasts min_time.
    args.emplace_back("--benchmark_min_time=0.01");
  } else {
    args.emplace_back("--benchmark_min_time=0.3");
  }
  // Three repetitions in full mode: the fewest whose min..max says anything (75% coverage of the
  // median; the rule of runtime/uncertainty.hpp asks disjoint ranges below six); a full run
  // already takes half an hour on 2 CPUs, and --repetitions buys more where a verdict needs it.
  args.emplace_back("--benchmark_repetitions=" + std::to_string(c.repetitions));
  if (c.repetitions > 1) args.emplace_back("--benchmark_enable_random_interleaving=true");
  args.insert(args.end(), c.benchmark_flags.begin(), c.benchmark_flags.end());
  std::vector<char*> gb_argv;
  for (auto& a : args) gb_argv.push_back(a.data());
  gb_argv.push_back(nullptr);
  int gb_argc = static_cast<int>(args.size());

  const std::vector<std::string> catalogue = register_all(c);
  if (c.list_locks) {
    for (const auto& e : catalogue) std::printf("%s\n", e.c_str());
    for (const auto& m : sb::missing_peers()) std::printf("skipped: %s\n", m.c_str());
    return 0;
  }
  // Google Benchmark does not create the folder of --benchmark_out; a full run writes into a new one.
  for (const auto& a : c.benchmark_flags) {
    const std::string flag = "--benchmark_out=";
    if (a.rfind(flag, 0) != 0) continue;
    const std::filesystem::path dir = std::filesystem::path(a.substr(flag.size())).parent_path();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    if (ec) usage_error("--benchmark_out: cannot create " + dir.string() + ": " + ec.message());
  }
  benchmark::Initialize(&gb_argc, gb_argv.data());
  if (benchmark::ReportUnrecognizedArguments(gb_argc, gb_argv.data())) return 2;
  add_context(c, argc, argv, catalogue);
  // The console, unless another format is asked for: Google Benchmark's own prints every counter.
  // The last of a repeated flag wins, as in Google Benchmark's parser.
  std::string format = "console";
  bool color = isatty(STDOUT_FILENO) != 0;
  bool tabular = false;
  for (const auto& a : args) {
    if (a.rfind("--benchmark_format=", 0) == 0) format = a.substr(a.find('=') + 1);
    if (a.rfind("--benchmark_color=", 0) == 0) {
      const std::string v = a.substr(a.find('=') + 1);
      color = v == "true" || v == "yes" || v == "1" || (v == "auto" && isatty(STDOUT_FILENO) != 0);
    }
    if (a.rfind("--benchmark_counters_tabular=", 0) == 0) tabular = a.substr(a.find('=') + 1) == "true";
  }
  if (format == "console") {
    const int opts =
        (color ? sb::short_console::OO_Color : 0) | (tabular ? sb::short_console::OO_Tabular : 0);
    sb::short_console console(static_cast<sb::short_console::OutputOptions>(opts));
    benchmark::RunSpecifiedBenchmarks(&console);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return 0;
}
