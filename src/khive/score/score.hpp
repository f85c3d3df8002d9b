// Speed of light and score (docs/architecture.md, glossary: T_sol, score).
//
//   T_sol = max(flops / sol_rate(unit), bytes / bandwidth)      sol_rate(fp32) counts 3xTF32 on tensor cores
//   S     = (T_b - T_sol) / ((T_k - T_sol) + (T_b - T_sol))     0.5 = as fast as the baseline, 1 = SOL
//
//   HardwareProfile h = builtin_profile("NVIDIA H200").value();
//   double t = sol_seconds(task, resolve_axes(task, w), h, /*measured=*/true);   // uses task.cost.unit
//   std::optional<double> s = sol_score(t_kernel, t_baseline, t);
//
// Profile JSON (profile_to_json / save_profile / load_profile); units keyed by compute_unit_name:
//   { "name": "NVIDIA H200", "source": "...",
//     "peak_flops": {"bf16": 9.894e14, ...}, "peak_bandwidth": 4.8e12,          (required, > 0)
//     "measured_flops": {"bf16": 7.9e14, ...}, "measured_bandwidth": 4.25e12 }  (optional; 0 = not measured)
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "khive/task/task.hpp"

namespace khive {

struct HardwareProfile {
  std::string name;    // "NVIDIA H200", "cpu:AMD EPYC 7B13 (2 threads)"
  std::string source;  // "builtin (datasheet + H200 measurements)", "khive calibrate 2026-11-30T..."
  // Datasheet peaks (dense), FLOP/s per unit and bytes/s. Used for plausibility (nothing can beat them).
  std::map<ComputeUnit, double> peak_flops;
  double peak_bandwidth = 0;
  // Measured ceilings (copy bandwidth counting read + write; best library matrix rate per unit). Used
  // for T_sol in the score; a unit without a measurement falls back to its peak.
  std::map<ComputeUnit, double> measured_flops;
  double measured_bandwidth = 0;                         // 0 = not measured
  double flops_for(ComputeUnit u, bool measured) const;  // 0 when unknown
  double bandwidth(bool measured) const;
};

// Matches "H200" or "H100" anywhere in the device name, case-insensitively, and returns the SXM datasheet
// numbers (a PCIe/NVL part gets the SXM peaks: an upper bound, safe for plausibility). H200 also carries the
// measurements on the lent H200 (copy, bf16, tf32, fp32); H100 has none. name = device_name as given.
std::optional<HardwareProfile> builtin_profile(const std::string& device_name);
// Throws TaskFormatError naming the file and the field: "profile.json: peak_flops.bf16: expected a positive
// number, got -1". Unknown unit keys are errors; unknown top-level keys are ignored.
HardwareProfile load_profile(const std::filesystem::path& json);
void save_profile(const HardwareProfile& p, const std::filesystem::path& json);  // atomic (tmp + rename)
std::string profile_to_json(const HardwareProfile& p);

// The fastest rate at which a kernel can compute the unit's products to the unit's accuracy: the unit's own rate,
// and for fp32 also a third of the TF32 tensor rate, because 3xTF32 (each operand split into a TF32 high and low
// part, three tensor-core products) is fp32-accurate. Measured on the H100, 2026-12-07: a 3xTF32 GEMM of 2048 x
// 4096 x 8192 ran at 71 TFLOP/s, above the 67 TFLOP/s fp32 datasheet peak (docs/results/2026-12-07-h100-s11).
// 0 when the profile has no rate for it.
double sol_rate(const HardwareProfile& h, ComputeUnit unit, bool measured);

// Seconds at the speed of light for one workload: max(flops / sol_rate(unit), bytes / bandwidth), measured
// ceilings where present (measured = true), else datasheet. 0 when the profile lacks the needed rate
// (flops > 0 without a rate for the unit, or bytes > 0 without a bandwidth).
double sol_seconds(const WorkloadCost& c, ComputeUnit unit, const HardwareProfile& h, bool measured);

// Check 10's floor, the least time any kernel can take: the FLOPs at the chip's fastest datasheet rate of any unit
// (products of one precision can be carried by another's tensor cores: 3xTF32 and bf16x9 for fp32, Ozaki-style int8
// splits for fp64, and a task's tolerance may admit cheaper splits still), the bytes at the datasheet bandwidth.
// A floor from the task's own unit rejected an honest 3xTF32 GEMM (2026-12-07). 0 when the profile lacks a rate.
double floor_seconds(const WorkloadCost& c, const HardwareProfile& h);
// The task's cost formulas at resolved axes, with the task's unit.
double sol_seconds(const Task& t, const std::map<std::string, int64_t>& axes, const HardwareProfile& h, bool measured);
// WorkloadCost carries no unit: this form assumes CostModel's default unit (fp32). Prefer the forms above.
double sol_seconds(const WorkloadCost& c, const HardwareProfile& h, bool measured);

// The score's T_sol (issue 14, aligned with SOL-ExecBench): the roofline of the datasheet peaks, which no kernel can
// beat. A T_sol from the calibrated ceilings was beaten by kernels (a kernel at 1.018x PyTorch scored 1.000 and one
// at 0.997x 0.437 on the same H200 bench: the score was noise where PyTorch sits at the roofline); with the datasheet,
// T_b - T_sol stays positive and a kernel as fast as PyTorch scores 0.5. Equals sol_seconds(c, unit, h, false).
double score_t_sol(const WorkloadCost& c, ComputeUnit unit, const HardwareProfile& h);
double score_t_sol(const Task& t, const std::map<std::string, int64_t>& axes, const HardwareProfile& h);
// The separate "calibrated" column: the fraction of the calibrated ceilings a kernel reaches, T_sol(measured) / T_k
// (may exceed 1: a ceiling measured with a library is not a bound). nullopt when either time is not positive.
std::optional<double> calibrated_fraction(double t_kernel, const WorkloadCost& c, ComputeUnit unit,
                                          const HardwareProfile& h);

// SOL-ExecBench score; nullopt when undefined (baseline at or below T_sol, or any time <= 0 / not finite).
// A kernel time under T_sol counts as T_sol (score 1). Clamped to [0, 1].
std::optional<double> sol_score(double t_kernel, double t_baseline, double t_sol);

struct WorkloadScoreInput {
  double weight = 1;
  bool passed = false;
  double t_kernel = 0, t_sol = 0;
  std::optional<double> t_baseline;
};
// Weighted mean of sol_score over perf workloads (pass only perf workloads); any failed workload -> 0.
// Workloads without a baseline, with an undefined score or with weight <= 0 are left out of the mean;
// nullopt if none is left.
std::optional<double> task_score(const std::vector<WorkloadScoreInput>& ws);

}  // namespace khive
