#include "khive/job/result.hpp"

#include <stdexcept>

namespace khive {

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
  if (j.contains("ab_decision") && !j["ab_decision"].is_null())
    r.ab_decision = j["ab_decision"].get<AbDecisionRecord>();
  r.overhead_s = j.value("overhead_s", OverheadRecord{});
  r.goldens = j.value("goldens", GoldenRecord{});
  r.phases = j.value("phases", std::map<std::string, double>{});
  r.log = j.value("log", std::string());
  if (j.contains("preflight")) r.preflight = j["preflight"];
  if (j.contains("profile")) r.profile = j["profile"];
  return r;
}

}  // namespace khive
