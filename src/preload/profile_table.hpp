#pragma once
// The per-lock profile's table (profile.hpp): what profile.cpp records into and profile_report.cpp
// writes at exit. Internal to the interposer.
//
// A lock's figures have two homes. Its entry in the table (one per object, shared by every
// thread) and, while a thread is recording waits on it, one slot of that thread's share: the
// waits a thread records go into its own share with plain loads and stores (it is their only
// writer), so a contended lock's entry is not written by both CPUs on every wait. A share's slot
// goes back to the entry (atomic adds) when its thread needs the slot for another object; a
// thread's exit frees its share as it is, for the next thread to take; the report adds every
// share's slots to their entries' figures.
//
//   entry (shared):  acquisitions, holds (sampled)   figures (flushed shares)   sites (claimed once)
//   share (thread):  slot[i] = {entry*, figures}  ->  entry.figures when the slot is taken
//
// Invariant: a lock's figures are its entry's plus those of every share slot that names the
// entry; only a share's thread writes its slots (signal handlers included: a handler's calls
// inside a recording are plain, tl_state.inside).

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "profile.hpp"

namespace spinwise::preload::profile_table {

constexpr std::size_t kSites = 4;    // call sites kept per lock; the rest are counted together
constexpr std::size_t kFrames = 6;   // return addresses kept per site, the interposed call's first
constexpr std::size_t kProbes = 64;  // slots a lock may lie from its hash's (linear probing)
constexpr std::size_t kDefaultSlots = 4096;
constexpr std::size_t kMinSlots = 16;
constexpr std::size_t kMaxSlots = std::size_t{1} << 20;
constexpr std::size_t kShareSlots = 8;  // objects a thread records into at once before one goes back
constexpr std::size_t kShares = 1024;   // threads with a share at once; later ones add to the entries

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

// The figures of waits and wake-ups that add up, one list for the figures, their totals and the
// code that sums them (profile.cpp): a figure cannot be left out of one of them.
// clang-format off
#define SPINWISE_PROFILE_SUMMED(X)                                                                    \
  X(contended) X(spin_won) X(wait_ticks) X(spin_ticks) X(rounds) X(yields) X(parks)                 \
  X(cond_waits) X(cond_wait_ticks) X(cond_timeouts) X(signals) X(broadcasts) X(woken)               \
  X(other_site_waits) X(other_site_ticks)
// clang-format on

// The figures, in an entry and in a share's slot alike: the summed ones, the maximum wait, per
// site (indexed as the entry's sites[]; waits at a site beyond kSites count in other_site_*) and
// the histogram of wait times.
struct figures {
#define SPINWISE_PROFILE_FIGURE(name) counter name;
  SPINWISE_PROFILE_SUMMED(SPINWISE_PROFILE_FIGURE)
#undef SPINWISE_PROFILE_FIGURE
  counter max_wait_ticks;
  counter site_waits[kSites], site_ticks[kSites];
  std::atomic<std::uint32_t> histogram[kBuckets];
};

// The same figures as plain numbers: an entry's with its shares' added, for the report.
struct totals {
#define SPINWISE_PROFILE_TOTAL(name) std::uint64_t name;
  SPINWISE_PROFILE_SUMMED(SPINWISE_PROFILE_TOTAL)
#undef SPINWISE_PROFILE_TOTAL
  std::uint64_t max_wait_ticks;
  std::uint64_t site_waits[kSites], site_ticks[kSites];
  std::uint64_t histogram[kBuckets];
};

struct site_record {
  std::atomic<std::uintptr_t> caller;  // 0: free; claimed by one thread's compare-exchange
  std::atomic<std::uint32_t> ready;    // 1: frames written (a fork or exit in between leaves it 0)
  std::uintptr_t frames[kFrames];      // frames[0] == caller; 0 ends them
};

struct entry {
  // The kind of its first record, and of every record (bit 1 << kind): an address a lock of one
  // kind had and one of another kind has since (a stack's, a heap's) has both.
  std::atomic<std::uint8_t> kind;
  std::atomic<std::uint8_t> kinds;
  counter acquisitions, held_ticks, held_samples;  // sampled (profile_acquired), on the entry
  figures f;
  site_record sites[kSites];
};

// What found no slot (the table full around its hash): counted, not lost. Every member has its
// initializer, so that the table below is constant-initialized: the library's constructor (or a
// call before it) may map it before the files' dynamic initializers would run.
struct overflow_counts {
  counter contended{0}, wait_ticks{0}, spin_ticks{0}, yields{0}, parks{0}, cond_waits{0}, cond_wait_ticks{0},
      wakes{0};
};

// One thread's share: its slots, each an object's figures since the slot was taken. gen is odd
// while its thread moves a slot's figures to the entry and gives the slot to another object, so
// that the report can tell a total it read across such a move (and read it again).
struct share_slot {
  std::atomic<entry*> target;  // nullptr: free
  std::uint64_t last_use;      // its thread's record count at the slot's last record (the victim: least)
  figures f;
};
// A kept record's bytes (profile.cpp's pending_record, at most this size).
constexpr std::size_t kKeptBytes = 96;
struct alignas(64) share {
  std::atomic<std::uint32_t> owned;  // 1: a thread's (taken at its first record, freed at its exit)
  std::atomic<std::uint32_t> gen;
  share_slot slots[kShareSlots];
  // Its thread's records kept for a batch (profile.hpp's kPending; how many: tl_state.pending).
  // Here, not in a thread-local: the library's static TLS stays small enough to be dlopen'ed.
  alignas(8) unsigned char kept[kPending * kKeptBytes];
};

// The table: keys (the objects' addresses, 0 free) apart from the entries, so that a lookup of a
// lock that never waited reads one key. Mapped once, never freed: the exit report and a thread
// still running at exit may read it. shares: kShares of them, in the same mapping.
struct table {
  std::atomic<std::size_t> slots{0};  // a power of two; 0 until mapped (stored last, release)
  std::atomic<std::uintptr_t>* keys = nullptr;
  entry* entries = nullptr;
  share* shares = nullptr;
  std::atomic<std::size_t> shares_used{0};  // the high-water mark of claimed shares
  overflow_counts overflow;
};
extern table g_table;
extern std::atomic<bool> g_forked_child;

// Calls sink(entry_index, totals, arg) for every entry in the table, its figures with those of every
// share slot that names it (profile.cpp). Read while other threads may still record (at exit): a
// total read across a slot's move to its entry is read again (up to a few times, then taken as
// read); records made meanwhile may be missing.
using total_sink = void (*)(std::size_t index, const totals& t, void* arg);
void for_each_total(total_sink sink, void* arg);

}  // namespace spinwise::preload::profile_table
