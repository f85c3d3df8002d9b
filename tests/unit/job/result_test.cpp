// The judge's result (job/result.hpp): what khive-judge sends is what khive reads, field for field, and a frame that
// is not a result is refused instead of read as an accepted kernel.
#include <gtest/gtest.h>

#include "khive/job/result.hpp"

namespace khive {
namespace {

JudgeResult full() {
  JudgeResult r;
  r.correctness_calls = 17;
  TimingRecord t;
  t.workload = "p1";
  t.samples_s = {2e-5, 3e-5};
  t.in_process_s = {1.9e-5, 2.9e-5};
  t.drain_s = {0, 1e-6};
  t.batch = 4;
  t.validated = 16;
  t.clock = "gated";
  t.overhead_s = 4e-6;
  t.overhead_jitter_s = 2e-7;
  t.gate_s = 3.5e-6;
  t.leader_overhead_s = 4.1e-6;
  t.pair_samples_s = {2.1e-5};
  t.leader_samples_s = {2.4e-5};
  r.timing = {t};
  AbRecord a;
  a.workload = "p1";
  a.pairs = 22;
  a.ratio = 1.12;
  a.median_ratio = 1.11;
  a.p_faster = 1e-4;
  a.p_slower = 0.99;
  a.noise = 0.02;
  a.valid = true;
  a.events = {1.1, 2e-4, 0.98, true};
  a.holm_threshold = 0.01;
  a.faster = true;
  r.ab = {a};
  r.ab_decision = AbDecisionRecord{true, 1.12, "faster on 1 of 1", 0.01, 0.01, 5e-7};
  r.overhead_s = {4e-6, 2e-7};
  r.goldens = {3, 1, 0, 0.25};
  r.phases = {{"kernel", 0.5}, {"fill", 0.1}};
  r.preflight = {{"device", "H200"}, {"sandbox", {{"candidate", {{"seccomp", true}}}}}};
  return r;
}

TEST(JudgeResult, EveryFieldTravels) {
  const JudgeResult r = full();
  const nlohmann::json frame = judge_result_frame(r);
  EXPECT_EQ(frame["type"], "result");
  const JudgeResult b = judge_result_from_json(frame);
  EXPECT_TRUE(b.accepted());
  EXPECT_EQ(b.correctness_calls, 17);
  ASSERT_EQ(b.timing.size(), 1u);
  EXPECT_EQ(nlohmann::json(b.timing[0]), nlohmann::json(r.timing[0]));
  ASSERT_EQ(b.ab.size(), 1u);
  EXPECT_EQ(nlohmann::json(b.ab[0]), nlohmann::json(r.ab[0]));
  ASSERT_TRUE(b.ab_decision);
  EXPECT_EQ(b.ab_decision->why, "faster on 1 of 1");
  EXPECT_DOUBLE_EQ(b.ab_decision->min_gain_s, 5e-7);
  EXPECT_DOUBLE_EQ(b.overhead_s.jitter, 2e-7);
  EXPECT_EQ(b.goldens.made, 1);
  EXPECT_DOUBLE_EQ(b.goldens.reference_s, 0.25);
  EXPECT_EQ(b.phases, r.phases);
  EXPECT_EQ(b.preflight, r.preflight);
  EXPECT_EQ(judge_result_frame(b), frame);  // and back again, the same frame
}

TEST(JudgeResult, ARejectionOrAnErrorIsNotAccepted) {
  JudgeResult r = full();
  r.rejection = Rejection{Check::timed_outputs, Reason::timed_output_wrong, "p1", "timed call 7 differs", ""};
  r.log = "executor log tail";
  JudgeResult b = judge_result_from_json(judge_result_frame(r));
  EXPECT_FALSE(b.accepted());
  ASSERT_TRUE(b.rejection);
  EXPECT_EQ(b.rejection->reason, Reason::timed_output_wrong);
  EXPECT_EQ(b.log, "executor log tail");
  JudgeResult e;
  e.error = "the task's reference failed";
  e.retryable = true;
  b = judge_result_from_json(judge_result_frame(e));
  EXPECT_FALSE(b.accepted());
  EXPECT_EQ(b.error, "the task's reference failed");
  EXPECT_TRUE(b.retryable);
}

TEST(JudgeResult, OlderFramesReadWithDefaults) {
  const JudgeResult b =
      judge_result_from_json({{"type", "result"}, {"timing", {{{"workload", "p1"}, {"samples_s", {1e-5}}}}}});
  ASSERT_EQ(b.timing.size(), 1u);
  EXPECT_EQ(b.timing[0].batch, 1);
  EXPECT_FALSE(b.ab_decision);
}

TEST(JudgeResult, WhatIsNotAResultIsRefused) {
  EXPECT_THROW(judge_result_from_json(nlohmann::json::array()), std::invalid_argument);
  EXPECT_THROW(judge_result_from_json({{"error", "x"}, {"rejection", {{"check", 2}, {"reason", "crash"}}}}),
               std::invalid_argument);
  EXPECT_THROW(judge_result_from_json({{"rejection", {{"check", 2}, {"reason", "made_up"}}}}), std::invalid_argument);
  EXPECT_ANY_THROW(judge_result_from_json({{"timing", {{{"samples_s", "fast"}}}}}));
  EXPECT_ANY_THROW(judge_result_from_json({{"correctness_calls", "many"}}));
}

}  // namespace
}  // namespace khive
