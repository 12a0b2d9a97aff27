#pragma once
// knob_text: the knob registry as text, so that an engine can set knobs from its own
// configuration (SET GLOBAL, a config file, an environment variable) and list them (SHOW
// VARIABLES) without naming a type: batches of "<class>.<knob>=<value>" entries (apply_knobs,
// check_knobs, knob_config_status) and the table that --list-knobs prints (format_knob_table).
// Header-only: an engine that does not link spinwise::runtime still has the registry and the knob
// text parser; the runtime adds load_knobs() for files and the start-up call that reads
// SPINWISE_KNOBS (<spinwise/runtime/knob_config.hpp>).
//
// A knob's key is <class>.<knob>:
//   class  a lock class, whose knobs are its alias's Tag overrides (hybrid_mutex, sx_lock, ...,
//          or one an engine registered with register_knob_class), or a policy family, whose knobs
//          are the process-wide values every class of that family follows until it overrides
//          them (innodb, time, exp_backoff, no_backoff, adaptive)
//   knob   a field of the policy's settings struct (spin_wait_delay, delay_unit_ns, spin_loops, ...)
// Setting a key is Policy::set(name, value) (a class's knob becomes an override); a batch
// (apply_knobs) is all or nothing: every entry is parsed and checked, cross-field rules
// (exp_backoff min_delay_ns <= max_delay_ns) on the batch's final values, before anything is set.
//
// The registry itself (knob_class: find_knob_class, for_each_knob_class, register_knob_class) is
// <spinwise/knob_class.hpp>, which comes with this header. docs/knobs.md is the manual.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "spinwise/detail/knob_word.hpp"
#include "spinwise/detail/process_state.hpp"
#include "spinwise/knob_class.hpp"
#include "spinwise/knob_status.hpp"

namespace spinwise {

// list:  comma-separated entries, as SPINWISE_KNOBS: "hybrid_mutex.spin_wait_delay=6,time.delay_unit_ns=150"
// lines: one entry per line, as a knob file: "key = value", '#' starts a comment, blank lines skipped
// Whitespace around keys, values and entries is ignored in both; empty entries are skipped.
enum class knob_text_format { list, lines };

// The outcome of a batch of knob entries (apply_knobs, check_knobs, load_knobs).
struct knob_config_status {
  errc code{};              // errc{} when every entry was applied (or would be, for check_knobs)
  std::string message;      // one line naming the entry, its key and bounds, and that nothing changed
  std::string key;          // the key the error is about, as written ("" when none)
  std::size_t line = 0;     // 1-based: the line (lines format) or the entry (list format) of the error
  std::size_t applied = 0;  // entries applied (or checked); 0 on any error

  bool ok() const noexcept { return code == errc{}; }
  explicit operator bool() const noexcept { return ok(); }
  std::error_code error_code() const noexcept { return ok() ? std::error_code{} : make_error_code(code); }
  operator std::error_code() const noexcept { return error_code(); }
};

namespace detail {

inline std::string_view trim_knob_text(std::string_view s) noexcept {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  const std::size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

inline std::string bounds_text(const knob_field& f) {
  return std::to_string(f.min) + ".." + std::to_string(f.max);
}

// One parsed entry, and the knob word's fields it sets.
struct knob_entry {
  std::string key;
  std::size_t line;
  const knob_class_ops* ops;
  std::size_t field;
  std::uint32_t value;
};

// The entries that set one knob word, merged: set and checked as one.
struct knob_group {
  const knob_class_ops* ops = nullptr;
  std::uint32_t which = 0;
  std::uint32_t v[kMaxKnobFields] = {};
  std::vector<std::size_t> entries;  // indices into the entry list
  // The word as it was before the batch, for the rollback.
  std::uint32_t old_v[kMaxKnobFields] = {};
  std::uint32_t old_overridden = 0;
};

inline bool same_knob_word(const knob_class_ops& a, const knob_class_ops& b) noexcept {
  return a.policy == b.policy && a.tag_key == b.tag_key;
}

// Serializes batches (of every module): a batch checks, then sets several words, and another
// batch in between could invalidate the check. Process-wide through the named-object list.
inline state_lock& knob_batch_lock() noexcept {
  static state_lock* const shared = static_cast<state_lock*>(
      find_object(kKnobClassObject, "spinwise.knob_batch_lock",  // not a class name: it has dots
                  [] { return static_cast<void*>(new (std::nothrow) state_lock); }));
  static state_lock local;  // no memory for the shared one: batches of this module still serialize
  return shared != nullptr ? *shared : local;
}

// A failed batch's rollback of one group it had set: puts back only the fields the batch set (for a class,
// also a tied partner it pinned), so a plain setter's change to another field between the batch's check and
// now is kept.
inline void restore_knob_group(const knob_group& g) noexcept {
  if (g.ops->process_wide) {
    (void)g.ops->set_fields(g.which, g.old_v);
    return;
  }
  const std::uint32_t touched = g.which & g.ops->tied ? g.which | g.ops->tied : g.which;
  // Fields that followed the family before: follow it again (a tied pair is dropped together,
  // and tied fields are only ever overridden together, so no earlier override is lost).
  for (std::size_t f = 0; f < g.ops->count; ++f) {
    if ((touched >> f & 1u) && !(g.old_overridden >> f & 1u)) (void)g.ops->reset_field(g.ops->fields[f].name);
  }
  // Fields that were overrides: their old values, in one store.
  if (const std::uint32_t back = touched & g.old_overridden; back != 0)
    (void)g.ops->set_fields(back, g.old_v);
}

class knob_batch {
 public:
  explicit knob_batch(knob_text_format format) : format_(format) {}

  knob_config_status run(std::string_view text, bool apply) {
    std::size_t line = 0;
    const char sep = format_ == knob_text_format::list ? ',' : '\n';
    while (true) {
      ++line;
      const std::size_t end = text.find(sep);
      std::string_view entry = text.substr(0, end);
      if (format_ == knob_text_format::lines) entry = entry.substr(0, entry.find('#'));
      entry = trim_knob_text(entry);
      if (!entry.empty() && !parse(entry, line)) return std::move(status_);
      if (end == std::string_view::npos) break;
      text.remove_prefix(end + 1);
    }
    // Checked and set under one hold of the batch lock, so that no other batch moves the values
    // between the check and the set.
    std::unique_lock<state_lock> hold(knob_batch_lock(), std::defer_lock);
    if (apply) hold.lock();
    if (!plan()) return std::move(status_);
    if (apply && !commit()) return std::move(status_);
    status_.applied = entries_.size();
    return std::move(status_);
  }

 private:
  std::string where(std::size_t line) const {
    return (format_ == knob_text_format::lines ? "line " : "entry ") + std::to_string(line) + ": ";
  }

  bool fail(errc code, std::size_t line, std::string_view key, const std::string& why) {
    status_.code = code;
    status_.line = line;
    status_.key = std::string(key);
    status_.message = where(line) + why + "; no knob was changed";
    return false;
  }

  bool parse(std::string_view entry, std::size_t line) {
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos)
      return fail(
          errc::knob_syntax, line, {},
          "'" + std::string(entry) + "' is not <class>.<knob>=<value> (e.g. hybrid_mutex.spin_wait_delay=6)");
    const std::string_view key = trim_knob_text(entry.substr(0, eq));
    const std::string_view value = trim_knob_text(entry.substr(eq + 1));
    const std::size_t dot = key.find('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == key.size())
      return fail(errc::knob_syntax, line, key,
                  "key '" + std::string(key) + "' is not <class>.<knob> (e.g. hybrid_mutex.spin_wait_delay)");
    const std::string_view cls_name = key.substr(0, dot), knob_name = key.substr(dot + 1);
    const std::optional<knob_class> cls = find_knob_class(cls_name);
    if (!cls)
      return fail(errc::unknown_knob_class, line, key,
                  std::string(key) + ": unknown knob class '" + std::string(cls_name) +
                      "' (known: " + knob_class_names() + ")");
    const std::size_t field = cls->index_of(knob_name);
    if (field == cls->size())
      return fail(errc::unknown_knob, line, key,
                  std::string(key) + ": " + std::string(cls_name) + " (" + std::string(cls->policy()) +
                      " policy) has no knob '" + std::string(knob_name) +
                      "' (its knobs: " + cls->knob_names() + ")");
    const knob_field& f = cls->ops().fields[field];
    std::uint64_t v = 0;
    bool digits = !value.empty();
    for (char c : value) {
      if (c < '0' || c > '9') {
        digits = false;
        break;
      }
      if (v <= f.max) v = v * 10 + static_cast<unsigned>(c - '0');  // stops growing once out of range
    }
    if (!digits)
      return fail(errc::knob_syntax, line, key,
                  std::string(key) + " = '" + std::string(value) + "' is not a number (an integer in " +
                      bounds_text(f) + ")");
    if (v < f.min || v > f.max)
      return fail(errc::knob_out_of_range, line, key,
                  std::string(key) + " = " + std::string(value) + " is out of range: it must be in " +
                      bounds_text(f));
    for (const knob_entry& e : entries_) {
      if (e.field == field && same_knob_word(*e.ops, cls->ops())) {
        const std::string first = e.key == key ? "" : " as " + e.key;
        return fail(errc::duplicate_knob, line, key,
                    std::string(key) + " is set twice (first" + first + " at " +
                        (format_ == knob_text_format::lines ? "line " : "entry ") + std::to_string(e.line) +
                        ")");
      }
    }
    entries_.push_back({std::string(key), line, &cls->ops(), field, static_cast<std::uint32_t>(v)});
    return true;
  }

  knob_group* group_of(const knob_class_ops& ops) {
    for (knob_group& g : groups_) {
      if (same_knob_word(*g.ops, ops)) return &g;
    }
    return nullptr;
  }

  // Merges the entries per knob word and checks each word on the batch's final values: a class
  // against its family's values as the batch leaves them.
  bool plan() {
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      const knob_entry& e = entries_[i];
      knob_group* g = group_of(*e.ops);
      if (g == nullptr) {
        g = &groups_.emplace_back();
        g->ops = e.ops;
      }
      g->which |= std::uint32_t{1} << e.field;
      g->v[e.field] = e.value;
      g->entries.push_back(i);
    }
    for (const knob_group& g : groups_) {
      std::uint32_t planned[kMaxKnobFields] = {};
      const std::uint32_t* global = nullptr;
      if (!g.ops->process_wide) {
        for (const knob_group& fam : groups_) {
          if (!fam.ops->process_wide || fam.ops->policy != g.ops->policy) continue;
          for (std::size_t f = 0; f < fam.ops->count; ++f)
            planned[f] = (fam.which >> f & 1u) ? fam.v[f] : fam.ops->value(f);
          global = planned;
        }
      }
      const knob_status st = g.ops->check_fields(g.which, g.v, global);
      if (!st) return fail_group(g, st);
    }
    return true;
  }

  bool fail_group(const knob_group& g, const knob_status& st) {
    std::string keys;
    for (std::size_t i : g.entries) {
      (keys += keys.empty() ? "" : ", ") += entries_[i].key + " = " + std::to_string(entries_[i].value);
    }
    const knob_entry& last = entries_[g.entries.back()];
    return fail(st.reason(), last.line, last.key, keys + ": " + st.message());
  }

  // Sets the family words first, so that each class word is set against the values it was
  // checked with. Called with the batch lock held. A plain setter (Policy::set, knob_class::set)
  // racing the batch can still fail a word after others were set: those are put back and the
  // batch fails.
  bool commit() {
    std::vector<knob_group*> order;
    for (knob_group& g : groups_) {
      if (g.ops->process_wide) order.push_back(&g);
    }
    for (knob_group& g : groups_) {
      if (!g.ops->process_wide) order.push_back(&g);
    }
    for (knob_group* g : order) {
      for (std::size_t f = 0; f < g->ops->count; ++f) {
        g->old_v[f] = g->ops->value(f);
        if (g->ops->overridden(f)) g->old_overridden |= std::uint32_t{1} << f;
      }
    }
    for (std::size_t k = 0; k < order.size(); ++k) {
      const knob_status st = order[k]->ops->set_fields(order[k]->which, order[k]->v);
      if (st) continue;
      for (std::size_t u = k; u-- > 0;) restore_knob_group(*order[u]);
      return fail_group(*order[k], st);
    }
    return true;
  }

  knob_text_format format_;
  knob_config_status status_;
  std::vector<knob_entry> entries_;
  std::vector<knob_group> groups_;
};

}  // namespace detail

// Parses and checks every entry of `text`, then sets them all; on any error sets nothing and says
// which entry (its line or position), which key and which bounds. Setting a key is
// find_knob_class(class)->set(knob, value); entries of one knob word are set at once, so rules
// between fields (exp_backoff min_delay_ns <= max_delay_ns) hold on the batch's final values, and a
// class is checked against its family's values as the batch leaves them. The same knob twice (also
// through two names of one class) is an error.
inline knob_config_status apply_knobs(std::string_view text,
                                      knob_text_format format = knob_text_format::list) {
  return detail::knob_batch(format).run(text, true);
}

// apply_knobs without setting anything: what it would say now.
inline knob_config_status check_knobs(std::string_view text,
                                      knob_text_format format = knob_text_format::list) {
  return detail::knob_batch(format).run(text, false);
}

// The registry as a table, one knob per line (spinwise-stress and spinwise-bench --list-knobs):
//   key  value  default  bounds  policy  source
// where source is "override" (the class sets it), "follows <family>.<knob>" (it follows its
// family's value, e.g. "follows time.spin_wait_delay") or "process-wide" (a family's own value).
inline std::string format_knob_table() {
  struct row {
    std::string key, value, def, bounds, policy, source;
  };
  std::vector<row> rows;
  rows.push_back({"key", "value", "default", "bounds", "policy", "source"});
  for_each_knob_class([&](const knob_class& c) {
    for (std::size_t i = 0; i < c.size(); ++i) {
      const knob_info k = c.knob(i);
      rows.push_back({std::string(c.name()) + "." + std::string(k.name), std::to_string(k.value),
                      std::to_string(k.def), std::to_string(k.min) + ".." + std::to_string(k.max),
                      std::string(c.policy()),
                      c.process_wide() ? "process-wide"
                      : k.overridden   ? "override"
                                       : "follows " + std::string(c.policy()) + "." + std::string(k.name)});
    }
  });
  std::size_t w[5] = {};
  for (const row& r : rows) {
    const std::string* cells[5] = {&r.key, &r.value, &r.def, &r.bounds, &r.policy};
    for (std::size_t i = 0; i < 5; ++i) w[i] = std::max(w[i], cells[i]->size());
  }
  std::string out;
  for (const row& r : rows) {
    const std::string* cells[6] = {&r.key, &r.value, &r.def, &r.bounds, &r.policy, &r.source};
    for (std::size_t i = 0; i < 6; ++i) {
      const bool right = i == 1 || i == 2;  // numbers
      const std::size_t pad = i < 5 ? w[i] - cells[i]->size() : 0;
      if (right) out.append(pad, ' ');
      out += *cells[i];
      if (!right && i < 5) out.append(pad, ' ');
      out += i < 5 ? "  " : "\n";
    }
  }
  for (const detail::builtin_knob_class& b : detail::kBuiltinKnobClasses) {
    if (!b.alias_of.empty())
      out += std::string(b.name) + ".*: another name of " + std::string(b.alias_of) + ".*\n";
  }
  return out;
}

}  // namespace spinwise
