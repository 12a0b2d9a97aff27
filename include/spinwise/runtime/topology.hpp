#pragma once
// What the CPUs are and how they relate: packages, cores, SMT siblings, caches, NUMA nodes and
// core kinds (spinwise::runtime).
//
// Calibration reports relax costs per core kind, because a hybrid CPU's E-cores pause ~3x shorter
// than its P-cores and one number would be wrong for half the machine: on a Raptor Lake
// i7-13700H, 30 PAUSEs take ~2.3 us on a P-core and ~0.75 us on an E-core (the Go runtime's
// measurements, https://github.com/golang/go/issues/68578; PAUSE's latency is a property of the
// microarchitecture, which Intel's optimization manual lists per core, and P- and E-cores are
// different ones). The topology comes from hwloc when spinwise was built with it (kinds from
// hwloc's cpukinds), else from Linux sysfs (kinds from /sys/devices/cpu_core|cpu_atom, per-CPU
// MIDR or cpu_capacity), and `source` says which; `note` says what was missing.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace spinwise {

struct topology_cpu {
  int cpu = -1;                   // OS index (what sched_setaffinity and /sys/devices/system/cpu/cpuN use)
  int package = -1;               // physical package (socket) index, -1 unknown
  int core = -1;                  // index of its core in `topology::cores` order, -1 unknown
  int numa_node = -1;             // OS index of its NUMA node, -1 unknown
  int core_kind = 0;              // index into topology::core_kinds
  std::vector<int> smt_siblings;  // CPUs sharing its core, itself included
};

struct cache_level {
  int level = 0;           // 1, 2, 3...
  std::string type;        // "data", "instruction" or "unified"
  std::uint64_t size = 0;  // bytes of one instance
  std::uint32_t line = 0;  // line size in bytes, 0 unknown
  int instances = 0;       // how many of them
  int cpus_per_instance = 0;
};

struct core_kind {
  int index = 0;
  std::string name;     // "IntelCore", "IntelAtom", "0x41:0xd0c", "capacity 1024", or "all"
  int efficiency = -1;  // hwloc's ranking: higher is faster, -1 unknown
  std::vector<int> cpus;
  std::vector<std::pair<std::string, std::string>> infos;  // hwloc info attributes (CoreType, ...)
};

struct topology {
  std::string source;  // "hwloc 2.9.0", "hwloc synthetic '...'", "sysfs", "none"
  std::string note;    // why the preferred source was not used, or what it lacked
  int packages = 0;
  int cores = 0;
  int numa_nodes = 0;
  std::vector<topology_cpu> cpus;                // by ascending OS index
  std::vector<cache_level> caches;               // by level, then data/instruction/unified
  std::vector<core_kind> core_kinds;             // at least one when cpus is not empty
  std::vector<std::vector<int>> numa_distances;  // [i][j] as the kernel reports it, may be empty

  const topology_cpu* find(int cpu) const noexcept;
  int kind_of(int cpu) const noexcept;  // 0 when the CPU is not listed
};

// hwloc when built with it and it loads, else sysfs; `source` and `note` say what happened.
topology discover_topology();

// hwloc only. False with a reason when spinwise was built without hwloc or the load failed.
// `synthetic` (optional) is an hwloc synthetic description such as
// "pack:2 numa:2 core:4 pu:2"; `register_kinds` registers extra CPU kinds (sets of PU OS indexes,
// least efficient first) before reading, so hybrid grouping can be tested on any machine.
bool load_hwloc_topology(topology& out, std::string* error, const char* synthetic = nullptr,
                         const std::vector<std::vector<int>>& register_kinds = {});
bool hwloc_available() noexcept;

// sysfs only. `cpu_root` is normally /sys/devices/system/cpu; `devices_root` /sys/devices (for
// the hybrid cpu_core / cpu_atom PMU lists); `node_root` /sys/devices/system/node. Tests point
// them at fake trees.
topology sysfs_topology(const std::string& cpu_root = "/sys/devices/system/cpu",
                        const std::string& devices_root = "/sys/devices",
                        const std::string& node_root = "/sys/devices/system/node");

// Parses a Linux CPU list ("0-3,8,10-11"); false (out unchanged) on anything malformed.
bool parse_cpu_list(const std::string& text, std::vector<int>& out);
// The reverse: "0-3,8,10-11".
std::string format_cpu_list(const std::vector<int>& cpus);

}  // namespace spinwise
