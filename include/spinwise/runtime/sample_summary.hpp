#pragma once
// Robust order statistics of repeated timing trials, and a verdict on whether they describe one
// number at all (spinwise::runtime).
//
// Calibration must not print a confident figure for a CPU whose trials disagree. A VM's
// PAUSE-loop exiting turns some PAUSE loops into VM exits (two clusters of trials: "bimodal"),
// frequency changes spread trials out ("noisy"), and a clock that moves between rounds of one
// measurement shows as "drifting". Interrupts hit a few trials and are ignored: the verdict looks
// at the central 80% of the sample only.

#include <cstdint>
#include <string_view>
#include <vector>

namespace spinwise {

enum class stability : std::uint8_t {
  stable = 0,        // one tight cluster: the median is the answer
  noisy = 1,         // p10..p90 wider than the noise limit: the median is a rough figure
  bimodal = 2,       // two clusters, each holding at least 10% of the trials
  drifting = 3,      // rounds of one measurement disagree (the clock changed while measuring)
  insufficient = 4,  // too few trials to judge (fewer than 5)
};

std::string_view to_string(stability s) noexcept;
// Parses what to_string() produces; false (and `out` unchanged) for anything else.
bool parse_stability(std::string_view text, stability& out) noexcept;

// Limits of the verdict. The defaults suit relax-instruction timings: PAUSE trials on a quiet
// machine agree within ~2% (p10..p90), so 10% is clearly something else.
struct stability_limits {
  double noisy_spread = 0.10;       // (p90 - p10) / median above this: noisy
  double bimodal_gap = 0.15;        // a jump of more than 15% between neighbouring trials ...
  double bimodal_min_share = 0.10;  // ... with at least 10% of the trials on each side: bimodal
  double drift = 0.05;              // round medians more than 5% apart: drifting
};

struct sample_summary {
  std::uint32_t n = 0;
  double min = 0, p10 = 0, median = 0, p90 = 0, max = 0;  // quantiles by order_stats.hpp's one rank rule
  double spread = 0;                                      // (p90 - p10) / median; 0 when the median is 0
  // The 95% interval of the median (uncertainty.hpp's order-statistics rule): where the typical
  // trial's value is, as opposed to p10..p90, where single trials fall. A tail of slow trials (a
  // busy host) widens p10..p90 but moves this only as far as it moves the median.
  double median_lo = 0, median_hi = 0;
  stability status = stability::insufficient;
  // For bimodal samples: the medians of the lower and upper cluster, and the upper's share.
  double low_mode = 0, high_mode = 0, high_share = 0;
};

// Summarizes `samples` (any order; copied and sorted). Non-finite values are dropped first.
sample_summary summarize(std::vector<double> samples, const stability_limits& limits = {});

// Marks a stable summary as drifting when the medians of its rounds disagree by more than
// limits.drift; returns the relative disagreement ((max - min) / median of the round medians).
double check_drift(sample_summary& s, const std::vector<double>& round_medians,
                   const stability_limits& limits = {});

}  // namespace spinwise
