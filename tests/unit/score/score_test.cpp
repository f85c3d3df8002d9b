// Speed of light, the SOL-ExecBench score and the task score.
#include <gtest/gtest.h>

#include <cmath>

#include "khive/score/score.hpp"

namespace khive {
namespace {

HardwareProfile toy() {
  HardwareProfile h;
  h.name = "toy";
  h.peak_flops = {{ComputeUnit::fp32, 100.0}, {ComputeUnit::tc_bf16, 1000.0}};
  h.peak_bandwidth = 50.0;
  h.measured_flops = {{ComputeUnit::fp32, 80.0}};
  h.measured_bandwidth = 40.0;
  return h;
}

TEST(HardwareProfile, MeasuredFallsBackToPeak) {
  HardwareProfile h = toy();
  EXPECT_DOUBLE_EQ(h.flops_for(ComputeUnit::fp32, true), 80.0);
  EXPECT_DOUBLE_EQ(h.flops_for(ComputeUnit::fp32, false), 100.0);
  EXPECT_DOUBLE_EQ(h.flops_for(ComputeUnit::tc_bf16, true), 1000.0);  // no measurement
  EXPECT_DOUBLE_EQ(h.flops_for(ComputeUnit::tc_fp8, true), 0.0);      // unknown
  EXPECT_DOUBLE_EQ(h.bandwidth(true), 40.0);
  EXPECT_DOUBLE_EQ(h.bandwidth(false), 50.0);
  h.measured_bandwidth = 0;
  EXPECT_DOUBLE_EQ(h.bandwidth(true), 50.0);
}

TEST(BuiltinProfile, H200) {
  auto h = builtin_profile("NVIDIA H200");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->name, "NVIDIA H200");
  EXPECT_FALSE(h->source.empty());
  EXPECT_DOUBLE_EQ(h->peak_flops.at(ComputeUnit::tc_bf16), 989.4e12);
  EXPECT_DOUBLE_EQ(h->peak_flops.at(ComputeUnit::tc_fp16), 989.4e12);
  EXPECT_DOUBLE_EQ(h->peak_flops.at(ComputeUnit::tc_tf32), 494.7e12);
  EXPECT_DOUBLE_EQ(h->peak_flops.at(ComputeUnit::tc_fp8), 1978.9e12);
  EXPECT_DOUBLE_EQ(h->peak_flops.at(ComputeUnit::tc_int8), 1978.9e12);
  EXPECT_DOUBLE_EQ(h->peak_flops.at(ComputeUnit::fp32), 66.9e12);
  EXPECT_DOUBLE_EQ(h->peak_flops.at(ComputeUnit::fp64), 66.9e12);
  EXPECT_DOUBLE_EQ(h->peak_bandwidth, 4.8e12);
  EXPECT_DOUBLE_EQ(h->bandwidth(true), 4.25e12);
  EXPECT_DOUBLE_EQ(h->flops_for(ComputeUnit::tc_bf16, true), 790e12);
  EXPECT_DOUBLE_EQ(h->flops_for(ComputeUnit::tc_tf32, true), 357e12);
  EXPECT_DOUBLE_EQ(h->flops_for(ComputeUnit::fp32, true), 51e12);
  // fp16's 655 TFLOP/s was PyTorch's, not a ceiling: datasheet.
  EXPECT_DOUBLE_EQ(h->flops_for(ComputeUnit::tc_fp16, true), 989.4e12);
  EXPECT_DOUBLE_EQ(h->flops_for(ComputeUnit::tc_fp8, true), 1978.9e12);
  EXPECT_EQ(h->measured_flops.count(ComputeUnit::tc_fp16), 0u);
}

TEST(BuiltinProfile, H100AndMatching) {
  auto h = builtin_profile("nvidia h100 80gb hbm3");
  ASSERT_TRUE(h);
  EXPECT_DOUBLE_EQ(h->peak_bandwidth, 3.35e12);
  EXPECT_DOUBLE_EQ(h->peak_flops.at(ComputeUnit::tc_bf16), 989.4e12);
  EXPECT_TRUE(h->measured_flops.empty());
  EXPECT_DOUBLE_EQ(h->measured_bandwidth, 0.0);
  EXPECT_DOUBLE_EQ(h->bandwidth(true), 3.35e12);
  EXPECT_TRUE(builtin_profile("NVIDIA H200 NVL"));
  EXPECT_FALSE(builtin_profile("NVIDIA A100-SXM4-80GB"));
  EXPECT_FALSE(builtin_profile(""));
}

TEST(SolSeconds, MemoryBound) {
  HardwareProfile h = toy();
  // 10 flops, 400 bytes: compute 10/80 = 0.125 s, memory 400/40 = 10 s.
  EXPECT_DOUBLE_EQ(sol_seconds(WorkloadCost{10, 400}, ComputeUnit::fp32, h, true), 10.0);
  EXPECT_DOUBLE_EQ(sol_seconds(WorkloadCost{10, 400}, ComputeUnit::fp32, h, false), 8.0);
  EXPECT_DOUBLE_EQ(sol_seconds(WorkloadCost{0, 400}, ComputeUnit::tc_fp8, h, true), 10.0);  // no flops, no rate needed
}

TEST(SolSeconds, ComputeBound) {
  HardwareProfile h = toy();
  EXPECT_DOUBLE_EQ(sol_seconds(WorkloadCost{8000, 40}, ComputeUnit::fp32, h, true), 100.0);
  EXPECT_DOUBLE_EQ(sol_seconds(WorkloadCost{8000, 40}, ComputeUnit::fp32, h, false), 80.0);
  EXPECT_DOUBLE_EQ(sol_seconds(WorkloadCost{8000, 40}, ComputeUnit::tc_bf16, h, true), 8.0);
  EXPECT_DOUBLE_EQ(sol_seconds(WorkloadCost{8000, 0}, ComputeUnit::fp32, h, true), 100.0);
  // The unit-less form assumes fp32.
  EXPECT_DOUBLE_EQ(sol_seconds(WorkloadCost{8000, 40}, h, true), 100.0);
}

TEST(SolSeconds, MissingRateGivesZero) {
  HardwareProfile h = toy();
  EXPECT_EQ(sol_seconds(WorkloadCost{1000, 40}, ComputeUnit::tc_fp8, h, true), 0.0);
  HardwareProfile nobw = toy();
  nobw.peak_bandwidth = 0;
  nobw.measured_bandwidth = 0;
  EXPECT_EQ(sol_seconds(WorkloadCost{1000, 40}, ComputeUnit::fp32, nobw, true), 0.0);
  EXPECT_DOUBLE_EQ(sol_seconds(WorkloadCost{1000, 0}, ComputeUnit::fp32, nobw, true), 12.5);
  EXPECT_EQ(sol_seconds(WorkloadCost{0, 0}, ComputeUnit::fp32, h, true), 0.0);
}

// fp32 products are fp32-accurate through 3xTF32: the fp32 rate is at least a third of the TF32 rate.
TEST(SolRate, Fp32ThroughThreeTf32) {
  HardwareProfile h = toy();
  EXPECT_DOUBLE_EQ(sol_rate(h, ComputeUnit::fp32, false), 100.0);  // no TF32 rate: the fp32 one
  h.peak_flops[ComputeUnit::tc_tf32] = 600.0;
  EXPECT_DOUBLE_EQ(sol_rate(h, ComputeUnit::fp32, false), 200.0);
  EXPECT_DOUBLE_EQ(sol_rate(h, ComputeUnit::fp32, true), 200.0);  // no measured TF32: its peak, over fp32's 80
  h.measured_flops[ComputeUnit::tc_tf32] = 150.0;
  EXPECT_DOUBLE_EQ(sol_rate(h, ComputeUnit::fp32, true), 80.0);        // measured 150 / 3 = 50 < 80
  EXPECT_DOUBLE_EQ(sol_rate(h, ComputeUnit::tc_bf16, false), 1000.0);  // other units: their own rate
  EXPECT_DOUBLE_EQ(sol_seconds(WorkloadCost{8000, 40}, ComputeUnit::fp32, h, false), 40.0);
}

// The H100's datasheet: an fp32 GEMM at 71 TFLOP/s (the 3xTF32 kernel of 2026-12-07) is above the fp32 peak but
// under T_sol, and far above check 10's floor.
TEST(SolRate, H100ThreeTf32GemmUnderTheSpeedOfLight) {
  const auto h = builtin_profile("NVIDIA H100 80GB HBM3").value();
  const WorkloadCost c{2.0 * 2048 * 4096 * 8192, 4.0 * (2048 * 8192 + 8192 * 4096 + 2048 * 4096)};
  const double t_kernel = c.flops / 71e12;
  EXPECT_GT(c.flops / h.flops_for(ComputeUnit::fp32, false), t_kernel);  // the fp32 peak alone is beaten
  EXPECT_GT(t_kernel, sol_seconds(c, ComputeUnit::fp32, h, false));
  EXPECT_NEAR(sol_seconds(c, ComputeUnit::fp32, h, false), c.flops / (494.7e12 / 3), 1e-9);
  EXPECT_GT(t_kernel, 10 * floor_seconds(c, h));
}

// Check 10's floor: the fastest rate of any unit, the datasheet bandwidth, never the measured ceilings.
TEST(FloorSeconds, FastestUnitAndDatasheet) {
  HardwareProfile h = toy();
  EXPECT_DOUBLE_EQ(floor_seconds(WorkloadCost{8000, 40}, h), 8.0);  // 8000 / 1000 (bf16) > 40 / 50
  EXPECT_DOUBLE_EQ(floor_seconds(WorkloadCost{10, 400}, h), 8.0);   // 400 / 50, not the measured 40
  EXPECT_LE(floor_seconds(WorkloadCost{8000, 40}, h),
            sol_seconds(WorkloadCost{8000, 40}, ComputeUnit::tc_bf16, h, false));
  HardwareProfile none;
  none.peak_bandwidth = 50.0;
  EXPECT_EQ(floor_seconds(WorkloadCost{8000, 40}, none), 0.0);  // flops without any rate: no floor
  EXPECT_DOUBLE_EQ(floor_seconds(WorkloadCost{0, 400}, none), 8.0);
}

TEST(SolSeconds, H200Gemm) {
  auto h = builtin_profile("NVIDIA H200").value();
  const double n = 8192;
  WorkloadCost c{2 * n * n * n, 2 * 3 * n * n};  // bf16 GEMM
  EXPECT_NEAR(sol_seconds(c, ComputeUnit::tc_bf16, h, true), 2 * n * n * n / 790e12, 1e-12);
  EXPECT_NEAR(sol_seconds(c, ComputeUnit::tc_bf16, h, false), 2 * n * n * n / 989.4e12, 1e-12);
}

TEST(SolScore, AsFastAsBaselineIsHalf) {
  EXPECT_DOUBLE_EQ(sol_score(2.0, 2.0, 1.0).value(), 0.5);
  EXPECT_DOUBLE_EQ(sol_score(7e-3, 7e-3, 1e-3).value(), 0.5);
}

TEST(SolScore, AtSpeedOfLightIsOne) {
  EXPECT_DOUBLE_EQ(sol_score(1.0, 3.0, 1.0).value(), 1.0);
  EXPECT_DOUBLE_EQ(sol_score(0.5, 3.0, 1.0).value(), 1.0);  // under T_sol counts as at T_sol
}

TEST(SolScore, Formula) {
  // T_b - T_sol = 2, T_k - T_sol = 1 -> 2 / 3; slower than the baseline -> below 0.5.
  EXPECT_NEAR(sol_score(2.0, 3.0, 1.0).value(), 2.0 / 3.0, 1e-15);
  EXPECT_NEAR(sol_score(5.0, 3.0, 1.0).value(), 2.0 / 6.0, 1e-15);
  double s = sol_score(1e6, 3.0, 1.0).value();
  EXPECT_GE(s, 0.0);
  EXPECT_LT(s, 1e-5);
}

TEST(SolScore, Undefined) {
  EXPECT_FALSE(sol_score(2.0, 1.0, 1.0));  // baseline at SOL
  EXPECT_FALSE(sol_score(2.0, 0.5, 1.0));  // baseline under SOL
  EXPECT_FALSE(sol_score(0.0, 3.0, 1.0));
  EXPECT_FALSE(sol_score(-1.0, 3.0, 1.0));
  EXPECT_FALSE(sol_score(2.0, 3.0, 0.0));  // no SOL (profile lacked the rate)
  EXPECT_FALSE(sol_score(2.0, 3.0, -1.0));
  EXPECT_FALSE(sol_score(NAN, 3.0, 1.0));
  EXPECT_FALSE(sol_score(2.0, INFINITY, 1.0));
}

TEST(TaskScore, WeightedMean) {
  std::vector<WorkloadScoreInput> ws = {
      {1.0, true, 2.0, 1.0, 2.0},  // 0.5
      {3.0, true, 1.0, 1.0, 3.0},  // 1.0
  };
  EXPECT_DOUBLE_EQ(task_score(ws).value(), (0.5 * 1 + 1.0 * 3) / 4);
}

TEST(TaskScore, FailedWorkloadIsZero) {
  std::vector<WorkloadScoreInput> ws = {
      {1.0, true, 1.0, 1.0, 3.0},
      {1.0, false, 1.0, 1.0, 3.0},
  };
  EXPECT_EQ(task_score(ws), 0.0);
  EXPECT_EQ(task_score({{1.0, false, 0, 0, std::nullopt}}), 0.0);
}

TEST(TaskScore, UnscoredWorkloadsAreLeftOut) {
  std::vector<WorkloadScoreInput> ws = {
      {1.0, true, 2.0, 1.0, 2.0},           // 0.5
      {5.0, true, 2.0, 1.0, std::nullopt},  // no baseline
      {5.0, true, 2.0, 1.0, 0.5},           // baseline under SOL: undefined
      {0.0, true, 1.0, 1.0, 3.0},           // weight 0
  };
  EXPECT_DOUBLE_EQ(task_score(ws).value(), 0.5);
  EXPECT_FALSE(task_score({}));
  EXPECT_FALSE(task_score({{1.0, true, 2.0, 1.0, std::nullopt}}));
}

}  // namespace
}  // namespace khive

namespace khive {
namespace {

// Issue 14: the score's T_sol is the datasheet roofline; the calibrated ceilings give a separate fraction.
TEST(ScoreTsol, DatasheetNotCalibrated) {
  HardwareProfile h = builtin_profile("NVIDIA H200").value();
  WorkloadCost c{0, 4.8e9};  // 4.8 GB moved: 1 ms at the 4.8 TB/s datasheet, more at the measured copy rate
  double t_sheet = score_t_sol(c, ComputeUnit::fp32, h);
  EXPECT_DOUBLE_EQ(t_sheet, sol_seconds(c, ComputeUnit::fp32, h, false));
  EXPECT_NEAR(t_sheet, 1e-3, 1e-9);
  double t_cal = sol_seconds(c, ComputeUnit::fp32, h, true);
  EXPECT_GT(t_cal, t_sheet);
  // PyTorch at the calibrated copy rate; a kernel 0.3 % faster and one 0.3 % slower: both score about 0.5,
  // where the calibrated T_sol (which the faster kernel beats) gave 1.0 and something far below 0.5.
  double t_b = t_cal * 1.002;  // PyTorch 0.2 % from the measured copy ceiling
  auto fast = sol_score(t_b * 0.997, t_b, t_sheet);
  auto slow = sol_score(t_b * 1.003, t_b, t_sheet);
  ASSERT_TRUE(fast && slow);
  EXPECT_NEAR(*fast, 0.5, 0.01);
  EXPECT_NEAR(*slow, 0.5, 0.01);
  ASSERT_TRUE(sol_score(t_b * 0.997, t_b, t_cal) && sol_score(t_b * 1.003, t_b, t_cal));
  EXPECT_DOUBLE_EQ(*sol_score(t_b * 0.997, t_b, t_cal), 1.0);  // beats the calibrated "speed of light"
  EXPECT_LT(*sol_score(t_b * 1.003, t_b, t_cal), 0.45);        // and 0.6 % slower drops far below 0.5
  auto frac = calibrated_fraction(t_b * 0.997, c, ComputeUnit::fp32, h);
  ASSERT_TRUE(frac);
  EXPECT_NEAR(*frac, t_cal / (t_b * 0.997), 1e-9);
  EXPECT_FALSE(calibrated_fraction(0, c, ComputeUnit::fp32, h));
}

}  // namespace
}  // namespace khive
