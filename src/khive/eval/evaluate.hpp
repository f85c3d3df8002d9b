// The evaluation pipeline behind `khive eval` (and every candidate the hive tries):
//   build the kernel -> symbol scan (check 1) -> build the reference -> one judge process (checks 2-9, and 11
//   against a leader: the judge starts the kernel's, the leader's and the reference's executors and makes the
//   goldens it lacks) -> plausibility (10) -> timings of reference and baselines (their own judges) -> score.
//
//   EvalOptions o; o.backend = Backend::cpu;
//   EvalReport r = evaluate_kernel(task, "kernels/fast.cpp", o);
//   r.verdict.accepted; r.workloads[i].speedup_vs_reference; r.task_score
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/compile/builder.hpp"
#include "khive/guard/checks.hpp"
#include "khive/guard/stats.hpp"
#include "khive/job/launcher.hpp"
#include "khive/job/protocol.hpp"
#include "khive/score/score.hpp"
#include "khive/task/task.hpp"

namespace khive {

struct MeasuredRuns;

// How the judge runs one kernel (job/protocol.hpp, job/launcher.hpp).
struct JudgeRunOptions {
  double timeout_s = 120;            // the longest one call of a kernel (or of the reference) may take
  std::string cuda_visible_devices;  // the device slot ("0"); empty = inherit
  int omp_threads = 0;               // 0 = all cores
  int64_t cpu_memory_limit = 0;      // executors' RLIMIT_AS on the CPU backend; 0 = 3/4 of physical memory
  SandboxOptions sandbox;
  JudgeOptions process;  // binaries, the judge's own watchdog
};

struct EvalOptions {
  Backend backend = Backend::cpu;
  int seeds = 3;                            // fresh correctness seeds per workload
  std::optional<uint64_t> seed;             // fixed seed base (reproducible); default: random per evaluation
  std::optional<std::string> input_secret;  // every input's secret, 64 hex digits (run-wide in the hive and bench);
                                            // default: random per evaluation
  TimingPlan timing;
  bool time_reference = true;  // time the reference (speedup over it)
  bool time_baselines = true;  // time the task's baselines (score's T_b)
  bool use_pytorch = true;     // T_b from PyTorch where it has a time for the workload (below)
  // PyTorch's time: the task's PyTorch reference ("reference" in definition.json) timed by a judge of its own, on the
  // same clock as every kernel (python/khive_torch/timed.py), with time_baselines; else (and where torch is missing
  // here, or the run fails) the numbers of <suite>/baselines/pytorch-<device>.json. Default (nullopt): on the GPU, and
  // on the CPU for a task whose only reference is PyTorch (no suite file has its numbers).
  std::optional<bool> pytorch_on_judge;
  // The kernel under test is the task's PyTorch reference itself (nothing is built; `kernel` is only a label): how
  // `khive bench` and the hive measure a task whose only reference is PyTorch.
  bool candidate_pytorch = false;
  // The kernel under test is the task's reference: its run is also the report's reference (speedups of 1, and the
  // scores' T_b where no baseline or PyTorch time is known) instead of a second run of the same kernel.
  bool candidate_is_reference = false;
  // Reference and baseline runs measured before for this task and backend (khive bench: once per task),
  // used instead of timing them again; time_reference and time_baselines are then ignored.
  std::shared_ptr<const MeasuredRuns> measured;
  std::optional<std::filesystem::path> leader;  // A/B acceptance against this kernel (check 11)
  bool leader_is_vendor = false;  // the leader is a vendor baseline: built as one (it may link cuBLAS(Lt))
  std::optional<std::filesystem::path> profile;  // hardware profile JSON; default: saved/builtin/calibrated
  double plausibility_margin = 0.05;             // a median below peak-SOL * (1 - margin) is rejected
  AbRule ab;                                     // check 11's test (guard/stats.hpp)
  BuildOptions build;
  JudgeRunOptions judge;
};

struct KernelRun {    // one kernel through the guard
  std::string label;  // "candidate", "reference", "baseline:cublas"
  std::filesystem::path source;
  BuildResult build;
  Verdict verdict;
  double guard_seconds = 0;   // wall time of the guard's own work (the judge process minus the kernel's calls)
  double golden_seconds = 0;  // the reference's calls that made goldens inside this judge
};

struct MeasuredRuns {
  std::optional<KernelRun> reference;
  std::vector<KernelRun> baselines;
  std::optional<KernelRun> pytorch;  // the PyTorch reference timed on the judge's clock
};

struct WorkloadReport {
  std::string workload;
  double weight = 1;
  WorkloadCost cost;
  double t_sol = 0;    // measured ceilings
  double t_floor = 0;  // datasheet peaks (plausibility)
  std::optional<SampleSummary> kernel, reference;
  std::optional<SampleSummary> pytorch;  // PyTorch on this device (bench/pytorch_baselines.py); T_b when present
  std::map<std::string, SampleSummary> baselines;
  std::optional<double> baseline_time;  // T_b: fastest baseline (or the reference when there is none)
  std::string baseline_label;
  std::optional<double> fraction_of_sol, speedup_vs_reference, score;
  std::optional<double> speedup_vs_pytorch;
  std::map<std::string, double> speedup_vs_baseline;
};

struct AbReport {
  std::string workload;
  AbTest test;
  AbTest events;                        // the same test on the executors' own clocks (check 11 needs both)
  bool faster = false, slower = false;  // by decide_leader's rule
  double holm_threshold = 0;
};

struct EvalReport {
  std::string task, task_dir, kernel, backend;
  std::string device;
  HardwareProfile profile;
  nlohmann::json preflight;
  nlohmann::json clocks;  // nvidia-smi reading at the start (CUDA)
  KernelRun candidate;
  std::optional<KernelRun> reference;
  std::vector<KernelRun> baselines;
  std::optional<KernelRun> pytorch;  // the task's PyTorch reference timed as a kernel (label "pytorch"), when it ran
  std::vector<WorkloadReport> workloads;
  std::optional<double> task_score;
  std::vector<AbReport> ab;        // when a leader was given
  std::optional<bool> new_leader;  // check 11 outcome
  std::string ab_decision;         // check 11: why (decide_leader)
  double ab_weighted_ratio = 1;    // check 11: weighted geometric mean of the ratios (> 1: candidate faster)
  std::map<std::string, std::vector<double>> leader_samples;  // check 11: the leader's samples per workload
  uint64_t seed_base = 0;
  double seconds = 0;
  double golden_seconds = 0;  // building the reference, and its calls that made the goldens that were missing
  // Where PyTorch's times came from: {"ruler": "judge", torch, accepted, why} (timed here), or {"ruler": "file",
  // file, gpu, torch, date} (the suite's file); null when none.
  nlohmann::json pytorch_baselines;
  std::string harness_error;  // set when the harness itself failed (exit code 2)
  std::string cache_pruned;   // set when this evaluation pruned the cache: cache::PruneResult::summary()
  bool ab_failed = false;     // check 11 failed in the harness (harness_error says how)
  bool retried = false;       // a harness error (an executor killed from outside) was retried once
  bool accepted() const { return harness_error.empty() && candidate.verdict.accepted; }  // a backup is accepted too
};

EvalReport evaluate_kernel(const Task& task, const std::filesystem::path& kernel, const EvalOptions& o);

// The task as its vendor baselines are built and scanned: the same task with every vendor library a
// policy may allow (cublas, cublasLt) allowed. Baselines are the task author's files (definition
// "baselines"), never an agent's, and they exist to call the vendor library; candidates keep the task's
// own policy (normally none), so allowing cuBLAS to a baseline opens nothing to candidates.
Task baseline_task(const Task& task);

// The stable JSON form (docs/eval-json.md) and the human table.
nlohmann::json report_json(const EvalReport& r);
std::string report_text(const EvalReport& r);

// Hardware profile for a device name: --profile file, else a saved calibration under
// <cache>/profiles, else the builtin one (H100/H200); the CPU backend calibrates once and saves.
HardwareProfile resolve_profile(Backend b, const std::string& device_name,
                                const std::optional<std::filesystem::path>& explicit_path, const JudgeRunOptions& ro);

}  // namespace khive
