#pragma once
// The names the tool prints and parses for its enums (scenario, emulated CPU, wait policy): one
// table per enum, read by its to_string() and by its parser, so the two cannot disagree.

#include <cstddef>
#include <string_view>

namespace spinwise::stress {

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

}  // namespace spinwise::stress
