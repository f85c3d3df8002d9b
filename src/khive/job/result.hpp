// What a judge process answers (the "result" frame on its channel, protocol.hpp), as one type that both sides use:
// khive-judge fills it and sends to_json; khive reads it back with judge_result_from_json and decides nothing from
// anything else the frame might hold. Keys on the wire are the field names.
//
//   JudgeResult r;  r.rejection = Rejection{...};            // the judge: a rejected kernel
//   send(judge_result_frame(r));                              // {"type":"result", "rejection":{...}, ...}
//   JudgeResult back = judge_result_from_json(frame);         // khive: throws on a malformed result
//
// Exactly one of three outcomes: `error` set (a harness failure: no verdict; `retryable` when a retry may help),
// `rejection` set (the first failed check), or neither (accepted, with its timings).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/verdict/verdict.hpp"

namespace khive {

// One perf workload as the judge timed it (its clock's samples and what it knows about that clock).
struct TimingRecord {
  std::string workload;
  std::vector<double> samples_s;     // per call, from the judge's clock (less the calibrated overhead)
  std::vector<double> in_process_s;  // the executor's own per-call time (cross-check only, never the sample)
  std::vector<double> drain_s;       // GPU: how long the device stayed busy after each batch's answer
  std::vector<double> copy_s;        // a PyTorch run's: the copy of run()'s result each sample leaves out; else empty
  int batch = 1;                     // calls per timed batch
  int64_t validated = 0;             // timed calls whose outputs were compared with goldens
  std::string clock;                 // "gated" (the GPU's gate) | "exchange" (CPU: one exchange per call)
  double overhead_s = 0, overhead_jitter_s = 0;  // the calibration subtracted from this workload's brackets
  double gate_s = 0;                             // the candidate's calibrated no-work call through the gate
  // A/B (check 11) only: the leader's calibration, and the pair medians each side contributed to the test.
  double leader_overhead_s = 0;
  std::vector<double> pair_samples_s, leader_samples_s;
};

// Check 11 on one workload: the signed-rank test on the judge's clock and on the executors' events (stats.hpp).
struct AbEventsRecord {
  double ratio = 1, p_faster = 1, p_slower = 1;
  bool valid = false;
};
struct AbRecord {
  std::string workload;
  std::size_t pairs = 0;
  double ratio = 1, median_ratio = 1, p_faster = 1, p_slower = 1, noise = 0;
  bool valid = false;
  AbEventsRecord events;
  double holm_threshold = 0;            // the p_faster it had to reach
  bool faster = false, slower = false;  // by decide_on_both_clocks
};
struct AbDecisionRecord {
  bool new_leader = false;
  double weighted_ratio = 1;
  std::string why;
  double alpha = 0, min_gain = 0, min_gain_s = 0;  // the rule it was decided by
};

struct GoldenRecord {
  int cached = 0, made = 0, corrupt = 0;
  double reference_s = 0;  // the reference's calls made for goldens in this evaluation
};
struct OverheadRecord {
  double candidate = 0, jitter = 0;  // the candidate executor's calibrated no-work call and its spread
};

struct JudgeResult {
  std::string error;       // harness failure (no verdict)
  bool retryable = false;  // of `error`
  std::optional<Rejection> rejection;
  int correctness_calls = 0;
  std::vector<TimingRecord> timing;
  std::vector<AbRecord> ab;  // check 11, when a leader was given
  std::optional<AbDecisionRecord> ab_decision;
  OverheadRecord overhead_s;
  GoldenRecord goldens;
  std::map<std::string, double> phases;  // the judge's time by phase ("kernel", "fill", "compare", ...)
  std::string log;                       // a rejected candidate's executor log tail
  nlohmann::json preflight;              // device facts and the sandbox layers that were active (free-form)
  nlohmann::json profile;                // mode "calibrate": the hardware profile (score/'s format)
  bool accepted() const { return error.empty() && !rejection; }
};

// Every field travels, named as in the struct; a field the JSON lacks keeps its default (an older judge's frame).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TimingRecord, workload, samples_s, in_process_s, drain_s, copy_s, batch,
                                                validated, clock, overhead_s, overhead_jitter_s, gate_s,
                                                leader_overhead_s, pair_samples_s, leader_samples_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AbEventsRecord, ratio, p_faster, p_slower, valid)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AbRecord, workload, pairs, ratio, median_ratio, p_faster, p_slower,
                                                noise, valid, events, holm_threshold, faster, slower)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AbDecisionRecord, new_leader, weighted_ratio, why, alpha, min_gain,
                                                min_gain_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GoldenRecord, cached, made, corrupt, reference_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(OverheadRecord, candidate, jitter)

// The frame the judge sends: the result's fields and "type": "result".
nlohmann::json judge_result_frame(const JudgeResult& r);
// Throws std::invalid_argument (or nlohmann's type_error) naming what is wrong: a field of the wrong type, an unknown
// rejection reason, both an error and a rejection.
JudgeResult judge_result_from_json(const nlohmann::json& j);

}  // namespace khive
