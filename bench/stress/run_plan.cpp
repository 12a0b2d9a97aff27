#include "run_plan.hpp"

#include <sstream>

#include "spinwise/runtime/uncertainty.hpp"

namespace spinwise::stress {

std::vector<planned_run> plan_runs(const std::vector<setting>& settings, const run_order& order) {
  std::vector<planned_run> plan;
  std::vector<unsigned> done(settings.size(), 0);
  for (std::size_t s : runtime::interleaved_order(settings.size(), order.repeat, order.seed)) {
    planned_run p;
    p.setting = s;
    p.repeat = done[s]++;
    p.config = settings[s].config;
    p.config.seed = settings[s].config.seed + p.repeat;
    plan.push_back(std::move(p));
  }
  return plan;
}

std::string order_name(const run_order& order) {
  return order.seed == 0 ? "round-robin"
                         : "shuffled per round (--order-seed " + std::to_string(order.seed) + ")";
}

namespace {

std::string label_of(const std::vector<setting>& settings, std::size_t i) {
  return settings[i].label.empty() ? "#" + std::to_string(i) : settings[i].label;
}

}  // namespace

std::string order_text(const std::vector<planned_run>& plan, const std::vector<setting>& settings) {
  std::string s;
  for (const planned_run& p : plan) s += (s.empty() ? "" : " ") + label_of(settings, p.setting);
  return s;
}

std::string plan_text(const std::vector<planned_run>& plan, const std::vector<setting>& settings,
                      const run_order& order) {
  std::ostringstream o;
  o << settings.size() << (settings.size() == 1 ? " setting" : " settings") << " x " << order.repeat
    << (order.repeat == 1 ? " run" : " runs") << " = " << plan.size()
    << (plan.size() == 1 ? " run, " : " runs, ") << order_name(order) << "\n";
  for (std::size_t i = 0; i < settings.size(); ++i) {
    o << "  " << label_of(settings, i) << ": "
      << (settings[i].args.empty() ? "(the base flags)" : settings[i].args) << "\n";
  }
  o << "order: " << order_text(plan, settings) << "\n";
  for (std::size_t k = 0; k < plan.size(); ++k) {
    o << "  run " << k + 1 << ": " << label_of(settings, plan[k].setting) << " repeat " << plan[k].repeat
      << " seed " << plan[k].config.seed << "\n";
  }
  return o.str();
}

nlohmann::json order_json(const std::vector<planned_run>& plan, const run_order& order) {
  nlohmann::json seq = nlohmann::json::array();
  for (const planned_run& p : plan) seq.push_back(p.setting);
  return {{"interleaving", order.seed == 0 ? "round-robin" : "shuffled"},
          {"seed", order.seed},
          {"repeat", order.repeat},
          {"settings", seq}};
}

std::vector<run_result> run_planned(const std::vector<planned_run>& plan, const run_fn& run,
                                    const std::function<void(const run_result&)>& done) {
  std::vector<run_result> runs;
  runs.reserve(plan.size());
  for (const planned_run& p : plan) {
    run_result r = run(p.config);
    r.setting = p.setting;
    r.repeat = p.repeat;
    if (done) done(r);
    runs.push_back(std::move(r));
  }
  return runs;
}

std::vector<std::vector<run_result>> runs_by_setting(const std::vector<run_result>& runs,
                                                     std::size_t settings) {
  std::vector<std::vector<run_result>> by(settings);
  for (const run_result& r : runs) {
    if (r.setting < settings) by[r.setting].push_back(r);
  }
  return by;
}

}  // namespace spinwise::stress
