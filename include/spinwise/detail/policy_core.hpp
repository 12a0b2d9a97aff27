#pragma once
// The skeleton every wait policy shares (wait_policy.hpp states the contract): the knob table,
// the knob interface, the spin budget and the waiter. A policy adds only its knob table, its
// delay rule, which spends one round's delay through Relax and returns the relaxes it issued, and
// a line that puts them together.
//
//   // One row X(name, min, max, default) per knob, 1 to 3 rows, each default with its reason.
//   #define SPINWISE_MY_KNOBS(X) X(delay_ns, 1, 10000, 100) X(spin_loops, 0, kMaxSpinLoops, 30)
//   struct my_settings { SPINWISE_MY_KNOBS(SPINWISE_KNOB_SETTING) };
//   namespace detail {
//   struct my_knobs { SPINWISE_KNOB_TABLE(my, my_settings, SPINWISE_MY_KNOBS) };
//   struct my_spec : knob_spec<my_knobs> {};
//   struct my_rule {                          // per-wait state, if any (e.g. a conversion rate)
//     template <class Relax, class Until>
//     std::uint64_t delay(std::uint64_t knobs, std::uint32_t round, Until& until) noexcept;
//   };
//   }
//   template <class Tag, class Relax>
//   struct my_policy : detail::policy_base<detail::my_spec, Tag, Relax, detail::my_rule> {};
//
// The table is the knobs' one home: the settings struct, the field indices the rule reads the
// knob word with (my_spec::field::delay_ns), the bounds and defaults with their error messages,
// and the policy's name() and set_<knob>() / <knob>() pairs all come from it.
//
// `until` is the lock's "may I stop waiting?" (the word looks free): a rule that hands off
// promptly asks it between chunks of relaxes and ends the round when it says true
// (prompt_time_policy's, via relax_for_ns, at each counter check, or every kDelayPollNs when the
// lock wrapped it in poll_eagerly: pass `until` on unchanged, or that request is lost). A rule
// may ignore it, and the defaults' do: innodb (MySQL's ut_delay counts instructions and does not
// look), time and exp_backoff (each poll inside a backoff is a load of the holder's line). A rule
// with the two-argument delay(knobs, round) never ends early.
//
// The waiter re-reads the knob word every round (one relaxed load, two with a Tag override), so
// a change made while a thread spins applies from its next round, the budget included.

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>
#include <type_traits>
#include <utility>

#include "spinwise/cpu_relaxer.hpp"
#include "spinwise/detail/clock_bounded_delay.hpp"
#include "spinwise/detail/knob_word.hpp"
#include "spinwise/knob_status.hpp"

namespace spinwise::detail {

// ---- The knob table ----------------------------------------------------------------------------
// A policy's knobs are rows X(name, min, max, default) of a table macro (see the file top).
// Members of a table struct (SPINWISE_KNOB_TABLE): settings, kFamily (the policy's name and its
// messages' first word), field::<name> (the field's index in the knob word), kRows (the fields;
// knob_spec adds their messages), kMembers (the settings struct's members in row order) and
// accessors<Api>, the policy's name() and set_<name>() / <name>() over Api = knob_api<Spec, Tag>.
// A table may add kOrder, a cross-field rule (knob_order).

// One std::uint32_t member per row, at the row's default: the settings struct's body.
#define SPINWISE_KNOB_SETTING(name, lo, hi, def) std::uint32_t name = def;

#define SPINWISE_KNOB_TABLE(family, settings_type, TABLE)                                      \
  using settings = settings_type;                                                              \
  static constexpr std::string_view kFamily = #family;                                         \
  struct field {                                                                               \
    enum : std::size_t { TABLE(SPINWISE_DETAIL_KNOB_INDEX) };                                  \
  };                                                                                           \
  static constexpr knob_field kRows[] = {TABLE(SPINWISE_DETAIL_KNOB_ROW)};                     \
  static constexpr std::uint32_t settings::*kMembers[] = {TABLE(SPINWISE_DETAIL_KNOB_MEMBER)}; \
  template <class Api>                                                                         \
  struct accessors : Api {                                                                     \
    static constexpr std::string_view name() noexcept { return #family; }                      \
    TABLE(SPINWISE_DETAIL_KNOB_ACCESSORS)                                                      \
  }

#define SPINWISE_DETAIL_KNOB_INDEX(name, lo, hi, def) name,
#define SPINWISE_DETAIL_KNOB_ROW(name, lo, hi, def) {#name, lo, hi, def, nullptr},
#define SPINWISE_DETAIL_KNOB_MEMBER(name, lo, hi, def) &settings::name,
#define SPINWISE_DETAIL_KNOB_ACCESSORS(name, lo, hi, def)                                            \
  static knob_status set_##name(std::uint32_t v) noexcept { return Api::set_field(field::name, v); } \
  static std::uint32_t name() noexcept { return Api::field_value(field::name); }

// A cross-field rule: field lo must not exceed field hi (exp_backoff's and adaptive's min and
// max); a Tag overrides the two together (knob_tied). lo == hi: no rule.
struct knob_order {
  std::size_t lo = 0;
  std::size_t hi = 0;
};

template <class Table, class = void>
struct knob_order_of {
  static constexpr knob_order value{};
};
template <class Table>
struct knob_order_of<Table, std::void_t<decltype(Table::kOrder)>> {
  static constexpr knob_order value = Table::kOrder;
};

// A message made at compile time from a knob table; a knob_status points to it.
struct knob_text {
  static constexpr std::size_t kCap = 128;
  char text[kCap] = {};  // NUL-terminated while size < kCap (knob_spec asserts it)
  std::size_t size = 0;

  // Past kCap the write lands outside `text`: not a constant, so the table does not compile.
  constexpr knob_text& operator<<(std::string_view s) noexcept {
    for (char c : s) text[size++] = c;
    return *this;
  }
  constexpr knob_text& operator<<(std::uint32_t v) noexcept {
    char digits[10] = {};
    std::size_t n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n != 0) text[size++] = digits[--n];
    return *this;
  }
};

// "time delay_unit_ns must be in 1..10000"
template <class Table, std::size_t I>
constexpr knob_text knob_range_text() noexcept {
  constexpr knob_field f = Table::kRows[I];
  knob_text t;
  t << Table::kFamily << " " << f.name << " must be in " << f.min << ".." << f.max;
  return t;
}
// "unknown time knob (known: spin_wait_delay, delay_unit_ns, spin_loops)"
template <class Table>
constexpr knob_text knob_unknown_text() noexcept {
  knob_text t;
  t << "unknown " << Table::kFamily << " knob (known: ";
  for (std::size_t i = 0; i < std::size(Table::kRows); ++i) t << (i == 0 ? "" : ", ") << Table::kRows[i].name;
  t << ")";
  return t;
}
// "exp_backoff min_delay_ns must not exceed max_delay_ns (set both at once with set(settings))"
template <class Table>
constexpr knob_text knob_order_text() noexcept {
  constexpr knob_order o = knob_order_of<Table>::value;
  knob_text t;
  t << Table::kFamily << " " << Table::kRows[o.lo].name << " must not exceed " << Table::kRows[o.hi].name
    << " (set both at once with set(settings))";
  return t;
}

// What knob_api and the waiters read from a Spec, made from its table: the fields with their
// range messages, the unknown-name message, the cross-field rule and the fields it ties, and the
// settings struct to and from a knob word.
template <class Table, class = std::make_index_sequence<std::size(Table::kRows)>>
struct knob_spec;

template <class Table, std::size_t... I>
struct knob_spec<Table, std::index_sequence<I...>> : Table {
  using settings = typename Table::settings;
  static constexpr std::size_t kCount = sizeof...(I);
  static_assert(kCount <= kMaxKnobFields, "a knob word holds at most kMaxKnobFields fields");
  static_assert(sizeof(settings) == kCount * sizeof(std::uint32_t),
                "settings holds the table's fields alone");

  static constexpr knob_text kRangeText[kCount] = {knob_range_text<Table, I>()...};
  static constexpr knob_field kFields[kCount] = {{Table::kRows[I].name, Table::kRows[I].min,
                                                  Table::kRows[I].max, Table::kRows[I].def,
                                                  kRangeText[I].text}...};
  static constexpr knob_text kUnknownText = knob_unknown_text<Table>();
  static constexpr const char* kUnknownName = kUnknownText.text;

  static constexpr knob_order kOrder = knob_order_of<Table>::value;
  static constexpr bool kOrdered = kOrder.lo != kOrder.hi;
  static constexpr std::uint32_t kTied = kOrdered ? (1u << kOrder.lo) | (1u << kOrder.hi) : 0u;
  static constexpr knob_text kOrderText = knob_order_text<Table>();
  static_assert(((kRangeText[I].size < knob_text::kCap) && ...) && kUnknownText.size < knob_text::kCap &&
                    kOrderText.size < knob_text::kCap,
                "a knob message outgrew knob_text");

  // The message of the rule `w` breaks, or nullptr.
  static constexpr const char* cross_check(std::uint64_t w) noexcept {
    return kOrdered && knob_get(w, kOrder.lo) > knob_get(w, kOrder.hi) ? kOrderText.text : nullptr;
  }
  static constexpr settings to_settings(std::uint64_t w) noexcept {
    settings s{};
    ((s.*Table::kMembers[I] = knob_get(w, I)), ...);
    return s;
  }
  static constexpr void from_settings(const settings& s, std::uint32_t* v) noexcept {
    ((v[I] = s.*Table::kMembers[I]), ...);
  }
};

template <class Rule, class Relax, class Until, class = void>
struct rule_takes_until : std::false_type {};
template <class Rule, class Relax, class Until>
struct rule_takes_until<Rule, Relax, Until,
                        std::void_t<decltype(std::declval<Rule&>().template delay<Relax>(
                            std::uint64_t{}, std::uint32_t{}, std::declval<Until&>()))>> : std::true_type {};

// One busy-lock episode: up to spin_loops rounds (the Spec's field of that name), each the Rule's
// delay, its relaxes counted for the statistics.
template <class Spec, class Tag, class Relax, class Rule>
class rounds_waiter {
 public:
  using relax = Relax;  // what snooze() issues: statistics price a snooze by it

  rounds_waiter() noexcept : loops_(knob_get(knob_word<Spec, Tag>(), Spec::field::spin_loops)) {}

  // One round. Never blocks, never yields. The round ends early once until() says true
  // (asked at each counter check by the time rules, ~100 ns, or every kDelayPollNs for a
  // poll_eagerly predicate; see the rule contract above).
  void snooze() noexcept { snooze(never_ready{}); }
  template <class Until>
  void snooze(Until&& until) noexcept {
    const std::uint64_t w = knob_word<Spec, Tag>();
    loops_ = knob_get(w, Spec::field::spin_loops);
    if constexpr (rule_takes_until<Rule, Relax, std::remove_reference_t<Until>>::value) {
      relaxes_ += rule_.template delay<Relax>(w, rounds_, until);
    } else {
      relaxes_ += rule_.template delay<Relax>(w, rounds_);
    }
    ++rounds_;
  }
  // The spin budget is spent: yield (spin locks) or yield once and park (hybrid locks).
  bool is_completed() const noexcept { return rounds_ >= loops_; }
  std::uint32_t rounds() const noexcept { return rounds_; }
  std::uint64_t relaxes() const noexcept { return relaxes_; }  // issued so far (statistics)

 private:
  Rule rule_;
  std::uint64_t relaxes_ = 0;
  std::uint32_t rounds_ = 0;
  std::uint32_t loops_;
};

// w.snooze(until) where the waiter takes a predicate (every spinwise policy's does), else
// w.snooze(): a policy written to the older contract still works, its rounds just never end early.
template <class Waiter, class Until, class = void>
struct waiter_takes_until : std::false_type {};
template <class Waiter, class Until>
struct waiter_takes_until<Waiter, Until,
                          std::void_t<decltype(std::declval<Waiter&>().snooze(std::declval<Until&>()))>>
    : std::true_type {};

template <class Waiter, class Until>
SPINWISE_ALWAYS_INLINE void snooze_until(Waiter& w, Until& until) noexcept {
  if constexpr (waiter_takes_until<Waiter, Until>::value) {
    w.snooze(until);
  } else {
    w.snooze();
  }
}

// Tells a waiter how its spinning ended, where it wants to know (adaptive_policy learns from it):
// won = the lock was taken while the waiter spun; false = its budget ran out first.
template <class Waiter, class = void>
struct waiter_learns : std::false_type {};
template <class Waiter>
struct waiter_learns<Waiter, std::void_t<decltype(std::declval<Waiter&>().finish(true))>> : std::true_type {};

template <class Waiter>
SPINWISE_ALWAYS_INLINE void finish_spin(Waiter& w, bool won) noexcept {
  if constexpr (waiter_learns<Waiter>::value) w.finish(won);
}

// The static side of a policy: its knobs (knob_api), their accessors and name() (the table's),
// and its types. Tag = void: the process-wide knobs; any other Tag: per-field overrides for the
// locks using it. Relax: what a round issues (cpu_relaxer, or an emulated relax).
template <class Spec, class Tag, class Relax, class Rule>
struct policy_base : Spec::template accessors<knob_api<Spec, Tag>> {
  using tag = Tag;
  using relax = Relax;
  using waiter = rounds_waiter<Spec, Tag, Relax, Rule>;
};

}  // namespace spinwise::detail
