// `khive import`: problems and solutions written for other tools, into khive (docs/task-format.md, "Importing").
//   khive import kernelbench FILE.py|DIR --out DIR [--level N]   KernelBench problems -> task directories
//   khive import flashinfer DATASET --out DIR                     a FlashInfer-Bench dataset -> task directories
//   khive import solution SOLUTION.json --task TASK [--out FILE]  a Solution -> a candidate file (TASK/candidates/)
// Exit: 0 everything imported, 1 some item failed (each with its reason), 2 bad arguments or input.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace khive {

struct ImportCli {
  CLI::App* cmd = nullptr;
  CLI::App* kernelbench = nullptr;
  CLI::App* flashinfer = nullptr;
  CLI::App* solution = nullptr;
  std::string path, out, task, backend;
  int level = 0;
  bool keep_failed = false, no_evaluate = false;
  double timeout = 600;
  bool selected() const { return cmd && *cmd; }
};

void add_import_command(CLI::App& app, ImportCli& c);
int run_import_command(const ImportCli& c);

}  // namespace khive
