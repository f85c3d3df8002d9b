// khive's reading of a judge process: how it ended and what its result frame says become one Verdict. The judge
// never runs kernel code, so its own failures are harness errors; only its result decides about the kernel.
#include <csignal>

#include <gtest/gtest.h>

#include "khive/job/launcher.hpp"

namespace khive {
namespace {

JudgeOutcome with_result(nlohmann::json body) {
  JudgeOutcome o;
  o.process.exit_code = 0;
  body["type"] = "result";
  take_result_frame(o, body);
  o.frames.push_back(body);
  return o;
}

TEST(ReadVerdict, AcceptedWithTimings) {
  Verdict v = read_verdict(with_result({{"timing",
                                         {{{"workload", "p1"},
                                           {"samples_s", {2e-5, 3e-5, 2.5e-5}},
                                           {"in_process_s", {1.9e-5, 2.9e-5, 2.4e-5}},
                                           {"batch", 4},
                                           {"validated", 12}}}},
                                        {"correctness_calls", 17},
                                        {"phases", {{"kernel", 0.5}, {"fill", 0.1}}}}));
  ASSERT_TRUE(v.accepted);
  ASSERT_EQ(v.timings.size(), 1u);
  EXPECT_EQ(v.timings[0].batch, 4);
  EXPECT_EQ(v.timings[0].validated, 12);
  EXPECT_DOUBLE_EQ(v.timings[0].summary.median, 2.5e-5);
  EXPECT_EQ(v.correctness_calls, 17);
  EXPECT_DOUBLE_EQ(v.phases.at("kernel"), 0.5);
}

TEST(ReadVerdict, TheJudgesRejectionIsTheVerdict) {
  Verdict v = read_verdict(with_result(
      {{"rejection",
        {{"check", 9}, {"reason", "timed_output_wrong"}, {"workload", "p1"}, {"message", "m"}, {"diagnosis", "d"}}}}));
  ASSERT_TRUE(v.rejection);
  EXPECT_FALSE(v.accepted);
  EXPECT_EQ(v.rejection->check, Check::timed_outputs);
  EXPECT_EQ(v.rejection->reason, Reason::timed_output_wrong);
}

TEST(ReadVerdict, JudgeErrorsAreHarnessErrorsRetriedOnlyWhenSaid) {
  Verdict v = read_verdict(with_result({{"error", "the task's reference failed: ..."}}));
  EXPECT_FALSE(v.accepted);
  EXPECT_FALSE(v.rejection);
  EXPECT_EQ(v.harness_error, "the task's reference failed: ...");
  EXPECT_FALSE(v.retryable);
  EXPECT_TRUE(read_verdict(with_result({{"error", "killed from outside"}, {"retryable", true}})).retryable);
}

TEST(ReadVerdict, AJudgeThatDiesIsAHarnessError) {
  JudgeOutcome o;
  o.process.signal = SIGKILL;  // the OOM killer: worth a retry
  Verdict v = read_verdict(o);
  EXPECT_FALSE(v.harness_error.empty());
  EXPECT_TRUE(v.retryable);
  EXPECT_FALSE(v.rejection);
  o.process.signal = SIGSEGV;  // a judge bug: not the kernel's fault, not retried
  v = read_verdict(o);
  EXPECT_FALSE(v.harness_error.empty());
  EXPECT_FALSE(v.retryable);
  JudgeOutcome quiet;
  quiet.process.exit_code = 0;  // ended without a result
  EXPECT_FALSE(read_verdict(quiet).harness_error.empty());
  JudgeOutcome late;
  late.process.timed_out = true;
  EXPECT_NE(read_verdict(late).harness_error.find("budget"), std::string::npos);
}

TEST(ReadVerdict, TamperingWithTheJudgesChannelFailsClosed) {
  JudgeOutcome o = with_result({{"timing", nlohmann::json::array()}});
  o.tampered = true;
  o.tamper_reason = "a frame with an invalid signature";
  Verdict v = read_verdict(o);
  ASSERT_TRUE(v.rejection);
  EXPECT_EQ(v.rejection->reason, Reason::channel_tampered);
  EXPECT_FALSE(v.accepted);
}

TEST(ReadVerdict, AMalformedResultIsAHarnessError) {
  for (const nlohmann::json& body :
       {nlohmann::json{{"rejection", {{"check", 5}, {"reason", "not_a_reason"}}}},
        nlohmann::json{{"timing", {{{"workload", "p1"}, {"samples_s", "fast"}}}}},
        nlohmann::json{{"error", "x"}, {"rejection", {{"check", 2}, {"reason", "crash"}}}}}) {
    Verdict v = read_verdict(with_result(body));
    EXPECT_FALSE(v.accepted) << body.dump();
    EXPECT_FALSE(v.rejection) << body.dump();
    EXPECT_NE(v.harness_error.find("the judge's result is malformed"), std::string::npos) << v.harness_error;
  }
}

TEST(ReadVerdict, TheCalibrationBehindTheSamplesIsKept) {
  nlohmann::json t = {{"workload", "p1"}, {"samples_s", {1e-5}}, {"overhead_s", 4e-6}, {"gate_s", 3.5e-6}};
  Verdict v = read_verdict(with_result({{"timing", nlohmann::json::array({t})}}));
  ASSERT_EQ(v.timings.size(), 1u);
  EXPECT_DOUBLE_EQ(v.timings[0].overhead_s, 4e-6);
  EXPECT_DOUBLE_EQ(v.timings[0].gate_s, 3.5e-6);
}

}  // namespace
}  // namespace khive
