// PyTorch baselines: the times bench/pytorch_baselines.py measured for a suite on one device, used as
// T_b for the SOL score when they exist for the present device (docs/bench.md).
//
//   <suite>/baselines/pytorch-<slug>.json     slug: "h200" | "h100" | sanitized GPU name | "cpu-<sanitized model>"
//   { "schema": "khive.pytorch-baselines/1", "gpu": "h200", "date": "...", "torch": "2.11.0", ...,
//     "tasks": { "<task name>": { "workloads": { "<uuid>": { "median_s": 1.2e-5, "spread": 0.003,
//                                                            "samples": 40, "axes": {"N": 4096}, ... } },
//                                 "error": "..." } } }
//
//   auto pt = find_pytorch_baselines(task, Backend::cuda, "NVIDIA H200");   // nullopt: no file for this device
//   if (pt) if (auto s = pt->lookup(task, "w3")) t_b = s->median;
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "khive/guard/stats.hpp"
#include "khive/task/task.hpp"

namespace khive {

inline constexpr const char* kPytorchBaselinesSchema = "khive.pytorch-baselines/1";

struct PytorchWorkload {
  SampleSummary summary;                // median, rel_spread (the file's "spread"), n, min/p10/p90 when given
  std::map<std::string, int64_t> axes;  // var axes the numbers were measured at (empty: not recorded)
};

struct PytorchBaselines {
  std::filesystem::path file;
  std::string gpu, device, torch, date;
  std::map<std::string, std::map<std::string, PytorchWorkload>> tasks;  // task name -> uuid -> numbers
  std::map<std::string, std::string> errors;                            // task name -> why it has no numbers
  // The numbers for one workload of a task; nullopt when absent, or when they were measured at other
  // var-axis values than the task's workload has now (a stale file must not score a different shape).
  std::optional<SampleSummary> lookup(const Task& task, const std::string& uuid) const;
};

// "h200" / "h100" when the name says so (case-insensitive), else lower-case alphanumerics joined by '_';
// the CPU backend prefixes "cpu-". bench/pytorch_baselines.py uses the same rule.
std::string device_slug(const std::string& device_name, Backend b);
// <suite>/baselines/pytorch-<slug>.json for the task's suite (the task directory's parent).
std::filesystem::path pytorch_baselines_path(const Task& task, Backend b, const std::string& device_name);

// Reads and validates a file. Throws TaskFormatError naming the file and the field:
//   "pytorch-h200.json: tasks.gemm.workloads.w5.median_s: expected a positive number, got -1".
PytorchBaselines load_pytorch_baselines(const std::filesystem::path& file);
// The file for this task and device, loaded; nullopt when it does not exist. A file whose "gpu" is not
// the slug of its name is an error (numbers from another device must not score this one).
std::optional<PytorchBaselines> find_pytorch_baselines(const Task& task, Backend b, const std::string& device_name);

}  // namespace khive
