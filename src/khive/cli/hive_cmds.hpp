// The hive's subcommands: `khive optimize`, `khive board`, `khive report` (docs/hive.md).
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace khive {

struct HiveCli {
  CLI::App* optimize = nullptr;
  CLI::App* board = nullptr;
  CLI::App* report = nullptr;
  std::string task, out, resume, backend;
  std::vector<std::string> agents;
  int n_agents = 0;
  int budget_candidates = 0;
  double budget_time = 0, budget_cost = 0, time_cap = 0, timeout = 0;
  int64_t budget_tokens = 0;
  int plateau = 6, board_capacity = 0, max_backups = 8, per_family = 2, seeds = 3;
  bool no_board = false, quiet = false, all = false;
  uint64_t seed = 0;
  std::string run;   // board / report
  bool selected() const { return (optimize && *optimize) || (board && *board) || (report && *report); }
};

void add_hive_commands(CLI::App& app, HiveCli& h);
// Runs the selected hive subcommand; returns the exit code (0 ok, 2 bad input or harness failure).
int run_hive_command(HiveCli& h);

}  // namespace khive
