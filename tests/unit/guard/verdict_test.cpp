// Verdict rules over synthetic runner outcomes: each way a runner can end maps to one check and reason.
#include <csignal>

#include <gtest/gtest.h>

#include "khive/guard/verdict.hpp"

namespace khive {
namespace {

RunnerOutcome with_result(nlohmann::json body) {
  RunnerOutcome o;
  o.process.exit_code = 0;
  body["type"] = "result";
  o.result = body;
  o.frames.push_back(body);
  return o;
}

TEST(Verdict, TamperingOutranksAnAcceptingResult) {
  RunnerOutcome o = with_result({{"failure", nullptr}, {"timing", nlohmann::json::array()}});
  o.tampered = true;
  o.tamper_reason = "a frame with an invalid signature";
  Verdict v = judge_run(o);
  ASSERT_FALSE(v.accepted);
  EXPECT_EQ(v.rejection->check, Check::run);
  EXPECT_EQ(v.rejection->reason, "channel_tampered");
}

TEST(Verdict, SignalsMapToReasons) {
  struct Case { int sig; const char* reason; } cases[] = {
      {SIGSEGV, "crash"}, {SIGABRT, "abort"}, {SIGXFSZ, "sandbox_violation"}, {SIGXCPU, "timeout"}, {SIGBUS, "crash"}};
  for (auto c : cases) {
    RunnerOutcome o;
    o.process.signal = c.sig;
    o.last_progress = nlohmann::json{{"type", "progress"}, {"check", 5}, {"workload", "w3"}, {"note", "seed 2"}};
    Verdict v = judge_run(o);
    ASSERT_TRUE(v.rejection) << c.sig;
    EXPECT_EQ(v.rejection->reason, c.reason) << c.sig;
    EXPECT_EQ(v.rejection->workload, "w3");
    EXPECT_NE(v.rejection->message.find("correctness"), std::string::npos) << v.rejection->message;
  }
}

TEST(Verdict, TimeoutSaysWhere) {
  RunnerOutcome o;
  o.process.timed_out = true;
  o.process.wall_s = 40;
  o.last_progress = nlohmann::json{{"check", 8}, {"workload", "p1"}, {"note", "samples"}};
  Verdict v = judge_run(o);
  EXPECT_EQ(v.rejection->reason, "timeout");
  EXPECT_NE(v.rejection->message.find("timing"), std::string::npos);
}

TEST(Verdict, SandboxViolationNamesTheSystemCall) {
  RunnerOutcome o;
  o.process.exit_code = kSandboxExit;
  o.sandbox_violation = true;
  o.forbidden_syscall = "socket";
  Verdict v = judge_run(o);
  EXPECT_EQ(v.rejection->reason, "sandbox_violation");
  EXPECT_NE(v.rejection->message.find("socket"), std::string::npos);
}

TEST(Verdict, ExitWithoutResultIsACrash) {
  RunnerOutcome o;
  o.process.exit_code = 0;   // the candidate called exit(0)
  Verdict v = judge_run(o);
  EXPECT_EQ(v.rejection->reason, "crash");
}

TEST(Verdict, RunnerErrorIsAHarnessErrorNotAVerdict) {
  Verdict v = judge_run(with_result({{"error", "golden missing"}}));
  EXPECT_FALSE(v.rejection);
  EXPECT_FALSE(v.accepted);
  EXPECT_EQ(v.harness_error, "golden missing");
}

TEST(Verdict, FailureFrameBecomesTheRejection) {
  Verdict v = judge_run(with_result({{"failure", {{"check", 7}, {"reason", "caching"}, {"workload", "w1"}, {"message", "m"}, {"diagnosis", "d"}}}}));
  ASSERT_TRUE(v.rejection);
  EXPECT_EQ(v.rejection->check, Check::anti_caching);
  EXPECT_EQ(v.rejection->reason, "caching");
}

TEST(Verdict, AcceptedRunCarriesTimings) {
  Verdict v = judge_run(with_result({{"failure", nullptr},
                                     {"correctness", {{{"workload", "w1"}, {"calls", 7}}}},
                                     {"timing", {{{"workload", "p1"}, {"samples_s", {1.0, 2.0, 3.0}}, {"drain_s", {0.0, 0.0, 0.0}}, {"validated", 3}}}}}));
  ASSERT_TRUE(v.accepted);
  EXPECT_EQ(v.correctness_calls, 7);
  ASSERT_NE(v.timing_for("p1"), nullptr);
  EXPECT_DOUBLE_EQ(v.timing_for("p1")->summary.median, 2.0);
}

TEST(Verdict, PlausibilityRejectsTimesBelowTheFloor) {
  Verdict v = judge_run(with_result({{"failure", nullptr}, {"timing", {{{"workload", "p1"}, {"samples_s", {1e-6, 1e-6}}}}}}));
  apply_plausibility(v, {{"p1", 1e-5}});
  ASSERT_FALSE(v.accepted);
  EXPECT_EQ(v.rejection->check, Check::plausibility);
  EXPECT_EQ(v.rejection->reason, "faster_than_sol");
  Verdict ok = judge_run(with_result({{"failure", nullptr}, {"timing", {{{"workload", "p1"}, {"samples_s", {2e-5}}}}}}));
  apply_plausibility(ok, {{"p1", 1e-5}});
  EXPECT_TRUE(ok.accepted);
}

}  // namespace
}  // namespace khive
