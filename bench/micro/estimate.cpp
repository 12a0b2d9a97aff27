#include "estimate.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <istream>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "spinwise/runtime/uncertainty.hpp"

namespace spinwise::bench {
namespace {

using nlohmann::json;
namespace rt = spinwise::runtime;

struct bad_request : std::runtime_error {
  using std::runtime_error::runtime_error;
};

json number(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

std::vector<double> sample(const json& j, const char* what) {
  if (!j.is_array()) throw bad_request(std::string(what) + ": a sample is an array of numbers");
  std::vector<double> x;
  x.reserve(j.size());
  for (const json& v : j) {
    if (v.is_null()) {
      x.push_back(std::numeric_limits<double>::quiet_NaN());  // a non-finite value: dropped
    } else if (v.is_number()) {
      x.push_back(v.get<double>());
    } else {
      throw bad_request(std::string(what) + ": '" + v.dump() + "' is not a number");
    }
  }
  return x;
}

double confidence(const json& req) {
  const double c = req.value("confidence", rt::kDefaultConfidence);
  if (!(c > 0 && c < 1)) throw bad_request("confidence must be in (0, 1)");
  return c;
}

std::uint64_t seed(const json& req) { return req.value("seed", rt::kDefaultSeed); }

std::size_t resamples(const json& req) {
  const std::size_t r = req.value("resamples", rt::kDefaultResamples);
  if (r < 1 || r > 1'000'000) throw bad_request("resamples must be in 1..1000000");
  return r;
}

json answer(const json& req) {
  if (!req.is_object()) throw bad_request("a request is an object");
  if (req.contains("median_ci")) {
    const rt::median_interval m = rt::median_ci(sample(req["median_ci"], "median_ci"), confidence(req));
    return {
        {"n", m.n},           {"median", number(m.median)}, {"min", number(m.min)},  {"max", number(m.max)},
        {"lo", number(m.lo)}, {"hi", number(m.hi)},         {"coverage", m.coverage}};
  }
  if (req.contains("compare_medians")) {
    const json& ab = req["compare_medians"];
    if (!ab.is_array() || ab.size() != 2) throw bad_request("compare_medians: [A, B], two samples");
    const rt::ratio_interval r =
        rt::compare_medians(sample(ab[0], "compare_medians A"), sample(ab[1], "compare_medians B"),
                            confidence(req), seed(req), resamples(req));
    return {{"ratio", number(r.ratio)},
            {"lo", number(r.lo)},
            {"hi", number(r.hi)},
            {"confidence", r.confidence},
            {"verdict", rt::to_string(r.verdict)}};
  }
  if (req.contains("geomean")) {
    const json& cells = req["geomean"];
    if (!cells.is_array()) throw bad_request("geomean: [[A1, B1], [A2, B2], ...]");
    std::vector<rt::paired_samples> pairs;
    for (const json& c : cells) {
      if (!c.is_array() || c.size() != 2) throw bad_request("geomean: each cell is [A, B]");
      pairs.push_back({sample(c[0], "geomean A"), sample(c[1], "geomean B")});
    }
    const rt::geomean_interval g = rt::geomean_ratio(pairs, confidence(req), seed(req), resamples(req));
    return {{"cells", g.cells},
            {"min_runs", g.min_runs},
            {"ratio", number(g.ratio)},
            {"lo", number(g.lo)},
            {"hi", number(g.hi)},
            {"confidence", g.confidence},
            {"verdict", rt::to_string(g.verdict)}};
  }
  if (req.contains("coverage")) {
    const json& nk = req["coverage"];
    if (!nk.is_array() || nk.size() != 2 || !nk[0].is_number_unsigned() || !nk[1].is_number_unsigned()) {
      throw bad_request("coverage: [n, k], two counts");
    }
    return {{"coverage", rt::order_interval_coverage(nk[0].get<std::size_t>(), nk[1].get<std::size_t>())}};
  }
  if (req.contains("rule")) {
    return {{"confidence", rt::kDefaultConfidence},
            {"seed", rt::kDefaultSeed},
            {"resamples", rt::kDefaultResamples},
            {"min_runs_for_verdict", rt::kMinRunsForVerdict},
            {"range_rule_below_runs", rt::kRangeRuleBelowRuns}};
  }
  throw bad_request("unknown request (median_ci, compare_medians, geomean, coverage or rule): " +
                    req.dump().substr(0, 80));
}

json answer_or_error(const json& req, bool& failed) {
  try {
    return answer(req);
  } catch (const bad_request& e) {
    failed = true;
    return {{"error", e.what()}};
  } catch (const json::exception& e) {  // a field of the wrong type
    failed = true;
    return {{"error", e.what()}};
  }
}

}  // namespace

int run_estimate(std::istream& in, std::ostream& out) {
  bool failed = false;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json doc = json::parse(line, nullptr, /*allow_exceptions=*/false);
    json reply;
    if (doc.is_discarded()) {
      failed = true;
      reply = {{"error", "not a JSON document on one line"}};
    } else if (doc.is_array()) {
      reply = json::array();
      for (const json& req : doc) reply.push_back(answer_or_error(req, failed));
    } else {
      reply = answer_or_error(doc, failed);
    }
    out << reply.dump() << '\n' << std::flush;
  }
  return failed ? 1 : 0;
}

}  // namespace spinwise::bench
