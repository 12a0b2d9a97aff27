#pragma once
// Names of the runtime's enums, whose values are 0, 1, 2...: one table of names per enum, and the
// two directions between them (not installed).

#include <cstddef>
#include <string_view>

namespace spinwise::detail {

// names[e], or "unknown" for a value outside the table.
template <class E, std::size_t N>
std::string_view enum_name(const std::string_view (&names)[N], E e) noexcept {
  const auto i = static_cast<std::size_t>(e);
  return i < N ? names[i] : std::string_view("unknown");
}

// The value whose name is `text`; false, and `out` unchanged, for any other text.
template <class E, std::size_t N>
bool parse_enum_name(const std::string_view (&names)[N], std::string_view text, E& out) noexcept {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == text) {
      out = static_cast<E>(i);
      return true;
    }
  }
  return false;
}

}  // namespace spinwise::detail
