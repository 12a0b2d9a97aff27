#pragma once
// Core-to-core cache-line transfer latency (spinwise::runtime): the floor of any lock handoff.
//
// Two threads pinned to CPUs a and b take turns writing one cache line: a writes 2i+1 and waits
// for 2i+2, b waits for 2i+1 and writes 2i+2. A round trip moves the line twice; the matrix holds
// half a round trip (one-way latency), median of `samples` runs of `round_trips` each. The line
// is allocated on the NUMA node of CPU a with libnuma when spinwise was built with it (so a pair
// on different nodes pays the remote transfer the way a lock word on a's node would), else on the
// heap. The same figure for many CPUs, measured with a CAS ping-pong, is published by
// https://github.com/nviennot/core-to-core-latency: tens of ns within a socket, more across.
//
// The waits spin without a relax instruction (a relax would add its own latency to the figure),
// and give up after `timeout_ms` per run: two vCPUs that are not both running (an oversubscribed
// host, a CPU quota) would otherwise turn each transfer into a scheduler tick.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace spinwise {

struct c2c_options {
  std::vector<int> cpus;             // empty: every CPU this thread may run on
  std::uint32_t round_trips = 2000;  // per run
  std::uint32_t samples = 5;         // runs per pair; the median is reported
  std::uint32_t timeout_ms = 500;    // per run
};

struct c2c_result {
  std::vector<int> cpus;
  // one_way_ns[i * cpus.size() + j] for the pair (cpus[i], cpus[j]); the diagonal and pairs that
  // could not be measured hold a negative value.
  std::vector<double> one_way_ns;
  std::string method;  // how it was measured, including where the line lived
  std::vector<std::string> errors;

  double at(std::size_t i, std::size_t j) const { return one_way_ns[i * cpus.size() + j]; }
};

// Pins the calling thread (restored afterwards) and one helper thread to each pair in turn.
c2c_result measure_c2c(const c2c_options& opt = {});

namespace detail {

// Measures one pair: the runs' counter ticks per round trip, or `why` set when the pair could not
// be measured (a run that failed spoils the pair: its runs may not be alike).
using c2c_pair_measure = std::function<std::vector<double>(int a, int b, std::string& why)>;

// What measure_c2c makes of its measurements (apart so that it can be tested with made-up runs):
// `measure` is called once per pair (cpus[i], cpus[j]), i < j, so the line lives on the lower
// index's CPU; the median run, halved (one round trip moves the line twice) and converted at
// `ns_per_tick`, goes to (i, j) and (j, i). Failed pairs keep -1 and add "cpus a-b: why" to
// errors. Leaves `method` empty.
c2c_result c2c_matrix(const std::vector<int>& cpus, double ns_per_tick, const c2c_pair_measure& measure);

}  // namespace detail

}  // namespace spinwise
