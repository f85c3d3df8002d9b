// The verdict's vocabulary, at the bottom of the tree so that every part speaks it: the guard's ordered checks
// (docs/guard.md) and the reasons one fails, a rejection, what an evaluation ended in (EvalStatus) and where a judged
// candidate stands in a run (Standing). Code decides on these types only; the strings exist at the edges (run.db,
// events.jsonl, eval.json, exports, prompts), written by *_name and read back by parse_*, which are exact inverses.
//
//   Rejection r{Check::timed_outputs, Reason::timed_output_wrong, "w3", "timed call 7: ..."};
//   check_name(r.check) == "timed outputs";  parse_check("timed outputs") == Check::timed_outputs
//   Standing s = parse_standing(row_text).value();   // "leader" -> Standing::leader; "leeder" -> nullopt
//   if (accepted(s)) ...                               // leader or backup
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

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
std::optional<Check> parse_check(std::string_view name);

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
  std::string workload;            // uuid, when one is concerned
  std::string message;             // one sentence: what was seen
  std::string diagnosis;           // what a person or a model can act on (errors, pattern, compiler lines)
  nlohmann::json to_json() const;  // {check, check_name, reason, workload, message, diagnosis}
  static Rejection from_json(const nlohmann::json& j);  // throws std::invalid_argument on an unknown reason
};

// What one evaluation of a kernel ended in (hive/hive.hpp's Evaluation).
enum class EvalStatus {
  accepted,     // every check passed
  rejected,     // a check failed (the evaluation names which)
  error,        // the harness failed: no verdict on the kernel
  cancelled,    // the run stopped before the kernel reached the device: nothing to record
  built,        // a build-only evaluation (deferred runs) passed check 1
  unsupported,  // the evaluator cannot do what was asked (a PyTorch reference on a recorded evaluator)
};
const char* eval_status_name(EvalStatus s);  // "accepted", "rejected", ...
std::optional<EvalStatus> parse_eval_status(std::string_view name);

// Where a judged candidate stands in a run: its row in run.db, what its agent observes.
enum class Standing {
  leader,    // correct and, by check 11, faster than the leader of its time
  backup,    // correct, not (shown) faster
  rejected,  // a check failed
  error,     // the harness failed: no verdict (retried, then recorded as such)
  pending,   // built here, its evaluation deferred to a machine with the device
};
const char* standing_name(Standing s);  // "leader", "backup", ...
std::optional<Standing> parse_standing(std::string_view name);
inline bool accepted(Standing s) { return s == Standing::leader || s == Standing::backup; }

// What the guard said about a proposal: what every record of a judged candidate carries (the outcome an agent
// reads, the run database's row, a deferred evaluation's verdict), copied from one to the other as a whole. Typed
// (verdict/verdict.hpp); the words are written only where it leaves the process.
struct VerdictRecord {
  Standing standing = Standing::error;
  std::optional<Check> check;  // the failing check when rejected
  std::string reason;          // machine-readable reason code (verdict/verdict.hpp's, or the hive's own:
                               // wrong_backend, not_recorded)
  std::string message;         // one sentence
  std::string diagnosis;       // compiler lines / mismatch pattern: what a model can act on
  // Correct: the leader or a backup (a rejection and a harness error are not).
  bool accepted() const { return khive::accepted(standing); }
  // The check's name for people and files ("" when none).
  std::string check_text() const { return check ? check_name(*check) : ""; }
};

struct AbWorkload {  // check 11 on one perf workload, as the guard decided it
  std::string workload;
  double gain = 0;  // the A/B's estimate of the gain over the leader (+0.05: 5% faster)
  std::size_t pairs = 0;
  std::string call;      // the guard's own reading, the one its decision used: "faster" | "slower" | "level" |
                         // "too few pairs" (never re-derived here from the gain)
  std::string evidence;  // why, in the guard's terms: "noise ±5.0%" or "p 0.003, needed <= 0.005"
};

// JSON writes the names (nlohmann would write the enum's number otherwise); reading an unknown name throws
// std::invalid_argument saying what was expected.
void to_json(nlohmann::json& j, Check c);
void from_json(const nlohmann::json& j, Check& c);
void to_json(nlohmann::json& j, Reason r);
void from_json(const nlohmann::json& j, Reason& r);
void to_json(nlohmann::json& j, EvalStatus s);
void from_json(const nlohmann::json& j, EvalStatus& s);
void to_json(nlohmann::json& j, Standing s);
void from_json(const nlohmann::json& j, Standing& s);

}  // namespace khive
