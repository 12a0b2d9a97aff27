#include "spinwise/runtime/affinity.hpp"

#include <pthread.h>

#include <cstdio>

#include "spinwise/runtime/topology.hpp"

namespace spinwise::runtime {

std::vector<int> allowed_cpus() {
  std::vector<int> out;
  cpu_set_t s;
  CPU_ZERO(&s);
  if (pthread_getaffinity_np(pthread_self(), sizeof(s), &s) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &s)) out.push_back(c);
  }
  return out;
}

std::vector<int> online_cpus() {
  std::vector<int> out;
  std::FILE* f = std::fopen("/sys/devices/system/cpu/online", "r");
  if (f != nullptr) {
    char buf[4096];
    const std::size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    if (!parse_cpu_list(buf, out)) out.clear();
  }
  return out;
}

bool pin_to(int cpu) noexcept {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  return pthread_setaffinity_np(pthread_self(), sizeof(s), &s) == 0;
}

scoped_pin::scoped_pin() noexcept {
  CPU_ZERO(&saved_);
  saved_ok_ = pthread_getaffinity_np(pthread_self(), sizeof(saved_), &saved_) == 0;
}

scoped_pin::scoped_pin(int cpu) noexcept : scoped_pin() { pin(cpu); }

scoped_pin::~scoped_pin() {
  if (saved_ok_) pthread_setaffinity_np(pthread_self(), sizeof(saved_), &saved_);
}

bool scoped_pin::pin(int cpu) noexcept {
  pinned_ok_ = saved_ok_ && pin_to(cpu);  // a mask that could not be saved could not be put back
  return pinned_ok_;
}

}  // namespace spinwise::runtime
