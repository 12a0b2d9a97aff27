#include "spinwise/runtime/c2c.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <thread>

#if SPINWISE_HAVE_NUMA
#include <numa.h>
#endif

#include "spinwise/arch.hpp"
#include "spinwise/runtime/affinity.hpp"
#include "spinwise/runtime/counter_timing.hpp"
#include "spinwise/runtime/order_stats.hpp"

namespace spinwise {
namespace {

// The transferred line, alone on its pair of lines.
struct alignas(kCacheLinePad) line {
  std::atomic<std::uint64_t> v{0};
};

// Where the line lives: on CPU a's NUMA node when libnuma works, else the heap.
class line_memory {
 public:
  explicit line_memory(int cpu) {
#if SPINWISE_HAVE_NUMA
    if (numa_available() >= 0) {
      const int node = numa_node_of_cpu(cpu);
      if (node >= 0) {
        raw_ = numa_alloc_onnode(sizeof(line), node);
        if (raw_ != nullptr) {
          numa_ = true;
          l_ = new (raw_) line;
          return;
        }
      }
    }
#else
    (void)cpu;
#endif
    l_ = new line;
  }
  line_memory(const line_memory&) = delete;
  line_memory& operator=(const line_memory&) = delete;
  ~line_memory() {
    if (numa_) {
      l_->~line();
#if SPINWISE_HAVE_NUMA
      numa_free(raw_, sizeof(line));
#endif
    } else {
      delete l_;
    }
  }
  line* get() const noexcept { return l_; }
  bool on_numa_node() const noexcept { return numa_; }

 private:
  void* raw_ = nullptr;
  line* l_ = nullptr;
  bool numa_ = false;
};

// One run of `round_trips` between the calling thread (already on a) and a helper on b.
// Returns counter ticks per round trip, or a negative value (and why) on failure.
double one_run(int b, line& l, std::uint32_t round_trips, std::uint32_t timeout_ms, std::string& why) {
  alignas(kCacheLinePad) std::atomic<int> ready{0};  // 1 helper pinned, -1 helper could not pin
  alignas(kCacheLinePad) std::atomic<bool> abort{false};
  l.v.store(0, std::memory_order_relaxed);
  std::thread helper([&] {
    if (!runtime::pin_to(b)) {
      ready.store(-1, std::memory_order_release);
      return;
    }
    ready.store(1, std::memory_order_release);  // pairs with the acquire load below
    for (std::uint64_t i = 0; i < round_trips; ++i) {
      std::uint32_t spins = 0;
      // Pairs with the owner's release store of 2i+1: the line has come over.
      while (l.v.load(std::memory_order_acquire) != 2 * i + 1) {
        if ((++spins & 0x3ff) == 0 && abort.load(std::memory_order_relaxed)) return;
      }
      l.v.store(2 * i + 2, std::memory_order_release);  // 2i+1 -> 2i+2: send it back
    }
  });
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::milliseconds(timeout_ms);
  int r = 0;
  while ((r = ready.load(std::memory_order_acquire)) == 0) {
    if (clock::now() > deadline) break;
    std::this_thread::yield();
  }
  double result = -1;
  if (r == 1) {
    bool timed_out = false;
    const std::uint64_t c0 = read_counter();
    for (std::uint64_t i = 0; i < round_trips && !timed_out; ++i) {
      l.v.store(2 * i + 1, std::memory_order_release);  // 2i -> 2i+1: hand the line over
      std::uint32_t spins = 0;
      // Pairs with the helper's release store of 2i+2.
      while (l.v.load(std::memory_order_acquire) != 2 * i + 2) {
        if ((++spins & 0x3ff) == 0 && clock::now() > deadline) {
          timed_out = true;
          break;
        }
      }
    }
    const std::uint64_t c1 = read_counter();
    if (timed_out) {
      why = "timed out after " + std::to_string(timeout_ms) + " ms (are both CPUs really running?)";
    } else {
      result = runtime::ticks_per_op(c0, c1, 0.0, round_trips);
    }
  } else {
    why =
        r < 0 ? "could not pin the helper thread to cpu " + std::to_string(b) : "helper thread did not start";
  }
  abort.store(true, std::memory_order_relaxed);
  helper.join();
  return result;
}

}  // namespace

namespace detail {

c2c_result c2c_matrix(const std::vector<int>& cpus, double ns_per_tick, const c2c_pair_measure& measure) {
  c2c_result res;
  res.cpus = cpus;
  const std::size_t n = cpus.size();
  res.one_way_ns.assign(n * n, -1.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      const int a = cpus[i], b = cpus[j];
      std::string why;
      std::vector<double> runs = measure(a, b, why);
      if (why.empty() && runs.empty()) why = "no run completed";
      if (!why.empty()) {
        res.errors.push_back("cpus " + std::to_string(a) + "-" + std::to_string(b) + ": " + why);
        continue;
      }
      const double one_way = runtime::median(std::move(runs)) * ns_per_tick / 2.0;
      res.one_way_ns[i * n + j] = one_way;
      res.one_way_ns[j * n + i] = one_way;
    }
  }
  return res;
}

}  // namespace detail

c2c_result measure_c2c(const c2c_options& opt) {
  runtime::scoped_pin pin;  // puts the caller's mask back
  const std::uint32_t samples = std::max<std::uint32_t>(1, opt.samples);
  const std::uint32_t trips = std::max<std::uint32_t>(1, opt.round_trips);
  bool any_numa = false;
  const auto measure_pair = [&](int a, int b, std::string& why) {
    std::vector<double> runs;
    if (!pin.pin(a)) {
      why = "cannot pin to cpu " + std::to_string(a);
      return runs;
    }
    line_memory mem(a);
    any_numa = any_numa || mem.on_numa_node();
    for (std::uint32_t s = 0; s < samples && why.empty(); ++s) {
      const double ticks = one_run(b, *mem.get(), trips, opt.timeout_ms, why);
      if (ticks >= 0) runs.push_back(ticks);
    }
    return runs;
  };
  const double ns_per_tick = runtime::ticks_to_ns(1.0, counter_frequency());
  c2c_result res =
      detail::c2c_matrix(opt.cpus.empty() ? runtime::allowed_cpus() : opt.cpus, ns_per_tick, measure_pair);
  res.method =
      "store/load ping-pong on one cache line (no relax in the waits), one-way = round trip / 2, median of " +
      std::to_string(samples) + " runs of " + std::to_string(trips) + " round trips; line allocated " +
      (any_numa ? "with libnuma on the first CPU's node" : "on the heap (no libnuma)");
  return res;
}

}  // namespace spinwise
