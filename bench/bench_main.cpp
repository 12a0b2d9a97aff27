// spinwise-bench: spinwise's locks beside std, glibc, oneTBB and abseil, in one binary, one run.
//
//   spinwise-bench [--mode=quick|full] [spinwise-bench flags] [Google Benchmark flags]
//
// Every figure worth quoting is a ratio against a peer measured in the same run
// (bench/report.py makes the tables and plots). See --help and README.md "Benchmarks".

#include <benchmark/benchmark.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <gnu/libc-version.h>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <typeindex>
#include <vector>

#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define SPINWISE_BENCH_HAVE_SINGLE_THREADED 1
#endif

#include "lock_list.hpp"
#include "scenarios.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/relax_time.hpp"
#include "workload.hpp"

namespace sb = spinwise::bench;

namespace {

constexpr const char* kUsage = R"(usage: spinwise-bench [options] [Google Benchmark options]

Measures spinwise's locks beside std, glibc, oneTBB and abseil peers in one run.

  --mode=quick|full        quick: every benchmark once, at least 10 ms each (well under a minute
                           on 2 CPUs; the smoke test; its numbers are indicative only); full
                           (default): the whole grid, 3 repetitions in random interleaving, at
                           least 0.3 s each (README.md "Benchmarks" says how long)
  --scenarios=LIST         any of uncontended,handoff,contended,rw (default: all)
  --threads=LIST           thread counts for contended and rw (default 1,2,3,4,8,16,32)
  --cs_ns=LIST             contended: critical-section lengths in ns (quick 100; full 0,100,1000)
  --local_ns=LIST          contended: work outside the lock in ns (quick 100; full 100,1000)
  --rw_cs_ns=LIST          rw: critical-section lengths in ns (quick and full 100)
  --rw_local_ns=LIST       rw: work outside the lock in ns (quick 100; full 100,1000)
  --read_pct=LIST          read shares of the rw scenario, percent (default 50,90,99)
  --max_run_ms=N           stop a contended, rw or handoff run's work after N ms and report what it
                           did until then (counter capped=1): quick 250, full 3000
  --handoff_delay_ns=N     how long the owner waits after the waiter announced itself before it
                           releases, so the waiter is really inside lock() (default 2000)
  --list_locks             print the locks and the peers that were compiled out, then exit
  --help                   this text

LIST is comma-separated integers. Any --benchmark_* flag is passed to Google Benchmark and wins
over the mode's defaults, e.g. --benchmark_out=run.json --benchmark_out_format=json.
)";

struct config {
  std::string mode = "full";
  std::vector<long> threads{1, 2, 3, 4, 8, 16, 32};
  std::vector<long> cs_ns, local_ns, rw_cs_ns, rw_local_ns;
  std::vector<long> read_pct{50, 90, 99};
  long handoff_delay_ns = 2000;
  long max_run_ms = 0;  // 0: the mode's default
  std::set<std::string> scenarios{"uncontended", "handoff", "contended", "rw"};
  bool list_locks = false;
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "spinwise-bench: %s\n(run spinwise-bench --help for the options)\n", msg.c_str());
  std::exit(2);
}

long parse_int(const std::string& flag, const std::string& text, long lo, long hi) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end == text.c_str() || *end != '\0' || errno != 0) {
    usage_error(flag + ": '" + text + "' is not an integer");
  }
  if (v < lo || v > hi) {
    usage_error(flag + ": " + text + " is out of range " + std::to_string(lo) + ".." + std::to_string(hi));
  }
  return v;
}

std::vector<long> parse_list(const std::string& flag, const std::string& text, long lo, long hi) {
  std::vector<long> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(parse_int(flag, item, lo, hi));
  if (out.empty() || text.back() == ',') usage_error(flag + ": '" + text + "' is not a comma-separated list");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Takes spinwise-bench's own flags out of argv (everything else goes to Google Benchmark, which
// rejects what it does not know). All flags are checked before anything runs.
config parse_flags(int& argc, char** argv, std::vector<std::string>& passthrough) {
  config c;
  bool cs_set = false, local_set = false, rw_cs_set = false, rw_local_set = false;
  constexpr long kMaxNs = 10'000'000;  // 10 ms: longer is not a spin lock's business
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    auto need_value = [&] {
      if (eq == std::string::npos) usage_error(name + " needs a value (" + name + "=...)");
    };
    if (name == "--help" || name == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (name == "--mode") {
      need_value();
      if (value != "quick" && value != "full") usage_error("--mode: '" + value + "' is not quick or full");
      c.mode = value;
    } else if (name == "--threads") {
      need_value();
      c.threads = parse_list(name, value, 1, sb::kMaxThreads);
    } else if (name == "--cs_ns") {
      need_value();
      c.cs_ns = parse_list(name, value, 0, kMaxNs);
      cs_set = true;
    } else if (name == "--local_ns") {
      need_value();
      c.local_ns = parse_list(name, value, 0, kMaxNs);
      local_set = true;
    } else if (name == "--rw_cs_ns") {
      need_value();
      c.rw_cs_ns = parse_list(name, value, 0, kMaxNs);
      rw_cs_set = true;
    } else if (name == "--rw_local_ns") {
      need_value();
      c.rw_local_ns = parse_list(name, value, 0, kMaxNs);
      rw_local_set = true;
    } else if (name == "--read_pct") {
      need_value();
      c.read_pct = parse_list(name, value, 0, 100);
    } else if (name == "--handoff_delay_ns") {
      need_value();
      c.handoff_delay_ns = parse_int(name, value, 0, kMaxNs);
    } else if (name == "--max_run_ms") {
      need_value();
      c.max_run_ms = parse_int(name, value, 1, 600'000);
    } else if (name == "--scenarios") {
      need_value();
      c.scenarios.clear();
      std::stringstream ss(value);
      std::string s;
      while (std::getline(ss, s, ',')) {
        if (s != "uncontended" && s != "handoff" && s != "contended" && s != "rw") {
          usage_error("--scenarios: '" + s + "' is not one of uncontended, handoff, contended, rw");
        }
        c.scenarios.insert(s);
      }
      if (c.scenarios.empty()) usage_error("--scenarios: empty list");
    } else if (name == "--list_locks") {
      c.list_locks = true;
    } else {
      passthrough.push_back(arg);
    }
  }
  if (!cs_set) c.cs_ns = c.mode == "quick" ? std::vector<long>{100} : std::vector<long>{0, 100, 1000};
  if (!local_set) c.local_ns = c.mode == "quick" ? std::vector<long>{100} : std::vector<long>{100, 1000};
  if (c.max_run_ms == 0) c.max_run_ms = c.mode == "quick" ? 250 : 3000;
  if (!rw_cs_set) c.rw_cs_ns = {100};
  if (!rw_local_set) c.rw_local_ns = c.mode == "quick" ? std::vector<long>{100} : std::vector<long>{100, 1000};
  return c;
}

std::string join(const std::vector<long>& v) {
  std::string s;
  for (long x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

std::string compiler() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("gcc ") + __VERSION__;
#else
  return "unknown";
#endif
}

// Everything a reader of the JSON needs to know what was measured where.
void add_context(const config& c, int argc, char** argv, const std::vector<std::string>& catalogue) {
  struct utsname u {};
  uname(&u);
  benchmark::AddCustomContext("machine.cpu_model", cpu_model());
  benchmark::AddCustomContext("machine.cpus_allowed", std::to_string(sb::allowed_cpus().size()));
  benchmark::AddCustomContext("machine.kernel", std::string(u.sysname) + " " + u.release + " " + u.machine);
  benchmark::AddCustomContext("machine.compiler", compiler());
  benchmark::AddCustomContext("machine.glibc", gnu_get_libc_version());
  benchmark::AddCustomContext("spinwise.backend", std::string(spinwise::backend_name()));
  benchmark::AddCustomContext("spinwise.relax", std::string(spinwise::to_string(spinwise::active_relax())));
  benchmark::AddCustomContext("spinwise.relax_ns", std::to_string(spinwise::relax_ns_here()));
  benchmark::AddCustomContext("spinwise.counter", std::string(spinwise::counter_name()));
  benchmark::AddCustomContext("spinwise.counter_hz", std::to_string(spinwise::counter_frequency()));
  benchmark::AddCustomContext("bench.mode", c.mode);
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
  if (hand) {
    benchmark::RegisterBenchmark("handoff/c2c_oneway", sb::run_c2c)->UseRealTime();
    note({"c2c_oneway", sb::lock_kind::floor, false});
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
      single(benchmark::RegisterBenchmark(("uncontended_shared/" + n).c_str(), sb::run_uncontended_shared<L>));
    }
    if (rw) {
      for (long pct : c.read_pct) {
        for (long cs : c.rw_cs_ns) {
          for (long local : c.rw_local_ns) {
            auto holder = std::make_shared<sb::arena_holder<L>>();
            const std::uint64_t cs_it = sb::iterations_for_ns(static_cast<double>(cs));
            const std::uint64_t local_it = sb::iterations_for_ns(static_cast<double>(local));
            const auto permille = static_cast<unsigned>(pct * 10);
            const std::string name = "rw/" + n + "/read_pct:" + std::to_string(pct) + "/cs_ns:" + std::to_string(cs) +
                                     "/local_ns:" + std::to_string(local);
            threads(benchmark::RegisterBenchmark(name.c_str(), [holder, cs_it, local_it, permille](benchmark::State& st) {
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
  std::vector<std::string> passthrough;
  const config c = parse_flags(argc, argv, passthrough);

#if SPINWISE_BENCH_HAVE_ABSL
  // Debian's abseil may be built without NDEBUG, which turns on deadlock detection: a lock-order
  // graph updated on every Lock(). Nobody runs a production mutex that way.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
  for (const auto& m : sb::missing_peers()) std::fprintf(stderr, "spinwise-bench: skipping %s\n", m.c_str());

  // glibc takes a cheaper, non-atomic path in pthread_mutex_lock until the process has created a
  // thread; a real program has threads, so the uncontended numbers must be taken after one.
  std::thread([] {}).join();
  sb::calibrate_work();
  sb::run_cap() = std::chrono::milliseconds(c.max_run_ms);
  (void)spinwise::relax_ns_here();
  (void)spinwise::counter_frequency();

  // The mode's defaults first, so any --benchmark_* flag the user gives overrides them.
  std::vector<std::string> args{argv[0]};
  if (c.mode == "quick") {
    // Time-bounded, not a fixed count: a FIFO lock with a preempted next owner, or a pinned
    // handoff on a loaded machine, can take milliseconds per acquisition, and a fixed count would
    // then take minutes. Google Benchmark stops at the first trial run that lasts min_time.
    args.emplace_back("--benchmark_min_time=0.01");
  } else {
    args.emplace_back("--benchmark_min_time=0.3");
    args.emplace_back("--benchmark_repetitions=3");
    args.emplace_back("--benchmark_enable_random_interleaving=true");
  }
  args.insert(args.end(), passthrough.begin(), passthrough.end());
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
  for (const auto& a : passthrough) {
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
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
