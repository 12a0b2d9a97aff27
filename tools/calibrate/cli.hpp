#pragma once
// What spinwise-calibrate's modes share (tools/calibrate/: main.cpp parses and dispatches;
// calibrate.cpp, watch.cpp, advise.cpp and tune.cpp are the modes): exit codes, small formatting,
// the relax kinds asked for, the machine's lines, the progress line and the output check.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "spinwise/runtime/calibration.hpp"
#include "spinwise/runtime/engine_advice.hpp"
#include "spinwise/runtime/run_context.hpp"
#include "tune_server.hpp"

namespace spinwise::calibrate_tool {

namespace sw = spinwise;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnstable = 3;

std::string str(std::string_view s);
std::string fmt(const char* f, double v);
// The relax kinds this CPU supports, comma separated.
std::string kinds_supported();
// --backends: "all" (an empty list) or named relax kinds; false with `error` set otherwise.
bool parse_backends(const std::string& text, std::vector<sw::relax_kind>& out, std::string& error);
// The machine's lines of a table (its CPU, kernel, virtualization and counter).
void print_machine(const sw::machine_info& m, std::FILE* o);
// Why a file cannot be created at `path` ("" when its directory is writable): checked before a
// watch, so a mistyped path does not cost the whole watch.
std::string cannot_create(const std::string& path);

// A one-line progress display on stderr, shown only on a terminal and only once a run has taken
// more than a second.
struct progress_line {
  bool tty = ::isatty(STDERR_FILENO) == 1;
  bool shown = false;
  void update(const sw::calibration_progress& p) {
    if (!tty || p.elapsed_s < 1.0) return;
    shown = true;
    std::fprintf(stderr, "\r\033[Kcalibrating: %zu/%zu (cpu %d, %s) %.1f s", p.step, p.steps, p.cpu,
                 str(sw::to_string(p.kind)).c_str(), p.elapsed_s);
    std::fflush(stderr);
  }
  void update(const sw::watch_progress& p) {
    if (!tty || p.elapsed_s < 1.0) return;
    shown = true;
    std::fprintf(stderr, "\r\033[Kwatching: %.1f / %.1f s, %zu sample(s) per CPU", p.elapsed_s, p.duration_s,
                 p.samples);
    std::fflush(stderr);
  }
  void note(const char* what) {
    if (!tty) return;
    shown = true;
    std::fprintf(stderr, "\r\033[K%s", what);
    std::fflush(stderr);
  }
  void clear() {
    if (shown) std::fprintf(stderr, "\r\033[K");
    shown = false;
  }
};

// calibrate.cpp: the measurement (with --c2c, the latency matrix too), and its table or profile.
bool measure(const sw::calibration_options& opt, bool c2c, progress_line& progress,
             sw::calibration_result& out);
int print_calibration(const sw::calibration_result& result, const std::string& format,
                      const std::string& output, bool strict);

// watch.cpp: --watch, its options checked: watch, print, write the document and the plot. The exit code.
int run_watch(sw::watch_options wo, const std::string& format, const std::string& output,
              const std::string& plot, bool strict);

// advise.cpp: --advise, its request checked.
struct advise_request {
  sw::engine which = sw::engine::mysql;
  std::string version;            // --engine-version ("" the default)
  bool multiplier_given = false;  // --mariadb-multiplier
  unsigned multiplier = 0;
  double target_ns = 0;  // --target-ns (0: the profile's own)
  std::string format;
};
// From a saved profile (--from-profile): usage errors are exit 2.
int advise_from_profile(const advise_request& rq, const std::string& path);
// From a measurement just made (`here` taken before it), measuring again with more trials while
// the advice is open; with --output the profile is written too.
int advise_measured(const advise_request& rq, sw::calibration_options opt, sw::calibration_result result,
                    progress_line& progress, const sw::run_context& here, const std::string& output);

// tune.cpp: --tune mariadb|mysql, innodb_spin_wait_delay measured on the running server.
// The safe range --tune steps in: 0 .. 50, the range the project's sweeps covered
// (bench/results/engines); the server's current value is measured wherever it is.
inline constexpr unsigned kTuneDelayMax = 50;
// The default candidate set's size at most (the current value, the advice, 0, two neighbours).
inline constexpr std::size_t kTuneMaxCandidates = 5;
// The default rounds at most: twelve rounds' ratios call a candidate when ten lie above 1 (the
// sign test at 96%); four candidates of 5 + 1 s then take 288 s of the 300 s limit, five fit 9
// rounds in what the advice's PAUSE calibration leaves of it.
inline constexpr std::size_t kTuneAutoRounds = 12;
struct tune_request {
  sw::engine which = sw::engine::mariadb;
  server_address address;
  std::vector<unsigned> candidates;  // --candidates (the current value is added); empty: the default set
  // 0: as many as fit time_limit_s, at most kTuneAutoRounds.
  std::size_t rounds = 0;
  double round_s = 5, settle_s = 1, time_limit_s = 300;
  std::string counter = "Questions";  // a SHOW GLOBAL STATUS counter
  // A round this many times above or below the same setting's earlier rounds means the load
  // changed under the measurement, not the setting: the run stops without a verdict.
  double max_drift = 2;
  bool apply = false;
  std::string format;
};
// Exit codes: 0 a verdict (the winner, or keep the current value); 1 an error or a lost
// connection; 2 usage; 3 the workload moved too much, or the time limit passed before 6
// complete rounds (from 6 on, those decide); 130 SIGINT,
// 143 SIGTERM. The original value is put back on every one of them but --apply's 0.
int run_tune(const tune_request& rq);

}  // namespace spinwise::calibrate_tool
