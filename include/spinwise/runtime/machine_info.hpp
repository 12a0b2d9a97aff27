#pragma once
// The machine a calibration describes (spinwise::runtime).
//
// A profile is valid for a machine type, not a host: the same CPU model, CPU count, counter rate
// and spinwise backend. Kernel, virtualization and container are recorded because they explain
// odd numbers (a VM's PAUSE-loop exiting, a container's CPU quota) but do not make a profile
// belong to another machine.
//
// This is spinwise's one machine description: spinwise-calibrate's profile names the machine with
// it, and the run context every tool writes (run_context.hpp) starts with it (the last three
// functions below fill in that context and are internal to the tools).

#include <cstdint>
#include <string>

namespace spinwise {

struct machine_info {
  std::string arch;            // spinwise backend: "x86_64", "aarch64" or "generic"
  std::string cpu_vendor;      // "GenuineIntel", "AuthenticAMD", "0x41" (Arm implementer), "" unknown
  std::string cpu_model;       // "Intel(R) Xeon(R) Processor", or "implementer 0x41 part 0xd0c" on Arm
  std::string cpu_id;          // "family 6 model 207 stepping 2", "variant 0x1 revision 1"
  int cpu_count = 0;           // CPUs configured in the OS (online or not)
  std::string kernel;          // "Linux 6.18.44"
  std::string virtualization;  // "kvm (kvm-clock clocksource, hypervisor CPU flag)", "none detected"
  std::string container;       // "docker (/.dockerenv)", "" when none detected
  std::string counter;         // counter_name(): "tsc", "cntvct", "steady_clock"
  std::uint64_t counter_hz = 0;
  bool counter_invariant = false;
};

// Reads /proc/cpuinfo, uname, sysfs and the arch contract. Never fails; unknown fields stay empty.
machine_info detect_machine();

// Why `profile` is not for `here` ("" when it is): arch, CPU model and id, CPU count, and the
// counter rate within 2% (a re-measured TSC rate moves by well under 0.1%).
std::string machine_mismatch(const machine_info& profile, const machine_info& here);

namespace runtime {

// uname's machine field: "x86_64", "aarch64"; "" when uname fails.
std::string kernel_machine();
// The compiler spinwise::runtime was built with: "gcc 13.2.0", "clang 17.0.6 (...)".
std::string compiler_id();
// Now, in UTC, ISO 8601 to the second: "2025-01-31T12:00:00Z".
std::string utc_now();

}  // namespace runtime

}  // namespace spinwise
