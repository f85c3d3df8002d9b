// Speed of light and score (DESIGN.md, "Score").
//
//   T_sol = max(flops / peak(unit), bytes / bandwidth)
//   S     = (T_b - T_sol) / ((T_k - T_sol) + (T_b - T_sol))     0.5 = as fast as the baseline, 1 = SOL
//
//   HardwareProfile h = builtin_profile("NVIDIA H200").value();
//   double t = sol_seconds(cost, h, /*use_measured=*/true);
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "khive/task/task.hpp"

namespace khive {

struct HardwareProfile {
  std::string name;        // "NVIDIA H200", "cpu:AMD EPYC 7B13 (2 threads)"
  std::string source;      // "builtin (datasheet + FIELD-NOTES measurements)", "khive calibrate 2026-11-30T..."
  // Datasheet peaks (dense), FLOP/s per unit and bytes/s. Used for plausibility (nothing can beat them).
  std::map<ComputeUnit, double> peak_flops;
  double peak_bandwidth = 0;
  // Measured ceilings (copy bandwidth counting read + write; best library matrix rate per unit). Used
  // for T_sol in the score; a unit without a measurement falls back to its peak.
  std::map<ComputeUnit, double> measured_flops;
  double measured_bandwidth = 0;   // 0 = not measured
  double flops_for(ComputeUnit u, bool measured) const;   // 0 when unknown
  double bandwidth(bool measured) const;
};

std::optional<HardwareProfile> builtin_profile(const std::string& device_name);   // H200, H100 (SXM)
HardwareProfile load_profile(const std::filesystem::path& json);    // throws TaskFormatError-like errors
void save_profile(const HardwareProfile& p, const std::filesystem::path& json);
std::string profile_to_json(const HardwareProfile& p);

// Seconds at the speed of light for one workload; 0 when the profile lacks the needed rate.
double sol_seconds(const WorkloadCost& c, const HardwareProfile& h, bool measured);

// SOL-ExecBench score; nullopt when undefined (baseline at or below T_sol). Clamped to [0, 1].
std::optional<double> sol_score(double t_kernel, double t_baseline, double t_sol);

struct WorkloadScoreInput {
  double weight = 1;
  bool passed = false;
  double t_kernel = 0, t_sol = 0;
  std::optional<double> t_baseline;
};
// Weighted mean over perf workloads; any failed workload -> 0; nullopt if no workload has a score.
std::optional<double> task_score(const std::vector<WorkloadScoreInput>& ws);

}  // namespace khive
