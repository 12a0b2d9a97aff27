// Topology: hwloc synthetic machines for the mapping and the per-kind grouping (skipped where
// spinwise was built without hwloc, as in the aarch64 cross build), fake sysfs trees for the
// fallback (run everywhere), and the CPU-list syntax the CLI and sysfs share.
#include "spinwise/runtime/topology.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "spinwise/runtime/calibration.hpp"
#include "test_util.hpp"

namespace sw = spinwise;
using spinwise_test::temp_dir;
using spinwise_test::write_file;

namespace {

std::vector<int> range(int a, int b) {
  std::vector<int> v(static_cast<std::size_t>(b - a + 1));
  std::iota(v.begin(), v.end(), a);
  return v;
}

// A measured CPU with one relax kind, for grouping tests.
sw::cpu_calibration fake_cpu(int cpu, int kind, double ns) {
  sw::cpu_calibration c;
  c.cpu = cpu;
  c.core_kind = kind;
  c.core_hz = 3e9;
  c.ticks_per_cycle = 0.77;
  c.core_clock_plausible = true;
  sw::relax_measurement m;
  m.kind = sw::relax_kind::pause;
  m.trials = 15;
  m.relaxes_per_trial = 200;
  m.ticks.n = 15;
  m.ticks.median = ns * 2.3;
  m.ticks.status = sw::stability::stable;
  m.ns_median = ns;
  m.cycles_median = ns * 3;
  m.cycles_method = "estimate";
  c.relax.push_back(m);
  return c;
}

}  // namespace

// Guards against the CLI accepting "3-1" or "1," and measuring nothing, or a huge range
// allocating forever.
TEST(CpuList, ParsesLinuxSyntaxAndRejectsGarbage) {
  std::vector<int> v;
  ASSERT_TRUE(sw::parse_cpu_list("0-3,8,10-11\n", v));
  EXPECT_EQ(v, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  ASSERT_TRUE(sw::parse_cpu_list("5,1,1", v));
  EXPECT_EQ(v, (std::vector<int>{1, 5}));
  ASSERT_TRUE(sw::parse_cpu_list("", v));
  EXPECT_TRUE(v.empty());
  v = {42};
  for (const char* bad : {"3-1", "1,", ",1", "a", "1-", "-1", "1 2", "0-99999999", "1;2"}) {
    EXPECT_FALSE(sw::parse_cpu_list(bad, v)) << bad;
    EXPECT_EQ(v, (std::vector<int>{42})) << "a rejected list must leave the output alone: " << bad;
  }
  EXPECT_EQ(sw::format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(sw::format_cpu_list({}), "");
}

// Guards against the hwloc mapping mixing up OS indexes, cores, packages, SMT siblings and NUMA
// nodes: 2 packages x 2 NUMA nodes x 4 cores x 2 PUs, where every relation is known.
TEST(HwlocTopology, SyntheticMachineMapsEveryLevel) {
  if (!sw::hwloc_available()) GTEST_SKIP() << "spinwise was built without hwloc (sysfs fallback only)";
  sw::topology t;
  std::string error;
  ASSERT_TRUE(sw::load_hwloc_topology(t, &error, "pack:2 numa:2 core:4 pu:2")) << error;
  EXPECT_NE(t.source.find("synthetic"), std::string::npos);
  EXPECT_EQ(t.packages, 2);
  EXPECT_EQ(t.numa_nodes, 4);
  EXPECT_EQ(t.cores, 16);
  ASSERT_EQ(t.cpus.size(), 32u);
  for (std::size_t i = 0; i < t.cpus.size(); ++i) {
    const sw::topology_cpu& c = t.cpus[i];
    EXPECT_EQ(c.cpu, static_cast<int>(i));
    EXPECT_EQ(c.package, c.cpu / 16) << "cpu " << c.cpu;
    EXPECT_EQ(c.numa_node, c.cpu / 8) << "cpu " << c.cpu;
    EXPECT_EQ(c.core, c.cpu / 2) << "cpu " << c.cpu;
    const int first = c.cpu & ~1;
    EXPECT_EQ(c.smt_siblings, (std::vector<int>{first, first + 1})) << "cpu " << c.cpu;
  }
  // No kinds in a synthetic machine: one kind holding everything.
  ASSERT_EQ(t.core_kinds.size(), 1u);
  EXPECT_EQ(t.core_kinds[0].cpus, range(0, 31));
  EXPECT_EQ(t.find(17)->core_kind, 0);
  EXPECT_EQ(t.find(99), nullptr);
}

TEST(HwlocTopology, SyntheticCachesAreCounted) {
  if (!sw::hwloc_available()) GTEST_SKIP() << "spinwise was built without hwloc";
  sw::topology t;
  std::string error;
  ASSERT_TRUE(sw::load_hwloc_topology(t, &error, "pack:2 l3:1 l2:4 l1d:1 core:1 pu:2")) << error;
  ASSERT_GE(t.caches.size(), 3u);
  EXPECT_EQ(t.caches.front().level, 1);
  EXPECT_EQ(t.caches.back().level, 3);
  EXPECT_EQ(t.caches.back().instances, 2);
  EXPECT_EQ(t.caches.back().cpus_per_instance, 8);
}

// Guards against hybrid CPUs being reported as one kind: registered kinds (E-cores 16-31, least
// efficient first, then P-cores 0-15) must come back as two kinds with the right CPUs, and
// calibration must summarize each kind on its own.
TEST(HwlocTopology, RegisteredKindsGroupTheCalibration) {
  if (!sw::hwloc_available()) GTEST_SKIP() << "spinwise was built without hwloc";
  sw::topology t;
  std::string error;
  ASSERT_TRUE(sw::load_hwloc_topology(t, &error, "pack:2 numa:2 core:4 pu:2", {range(16, 31), range(0, 15)}))
      << error;
  ASSERT_EQ(t.core_kinds.size(), 2u);
  EXPECT_EQ(t.core_kinds[0].cpus, range(16, 31));
  EXPECT_EQ(t.core_kinds[1].cpus, range(0, 15));
  EXPECT_EQ(t.kind_of(3), 1);
  EXPECT_EQ(t.kind_of(20), 0);

  sw::calibration_result r;
  r.topo = t;
  // P-cores pause ~3x longer than E-cores (Raptor Lake, as in topology.hpp).
  for (int cpu : {0, 1, 5, 15}) r.cpus.push_back(fake_cpu(cpu, t.kind_of(cpu), 90.0 + cpu * 0.1));
  for (int cpu : {16, 30}) r.cpus.push_back(fake_cpu(cpu, t.kind_of(cpu), 30.0 + (cpu - 16) * 0.1));
  sw::summarize_kinds(r);
  ASSERT_EQ(r.summaries.size(), 2u);
  EXPECT_EQ(r.summaries[0].core_kind, 0);
  EXPECT_EQ(r.summaries[0].cpus, (std::vector<int>{16, 30}));
  EXPECT_NEAR(r.summaries[0].ns_median, 30.7, 1e-9);
  EXPECT_EQ(r.summaries[1].core_kind, 1);
  EXPECT_EQ(r.summaries[1].cpus, (std::vector<int>{0, 1, 5, 15}));
  EXPECT_NEAR(r.summaries[1].ns_median, 90.3, 1e-9);
  r.settings.target_ns = 600;
  sw::derive_recommendations(r);
  ASSERT_EQ(r.recommendations.size(), 2u);
  EXPECT_EQ(r.recommendations[0].innodb_pause_multiplier, 20u);  // 600 / 30.7
  EXPECT_EQ(r.recommendations[1].innodb_pause_multiplier, 7u);   // 600 / 90.3
}

TEST(HwlocTopology, BadSyntheticDescriptionIsAnError) {
  if (!sw::hwloc_available()) GTEST_SKIP() << "spinwise was built without hwloc";
  sw::topology t;
  t.source = "untouched";
  std::string error;
  EXPECT_FALSE(sw::load_hwloc_topology(t, &error, "pack:two"));
  EXPECT_NE(error.find("synthetic"), std::string::npos) << error;
  EXPECT_EQ(t.source, "untouched");
}

TEST(HwlocTopology, UnavailableSaysWhy) {
  if (sw::hwloc_available()) GTEST_SKIP() << "hwloc is available here";
  sw::topology t;
  std::string error;
  EXPECT_FALSE(sw::load_hwloc_topology(t, &error));
  EXPECT_NE(error.find("without hwloc"), std::string::npos) << error;
}

namespace {

// A fake /sys/devices/system/cpu with `n` CPUs, `smt` per core, one package, caches, one node.
void fake_sysfs(const temp_dir& d, int n, int smt) {
  write_file(d / "cpu/online", "0-" + std::to_string(n - 1) + "\n");
  for (int c = 0; c < n; ++c) {
    const std::string base = d / ("cpu/cpu" + std::to_string(c));
    write_file(base + "/topology/physical_package_id", "0\n");
    write_file(base + "/topology/core_id", std::to_string(c / smt) + "\n");
    const int first = c / smt * smt;
    write_file(base + "/topology/thread_siblings_list",
               std::to_string(first) + "-" + std::to_string(first + smt - 1) + "\n");
    write_file(base + "/cache/index0/level", "1\n");
    write_file(base + "/cache/index0/type", "Data\n");
    write_file(base + "/cache/index0/size", "48K\n");
    write_file(base + "/cache/index0/coherency_line_size", "64\n");
    write_file(base + "/cache/index0/shared_cpu_list",
               std::to_string(first) + "-" + std::to_string(first + smt - 1) + "\n");
    write_file(base + "/cache/index3/level", "3\n");
    write_file(base + "/cache/index3/type", "Unified\n");
    write_file(base + "/cache/index3/size", "260M\n");
    write_file(base + "/cache/index3/shared_cpu_list", "0-" + std::to_string(n - 1) + "\n");
  }
  write_file(d / "node/node0/cpulist", "0-" + std::to_string(n - 1) + "\n");
  write_file(d / "node/node0/distance", "10\n");
}

}  // namespace

// Guards against the fallback (no hwloc: the aarch64 build) losing SMT siblings, caches or nodes.
TEST(SysfsTopology, ReadsCpusCachesAndNodes) {
  temp_dir d;
  ASSERT_FALSE(d.path().empty());
  fake_sysfs(d, 4, 2);
  const sw::topology t = sw::sysfs_topology(d / "cpu", d / "devices", d / "node");
  EXPECT_EQ(t.source, "sysfs");
  EXPECT_EQ(t.packages, 1);
  EXPECT_EQ(t.cores, 2);
  EXPECT_EQ(t.numa_nodes, 1);
  ASSERT_EQ(t.cpus.size(), 4u);
  EXPECT_EQ(t.cpus[3].smt_siblings, (std::vector<int>{2, 3}));
  EXPECT_EQ(t.cpus[3].core, 1);
  EXPECT_EQ(t.cpus[3].numa_node, 0);
  ASSERT_EQ(t.caches.size(), 2u);
  EXPECT_EQ(t.caches[0].size, 48u * 1024);
  EXPECT_EQ(t.caches[0].instances, 2);
  EXPECT_EQ(t.caches[0].cpus_per_instance, 2);
  EXPECT_EQ(t.caches[1].size, 260u * 1024 * 1024);
  EXPECT_EQ(t.caches[1].instances, 1);
  ASSERT_EQ(t.numa_distances.size(), 1u);
  ASSERT_EQ(t.core_kinds.size(), 1u);
  EXPECT_EQ(t.core_kinds[0].cpus, range(0, 3));
}

// Guards against Intel hybrid parts being one kind when hwloc is missing.
TEST(SysfsTopology, IntelHybridKindsFromPmuLists) {
  temp_dir d;
  fake_sysfs(d, 6, 1);
  write_file(d / "devices/cpu_core/cpus", "0-1\n");
  write_file(d / "devices/cpu_atom/cpus", "2-5\n");
  const sw::topology t = sw::sysfs_topology(d / "cpu", d / "devices", d / "node");
  ASSERT_EQ(t.core_kinds.size(), 2u);
  EXPECT_EQ(t.core_kinds[0].name, "IntelAtom");
  EXPECT_EQ(t.core_kinds[0].cpus, range(2, 5));
  EXPECT_EQ(t.core_kinds[1].name, "IntelCore");
  EXPECT_EQ(t.kind_of(1), 1);
  EXPECT_EQ(t.kind_of(4), 0);
}

// Guards against Arm big.LITTLE being one kind: cpu_capacity and MIDR tell the clusters apart,
// smallest capacity first.
TEST(SysfsTopology, ArmKindsFromCapacityAndMidr) {
  temp_dir d;
  fake_sysfs(d, 4, 1);
  for (int c = 0; c < 4; ++c) {
    const std::string base = d / ("cpu/cpu" + std::to_string(c));
    write_file(base + "/cpu_capacity", c < 2 ? "1024\n" : "446\n");
    write_file(base + "/regs/identification/midr_el1",
               c < 2 ? "0x00000000414fd0b0\n" : "0x00000000410fd050\n");
  }
  const sw::topology t = sw::sysfs_topology(d / "cpu", d / "devices", d / "node");
  ASSERT_EQ(t.core_kinds.size(), 2u);
  EXPECT_EQ(t.core_kinds[0].cpus, range(2, 3));
  EXPECT_NE(t.core_kinds[0].name.find("capacity 446"), std::string::npos) << t.core_kinds[0].name;
  EXPECT_EQ(t.core_kinds[1].cpus, range(0, 1));
  EXPECT_EQ(t.kind_of(0), 1);
}

TEST(SysfsTopology, EmptyTreeSaysSo) {
  temp_dir d;
  const sw::topology t = sw::sysfs_topology(d / "cpu", d / "devices", d / "node");
  EXPECT_EQ(t.source, "none");
  EXPECT_TRUE(t.cpus.empty());
  EXPECT_FALSE(t.note.empty());
}

// Guards against the real discovery leaving a CPU without a kind (its costs would vanish from
// the per-kind summary).
TEST(Topology, DiscoveryCoversThisMachine) {
  const sw::topology t = sw::discover_topology();
  EXPECT_FALSE(t.source.empty());
  if (t.cpus.empty()) GTEST_SKIP() << "no topology data here: " << t.note;
  ASSERT_FALSE(t.core_kinds.empty());
  for (const sw::topology_cpu& c : t.cpus) {
    ASSERT_GE(c.core_kind, 0);
    ASSERT_LT(c.core_kind, static_cast<int>(t.core_kinds.size()));
    const auto& cpus = t.core_kinds[static_cast<std::size_t>(c.core_kind)].cpus;
    EXPECT_TRUE(std::find(cpus.begin(), cpus.end(), c.cpu) != cpus.end()) << "cpu " << c.cpu;
  }
}
