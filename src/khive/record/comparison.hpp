// One source of truth for "faster" and "slower" (issue 17): how an accepted candidate stood against the leader
// of its time, recorded once per candidate (run.db) and worded by these functions only, in the verdict lines,
// the summary, report.html, evaluate-pending's table, the board and the LLM agent's prompts.
//
// The leader is decided by check 11, an interleaved A/B in one process against the leader (docs/guard.md); a
// kernel's own-run median (its time_s, which scores come from) is measured alone and may disagree with the A/B
// on a loaded machine, so it is never compared with another kernel's to say which is faster.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/verdict/verdict.hpp"

namespace khive {

struct Comparison {
  std::string against;   // the leader's id at the time
  std::string basis;     // "ab": check 11's interleaved A/B; "medians": the two own-run medians (no A/B ran)
  double gain = 0;       // over `against` (+0.05: 5% faster)
  std::string decision;  // check 11's one-line reason ("faster beyond the noise on 2 of 3 workload(s), slower on none")
  std::vector<AbWorkload> workloads;  // per workload, when the evaluator gives them
  std::string detail;                 // the evaluator's own per-workload text when it gives no workloads
};

// The comparison of an accepted kernel with leader `against`: from check 11 when `ab_gain` is set (decision,
// per-workload results, or the evaluator's "A/B vs the leader: DECISION: DETAIL" message), else from the
// own-run medians. nullopt when there was no leader.
std::optional<Comparison> make_comparison(const std::string& against, const std::optional<double>& ab_gain,
                                          const std::string& ab_decision, const std::vector<AbWorkload>& ab,
                                          const std::string& message, double own_time_s, double leader_time_s);

// "A/B vs c0001: +3.5% overall; faster beyond the noise on no workload" (one line, for verdict lines and tables).
std::string comparison_brief(const Comparison& c);
// The brief line plus every workload: "...; per workload: M4096 faster +12.6% (noise ±9.7%, 14 pairs), ...".
std::string comparison_full(const Comparison& c);
// "+3.5% (A/B)" or "+3.5% (medians)": a table cell.
std::string comparison_cell(const Comparison& c);

nlohmann::json comparison_json(const Comparison& c);
// Throws std::runtime_error naming the field on a malformed record.
Comparison comparison_from_json(const nlohmann::json& j);

}  // namespace khive
