// eval's steps over a judge's answer: evaluate_kernel with a stand-in judge (JudgeOptions::stand_in) whose answers
// travel the wire format (judge_result_frame, take_result_frame). A retryable harness error is retried once and only
// once, the judge's rejection is the verdict, check 10 rejects a time no hardware reaches, the task score and the
// speedups come from the medians, and check 11's answer is read into the report. The candidate and the reference are
// really built (g++, cached by content); no judge process runs.
#include <gtest/gtest.h>

#include <filesystem>

#include "khive/eval/evaluate.hpp"
#include "khive/job/launcher.hpp"
#include "khive/score/score.hpp"
#include "khive/support/files.hpp"

namespace khive {
namespace {

namespace fs = std::filesystem;

// Answers each judge khive starts, in order (call 1 is the candidate's; with time_reference, call 2 the reference's).
struct StandInJudge {
  std::vector<Job> jobs;
  std::function<JudgeResult(const Job&, int call)> answer;
  std::function<JudgeOutcome(const Job&)> fn() {
    return [this](const Job& j) {
      jobs.push_back(j);
      JudgeOutcome o;
      o.process.exit_code = 0;
      take_result_frame(o, judge_result_frame(answer(j, static_cast<int>(jobs.size()))));
      return o;
    };
  }
};

class EvalSteps : public ::testing::Test {
 protected:
  void SetUp() override {
    task_ = load_task(fs::path(KHIVE_SOURCE_DIR) / "tasks/demo-cpu/vector_add");
    dir_ = make_temp_dir(fs::temp_directory_path(), "khive-eval-steps");
    HardwareProfile p;
    p.name = "cpu:stand-in (2 threads)";
    p.source = "a test's";
    p.peak_flops[ComputeUnit::fp32] = p.measured_flops[ComputeUnit::fp32] = 1e11;
    p.peak_bandwidth = p.measured_bandwidth = 50e9;
    save_profile(p, dir_ / "profile.json");
    o_.backend = Backend::cpu;
    o_.seed = 7;
    o_.profile = dir_ / "profile.json";
    o_.use_pytorch = false;
    o_.time_baselines = false;
    o_.judge.process.stand_in = judge_.fn();
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path candidate() const { return task_.dir / "candidates/omp_simd.cpp"; }
  // An accepted answer with `median_s` on every perf workload.
  JudgeResult accepted(double median_s) const {
    JudgeResult r;
    r.preflight = {{"device", "stand-in"}, {"threads", 2}};
    r.correctness_calls = 9;
    for (const auto& w : task_.workloads)
      if (w.is_perf()) {
        TimingRecord t;
        t.workload = w.uuid;
        t.samples_s.assign(11, median_s);
        t.in_process_s.assign(11, median_s * 0.9);
        r.timing.push_back(t);
      }
    return r;
  }
  static JudgeResult harness(const std::string& why, bool retryable) {
    JudgeResult r;
    r.error = why;
    r.retryable = retryable;
    return r;
  }

  Task task_;
  fs::path dir_;
  EvalOptions o_;
  StandInJudge judge_;
};

TEST_F(EvalSteps, ScoresAndSpeedupsComeFromTheMedians) {
  judge_.answer = [this](const Job&, int call) { return accepted(call == 1 ? 1e-3 : 2e-3); };  // reference: 2x
  const EvalReport r = evaluate_kernel(task_, candidate(), o_);
  ASSERT_TRUE(r.accepted()) << r.harness_error;
  ASSERT_EQ(judge_.jobs.size(), 2u);  // the candidate's judge, then the reference's
  EXPECT_NE(judge_.jobs[0].library, judge_.jobs[1].library);
  EXPECT_EQ(judge_.jobs[0].reference_library, judge_.jobs[1].library);  // the candidate's goldens: the reference
  std::vector<WorkloadScoreInput> in;
  for (const auto& w : r.workloads) {
    EXPECT_DOUBLE_EQ(*w.speedup_vs_reference, 2.0) << w.workload;
    EXPECT_EQ(w.baseline_label, "reference");
    EXPECT_DOUBLE_EQ(*w.baseline_time, 2e-3);
    EXPECT_GT(w.t_floor, 0);
    in.push_back({w.weight, true, 1e-3, w.t_floor, 2e-3});
  }
  EXPECT_EQ(r.workloads.size(), 3u);
  ASSERT_TRUE(r.task_score);
  EXPECT_DOUBLE_EQ(*r.task_score, *task_score(in));  // score/'s formula, computed once, on these inputs
}

TEST_F(EvalSteps, ARetryableHarnessErrorIsRetriedOnceAndOnlyOnce) {
  o_.time_reference = false;
  judge_.answer = [this](const Job&, int call) {
    return call == 1 ? harness("the executor was killed from outside", true) : accepted(1e-3);
  };
  EvalReport r = evaluate_kernel(task_, candidate(), o_);
  EXPECT_TRUE(r.accepted()) << r.harness_error;
  EXPECT_TRUE(r.retried);
  EXPECT_EQ(judge_.jobs.size(), 2u);
  judge_.jobs.clear();
  judge_.answer = [](const Job&, int) { return harness("the executor was killed from outside", true); };
  r = evaluate_kernel(task_, candidate(), o_);
  EXPECT_FALSE(r.accepted());
  EXPECT_EQ(r.harness_error, "the executor was killed from outside");
  EXPECT_EQ(judge_.jobs.size(), 2u);
  judge_.jobs.clear();
  judge_.answer = [](const Job&, int) { return harness("the task's reference failed", false); };
  r = evaluate_kernel(task_, candidate(), o_);
  EXPECT_FALSE(r.retried);
  EXPECT_EQ(judge_.jobs.size(), 1u);  // not retryable: not retried
}

TEST_F(EvalSteps, TheJudgesRejectionIsTheVerdict) {
  o_.time_reference = false;
  judge_.answer = [this](const Job&, int) {
    JudgeResult r = accepted(1e-3);
    r.rejection =
        Rejection{Check::timed_outputs, Reason::timed_output_wrong, "vector_add-n1048576", "timed call 7", ""};
    return r;
  };
  const EvalReport r = evaluate_kernel(task_, candidate(), o_);
  EXPECT_FALSE(r.accepted());
  EXPECT_TRUE(r.harness_error.empty()) << r.harness_error;
  ASSERT_TRUE(r.candidate.verdict.rejection);
  EXPECT_EQ(r.candidate.verdict.rejection->check, Check::timed_outputs);
  ASSERT_TRUE(r.task_score);
  EXPECT_EQ(*r.task_score, 0.0);
}

TEST_F(EvalSteps, Check10RejectsATimeNoHardwareReaches) {
  o_.time_reference = false;
  judge_.answer = [this](const Job&, int) { return accepted(1e-8); };  // 12 MB in 10 ns: 1.2 PB/s
  const EvalReport r = evaluate_kernel(task_, candidate(), o_);
  EXPECT_FALSE(r.accepted());
  ASSERT_TRUE(r.candidate.verdict.rejection);
  EXPECT_EQ(r.candidate.verdict.rejection->check, Check::plausibility);
  EXPECT_EQ(r.candidate.verdict.rejection->reason, Reason::faster_than_sol);
}

TEST_F(EvalSteps, Check11sAnswerIsReadIntoTheReport) {
  o_.time_reference = false;
  o_.leader = task_.dir / "candidates/blocked_unrolled.cpp";
  judge_.answer = [this](const Job& j, int) {
    JudgeResult r = accepted(1e-3);
    EXPECT_FALSE(j.leader_library.empty());
    for (auto& t : r.timing) {
      t.pair_samples_s.assign(20, 1e-3);
      t.leader_samples_s.assign(20, 1.3e-3);
      r.ab.push_back(AbRecord{t.workload, 20, 1.3, 1.3, 1e-6, 1, 0.01, true, AbEventsRecord{1.29, 1e-6, 1, true}, 0.01,
                              true, false});
    }
    r.ab_decision = AbDecisionRecord{true, 1.3, "faster on 3 of 3", 0.01, 0.01, 2e-6};
    return r;
  };
  const EvalReport r = evaluate_kernel(task_, candidate(), o_);
  ASSERT_TRUE(r.accepted()) << r.harness_error;
  ASSERT_TRUE(r.new_leader);
  EXPECT_TRUE(*r.new_leader);
  EXPECT_EQ(r.ab_decision, "faster on 3 of 3");
  EXPECT_DOUBLE_EQ(r.ab_weighted_ratio, 1.3);
  ASSERT_EQ(r.ab.size(), 3u);
  EXPECT_TRUE(r.ab[0].faster);
  EXPECT_EQ(r.ab[0].test.pairs, 20u);
  EXPECT_DOUBLE_EQ(r.ab[0].events.ratio, 1.29);
  EXPECT_EQ(r.leader_samples.at(r.ab[0].workload).size(), 20u);
}

TEST_F(EvalSteps, AMalformedAnswerIsAHarnessErrorNeverAVerdict) {
  o_.time_reference = false;
  o_.judge.process.stand_in = [](const Job&) {
    JudgeOutcome o;
    o.process.exit_code = 0;
    take_result_frame(o, {{"type", "result"}, {"rejection", {{"check", 5}, {"reason", "made_up"}}}});
    return o;
  };
  const EvalReport r = evaluate_kernel(task_, candidate(), o_);
  EXPECT_FALSE(r.accepted());
  EXPECT_FALSE(r.candidate.verdict.rejection);
  EXPECT_NE(r.harness_error.find("the judge's result is malformed"), std::string::npos) << r.harness_error;
}

}  // namespace
}  // namespace khive
