#pragma once
// gnuplot for the C++ tools (spinwise-stress --png, spinwise-calibrate --watch --plot): the one
// place that names a plot's script and data files, quotes strings and runs the program. The tools
// write the data and the script themselves, next to the PNG, so that a plot can be drawn again
// elsewhere; the scripts set noenhanced, so labels print as written. bench/plot.py is the same for
// the Python scripts. Not installed.

#include <cstdlib>
#include <string>

namespace spinwise::detail {

// `png` without its extension: the stem of the .gp and .dat files beside it.
inline std::string plot_stem(const std::string& png) {
  std::string stem = png;
  const auto dot = stem.rfind('.');
  const auto slash = stem.rfind('/');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) stem.resize(dot);
  return stem;
}

// gnuplot's single-quoted string: no escapes but a doubled quote.
inline std::string gnuplot_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// Runs gnuplot on the script at `gp`. "" on success, else why not (`kept` says what stays on disk
// for a plot drawn elsewhere).
inline std::string run_gnuplot(const std::string& gp, const std::string& kept) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    return "gnuplot not found (Debian: apt-get install gnuplot-nox); " + kept;
  std::string quoted = "'";  // the shell's single quotes
  for (char c : gp) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  const int rc = std::system(("gnuplot " + quoted + " 2>&1").c_str());
  if (rc != 0) return "gnuplot failed on " + gp + " (status " + std::to_string(rc) + ")";
  return "";
}

}  // namespace spinwise::detail
