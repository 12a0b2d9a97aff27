#include "spinwise/runtime/stats_report.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <mutex>

namespace spinwise {
namespace {

std::mutex g_baseline_mu;
std::map<std::string, lock_stats_totals> g_baseline;  // guarded by g_baseline_mu

void subtract(lock_stats_totals& a, const lock_stats_totals& b) {
  a.acquisitions -= b.acquisitions;  // unsigned: modulo 2^64
  a.contended -= b.contended;
  a.rounds -= b.rounds;
  a.relaxes -= b.relaxes;
  a.spin_ticks -= b.spin_ticks;
  a.yields -= b.yields;
  a.parks -= b.parks;
  a.wait_ticks -= b.wait_ticks;
  for (std::size_t i = 0; i < kWaitHistogramBuckets; ++i) a.histogram[i] -= b.histogram[i];
}

void add(lock_stats_totals& a, const lock_stats_totals& b) {
  a.acquisitions += b.acquisitions;
  a.contended += b.contended;
  a.rounds += b.rounds;
  a.relaxes += b.relaxes;
  a.spin_ticks += b.spin_ticks;
  a.yields += b.yields;
  a.parks += b.parks;
  a.wait_ticks += b.wait_ticks;
  a.max_wait_ticks = std::max(a.max_wait_ticks, b.max_wait_ticks);
  for (std::size_t i = 0; i < kWaitHistogramBuckets; ++i) a.histogram[i] += b.histogram[i];
}

double process_cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

// Everything recorded since the process started, merged by class name.
std::map<std::string, lock_stats_totals> collect_all() {
  std::map<std::string, lock_stats_totals> all;
  for_each_stats_class([&](std::string_view name, const lock_stats_totals& t) { add(all[std::string(name)], t); });
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

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// "12.3 us" style: the unit that keeps 1..999.
std::string human_ns(double ns) {
  if (ns >= 1e9) return fmt("%.2f s", ns / 1e9);
  if (ns >= 1e6) return fmt("%.2f ms", ns / 1e6);
  if (ns >= 1e3) return fmt("%.2f us", ns / 1e3);
  return fmt("%.0f ns", ns);
}

}  // namespace

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
  const double ns_per_tick = s.counter_hz ? 1e9 / static_cast<double>(s.counter_hz) : 0.0;
  if (t.contended) m.spin_rounds_per_wait = static_cast<double>(t.rounds) / static_cast<double>(t.contended);
  if (t.acquisitions) m.contended_share = static_cast<double>(t.contended) / static_cast<double>(t.acquisitions);
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
                  "%s spin waits %" PRIu64 ", rounds %" PRIu64 ", OS waits %" PRIu64 ", yields %" PRIu64 "\n",
                  c->name.c_str(), t.contended, t.rounds, t.parks, t.yields);
    out += line;
    std::snprintf(line, sizeof line,
                  "  Spin rounds per wait: %.2f; relaxes %" PRIu64 ", spin time %s (%.1f%% of process CPU)\n",
                  m.spin_rounds_per_wait, t.relaxes, human_ns(m.spin_ns).c_str(), 100.0 * m.spin_cpu_share);
    out += line;
    std::snprintf(line, sizeof line,
                  "  Acquisitions %" PRIu64 " (%.2f%% contended); wait total %s, mean %s, max %s, p50 <= %s, "
                  "p99 <= %s\n",
                  t.acquisitions, 100.0 * m.contended_share, human_ns(m.wait_ns).c_str(),
                  human_ns(m.mean_wait_ns).c_str(), human_ns(m.max_wait_ns).c_str(), human_ns(m.p50_wait_ns).c_str(),
                  human_ns(m.p99_wait_ns).c_str());
    out += line;
  }
  return out;
}

std::string format_stats_json(const stats_snapshot& s) {
  std::string out = "{\"schema\":\"spinwise.lock_stats\",\"version\":1";
  out += ",\"wall_seconds\":" + fmt("%.6f", s.wall_seconds);
  out += ",\"process_cpu_seconds\":" + fmt("%.6f", s.process_cpu_seconds);
  out += ",\"counter_hz\":" + std::to_string(s.counter_hz) + ",\"classes\":[";
  bool first = true;
  for (const lock_class_stats& c : s.classes) {
    const lock_stats_totals& t = c.totals;
    const lock_class_summary m = summarize(s, c);
    out += first ? "{" : ",{";
    first = false;
    out += "\"name\":" + json_string(c.name);
    const std::pair<const char*, std::uint64_t> counters[] = {
        {"acquisitions", t.acquisitions}, {"contended", t.contended},     {"spin_rounds", t.rounds},
        {"relaxes", t.relaxes},           {"spin_ticks", t.spin_ticks},   {"yields", t.yields},
        {"os_waits", t.parks},            {"wait_ticks", t.wait_ticks},   {"max_wait_ticks", t.max_wait_ticks}};
    for (const auto& [k, v] : counters) out += std::string(",\"") + k + "\":" + std::to_string(v);
    const std::pair<const char*, double> derived[] = {
        {"spin_rounds_per_wait", m.spin_rounds_per_wait}, {"contended_share", m.contended_share},
        {"spin_ns", m.spin_ns},                           {"spin_cpu_share", m.spin_cpu_share},
        {"wait_ns", m.wait_ns},                           {"mean_wait_ns", m.mean_wait_ns},
        {"max_wait_ns", m.max_wait_ns},                   {"p50_wait_ns_upper", m.p50_wait_ns},
        {"p99_wait_ns_upper", m.p99_wait_ns}};
    for (const auto& [k, v] : derived) out += std::string(",\"") + k + "\":" + fmt("%.6g", v);
    out += ",\"wait_histogram_log2_ticks\":[";
    for (std::size_t b = 0; b < kWaitHistogramBuckets; ++b) {
      out += (b ? "," : "") + std::to_string(t.histogram[b]);
    }
    out += "]}";
  }
  return out + "]}";
}

}  // namespace spinwise
