#include "khive/verdict/verdict.hpp"

#include <stdexcept>

namespace khive {

namespace {

// One table per enum: the name of each value, in declaration order. The *_name and parse_* functions read the same
// table, so a name can never be written that would not parse back.
template <typename E>
struct Named {
  E value;
  const char* name;
};

constexpr Named<Check> kChecks[] = {
    {Check::preflight, "preflight"},
    {Check::build, "build"},
    {Check::run, "run"},
    {Check::inputs, "inputs"},
    {Check::written, "written"},
    {Check::correctness, "correctness"},
    {Check::determinism, "determinism"},
    {Check::anti_caching, "anti-caching"},
    {Check::timing, "timing"},
    {Check::timed_outputs, "timed outputs"},
    {Check::plausibility, "plausibility"},
    {Check::acceptance, "acceptance"},
};

constexpr Named<Reason> kReasons[] = {
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

constexpr Named<EvalStatus> kEvalStatuses[] = {
    {EvalStatus::accepted, "accepted"},   {EvalStatus::rejected, "rejected"}, {EvalStatus::error, "error"},
    {EvalStatus::cancelled, "cancelled"}, {EvalStatus::built, "built"},       {EvalStatus::unsupported, "unsupported"},
};

constexpr Named<Standing> kStandings[] = {
    {Standing::leader, "leader"}, {Standing::backup, "backup"},   {Standing::rejected, "rejected"},
    {Standing::error, "error"},   {Standing::pending, "pending"},
};

template <typename E, size_t N>
const char* name_of(const Named<E> (&table)[N], E value) {
  for (const auto& e : table)
    if (e.value == value) return e.name;
  return "?";
}

template <typename E, size_t N>
std::optional<E> parse(const Named<E> (&table)[N], std::string_view name) {
  for (const auto& e : table)
    if (name == e.name) return e.value;
  return std::nullopt;
}

template <typename E, size_t N>
E from_name(const Named<E> (&table)[N], const nlohmann::json& j, const char* what) {
  if (j.is_string())
    if (auto v = parse(table, j.get<std::string>())) return *v;
  std::string names;
  for (const auto& e : table) names += (names.empty() ? "" : ", ") + std::string(e.name);
  throw std::invalid_argument(std::string(what) + " '" + (j.is_string() ? j.get<std::string>() : j.dump()) +
                              "': expected one of " + names);
}

}  // namespace

void to_json(nlohmann::json& j, Check c) { j = check_name(c); }
void from_json(const nlohmann::json& j, Check& c) { c = from_name(kChecks, j, "check"); }
void to_json(nlohmann::json& j, Reason r) { j = reason_name(r); }
void from_json(const nlohmann::json& j, Reason& r) { r = from_name(kReasons, j, "reason"); }
void to_json(nlohmann::json& j, EvalStatus s) { j = eval_status_name(s); }
void from_json(const nlohmann::json& j, EvalStatus& s) { s = from_name(kEvalStatuses, j, "evaluation status"); }
void to_json(nlohmann::json& j, Standing s) { j = standing_name(s); }
void from_json(const nlohmann::json& j, Standing& s) { s = from_name(kStandings, j, "verdict"); }

const char* check_name(Check c) { return name_of(kChecks, c); }
std::optional<Check> parse_check(std::string_view name) { return parse(kChecks, name); }
const char* reason_name(Reason r) { return name_of(kReasons, r); }
std::optional<Reason> parse_reason(std::string_view name) { return parse(kReasons, name); }
const char* eval_status_name(EvalStatus s) { return name_of(kEvalStatuses, s); }
std::optional<EvalStatus> parse_eval_status(std::string_view name) { return parse(kEvalStatuses, name); }
const char* standing_name(Standing s) { return name_of(kStandings, s); }
std::optional<Standing> parse_standing(std::string_view name) { return parse(kStandings, name); }

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
  if (c < 0 || c > static_cast<int>(Check::acceptance))
    throw std::invalid_argument("rejection: check " + std::to_string(c) + " out of range");
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

}  // namespace khive
