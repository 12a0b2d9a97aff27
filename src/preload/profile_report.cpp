// The per-lock profile's report at exit (profile.hpp, profile_table.hpp): the table's locks and
// condition variables, each with its shares' figures added, as JSON with the module map.

#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>

#include "interposer.hpp"
#include "profile_table.hpp"
#include "spinwise/runtime/stats_report.hpp"

namespace spinwise::preload {

using namespace profile_table;

namespace {

constexpr const char* kObjectNames[] = {"none", "mutex", "recursive", "errorcheck", "rwlock", "cond"};

struct json_out {
  std::string s;
  void raw(const char* t) { s += t; }
  void num(const char* key, std::uint64_t v) {
    char b[64];
    std::snprintf(b, sizeof b, "\"%s\":%" PRIu64 ",", key, v);
    s += b;
  }
  void hex(const char* key, std::uintptr_t v) {
    char b[64];
    std::snprintf(b, sizeof b, "\"%s\":\"0x%" PRIxPTR "\",", key, v);
    s += b;
  }
  void str(const char* key, const char* v) {
    s += '"';
    s += key;
    s += "\":\"";
    for (const char* c = v; *c != '\0'; ++c) {
      if (*c == '"' || *c == '\\') {
        s += '\\';
        s += *c;
      } else if (static_cast<unsigned char>(*c) < 0x20) {
        char b[8];
        std::snprintf(b, sizeof b, "\\u%04x", *c);
        s += b;
      } else {
        s += *c;
      }
    }
    s += "\",";
  }
  // Ends an object or array: the trailing comma of its last member goes.
  void close(char c) {
    if (!s.empty() && s.back() == ',') s.pop_back();
    s += c;
    s += ',';
  }
};

std::uint64_t ns_of(std::uint64_t ticks, double hz) noexcept {
  return static_cast<std::uint64_t>(static_cast<double>(ticks) * 1e9 / hz);
}

// The upper bound, in ticks, of the bucket that holds the q-quantile of the histogram.
std::uint64_t quantile_ticks(const totals& t, std::uint64_t n, double q) noexcept {
  const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(n - 1)) + 1;
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < kBuckets; ++b) {
    seen += t.histogram[b];
    if (seen >= rank) return bucket_end(b);
  }
  return bucket_end(kBuckets - 1);
}

void write_entry(json_out& j, std::uintptr_t key, const entry& e, const totals& t, double hz) {
  const auto ld = [](const counter& c) { return c.load(std::memory_order_relaxed); };
  const std::uint8_t kind = e.kind.load(std::memory_order_relaxed);
  j.raw("{");
  j.hex("address", key);
  j.str("kind", kObjectNames[kind < std::size(kObjectNames) ? kind : 0]);
  const std::uint8_t kinds = e.kinds.load(std::memory_order_relaxed);
  if ((kinds & (kinds - 1)) != 0) {  // more than one: the other kinds seen at this address
    j.raw("\"also\":[");
    for (std::size_t i = 1; i < std::size(kObjectNames); ++i) {
      if (i != kind && (kinds & (1u << i)) != 0) {
        j.raw("\"");
        j.raw(kObjectNames[i]);
        j.raw("\",");
      }
    }
    j.close(']');
  }
  j.num("acquisitions", ld(e.acquisitions));
  j.num("contended", t.contended);
  j.num("spin_won", t.spin_won);
  j.num("wait_ticks", t.wait_ticks);
  // The quantiles: the upper bound of their bucket (at most 19% above), never above the maximum.
  const std::uint64_t waits = t.contended + t.cond_waits;
  const std::uint64_t max = t.max_wait_ticks;
  const auto quantile = [&](double q) { return waits != 0 ? std::min(quantile_ticks(t, waits, q), max) : 0; };
  j.raw("\"wait_ns\":{");
  j.num("total", ns_of(t.wait_ticks + t.cond_wait_ticks, hz));
  j.num("p50", ns_of(quantile(0.50), hz));
  j.num("p99", ns_of(quantile(0.99), hz));
  j.num("max", ns_of(max, hz));
  j.close('}');
  j.raw("\"held_ns\":{");
  j.num("samples", ld(e.held_samples));
  j.num("total", ns_of(ld(e.held_ticks), hz));
  j.close('}');
  j.num("spin_ticks", t.spin_ticks);
  j.num("spin_ns", ns_of(t.spin_ticks, hz));
  j.num("spin_rounds", t.rounds);
  j.num("yields", t.yields);
  j.num("parks", t.parks);
  if (kind == static_cast<std::uint8_t>(object_kind::cond)) {
    j.raw("\"cond\":{");
    j.num("waits", t.cond_waits);
    j.num("timeouts", t.cond_timeouts);
    j.num("signals", t.signals);
    j.num("broadcasts", t.broadcasts);
    j.num("woken", t.woken);
    j.close('}');
  }
  j.raw("\"sites\":[");
  for (std::size_t i = 0; i < kSites; ++i) {
    const site_record& s = e.sites[i];
    const std::uintptr_t caller = s.caller.load(std::memory_order_acquire);
    if (caller == 0) break;
    j.raw("{");
    j.num("waits", t.site_waits[i]);
    j.num("wait_ns", ns_of(t.site_ticks[i], hz));
    j.raw("\"frames\":[");
    const bool ready = s.ready.load(std::memory_order_acquire) != 0;
    for (std::size_t f = 0; f < (ready ? kFrames : 1); ++f) {
      const std::uintptr_t ip = f == 0 ? caller : s.frames[f];
      if (ip == 0) break;
      char b[32];
      std::snprintf(b, sizeof b, "\"0x%" PRIxPTR "\",", ip);
      j.raw(b);
    }
    j.close(']');
    j.close('}');
  }
  j.close(']');
  j.raw("\"other_sites\":{");
  j.num("waits", t.other_site_waits);
  j.num("wait_ns", ns_of(t.other_site_ticks, hz));
  j.close('}');
  j.close('}');
}

// The modules loaded at exit: where each lies, so that an address is a module and an offset.
int add_module(dl_phdr_info* info, std::size_t, void* arg) {
  auto& j = *static_cast<json_out*>(arg);
  std::uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    lo = std::min<std::uintptr_t>(lo, info->dlpi_addr + ph.p_vaddr);
    hi = std::max<std::uintptr_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  if (hi == 0) return 0;
  std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (path.empty()) {  // the program itself
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) path.assign(exe, static_cast<std::size_t>(n));
  }
  j.raw("{");
  j.str("path", path.c_str());
  j.hex("base", info->dlpi_addr);
  j.hex("start", lo);
  j.hex("end", hi);
  j.close('}');
  return 0;
}

std::string profile_json(const stats_snapshot& snap) {
  const double hz = static_cast<double>(snap.counter_hz != 0 ? snap.counter_hz : counter_frequency());
  json_out j;
  j.raw("{");
  j.str("format", "spinwise.lock_profile");
  j.num("version", 1);
  j.num("pid", static_cast<std::uint64_t>(getpid()));
  const int k = current_kind();
  j.str("lock_kind", kKindNames[k >= 0 && k < static_cast<int>(std::size(kKindNames)) ? k : 0]);
  j.num("counter_hz", static_cast<std::uint64_t>(hz));
  const std::size_t slots = g_table.slots.load(std::memory_order_acquire);
  j.num("slots", slots);
  j.num("hold_sample_every", kSampleEvery);
  j.num("acquisition_sample_every", kSampleEvery);
  const overflow_counts& o = g_table.overflow;
  const auto ld = [](const counter& c) { return c.load(std::memory_order_relaxed); };
  j.raw("\"overflow\":{");
  j.num("contended", ld(o.contended));
  j.num("wait_ticks", ld(o.wait_ticks));
  j.num("wait_ns", ns_of(ld(o.wait_ticks), hz));
  j.num("spin_ns", ns_of(ld(o.spin_ticks), hz));
  j.num("yields", ld(o.yields));
  j.num("parks", ld(o.parks));
  j.num("cond_waits", ld(o.cond_waits));
  j.num("cond_wait_ns", ns_of(ld(o.cond_wait_ticks), hz));
  j.num("cond_wakes", ld(o.wakes));
  j.close('}');
  // The type-level statistics of the same run: the table's sums plus the overflow are these.
  j.raw("\"types\":{");
  for (const auto& c : snap.classes) {
    if (c.name.rfind("preload.", 0) != 0) continue;
    j.raw("\"");
    j.raw(c.name.c_str());
    j.raw("\":{");
    j.num("acquisitions", c.totals.acquisitions);
    j.num("contended", c.totals.contended);
    j.num("wait_ticks", c.totals.wait_ticks);
    j.num("spin_ticks", c.totals.spin_ticks);
    j.num("yields", c.totals.yields);
    j.num("parks", c.totals.parks);
    j.close('}');
  }
  j.close('}');
  j.raw("\"locks\":[");
  struct sink_state {
    json_out& j;
    double hz;
    std::uint64_t used;
  } st{j, hz, 0};
  for_each_total(
      [](std::size_t i, const totals& t, void* arg) {
        auto& s = *static_cast<sink_state*>(arg);
        ++s.used;
        write_entry(s.j, g_table.keys[i].load(std::memory_order_acquire), g_table.entries[i], t, s.hz);
      },
      &st);
  const std::uint64_t used = st.used;
  j.close(']');
  j.num("used", used);
  j.raw("\"modules\":[");
  dl_iterate_phdr(add_module, &j);
  j.close(']');
  j.close('}');
  j.s.back() = '\n';
  return j.s;
}

}  // namespace

void write_profile_at_exit() noexcept {
  // Records the exiting thread still keeps, the statistics' part too (their report is written
  // after this one, also by a forked child that writes no profile).
  if (tl_state.pending != 0) profile_flush();
  const char* path = detail::env("SPINWISE_PRELOAD_PROFILE");
  if (path == nullptr || g_table.slots.load(std::memory_order_acquire) == 0) return;
  if (g_forked_child.load(std::memory_order_relaxed) && std::strstr(path, "%p") == nullptr) return;
  ++tl_state.inside;
  try {
    const stats_snapshot snap = take_stats_snapshot();
    // The types' acquisitions are sampled here: a program of a few calls a thread may count none.
    if (took_interposed_locks(snap) || profile_took_locks())
      write_report(path, profile_json(snap), "lock profile");
  } catch (...) {
    std::fprintf(stderr, "spinwise-preload: out of memory for the lock profile\n");
  }
  --tl_state.inside;
}

}  // namespace spinwise::preload
