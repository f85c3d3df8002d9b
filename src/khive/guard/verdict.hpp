// The guard's decision for one candidate, from what the builder and the runner observed.
// Pure rules over observations: no model judges correctness or speed.
//
//   Verdict v = judge_run(runner_outcome);          // checks 2-9 from the runner's frames
//   apply_plausibility(v, t_sol_floor_per_workload);  // check 10
//   v.accepted, v.rejection->check / reason / message / diagnosis
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/guard/stats.hpp"
#include "khive/run/launcher.hpp"
#include "khive/run/protocol.hpp"

namespace khive {

struct Rejection {
  Check check = Check::run;
  std::string reason;     // machine-readable code (docs/eval-json.md lists them)
  std::string workload;   // uuid, when one is concerned
  std::string message;    // one sentence: what was seen
  std::string diagnosis;  // what a person or a model can act on (errors, pattern, compiler lines)
  nlohmann::json to_json() const;
};

struct WorkloadTiming {
  std::string workload;
  std::vector<double> samples;   // seconds
  SampleSummary summary;
  int validated = 0;             // timed calls whose outputs were compared with goldens
  double drain_median_s = 0;
};

struct Verdict {
  bool accepted = false;
  std::optional<Rejection> rejection;
  std::string harness_error;     // the harness (not the candidate) failed: no verdict
  nlohmann::json preflight;
  std::vector<WorkloadTiming> timings;
  int correctness_calls = 0;
  std::string log_excerpt;       // the runner's stdout/stderr tail, for people (never parsed for a verdict)
  double runner_seconds = 0;
  std::map<std::string, double> phases;   // the runner's time by phase ("kernel", "fill", "compare", ...)
  const WorkloadTiming* timing_for(const std::string& uuid) const;
};

Verdict reject(Check c, std::string reason, std::string message, std::string diagnosis = "", std::string workload = "");
Verdict judge_run(const RunnerOutcome& o);
// Check 10: a median time under floor_s[workload] is a measurement fault (nothing beats the datasheet peak).
void apply_plausibility(Verdict& v, const std::map<std::string, double>& floor_s);

}  // namespace khive
