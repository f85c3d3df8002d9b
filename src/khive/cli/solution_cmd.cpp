// `khive export RUN --solution` (solution_cmd.hpp).
#include "khive/cli/solution_cmd.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "khive/cli/hive_cmds.hpp"
#include "khive/interop/modelnew.hpp"
#include "khive/interop/solution.hpp"
#include "khive/record/run_records.hpp"
#include "khive/support/files.hpp"

namespace khive {
namespace fs = std::filesystem;

void add_solution_export_options(CLI::App* e, SolutionExportCli& c) {
  e->add_flag("--solution", c.solution,
              "write the leader (or --candidate) as a Solution JSON with its sources (and a KernelBench ModelNew for "
              "imported KernelBench tasks)");
  e->add_option("--candidate", c.candidate, "with --solution: this candidate id (c0007) instead of the leader");
  e->add_option("--format", c.format, "with --solution: sol (SOL-ExecBench, default) or flashinfer (FlashInfer-Bench)");
  e->add_option("--out", c.out, "with --solution: the folder to write (default RUN/solution)");
  e->add_option("--target-hardware", c.target, "with --solution: spec.target_hardware (default LOCAL)");
  e->add_option("--task", c.task_dir, "with --solution: the run's task directory (default: as the run recorded it)");
}

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

}  // namespace

int run_solution_export(const std::string& run_dir, const SolutionExportCli& c) {
  if (c.format != "sol" && c.format != "flashinfer") {
    std::cerr << fmt::format("khive export: --format: expected sol or flashinfer, got '{}'\n", c.format);
    return 2;
  }
  try {
    RunRecords rr = load_run_records(run_dir, /*require_reference=*/false);
    std::string id = c.candidate.empty() ? rr.leader : c.candidate;
    if (id.empty()) {
      std::cerr << fmt::format(
          "khive export: {} has no leader yet (no candidate was accepted): name one with --candidate\n", run_dir);
      return 2;
    }
    const CandidateRecord* rec = nullptr;
    for (const auto& x : rr.candidates)
      if (x.id == id) rec = &x;
    if (!rec) {
      std::cerr << fmt::format("khive export: --candidate: expected a candidate id of {}, got '{}'\n", run_dir, id);
      return 2;
    }
    std::string source = rec->source;
    if (source.empty() && !rec->file.empty()) source = read_file(fs::path(run_dir) / rec->file);
    if (source.empty()) {
      std::cerr << fmt::format("khive export: candidate {} has no recorded source in {}\n", id, run_dir);
      return 2;
    }
    Task task = load_task(resolve_run_task(run_dir, c.task_dir));
    auto backend = parse_backend(rr.backend.empty() ? "cpu" : rr.backend).value_or(Backend::cpu);
    SolutionMeta meta;
    meta.name = fmt::format("{}_khive_{}", task.name, id);
    meta.description = fmt::format("khive candidate {} of run {} ({}; agent {}, verdict {}{})", id,
                                   fs::path(run_dir).filename().string(), backend_name(backend), rec->agent,
                                   standing_name(rec->standing),
                                   rec->score ? fmt::format(", score {:.3f}", *rec->score) : std::string());
    meta.target_hardware = c.target;
    auto fmt_ = c.format == "sol" ? SolutionFormat::sol_execbench : SolutionFormat::flashinfer_bench;
    auto s = solution_json(task, backend, source, meta, fmt_);
    fs::path out = c.out.empty() ? fs::path(run_dir) / "solution" : fs::path(c.out);
    write(out / "solution.json", s.dump(2) + "\n");
    for (const auto& f : s["sources"]) write(out / f["path"].get<std::string>(), f["content"].get<std::string>());
    std::cout << fmt::format("solution: {} (candidate {}, {})\n", (out / "solution.json").string(), id,
                             c.format == "sol" ? "SOL-ExecBench" : "FlashInfer-Bench");
    if (task.source_kind == "kernelbench") {
      // A CPU kernel's ModelNew runs where KernelBench's CPU evaluation (and the model's own device) puts the tensors.
      write(out / "ModelNew.py", kernelbench_modelnew(task, source, id, backend));
      std::cout << fmt::format("KernelBench ModelNew: {}{}\n", (out / "ModelNew.py").string(),
                               backend == Backend::cpu ? " (a CPU kernel)" : "");
    }
    return 0;
  } catch (const TaskFormatError& e) {
    std::cerr << "khive export: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "khive export: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace khive
