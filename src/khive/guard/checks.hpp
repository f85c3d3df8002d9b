// The guard's vocabulary: the ordered checks (docs/guard.md), the reasons a check fails, and the
// verdict on one kernel. Everything that decides a verdict speaks these types; strings exist only at the
// edges (JSON, tables), through check_name / reason_name / parse_reason.
//
//   Verdict v = reject(Check::timed_outputs, Reason::timed_output_wrong, "workload w3 (timed call 7): ...");
//   v.rejection->check == Check::timed_outputs;  reason_name(v.rejection->reason) == "timed_output_wrong"
//
// Harness failures are not verdicts: Verdict::harness_error is set instead, and the kernel is neither
// accepted nor rejected (khive eval exits 2; the hive retries once).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/guard/stats.hpp"

namespace khive {

// Guard checks, in the order docs/guard.md gives them.
enum class Check : int {
  preflight = 0,
  build = 1,
  run = 2,
  inputs = 3,
  written = 4,
  correctness = 5,
  determinism = 6,
  anti_caching = 7,
  timing = 8,
  timed_outputs = 9,
  plausibility = 10,
  acceptance = 11,
};
const char* check_name(Check c);  // "preflight", "build", ..., "anti-caching", "timed outputs"

// Why a check failed. The names (reason_name) are the stable codes of docs/eval-json.md.
enum class Reason {
  // check 1
  build_error,
  build_timeout,
  forbidden_symbol,
  // check 2: how the executor ended or misbehaved
  load_error,
  crash,
  abort,
  timeout,
  cuda_error,
  sandbox_violation,
  protocol_violation,
  channel_tampered,
  // checks 3-7
  input_mutated,
  unwritten_output,
  wrong_output,
  nonfinite_output,
  all_zero_output,
  nondeterministic,
  caching,
  // check 8: the judge's clock
  timing_disagrees,
  work_after_return,
  // check 9
  timed_output_wrong,
  // check 10
  faster_than_sol,
};
const char* reason_name(Reason r);
std::optional<Reason> parse_reason(std::string_view name);

struct Rejection {
  Check check = Check::run;
  Reason reason = Reason::crash;
  std::string workload;                                 // uuid, when one is concerned
  std::string message;                                  // one sentence: what was seen
  std::string diagnosis;                                // what a person or a model can act on (errors, pattern, compiler lines)
  nlohmann::json to_json() const;                       // {check, check_name, reason, workload, message, diagnosis}
  static Rejection from_json(const nlohmann::json& j);  // throws std::invalid_argument on an unknown reason
};

// One perf workload as the judge measured it.
struct WorkloadTiming {
  std::string workload;
  std::vector<double> samples;     // seconds per call, one per timed batch, from the judge's clock
  std::vector<double> in_process;  // the executor's own per-call time for the same batches (cross-check only)
  std::vector<double> copy;        // a PyTorch run's: per call, the copy of run()'s result its sample leaves out; else empty
  int batch = 1;                   // calls per timed batch
  SampleSummary summary;           // of samples
  int validated = 0;               // timed calls whose outputs were compared with goldens (all of them)
};

struct Verdict {
  bool accepted = false;
  std::optional<Rejection> rejection;
  std::string harness_error;  // the harness (not the kernel) failed: no verdict
  bool retryable = false;     // a harness error worth one retry (the executor was killed from outside)
  nlohmann::json preflight;   // device facts and the sandbox layers that were active
  std::vector<WorkloadTiming> timings;
  int correctness_calls = 0;
  std::string log_excerpt;               // the processes' stdout/stderr tails, for people (never parsed for a verdict)
  double judge_seconds = 0;              // wall time of the judge process
  std::map<std::string, double> phases;  // the judge's time by phase ("kernel", "fill", "compare", ...)
  const WorkloadTiming* timing_for(const std::string& uuid) const;
};

Verdict reject(Check c, Reason r, std::string message, std::string diagnosis = "", std::string workload = "");

}  // namespace khive
