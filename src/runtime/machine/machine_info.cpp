#include "spinwise/runtime/machine_info.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "spinwise/arch.hpp"
#include "spinwise/detail/env.hpp"

namespace spinwise {
namespace {

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return trim(line);
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// The first CPU's block of /proc/cpuinfo, key -> value.
std::map<std::string, std::string> cpuinfo_first_block() {
  std::map<std::string, std::string> out;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (trim(line).empty()) {
      if (!out.empty()) break;
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    out.emplace(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
  }
  return out;
}

std::string get(const std::map<std::string, std::string>& m, const char* key) {
  const auto it = m.find(key);
  return it == m.end() ? std::string() : it->second;
}

std::string detect_virtualization(const std::map<std::string, std::string>& cpuinfo) {
  std::string name;
  std::vector<std::string> evidence;
  const std::string clocksources =
      read_first_line("/sys/devices/system/clocksource/clocksource0/available_clocksource");
  const std::pair<const char*, const char*> by_clock[] = {
      {"kvm-clock", "kvm"}, {"xen", "xen"}, {"hyperv_clocksource", "hyper-v"}, {"vmware", "vmware"}};
  for (const auto& [needle, vm] : by_clock) {
    if (clocksources.find(needle) != std::string::npos) {
      name = vm;
      evidence.push_back(std::string(needle) + " clocksource");
      break;
    }
  }
  const std::string hv = read_first_line("/sys/hypervisor/type");
  if (!hv.empty()) {
    if (name.empty()) name = hv;
    evidence.push_back("/sys/hypervisor/type " + hv);
  }
  const std::string vendor = read_first_line("/sys/class/dmi/id/sys_vendor");
  const std::string product = read_first_line("/sys/class/dmi/id/product_name");
  const std::pair<const char*, const char*> by_dmi[] = {
      {"QEMU", "qemu"}, {"KVM", "kvm"},           {"VMware", "vmware"}, {"Microsoft Corporation", "hyper-v"},
      {"Xen", "xen"},   {"Amazon EC2", "amazon"}, {"Google", "google"}, {"innotek", "virtualbox"}};
  for (const auto& [needle, vm] : by_dmi) {
    if (vendor.find(needle) != std::string::npos || product.find(needle) != std::string::npos) {
      if (name.empty()) name = vm;
      evidence.push_back("DMI " + vendor + (product.empty() ? "" : " " + product));
      break;
    }
  }
  const std::string flags = " " + get(cpuinfo, "flags") + " ";
  if (flags.find(" hypervisor ") != std::string::npos) {
    if (name.empty()) name = "unknown hypervisor";
    evidence.push_back("hypervisor CPU flag");
  }
  if (name.empty()) return "none detected";
  std::string out = name + " (";
  for (std::size_t i = 0; i < evidence.size(); ++i) out += (i ? ", " : "") + evidence[i];
  return out + ")";
}

std::string detect_container() {
  if (exists("/.dockerenv")) return "docker (/.dockerenv)";
  if (exists("/run/.containerenv")) return "podman (/run/.containerenv)";
  if (const char* c = detail::env("container"); c != nullptr && *c != '\0')
    return std::string(c) + " ($container)";
  std::ifstream in("/proc/1/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    for (const char* needle : {"docker", "kubepods", "lxc", "containerd"}) {
      if (line.find(needle) != std::string::npos) return std::string(needle) + " (/proc/1/cgroup)";
    }
  }
  return "";
}

}  // namespace

machine_info detect_machine() {
  machine_info m;
  m.arch = std::string(backend_name());
  const auto cpuinfo = cpuinfo_first_block();
  m.cpu_vendor = get(cpuinfo, "vendor_id");
  m.cpu_model = get(cpuinfo, "model name");
  if (!get(cpuinfo, "cpu family").empty()) {
    m.cpu_id = "family " + get(cpuinfo, "cpu family") + " model " + get(cpuinfo, "model") + " stepping " +
               get(cpuinfo, "stepping");
  }
  if (!get(cpuinfo, "CPU implementer").empty()) {  // Arm: no model name, the MIDR fields instead
    m.cpu_vendor = get(cpuinfo, "CPU implementer");
    if (m.cpu_model.empty())
      m.cpu_model = "implementer " + m.cpu_vendor + " part " + get(cpuinfo, "CPU part");
    m.cpu_id = "variant " + get(cpuinfo, "CPU variant") + " revision " + get(cpuinfo, "CPU revision");
  }
  if (m.cpu_model.empty()) m.cpu_model = "unknown";
  const long n = ::sysconf(_SC_NPROCESSORS_CONF);
  m.cpu_count = n > 0 ? static_cast<int>(n) : 0;
  utsname u{};
  if (::uname(&u) == 0) m.kernel = std::string(u.sysname) + " " + u.release;
  m.virtualization = detect_virtualization(cpuinfo);
  m.container = detect_container();
  m.counter = std::string(counter_name());
  m.counter_hz = counter_frequency();
  m.counter_invariant = counter_is_invariant();
  return m;
}

std::string machine_mismatch(const machine_info& p, const machine_info& h) {
  if (p.arch != h.arch) return "it was made with the " + p.arch + " backend, this build uses " + h.arch;
  if (p.cpu_model != h.cpu_model)
    return "it describes CPU model '" + p.cpu_model + "', this machine has '" + h.cpu_model + "'";
  if (p.cpu_id != h.cpu_id) return "it describes CPU '" + p.cpu_id + "', this machine has '" + h.cpu_id + "'";
  if (p.cpu_count != h.cpu_count) {
    return "it describes " + std::to_string(p.cpu_count) + " CPUs, this machine has " +
           std::to_string(h.cpu_count);
  }
  if (p.counter != h.counter)
    return "it uses counter '" + p.counter + "', this build reads '" + h.counter + "'";
  if (h.counter_hz > 0) {
    const double rel = std::fabs(static_cast<double>(p.counter_hz) - static_cast<double>(h.counter_hz)) /
                       static_cast<double>(h.counter_hz);
    if (rel > 0.02) {
      char buf[160];
      std::snprintf(buf, sizeof(buf), "its counter runs at %.3f MHz, this machine's at %.3f MHz",
                    static_cast<double>(p.counter_hz) / 1e6, static_cast<double>(h.counter_hz) / 1e6);
      return buf;
    }
  }
  return "";
}

namespace runtime {

std::string kernel_machine() {
  utsname u{};
  return ::uname(&u) == 0 ? std::string(u.machine) : std::string();
}

std::string compiler_id() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("gcc ") + __VERSION__;
#else
  return "unknown";
#endif
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace runtime

}  // namespace spinwise
