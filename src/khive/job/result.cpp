#include "khive/job/result.hpp"

#include <stdexcept>

namespace khive {

// Every field travels; a field the JSON lacks keeps its default (an older judge's frame, a solo timing's A/B fields).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AbEventsRecord, ratio, p_faster, p_slower, valid)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AbDecisionRecord, new_leader, weighted_ratio, why, alpha, min_gain, min_gain_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GoldenRecord, cached, made, corrupt, reference_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(OverheadRecord, candidate, jitter)

void to_json(nlohmann::json& j, const TimingRecord& t) {
  j = {{"workload", t.workload}, {"samples_s", t.samples_s},   {"in_process_s", t.in_process_s},
       {"drain_s", t.drain_s},   {"batch", t.batch},           {"validated", t.validated},
       {"clock", t.clock},       {"overhead_s", t.overhead_s}, {"overhead_jitter_s", t.overhead_jitter_s},
       {"gate_s", t.gate_s}};
  if (!t.copy_s.empty()) j["copy_s"] = t.copy_s;
  if (!t.leader_samples_s.empty())
    j.update({{"leader_overhead_s", t.leader_overhead_s}, {"pair_samples_s", t.pair_samples_s}, {"leader_samples_s", t.leader_samples_s}});
}

void from_json(const nlohmann::json& j, TimingRecord& t) {
  const TimingRecord d;
  t.workload = j.value("workload", d.workload);
  t.samples_s = j.value("samples_s", d.samples_s);
  t.in_process_s = j.value("in_process_s", d.in_process_s);
  t.drain_s = j.value("drain_s", d.drain_s);
  t.copy_s = j.value("copy_s", d.copy_s);
  t.batch = j.value("batch", d.batch);
  t.validated = j.value("validated", d.validated);
  t.clock = j.value("clock", d.clock);
  t.overhead_s = j.value("overhead_s", d.overhead_s);
  t.overhead_jitter_s = j.value("overhead_jitter_s", d.overhead_jitter_s);
  t.gate_s = j.value("gate_s", d.gate_s);
  t.leader_overhead_s = j.value("leader_overhead_s", d.leader_overhead_s);
  t.pair_samples_s = j.value("pair_samples_s", d.pair_samples_s);
  t.leader_samples_s = j.value("leader_samples_s", d.leader_samples_s);
}

void to_json(nlohmann::json& j, const AbRecord& a) {
  j = {{"workload", a.workload}, {"pairs", a.pairs},       {"ratio", a.ratio},   {"median_ratio", a.median_ratio},
       {"p_faster", a.p_faster}, {"p_slower", a.p_slower}, {"noise", a.noise},   {"valid", a.valid},
       {"events", a.events},     {"faster", a.faster},     {"slower", a.slower}, {"holm_threshold", a.holm_threshold}};
}

void from_json(const nlohmann::json& j, AbRecord& a) {
  const AbRecord d;
  a.workload = j.value("workload", d.workload);
  a.pairs = j.value("pairs", d.pairs);
  a.ratio = j.value("ratio", d.ratio);
  a.median_ratio = j.value("median_ratio", d.median_ratio);
  a.p_faster = j.value("p_faster", d.p_faster);
  a.p_slower = j.value("p_slower", d.p_slower);
  a.noise = j.value("noise", d.noise);
  a.valid = j.value("valid", d.valid);
  a.events = j.value("events", d.events);
  a.holm_threshold = j.value("holm_threshold", d.holm_threshold);
  a.faster = j.value("faster", d.faster);
  a.slower = j.value("slower", d.slower);
}

nlohmann::json judge_result_frame(const JudgeResult& r) {
  nlohmann::json j = {{"type", "result"}};
  if (!r.error.empty()) j.update({{"error", r.error}, {"retryable", r.retryable}});
  if (r.rejection) j["rejection"] = r.rejection->to_json();
  j["correctness_calls"] = r.correctness_calls;
  j["timing"] = r.timing;
  if (!r.ab.empty()) j["ab"] = r.ab;
  if (r.ab_decision) j["ab_decision"] = *r.ab_decision;
  j["overhead_s"] = r.overhead_s;
  j["goldens"] = r.goldens;
  j["phases"] = r.phases;
  if (!r.log.empty()) j["log"] = r.log;
  if (!r.preflight.is_null()) j["preflight"] = r.preflight;
  if (!r.profile.is_null()) j["profile"] = r.profile;
  return j;
}

JudgeResult judge_result_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("the result is not an object");
  JudgeResult r;
  r.error = j.value("error", std::string());
  r.retryable = j.value("retryable", false);
  if (j.contains("rejection") && !j["rejection"].is_null()) r.rejection = Rejection::from_json(j["rejection"]);
  if (!r.error.empty() && r.rejection) throw std::invalid_argument("the result holds both an error and a rejection");
  r.correctness_calls = j.value("correctness_calls", 0);
  r.timing = j.value("timing", std::vector<TimingRecord>{});
  r.ab = j.value("ab", std::vector<AbRecord>{});
  if (j.contains("ab_decision") && !j["ab_decision"].is_null()) r.ab_decision = j["ab_decision"].get<AbDecisionRecord>();
  r.overhead_s = j.value("overhead_s", OverheadRecord{});
  r.goldens = j.value("goldens", GoldenRecord{});
  r.phases = j.value("phases", std::map<std::string, double>{});
  r.log = j.value("log", std::string());
  if (j.contains("preflight")) r.preflight = j["preflight"];
  if (j.contains("profile")) r.profile = j["profile"];
  return r;
}

}  // namespace khive
