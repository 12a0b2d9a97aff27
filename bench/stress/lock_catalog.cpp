#include "lock_catalog.hpp"

#include <algorithm>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "../spinwise_locks.hpp"
#include "common/enum_names.hpp"
#include "counted_policy.hpp"
#include "emulated_relaxer.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/thread_annotations.hpp"
#include "spinwise/wait_policy.hpp"

namespace spinwise::stress {

namespace {

// none is the reference locks' "policy": printed, not a --policy value.
constexpr detail::enum_name<policy_kind> kPolicyNames[] = {
    {policy_kind::innodb, "innodb"},           {policy_kind::time, "time"},
    {policy_kind::exp_backoff, "exp_backoff"}, {policy_kind::no_backoff, "no_backoff"},
    {policy_kind::adaptive, "adaptive"},       {policy_kind::none, "none", false}};

}  // namespace

std::string_view to_string(policy_kind p) noexcept { return name_in(kPolicyNames, p); }

bool parse_policy(std::string_view s, policy_kind& out) noexcept { return parse_in(kPolicyNames, s, out); }

namespace {

// The stress locks' own knobs: setting them leaves the process-wide values alone.
struct stress_tag {};

using innodb_p = innodb_policy<stress_tag, emulated_relaxer>;
using time_p = time_policy<stress_tag, emulated_relaxer>;
using exp_p = exp_backoff_policy<stress_tag, emulated_relaxer>;
using none_p = no_backoff_policy<stress_tag, emulated_relaxer>;
using adaptive_p = adaptive_policy<stress_tag, emulated_relaxer>;

template <class L>
struct alignas(kCacheLinePad) padded {
  L lock;
};

// Type erasure hands a held latch from one call to the next, which Clang's thread-safety analysis
// cannot follow: the scenarios pair every acquire with its release themselves (scenario.hpp).
#define STRESS_UNCHECKED SPINWISE_NO_THREAD_SAFETY_ANALYSIS

// L's lock(), lock_shared(), try_lock() and try_lock_shared() with the caller's lock_site where L
// takes one (hybrid_mutex, hybrid_shared_mutex, sx_lock: tracking lists the site), else without.
#define STRESS_AT_SITE(fn)                                                                                  \
  template <class L, class = void>                                                                          \
  struct fn##_takes_site : std::false_type {};                                                              \
  template <class L>                                                                                        \
  struct fn##_takes_site<L, std::void_t<decltype(std::declval<L&>().fn(lock_site{}))>> : std::true_type {}; \
  template <class L>                                                                                        \
  auto fn##_at(L& l, lock_site site) STRESS_UNCHECKED {                                                     \
    if constexpr (fn##_takes_site<L>::value) {                                                              \
      return l.fn(site);                                                                                    \
    } else {                                                                                                \
      return l.fn();                                                                                        \
    }                                                                                                       \
  }
STRESS_AT_SITE(lock)
STRESS_AT_SITE(lock_shared)
STRESS_AT_SITE(try_lock)
STRESS_AT_SITE(try_lock_shared)
#undef STRESS_AT_SITE

template <class L, bool Shared>
class latch_array final : public latch_set {
 public:
  explicit latch_array(std::size_t n) : n_(n), latches_(new padded<L>[n]) {}
  std::size_t size() const noexcept override { return n_; }
  bool shared_capable() const noexcept override { return Shared; }
  bool try_lock(std::size_t i, lock_site site) noexcept override STRESS_UNCHECKED {
    return try_lock_at(latches_[i].lock, site);
  }
  void lock(std::size_t i, lock_site site) noexcept override STRESS_UNCHECKED {
    lock_at(latches_[i].lock, site);
  }
  void unlock(std::size_t i) noexcept override STRESS_UNCHECKED { latches_[i].lock.unlock(); }
  bool try_lock_shared(std::size_t i, lock_site site) noexcept override STRESS_UNCHECKED {
    if constexpr (Shared) {
      return try_lock_shared_at(latches_[i].lock, site);
    } else {
      return try_lock_at(latches_[i].lock, site);
    }
  }
  void lock_shared(std::size_t i, lock_site site) noexcept override STRESS_UNCHECKED {
    if constexpr (Shared) {
      lock_shared_at(latches_[i].lock, site);
    } else {
      lock_at(latches_[i].lock, site);
    }
  }
  void unlock_shared(std::size_t i) noexcept override STRESS_UNCHECKED {
    if constexpr (Shared) {
      latches_[i].lock.unlock_shared();
    } else {
      latches_[i].lock.unlock();
    }
  }

 private:
  std::size_t n_;
  std::unique_ptr<padded<L>[]> latches_;
};

template <class L, bool Shared>
std::unique_ptr<latch_set> make_array(std::size_t n) {
  return std::make_unique<latch_array<L, Shared>>(n);
}

// The lock statistics class every stress lock that takes a statistics policy records into.
using stress_stats = class_stats<stress_latch_class>;

// One spinwise lock template over the four policies. MakeLock<P> names the lock type.
template <template <class> class MakeLock, bool Shared>
std::unique_ptr<latch_set> make_spinwise(policy_kind p, std::size_t n) {
  switch (p) {
    case policy_kind::innodb:
      return make_array<MakeLock<counted<innodb_p>>, Shared>(n);
    case policy_kind::time:
      return make_array<MakeLock<counted<time_p>>, Shared>(n);
    case policy_kind::exp_backoff:
      return make_array<MakeLock<counted<exp_p>>, Shared>(n);
    case policy_kind::no_backoff:
      return make_array<MakeLock<counted<none_p>>, Shared>(n);
    case policy_kind::adaptive:
      return make_array<MakeLock<counted<adaptive_p>>, Shared>(n);
    case policy_kind::none:
      break;
  }
  throw std::invalid_argument("internal: a spinwise lock without a policy");
}

// Every spinwise lock of the catalogue (bench/spinwise_locks.hpp) as <lock>_s<P>: its template
// over the policy P, recording into stress_latch (exact parks). One alias template per lock: a
// template template parameter with a defaulted second parameter does not match
// `template <class> class` on Clang 14.
#define STRESS_FORM(lock, shape, when_spent, order) \
  template <class P>                                \
  using lock##_s = lock##_t<P, stress_stats>;
SPINWISE_LOCKS(STRESS_FORM)
#undef STRESS_FORM

using factory = std::unique_ptr<latch_set> (*)(policy_kind, std::size_t);

struct entry {
  lock_info info;
  factory make;
};

// The policy a library policy type is, by its own name() ("innodb", "time", ...); none for a
// name this tool does not know.
constexpr policy_kind kind_named(std::string_view name) noexcept {
  for (const detail::enum_name<policy_kind>& n : kPolicyNames) {
    if (n.parsable && n.name == name) return n.value;
  }
  return policy_kind::none;
}

// The policies a spinwise lock runs under here. The first, its default, is the policy of the
// library's public alias (`Lock` is spinwise::hybrid_mutex etc.), read from the type itself, so
// the tool's default cannot drift from the library's; the others follow in a fixed order.
template <class Lock>
std::vector<policy_kind> policies_of() {
  constexpr policy_kind kDefault = kind_named(Lock::policy::name());
  static_assert(kDefault != policy_kind::none, "the library's default policy has no spinwise-stress name");
  std::vector<policy_kind> v = {kDefault};
  for (policy_kind p : {policy_kind::innodb, policy_kind::time, policy_kind::exp_backoff,
                        policy_kind::no_backoff, policy_kind::adaptive}) {
    if (p != kDefault) v.push_back(p);
  }
  return v;
}

// A catalogue lock: R its row, Stressed its form here (<lock>_s).
template <class R, template <class> class Stressed>
entry spinwise_entry() {
  return {{R::name, true, R::shared, R::parks, true, policies_of<typename R::type>()},
          &make_spinwise<Stressed, R::shared>};
}

// The catalogue's locks in its order, then the references.
const std::vector<entry>& entries() {
  static const std::vector<entry> e = [] {
#define STRESS_ENTRY(lock, shape, when_spent, order) spinwise_entry<bench_catalog::lock##_row, lock##_s>(),
    std::vector<entry> v = {SPINWISE_LOCKS(STRESS_ENTRY)};
#undef STRESS_ENTRY
    v.push_back({{"std::mutex", false, false, true, false, {policy_kind::none}},
                 [](policy_kind, std::size_t n) { return make_array<std::mutex, false>(n); }});
    v.push_back({{"std::shared_mutex", false, true, true, false, {policy_kind::none}},
                 [](policy_kind, std::size_t n) { return make_array<std::shared_mutex, true>(n); }});
    return v;
  }();
  return e;
}

}  // namespace

void set_stress_tracking(bool on) noexcept { stress_stats::set_tracking(on); }
bool stress_tracking() noexcept { return stress_stats::tracking(); }

const std::vector<lock_info>& lock_catalog() {
  static const std::vector<lock_info> v = [] {
    std::vector<lock_info> out;
    for (const entry& e : entries()) out.push_back(e.info);
    return out;
  }();
  return v;
}

const lock_info* find_lock(std::string_view name) {
  if (name == "rw_spinlock") name = "spin_shared_mutex";  // its name before 0.2.0
  for (const lock_info& i : lock_catalog()) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

policy_kind resolve_policy(const lock_choice& c) {
  const lock_info* info = find_lock(c.lock);
  if (info == nullptr) {
    std::string known;
    for (const lock_info& i : lock_catalog()) known += (known.empty() ? "" : ", ") + i.name;
    throw std::invalid_argument("unknown lock '" + c.lock + "' (known: " + known + ")");
  }
  const policy_kind p = c.policy.value_or(info->policies.front());
  if (std::find(info->policies.begin(), info->policies.end(), p) == info->policies.end()) {
    throw std::invalid_argument(c.lock + " has no wait policy '" + std::string(to_string(p)) + "'" +
                                (info->spinwise ? "" : " (it is a reference lock without policies)"));
  }
  const auto reject = [&](const std::optional<std::uint32_t>& v, const char* flag, const char* which) {
    if (v) {
      throw std::invalid_argument(
          std::string(flag) + " applies to " + which + ", not to " + c.lock +
          (p == policy_kind::none ? "" : " with the " + std::string(to_string(p)) + " policy"));
    }
  };
  const bool innodb = p == policy_kind::innodb, time = p == policy_kind::time;
  if (!innodb && !time) reject(c.spin_wait_delay, "--spin-wait-delay", "the innodb and time policies");
  if (!innodb) reject(c.pause_multiplier, "--pause-multiplier", "the innodb policy");
  if (p == policy_kind::none) reject(c.spin_loops, "--spin-loops", "spinwise locks");
  if (p == policy_kind::adaptive)
    reject(c.spin_loops, "--spin-loops",
           "the policies with a fixed budget (innodb, time, exp_backoff, no_backoff)");
  if (!time) reject(c.delay_unit_ns, "--delay-unit-ns", "the time policy");
  return p;
}

namespace {

// Sets Policy's knobs to `c`'s, the documented defaults for unset ones, all or nothing: spin_loops
// (every policy has it), then `own` fills the policy's other knobs.
template <class Policy, class Settings, class Own>
void set_knobs(const lock_choice& c, Own&& own) {
  Settings s;
  own(s);
  s.spin_loops = c.spin_loops.value_or(s.spin_loops);
  const knob_status st = Policy::set(s);
  if (!st.ok()) throw std::invalid_argument(st.message());
}

}  // namespace

void apply_knobs(const lock_choice& c) {
  switch (resolve_policy(c)) {
    case policy_kind::innodb:
      set_knobs<innodb_p, innodb_settings>(c, [&](innodb_settings& s) {
        s.spin_wait_delay = c.spin_wait_delay.value_or(s.spin_wait_delay);
        s.pause_multiplier = c.pause_multiplier.value_or(s.pause_multiplier);
      });
      break;
    case policy_kind::time:
      set_knobs<time_p, time_settings>(c, [&](time_settings& s) {
        s.spin_wait_delay = c.spin_wait_delay.value_or(s.spin_wait_delay);
        s.delay_unit_ns = c.delay_unit_ns.value_or(s.delay_unit_ns);
      });
      break;
    case policy_kind::exp_backoff:
      set_knobs<exp_p, exp_backoff_settings>(c, [](exp_backoff_settings&) {});
      break;
    case policy_kind::no_backoff:
      set_knobs<none_p, no_backoff_settings>(c, [](no_backoff_settings&) {});
      break;
    case policy_kind::adaptive: {
      // No knob to set: its defaults. Each run learns from scratch, whatever ran before it.
      const knob_status st = adaptive_p::set(adaptive_settings{});
      if (!st.ok()) throw std::invalid_argument(st.message());
      adaptive_p::relearn();
      break;
    }
    case policy_kind::none:
      break;
  }
}

std::uint32_t adaptive_budget_ns() noexcept { return adaptive_p::budget_ns(); }
std::uint64_t adaptive_decisions() noexcept { return adaptive_p::decisions(); }

std::vector<std::pair<std::string, std::uint32_t>> effective_knobs(policy_kind p) {
  switch (p) {
    case policy_kind::innodb: {
      const innodb_settings s = innodb_p::current();
      return {{"spin_wait_delay", s.spin_wait_delay},
              {"pause_multiplier", s.pause_multiplier},
              {"spin_loops", s.spin_loops}};
    }
    case policy_kind::time: {
      const time_settings s = time_p::current();
      return {{"spin_wait_delay", s.spin_wait_delay},
              {"delay_unit_ns", s.delay_unit_ns},
              {"spin_loops", s.spin_loops}};
    }
    case policy_kind::exp_backoff: {
      const exp_backoff_settings s = exp_p::current();
      return {
          {"min_delay_ns", s.min_delay_ns}, {"max_delay_ns", s.max_delay_ns}, {"spin_loops", s.spin_loops}};
    }
    case policy_kind::no_backoff:
      return {{"spin_loops", no_backoff_settings{none_p::current()}.spin_loops}};
    case policy_kind::adaptive: {
      const adaptive_settings s = adaptive_p::current();
      return {
          {"spin_cpu_pct", s.spin_cpu_pct}, {"min_spin_ns", s.min_spin_ns}, {"max_spin_ns", s.max_spin_ns}};
    }
    case policy_kind::none:
      break;
  }
  return {};
}

std::unique_ptr<latch_set> make_latch_set(const lock_choice& c, std::size_t n) {
  const policy_kind p = resolve_policy(c);
  const lock_info* info = find_lock(c.lock);
  for (const entry& e : entries()) {
    if (info != nullptr && e.info.name == info->name) return e.make(p, n);
  }
  throw std::invalid_argument("unknown lock '" + c.lock + "'");
}

}  // namespace spinwise::stress
