#include "spinwise/runtime/topology.hpp"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <tuple>
#include <type_traits>

#if SPINWISE_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace spinwise {
namespace {

constexpr int kMaxCpuIndex = 1 << 16;  // far above any machine; bounds what a cpu list may ask for

bool read_text(const std::string& path, std::string& out) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  return true;
}

bool read_int(const std::string& path, long long& out) {
  std::string s;
  if (!read_text(path, s) || s.empty()) return false;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 0);
  if (end == s.c_str() || *end != '\0') return false;
  out = v;
  return true;
}

// Names in `dir` that are `prefix` followed by a decimal number, as those numbers, sorted.
std::vector<int> numbered_entries(const std::string& dir, const std::string& prefix) {
  std::vector<int> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string num = name.substr(prefix.size());
    if (!std::all_of(num.begin(), num.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      continue;
    if (num.size() > 6) continue;
    out.push_back(std::stoi(num));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// Sysfs size strings: "48K", "2048K", "260M".
std::uint64_t parse_size(const std::string& s) {
  if (s.empty()) return 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  std::uint64_t mult = 1;
  if (end != nullptr && *end != '\0') {
    switch (std::toupper(static_cast<unsigned char>(*end))) {
      case 'K':
        mult = 1024;
        break;
      case 'M':
        mult = 1024 * 1024;
        break;
      case 'G':
        mult = 1024ull * 1024 * 1024;
        break;
      default:
        return 0;
    }
  }
  return static_cast<std::uint64_t>(v) * mult;
}

std::string cache_type_name(const std::string& sysfs_type) {
  if (sysfs_type == "Data") return "data";
  if (sysfs_type == "Instruction") return "instruction";
  if (sysfs_type == "Unified") return "unified";
  return sysfs_type;
}

int cache_type_rank(const std::string& t) { return t == "data" ? 0 : t == "instruction" ? 1 : 2; }

void sort_caches(std::vector<cache_level>& caches) {
  std::sort(caches.begin(), caches.end(), [](const cache_level& a, const cache_level& b) {
    return std::make_tuple(a.level, cache_type_rank(a.type), a.size) <
           std::make_tuple(b.level, cache_type_rank(b.type), b.size);
  });
}

// One kind holding every CPU: what a homogeneous machine, or one that tells us nothing, gets.
void single_kind(topology& t, const std::string& name) {
  t.core_kinds.clear();
  core_kind k;
  k.index = 0;
  k.name = name;
  k.efficiency = -1;
  for (topology_cpu& c : t.cpus) {
    c.core_kind = 0;
    k.cpus.push_back(c.cpu);
  }
  t.core_kinds.push_back(std::move(k));
}

}  // namespace

bool parse_cpu_list(const std::string& text, std::vector<int>& out) {
  std::vector<int> cpus;
  std::string s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  auto number = [&](int& v) {
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    long long x = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      x = x * 10 + (s[i] - '0');
      if (x >= kMaxCpuIndex) return false;
      ++i;
    }
    v = static_cast<int>(x);
    return true;
  };
  while (i < s.size()) {
    int a = 0, b = 0;
    if (!number(a)) return false;
    b = a;
    if (i < s.size() && s[i] == '-') {
      ++i;
      if (!number(b) || b < a) return false;
    }
    for (int c = a; c <= b; ++c) cpus.push_back(c);
    if (i < s.size()) {
      if (s[i] != ',') return false;
      ++i;
      if (i == s.size()) return false;  // trailing comma
    }
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  out = std::move(cpus);
  return true;
}

std::string format_cpu_list(const std::vector<int>& cpus_in) {
  std::vector<int> cpus = cpus_in;
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

const topology_cpu* topology::find(int cpu) const noexcept {
  for (const topology_cpu& c : cpus) {
    if (c.cpu == cpu) return &c;
  }
  return nullptr;
}

int topology::kind_of(int cpu) const noexcept {
  const topology_cpu* c = find(cpu);
  return c != nullptr ? c->core_kind : 0;
}

// --- sysfs ---------------------------------------------------------------------------------

topology sysfs_topology(const std::string& cpu_root, const std::string& devices_root,
                        const std::string& node_root) {
  topology t;
  t.source = "sysfs";
  std::vector<int> online;
  std::string text;
  if (!read_text(cpu_root + "/online", text) || !parse_cpu_list(text, online))
    online = numbered_entries(cpu_root, "cpu");
  if (online.empty()) {
    t.source = "none";
    t.note = "no CPUs found under " + cpu_root;
    return t;
  }

  std::map<std::pair<long long, long long>, int> core_index;  // (package, core_id) -> index
  std::set<long long> packages;
  for (int cpu : online) {
    topology_cpu c;
    c.cpu = cpu;
    const std::string base = cpu_root + "/cpu" + std::to_string(cpu) + "/topology/";
    long long pkg = -1, core = -1;
    if (read_int(base + "physical_package_id", pkg)) {
      c.package = static_cast<int>(pkg);
      packages.insert(pkg);
    }
    if (read_int(base + "core_id", core)) {
      const auto key = std::make_pair(pkg, core);
      auto it = core_index.find(key);
      if (it == core_index.end()) it = core_index.emplace(key, static_cast<int>(core_index.size())).first;
      c.core = it->second;
    }
    std::vector<int> sib;
    if ((read_text(base + "core_cpus_list", text) || read_text(base + "thread_siblings_list", text)) &&
        parse_cpu_list(text, sib) && !sib.empty()) {
      c.smt_siblings = sib;
    } else {
      c.smt_siblings = {cpu};
    }
    t.cpus.push_back(std::move(c));
  }
  t.packages = static_cast<int>(packages.size());
  t.cores = static_cast<int>(core_index.size());
  if (t.cores == 0) t.note = "sysfs has no core_id: cores unknown";

  // NUMA nodes and their distances.
  const std::vector<int> nodes = numbered_entries(node_root, "node");
  t.numa_nodes = static_cast<int>(nodes.size());
  for (int node : nodes) {
    std::vector<int> cpus;
    const std::string dir = node_root + "/node" + std::to_string(node);
    if (read_text(dir + "/cpulist", text) && parse_cpu_list(text, cpus)) {
      for (int cpu : cpus) {
        for (topology_cpu& c : t.cpus) {
          if (c.cpu == cpu) c.numa_node = node;
        }
      }
    }
    std::vector<int> row;
    if (read_text(dir + "/distance", text)) {
      std::istringstream ss(text);
      int d = 0;
      while (ss >> d) row.push_back(d);
    }
    if (row.size() == nodes.size()) t.numa_distances.push_back(std::move(row));
  }
  if (t.numa_distances.size() != nodes.size()) t.numa_distances.clear();

  // Caches: one entry per (level, type, size, line), counting distinct sharing sets.
  std::map<std::tuple<int, std::string, std::uint64_t, std::uint32_t>, std::set<std::string>> caches;
  for (int cpu : online) {
    const std::string cdir = cpu_root + "/cpu" + std::to_string(cpu) + "/cache";
    for (int idx : numbered_entries(cdir, "index")) {
      const std::string d = cdir + "/index" + std::to_string(idx) + "/";
      long long level = 0, line = 0;
      std::string type, size, shared;
      if (!read_int(d + "level", level) || !read_text(d + "type", type) || !read_text(d + "size", size))
        continue;
      read_int(d + "coherency_line_size", line);
      if (!read_text(d + "shared_cpu_list", shared)) shared = std::to_string(cpu);
      caches[{static_cast<int>(level), cache_type_name(type), parse_size(size),
              static_cast<std::uint32_t>(line)}]
          .insert(shared);
    }
  }
  for (const auto& [key, sets] : caches) {
    cache_level c;
    std::tie(c.level, c.type, c.size, c.line) = key;
    c.instances = static_cast<int>(sets.size());
    std::vector<int> members;
    if (parse_cpu_list(*sets.begin(), members)) c.cpus_per_instance = static_cast<int>(members.size());
    t.caches.push_back(std::move(c));
  }
  sort_caches(t.caches);

  // Core kinds. Intel hybrid: the cpu_core / cpu_atom PMUs list their CPUs.
  std::vector<int> atom, big;
  if (read_text(devices_root + "/cpu_atom/cpus", text) && parse_cpu_list(text, atom) &&
      read_text(devices_root + "/cpu_core/cpus", text) && parse_cpu_list(text, big) && !atom.empty() &&
      !big.empty()) {
    t.core_kinds.clear();
    const std::pair<const char*, const std::vector<int>*> kinds[] = {{"IntelAtom", &atom},
                                                                     {"IntelCore", &big}};
    for (int k = 0; k < 2; ++k) {
      core_kind ck;
      ck.index = k;
      ck.name = kinds[k].first;
      ck.efficiency = k;
      ck.infos.emplace_back("CoreType", kinds[k].first);
      for (topology_cpu& c : t.cpus) {
        if (std::binary_search(kinds[k].second->begin(), kinds[k].second->end(), c.cpu)) {
          c.core_kind = k;
          ck.cpus.push_back(c.cpu);
        }
      }
      t.core_kinds.push_back(std::move(ck));
    }
    return t;
  }
  // Arm big.LITTLE and friends: per-CPU MIDR and capacity. Kinds sorted by capacity, smallest
  // first (hwloc's order: least efficient first).
  std::map<std::pair<long long, std::string>, std::vector<int>> by_key;
  bool any_key = false;
  for (const topology_cpu& c : t.cpus) {
    const std::string d = cpu_root + "/cpu" + std::to_string(c.cpu);
    long long cap = -1;
    std::string midr;
    if (read_int(d + "/cpu_capacity", cap)) any_key = true;
    if (read_text(d + "/regs/identification/midr_el1", midr)) any_key = true;
    by_key[{cap, midr}].push_back(c.cpu);
  }
  if (!any_key || by_key.size() == 1) {
    single_kind(t, "all");
    return t;
  }
  t.core_kinds.clear();
  int k = 0;
  for (const auto& [key, cpus] : by_key) {
    core_kind ck;
    ck.index = k;
    ck.efficiency = k;
    std::string name;
    if (!key.second.empty()) {
      name = "midr " + key.second;
      ck.infos.emplace_back("MIDR", key.second);
    }
    if (key.first >= 0) {
      name += (name.empty() ? "" : ", ") + std::string("capacity ") + std::to_string(key.first);
      ck.infos.emplace_back("Capacity", std::to_string(key.first));
    }
    ck.name = name;
    ck.cpus = cpus;
    for (topology_cpu& c : t.cpus) {
      if (std::find(cpus.begin(), cpus.end(), c.cpu) != cpus.end()) c.core_kind = k;
    }
    t.core_kinds.push_back(std::move(ck));
    ++k;
  }
  return t;
}

// --- hwloc -----------------------------------------------------------------------------------

#if SPINWISE_HAVE_HWLOC

bool hwloc_available() noexcept { return true; }

namespace {

struct topo_deleter {
  void operator()(hwloc_topology_t t) const noexcept { hwloc_topology_destroy(t); }
};
struct bitmap_deleter {
  void operator()(hwloc_bitmap_t b) const noexcept { hwloc_bitmap_free(b); }
};
using topo_ptr = std::unique_ptr<std::remove_pointer_t<hwloc_topology_t>, topo_deleter>;
using bitmap_ptr = std::unique_ptr<std::remove_pointer_t<hwloc_bitmap_t>, bitmap_deleter>;

std::vector<int> bitmap_to_cpus(hwloc_const_bitmap_t set) {
  std::vector<int> out;
  for (int i = hwloc_bitmap_first(set); i >= 0; i = hwloc_bitmap_next(set, i)) {
    if (i >= kMaxCpuIndex) break;
    out.push_back(i);
  }
  return out;
}

std::string hwloc_version_string() {
#if defined(HWLOC_VERSION)
  return HWLOC_VERSION;
#else
  const unsigned v = hwloc_get_api_version();
  return "API " + std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xff) + "." +
         std::to_string(v & 0xff);
#endif
}

}  // namespace

bool load_hwloc_topology(topology& out, std::string* error, const char* synthetic,
                         const std::vector<std::vector<int>>& register_kinds) {
  auto fail = [&](const std::string& why) {
    if (error != nullptr) *error = why;
    return false;
  };
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return fail("hwloc_topology_init failed");
  topo_ptr topo(raw);
  hwloc_topology_set_icache_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL);  // hwloc drops L1i by default
  if (synthetic != nullptr && hwloc_topology_set_synthetic(raw, synthetic) != 0) {
    return fail(std::string("hwloc rejected the synthetic topology '") + synthetic + "'");
  }
  if (hwloc_topology_load(raw) != 0) return fail("hwloc_topology_load failed");

  for (std::size_t k = 0; k < register_kinds.size(); ++k) {
    bitmap_ptr set(hwloc_bitmap_alloc());
    if (!set) return fail("out of memory");
    for (int cpu : register_kinds[k]) hwloc_bitmap_set(set.get(), static_cast<unsigned>(cpu));
    if (hwloc_cpukinds_register(raw, set.get(), static_cast<int>(k), 0, nullptr, 0) != 0) {
      return fail("hwloc_cpukinds_register refused kind " + std::to_string(k));
    }
  }

  topology t;
  t.source = synthetic != nullptr ? std::string("hwloc synthetic '") + synthetic + "'"
                                  : "hwloc " + hwloc_version_string();
  t.packages = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PACKAGE);
  t.cores = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_CORE);
  t.numa_nodes = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_NUMANODE);
  const int npu = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PU);
  for (int i = 0; i < npu; ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(raw, HWLOC_OBJ_PU, static_cast<unsigned>(i));
    if (pu == nullptr || pu->os_index >= static_cast<unsigned>(kMaxCpuIndex)) continue;
    topology_cpu c;
    c.cpu = static_cast<int>(pu->os_index);
    if (hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(raw, HWLOC_OBJ_PACKAGE, pu)) {
      c.package = static_cast<int>(pkg->logical_index);
    }
    if (hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(raw, HWLOC_OBJ_CORE, pu)) {
      c.core = static_cast<int>(core->logical_index);
      c.smt_siblings = bitmap_to_cpus(core->cpuset);
    } else {
      c.smt_siblings = {c.cpu};
    }
    t.cpus.push_back(std::move(c));
  }
  std::sort(t.cpus.begin(), t.cpus.end(),
            [](const topology_cpu& a, const topology_cpu& b) { return a.cpu < b.cpu; });
  for (int i = 0; i < t.numa_nodes; ++i) {
    hwloc_obj_t node = hwloc_get_obj_by_type(raw, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    if (node == nullptr || node->cpuset == nullptr) continue;
    for (int cpu : bitmap_to_cpus(node->cpuset)) {
      for (topology_cpu& c : t.cpus) {
        if (c.cpu == cpu) c.numa_node = static_cast<int>(node->os_index);
      }
    }
  }

  // NUMA distances as the OS reports them (none for synthetic topologies without them).
  unsigned nr = 1;
  hwloc_distances_s* dist = nullptr;
  if (hwloc_distances_get_by_type(raw, HWLOC_OBJ_NUMANODE, &nr, &dist, HWLOC_DISTANCES_KIND_MEANS_LATENCY,
                                  0) == 0 &&
      nr >= 1 && dist != nullptr) {
    const unsigned n = dist->nbobjs;
    for (unsigned r = 0; r < n; ++r) {
      std::vector<int> row;
      for (unsigned c = 0; c < n; ++c) row.push_back(static_cast<int>(dist->values[r * n + c]));
      t.numa_distances.push_back(std::move(row));
    }
    hwloc_distances_release(raw, dist);
  }

  const hwloc_obj_type_t cache_types[] = {HWLOC_OBJ_L1CACHE,  HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2CACHE,
                                          HWLOC_OBJ_L2ICACHE, HWLOC_OBJ_L3CACHE,  HWLOC_OBJ_L3ICACHE,
                                          HWLOC_OBJ_L4CACHE,  HWLOC_OBJ_L5CACHE};
  for (hwloc_obj_type_t type : cache_types) {
    const int n = hwloc_get_nbobjs_by_type(raw, type);
    if (n <= 0) continue;
    hwloc_obj_t first = hwloc_get_obj_by_type(raw, type, 0);
    if (first == nullptr || first->attr == nullptr) continue;
    cache_level c;
    c.level = static_cast<int>(first->attr->cache.depth);
    c.type = first->attr->cache.type == HWLOC_OBJ_CACHE_DATA          ? "data"
             : first->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION ? "instruction"
                                                                      : "unified";
    c.size = first->attr->cache.size;
    c.line = first->attr->cache.linesize;
    c.instances = n;
    c.cpus_per_instance = hwloc_bitmap_weight(first->cpuset);
    t.caches.push_back(std::move(c));
  }
  sort_caches(t.caches);

  const int nkinds = hwloc_cpukinds_get_nr(raw, 0);
  if (nkinds <= 0) {
    single_kind(t, "all");
    t.note = "hwloc reports no CPU kinds: one kind assumed";
  } else {
    bitmap_ptr set(hwloc_bitmap_alloc());
    if (!set) return fail("out of memory");
    for (int k = 0; k < nkinds; ++k) {
      int eff = -1;
      unsigned ninfos = 0;
      hwloc_info_s* infos = nullptr;
      if (hwloc_cpukinds_get_info(raw, static_cast<unsigned>(k), set.get(), &eff, &ninfos, &infos, 0) != 0)
        continue;
      core_kind ck;
      ck.index = static_cast<int>(t.core_kinds.size());
      ck.efficiency = eff;
      ck.cpus = bitmap_to_cpus(set.get());
      for (unsigned i = 0; i < ninfos; ++i) {
        ck.infos.emplace_back(infos[i].name != nullptr ? infos[i].name : "",
                              infos[i].value != nullptr ? infos[i].value : "");
        if (ck.name.empty() && ck.infos.back().first == "CoreType") ck.name = ck.infos.back().second;
      }
      if (ck.name.empty()) ck.name = nkinds == 1 ? "all" : "kind " + std::to_string(ck.index);
      for (topology_cpu& c : t.cpus) {
        if (std::binary_search(ck.cpus.begin(), ck.cpus.end(), c.cpu)) c.core_kind = ck.index;
      }
      t.core_kinds.push_back(std::move(ck));
    }
    if (t.core_kinds.empty()) single_kind(t, "all");
  }
  out = std::move(t);
  return true;
}

#else  // !SPINWISE_HAVE_HWLOC

bool hwloc_available() noexcept { return false; }

bool load_hwloc_topology(topology&, std::string* error, const char*, const std::vector<std::vector<int>>&) {
  if (error != nullptr) *error = "spinwise was built without hwloc";
  return false;
}

#endif

topology discover_topology() {
  topology t;
  std::string why;
  if (load_hwloc_topology(t, &why)) return t;
  t = sysfs_topology();
  t.note = why + (t.note.empty() ? "" : "; " + t.note);
  if (t.cpus.empty()) t.note += "; no topology data at all";
  return t;
}

}  // namespace spinwise
