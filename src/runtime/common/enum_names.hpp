#pragma once
// The names of an enum's values, printed and parsed: one table per enum, read by its to_string()
// and by its parser, so the two cannot disagree. The one such helper of the runtime (cycle
// sources, stabilities, profile errors) and of spinwise-stress (scenarios, CPUs, policies). Not
// installed.

#include <cstddef>
#include <string_view>

namespace spinwise::detail {

template <class E>
struct enum_name {
  E value;
  std::string_view name;
  bool parsable = true;  // false: printed, never accepted on the command line
};

template <class E, std::size_t N>
constexpr std::string_view name_in(const enum_name<E> (&names)[N], E v) noexcept {
  for (const enum_name<E>& n : names) {
    if (n.value == v) return n.name;
  }
  return "unknown";
}

// The parsable value named `s`; false (and `out` unchanged) for any other text.
template <class E, std::size_t N>
bool parse_in(const enum_name<E> (&names)[N], std::string_view s, E& out) noexcept {
  for (const enum_name<E>& n : names) {
    if (n.parsable && n.name == s) {
      out = n.value;
      return true;
    }
  }
  return false;
}

}  // namespace spinwise::detail
