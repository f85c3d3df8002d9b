// khive's side of one judge process: start it, hand it the channel key and the job, collect the verified frames,
// and read its result into a Verdict. The judge is trusted and never loads kernel code (that runs in the
// executors it starts, which cannot reach this channel), so a judge that dies or answers nonsense is a harness
// error, never a verdict on the kernel.
//
//   JudgeOutcome o = launch_judge(job, JudgeOptions{});
//   Verdict v = read_verdict(o);   // accepted | rejection (check, reason) | harness_error (+ retryable)
#pragma once
#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/guard/checks.hpp"
#include "khive/job/protocol.hpp"
#include "khive/job/result.hpp"
#include "khive/support/subprocess.hpp"

namespace khive {

struct JudgeOutcome;

struct JudgeOptions {
  std::filesystem::path judge;       // empty = default_judge_path()
  std::filesystem::path executor;    // empty = default_executor_path()
  double budget_s = 0;               // watchdog for the whole judge; 0 = max(600, 20 x job.timeout_s)
  std::string cuda_visible_devices;  // the device slot ("0"); empty = inherit
  // When set and it becomes true (the run is stopping), the judge and its executors are killed at once and the
  // verdict is a harness error that says so (never a verdict on the kernel).
  const std::atomic<bool>* cancel = nullptr;
  // Unit tests of what khive does with a judge's answer (eval's steps: retries, check 10, scores, check 11's
  // reading): called in place of starting khive-judge. Nothing outside tests sets it.
  std::function<JudgeOutcome(const Job&)> stand_in;
};

struct JudgeOutcome {
  ProcessResult process;
  std::vector<nlohmann::json> frames;
  std::optional<JudgeResult> result;            // the frame with type "result", read (result.hpp)
  std::string result_problem;                   // why that frame could not be read (then `result` is empty)
  std::optional<nlohmann::json> last_progress;  // the last "progress" frame
  bool tampered = false;
  std::string tamper_reason;
  double seconds = 0;
};

JudgeOutcome launch_judge(const Job& job, const JudgeOptions& opt);
// The result frame read into o.result, or why it could not be (o.result_problem).
void take_result_frame(JudgeOutcome& o, const nlohmann::json& frame);
Verdict read_verdict(const JudgeOutcome& o);
// Why a judge gave no usable result, in one line: its error, what was malformed in its result, or how it ended.
std::string judge_failure(const JudgeOutcome& o);
// The harness error of a judge killed through JudgeOptions::cancel.
inline constexpr const char* kEvaluationCancelled = "the evaluation was cancelled: the run is stopping";

std::filesystem::path default_judge_path();     // $KHIVE_JUDGE, else khive-judge beside this executable
std::filesystem::path default_executor_path();  // $KHIVE_EXEC, else khive-exec beside this executable

}  // namespace khive
