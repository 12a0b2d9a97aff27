// The Prometheus exposition of the wait statistics (format_stats_prometheus): it parses under the
// text format's grammar (version 0.0.4; the parser below is written from the format's
// description, and is itself tested on broken input), its names, types and labels are what the
// header says, and its numbers are the JSON report's.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "spinwise/lock_stats.hpp"
#include "spinwise/runtime/stats_report.hpp"

namespace sw = spinwise;

namespace {

struct live_class {
  static constexpr std::string_view name = "test.prometheus_live";
};

struct sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct family {
  std::string type, help;
  std::vector<sample> samples;
};

struct exposition {
  std::map<std::string, family> families;
  std::string error;  // empty when it parsed
};

bool metric_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_' || s[0] == ':'))
    return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':')) return false;
  }
  return true;
}

bool label_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

bool parse_value(const std::string& s, double& v) {
  if (s == "+Inf" || s == "Inf") {
    v = INFINITY;
    return true;
  }
  if (s == "-Inf") {
    v = -INFINITY;
    return true;
  }
  if (s == "NaN") {
    v = NAN;
    return true;
  }
  if (s.empty()) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(v);
}

// The family a sample belongs to: itself, or a histogram's name without _bucket/_sum/_count.
std::string family_of(const std::string& name, const std::map<std::string, family>& fams) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      const std::string base = name.substr(0, name.size() - s.size());
      auto it = fams.find(base);
      if (it != fams.end() && it->second.type == "histogram") return base;
    }
  }
  return name;
}

// Every line a # HELP, a # TYPE, or a sample `name{label="value",...} value`; a family's TYPE
// once and before its samples, its lines together; label values with only \\, \" and \n escapes.
exposition parse(const std::string& text) {
  exposition e;
  std::set<std::string> closed;  // families whose lines have ended
  std::string current;
  std::size_t pos = 0;
  int line_no = 0;
  const auto fail = [&](const std::string& why) {
    e.error = "line " + std::to_string(line_no) + ": " + why;
    return e;
  };
  const auto enter = [&](const std::string& fam) {
    if (fam == current) return true;
    if (closed.count(fam)) return false;
    if (!current.empty()) closed.insert(current);
    current = fam;
    return true;
  };
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) return fail("the last line does not end with a newline");
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (line.empty()) continue;
    if (line[0] == '#') {
      const bool help = line.rfind("# HELP ", 0) == 0, type = line.rfind("# TYPE ", 0) == 0;
      if (!help && !type) continue;  // a comment
      const std::size_t sp = line.find(' ', 7);
      const std::string name = line.substr(7, sp == std::string::npos ? std::string::npos : sp - 7);
      const std::string rest = sp == std::string::npos ? "" : line.substr(sp + 1);
      if (!metric_name(name)) return fail("bad metric name '" + name + "'");
      if (!enter(name)) return fail(name + ": its lines are not together");
      family& f = e.families[name];
      if (type) {
        if (!f.type.empty()) return fail(name + ": a second TYPE");
        if (!f.samples.empty()) return fail(name + ": TYPE after samples");
        if (rest != "counter" && rest != "gauge" && rest != "histogram" && rest != "summary" &&
            rest != "untyped")
          return fail(name + ": unknown type '" + rest + "'");
        f.type = rest;
      } else {
        if (!f.help.empty()) return fail(name + ": a second HELP");
        for (std::size_t i = 0; i < rest.size(); ++i) {
          if (rest[i] == '\\' && (i + 1 >= rest.size() || (rest[i + 1] != '\\' && rest[i + 1] != 'n')))
            return fail(name + ": a bad escape in HELP");
          if (rest[i] == '\\') ++i;
        }
        f.help = rest.empty() ? " " : rest;
      }
      continue;
    }
    sample s;
    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = line.substr(0, i);
    if (!metric_name(s.name)) return fail("bad metric name '" + s.name + "'");
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        const std::size_t eq = line.find('=', i);
        if (eq == std::string::npos) return fail("a label without '='");
        const std::string key = line.substr(i, eq - i);
        if (!label_name(key)) return fail("bad label name '" + key + "'");
        if (eq + 1 >= line.size() || line[eq + 1] != '"') return fail("label value not quoted");
        std::string value;
        std::size_t j = eq + 2;
        for (; j < line.size() && line[j] != '"'; ++j) {
          if (line[j] == '\\') {
            if (j + 1 >= line.size()) return fail("a label value ends in a backslash");
            const char c = line[++j];
            if (c == 'n') {
              value += '\n';
            } else if (c == '\\' || c == '"') {
              value += c;
            } else {
              return fail(std::string("a bad escape \\") + c);
            }
          } else {
            value += line[j];
          }
        }
        if (j >= line.size()) return fail("an unterminated label value");
        if (s.labels.count(key)) return fail("label " + key + " twice");
        s.labels[key] = value;
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) return fail("labels not closed");
      ++i;
    }
    if (i >= line.size() || line[i] != ' ') return fail("no value");
    std::string value = line.substr(i + 1);
    const std::size_t ts = value.find(' ');
    if (ts != std::string::npos) value = value.substr(0, ts);  // a timestamp may follow
    if (!parse_value(value, s.value)) return fail("bad value '" + value + "'");
    const std::string fam = family_of(s.name, e.families);
    if (!enter(fam)) return fail(fam + ": its lines are not together");
    family& f = e.families[fam];
    if (f.type.empty()) return fail(fam + ": a sample before its TYPE");
    f.samples.push_back(std::move(s));
  }
  // Histograms: per label set, cumulative buckets ending at +Inf, which equals _count.
  for (const auto& [name, f] : e.families) {
    if (f.type != "histogram") continue;
    std::map<std::string, std::vector<std::pair<double, double>>> buckets;
    std::map<std::string, double> counts;
    for (const sample& s : f.samples) {
      std::map<std::string, std::string> rest = s.labels;
      rest.erase("le");
      const std::string key = nlohmann::json(rest).dump();
      if (s.name == name + "_bucket") {
        double le = 0;
        if (!s.labels.count("le") || !parse_value(s.labels.at("le"), le)) {
          e.error = name + ": a bucket without a numeric le";
          return e;
        }
        buckets[key].push_back({le, s.value});
      } else if (s.name == name + "_count") {
        counts[key] = s.value;
      }
    }
    for (const auto& [key, bs] : buckets) {
      for (std::size_t k = 1; k < bs.size(); ++k) {
        if (!(bs[k].first > bs[k - 1].first) || bs[k].second < bs[k - 1].second) {
          e.error = name + key + ": buckets not increasing or not cumulative";
          return e;
        }
      }
      if (bs.empty() || !std::isinf(bs.back().first) || !counts.count(key) ||
          counts[key] != bs.back().second) {
        e.error = name + key + ": no +Inf bucket equal to _count";
        return e;
      }
    }
  }
  return e;
}

// The sample of `name` for class `cls` (and mode `mode`; "" for a family without a mode label).
double value_of(const exposition& e, const std::string& fam, const std::string& name, const std::string& cls,
                const std::string& mode = "") {
  const auto it = e.families.find(fam);
  if (it == e.families.end()) {
    ADD_FAILURE() << "no family " << fam;
    return NAN;
  }
  for (const sample& s : it->second.samples) {
    if (s.name != name || !s.labels.count("class") || s.labels.at("class") != cls || s.labels.count("le"))
      continue;
    if (mode.empty() ? s.labels.count("mode") != 0 : (!s.labels.count("mode") || s.labels.at("mode") != mode))
      continue;
    return s.value;
  }
  ADD_FAILURE() << "no sample " << name << " for class " << cls << " mode '" << mode << "'";
  return NAN;
}

// How many samples of `name` carry class `cls` (one per reported mode for a counter).
std::size_t samples_of(const exposition& e, const std::string& fam, const std::string& name,
                       const std::string& cls) {
  std::size_t n = 0;
  const auto it = e.families.find(fam);
  if (it == e.families.end()) return 0;
  for (const sample& s : it->second.samples)
    n += s.name == name && s.labels.count("class") && s.labels.at("class") == cls;
  return n;
}

// The (le, cumulative count) buckets of class `cls`'s wait histogram, in the exposition's order.
std::vector<std::pair<std::string, double>> buckets_of(const exposition& e, const std::string& cls) {
  std::vector<std::pair<std::string, double>> out;
  for (const sample& b : e.families.at("spinwise_lock_wait_seconds").samples) {
    if (b.name == "spinwise_lock_wait_seconds_bucket" && b.labels.at("class") == cls)
      out.emplace_back(b.labels.at("le"), b.value);
  }
  return out;
}

// A snapshot whose every figure is known, the counter at 1 GHz (a tick is a ns).
sw::stats_snapshot scripted() {
  sw::stats_snapshot s;
  s.wall_seconds = 2.5;
  s.process_cpu_seconds = 0.5;
  s.counter_hz = 1'000'000'000;
  sw::lock_class_stats quiet;
  quiet.name = "test.quiet";
  quiet.totals.acquisitions = 10;
  quiet.totals.modes[0].acquisitions = 10;
  sw::lock_class_stats busy;
  busy.name = "buf_pool \"page\" \\ latch\nsecond line";  // every character the format escapes
  sw::lock_stats_totals& t = busy.totals;
  // A shared latch: X and S acquisitions, the waits split between them; the class is their sum.
  sw::lock_stats_counts& x = t.modes[static_cast<std::size_t>(sw::lock_mode::x)];
  sw::lock_stats_counts& sh = t.modes[static_cast<std::size_t>(sw::lock_mode::s)];
  x.acquisitions = 50;
  sh.acquisitions = 150;
  x.contended = 5;
  sh.contended = 3;
  x.spin_won = 4;
  sh.spin_won = 2;
  x.rounds = 30;
  sh.rounds = 10;
  x.relaxes = 1000;
  sh.relaxes = 200;
  x.spin_ticks = 40'000'000;
  sh.spin_ticks = 10'000'000;
  x.yields = 3;
  x.parks = 1;
  sh.parks = 1;
  x.wait_ticks = 60'000;
  sh.wait_ticks = 20'000;
  for (const sw::lock_stats_counter& k : sw::kLockStatsCounters) t.*k.total = x.*k.total + sh.*k.total;
  t.max_wait_ticks = 30'000;
  t.histogram[13] = 6;
  t.histogram[14] = 2;
  s.classes = {quiet, busy};
  return s;
}

}  // namespace

TEST(PrometheusExposition, ParsesAndEqualsTheJson) {
  const sw::stats_snapshot s = scripted();
  const std::string text = sw::format_stats_prometheus(s);
  const exposition e = parse(text);
  ASSERT_TRUE(e.error.empty()) << e.error << "\n" << text;
  const nlohmann::json j = nlohmann::json::parse(sw::format_stats_json(s));
  ASSERT_EQ(j.at("classes").size(), 2u);
  for (const nlohmann::json& c : j.at("classes")) {
    const std::string cls = c.at("name");
    for (const sw::lock_stats_counter& k : sw::kLockStatsCounters) {
      const std::string key(k.key);
      if (key == "wait_ticks") {  // the histogram's _sum, in seconds
        EXPECT_DOUBLE_EQ(value_of(e, "spinwise_lock_wait_seconds", "spinwise_lock_wait_seconds_sum", cls),
                         c.at(key).get<double>() / 1e9);
        continue;
      }
      const std::string name =
          key == "spin_ticks" ? "spinwise_lock_spin_seconds_total" : "spinwise_lock_" + key + "_total";
      ASSERT_EQ(e.families.count(name), 1u) << name;
      EXPECT_EQ(e.families.at(name).type, "counter") << name;
      EXPECT_FALSE(e.families.at(name).help.empty()) << name;
      // One sample per mode the JSON lists, each equal to that mode's count.
      EXPECT_EQ(samples_of(e, name, name, cls), c.at("modes").size()) << name << " " << cls;
      double sum = 0;
      for (const auto& [mode, counts] : c.at("modes").items()) {
        const double v = value_of(e, name, name, cls, mode);
        const double want =
            key == "spin_ticks" ? counts.at(key).get<double>() / 1e9 : counts.at(key).get<double>();
        EXPECT_DOUBLE_EQ(v, want) << name << " " << cls << " " << mode;
        sum += v;
      }
      // and summed by class, the class's count.
      EXPECT_DOUBLE_EQ(sum, key == "spin_ticks" ? c.at(key).get<double>() / 1e9 : c.at(key).get<double>())
          << name;
    }
    EXPECT_DOUBLE_EQ(value_of(e, "spinwise_lock_max_wait_seconds", "spinwise_lock_max_wait_seconds", cls),
                     c.at("max_wait_ticks").get<double>() / 1e9);
    EXPECT_DOUBLE_EQ(value_of(e, "spinwise_lock_spin_efficiency", "spinwise_lock_spin_efficiency", cls),
                     c.at("spin_efficiency").get<double>());
    // _count: every wait of the histogram.
    double count = 0;
    for (const nlohmann::json& h : c.at("wait_histogram_log2_ticks")) count += h.get<double>();
    EXPECT_EQ(value_of(e, "spinwise_lock_wait_seconds", "spinwise_lock_wait_seconds_count", cls), count);
  }
  EXPECT_DOUBLE_EQ(
      value_of(e, "spinwise_lock_spin_efficiency", "spinwise_lock_spin_efficiency", s.classes[1].name), 0.75);
  // The busy latch lists x and s (sx never counted anything); the quiet mutex x only.
  EXPECT_EQ(j.at("classes")[1].at("modes").size(), 2u);
  EXPECT_EQ(j.at("classes")[1].at("modes").at("s").at("acquisitions"), 150);
  EXPECT_EQ(j.at("classes")[0].at("modes").size(), 1u);
  EXPECT_EQ(value_of(e, "spinwise_lock_acquisitions_total", "spinwise_lock_acquisitions_total",
                     s.classes[1].name, "s"),
            150);
  EXPECT_EQ(e.families.at("spinwise_lock_wait_seconds").type, "histogram");
  // The busy class's buckets: 6 waits of up to 16383 ns (counted at le 25 us), 8 up to 32767 ns
  // (at 50 us), 8 in all.
  const std::vector<std::pair<std::string, double>> busy_buckets = buckets_of(e, s.classes[1].name);
  ASSERT_EQ(busy_buckets.size(), std::size(sw::kPrometheusWaitBoundsNs) + 1) << "every bound and +Inf";
  EXPECT_EQ(busy_buckets[6].first, "1e-05");
  EXPECT_EQ(busy_buckets[6].second, 0);
  EXPECT_EQ(busy_buckets[7].first, "2.5e-05");
  EXPECT_EQ(busy_buckets[7].second, 6);
  EXPECT_EQ(busy_buckets[8].first, "5e-05");
  EXPECT_EQ(busy_buckets[8].second, 8);
  EXPECT_EQ(busy_buckets[busy_buckets.size() - 2].first, "10.0");
  EXPECT_EQ(busy_buckets[busy_buckets.size() - 2].second, 8);
  EXPECT_EQ(busy_buckets.back().first, "+Inf");
  EXPECT_EQ(busy_buckets.back().second, 8);
  // The class name came back through the escapes unchanged.
  EXPECT_NE(text.find("class=\"buf_pool \\\"page\\\" \\\\ latch\\nsecond line\""), std::string::npos) << text;
}

TEST(PrometheusExposition, ParserRejectsWhatTheFormatForbids) {
  const std::string ok = "# HELP a_total x\n# TYPE a_total counter\na_total{class=\"c\"} 1\n";
  ASSERT_TRUE(parse(ok).error.empty()) << parse(ok).error;
  const char* broken[] = {
      "a_total{class=\"c\"} 1\n",                                                        // no TYPE first
      "# TYPE a_total counter\n# TYPE a_total counter\na_total 1\n",                     // TYPE twice
      "# TYPE a_total counter\na_total{class=\"c\"\"} 1\n",                              // unescaped quote
      "# TYPE a_total counter\na_total{class=\"c\\t\"} 1\n",                             // bad escape
      "# TYPE a_total counter\na_total{class=\"c\"} one\n",                              // bad value
      "# TYPE a_total counter\na_total{1class=\"c\"} 1\n",                               // bad label name
      "# TYPE a_total counter\na_total 1",                                               // no final newline
      "# TYPE a counter\na 1\n# TYPE b counter\nb 1\na 2\n",                             // a family split
      "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n",  // not cumulative
      "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_count 1\n",                           // no +Inf bucket
  };
  for (const char* b : broken) EXPECT_FALSE(parse(b).error.empty()) << "accepted:\n" << b;
}

TEST(PrometheusExposition, LiveClassesParse) {
  using S = sw::class_stats<live_class>;
  for (int i = 0; i < 5; ++i) S::on_acquire(nullptr, spinwise::lock_mode::x);
  for (int i = 0; i < 4; ++i) {
    sw::wait_record w;
    w.rounds = 2;
    w.parks = i == 0 ? 1 : 0;
    w.wait_ticks = 1000;
    S::on_contended(w, spinwise::lock_mode::x);
  }
  const sw::stats_snapshot s = sw::take_stats_snapshot();
  const exposition e = parse(sw::format_stats_prometheus(s));
  ASSERT_TRUE(e.error.empty()) << e.error;
  const std::string cls(live_class::name);
  EXPECT_EQ(value_of(e, "spinwise_lock_acquisitions_total", "spinwise_lock_acquisitions_total", cls, "x"),
            5.0);
  EXPECT_EQ(value_of(e, "spinwise_lock_contended_total", "spinwise_lock_contended_total", cls, "x"), 4.0);
  EXPECT_EQ(value_of(e, "spinwise_lock_spin_won_total", "spinwise_lock_spin_won_total", cls, "x"), 3.0);
  EXPECT_DOUBLE_EQ(value_of(e, "spinwise_lock_spin_efficiency", "spinwise_lock_spin_efficiency", cls), 0.75);
  ASSERT_EQ(e.families.count("spinwise_process_cpu_seconds"), 1u);
}

namespace {

// One class whose log2 bucket b holds b + 1 waits (every bucket, the unbounded last one included),
// at the counter rate `hz`.
sw::stats_snapshot every_bucket(std::uint64_t hz) {
  sw::stats_snapshot s;
  s.counter_hz = hz;
  sw::lock_class_stats c;
  c.name = "test.buckets";
  for (std::size_t b = 0; b < sw::kWaitHistogramBuckets; ++b) c.totals.histogram[b] = b + 1;
  s.classes = {c};
  return s;
}

}  // namespace

// Bug guarded: the bounds were the log2 tick buckets' upper edges over the host's counter rate
// (le="4.770921715343931e-10" at 2.1 GHz): other on every host, so a fleet's histograms could not
// be summed, and the first bucket was half a nanosecond. Now: the same fixed list in seconds at any
// rate, from 100 ns, cumulative, ending at +Inf with every wait.
TEST(PrometheusExposition, WaitBucketBoundsAreFixedWhateverTheCounterRate) {
  const std::uint64_t total = sw::kWaitHistogramBuckets * (sw::kWaitHistogramBuckets + 1) / 2;
  std::vector<std::string> first_les;
  for (const std::uint64_t hz : {std::uint64_t{2'400'000'000}, std::uint64_t{24'000'000},
                                 std::uint64_t{1'000'000'000}, std::uint64_t{3'000'000'007}}) {
    const std::string text = sw::format_stats_prometheus(every_bucket(hz));
    const exposition e = parse(text);  // also checks: cumulative, +Inf equal to _count
    ASSERT_TRUE(e.error.empty()) << e.error << "\n" << text;
    const std::vector<std::pair<std::string, double>> b = buckets_of(e, "test.buckets");
    ASSERT_EQ(b.size(), std::size(sw::kPrometheusWaitBoundsNs) + 1) << hz;
    std::vector<std::string> les;
    for (std::size_t k = 0; k + 1 < b.size(); ++k) {
      les.push_back(b[k].first);
      EXPECT_EQ(std::strtod(b[k].first.c_str(), nullptr),
                static_cast<double>(sw::kPrometheusWaitBoundsNs[k]) / 1e9);
      if (k > 0) {
        EXPECT_GE(b[k].second, b[k - 1].second) << "not cumulative at " << b[k].first;
      }
    }
    EXPECT_GE(std::strtod(b.front().first.c_str(), nullptr), 100e-9) << "a first bucket below 100 ns";
    EXPECT_EQ(b.back().first, "+Inf");
    EXPECT_EQ(b.back().second, static_cast<double>(total)) << hz;
    EXPECT_EQ(value_of(e, "spinwise_lock_wait_seconds", "spinwise_lock_wait_seconds_count", "test.buckets"),
              static_cast<double>(total));
    if (first_les.empty()) first_les = les;
    EXPECT_EQ(les, first_les) << "bounds differ at " << hz << " Hz";
  }
}

// Bug guarded: a log2 tick bucket that straddles a fixed bound counted below it (a count at le
// that includes waits longer than le), or later than the first bound it fits under. Each bucket
// is counted whole at the first bound at or above its longest wait, 2^(b+1) - 1 ticks; the last
// bucket, unbounded, at +Inf only.
TEST(PrometheusExposition, EachTickBucketCountsAtTheFirstBoundItFitsUnder) {
  constexpr std::size_t kBounds = std::size(sw::kPrometheusWaitBoundsNs);
  for (const std::uint64_t hz : {std::uint64_t{2'400'000'000}, std::uint64_t{24'000'000},
                                 std::uint64_t{1'000'000'000}, std::uint64_t{19'200'000}}) {
    for (std::size_t b = 0; b < sw::kWaitHistogramBuckets; ++b) {
      sw::lock_stats_totals t;
      t.histogram[b] = 7;
      const auto cum = sw::prometheus_wait_buckets(t, hz);
      std::size_t first = 0;  // where the bucket is counted; kBounds: +Inf only
      while (first < kBounds && cum[first] == 0) ++first;
      for (std::size_t k = first; k < kBounds; ++k)
        EXPECT_EQ(cum[k], 7u) << "bucket " << b << " at " << hz << " Hz, bound " << k;
      if (b + 1 == sw::kWaitHistogramBuckets) {
        EXPECT_EQ(first, kBounds) << "the unbounded last bucket is counted at +Inf only";
        continue;
      }
      // No tie at these rates: (2^(b+1) - 1) * 1e9 is never a bound times hz, so doubles decide.
      const double longest_ns =
          static_cast<double>((std::uint64_t{2} << b) - 1) * 1e9 / static_cast<double>(hz);
      if (first < kBounds) {
        EXPECT_LE(longest_ns, static_cast<double>(sw::kPrometheusWaitBoundsNs[first]))
            << "bucket " << b << " at " << hz << " Hz counted below its longest wait";
      }
      if (first > 0) {
        EXPECT_GT(longest_ns, static_cast<double>(sw::kPrometheusWaitBoundsNs[first - 1]))
            << "bucket " << b << " at " << hz << " Hz counted later than the first bound it fits";
      }
    }
  }
  // At the edges, exactly: at 10 MHz a tick is 100 ns, so bucket 0 (0 or 1 tick) fits le 100 ns; a
  // hair slower, it does not (250 ns); a hair faster, it does. Bucket 1 (up to 3 ticks, 300 ns) at 500 ns.
  sw::lock_stats_totals t;
  t.histogram[0] = 1;
  t.histogram[1] = 10;
  EXPECT_EQ(sw::prometheus_wait_buckets(t, 10'000'000)[0], 1u);
  EXPECT_EQ(sw::prometheus_wait_buckets(t, 10'000'001)[0], 1u);
  EXPECT_EQ(sw::prometheus_wait_buckets(t, 9'999'999)[0], 0u);
  EXPECT_EQ(sw::prometheus_wait_buckets(t, 9'999'999)[1], 1u);
  EXPECT_EQ(sw::prometheus_wait_buckets(t, 10'000'000)[1], 1u);
  EXPECT_EQ(sw::prometheus_wait_buckets(t, 10'000'000)[2], 11u);
  // An unknown rate claims no bound: +Inf only.
  for (std::uint64_t c : sw::prometheus_wait_buckets(t, 0)) EXPECT_EQ(c, 0u);
}
