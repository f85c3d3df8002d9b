// `khive export RUN --solution [--candidate ID] [--format sol|flashinfer] [--out DIR]`: a run's leader (or any
// candidate) as a SOL-ExecBench / FlashInfer-Bench Solution JSON, its sources as files beside it, and, for a task
// imported from KernelBench and a CUDA run, a KernelBench ModelNew file (docs/solutions.md).
#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace khive {

struct SolutionExportCli {
  bool solution = false;
  std::string candidate;         // default: the run's leader
  std::string format = "sol";    // sol | flashinfer
  std::string out;               // default: RUN/solution
  std::string target = "LOCAL";  // spec.target_hardware
  std::string task_dir;          // the run's task when it moved
};

void add_solution_export_options(CLI::App* export_cmd, SolutionExportCli& c);
int run_solution_export(const std::string& run_dir, const SolutionExportCli& c);

}  // namespace khive
