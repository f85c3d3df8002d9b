#include "khive/guard/checks.hpp"

#include <stdexcept>

namespace khive {

namespace {

struct ReasonName {
  Reason reason;
  const char* name;
};
constexpr ReasonName kReasons[] = {
    {Reason::build_error, "build_error"},
    {Reason::build_timeout, "build_timeout"},
    {Reason::forbidden_symbol, "forbidden_symbol"},
    {Reason::load_error, "load_error"},
    {Reason::crash, "crash"},
    {Reason::abort, "abort"},
    {Reason::timeout, "timeout"},
    {Reason::cuda_error, "cuda_error"},
    {Reason::sandbox_violation, "sandbox_violation"},
    {Reason::protocol_violation, "protocol_violation"},
    {Reason::channel_tampered, "channel_tampered"},
    {Reason::input_mutated, "input_mutated"},
    {Reason::unwritten_output, "unwritten_output"},
    {Reason::wrong_output, "wrong_output"},
    {Reason::nonfinite_output, "nonfinite_output"},
    {Reason::all_zero_output, "all_zero_output"},
    {Reason::nondeterministic, "nondeterministic"},
    {Reason::caching, "caching"},
    {Reason::timing_disagrees, "timing_disagrees"},
    {Reason::work_after_return, "work_after_return"},
    {Reason::timed_output_wrong, "timed_output_wrong"},
    {Reason::faster_than_sol, "faster_than_sol"},
};

}  // namespace

const char* check_name(Check c) {
  switch (c) {
    case Check::preflight: return "preflight";
    case Check::build: return "build";
    case Check::run: return "run";
    case Check::inputs: return "inputs";
    case Check::written: return "written";
    case Check::correctness: return "correctness";
    case Check::determinism: return "determinism";
    case Check::anti_caching: return "anti-caching";
    case Check::timing: return "timing";
    case Check::timed_outputs: return "timed outputs";
    case Check::plausibility: return "plausibility";
    case Check::acceptance: return "acceptance";
  }
  return "?";
}

const char* reason_name(Reason r) {
  for (const auto& e : kReasons)
    if (e.reason == r) return e.name;
  return "?";
}

std::optional<Reason> parse_reason(std::string_view name) {
  for (const auto& e : kReasons)
    if (name == e.name) return e.reason;
  return std::nullopt;
}

nlohmann::json Rejection::to_json() const {
  return {{"check", static_cast<int>(check)},
          {"check_name", check_name(check)},
          {"reason", reason_name(reason)},
          {"workload", workload},
          {"message", message},
          {"diagnosis", diagnosis}};
}

Rejection Rejection::from_json(const nlohmann::json& j) {
  Rejection r;
  const int c = j.at("check").get<int>();
  if (c < 0 || c > static_cast<int>(Check::acceptance)) throw std::invalid_argument("rejection: check " + std::to_string(c) + " out of range");
  r.check = static_cast<Check>(c);
  const std::string name = j.at("reason").get<std::string>();
  auto reason = parse_reason(name);
  if (!reason) throw std::invalid_argument("rejection: unknown reason '" + name + "'");
  r.reason = *reason;
  r.workload = j.value("workload", "");
  r.message = j.value("message", "");
  r.diagnosis = j.value("diagnosis", "");
  return r;
}

const WorkloadTiming* Verdict::timing_for(const std::string& uuid) const {
  for (auto& t : timings)
    if (t.workload == uuid) return &t;
  return nullptr;
}

Verdict reject(Check c, Reason r, std::string message, std::string diagnosis, std::string workload) {
  Verdict v;
  v.rejection = Rejection{c, r, std::move(workload), std::move(message), std::move(diagnosis)};
  return v;
}

}  // namespace khive
