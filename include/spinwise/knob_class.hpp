#pragma once
// knob_class and the knob registry: every lock class and policy family with its knobs, found by
// name without naming a type (find_knob_class, for_each_knob_class, register_knob_class); the
// registry as "<class>.<knob>=<value>" text is <spinwise/knob_text.hpp>. The built-in entries are
// the library's lock aliases and the policy families; an engine adds its own lock classes with
// register_knob_class. The registered classes are process-wide (a list in
// detail/process_state.hpp, written under its lock, never freed), so a class a plugin registers is
// seen by the host and every other module.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "spinwise/config.hpp"
#include "spinwise/detail/knob_word.hpp"
#include "spinwise/detail/lock_list.hpp"
#include "spinwise/detail/process_state.hpp"
#include "spinwise/hybrid_mutex.hpp"
#include "spinwise/hybrid_shared_mutex.hpp"
#include "spinwise/knob_status.hpp"
#include "spinwise/mcs_mutex.hpp"
#include "spinwise/rw_spinlock.hpp"
#include "spinwise/spin_shared_mutex.hpp"
#include "spinwise/sx_lock.hpp"
#include "spinwise/tas_mutex.hpp"
#include "spinwise/ticket_mutex.hpp"
#include "spinwise/ttas_mutex.hpp"
#include "spinwise/wait_policy.hpp"

namespace spinwise {

// One knob of a class, as SHOW VARIABLES would list it.
struct knob_info {
  std::string_view name;  // as the policy's settings struct spells it
  std::uint32_t value;    // what the class's waiters use now
  std::uint32_t def;      // the family's documented default
  std::uint32_t min;      // bounds, inclusive
  std::uint32_t max;
  bool overridden;  // the class overrides the family's value (never for a family)
};

namespace detail {

// A policy's knobs without its type. One constant per policy type (knob_ops_of below); a
// registered class keeps a pointer to the registering module's copy, so that module must stay
// loaded (register_knob_class says so; with GCC, STB_GNU_UNIQUE state already keeps it loaded).
struct knob_class_ops {
  std::string_view policy;   // the family: "innodb", "time", "exp_backoff", "no_backoff", "adaptive"
  std::string_view tag_key;  // the Tag's signature: with `policy`, names the knob word
  bool process_wide;         // Tag = void: the family's own values
  std::size_t count;
  const knob_field* fields;
  std::uint32_t tied;  // fields a Tag overrides together (exp_backoff's min and max)
  std::uint32_t (*value)(std::size_t) noexcept;
  bool (*overridden)(std::size_t) noexcept;
  knob_status (*set)(std::string_view, std::uint32_t) noexcept;
  bool (*get)(std::string_view, std::uint32_t&) noexcept;
  knob_status (*check_fields)(std::uint32_t, const std::uint32_t*, const std::uint32_t*) noexcept;
  knob_status (*set_fields)(std::uint32_t, const std::uint32_t*) noexcept;
  knob_status (*reset_field)(std::string_view) noexcept;
  void (*reset_all)() noexcept;
};

template <class Policy>
inline constexpr knob_class_ops knob_ops_of = {
    Policy::name(),
    type_signature<typename Policy::tag>(),
    std::is_void_v<typename Policy::tag>,
    Policy::field_count(),
    Policy::fields(),
    Policy::tied_fields(),
    &Policy::field_value,
    &Policy::field_overridden,
    static_cast<knob_status (*)(std::string_view, std::uint32_t) noexcept>(&Policy::set),
    &Policy::get,
    &Policy::check_fields,
    &Policy::set_fields,
    static_cast<knob_status (*)(std::string_view) noexcept>(&Policy::reset),
    static_cast<void (*)() noexcept>(&Policy::reset),
};

// A lock type names its policy (T::policy); a policy names itself.
template <class T, class = void>
struct knob_policy_of {
  using type = T;
};
template <class T>
struct knob_policy_of<T, std::void_t<typename T::policy>> {
  using type = typename T::policy;
};

struct builtin_knob_class {
  std::string_view name;
  std::string_view alias_of;  // non-empty: another name of that class (the same type)
  const knob_class_ops* ops;
};

// The library's lock aliases (detail/lock_list.hpp), each with its alias's policy (so the
// registry follows the alias when its default policy changes), their other names, then the policy
// families' process-wide values.
#define SPINWISE_KNOB_CLASS_OF_LOCK_(lock, shape, when_spent, order) {#lock, {}, &knob_ops_of<lock::policy>},
#define SPINWISE_KNOB_CLASS_OF_ALIAS_(name, lock) {#name, #lock, &knob_ops_of<lock::policy>},
inline constexpr builtin_knob_class kBuiltinKnobClasses[] = {
    SPINWISE_LOCKS(SPINWISE_KNOB_CLASS_OF_LOCK_)          // the locks
    SPINWISE_LOCK_ALIASES(SPINWISE_KNOB_CLASS_OF_ALIAS_)  // their other names
    {"innodb", {}, &knob_ops_of<innodb_policy<>>},
    {"time", {}, &knob_ops_of<time_policy<>>},
    {"exp_backoff", {}, &knob_ops_of<exp_backoff_policy<>>},
    {"no_backoff", {}, &knob_ops_of<no_backoff_policy<>>},
    {"adaptive", {}, &knob_ops_of<adaptive_policy<>>},
};
#undef SPINWISE_KNOB_CLASS_OF_LOCK_
#undef SPINWISE_KNOB_CLASS_OF_ALIAS_

// A registered class: a node of the list at process().knob_classes, appended under
// process().lists_lock and published with a release store; readers walk it without a lock.
// Never freed. Its layout is part of the process state's ABI (the _v1 symbols).
struct knob_class_node {
  std::atomic<knob_class_node*> next{nullptr};
  const char* name = nullptr;
  std::size_t name_len = 0;
  const knob_class_ops* ops = nullptr;
};

inline knob_class_node* first_registered_knob_class() noexcept {
  return static_cast<knob_class_node*>(process().knob_classes.load(std::memory_order_acquire));
}

}  // namespace detail

// One entry of the registry: a lock class or a policy family, with its knobs. A small value (a
// name and a pointer); copies stay valid for the life of the process.
class knob_class {
 public:
  knob_class(std::string_view name, const detail::knob_class_ops* ops, bool builtin,
             std::string_view alias_of = {}) noexcept
      : name_(name), alias_of_(alias_of), ops_(ops), builtin_(builtin) {}

  std::string_view name() const noexcept { return name_; }
  std::string_view policy() const noexcept { return ops_->policy; }  // its family
  // True for a family's process-wide values (innodb, time, ...), false for a lock class.
  bool process_wide() const noexcept { return ops_->process_wide; }
  bool builtin() const noexcept { return builtin_; }
  // For another name of a class ("rw_spinlock"): the class's name ("spin_shared_mutex"); else "".
  std::string_view alias_of() const noexcept { return alias_of_; }

  std::size_t size() const noexcept { return ops_->count; }  // its knobs
  knob_info knob(std::size_t i) const noexcept {
    const detail::knob_field& f = ops_->fields[i];
    return {f.name, ops_->value(i), f.def, f.min, f.max, ops_->overridden(i)};
  }
  std::optional<knob_info> find(std::string_view knob_name) const noexcept {
    const std::size_t i = index_of(knob_name);
    if (i == size()) return std::nullopt;
    return knob(i);
  }
  // The value waiters of this class use now; nullopt for an unknown knob.
  std::optional<std::uint32_t> get(std::string_view knob_name) const noexcept {
    std::uint32_t v = 0;
    if (!ops_->get(knob_name, v)) return std::nullopt;
    return v;
  }
  // Policy::set(knob, value): validated, all or nothing; a lock class's knob becomes an override.
  knob_status set(std::string_view knob_name, std::uint32_t value) const noexcept {
    return ops_->set(knob_name, value);
  }
  // Policy::reset(knob): a lock class follows its family's value again (SET GLOBAL x = DEFAULT);
  // a family's knob goes back to its default.
  knob_status reset(std::string_view knob_name) const noexcept { return ops_->reset_field(knob_name); }
  // Policy::reset(): every knob of the class.
  void reset() const noexcept { ops_->reset_all(); }
  bool overridden() const noexcept {
    for (std::size_t i = 0; i < size(); ++i) {
      if (ops_->overridden(i)) return true;
    }
    return false;
  }
  // "spin_wait_delay, delay_unit_ns, spin_loops"
  std::string knob_names() const {
    std::string s;
    for (std::size_t i = 0; i < size(); ++i) (s += i ? ", " : "") += ops_->fields[i].name;
    return s;
  }

  std::size_t index_of(std::string_view knob_name) const noexcept {
    std::size_t i = 0;
    while (i < size() && ops_->fields[i].name != knob_name) ++i;
    return i;
  }
  const detail::knob_class_ops& ops() const noexcept { return *ops_; }

 private:
  std::string_view name_, alias_of_;
  const detail::knob_class_ops* ops_;
  bool builtin_;
};

// Calls f(knob_class) for every built-in lock class, every family, then every registered class in
// the order they were registered. Other names of a class (rw_spinlock) are not visited again;
// find_knob_class() knows them.
template <class F>
void for_each_knob_class(F&& f) {
  for (const detail::builtin_knob_class& b : detail::kBuiltinKnobClasses) {
    if (b.alias_of.empty()) f(knob_class(b.name, b.ops, true));
  }
  for (auto* n = detail::first_registered_knob_class(); n != nullptr;
       n = n->next.load(std::memory_order_acquire))
    f(knob_class(std::string_view(n->name, n->name_len), n->ops, false));
}

// The class or family named `name` (an alias included); nullopt when there is none.
inline std::optional<knob_class> find_knob_class(std::string_view name) noexcept {
  for (const detail::builtin_knob_class& b : detail::kBuiltinKnobClasses) {
    if (b.name == name) return knob_class(b.name, b.ops, true, b.alias_of);
  }
  for (auto* n = detail::first_registered_knob_class(); n != nullptr;
       n = n->next.load(std::memory_order_acquire)) {
    if (detail::key_equals(n->name, n->name_len, name))
      return knob_class(std::string_view(n->name, n->name_len), n->ops, false);  // the node's copy lives on
  }
  return std::nullopt;
}

// "hybrid_mutex, hybrid_shared_mutex, ..., innodb, time, exp_backoff, no_backoff, adaptive, <registered>"
inline std::string knob_class_names() {
  std::string s;
  for (const detail::builtin_knob_class& b : detail::kBuiltinKnobClasses)
    (s += s.empty() ? "" : ", ") += b.name;
  for (auto* n = detail::first_registered_knob_class(); n != nullptr;
       n = n->next.load(std::memory_order_acquire))
    (s += ", ").append(n->name, n->name_len);
  return s;
}

namespace detail {

inline bool valid_knob_class_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  }
  return true;
}

SPINWISE_COLD inline knob_status register_knob_class_ops(std::string_view name,
                                                         const knob_class_ops* ops) noexcept {
  if (!valid_knob_class_name(name))
    return {errc::bad_knob_class_name, "a knob class name is 1 to 64 letters, digits or underscores"};
  for (const builtin_knob_class& b : kBuiltinKnobClasses) {
    if (b.name == name) return {errc::knob_class_exists, "a built-in knob class has that name"};
  }
  process_state& p = process();
  p.lists_lock.lock();
  knob_class_node* last = nullptr;
  for (auto* n = static_cast<knob_class_node*>(p.knob_classes.load(std::memory_order_relaxed)); n != nullptr;
       n = n->next.load(std::memory_order_relaxed)) {
    if (key_equals(n->name, n->name_len, name)) {
      p.lists_lock.unlock();
      return {errc::knob_class_exists, "a knob class of that name is already registered"};
    }
    last = n;
  }
  const char* key = copy_key(name);
  auto* node = key == nullptr ? nullptr : new (std::nothrow) knob_class_node;
  if (node == nullptr) {
    p.lists_lock.unlock();
    std::free(const_cast<char*>(key));
    return {errc::no_memory, "no memory to register a knob class"};
  }
  node->name = key;
  node->name_len = name.size();
  node->ops = ops;
  // Appended, so that listings keep the registration order; the release store publishes the
  // node's fields to readers walking without the lock.
  if (last == nullptr) {
    p.knob_classes.store(node, std::memory_order_release);
  } else {
    last->next.store(node, std::memory_order_release);
  }
  p.lists_lock.unlock();
  return {};
}

}  // namespace detail

// Registers an engine's lock class under `name` for the registry, SPINWISE_KNOBS and load_knobs:
// T is a lock type (its ::policy is used) or a policy, e.g.
//   struct buf_pool_tag;
//   using buf_pool_latch = spinwise::sx_lock_t<spinwise::time_policy<buf_pool_tag>>;
//   spinwise::register_knob_class<buf_pool_latch>("buf_pool_latch");
// Refused (errc::knob_class_exists, the first registration stays) when the name is taken, by a
// built-in class or an earlier registration from any module; errc::bad_knob_class_name unless the
// name is 1 to 64 of [A-Za-z0-9_]. Two names may share one policy (then they share its knobs).
// The entry points at code of the registering module (the policy's knob functions): a module that
// registers a class must stay loaded for the life of the process (dlopen it with RTLD_NODELETE, or
// never dlclose it); GCC's STB_GNU_UNIQUE state already keeps a module holding it from unloading.
template <class T>
knob_status register_knob_class(std::string_view name) noexcept {
  using policy = typename detail::knob_policy_of<T>::type;
  return detail::register_knob_class_ops(name, &detail::knob_ops_of<policy>);
}

}  // namespace spinwise
