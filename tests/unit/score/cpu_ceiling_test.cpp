// The CPU's issue-width ceiling (check 10's floor on the CPU backend), tested with synthetic cores.
#include <gtest/gtest.h>

#include "khive/score/cpu_ceiling.hpp"

namespace khive {
namespace {

TEST(CpuCeiling, IssueWidthArithmetic) {
  const HardwareProfile c = cpu_core_ceiling({16, 3.0, "test"}, 2);
  // 2 threads x 3e9 cycles x 2 FMA units x 16 lanes x 2 flops
  EXPECT_DOUBLE_EQ(c.peak_flops.at(ComputeUnit::fp32), 384e9);
  EXPECT_DOUBLE_EQ(c.peak_flops.at(ComputeUnit::fp64), 192e9);
  EXPECT_DOUBLE_EQ(c.peak_flops.at(ComputeUnit::tc_bf16), 768e9);
  // 2 threads x 3e9 cycles x 3 accesses x 16 lanes x 4 bytes
  EXPECT_DOUBLE_EQ(c.peak_bandwidth, 1.152e12);
  EXPECT_DOUBLE_EQ(cpu_core_ceiling({8, 2.0, "avx2"}, 0).peak_bandwidth, 2e9 * 3 * 8 * 4);  // 0 threads: one
}

// A calibration taken on a busy machine (0.3 GB/s, 4.5 GFLOP/s peaks, as seen with a parallel build on two cores)
// would put a 16 MiB vector add's floor at 56 ms; with the ceiling its floor is well under what any honest kernel
// takes (about 44 us at 1.15 TB/s, where an honest one takes milliseconds), while the measured rates (T_sol for the
// score) are left as they were.
TEST(CpuCeiling, ABusyCalibrationNoLongerSetsTheFloor) {
  HardwareProfile busy;
  busy.peak_bandwidth = 0.319e9;
  busy.peak_flops = {{ComputeUnit::fp32, 4.47e9}, {ComputeUnit::fp64, 2.33e9}};
  busy.measured_bandwidth = 0.213e9;
  busy.measured_flops = {{ComputeUnit::fp32, 2.98e9}};
  WorkloadCost cost;
  cost.bytes = 3.0 * 4 * (1 << 22);  // c = a + b over 4 Mi floats
  cost.flops = 1 << 22;
  const double old_floor = sol_seconds(cost, ComputeUnit::fp32, busy, false);
  EXPECT_GT(old_floor, 0.03);
  const HardwareProfile floor_profile = with_ceiling_peaks(busy, cpu_core_ceiling({16, 3.0, "test"}, 2));
  const double floor = sol_seconds(cost, ComputeUnit::fp32, floor_profile, false);
  EXPECT_LT(floor, 50e-6);
  EXPECT_DOUBLE_EQ(floor_profile.measured_bandwidth, busy.measured_bandwidth);
  EXPECT_DOUBLE_EQ(sol_seconds(cost, ComputeUnit::fp32, floor_profile, true),
                   sol_seconds(cost, ComputeUnit::fp32, busy, true));
  // A profile already above the ceiling (a datasheet) keeps its own peaks.
  HardwareProfile big = busy;
  big.peak_bandwidth = 5e12;
  EXPECT_DOUBLE_EQ(with_ceiling_peaks(big, cpu_core_ceiling({16, 3.0, "test"}, 2)).peak_bandwidth, 5e12);
}

TEST(CpuCeiling, TheHostIsReadAsOneOfTheKnownWidths) {
  const CpuCore c = cpu_core_from_host();
  EXPECT_TRUE(c.lanes32 == 4 || c.lanes32 == 8 || c.lanes32 == 16) << c.source;
  EXPECT_GT(c.ghz, 0.5) << c.source;
  EXPECT_LT(c.ghz, 10.0) << c.source;
  EXPECT_FALSE(c.source.empty());
}

}  // namespace
}  // namespace khive
