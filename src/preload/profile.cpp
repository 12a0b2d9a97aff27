// The per-lock profile's table, its records, and its report at exit (profile.hpp,
// docs/preload.md "Per-lock profile").

#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>
#include <unwind.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>

#include "interposer.hpp"
#include "spinwise/runtime/stats_report.hpp"

namespace spinwise::preload {

__thread const void* tl_caller __attribute__((tls_model("initial-exec")));
__thread const void* tl_waiting __attribute__((tls_model("initial-exec")));
__thread const void* tl_held __attribute__((tls_model("initial-exec")));
__thread std::uint32_t tl_acquired __attribute__((tls_model("initial-exec")));

namespace {

__thread std::uint64_t tl_held_since __attribute__((tls_model("initial-exec")));

constexpr std::size_t kSites = 4;    // call sites kept per lock; the rest are counted together
constexpr std::size_t kFrames = 6;   // return addresses kept per site, the interposed call's first
constexpr std::size_t kProbes = 64;  // slots a lock may lie from its hash's (linear probing)
constexpr std::size_t kDefaultSlots = 4096;
constexpr std::size_t kMinSlots = 16;
constexpr std::size_t kMaxSlots = std::size_t{1} << 20;

// Wait times: 4 buckets per octave of counter ticks (below 4 ticks one per tick), up to 2^48 ticks.
constexpr std::size_t kBuckets = 192;
constexpr std::size_t bucket_of(std::uint64_t t) noexcept {
  if (t < 4) return static_cast<std::size_t>(t);
  const int o = 63 - __builtin_clzll(t);
  const std::size_t b = 4 * static_cast<std::size_t>(o - 1) + ((t >> (o - 2)) & 3);
  return b < kBuckets ? b : kBuckets - 1;
}
// The first tick count past bucket b (its upper bound).
constexpr std::uint64_t bucket_end(std::size_t b) noexcept {
  if (b < 4) return b + 1;
  const int o = static_cast<int>(b / 4) + 1;
  return (std::uint64_t{1} << o) + (b % 4 + 1) * (std::uint64_t{1} << (o - 2));
}
static_assert(bucket_of(4) == 4 && bucket_of(7) == 7 && bucket_of(8) == 8 && bucket_of(9) == 8 &&
              bucket_of(10) == 9 && bucket_end(8) == 10 && bucket_end(7) == 8 && bucket_end(3) == 4);

using counter = std::atomic<std::uint64_t>;
void add(counter& c, std::uint64_t n) noexcept { c.fetch_add(n, std::memory_order_relaxed); }

struct site_record {
  std::atomic<std::uintptr_t> caller;  // 0: free; claimed by one thread's compare-exchange
  std::atomic<std::uint32_t> ready;    // 1: frames written (a fork or exit in between leaves it 0)
  std::uintptr_t frames[kFrames];      // frames[0] == caller; 0 ends them
  counter waits, wait_ticks;
};

struct entry {
  // The kind of its first record, and of every record (bit 1 << kind): an address a lock of one
  // kind had and one of another kind has since (a stack's, a heap's) has both.
  std::atomic<std::uint8_t> kind;
  std::atomic<std::uint8_t> kinds;
  counter acquisitions, contended, spin_won, wait_ticks, max_wait_ticks, spin_ticks, rounds, yields, parks;
  counter held_ticks, held_samples;
  counter cond_waits, cond_wait_ticks, cond_timeouts, signals, broadcasts, woken;
  counter other_site_waits, other_site_ticks;  // waits at sites beyond kSites
  std::atomic<std::uint32_t> histogram[kBuckets];
  site_record sites[kSites];
};

// What found no slot (the table full around its hash): counted, not lost. Every member has its
// initializer, so that the table below is constant-initialized: the library's constructor (or a
// call before it) may map it before this file's dynamic initializers would run.
struct overflow_counts {
  counter contended{0}, wait_ticks{0}, spin_ticks{0}, yields{0}, parks{0}, cond_waits{0}, cond_wait_ticks{0},
      wakes{0};
};

// The table: keys (the objects' addresses, 0 free) apart from the entries, so that a lookup of a
// lock that never waited reads one key. Mapped once, never freed: the exit report and a thread
// still running at exit may read it.
struct table {
  std::atomic<std::size_t> slots{0};  // a power of two; 0 until mapped (stored last, release)
  std::atomic<std::uintptr_t>* keys = nullptr;
  entry* entries = nullptr;
  overflow_counts overflow;
};
table g_table;
std::atomic<bool> g_forked_child{false};

std::size_t home_of(std::uintptr_t key, std::size_t slots) noexcept {
  const int bits = __builtin_ctzll(slots);
  return static_cast<std::size_t>(((key >> 3) * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

// The entry of `object`, made when `make` and a slot is free within kProbes of its hash; nullptr
// otherwise. Slots are never freed, so a lookup that meets a free slot has seen every candidate.
entry* find(const void* object, bool make) noexcept {
  const auto key = reinterpret_cast<std::uintptr_t>(object);
  const std::size_t slots = g_table.slots.load(std::memory_order_acquire);
  if (slots == 0) return nullptr;
  const std::size_t mask = slots - 1;
  std::size_t i = home_of(key, slots);
  const std::size_t probes = slots < kProbes ? slots : kProbes;
  for (std::size_t n = 0; n < probes; ++n, i = (i + 1) & mask) {
    std::uintptr_t k = g_table.keys[i].load(std::memory_order_acquire);
    if (k == 0) {
      if (!make) return nullptr;
      if (g_table.keys[i].compare_exchange_strong(k, key, std::memory_order_acq_rel))
        return &g_table.entries[i];
    }
    if (k == key) return &g_table.entries[i];
  }
  return nullptr;
}

// --- call sites ---------------------------------------------------------------------------------

// The frames above the interposed call: libgcc's unwinder (.eh_frame, found through glibc's
// _dl_find_object, which takes no lock) walks up from here; the frames below `want` (the call's
// return address, the first frame of the program's) are the interposer's own and skipped. Once
// per new site of a lock, never on every wait. A program without unwind tables gets its first
// frame only.
struct unwind_walk {
  std::uintptr_t want;
  std::uintptr_t* out;
  std::size_t n;
  int skipped;
};
_Unwind_Reason_Code collect(_Unwind_Context* ctx, void* arg) {
  auto* w = static_cast<unwind_walk*>(arg);
  const auto ip = static_cast<std::uintptr_t>(_Unwind_GetIP(ctx));
  if (ip == 0) return _URC_END_OF_STACK;
  if (w->n == 1) {                // still inside the interposer: look for the call's return address
    if (ip == w->want) w->n = 2;  // frames[1] onward: the callers of the program's first frame
    return ++w->skipped > 48 ? _URC_END_OF_STACK : _URC_NO_REASON;
  }
  w->out[w->n - 1] = ip;
  return ++w->n > kFrames ? _URC_END_OF_STACK : _URC_NO_REASON;
}
// frames[0] = caller; frames[1...] its callers, as far as the unwinder gets.
void capture(std::uintptr_t caller, std::uintptr_t* frames) noexcept {
  frames[0] = caller;
  unwind_walk w{caller, frames, 1, 0};
  _Unwind_Backtrace(collect, &w);
}

void record_site(entry& e, const void* caller_address, std::uint64_t ticks) noexcept {
  const auto caller = reinterpret_cast<std::uintptr_t>(caller_address);
  for (site_record& s : e.sites) {
    std::uintptr_t c = s.caller.load(std::memory_order_acquire);
    if (c == 0 && s.caller.compare_exchange_strong(c, caller, std::memory_order_acq_rel)) {
      capture(caller, s.frames);
      s.ready.store(1, std::memory_order_release);
      c = caller;
    }
    if (c == caller) {
      add(s.waits, 1);
      add(s.wait_ticks, ticks);
      return;
    }
  }
  add(e.other_site_waits, 1);
  add(e.other_site_ticks, ticks);
}

void note_kind(entry& e, object_kind kind) noexcept {
  const auto k = static_cast<std::uint8_t>(kind);
  std::uint8_t none = 0;
  e.kind.compare_exchange_strong(none, k, std::memory_order_relaxed);
  const auto bit = static_cast<std::uint8_t>(1u << k);
  if ((e.kinds.load(std::memory_order_relaxed) & bit) == 0) e.kinds.fetch_or(bit, std::memory_order_relaxed);
}

// The histogram and maximum of an entry's waits, a lock's or a condition variable's.
void record_wait_time(entry& e, std::uint64_t ticks) noexcept {
  e.histogram[bucket_of(ticks)].fetch_add(1, std::memory_order_relaxed);
  std::uint64_t max = e.max_wait_ticks.load(std::memory_order_relaxed);
  while (ticks > max && !e.max_wait_ticks.compare_exchange_weak(max, ticks, std::memory_order_relaxed)) {
  }
}

}  // namespace

// --- the records (profile.hpp) -----------------------------------------------------------------

void profile_wait(const void* object, object_kind kind, const void* caller, const wait_record& r) noexcept {
  entry* e = find(object, true);
  if (e == nullptr) {
    overflow_counts& o = g_table.overflow;
    add(o.contended, 1);
    add(o.wait_ticks, r.wait_ticks);
    add(o.spin_ticks, r.spin_ticks);
    add(o.yields, r.yields);
    add(o.parks, r.parks);
    return;
  }
  note_kind(*e, kind);
  add(e->contended, 1);
  if (r.parks == 0) add(e->spin_won, 1);
  add(e->spin_ticks, r.spin_ticks);
  add(e->rounds, r.rounds);
  add(e->yields, r.yields);
  add(e->parks, r.parks);
  add(e->wait_ticks, r.wait_ticks);
  record_wait_time(*e, r.wait_ticks);
  record_site(*e, caller, r.wait_ticks);
}

// Called for one acquisition in kSampleEvery of this thread's (profile_stats::on_acquire), which
// counts for kSampleEvery: an estimate, right on average. Counted one by one on the lock's entry,
// every acquisition of a hot lock moved that line between CPUs, and a bounded buffer (a contended
// mutex and two condition variables per item) lost a third of its items to the profile.
void profile_acquired(const void* object) noexcept {
  entry* e = find(object, false);
  if (SPINWISE_LIKELY(e == nullptr)) return;
  add(e->acquisitions, kSampleEvery);
  if (tl_held == nullptr) {
    tl_held = object;
    tl_held_since = read_counter();
  }
}

void profile_released(const void* object) noexcept {
  const std::uint64_t now = read_counter();
  if (entry* e = find(object, false)) {
    add(e->held_ticks, now > tl_held_since ? now - tl_held_since : 0);
    add(e->held_samples, 1);
  }
  tl_held = nullptr;
}

void profile_cond_wait(const void* cond, const void* caller, std::uint64_t ticks, bool timed_out) noexcept {
  entry* e = find(cond, true);
  if (e == nullptr) {
    add(g_table.overflow.cond_waits, 1);
    add(g_table.overflow.cond_wait_ticks, ticks);
    return;
  }
  note_kind(*e, object_kind::cond);
  add(e->cond_waits, 1);
  if (timed_out) add(e->cond_timeouts, 1);
  add(e->cond_wait_ticks, ticks);
  record_wait_time(*e, ticks);
  record_site(*e, caller, ticks);
}

void profile_cond_wake(const void* cond, bool broadcast, long woken) noexcept {
  entry* e = find(cond, true);
  if (e == nullptr) {
    add(g_table.overflow.wakes, 1);
    return;
  }
  note_kind(*e, object_kind::cond);
  add(broadcast ? e->broadcasts : e->signals, 1);
  if (woken > 0) add(e->woken, static_cast<std::uint64_t>(woken));
}

// --- the table ---------------------------------------------------------------------------------

namespace {
bool map_table() noexcept {
  std::size_t slots = kDefaultSlots;
  if (const char* v = detail::env("SPINWISE_PRELOAD_PROFILE_SLOTS"); v != nullptr && *v != '\0') {
    char* end = nullptr;
    errno = 0;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (errno != 0 || *end != '\0' || *v == '-' || n < kMinSlots || n > kMaxSlots || (n & (n - 1)) != 0) {
      std::fprintf(
          stderr,
          "spinwise-preload: SPINWISE_PRELOAD_PROFILE_SLOTS '%s' is not a power of two from %zu to %zu; "
          "no profile\n",
          v, kMinSlots, kMaxSlots);
      return false;
    }
    slots = static_cast<std::size_t>(n);
  }
  // Zero pages, touched only where a lock lands: a table of 4096 is ~5 MB of address space.
  const std::size_t keys_bytes = slots * sizeof(std::atomic<std::uintptr_t>);
  const std::size_t bytes = keys_bytes + slots * sizeof(entry);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "spinwise-preload: no memory for the lock profile (%zu slots); no profile\n", slots);
    return false;
  }
  g_table.keys = static_cast<std::atomic<std::uintptr_t>*>(p);
  g_table.entries = reinterpret_cast<entry*>(static_cast<char*>(p) + keys_bytes);
  g_table.slots.store(slots, std::memory_order_release);
  // Warm the unwinder (its one-time set-up) here, outside any lock and any signal handler.
  std::uintptr_t frames[kFrames] = {};
  capture(0, frames);
  return true;
}
}  // namespace

// Every first caller (init_kind, before the kind is set) comes here; one maps the table and the
// others wait for it, so that no call counts statistics before the profile can record them too.
bool profile_start() noexcept {
  static std::atomic<int> state{0};  // 0 not started, 1 mapping, 2 mapped, 3 failed
  int s = 0;
  if (state.compare_exchange_strong(s, 1, std::memory_order_acq_rel)) {
    const bool ok = map_table();
    state.store(ok ? 2 : 3, std::memory_order_release);
    return ok;
  }
  while ((s = state.load(std::memory_order_acquire)) == 1) sched_yield();
  return s == 2;
}

// A child of fork() keeps the parent's figures until the fork (as its statistics do) and writes
// its own file only where the name has "%p"; otherwise the parent's file is the report.
void profile_fork_child() noexcept { g_forked_child.store(true, std::memory_order_relaxed); }

// --- the report at exit ---------------------------------------------------------------------------

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
std::uint64_t quantile_ticks(const entry& e, std::uint64_t n, double q) noexcept {
  const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(n - 1)) + 1;
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < kBuckets; ++b) {
    seen += e.histogram[b].load(std::memory_order_relaxed);
    if (seen >= rank) return bucket_end(b);
  }
  return bucket_end(kBuckets - 1);
}

void write_entry(json_out& j, std::uintptr_t key, const entry& e, double hz) {
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
  j.num("contended", ld(e.contended));
  j.num("spin_won", ld(e.spin_won));
  j.num("wait_ticks", ld(e.wait_ticks));
  // The quantiles: the upper bound of their bucket (at most 19% above), never above the maximum.
  const std::uint64_t waits = ld(e.contended) + ld(e.cond_waits);
  const std::uint64_t max = ld(e.max_wait_ticks);
  const auto quantile = [&](double q) { return waits != 0 ? std::min(quantile_ticks(e, waits, q), max) : 0; };
  j.raw("\"wait_ns\":{");
  j.num("total", ns_of(ld(e.wait_ticks) + ld(e.cond_wait_ticks), hz));
  j.num("p50", ns_of(quantile(0.50), hz));
  j.num("p99", ns_of(quantile(0.99), hz));
  j.num("max", ns_of(max, hz));
  j.close('}');
  j.raw("\"held_ns\":{");
  j.num("samples", ld(e.held_samples));
  j.num("total", ns_of(ld(e.held_ticks), hz));
  j.close('}');
  j.num("spin_ticks", ld(e.spin_ticks));
  j.num("spin_ns", ns_of(ld(e.spin_ticks), hz));
  j.num("spin_rounds", ld(e.rounds));
  j.num("yields", ld(e.yields));
  j.num("parks", ld(e.parks));
  if (kind == static_cast<std::uint8_t>(object_kind::cond)) {
    j.raw("\"cond\":{");
    j.num("waits", ld(e.cond_waits));
    j.num("timeouts", ld(e.cond_timeouts));
    j.num("signals", ld(e.signals));
    j.num("broadcasts", ld(e.broadcasts));
    j.num("woken", ld(e.woken));
    j.close('}');
  }
  j.raw("\"sites\":[");
  for (std::size_t i = 0; i < kSites; ++i) {
    const site_record& s = e.sites[i];
    const std::uintptr_t caller = s.caller.load(std::memory_order_acquire);
    if (caller == 0) break;
    j.raw("{");
    j.num("waits", ld(s.waits));
    j.num("wait_ns", ns_of(ld(s.wait_ticks), hz));
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
  j.num("waits", ld(e.other_site_waits));
  j.num("wait_ns", ns_of(ld(e.other_site_ticks), hz));
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
  std::uint64_t used = 0;
  for (std::size_t i = 0; i < slots; ++i) {
    const std::uintptr_t key = g_table.keys[i].load(std::memory_order_acquire);
    if (key == 0) continue;
    ++used;
    write_entry(j, key, g_table.entries[i], hz);
  }
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
  const char* path = detail::env("SPINWISE_PRELOAD_PROFILE");
  if (path == nullptr || g_table.slots.load(std::memory_order_acquire) == 0) return;
  if (g_forked_child.load(std::memory_order_relaxed) && std::strstr(path, "%p") == nullptr) return;
  ++tl_inside;
  try {
    const stats_snapshot snap = take_stats_snapshot();
    if (took_interposed_locks(snap)) write_report(path, profile_json(snap), "lock profile");
  } catch (...) {
    std::fprintf(stderr, "spinwise-preload: out of memory for the lock profile\n");
  }
  --tl_inside;
}

}  // namespace spinwise::preload
