#pragma once
// Which locks spinwise-bench measures. spinwise's locks under their default policies come from the
// tools' catalogue (bench/spinwise_locks.hpp: a lock added there is measured here); the policy and
// statistics variants, the peers and the floor are this tool's own, one line each in the two lists
// below:
//
//   v(as<TYPE>, {"name", kind, fifo});
//
// name   : how the lock appears in benchmark names, the JSON and the report (no '/' or spaces);
// kind   : spinwise (ours), peer (std, glibc, oneTBB, abseil, the textbook TTAS), or floor (not a
//          usable lock: the cheapest possible instruction sequence, for ratios);
// fifo   : the lock claims fairness (grants in arrival order); the report holds it to a
//          fairness target that unfair locks are not held to.
//
// exclusive_locks: uncontended, contended and handoff scenarios. shared_locks: uncontended (both
// modes) and the rw mixes. A policy variant whose type is the same as the default alias is
// measured once (the registration skips exact duplicates).

#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "../spinwise_locks.hpp"
#include "peers.hpp"
#include "spinwise/adaptive_policy.hpp"
#include "spinwise/hybrid_mutex.hpp"
#include "spinwise/hybrid_shared_mutex.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/sx_lock.hpp"
#include "spinwise/ttas_mutex.hpp"
#include "spinwise/wait_policy.hpp"

namespace spinwise::bench {

enum class lock_kind { spinwise, peer, floor };

struct lock_info {
  const char* name;
  lock_kind kind;
  bool fifo;
};

template <class L>
struct type_tag {
  using type = L;
};
template <class L>
inline constexpr type_tag<L> as{};

inline constexpr lock_kind spinwise_lock = lock_kind::spinwise;
inline constexpr lock_kind peer = lock_kind::peer;
inline constexpr lock_kind floor_lock = lock_kind::floor;

// The statistics class of the "+stats" variants.
struct bench_stats_class {
  static constexpr std::string_view name = "bench";
};
// The run-time switches' costs: a class with counting switched off ("+stats_off": within 2% of
// no_stats is the target) and one with tracking switched on ("+tracking": holders listed).
struct bench_stats_off_class {
  static constexpr std::string_view name = "bench.off";
};
struct bench_tracking_class {
  static constexpr std::string_view name = "bench.tracking";
};

// Flips those switches; main calls it before any benchmark runs.
inline void configure_stats_variants() {
  spinwise::class_stats<bench_stats_off_class>::set_counting(false);
  spinwise::class_stats<bench_tracking_class>::set_tracking(true);
}

template <class Visitor>
void exclusive_locks(Visitor&& v) {
  // spinwise, default policies: the catalogue's exclusive locks
  bench_catalog::each_lock([&](auto row) {
    using R = decltype(row);
    if constexpr (!R::shared) v(as<typename R::type>, {R::name, spinwise_lock, R::fifo});
  });

  // spinwise policy variants (the alias's own Tag, so the lock's per-type knobs apply)
  using spinwise::cpu_relaxer;
  using spinwise::hybrid_mutex_tag;
  using spinwise::ttas_mutex_tag;
  v(as<spinwise::ttas_mutex_t<spinwise::innodb_policy<ttas_mutex_tag>>>,
    {"ttas_mutex<innodb>", spinwise_lock, false});
  v(as<spinwise::ttas_mutex_t<spinwise::time_policy<ttas_mutex_tag>>>,
    {"ttas_mutex<time>", spinwise_lock, false});
  v(as<spinwise::ttas_mutex_t<spinwise::exp_backoff_policy<ttas_mutex_tag>>>,
    {"ttas_mutex<exp_backoff>", spinwise_lock, false});
  v(as<spinwise::ttas_mutex_t<spinwise::no_backoff_policy<ttas_mutex_tag>>>,
    {"ttas_mutex<no_backoff>", spinwise_lock, false});
  v(as<spinwise::hybrid_mutex_t<spinwise::innodb_policy<hybrid_mutex_tag>>>,
    {"hybrid_mutex<innodb>", spinwise_lock, false});
  v(as<spinwise::hybrid_mutex_t<spinwise::time_policy<hybrid_mutex_tag>>>,
    {"hybrid_mutex<time>", spinwise_lock, false});
  v(as<spinwise::hybrid_mutex_t<spinwise::exp_backoff_policy<hybrid_mutex_tag>>>,
    {"hybrid_mutex<exp_backoff>", spinwise_lock, false});
  v(as<spinwise::hybrid_mutex_t<spinwise::no_backoff_policy<hybrid_mutex_tag>>>,
    {"hybrid_mutex<no_backoff>", spinwise_lock, false});
  v(as<spinwise::ttas_mutex_t<spinwise::adaptive_policy<ttas_mutex_tag>>>,
    {"ttas_mutex<adaptive>", spinwise_lock, false});
  v(as<spinwise::hybrid_mutex_t<spinwise::adaptive_policy<hybrid_mutex_tag>>>,
    {"hybrid_mutex<adaptive>", spinwise_lock, false});

  // statistics on (their cost: compare with the same lock without them)
  v(as<spinwise::ttas_mutex_t<spinwise::time_policy<ttas_mutex_tag>,
                              spinwise::class_stats<bench_stats_class>>>,
    {"ttas_mutex+stats", spinwise_lock, false});
  v(as<spinwise::hybrid_mutex_t<spinwise::time_policy<hybrid_mutex_tag>,
                                spinwise::class_stats<bench_stats_class>>>,
    {"hybrid_mutex+stats", spinwise_lock, false});
  v(as<spinwise::hybrid_mutex_t<spinwise::time_policy<hybrid_mutex_tag>,
                                spinwise::class_stats<bench_stats_off_class>>>,
    {"hybrid_mutex+stats_off", spinwise_lock, false});
  v(as<spinwise::hybrid_mutex_t<spinwise::time_policy<hybrid_mutex_tag>,
                                spinwise::class_stats<bench_tracking_class>>>,
    {"hybrid_mutex+tracking", spinwise_lock, false});

  // peers
  v(as<std::mutex>, {"std::mutex", peer, false});
  v(as<pthread_adaptive>, {"pthread_adaptive", peer, false});
  v(as<pthread_spin>, {"pthread_spinlock", peer, false});
  v(as<textbook_ttas>, {"textbook_ttas", peer, false});
#if SPINWISE_BENCH_HAVE_TBB
  v(as<tbb::spin_mutex>, {"tbb::spin_mutex", peer, false});
  v(as<tbb::queuing_mutex>, {"tbb::queuing_mutex", peer, true});
#endif
#if SPINWISE_BENCH_HAVE_ABSL
  v(as<absl_mutex>, {"absl::Mutex", peer, false});
#endif
}

template <class Visitor>
void shared_locks(Visitor&& v) {
  // spinwise, default policies: the catalogue's shared locks (sx_lock: S for reads, X for writes)
  bench_catalog::each_lock([&](auto row) {
    using R = decltype(row);
    if constexpr (R::shared) v(as<typename R::type>, {R::name, spinwise_lock, R::fifo});
  });

  // The InnoDB replay (instruction counts) under the aliases' own Tags: these were the shared
  // latches' defaults up to 0.2.0, so default / <innodb> is the change of default in one run.
  using spinwise::hybrid_shared_mutex_tag;
  using spinwise::sx_lock_tag;
  v(as<spinwise::hybrid_shared_mutex_t<spinwise::innodb_policy<hybrid_shared_mutex_tag>>>,
    {"hybrid_shared_mutex<innodb>", spinwise_lock, false});
  v(as<spinwise::sx_lock_t<spinwise::innodb_policy<sx_lock_tag>>>, {"sx_lock<innodb>", spinwise_lock, false});

  // peers
  v(as<std::shared_mutex>, {"std::shared_mutex", peer, false});
#if SPINWISE_BENCH_HAVE_TBB
  v(as<tbb::spin_rw_mutex>, {"tbb::spin_rw_mutex", peer, false});
#endif
#if SPINWISE_BENCH_HAVE_ABSL
  v(as<absl_mutex>, {"absl::Mutex", peer, false});
#endif
}

// Peers compiled out, each with the reason (printed at start-up and put in the JSON context).
inline std::vector<std::string> missing_peers() {
  std::vector<std::string> m;
#if !SPINWISE_BENCH_HAVE_TBB
  m.emplace_back("tbb::spin_mutex, tbb::queuing_mutex, tbb::spin_rw_mutex (" SPINWISE_BENCH_TBB_WHY ")");
#endif
#if !SPINWISE_BENCH_HAVE_ABSL
  m.emplace_back("absl::Mutex (" SPINWISE_BENCH_ABSL_WHY ")");
#endif
  return m;
}

inline const char* kind_name(lock_kind k) {
  switch (k) {
    case lock_kind::spinwise:
      return "spinwise";
    case lock_kind::peer:
      return "peer";
    default:
      return "floor";
  }
}

}  // namespace spinwise::bench
