#pragma once
// The knob word: storage and validation behind the policies' knobs (knob_field, knob_slot, and
// knob_api, the setters every policy inherits; spinwise/knob_status.hpp has the contract).
//
// Each policy family (innodb, time, exp_backoff, no_backoff) describes its knobs in a Spec: up
// to three unsigned fields with bounds and defaults. The values live in one 64-bit word:
//
//   bit  63..63  62..60        59..40     39..20     19..0
//        unused  set[2..0]     field 2    field 1    field 0
//
// The process-wide word (knob_slot<Spec, void>) always holds every field and no set bits. An
// override word (knob_slot<Spec, Tag>) holds set bit i when Tag overrides field i; a field whose bit
// is clear is read from the process-wide word.
// Invariant: every field a word holds (all of a global word, the set ones of an override) is
// within its Spec bounds, which all fit in 20 bits; the values a waiter sees (a global word, or an
// override merged over it) satisfy the Spec's cross-field rule. Fields the rule binds (kTied) are
// overridden all or none, so a global change cannot break a Tag's pair; a global reset(name) that
// would break the rule is refused.
//
// Readers take one relaxed load (two with an override), once per spin round: no ordering is
// needed because a knob only shapes how long a waiter waits, never what it may read. Each word
// sits on its own cache-line pair, so writers elsewhere never bounce a spinner's line.
// The words are process-wide across shared objects: see knob_slot below.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "spinwise/arch.hpp"
#include "spinwise/detail/process_state.hpp"
#include "spinwise/knob_status.hpp"

namespace spinwise {

namespace detail {

struct knob_field {
  std::string_view name;
  std::uint32_t min;
  std::uint32_t max;
  std::uint32_t def;
  const char* range_error;  // returned when a value falls outside [min, max]
};

inline constexpr unsigned kKnobBits = 20;
inline constexpr std::uint64_t kKnobFieldMask = (std::uint64_t{1} << kKnobBits) - 1;
inline constexpr unsigned kKnobSetShift = 60;
inline constexpr std::size_t kMaxKnobFields = 3;

constexpr std::uint32_t knob_get(std::uint64_t word, std::size_t i) noexcept {
  return static_cast<std::uint32_t>((word >> (kKnobBits * i)) & kKnobFieldMask);
}
constexpr std::uint64_t knob_put(std::uint64_t word, std::size_t i, std::uint32_t v) noexcept {
  const unsigned shift = static_cast<unsigned>(kKnobBits * i);
  return (word & ~(kKnobFieldMask << shift)) | (static_cast<std::uint64_t>(v) << shift);
}
constexpr std::uint64_t knob_set_bit(std::size_t i) noexcept {
  return std::uint64_t{1} << (kKnobSetShift + i);
}

template <class Spec>
constexpr std::uint64_t knob_default_word() noexcept {
  std::uint64_t w = 0;
  for (std::size_t i = 0; i < Spec::kCount; ++i) w = knob_put(w, i, Spec::kFields[i].def);
  return w;
}

// The fields of Spec bound together by its cross-field rule (bit i = field i): Spec::kTied, or
// none. A Tag overrides such fields together, so that a change of the process-wide values can
// never break the rule for the Tag (its pair was checked when it was set).
template <class Spec, class = void>
struct knob_tied : std::integral_constant<std::uint32_t, 0> {};
template <class Spec>
struct knob_tied<Spec, std::void_t<decltype(Spec::kTied)>>
    : std::integral_constant<std::uint32_t, Spec::kTied> {};

// Effective word for an override `o` over the global word `g`: overridden fields from o, the rest from g.
constexpr std::uint64_t knob_merge(std::uint64_t o, std::uint64_t g) noexcept {
  std::uint64_t take = 0;
  for (std::size_t i = 0; i < kMaxKnobFields; ++i) {
    if (o & knob_set_bit(i)) take |= kKnobFieldMask << (kKnobBits * i);
  }
  return (o & take) | (g & ~take & ((std::uint64_t{1} << kKnobSetShift) - 1));
}

// Where the words live: a named slot in the process-wide state (detail/process_state.hpp), so that
// every module of the process (a plugin built with -fvisibility=hidden, one loaded with
// dlopen(RTLD_LOCAL)) reads and writes the same word. The key is the signature of
// knob_key<Spec, Tag>; each module finds the slot once and caches its address.
template <class Spec, class Tag>
struct knob_key {};

template <class Spec, class Tag>
inline constexpr std::uint64_t kKnobInitial = std::is_void_v<Tag> ? knob_default_word<Spec>() : 0;

// The word's address, found and cached (found_once: no function-local static, so no guard a
// stopped thread could hold). nullptr only with on_busy::give_up, when finding it would wait for
// a thread inside the process-wide lists' lock (the word does not exist yet: nobody set it).
template <class Spec, class Tag>
SPINWISE_COLD std::atomic<std::uint64_t>* find_knob_word(on_busy mode) noexcept {
  constexpr std::string_view key = type_signature<knob_key<Spec, Tag>>();
  std::atomic<std::uint64_t>* w = nullptr;
  if constexpr (!names_type_without_linkage(key)) {
    bool busy = false;
    w = find_slot(key, kKnobInitial<Spec, Tag>, mode, &busy);
    if (busy) return nullptr;
  }
  if (w == nullptr) {
    // A Tag no other module can name (or no memory for a slot): this module's own word,
    // constant-initialized (no guard).
    alignas(kCacheLinePad) static std::atomic<std::uint64_t> local{kKnobInitial<Spec, Tag>};
    w = &local;
  }
  found_once<std::atomic<std::uint64_t>, knob_key<Spec, Tag>>::ptr.store(w, std::memory_order_release);
  return w;
}

// Spec's process-wide word (Tag = void) or Tag's override word, for the knob setters.
template <class Spec, class Tag>
SPINWISE_ALWAYS_INLINE std::atomic<std::uint64_t>& knob_slot() noexcept {
  std::atomic<std::uint64_t>* w =
      found_once<std::atomic<std::uint64_t>, knob_key<Spec, Tag>>::ptr.load(std::memory_order_acquire);
  if (SPINWISE_UNLIKELY(w == nullptr)) w = find_knob_word<Spec, Tag>(on_busy::wait);
  return *w;
}

// The value of that word for a waiter, which never waits for it: the initial value while the word
// does not exist yet and another thread holds the lists' lock (a word nobody has created holds
// its initial value).
template <class Spec, class Tag>
SPINWISE_ALWAYS_INLINE std::uint64_t knob_value() noexcept {
  std::atomic<std::uint64_t>* w =
      found_once<std::atomic<std::uint64_t>, knob_key<Spec, Tag>>::ptr.load(std::memory_order_acquire);
  if (SPINWISE_UNLIKELY(w == nullptr)) {
    w = find_knob_word<Spec, Tag>(on_busy::give_up);
    if (w == nullptr) return kKnobInitial<Spec, Tag>;
  }
  return w->load(std::memory_order_relaxed);
}

// The knobs a waiter of policy family Spec with tag Tag uses now.
template <class Spec, class Tag>
SPINWISE_ALWAYS_INLINE std::uint64_t knob_word() noexcept {
  const std::uint64_t g = knob_value<Spec, void>();
  if constexpr (std::is_void_v<Tag>) {
    return g;
  } else {
    const std::uint64_t o = knob_value<Spec, Tag>();
    return SPINWISE_LIKELY(o == 0) ? g : knob_merge(o, g);
  }
}

// The static knob interface every policy inherits: Spec describes the fields, Tag picks the word
// (void: the process-wide values; anything else: that Tag's overrides).
template <class Spec, class Tag>
struct knob_api {
  using settings_type = typename Spec::settings;

  // The values waiters of this policy use now (overrides merged over the process-wide values).
  static settings_type current() noexcept { return Spec::to_settings(knob_word<Spec, Tag>()); }

  // Sets every field at once; all or nothing. For a Tag, every field becomes an override.
  static knob_status set(const settings_type& s) noexcept {
    std::uint32_t v[kMaxKnobFields] = {};
    Spec::from_settings(s, v);
    return store((std::uint32_t{1} << Spec::kCount) - 1, v);
  }

  // Sets one field by its name (as the settings struct spells it), for config files and CLIs.
  static knob_status set(std::string_view name, std::uint32_t value) noexcept {
    const std::size_t i = index_of(name);
    if (i == Spec::kCount) return {std::errc::invalid_argument, Spec::kUnknownName};
    return set_field(i, value);
  }

  // The current value of one field by name; false (and `out` untouched) for an unknown name.
  static bool get(std::string_view name, std::uint32_t& out) noexcept {
    const std::size_t i = index_of(name);
    if (i == Spec::kCount) return false;
    out = knob_get(knob_word<Spec, Tag>(), i);
    return true;
  }

  // Process-wide: back to the documented defaults. Tag: drop every override of this Tag.
  static void reset() noexcept {
    if constexpr (std::is_void_v<Tag>) {
      knob_slot<Spec, void>().store(knob_default_word<Spec>(), std::memory_order_relaxed);
    } else {
      knob_slot<Spec, Tag>().store(0, std::memory_order_relaxed);
    }
  }

  // Process-wide: one field back to its default; refused (nothing changed) if the default would
  // break a cross-field rule with the other fields' values. Tag: drop this Tag's override of one
  // field, and of the fields tied to it (they follow the process-wide values together).
  static knob_status reset(std::string_view name) noexcept {
    const std::size_t i = index_of(name);
    if (i == Spec::kCount) return {std::errc::invalid_argument, Spec::kUnknownName};
    std::uint32_t drop = std::uint32_t{1} << i;
    if (drop & knob_tied<Spec>::value) drop |= knob_tied<Spec>::value;
    std::atomic<std::uint64_t>& w = word();
    std::uint64_t cur = w.load(std::memory_order_relaxed);
    for (;;) {
      std::uint64_t next = cur;
      if constexpr (std::is_void_v<Tag>) {
        next = knob_put(cur, i, Spec::kFields[i].def);
        if (const char* e = Spec::cross_check(next)) return {std::errc::invalid_argument, e};
      } else {
        for (std::size_t f = 0; f < Spec::kCount; ++f) {
          if (drop >> f & 1u) next = knob_put(next, f, 0) & ~knob_set_bit(f);
        }
      }
      if (w.compare_exchange_weak(cur, next, std::memory_order_relaxed)) return {};
    }
  }

  // True when this Tag overrides at least one field (always false for the process-wide values).
  static bool overridden() noexcept {
    if constexpr (std::is_void_v<Tag>) {
      return false;
    } else {
      return knob_slot<Spec, Tag>().load(std::memory_order_relaxed) != 0;
    }
  }

  // ---- Fields by index, for the knob registry (spinwise/knob_class.hpp) -----------------------
  // What the registry and the knob parsers need without knowing Spec: the fields' descriptions,
  // per-field values and overrides, and a batch of fields (bit i = field i) checked first and then
  // published in one CAS. The same validation and Tag semantics as set(name, value).
  static constexpr std::size_t field_count() noexcept { return Spec::kCount; }
  static constexpr const knob_field* fields() noexcept { return Spec::kFields; }
  // The fields a Tag overrides together (bit i = field i): setting one pins the others.
  static constexpr std::uint32_t tied_fields() noexcept { return knob_tied<Spec>::value; }

  // The value of field i waiters use now (the override, or the process-wide value).
  static std::uint32_t field_value(std::size_t i) noexcept { return knob_get(knob_word<Spec, Tag>(), i); }

  // True when this Tag overrides field i (always false for the process-wide values).
  static bool field_overridden(std::size_t i) noexcept {
    if constexpr (std::is_void_v<Tag>) {
      return false;
    } else {
      return (word().load(std::memory_order_relaxed) & knob_set_bit(i)) != 0;
    }
  }

  // Sets the fields in `which` to v[i] at once; all or nothing.
  static knob_status set_fields(std::uint32_t which, const std::uint32_t* v) noexcept {
    return store(which, v);
  }

  // Dry run of set_fields(which, v): its result if the process-wide values were `global` (all
  // Spec::kCount of them; nullptr: as they are now), so a batch that also changes the family's
  // values checks a Tag against them. Changes nothing: the same range_check, compose and
  // cross_check as store().
  static knob_status check_fields(std::uint32_t which, const std::uint32_t* v,
                                  const std::uint32_t* global = nullptr) noexcept {
    if (const knob_status st = range_check(which, v); !st) return st;
    std::uint64_t g = knob_word<Spec, void>();
    if (global != nullptr) {
      for (std::size_t i = 0; i < Spec::kCount; ++i) g = knob_put(g, i, global[i]);
    }
    const std::uint64_t cur = std::is_void_v<Tag> ? g : word().load(std::memory_order_relaxed);
    return cross_check(compose(cur, g, which, v), g);
  }
  // ---- end of the registry's block ---------------------------------------------------------

 protected:
  static knob_status set_field(std::size_t i, std::uint32_t value) noexcept {
    std::uint32_t v[kMaxKnobFields] = {};
    v[i] = value;
    return store(std::uint32_t{1} << i, v);
  }

 private:
  static std::atomic<std::uint64_t>& word() noexcept { return knob_slot<Spec, Tag>(); }

  static std::size_t index_of(std::string_view name) noexcept {
    std::size_t i = 0;
    while (i < Spec::kCount && Spec::kFields[i].name != name) ++i;
    return i;
  }

  static knob_status range_check(std::uint32_t which, const std::uint32_t* v) noexcept {
    for (std::size_t i = 0; i < Spec::kCount; ++i) {
      const knob_field& f = Spec::kFields[i];
      if ((which >> i & 1u) && (v[i] < f.min || v[i] > f.max))
        return {std::errc::argument_out_of_domain, f.range_error};
    }
    return {};
  }

  // The word `cur` with the fields in `which` set to v[i] (overrides, for a Tag). A field tied to
  // one being set is overridden too, at the value the Tag sees now (its override, or the global
  // word `global`): the rule is then checked on the Tag's own values, which no global change can
  // move. For the process-wide values (Tag = void) cur is the global word itself.
  static std::uint64_t compose(std::uint64_t cur, std::uint64_t global, std::uint32_t which,
                               const std::uint32_t* v) noexcept {
    std::uint64_t next = cur;
    for (std::size_t i = 0; i < Spec::kCount; ++i) {
      if (which >> i & 1u) {
        next = knob_put(next, i, v[i]);
        if constexpr (!std::is_void_v<Tag>) next |= knob_set_bit(i);
      }
    }
    if constexpr (!std::is_void_v<Tag>) {
      if (which & knob_tied<Spec>::value) {
        const std::uint64_t seen = knob_merge(cur, global);
        for (std::size_t i = 0; i < Spec::kCount; ++i) {
          if ((knob_tied<Spec>::value >> i & 1u) && !(next & knob_set_bit(i)))
            next = knob_put(next, i, knob_get(seen, i)) | knob_set_bit(i);
        }
      }
    }
    return next;
  }

  // Cross-field rules (exp_backoff: min <= max) on the values a waiter would see with `next`.
  static knob_status cross_check(std::uint64_t next, std::uint64_t global) noexcept {
    std::uint64_t effective = next;
    if constexpr (!std::is_void_v<Tag>) effective = knob_merge(next, global);
    if (const char* e = Spec::cross_check(effective)) return {std::errc::invalid_argument, e};
    return {};
  }

  // Validates, then publishes the fields in `which` (bit i = field i) in one CAS.
  static knob_status store(std::uint32_t which, const std::uint32_t* v) noexcept {
    if (const knob_status st = range_check(which, v); !st) return st;
    std::atomic<std::uint64_t>& w = word();
    std::uint64_t cur = w.load(std::memory_order_relaxed);
    for (;;) {
      const std::uint64_t global = knob_slot<Spec, void>().load(std::memory_order_relaxed);
      const std::uint64_t next = compose(cur, global, which, v);
      if (const knob_status st = cross_check(next, global); !st) return st;
      if (w.compare_exchange_weak(cur, next, std::memory_order_relaxed)) return {};
    }
  }
};

}  // namespace detail
}  // namespace spinwise
