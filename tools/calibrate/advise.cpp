// spinwise-calibrate --advise mysql|mariadb: the my.cnf lines for a real engine (docs/engines.md):
// the spin settings that give the spin time per round the engine's defaults gave before Skylake.
#include <cstdio>
#include <string>
#include <utility>

#include "cli.hpp"
#include "spinwise/runtime/profile.hpp"

namespace spinwise::calibrate_tool {

namespace {

// The advice from a calibration (measured now, or a saved profile).
sw::advice_result advice_from(const sw::calibration_result& r, const advise_request& rq) {
  sw::engine_advice_input in = sw::advice_input_from(r, rq.which, rq.version);
  if (rq.multiplier_given) in.mariadb_multiplier = rq.multiplier;
  if (rq.target_ns > 0) in.unit_ns = rq.target_ns;  // --target-ns, over a saved profile's own
  return sw::advise_engine(in);
}

// The run context of the measurement an advice is from: `here` (taken before measuring, so its
// load average is the host's, not the measurement's) with the calibration's machine, or for a
// saved profile (`here` null) what the profile says: its machine and date, the rest not known.
sw::run_context advice_context(const sw::calibration_result& r, const sw::advice_result& a,
                               const sw::run_context* here) {
  sw::run_context c = here != nullptr ? *here : sw::run_context{};
  c.machine = r.machine;
  if (here == nullptr) c.date = r.created;
  c.relax = str(sw::to_string(sw::relax_kind::pause));  // the only kind an engine's advice reads
  c.relax_ns = a.advice.relax_ns;
  return c;
}

// Prints the advice, or the refusal (on stderr, and as a JSON document on stdout with --format
// json, so that a script reading stdout sees why). The exit code.
int print_advice(const sw::advice_result& a, const sw::calibration_result& r, const sw::run_context& run,
                 const std::string& format) {
  if (a.status != sw::advice_status::ok) {
    std::fprintf(stderr, "spinwise-calibrate: --advise: %s\n", a.message.c_str());
    for (const std::string& s : a.suggestions) std::fprintf(stderr, "  - %s\n", s.c_str());
    if (format == "json") std::fputs(sw::format_refusal_json(a, &r, &run).c_str(), stdout);
    return a.status == sw::advice_status::usage ? kExitUsage : kExitUnstable;
  }
  const std::string text =
      format == "json" ? sw::format_advice_json(a.advice, &r, &run) : sw::format_advice_text(a.advice, &r);
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

}  // namespace

int advise_from_profile(const advise_request& rq, const std::string& path) {
  sw::calibration_result saved;
  if (const sw::profile_status st = sw::read_profile(path, saved); !st) {
    std::fprintf(stderr, "spinwise-calibrate: --from-profile: %s\n", st.message.c_str());
    return kExitUsage;
  }
  const sw::advice_result a = advice_from(saved, rq);
  return print_advice(a, saved, advice_context(saved, a, nullptr), rq.format);
}

int advise_measured(const advise_request& rq, sw::calibration_options opt, sw::calibration_result result,
                    progress_line& progress, const sw::run_context& here, const std::string& output) {
  std::string why;
  // A busy host: when the median's interval still leaves the advice open, measure again with
  // three times the trials, twice at most, and say so (sw::advise_measuring_again).
  const auto advise = [&](const sw::calibration_result& r) { return advice_from(r, rq); };
  const auto measure = [&](std::uint32_t more_trials, sw::calibration_result& out, std::string* error) {
    opt.trials = more_trials;
    progress.note(("the advice is open within the measurement's interval: measuring again with " +
                   std::to_string(more_trials) + " trials a CPU...")
                      .c_str());
    const bool ok = sw::calibrate(opt, out, error);
    progress.clear();
    return ok;
  };
  sw::advice_rounds rounds = sw::advise_measuring_again(std::move(result), advise, measure);
  if (rounds.failed) {
    std::fprintf(stderr, "spinwise-calibrate: %s\n", rounds.why.c_str());
    return kExitFailure;
  }
  result = std::move(rounds.result);
  const sw::advice_result& a = rounds.advice;
  const int rc = print_advice(a, result, advice_context(result, a, &here), rq.format);
  if (rc != kExitOk || output.empty()) return rc;
  if (!sw::write_profile(output, result, &why)) {
    std::fprintf(stderr, "spinwise-calibrate: %s\n", why.c_str());
    return kExitFailure;
  }
  std::fprintf(stderr, "profile written to %s\n", output.c_str());
  return kExitOk;
}

}  // namespace spinwise::calibrate_tool
