// Scores of a recorded run recomputed under today's T_b rule and a given hardware profile, from the per-workload
// medians the run database keeps; the run is read, never changed.
//
//   HardwareProfile h200 = load_profile("docs/results/.../profile-h200.json");
//   Rescore r = rescore_run(".khive/runs/softmax-1", "tasks/sol/softmax", h200);
//   for (auto& c : r.candidates) std::cout << c.id << " " << c.recorded.value_or(-1) << " -> " <<
//   c.rescored.value_or(-1);
//
// T_b per perf workload: PyTorch on the profile's device where the task's suite has its numbers
// (<suite>/baselines/pytorch-<gpu>.json), else the run's reference median (vendor baseline times are not recorded
// in a run). T_sol: from the task's cost and the profile's measured ceilings, as the guard computes it. Why: runs
// made before the hive scored against PyTorch (67ab385) recorded scores against the reference or a vendor
// baseline; this puts them on the scale khive eval and khive bench use.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "khive/score/score.hpp"
#include "khive/verdict/verdict.hpp"

namespace khive {

struct RescoredCandidate {
  std::string id;
  Standing standing = Standing::backup;
  double time_s = 0;               // as recorded (weighted geometric mean of the perf medians)
  std::optional<double> recorded;  // the score the run recorded
  std::optional<double> rescored;  // against T_b below
};

struct Rescore {
  std::string task, backend, device, reference,
      leader;                                    // device: the profile's name (PyTorch numbers are looked up for it)
  std::string pytorch_file;                      // "" when the suite has no PyTorch numbers for the device
  std::map<std::string, double> t_b, t_sol;      // per perf workload
  std::map<std::string, std::string> t_b_label;  // "pytorch" | "reference"
  std::vector<RescoredCandidate> candidates;     // accepted ones (leaders and backups), in run order
  const RescoredCandidate* find(const std::string& id) const;
};

// task_dir: the run's task (the CLI resolves it with resolve_run_task). Reads run.db, or the run's events.jsonl
// when a results folder kept only the log. Throws std::runtime_error naming the file when the directory has neither
// or the reference has no recorded medians.
Rescore rescore_run(const std::filesystem::path& run_dir, const std::filesystem::path& task_dir,
                    const HardwareProfile& profile);

}  // namespace khive
