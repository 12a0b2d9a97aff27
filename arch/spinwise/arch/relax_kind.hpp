#pragma once
// The vocabulary shared by every backend: which instruction a relax issues.
//
// A backend supports a subset of these kinds; the dispatcher (<spinwise/arch.hpp>) picks one
// backend for the build and one kind at run time.

#include <cstdint>
#include <string_view>

namespace spinwise {

enum class relax_kind : std::uint8_t {
  none = 0,     // nothing but a compiler barrier: the loop polls as fast as it can
  pause = 1,    // x86 PAUSE (~10 cycles before Skylake, ~140 on Skylake, ~40 on Zen 2+)
  tpause = 2,   // x86 TPAUSE in C0.1 with a short TSC deadline (WAITPKG CPUs only)
  isb = 3,      // aarch64 ISB SY: drains the pipeline, ~30-40 cycles; what MySQL and Rust use
  yield = 4,    // aarch64 YIELD: a NOP on cores without SMT
  sb = 5,       // aarch64 SB (Armv8.5 speculation barrier; HWCAP_SB)
  barrier = 6,  // generic backend: a compiler barrier with no instruction behind it
};

inline constexpr relax_kind kAllRelaxKinds[] = {relax_kind::none,   relax_kind::pause, relax_kind::tpause,
                                                relax_kind::isb,    relax_kind::yield, relax_kind::sb,
                                                relax_kind::barrier};

constexpr std::string_view to_string(relax_kind k) noexcept {
  switch (k) {
    case relax_kind::none:
      return "none";
    case relax_kind::pause:
      return "pause";
    case relax_kind::tpause:
      return "tpause";
    case relax_kind::isb:
      return "isb";
    case relax_kind::yield:
      return "yield";
    case relax_kind::sb:
      return "sb";
    case relax_kind::barrier:
      return "barrier";
  }
  return "unknown";
}

// Parses the spelling to_string() produces. Returns false and leaves `out` alone otherwise.
constexpr bool parse_relax_kind(std::string_view s, relax_kind& out) noexcept {
  for (relax_kind k : kAllRelaxKinds) {
    if (to_string(k) == s) {
      out = k;
      return true;
    }
  }
  return false;
}

}  // namespace spinwise
