#include "session.hpp"

#include <algorithm>

#include "report.hpp"
#include "spinwise/runtime/uncertainty.hpp"
#include "sweep.hpp"

namespace spinwise::stress {

session plan_session(const cli_options& o) {
  session s;
  if (o.sweep) {
    s.kind = session_kind::sweep;
    s.settings = sweep_settings(o.workload, o.sweep_opts);
  } else if (!o.compare.empty()) {
    s.kind = session_kind::compare;
    s.settings = o.compare;
  } else {
    s.settings = {setting{"", "", o.workload}};
  }
  s.order = {std::max(1u, o.repeat), o.order_seed};
  s.plan = plan_runs(s.settings, s.order);
  return s;
}

namespace {

std::size_t label_width(const session& s) {
  std::size_t w = 0;
  for (const setting& st : s.settings) w = std::max(w, st.label.size());
  return w;
}

// A table row, prefixed by the setting's label where settings are lettered (--compare).
std::string row_of(const session& s, const run_result& r) {
  if (s.kind != session_kind::compare) return table_row(r);
  const std::string& label = s.settings[r.setting].label;
  return label + std::string(label_width(s) - label.size() + 1, ' ') + table_row(r);
}

void print_header(const session& s, std::ostream& human) {
  switch (s.kind) {
    case session_kind::compare:
      human << "compare: " << s.settings.size() << " settings x " << s.order.repeat << " runs, interleaved "
            << order_name(s.order) << ": " << order_text(s.plan, s.settings) << "\n";
      for (const setting& st : s.settings) {
        human << "  " << st.label << ": " << (st.args.empty() ? "(the base flags)" : st.args) << "\n";
      }
      human << std::string(label_width(s) + 1, ' ') << table_header() << "\n";
      break;
    case session_kind::sweep:
      human << table_header() << "\n";
      break;
    case session_kind::single:
      if (s.plan.size() > 1) {
        human << s.order.repeat << " runs, seeds " << s.plan.front().config.seed << ".."
              << s.plan.back().config.seed << "\n"
              << table_header() << "\n";
      }
      break;
  }
  human << std::flush;
}

void print_summaries(const session& s, std::ostream& human) {
  switch (s.kind) {
    case session_kind::single:
      if (s.plan.size() > 1) human << "\n" << format_summary(s.summaries[0], "summary:");
      break;
    case session_kind::sweep:
      if (s.order.repeat > 1) {
        human << "\nmedians over " << s.order.repeat
              << " runs per point [95% interval of the median; min..max below 6 runs]:\n"
              << format_summary_table(s.settings, s.summaries,
                                      {"requests_per_s", "request_rt_p99_us", "spin_cpu_share"});
      }
      break;
    case session_kind::compare: {
      for (std::size_t i = 0; i < s.settings.size(); ++i) {
        const setting& st = s.settings[i];
        human << "\n"
              << format_summary(s.summaries[i],
                                st.label + ": " + (st.args.empty() ? "(the base flags)" : st.args));
      }
      human << "\nratios against " << s.settings[0].label
            << " (ratio of medians, 95% bootstrap interval; beyond noise when it excludes 1 and, below "
            << "6 runs a side, the ranges do not overlap; no verdict below " << runtime::kMinRunsForVerdict
            << " runs a side):\n";
      for (const setting_ratio& sr : s.ratios) {
        for (const metric_ratio& m : sr.metrics) {
          human << "  " << ratio_line(m, s.settings[sr.other].label, s.settings[sr.baseline].label) << "\n";
        }
      }
      break;
    }
  }
  human << std::flush;
}

}  // namespace

void run_session(session& s, const cli_options& o, const run_fn& run, std::ostream& human) {
  print_header(s, human);
  const bool alone = s.plan.size() == 1 && s.kind == session_kind::single;
  s.runs = run_planned(s.plan, run, [&](const run_result& r) {
    if (alone) {
      if (!o.quiet) human << format_run(r);
    } else {
      human << row_of(s, r) << "\n" << std::flush;
    }
  });
  const std::vector<std::vector<run_result>> by = runs_by_setting(s.runs, s.settings.size());
  s.summaries.clear();
  for (const std::vector<run_result>& g : by) s.summaries.push_back(summarize_runs(g));
  if (s.kind == session_kind::compare) s.ratios = compare_settings(by);
  print_summaries(s, human);
}

nlohmann::json session_document(const session& s, const nlohmann::json& extra) {
  nlohmann::json doc = make_document(s.runs, extra);
  doc["settings"] = settings_json(s.settings, s.summaries);
  doc["order"] = order_json(s.plan, s.order);
  if (s.kind == session_kind::compare) doc["compare"] = compare_json(s.ratios, s.settings);
  return doc;
}

std::string session_csv(const session& s) { return csv_document(s.runs, s.summaries); }

}  // namespace spinwise::stress
