// spinwise-calibrate: what its modes share (cli.hpp).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cli.hpp"
#include "spinwise/arch.hpp"

namespace spinwise::calibrate_tool {

std::string str(std::string_view s) { return std::string(s); }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

std::string kinds_supported() {
  std::string s;
  for (sw::relax_kind k : sw::kAllRelaxKinds) {
    if (sw::relax_supported(k)) s += (s.empty() ? "" : ", ") + str(sw::to_string(k));
  }
  return s;
}

bool parse_backends(const std::string& text, std::vector<sw::relax_kind>& out, std::string& error) {
  out.clear();
  if (text == "all") return true;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string name = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    sw::relax_kind k{};
    if (!sw::parse_relax_kind(name, k)) {
      std::string known;
      for (sw::relax_kind any : sw::kAllRelaxKinds)
        known += (known.empty() ? "" : ", ") + str(sw::to_string(any));
      error = "unknown relax kind '" + name + "' in --backends (known: " + known +
              "; this CPU supports: " + kinds_supported() + ")";
      return false;
    }
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return true;
}

void print_machine(const sw::machine_info& m, std::FILE* o) {
  std::fprintf(o, "machine   %s (%s%s%s), %d CPUs\n", m.cpu_model.c_str(), m.cpu_vendor.c_str(),
               m.cpu_vendor.empty() ? "" : " ", m.cpu_id.c_str(), m.cpu_count);
  std::fprintf(o, "          %s; virtualization: %s%s%s\n", m.kernel.c_str(), m.virtualization.c_str(),
               m.container.empty() ? "" : "; container: ", m.container.c_str());
  std::fprintf(o, "counter   %s at %.3f MHz, %s\n", m.counter.c_str(),
               static_cast<double>(m.counter_hz) / 1e6,
               m.counter_invariant ? "invariant" : "NOT invariant (ns figures assume a constant rate)");
}

std::string cannot_create(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::access(dir.c_str(), W_OK) == 0) return "";
  return "cannot create " + path + ": " + std::strerror(errno);
}

}  // namespace spinwise::calibrate_tool
