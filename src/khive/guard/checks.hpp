// The verdict on one kernel, as the judge gives it: accepted, or one rejection (a check and its reason,
// verdict/verdict.hpp), with the timings it measured. Everything that decides a verdict speaks these types;
// strings exist only at the edges (JSON, tables), through check_name / reason_name / parse_reason.
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
#include "khive/verdict/verdict.hpp"

namespace khive {

// One perf workload as the judge measured it.
struct WorkloadTiming {
  std::string workload;
  std::vector<double> samples;     // seconds per call, one per timed batch, from the judge's clock
  std::vector<double> in_process;  // the executor's own per-call time for the same batches (cross-check only)
  std::vector<double> copy;  // a PyTorch run's: per call, the copy of run()'s result its sample leaves out; else empty
  int batch = 1;             // calls per timed batch
  double overhead_s = 0;     // the judge's calibrated exchange subtracted from each bracket (for people)
  double gate_s = 0;         // GPU: the calibrated no-work call through the gate (for people)
  SampleSummary summary;     // of samples
  int validated = 0;         // timed calls whose outputs were compared with goldens (all of them)
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
