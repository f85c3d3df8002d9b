// The hive's subcommands: `khive optimize`, `khive board`, `khive report`, `khive rescore`, `khive export`
// (docs/hive.md).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include "khive/cli/solution_cmd.hpp"

#include "khive/eval/evaluate.hpp"
#include "khive/job/input_keys.hpp"

namespace khive {

struct HiveCli {
  CLI::App* optimize = nullptr;
  CLI::App* board = nullptr;
  CLI::App* report = nullptr;
  CLI::App* rescore = nullptr;
  CLI::App* export_run = nullptr;        // `khive export RUN`: the run's records as JSON
  SolutionExportCli solution_export;     // `khive export RUN --solution` (solution_cmd.cpp)
  std::string profile, task_dir;         // rescore --profile, --task
  bool json = false;                     // rescore --json
  CLI::App* evaluate_pending = nullptr;  // pending_cmd.cpp
  std::string task, out, resume, backend;
  std::string perf_workloads;           // regex over perf workload uuids: time only those (select_perf_workloads)
  std::vector<std::string> warm_start;  // earlier run directories whose best tuner points are proposed first
  std::vector<std::string> agents;
  int n_agents = 0;
  int budget_candidates = 0;
  double budget_time = 0, budget_cost = 0, time_cap = 0, timeout = 0;
  int64_t budget_tokens = 0;
  int plateau = 6, board_capacity = 0, max_backups = 8, per_family = 2, seeds = 3;
  int prebuild = -1;  // speculative builds at a time (-1: default_prebuild_jobs)
  bool no_board = false, quiet = false, all = false;
  bool defer_eval = false;        // build here, evaluate on a GPU later (automatic: cuda backend, no GPU visible)
  std::string replay;             // optimize --replay RECORDING: the recorded evaluator answers instead of the guard
  bool model_composites = false;  // optimize --replay ... --model-composites
  uint64_t seed = 0;
  std::string run;         // board / report / rescore / export
  std::string report_out;  // report --out: where report.html goes (a read-only run directory cannot hold it)
  bool selected() const {
    return (optimize && *optimize) || (board && *board) || (report && *report) || (rescore && *rescore) ||
           (export_run && *export_run) || (evaluate_pending && *evaluate_pending);
  }
};

void add_hive_commands(CLI::App& app, HiveCli& h);
void add_pending_command(CLI::App& app, HiveCli& h);  // `khive evaluate-pending RUN`
int run_evaluate_pending(HiveCli& h);

// A run's task directory: `given` when set; else the recorded absolute path when it still exists; else
// the path recorded relative to the run directory (a run carried to another machine inside the same
// repository). Throws naming what was tried.
// `how`: what the user types to give the task instead (each command has its own way).
std::filesystem::path resolve_run_task(const std::filesystem::path& run_dir, const std::string& given,
                                       const std::string& how = "give it with --task DIR");
// --perf-workloads: narrows `task` to the perf workloads matching `pattern` (select_perf_workloads); "" when the
// pattern is empty or applied, else the error (a bad pattern, or one matching nothing) for the caller to print.
std::string narrow_perf_workloads(Task& task, const std::string& pattern, Backend backend,
                                  std::vector<std::string>* kept = nullptr);
// The guard options of a hive run (the same for `optimize` and `evaluate-pending`, so verdicts match).
// The run's input secret as its meta recorded it (64 hex digits; a number from a run recorded before inputs version
// 7), else a new random one. Throws std::invalid_argument for a malformed value.
InputSecret run_input_secret(const nlohmann::json& stored);
EvalOptions hive_eval_options(Backend backend, uint64_t seed, const InputSecret& input_secret, int seeds,
                              double time_cap, double timeout);
// Runs the selected hive subcommand; returns the exit code (0 ok, 2 bad input or harness failure).
int run_hive_command(HiveCli& h);

}  // namespace khive
