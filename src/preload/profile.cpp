// The per-lock profile's records (profile.hpp, profile_table.hpp; docs/preload.md "Per-lock
// profile"): the table, the waits and wake-ups recorded into it, a thread's share of them. The
// report at exit is profile_report.cpp's.

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unwind.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "interposer.hpp"
#include "profile_table.hpp"

namespace spinwise::preload {

namespace profile_table {
table g_table;
std::atomic<bool> g_forked_child{false};
}  // namespace profile_table

using namespace profile_table;

namespace {

__thread std::uint64_t tl_held_since __attribute__((tls_model("initial-exec")));
__thread std::uint32_t tl_sample_state __attribute__((tls_model("initial-exec")));  // xorshift32; 0: unseeded

// This thread's generator's next number (xorshift32), from its state; seeded on first use from its
// stack address and the counter.
std::uint32_t next_random() noexcept {
  std::uint32_t x = tl_sample_state;
  if (x == 0) {
    const auto seed = reinterpret_cast<std::uintptr_t>(&x) ^ read_counter();
    x = static_cast<std::uint32_t>(seed ^ (seed >> 32)) | 1u;
  }
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  tl_sample_state = x;
  return x;
}

// The interval to this thread's next sampled acquisition: uniform from 1 to 2 * kSampleEvery - 1
// (mean kSampleEvery).
std::int32_t next_sample_interval() noexcept {
  return static_cast<std::int32_t>(1 + next_random() % (2 * kSampleEvery - 1));
}

// A thread's first sample: where an interval that began before the thread's first acquisition
// would end, counted from that acquisition (1: the first itself). Its law is the interval's
// forward recurrence time, P(D = d) = P(I >= d) / E[I], which the smaller of a uniform 1..31 and a
// uniform 1..32 has exactly; so the estimate of a thread's acquisitions is right on average from
// its first, where a first sample one whole interval later counted about 6 too few a thread.
std::int32_t first_sample_delay() noexcept {
  const auto a = static_cast<std::int32_t>(1 + next_random() % (2 * kSampleEvery - 1));
  const auto b = static_cast<std::int32_t>(1 + next_random() % (2 * kSampleEvery));
  return a < b ? a : b;
}

std::atomic<bool> g_acquired{false};  // a profiled acquisition was made (profile_took_locks)

void add(counter& c, std::uint64_t n) noexcept { c.fetch_add(n, std::memory_order_relaxed); }

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

// The site of `caller` among the entry's (claimed here, once, with its frames), or kSites: a site
// beyond the kept ones.
std::size_t site_of(entry& e, const void* caller_address) noexcept {
  const auto caller = reinterpret_cast<std::uintptr_t>(caller_address);
  for (std::size_t i = 0; i < kSites; ++i) {
    site_record& s = e.sites[i];
    std::uintptr_t c = s.caller.load(std::memory_order_acquire);
    if (c == 0 && s.caller.compare_exchange_strong(c, caller, std::memory_order_acq_rel)) {
      capture(caller, s.frames);
      s.ready.store(1, std::memory_order_release);
      return i;
    }
    if (c == caller) return i;
  }
  return kSites;
}

// Writes only what is new: a record of a lock both CPUs wait on reads the entry's first line, and
// a write there on every record (even a compare-exchange that fails takes the line) moved it
// between the CPUs each time.
void note_kind(entry& e, object_kind kind) noexcept {
  const auto k = static_cast<std::uint8_t>(kind);
  std::uint8_t none = 0;
  if (e.kind.load(std::memory_order_relaxed) == 0)
    e.kind.compare_exchange_strong(none, k, std::memory_order_relaxed);
  const auto bit = static_cast<std::uint8_t>(1u << k);
  if ((e.kinds.load(std::memory_order_relaxed) & bit) == 0) e.kinds.fetch_or(bit, std::memory_order_relaxed);
}

// --- how a record adds ------------------------------------------------------------------------

// To an entry's figures, which every thread may write: atomic adds.
struct to_entry {
  template <class T>
  static void add(std::atomic<T>& c, T n) noexcept {
    c.fetch_add(n, std::memory_order_relaxed);
  }
  static void raise(counter& c, std::uint64_t v) noexcept {
    std::uint64_t max = c.load(std::memory_order_relaxed);
    while (v > max && !c.compare_exchange_weak(max, v, std::memory_order_relaxed)) {
    }
  }
};
// To a slot of this thread's share, which no other thread writes: a load and a store, no locked
// instruction, and the line stays in this CPU's cache.
struct to_share {
  template <class T>
  static void add(std::atomic<T>& c, T n) noexcept {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  static void raise(counter& c, std::uint64_t v) noexcept {
    if (v > c.load(std::memory_order_relaxed)) c.store(v, std::memory_order_relaxed);
  }
};

// The figures summed when a share's slot goes back and when the report totals an entry (the
// maximum, the sites and the histogram apart), from the one list of them.
#define SPINWISE_PROFILE_MEMBER(name) &figures::name,
constexpr counter figures::*kSummed[] = {SPINWISE_PROFILE_SUMMED(SPINWISE_PROFILE_MEMBER)};
#undef SPINWISE_PROFILE_MEMBER
#define SPINWISE_PROFILE_MEMBER(name) &totals::name,
constexpr std::uint64_t totals::*kSummedTotals[] = {SPINWISE_PROFILE_SUMMED(SPINWISE_PROFILE_MEMBER)};
#undef SPINWISE_PROFILE_MEMBER
// Every counter outside the list is one of the three the code names (the maximum, the sites').
static_assert(std::size(kSummed) + 1 + 2 * kSites ==
                  (sizeof(figures) - sizeof(figures::histogram)) / sizeof(counter),
              "a counter of figures outside SPINWISE_PROFILE_SUMMED that nothing sums");

// A wait's time: its histogram bucket, the maximum, its site.
template <class To>
void record_wait_time(figures& f, std::size_t site, std::uint64_t ticks) noexcept {
  To::add(f.histogram[bucket_of(ticks)], std::uint32_t{1});
  To::raise(f.max_wait_ticks, ticks);
  if (site < kSites) {
    To::add(f.site_waits[site], std::uint64_t{1});
    To::add(f.site_ticks[site], ticks);
  } else {
    To::add(f.other_site_waits, std::uint64_t{1});
    To::add(f.other_site_ticks, ticks);
  }
}

template <class To>
void record_lock_wait(figures& f, std::size_t site, const wait_record& r) noexcept {
  To::add(f.contended, std::uint64_t{1});
  if (r.parks == 0) To::add(f.spin_won, std::uint64_t{1});
  To::add(f.spin_ticks, r.spin_ticks);
  To::add(f.rounds, r.rounds);
  To::add(f.yields, r.yields);
  To::add(f.parks, r.parks);
  To::add(f.wait_ticks, r.wait_ticks);
  record_wait_time<To>(f, site, r.wait_ticks);
}

template <class To>
void record_cond_wait(figures& f, std::size_t site, std::uint64_t ticks, bool timed_out) noexcept {
  To::add(f.cond_waits, std::uint64_t{1});
  if (timed_out) To::add(f.cond_timeouts, std::uint64_t{1});
  To::add(f.cond_wait_ticks, ticks);
  record_wait_time<To>(f, site, ticks);
}

template <class To>
void record_wake(figures& f, bool broadcast, long woken) noexcept {
  To::add(broadcast ? f.broadcasts : f.signals, std::uint64_t{1});
  if (woken > 0) To::add(f.woken, static_cast<std::uint64_t>(woken));
}

// --- a thread's share ---------------------------------------------------------------------------

// This thread's share: nullptr until its first record; no_share() when none was to be had (all
// kShares owned, or the thread past its share's release at exit): its records go to the entries.
// no_share() is an address no share has, made from a constant: no initializer must have run.
constexpr std::uintptr_t kNoShareBits = alignof(share);
share* no_share() noexcept { return reinterpret_cast<share*>(kNoShareBits); }
__thread share* tl_share __attribute__((tls_model("initial-exec")));
__thread std::uint64_t tl_records __attribute__((tls_model("initial-exec")));  // for last_use
pthread_key_t g_share_key;  // its destructor frees a thread's share at the thread's exit

// Adds a slot's figures to its entry (its target is left for the caller to change).
void give_back(share_slot& slot) noexcept {
  entry* e = slot.target.load(std::memory_order_relaxed);
  if (e == nullptr) return;
  for (counter figures::*m : kSummed) {
    if (const std::uint64_t v = (slot.f.*m).load(std::memory_order_relaxed); v != 0) {
      to_entry::add(e->f.*m, v);
      (slot.f.*m).store(0, std::memory_order_relaxed);
    }
  }
  to_entry::raise(e->f.max_wait_ticks, slot.f.max_wait_ticks.load(std::memory_order_relaxed));
  slot.f.max_wait_ticks.store(0, std::memory_order_relaxed);
  for (std::size_t i = 0; i < kSites; ++i) {
    if (const std::uint64_t n = slot.f.site_waits[i].load(std::memory_order_relaxed); n != 0) {
      to_entry::add(e->f.site_waits[i], n);
      to_entry::add(e->f.site_ticks[i], slot.f.site_ticks[i].load(std::memory_order_relaxed));
      slot.f.site_waits[i].store(0, std::memory_order_relaxed);
      slot.f.site_ticks[i].store(0, std::memory_order_relaxed);
    }
  }
  for (std::size_t b = 0; b < kBuckets; ++b) {
    if (const std::uint32_t v = slot.f.histogram[b].load(std::memory_order_relaxed); v != 0) {
      to_entry::add(e->f.histogram[b], v);
      slot.f.histogram[b].store(0, std::memory_order_relaxed);
    }
  }
}

// At a thread's exit: its share is free for the next thread, slots and figures as they are (each
// slot names its entry, so its figures count there still, and the next owner adds to them).
// The records the thread still keeps are made first (the statistics' part into their class's
// overflow block: the thread's shards went at its exit).
void release_share(void* p) noexcept {
  if (tl_state.pending != 0) profile_flush();
  tl_share = no_share();  // a later key destructor's lock calls record into the entries
  static_cast<share*>(p)->owned.store(0, std::memory_order_release);
}

share* claim_share() noexcept {
  tl_share = no_share();
  if (g_table.shares == nullptr) return no_share();
  for (std::size_t i = 0; i < kShares; ++i) {
    share& s = g_table.shares[i];
    std::uint32_t free = 0;
    if (s.owned.load(std::memory_order_relaxed) != 0 ||
        !s.owned.compare_exchange_strong(free, 1, std::memory_order_acq_rel))
      continue;
    if (pthread_setspecific(g_share_key, &s) != 0) {
      s.owned.store(0, std::memory_order_release);
      return no_share();
    }
    std::size_t used = g_table.shares_used.load(std::memory_order_relaxed);
    while (used < i + 1 &&
           !g_table.shares_used.compare_exchange_weak(used, i + 1, std::memory_order_release)) {
    }
    tl_share = &s;
    return &s;
  }
  return no_share();
}

// This thread's slot for e: the one that names it, else a free one, else the least recently used
// one, given back first (under the share's gen, for the report); nullptr when the thread has no
// share.
share_slot* slot_for(entry& e) noexcept {
  share* s = tl_share != nullptr ? tl_share : claim_share();
  if (s == no_share()) return nullptr;
  const std::uint64_t now = ++tl_records;
  share_slot* victim = &s->slots[0];
  for (share_slot& slot : s->slots) {
    entry* t = slot.target.load(std::memory_order_relaxed);
    if (t == &e) {
      slot.last_use = now;
      return &slot;
    }
    if (t == nullptr) {
      victim = &slot;
      break;
    }
    if (slot.last_use < victim->last_use) victim = &slot;
  }
  const std::uint32_t g = s->gen.load(std::memory_order_relaxed);
  s->gen.store(g + 1, std::memory_order_relaxed);  // odd: a move under way
  std::atomic_thread_fence(std::memory_order_release);
  give_back(*victim);
  victim->target.store(&e, std::memory_order_relaxed);
  victim->last_use = now;
  s->gen.store(g + 2, std::memory_order_release);
  return victim;
}

// Records into this thread's slot for e, or into e itself.
template <class Record>
void record(entry& e, Record&& r) noexcept {
  if (share_slot* slot = slot_for(e)) {
    r(slot->f, to_share{});
  } else {
    r(e.f, to_entry{});
  }
}

void add_figures(totals& out, const figures& f) noexcept {
  for (std::size_t i = 0; i < std::size(kSummed); ++i)
    out.*kSummedTotals[i] += (f.*kSummed[i]).load(std::memory_order_relaxed);
  const std::uint64_t max = f.max_wait_ticks.load(std::memory_order_relaxed);
  if (max > out.max_wait_ticks) out.max_wait_ticks = max;
  for (std::size_t i = 0; i < kSites; ++i) {
    out.site_waits[i] += f.site_waits[i].load(std::memory_order_relaxed);
    out.site_ticks[i] += f.site_ticks[i].load(std::memory_order_relaxed);
  }
  for (std::size_t b = 0; b < kBuckets; ++b)
    out.histogram[b] += f.histogram[b].load(std::memory_order_relaxed);
}

}  // namespace

void profile_table::for_each_total(total_sink sink, void* arg) {
  const std::size_t slots = g_table.slots.load(std::memory_order_acquire);
  const std::size_t used =
      g_table.shares != nullptr ? g_table.shares_used.load(std::memory_order_acquire) : 0;
  // Which slots name which entry, in one pass over the shares (a slot taken for an entry after it
  // is a record made while the report is written: it may be missing).
  struct named {
    const share* s;
    const share_slot* slot;
  };
  std::unordered_map<std::size_t, std::vector<named>> by_entry;
  for (std::size_t i = 0; i < used; ++i) {
    for (const share_slot& slot : g_table.shares[i].slots) {
      if (const entry* t = slot.target.load(std::memory_order_acquire))
        by_entry[static_cast<std::size_t>(t - g_table.entries)].push_back({&g_table.shares[i], &slot});
    }
  }
  const auto t = std::make_unique<totals>();  // ~1.7 KB: not on the stack of a thread at exit
  std::vector<std::uint32_t> gens;
  const std::vector<named> none;  // the slots of an entry no share names
  for (std::size_t i = 0; i < slots; ++i) {
    if (g_table.keys[i].load(std::memory_order_acquire) == 0) continue;
    const entry& e = g_table.entries[i];
    const auto it = by_entry.find(i);
    const std::vector<named>& mine = it != by_entry.end() ? it->second : none;
    for (int attempt = 0; attempt < 4; ++attempt) {
      gens.clear();
      for (const named& n : mine) gens.push_back(n.s->gen.load(std::memory_order_acquire));
      *t = totals{};
      add_figures(*t, e.f);
      for (const named& n : mine)
        if (n.slot->target.load(std::memory_order_relaxed) == &e) add_figures(*t, n.slot->f);
      std::atomic_thread_fence(std::memory_order_acquire);
      bool steady = true;
      for (std::size_t k = 0; k < mine.size(); ++k)
        steady = steady && gens[k] % 2 == 0 && gens[k] == mine[k].s->gen.load(std::memory_order_relaxed);
      if (steady) break;
      sched_yield();  // a thread is moving a slot: let it finish
    }
    sink(i, *t, arg);
  }
}

// --- the records (profile.hpp) -----------------------------------------------------------------

namespace {

void record_lock_wait_now(const void* object, object_kind kind, const void* caller,
                          const wait_record& r) noexcept {
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
  const std::size_t site = site_of(*e, caller);
  record(*e, [&](figures& f, auto to) noexcept { record_lock_wait<decltype(to)>(f, site, r); });
}

void record_wake_now(const void* cond, bool broadcast, long woken) noexcept {
  entry* e = find(cond, true);
  if (e == nullptr) {
    add(g_table.overflow.wakes, 1);
    return;
  }
  note_kind(*e, object_kind::cond);
  record(*e, [&](figures& f, auto to) noexcept { record_wake<decltype(to)>(f, broadcast, woken); });
}

// A record kept for a batch after a release (profile.hpp): a lock's wait with its class's hook,
// or a condition's wake-up (counted == nullptr).
struct pending_record {
  const void* object;
  const void* caller;
  class_wait_hook counted;
  wait_record r;
  lock_mode mode;
  object_kind kind;
  bool broadcast;
  long woken;
};
static_assert(std::is_trivially_copyable_v<pending_record> && sizeof(pending_record) <= kKeptBytes &&
                  alignof(pending_record) <= 8,
              "kept as bytes in the thread's share");

void make(const pending_record& p) noexcept {
  if (p.counted != nullptr) {
    p.counted(p.r, p.mode);
    record_lock_wait_now(p.object, p.kind, p.caller, p.r);
  } else {
    record_wake_now(p.object, p.broadcast, p.woken);
  }
}

// Whether the lock's entry has the site `caller` already (or has all it keeps). A new site's
// callers are unwound from the lock call that waited there (capture() looks for that call's return
// address on the stack), so a wait at a new site is recorded at once, in its lock call, never kept.
bool site_known(const void* object, const void* caller) noexcept {
  const entry* e = find(object, false);
  if (e == nullptr) return false;
  const auto c = reinterpret_cast<std::uintptr_t>(caller);
  for (const site_record& s : e->sites) {
    const std::uintptr_t k = s.caller.load(std::memory_order_acquire);
    if (k == c) return true;
    if (k == 0) return false;
  }
  return true;  // every kept site taken: this one counts with the rest, unwinding nothing
}

// Keeps p for a batch (profile.hpp's kPending), a full list made first. A lock's wait comes with
// its lock just taken (on_contended), so it is kept unless its site is new (site_known); a wake-up
// mostly with the condition's mutex held. Only a thread with a share keeps records: its share's
// key destructor makes what it keeps at its exit (release_share); one without (past kShares
// threads, or no key) makes each at once.
void keep_or_make(const pending_record& p) noexcept {
  if ((p.counted != nullptr && !site_known(p.object, p.caller)) ||
      (tl_share == nullptr ? claim_share() : tl_share) == no_share()) {
    make(p);
    return;
  }
  if (tl_state.pending == kPending) profile_flush();
  std::memcpy(tl_share->kept + tl_state.pending++ * kKeptBytes, &p, sizeof p);
}

}  // namespace

void profile_contended(const void* object, object_kind kind, const void* caller, const wait_record& r,
                       lock_mode m, class_wait_hook counted) noexcept {
  keep_or_make(pending_record{object, caller, counted, r, m, kind, false, 0});
}

// In the order they were kept, inside a counted call of its own (tl_state.inside: a signal handler's
// lock calls meanwhile are plain ones), so nothing is kept or made twice; callers inside an
// interposed call or outside any (a thread's exit, the report) alike.
void profile_flush() noexcept {
  ++tl_state.inside;
  const std::uint8_t n = tl_state.pending;
  tl_state.pending = 0;
  for (std::uint8_t i = 0; i < n; ++i) {
    pending_record p;
    std::memcpy(&p, tl_share->kept + i * kKeptBytes, sizeof p);
    make(p);
  }
  --tl_state.inside;
}

// Called for about one acquisition in kSampleEvery of this thread's (profile_count_acquired),
// which counts for kSampleEvery: an estimate, right on average. Counted one by one on the lock's
// entry, every acquisition of a hot lock moved that line between CPUs, and a bounded buffer (a
// contended mutex and two condition variables per item) lost a third of its items to the profile.
// A thread's first acquisition (its countdown starts at 0) draws its first sample
// (first_sample_delay); profile_hooks makes the thread's statistics counters of its type there.
bool profile_acquired(const void* object) noexcept {
  if (SPINWISE_UNLIKELY(tl_sample_state == 0)) {
    if (!g_acquired.load(std::memory_order_relaxed)) g_acquired.store(true, std::memory_order_relaxed);
    const std::int32_t d = first_sample_delay();
    if (d > 1) {
      // The d-th acquisition from this one is sampled.
      profile_sample_drawn(static_cast<std::uint32_t>(d - 2));
      return false;
    }
  }
  profile_sample_drawn(static_cast<std::uint32_t>(next_sample_interval() - 1));
  entry* e = find(object, false);
  if (SPINWISE_LIKELY(e == nullptr)) return true;
  add(e->acquisitions, kSampleEvery);
  if (tl_state.held == nullptr) {
    tl_state.held = object;
    tl_held_since = read_counter();
  }
  return true;
}

bool profile_took_locks() noexcept { return g_acquired.load(std::memory_order_relaxed); }

void profile_released(const void* object) noexcept {
  const std::uint64_t now = read_counter();
  if (entry* e = find(object, false)) {
    add(e->held_ticks, now > tl_held_since ? now - tl_held_since : 0);
    add(e->held_samples, 1);
  }
  tl_state.held = nullptr;
}

void profile_cond_wait(const void* cond, const void* caller, std::uint64_t ticks, bool timed_out) noexcept {
  entry* e = find(cond, true);
  if (e == nullptr) {
    add(g_table.overflow.cond_waits, 1);
    add(g_table.overflow.cond_wait_ticks, ticks);
    return;
  }
  note_kind(*e, object_kind::cond);
  const std::size_t site = site_of(*e, caller);
  record(*e,
         [&](figures& f, auto to) noexcept { record_cond_wait<decltype(to)>(f, site, ticks, timed_out); });
}

void profile_cond_wake(const void* cond, bool broadcast, long woken) noexcept {
  keep_or_make(pending_record{cond, nullptr, nullptr, {}, lock_mode::x, object_kind::cond, broadcast, woken});
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
  // Zero pages, touched only where a lock lands or a thread records: a table of 4096 and its shares
  // are ~17 MB of address space.
  const std::size_t keys_bytes = slots * sizeof(std::atomic<std::uintptr_t>);
  const std::size_t entries_bytes = slots * sizeof(entry);
  const std::size_t bytes = keys_bytes + entries_bytes + kShares * sizeof(share);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "spinwise-preload: no memory for the lock profile (%zu slots); no profile\n", slots);
    return false;
  }
  g_table.keys = static_cast<std::atomic<std::uintptr_t>*>(p);
  g_table.entries = reinterpret_cast<entry*>(static_cast<char*>(p) + keys_bytes);
  // Without a key for their exit, threads record into the entries (no shares). So they do with a
  // key past glibc's first 32 (PTHREAD_KEY_2NDLEVEL_SIZE: a program's libraries made the others
  // before us), whose pthread_setspecific may allocate: that would be inside a lock call,
  // perhaps in a signal handler.
  if (pthread_key_create(&g_share_key, release_share) == 0) {
    if (g_share_key < 32) {
      g_table.shares = reinterpret_cast<share*>(static_cast<char*>(p) + keys_bytes + entries_bytes);
    } else {
      pthread_key_delete(g_share_key);
    }
  }
  g_table.slots.store(slots, std::memory_order_release);
  return true;
}
}  // namespace

// Not in map_table: the unwinder may take a pthread lock (libunwind's _Unwind_Backtrace, which a
// program such as perf links and which then stands before libgcc's, does on its first use), and
// that call, made before the kind was set, waited in profile_start for the table its own thread
// was mapping: the program hung in its first lock call.
void profile_warm_unwinder() noexcept {
  std::uintptr_t frames[kFrames] = {};
  capture(0, frames);
}

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

}  // namespace spinwise::preload
