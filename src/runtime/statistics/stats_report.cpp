#include "spinwise/runtime/stats_report.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <nlohmann/json.hpp>

#include "common/format_number.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/detail/cpu_time.hpp"

namespace spinwise {
namespace {

std::mutex g_baseline_mu;
std::map<std::string, lock_stats_totals> g_baseline;  // guarded by g_baseline_mu

// a = op(a, b) for every counter of the table and every histogram bucket.
template <class Op>
void combine(lock_stats_totals& a, const lock_stats_totals& b, Op op) {
  for (const lock_stats_counter& c : kLockStatsCounters) {
    a.*c.total = op(a.*c.total, b.*c.total);
    for (std::size_t m = 0; m < kLockModes; ++m)
      a.modes[m].*c.total = op(a.modes[m].*c.total, b.modes[m].*c.total);
  }
  for (std::size_t i = 0; i < kWaitHistogramBuckets; ++i) a.histogram[i] = op(a.histogram[i], b.histogram[i]);
}

// Unsigned: modulo 2^64, so a counter that wrapped in between still gives the true difference.
void subtract(lock_stats_totals& a, const lock_stats_totals& b) { combine(a, b, std::minus<>()); }

void add(lock_stats_totals& a, const lock_stats_totals& b) {
  combine(a, b, std::plus<>());
  a.max_wait_ticks = std::max(a.max_wait_ticks, b.max_wait_ticks);
}

double process_cpu_seconds() { return static_cast<double>(detail::process_cpu_ns()) * 1e-9; }

// Everything recorded since the process started, merged by class name.
std::map<std::string, lock_stats_totals> collect_all() {
  std::map<std::string, lock_stats_totals> all;
  for_each_stats_class(
      [&](std::string_view name, const lock_stats_totals& t) { add(all[std::string(name)], t); });
  return all;
}

double bucket_upper_ticks(std::size_t b) { return static_cast<double>(std::uint64_t{2} << b) - 1.0; }

// Upper bound (ticks) of the bucket holding quantile q of the histogram; 0 when empty.
double histogram_quantile_ticks(const lock_stats_totals& t, double q) {
  std::uint64_t n = 0;
  for (std::uint64_t c : t.histogram) n += c;
  if (n == 0) return 0;
  const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(n - 1)) + 1;
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < kWaitHistogramBuckets; ++b) {
    seen += t.histogram[b];
    if (seen >= rank) return bucket_upper_ticks(b);
  }
  return bucket_upper_ticks(kWaitHistogramBuckets - 1);
}

using detail::fmt;

// "12.3 us" style: the unit that keeps 1..999.
std::string human_ns(double ns) {
  if (ns >= 1e9) return fmt("%.2f s", ns / 1e9);
  if (ns >= 1e6) return fmt("%.2f ms", ns / 1e6);
  if (ns >= 1e3) return fmt("%.2f us", ns / 1e3);
  return fmt("%.0f ns", ns);
}

// The counters the SEMAPHORES lines print, as counts or as times (upgrades on a line of their own,
// only where there were some: a mutex has none). The text lists any other counter of the table on
// a line of its own after them, so a counter added to the table is in the text.
constexpr std::uint64_t lock_stats_counts::*kSemaphoreCounters[] = {
    &lock_stats_counts::contended,  &lock_stats_counts::rounds,       &lock_stats_counts::parks,
    &lock_stats_counts::yields,     &lock_stats_counts::spin_won,     &lock_stats_counts::relaxes,
    &lock_stats_counts::spin_ticks, &lock_stats_counts::acquisitions, &lock_stats_counts::wait_ticks,
    &lock_stats_counts::upgrades};

bool in_semaphore_lines(std::uint64_t lock_stats_counts::*counter) {
  return std::find(std::begin(kSemaphoreCounters), std::end(kSemaphoreCounters), counter) !=
         std::end(kSemaphoreCounters);
}

double tick_ns(const stats_snapshot& s) {
  return s.counter_hz ? 1e9 / static_cast<double>(s.counter_hz) : 0.0;
}

}  // namespace

bool mode_reported(const lock_stats_totals& t, lock_mode m) {
  if (m == lock_mode::x) return true;
  const lock_stats_counts& c = t.mode(m);
  for (const lock_stats_counter& k : kLockStatsCounters) {
    if (c.*k.total != 0) return true;
  }
  return false;
}

stats_snapshot take_stats_snapshot() {
  stats_snapshot s;
  s.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  s.process_cpu_seconds = process_cpu_seconds();
  s.counter_hz = counter_frequency();
  std::map<std::string, lock_stats_totals> all = collect_all();
  std::lock_guard<std::mutex> g(g_baseline_mu);
  for (auto& [name, t] : all) {
    auto it = g_baseline.find(name);
    if (it != g_baseline.end()) subtract(t, it->second);
    s.classes.push_back({name, t});
  }
  return s;
}

// Lock order: the list's lock, then the classes in list order, then the baseline's; nothing else
// holds two of them (a class's lock is taken alone, the baseline's after collect_all released).
void stats_atfork_prepare() noexcept {
  detail::process().lists_lock.lock();  // no class is published while the child is made
  for (detail::stats_class_record* c = detail::stats_classes_head(); c != nullptr; c = c->next) c->mu.lock();
  g_baseline_mu.lock();
}

void stats_atfork_parent() noexcept {
  g_baseline_mu.unlock();
  for (detail::stats_class_record* c = detail::stats_classes_head(); c != nullptr; c = c->next)
    c->mu.unlock();
  detail::process().lists_lock.unlock();
}

void stats_atfork_child() noexcept {
  new (&g_baseline_mu) std::mutex;
  for (detail::stats_class_record* c = detail::stats_classes_head(); c != nullptr; c = c->next)
    new (&c->mu) std::mutex;
  detail::process().lists_lock.unlock();
}

stats_snapshot diff_stats(const stats_snapshot& before, const stats_snapshot& after) {
  stats_snapshot d;
  d.wall_seconds = after.wall_seconds - before.wall_seconds;
  d.process_cpu_seconds = after.process_cpu_seconds - before.process_cpu_seconds;
  d.counter_hz = after.counter_hz;
  for (const lock_class_stats& a : after.classes) {
    lock_class_stats c = a;
    auto it = std::find_if(before.classes.begin(), before.classes.end(),
                           [&](const lock_class_stats& b) { return b.name == a.name; });
    if (it != before.classes.end()) {
      subtract(c.totals, it->totals);
      if (a.totals.max_wait_ticks <= it->totals.max_wait_ticks) {
        c.totals.max_wait_ticks = 0;
        for (std::size_t b = kWaitHistogramBuckets; b-- > 0;) {
          if (c.totals.histogram[b] != 0) {
            c.totals.max_wait_ticks = static_cast<std::uint64_t>(bucket_upper_ticks(b));
            break;
          }
        }
      }
    }
    d.classes.push_back(c);
  }
  return d;
}

void reset_stats() {
  std::map<std::string, lock_stats_totals> all = collect_all();
  {
    std::lock_guard<std::mutex> g(g_baseline_mu);
    g_baseline = std::move(all);
  }
  reset_max_waits();
}

lock_class_summary summarize(const stats_snapshot& s, const lock_class_stats& c) {
  const lock_stats_totals& t = c.totals;
  lock_class_summary m;
  const double ns_per_tick = tick_ns(s);
  if (t.contended) {
    m.spin_rounds_per_wait = static_cast<double>(t.rounds) / static_cast<double>(t.contended);
    m.spin_efficiency = static_cast<double>(t.spin_won) / static_cast<double>(t.contended);
  }
  if (t.acquisitions)
    m.contended_share = static_cast<double>(t.contended) / static_cast<double>(t.acquisitions);
  m.spin_ns = static_cast<double>(t.spin_ticks) * ns_per_tick;
  if (s.process_cpu_seconds > 0) m.spin_cpu_share = m.spin_ns / (s.process_cpu_seconds * 1e9);
  m.wait_ns = static_cast<double>(t.wait_ticks) * ns_per_tick;
  if (t.contended) m.mean_wait_ns = m.wait_ns / static_cast<double>(t.contended);
  m.max_wait_ns = static_cast<double>(t.max_wait_ticks) * ns_per_tick;
  m.p50_wait_ns = histogram_quantile_ticks(t, 0.50) * ns_per_tick;
  m.p99_wait_ns = histogram_quantile_ticks(t, 0.99) * ns_per_tick;
  return m;
}

std::string format_stats_text(const stats_snapshot& s) {
  std::vector<const lock_class_stats*> order;
  for (const lock_class_stats& c : s.classes) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](const lock_class_stats* a, const lock_class_stats* b) {
    return a->totals.wait_ticks > b->totals.wait_ticks;
  });
  std::string out = "----------\nSEMAPHORES\n----------\n";
  char line[512];
  std::snprintf(line, sizeof line, "spinwise lock classes: %zu; interval %.3f s wall, %.3f s process CPU\n",
                s.classes.size(), s.wall_seconds, s.process_cpu_seconds);
  out += line;
  for (const lock_class_stats* c : order) {
    const lock_stats_totals& t = c->totals;
    const lock_class_summary m = summarize(s, *c);
    std::snprintf(line, sizeof line,
                  "%s spin waits %" PRIu64 ", rounds %" PRIu64 ", OS waits %" PRIu64 ", yields %" PRIu64
                  ", won before an OS wait %" PRIu64 " (%.1f%%)\n",
                  c->name.c_str(), t.contended, t.rounds, t.parks, t.yields, t.spin_won,
                  100.0 * m.spin_efficiency);
    out += line;
    std::snprintf(line, sizeof line,
                  "  Spin rounds per wait: %.2f; relaxes %" PRIu64 ", spin time %s (%.1f%% of process CPU)\n",
                  m.spin_rounds_per_wait, t.relaxes, human_ns(m.spin_ns).c_str(), 100.0 * m.spin_cpu_share);
    out += line;
    std::snprintf(line, sizeof line,
                  "  Acquisitions %" PRIu64
                  " (%.2f%% contended); wait total %s, mean %s, max %s, p50 <= %s, "
                  "p99 <= %s\n",
                  t.acquisitions, 100.0 * m.contended_share, human_ns(m.wait_ns).c_str(),
                  human_ns(m.mean_wait_ns).c_str(), human_ns(m.max_wait_ns).c_str(),
                  human_ns(m.p50_wait_ns).c_str(), human_ns(m.p99_wait_ns).c_str());
    out += line;
    if (t.upgrades != 0) {
      std::snprintf(line, sizeof line, "  Upgrades SX -> X %" PRIu64 " (not acquisitions)\n", t.upgrades);
      out += line;
    }
    std::string others;
    for (const lock_stats_counter& k : kLockStatsCounters) {
      if (in_semaphore_lines(k.total)) continue;
      others += (others.empty() ? "  Other counters: " : ", ") + std::string(k.key) + " " +
                std::to_string(t.*k.total);
    }
    if (!others.empty()) out += others + "\n";
    // The shared locks' modes, InnoDB's RW-shared / RW-sx / RW-excl lines.
    if (!mode_reported(t, lock_mode::s) && !mode_reported(t, lock_mode::sx)) continue;
    for (lock_mode md : {lock_mode::s, lock_mode::sx, lock_mode::x}) {
      if (!mode_reported(t, md)) continue;
      const lock_stats_counts& k = t.mode(md);
      const double wait_ns = static_cast<double>(k.wait_ticks) * tick_ns(s);
      std::snprintf(line, sizeof line,
                    "  %s spin waits %" PRIu64 ", rounds %" PRIu64 ", OS waits %" PRIu64
                    "; acquisitions %" PRIu64 ", wait total %s, spin time %s\n",
                    std::string(lock_mode_innodb_name(md)).c_str(), k.contended, k.rounds, k.parks,
                    k.acquisitions, human_ns(wait_ns).c_str(),
                    human_ns(static_cast<double>(k.spin_ticks) * tick_ns(s)).c_str());
      out += line;
    }
  }
  return out;
}

std::string format_stats_json(const stats_snapshot& s) {
  using json = nlohmann::ordered_json;
  json doc;
  doc["format"] = std::string(kStatsFormat);
  doc["version"] = kStatsFormatVersion;
  doc["wall_seconds"] = s.wall_seconds;
  doc["process_cpu_seconds"] = s.process_cpu_seconds;
  doc["counter_hz"] = s.counter_hz;
  json classes = json::array();
  for (const lock_class_stats& c : s.classes) {
    const lock_stats_totals& t = c.totals;
    const lock_class_summary m = summarize(s, c);
    json j;
    j["name"] = c.name;
    for (const lock_stats_counter& k : kLockStatsCounters) j[std::string(k.key)] = t.*k.total;
    json modes = json::object();
    for (lock_mode md : {lock_mode::x, lock_mode::s, lock_mode::sx}) {
      if (!mode_reported(t, md)) continue;
      json mj;
      for (const lock_stats_counter& k : kLockStatsCounters) mj[std::string(k.key)] = t.mode(md).*k.total;
      modes[std::string(lock_mode_key(md))] = std::move(mj);
    }
    j["modes"] = std::move(modes);
    j["max_wait_ticks"] = t.max_wait_ticks;
    for (const lock_class_figure& f : kLockClassFigures) j[std::string(f.key)] = m.*f.value;
    j["wait_histogram_log2_ticks"] = t.histogram;
    classes.push_back(std::move(j));
  }
  doc["classes"] = std::move(classes);
  // A class name is any bytes the engine chose: invalid UTF-8 is replaced (U+FFFD), not thrown.
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

// Prometheus label values escape backslash, double quote and newline; HELP text backslash and
// newline (the text format, version 0.0.4).
std::string prom_escape(std::string_view v, bool label) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && label) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

// A double as the format wants it: the JSON report's shortest round-trip digits, and +Inf / -Inf /
// NaN spelled out (JSON has none).
std::string prom_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return nlohmann::json(v).dump();
}

struct prom_family {
  std::string& out;
  void head(const std::string& name, const std::string& type, std::string_view help) {
    out += "# HELP " + name + " " + prom_escape(help, false) + "\n# TYPE " + name + " " + type + "\n";
  }
  void sample(const std::string& name, const std::string& labels, const std::string& value) {
    out += name + "{" + labels + "} " + value + "\n";
  }
};

// The most ticks a wait of at most `ns` nanoseconds lasts at `hz`: floor(ns * hz / 1e9), exact in
// 64 bits (hz's whole GHz and its remainder apart) for ns up to 1.8e10 and hz below 1e18.
std::uint64_t ticks_within_ns(std::uint64_t ns, std::uint64_t hz) {
  constexpr std::uint64_t kNsPerSecond = 1'000'000'000;
  return ns * (hz / kNsPerSecond) + ns * (hz % kNsPerSecond) / kNsPerSecond;
}
static_assert(std::size(kPrometheusWaitBoundsNs) > 0 &&
                  kPrometheusWaitBoundsNs[std::size(kPrometheusWaitBoundsNs) - 1] <= 18'000'000'000u,
              "ticks_within_ns is exact for bounds up to 1.8e10 ns");

}  // namespace

std::array<std::uint64_t, std::size(kPrometheusWaitBoundsNs)> prometheus_wait_buckets(
    const lock_stats_totals& t, std::uint64_t counter_hz) {
  constexpr std::size_t kBounds = std::size(kPrometheusWaitBoundsNs);
  std::array<std::uint64_t, kBounds> limit{};  // the most ticks within each bound
  for (std::size_t i = 0; i < kBounds; ++i)
    limit[i] = ticks_within_ns(kPrometheusWaitBoundsNs[i], counter_hz);
  std::array<std::uint64_t, kBounds> cumulative{};
  // The last log2 bucket also holds every longer wait: it has no upper edge, so +Inf only.
  for (std::size_t b = 0; b + 1 < kWaitHistogramBuckets; ++b) {
    const std::uint64_t longest = (std::uint64_t{2} << b) - 1;  // ticks: bucket b is [2^b, 2^(b+1))
    const std::size_t first = static_cast<std::size_t>(
        std::find_if(limit.begin(), limit.end(), [&](std::uint64_t l) { return longest <= l; }) -
        limit.begin());
    for (std::size_t i = first; i < kBounds; ++i) cumulative[i] += t.histogram[b];
  }
  return cumulative;
}

std::string format_stats_prometheus(const stats_snapshot& s) {
  std::string out;
  prom_family f{out};
  const double sec_per_tick = s.counter_hz ? 1.0 / static_cast<double>(s.counter_hz) : 0.0;
  std::vector<std::string> labels;
  for (const lock_class_stats& c : s.classes) labels.push_back("class=\"" + prom_escape(c.name, true) + "\"");
  for (const lock_stats_counter& k : kLockStatsCounters) {
    if (k.total == &lock_stats_counts::wait_ticks) continue;       // the wait histogram's _sum, below
    const bool ticks = k.total == &lock_stats_counts::spin_ticks;  // exposed in seconds
    const std::string name = ticks ? std::string("spinwise_lock_spin_seconds_total")
                                   : "spinwise_lock_" + std::string(k.key) + "_total";
    f.head(name, "counter", std::string(k.help) + (ticks ? " (in seconds)" : ""));
    for (std::size_t i = 0; i < s.classes.size(); ++i) {
      const lock_stats_totals& t = s.classes[i].totals;
      for (lock_mode md : {lock_mode::x, lock_mode::s, lock_mode::sx}) {
        if (!mode_reported(t, md)) continue;
        const std::uint64_t v = t.mode(md).*k.total;
        f.sample(name, labels[i] + ",mode=\"" + std::string(lock_mode_key(md)) + "\"",
                 ticks ? prom_number(static_cast<double>(v) * sec_per_tick) : std::to_string(v));
      }
    }
  }
  // The histogram, on the fixed bounds of kPrometheusWaitBoundsNs (prometheus_wait_buckets says how
  // the log2 tick buckets map onto them). Every bound is written, empty or not: a series that
  // appeared only once a wait reached it would be missing from a sum over hosts until then.
  f.head("spinwise_lock_wait_seconds", "histogram", "time from the first failed attempt to acquisition");
  for (std::size_t i = 0; i < s.classes.size(); ++i) {
    const lock_stats_totals& t = s.classes[i].totals;
    const auto cumulative = prometheus_wait_buckets(t, s.counter_hz);
    for (std::size_t k = 0; k < cumulative.size(); ++k) {
      f.sample(
          "spinwise_lock_wait_seconds_bucket",
          labels[i] + ",le=\"" + prom_number(static_cast<double>(kPrometheusWaitBoundsNs[k]) / 1e9) + "\"",
          std::to_string(cumulative[k]));
    }
    std::uint64_t count = 0;
    for (std::uint64_t h : t.histogram) count += h;
    f.sample("spinwise_lock_wait_seconds_bucket", labels[i] + ",le=\"+Inf\"", std::to_string(count));
    f.sample("spinwise_lock_wait_seconds_sum", labels[i],
             prom_number(static_cast<double>(t.wait_ticks) * sec_per_tick));
    f.sample("spinwise_lock_wait_seconds_count", labels[i], std::to_string(count));
  }
  f.head("spinwise_lock_max_wait_seconds", "gauge",
         "the longest wait (since start or reset, or in the interval)");
  for (std::size_t i = 0; i < s.classes.size(); ++i) {
    f.sample("spinwise_lock_max_wait_seconds", labels[i],
             prom_number(static_cast<double>(s.classes[i].totals.max_wait_ticks) * sec_per_tick));
  }
  f.head("spinwise_lock_spin_efficiency", "gauge",
         "share of contended acquisitions won before any futex wait (0 when none was contended)");
  for (std::size_t i = 0; i < s.classes.size(); ++i) {
    f.sample("spinwise_lock_spin_efficiency", labels[i],
             prom_number(summarize(s, s.classes[i]).spin_efficiency));
  }
  out +=
      "# HELP spinwise_process_cpu_seconds user + system CPU of the process (in the interval, for a diff)\n"
      "# TYPE spinwise_process_cpu_seconds gauge\nspinwise_process_cpu_seconds " +
      prom_number(s.process_cpu_seconds) + "\n";
  out +=
      "# HELP spinwise_snapshot_wall_seconds steady-clock seconds of the snapshot (for a diff: its "
      "interval)\n"
      "# TYPE spinwise_snapshot_wall_seconds gauge\nspinwise_snapshot_wall_seconds " +
      prom_number(s.wall_seconds) + "\n";
  return out;
}

}  // namespace spinwise
