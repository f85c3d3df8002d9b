#include "khive/record/comparison.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace khive {
namespace {

std::string pct(double g) { return fmt::format("{:+.1f}%", g * 100); }

// The evaluator's message "A/B vs the leader: DECISION: DETAIL" split in two (older evaluators give only this).
void split_message(const std::string& message, std::string& decision, std::string& detail) {
  static const std::string head = "A/B vs the leader: ";
  if (message.rfind(head, 0) != 0) return;
  std::string rest = message.substr(head.size());
  const auto colon = rest.find(": ");
  if (colon == std::string::npos) {
    detail = rest;
    return;
  }
  decision = rest.substr(0, colon);
  detail = rest.substr(colon + 2);
}

std::string workload_text(const AbWorkload& w) {
  return fmt::format("{} {} {} ({}{} pair{})", w.workload, w.call.empty() ? "measured" : w.call, pct(w.gain),
                     w.evidence.empty() ? "" : w.evidence + ", ", w.pairs, w.pairs == 1 ? "" : "s");
}

}  // namespace

std::optional<Comparison> make_comparison(const std::string& against, const std::optional<double>& ab_gain,
                                          const std::string& ab_decision, const std::vector<AbWorkload>& ab,
                                          const std::string& message, double own_time_s, double leader_time_s) {
  if (against.empty()) return std::nullopt;
  Comparison c;
  c.against = against;
  if (ab_gain) {
    c.basis = "ab";
    c.gain = *ab_gain;
    c.decision = ab_decision;
    c.workloads = ab;
    std::string decision, detail;
    split_message(message, decision, detail);
    if (c.decision.empty()) c.decision = decision;
    if (c.workloads.empty()) c.detail = detail;
    return c;
  }
  c.basis = "medians";
  c.gain = own_time_s > 0 && leader_time_s > 0 ? leader_time_s / own_time_s - 1 : 0;
  c.decision = "no A/B was run: the own-run medians";
  return c;
}

std::string comparison_brief(const Comparison& c) {
  std::string s = fmt::format("{} vs {}: {}{}", c.basis == "ab" ? "A/B" : "own-run medians", c.against, pct(c.gain),
                              c.basis == "ab" ? " overall" : "");
  if (!c.decision.empty() && c.basis == "ab") s += "; " + c.decision;
  return s;
}

std::string comparison_full(const Comparison& c) {
  std::string s = comparison_brief(c);
  if (!c.workloads.empty()) {
    s += "; per workload: ";
    for (std::size_t i = 0; i < c.workloads.size(); ++i) s += (i ? ", " : "") + workload_text(c.workloads[i]);
  } else if (!c.detail.empty()) {
    s += "; per workload: " + c.detail;
  } else if (c.basis != "ab") {
    s += " (" + c.decision + ")";
  }
  return s;
}

std::string comparison_cell(const Comparison& c) {
  return fmt::format("{} ({})", pct(c.gain), c.basis == "ab" ? "A/B" : "medians");
}

nlohmann::json comparison_json(const Comparison& c) {
  nlohmann::json w = nlohmann::json::array();
  for (const auto& x : c.workloads)
    w.push_back(
        {{"workload", x.workload}, {"gain", x.gain}, {"pairs", x.pairs}, {"call", x.call}, {"evidence", x.evidence}});
  return {{"against", c.against},   {"basis", c.basis}, {"gain", c.gain},
          {"decision", c.decision}, {"workloads", w},   {"detail", c.detail}};
}

Comparison comparison_from_json(const nlohmann::json& j) {
  try {
    Comparison c;
    c.against = j.at("against").get<std::string>();
    c.basis = j.at("basis").get<std::string>();
    c.gain = j.at("gain").get<double>();
    c.decision = j.value("decision", "");
    c.detail = j.value("detail", "");
    for (const auto& x : j.value("workloads", nlohmann::json::array()))
      c.workloads.push_back({x.at("workload").get<std::string>(), x.at("gain").get<double>(),
                             x.at("pairs").get<std::size_t>(), x.value("call", ""), x.value("evidence", "")});
    return c;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("comparison record: ") + e.what());
  }
}

}  // namespace khive
