#pragma once
// The CPUs a thread may run on, and pinning it to one of them (spinwise::runtime, Linux).
//
// Internal to spinwise's own tools (spinwise-calibrate, spinwise-bench, spinwise-stress) and the
// runtime's measurements; installed with the runtime, with no stability promise to engines.
// Every measurement that moves a thread from CPU to CPU puts the thread's mask back afterwards
// (scoped_pin), so a caller's own pinning survives a calibration.

#include <sched.h>

#include <vector>

namespace spinwise::runtime {

// The calling thread's affinity mask, ascending; empty when it cannot be read.
std::vector<int> allowed_cpus();

// The CPUs the kernel has online (/sys/devices/system/cpu/online), ascending; empty when the
// file cannot be read or parsed.
std::vector<int> online_cpus();

// Pins the calling thread to `cpu` alone. False, and the mask unchanged, when `cpu` is outside
// 0..CPU_SETSIZE-1 or the kernel refuses (not in the cgroup's cpuset, offline, no such CPU).
bool pin_to(int cpu) noexcept;

// Saves the calling thread's mask on construction and restores it on destruction.
class scoped_pin {
 public:
  scoped_pin() noexcept;                  // saves only
  explicit scoped_pin(int cpu) noexcept;  // saves, then pin(cpu)
  scoped_pin(const scoped_pin&) = delete;
  scoped_pin& operator=(const scoped_pin&) = delete;
  ~scoped_pin();

  // pin_to(cpu) within the scope (one CPU after another); the saved mask stays the original.
  // False without trying when the mask could not be saved (it could not be put back).
  bool pin(int cpu) noexcept;
  // The mask was saved and the last pin, if any, succeeded.
  bool ok() const noexcept { return saved_ok_ && pinned_ok_; }

 private:
  cpu_set_t saved_{};
  bool saved_ok_ = false;
  bool pinned_ok_ = true;
};

}  // namespace spinwise::runtime
