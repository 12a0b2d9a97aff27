// libFuzzer target for the profile loader: no input may crash it, and a rejected input must
// change nothing (the all-or-nothing promise of spinwise::load_profile).
//
// Built with clang++ -fsanitize=fuzzer,address by `tools/test.sh fuzz`, which runs it from corpus/
// with profile.dict, one process per CPU for 28 s. Every other build links replay_main.cpp instead
// and runs the same entry point over corpus/ as an ordinary test.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "spinwise/relax_table.hpp"
#include "spinwise/runtime/profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const std::uint64_t hz = spinwise::counter_frequency();

  // Skip the machine check so that inputs reach the apply step.
  spinwise::clear_relax_ns();
  spinwise::set_counter_frequency(hz);
  spinwise::profile_load_options opt;
  opt.check_machine = false;
  const spinwise::profile_status st = spinwise::load_profile_text(text, opt);
  if (st.ok()) {
    if (!spinwise::relax_ns_installed()) std::abort();  // "applied" must mean applied
  } else {
    if (st.message.empty()) std::abort();  // every refusal says why
    if (spinwise::relax_ns_installed() || spinwise::counter_frequency() != hz) std::abort();  // half applied
  }

  // And the path engines take: machine check on, validate only.
  spinwise::clear_relax_ns();
  spinwise::set_counter_frequency(hz);
  opt.check_machine = true;
  opt.apply = false;
  (void)spinwise::load_profile_text(text, opt);
  if (spinwise::relax_ns_installed() || spinwise::counter_frequency() != hz) std::abort();
  return 0;
}
