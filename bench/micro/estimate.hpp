#pragma once
// spinwise-bench --estimate: spinwise's statistics (runtime/uncertainty.hpp) for the scripts that
// report on a run, so that bench/micro/report.py prints the runtime's numbers and keeps no copy of
// its rules.
//
// JSON Lines: each line of the input is one request document, a request object or an array of
// them, and gets one line of output in the same shape, flushed, so that one process serves a whole
// report, asked as it goes. Requests (confidence, seed and resamples optional, the runtime's
// defaults otherwise; a sample is an array of numbers, null standing for a non-finite value):
//
//   {"median_ci": SAMPLE, "confidence": c}         -> {"n", "median", "min", "max", "lo", "hi", "coverage"}
//   {"compare_medians": [A, B], "confidence": c, "seed": s, "resamples": r}
//                                                  -> {"ratio", "lo", "hi", "confidence", "verdict"}  (B/A)
//   {"geomean": [[A1, B1], [A2, B2], ...], ...}    -> {"cells", "min_runs", "ratio", "lo", "hi",
//                                                      "confidence", "verdict"}  (B/A over the cells)
//   {"coverage": [n, k]}                           -> {"coverage"}  (of [x(k), x(n+1-k)])
//   {"rule": {}}                                   -> {"confidence", "seed", "resamples",
//                                                      "min_runs_for_verdict", "range_rule_below_runs"}
//
// A verdict is uncertainty.hpp's to_string ("within noise", ...). A non-finite number in an answer
// (an interval open above) is written as the string "inf", "-inf" or "nan": JSON has none. A bad
// request is answered {"error": "..."} in its place and the others still are.

#include <iosfwd>

namespace spinwise::bench {

// Answers `in` line by line on `out` until the end of `in`. Returns the exit status: 0, or 1 when
// a line or request was refused (each answered with its error).
int run_estimate(std::istream& in, std::ostream& out);

}  // namespace spinwise::bench
