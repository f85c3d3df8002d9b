// The guard's rules over synthetic observations: each observation maps to one check and reason, no device needed.
#include <gtest/gtest.h>

#include "khive/compile/builder.hpp"
#include "khive/compile/symbol_policy.hpp"
#include "khive/guard/rules.hpp"

namespace khive {
namespace {

CompareStats stats(int64_t n, int64_t bad, int64_t unwritten = 0, int64_t nonfinite = 0, int64_t out_zeros = 0,
                   int64_t ref_zeros = 0) {
  CompareStats s;
  s.n = n;
  s.bad = bad;
  s.unwritten = unwritten;
  s.nonfinite = nonfinite;
  s.out_zeros = out_zeros;
  s.ref_zeros = ref_zeros;
  if (bad) s.first_bad = 0;
  return s;
}

TEST(OutputRejection, PassingOutputIsNoRejection) {
  EXPECT_FALSE(output_rejection(Check::correctness, "c", stats(100, 0), Tolerance{}, "w", "ctx"));
}

TEST(OutputRejection, CorrectnessReasonsFollowWhatWasWrong) {
  auto r = output_rejection(Check::correctness, "c", stats(100, 100, 100), Tolerance{}, "w1", "workload w1 (seed 2)");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->check, Check::written);
  EXPECT_EQ(r->reason, Reason::unwritten_output);
  EXPECT_EQ(r->workload, "w1");
  EXPECT_NE(r->message.find("workload w1 (seed 2): output c has 100 of 100 elements never written"), std::string::npos)
      << r->message;
  EXPECT_EQ(output_rejection(Check::correctness, "c", stats(100, 3, 0, 3), Tolerance{}, "w", "x")->reason,
            Reason::nonfinite_output);
  EXPECT_EQ(output_rejection(Check::correctness, "c", stats(100, 60, 0, 0, 100, 40), Tolerance{}, "w", "x")->reason,
            Reason::all_zero_output);
  EXPECT_EQ(output_rejection(Check::correctness, "c", stats(100, 7), Tolerance{}, "w", "x")->reason,
            Reason::wrong_output);
}

TEST(OutputRejection, AntiCachingAndTimedCallsHaveTheirOwnReasons) {
  auto c = output_rejection(Check::anti_caching, "c", stats(100, 7), Tolerance{}, "w", "x");
  EXPECT_EQ(c->check, Check::anti_caching);
  EXPECT_EQ(c->reason, Reason::caching);
  auto t = output_rejection(Check::timed_outputs, "c", stats(100, 100, 100), Tolerance{}, "w", "x", 1 << 24);
  EXPECT_EQ(t->check, Check::timed_outputs);
  EXPECT_EQ(t->reason, Reason::timed_output_wrong);
  EXPECT_NE(t->message.find("checked on a sample of 100 of its 16777216 elements"), std::string::npos) << t->message;
}

TEST(DeterminismRejection, DifferingRunsAreNondeterministic) {
  EXPECT_FALSE(determinism_rejection("c", stats(10, 0), Tolerance{}, "w", "x"));
  auto r = determinism_rejection("c", stats(10, 2), Tolerance{}, "w", "x");
  EXPECT_EQ(r->check, Check::determinism);
  EXPECT_EQ(r->reason, Reason::nondeterministic);
  EXPECT_EQ(determinism_rejection("c", stats(10, 2, 2), Tolerance{}, "w", "x")->reason, Reason::unwritten_output);
}

TEST(TimedSample, TheJudgeLessItsOverheadFlooredAtTheExecutorsOwnTime) {
  EXPECT_DOUBLE_EQ(timed_sample(30e-6, 10e-6, 19e-6), 20e-6);  // the judge's clock, less the calibrated overhead
  EXPECT_DOUBLE_EQ(timed_sample(12e-6, 10e-6, 9e-6), 9e-6);    // over-subtracted (as under MPS): the executor's time
  EXPECT_DOUBLE_EQ(timed_sample(30e-6, 10e-6, 0), 20e-6);      // an executor that reports less changes nothing
  EXPECT_DOUBLE_EQ(timed_sample(5e-6, 10e-6, 0), 1e-9);        // never below 1 ns
  // A PyTorch run's result copy comes off both the judge's reading and the floor.
  EXPECT_DOUBLE_EQ(timed_sample(30e-6, 10e-6, 19e-6, 4e-6), 16e-6);
  EXPECT_DOUBLE_EQ(timed_sample(12e-6, 10e-6, 9e-6, 4e-6), 5e-6);
}

TEST(ClockRejection, HonestExecutorsAgreeWithTheJudge) {
  // Judge 1.06 ms per batch, overhead 50 us: the executor saw 1.0 ms of it.
  std::vector<double> judge(20, 1.06e-3), in(20, 1.0e-3);
  const ClockRule gpu = ClockRule::for_backend("cuda");
  EXPECT_FALSE(clock_rejection(judge, in, 50e-6, 2e-6, gpu, "w"));
}

TEST(ClockRejection, WorkTheExecutorsClockMissedIsNamed) {
  // Work on another stream: the judge saw 1.05 ms, the stream's events 0.1 ms.
  std::vector<double> judge(20, 1.1e-3), in(20, 0.1e-3);
  auto r = clock_rejection(judge, in, 50e-6, 2e-6, ClockRule::for_backend("cuda"), "w3");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->check, Check::timing);
  EXPECT_EQ(r->reason, Reason::timing_disagrees);
  EXPECT_EQ(r->workload, "w3");
  // The same gap is within the bound on a CPU, whose wake-ups can be late by milliseconds...
  EXPECT_FALSE(clock_rejection(judge, in, 50e-6, 2e-6, ClockRule::for_backend("cpu"), "w3"));
  // ...but a CPU clock that saw next to nothing of a long batch is not.
  std::vector<double> long_judge(20, 30e-3), nothing(20, 0.0);
  EXPECT_TRUE(clock_rejection(long_judge, nothing, 50e-6, 2e-6, ClockRule::for_backend("cpu"), "w3"));
}

TEST(ClockRejection, TheMedianDecidesNotOneOutlier) {
  std::vector<double> judge(21, 1.06e-3), in(21, 1.0e-3);
  judge[5] = 20e-3;  // one batch delayed by a busy host
  EXPECT_FALSE(clock_rejection(judge, in, 50e-6, 2e-6, ClockRule::for_backend("cuda"), "w"));
}

TEST(ClockRejection, TheGatedClockAgreesWithHonestEventsAndNamesForgedOnes) {
  // Seen on the H200 (2026-12-03, bench/gate_probe): the gate's latency 293.9 us (MAD 0.7 us); a 23.3 us kernel read
  // 316.5 us between the judge's events and 23.8 us on its own.
  const ClockRule gpu = ClockRule::for_backend("cuda");
  EXPECT_FALSE(
      clock_rejection(std::vector<double>(20, 316.5e-6), std::vector<double>(20, 23.8e-6), 293.9e-6, 0.7e-6, gpu, "w"));
  // The same call with its events forged to 1 ns: 22.6 us the events never saw.
  EXPECT_TRUE(
      clock_rejection(std::vector<double>(20, 316.5e-6), std::vector<double>(20, 1e-9), 293.9e-6, 0.7e-6, gpu, "w"));
  // Under the allowance (a forged clock of a few-microsecond call) it is not named, and gains nothing: the judge's
  // clock is the sample.
  EXPECT_FALSE(
      clock_rejection(std::vector<double>(20, 301.3e-6), std::vector<double>(20, 1e-9), 293.9e-6, 0.7e-6, gpu, "w"));
}

TEST(DrainRejection, WorkLeftRunningAfterTheAnswer) {
  std::vector<double> judge(10, 1e-3);
  EXPECT_FALSE(drain_rejection(std::vector<double>(10, 20e-6), judge, 20e-6, "w"));
  EXPECT_FALSE(drain_rejection(std::vector<double>(10, 190e-6), judge, 20e-6, "w"));  // the switch back, as measured
  auto r = drain_rejection(std::vector<double>(10, 2e-3), judge, 20e-6, "w");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->reason, Reason::work_after_return);
  EXPECT_EQ(r->check, Check::timing);
}

TEST(Plausibility, FasterThanTheDatasheetIsAMeasurementFault) {
  WorkloadTiming t;
  t.workload = "p1";
  t.samples = {1e-6, 1e-6};
  t.summary = summarize(t.samples);
  auto r = plausibility_rejection({t}, {{"p1", 1e-5}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->check, Check::plausibility);
  EXPECT_EQ(r->reason, Reason::faster_than_sol);
  EXPECT_FALSE(plausibility_rejection({t}, {{"p1", 1e-7}}));
  EXPECT_FALSE(plausibility_rejection({t}, {}));
}

TEST(BuildRejection, BuildFailuresAndForbiddenSymbols) {
  BuildResult b;
  b.ok = false;
  EXPECT_EQ(build_rejection(b, {})->reason, Reason::build_error);
  b.timed_out = true;
  EXPECT_EQ(build_rejection(b, {})->reason, Reason::build_timeout);
  b.ok = true;
  b.timed_out = false;
  EXPECT_FALSE(build_rejection(b, {}));
  SymbolViolation v{"socket", "file or network I/O", true, "socket"};
  auto r = build_rejection(b, {v});
  EXPECT_EQ(r->check, Check::build);
  EXPECT_EQ(r->reason, Reason::forbidden_symbol);
  EXPECT_EQ(r->message, "the kernel calls socket: file or network I/O");
}

}  // namespace
}  // namespace khive
