// `khive import` (import_cmd.hpp).
#include "khive/cli/import_cmd.hpp"
#include "khive/cli/conventions.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "khive/interop/flashinfer.hpp"
#include "khive/interop/python.hpp"
#include "khive/interop/solution.hpp"
#include "khive/support/files.hpp"
#include "khive/task/task.hpp"

namespace khive {
namespace fs = std::filesystem;

void add_import_command(CLI::App& app, ImportCli& c) {
  c.cmd = app.add_subcommand(
      "import",
      "Import KernelBench problems, a FlashInfer-Bench dataset or a Solution (exit 0 all, 1 some failed, 2 bad input)");
  c.cmd->require_subcommand(1);
  c.kernelbench = c.cmd->add_subcommand(
      "kernelbench", "KernelBench problem files (Model, get_inputs, get_init_inputs) as task directories");
  c.kernelbench->add_option("path", c.path, "a problem file, or a folder of them (level1/, ...)")->required();
  c.kernelbench->add_option("--out", c.out, "folder for the task directories")->required();
  c.kernelbench->add_option("--level", c.level, "KernelBench level (default: from a 'levelN' folder name)");
  c.kernelbench->add_flag("--keep-failed", c.keep_failed,
                          "keep task directories that did not load or whose reference failed");
  c.kernelbench->add_flag("--no-evaluate", c.no_evaluate, "do not run the reference on the CPU after importing");
  c.kernelbench->add_option("--timeout", c.timeout, "seconds for one problem (default 600)");
  c.flashinfer = c.cmd->add_subcommand(
      "flashinfer", "A FlashInfer-Bench dataset (definitions/, workloads/, blob/) as task directories");
  c.flashinfer->add_option("path", c.path, "the dataset root")->required();
  c.flashinfer->add_option("--out", c.out, "folder for the task directories")->required();
  c.flashinfer->add_flag("--keep-failed", c.keep_failed, "keep task directories that did not load");
  c.solution =
      c.cmd->add_subcommand("solution", "A SOL-ExecBench / FlashInfer-Bench Solution JSON as a candidate of a task");
  c.solution->add_option("path", c.path, "solution.json")->required();
  c.solution->add_option("--task", c.task, "the task it solves")->required();
  c.solution->add_option("--backend", c.backend, "cuda (default) or cpu")->check(khive::backend_value());
  c.solution->add_option("--out", c.out, "candidate file to write (default TASK/candidates/<name>.cu|.cpp)");
}

namespace {

// "kb1_019_relu" from level 1 and "19_ReLU.py".
std::string kernelbench_task_name(int level, const fs::path& file, int* problem) {
  std::string stem = file.stem().string();
  std::smatch m;
  std::string slug = stem;
  *problem = 0;
  if (std::regex_match(stem, m, std::regex(R"((\d+)_(.*))"))) {
    *problem = std::stoi(m[1].str());
    slug = m[2].str();
  }
  std::string clean;
  for (char ch : slug)
    clean += std::isalnum(static_cast<unsigned char>(ch)) ? static_cast<char>(std::tolower(ch)) : '_';
  while (clean.find("__") != std::string::npos) clean.replace(clean.find("__"), 2, "_");
  while (!clean.empty() && clean.back() == '_') clean.pop_back();
  return fmt::format("kb{}_{:03d}_{}", level, *problem, clean);
}

int level_of(const fs::path& p) {
  std::smatch m;
  for (fs::path q = fs::absolute(p); !q.empty() && q != q.root_path(); q = q.parent_path()) {
    std::string n = q.filename().string();
    if (std::regex_match(n, m, std::regex(R"(level(\d+))"))) return std::stoi(m[1].str());
  }
  return 0;
}

int import_kernelbench(const ImportCli& c) {
  std::vector<fs::path> files;
  if (fs::is_directory(c.path)) {
    for (const auto& e : fs::directory_iterator(c.path))
      if (e.is_regular_file() && e.path().extension() == ".py") files.push_back(e.path());
    std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
      auto num = [](const fs::path& p) {
        std::string s = p.stem().string();
        return std::atoi(s.c_str());
      };
      return num(a) != num(b) ? num(a) < num(b) : a < b;
    });
  } else if (fs::is_regular_file(c.path)) {
    files.push_back(c.path);
  } else {
    std::cerr << fmt::format(
        "khive import kernelbench: {}: expected a .py file or a folder of them, got nothing there\n", c.path);
    return 2;
  }
  if (files.empty()) {
    std::cerr << fmt::format("khive import kernelbench: {}: expected KernelBench .py files, found none\n", c.path);
    return 2;
  }
  int imported = 0, failed = 0;
  for (const auto& f : files) {
    int level = c.level ? c.level : level_of(f);
    int problem = 0;
    std::string name = kernelbench_task_name(level, f, &problem);
    fs::path dir = fs::path(c.out) / name;
    std::vector<std::string> args = {
        "import-kernelbench",    f.string(), "--out", dir.string(), "--level", std::to_string(level), "--problem",
        std::to_string(problem), "--name",   name};
    if (c.no_evaluate) args.push_back("--no-evaluate");
    // The problem file is Python from the internet: its top-level code runs in khive-jail, which reads the file and
    // writes only the new task's folder (interop/python.hpp).
    std::error_code mk;
    fs::create_directories(dir, mk);
    JailPolicy jail;
    jail.read = {fs::absolute(f).string()};
    jail.write = {fs::absolute(dir).string()};
    ProcessResult r = run_khive_torch(args, c.timeout, jail);
    std::string why;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
    } catch (const std::exception&) {
      std::string err = r.err.size() > 400 ? r.err.substr(r.err.size() - 400) : r.err;
      why = fmt::format("the importer failed ({}): {}", r.describe(), err);
    }
    if (why.empty() && !j.value("ok", false)) why = j.value("error", std::string("unknown"));
    if (why.empty()) {
      try {
        load_task(dir);
      } catch (const std::exception& e) {
        why = std::string("the task does not load: ") + e.what();
      }
    }
    // Too large for the CPU at every size (a literal 32768 x 32768 weight): kept, its workloads marked CUDA only.
    const std::string cuda_only = j.is_object() ? j.value("cuda_only", std::string()) : std::string();
    if (why.empty() && !c.no_evaluate && !j.value("evaluated", false) && cuda_only.empty())
      why = "the reference does not run on the CPU: " + j.value("evaluate_error", std::string("?"));
    if (why.empty()) {
      ++imported;
      // The op recognised from the reference's graph (khive.op, python/khive_torch/recognize.py): what the tuner binds
      // by.
      const std::string op = j.value("op", std::string());
      std::cout << fmt::format("imported  {}  {}{}{}\n", name, f.filename().string(), op.empty() ? "" : "  op: " + op,
                               cuda_only.empty() ? "" : "  (CUDA only: on the CPU " + cuda_only + ")");
    } else {
      ++failed;
      std::cout << fmt::format("FAILED    {}  {}: {}\n", name, f.filename().string(), why);
      std::error_code ec;
      if (!c.keep_failed) fs::remove_all(dir, ec);
    }
  }
  std::cout << fmt::format("{} of {} imported into {}{}\n", imported, files.size(), c.out,
                           failed ? fmt::format(" ({} failed)", failed) : "");
  return failed ? 1 : 0;
}

int import_flashinfer(const ImportCli& c) {
  DatasetImport r;
  try {
    r = import_flashinfer_dataset(c.path, c.out);
  } catch (const std::exception& e) {
    std::cerr << "khive import flashinfer: " << e.what() << "\n";
    return 2;
  }
  int ok = 0;
  for (const auto& t : r.tasks) {
    if (t.error.empty()) {
      ++ok;
      std::cout << fmt::format("imported  {}\n", t.name);
    } else {
      std::cout << fmt::format("FAILED    {}: {}\n", t.name, t.error);
      std::error_code ec;
      if (!c.keep_failed && !t.dir.empty()) fs::remove_all(t.dir, ec);
    }
  }
  for (const auto& o : r.orphans) std::cout << fmt::format("note: workloads for '{}' have no definition\n", o);
  std::cout << fmt::format("{} of {} definitions imported into {}\n", ok, r.tasks.size(), c.out);
  return ok == static_cast<int>(r.tasks.size()) ? 0 : 1;
}

int import_solution_file(const ImportCli& c) {
  try {
    Task t = load_task(c.task);
    // --backend was checked when the command line was parsed (backend_value).
    Backend b = c.backend.empty() ? Backend::cuda : parse_backend(c.backend).value_or(Backend::cuda);
    nlohmann::json s;
    try {
      s = nlohmann::json::parse(read_file(c.path));
    } catch (const nlohmann::json::parse_error& e) {
      std::cerr << fmt::format("khive import solution: {}: (syntax): expected valid JSON, got {}\n", c.path, e.what());
      return 2;
    }
    ImportedSolution imp = import_solution(s, t, b);
    std::string safe;
    for (char ch : imp.name) safe += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.' ? ch : '_';
    fs::path out = c.out.empty() ? t.dir / "candidates" / (safe + imp.ext) : fs::path(c.out);
    fs::create_directories(out.parent_path());
    std::ofstream(out, std::ios::binary | std::ios::trunc) << imp.source;
    std::cout << fmt::format("candidate: {} (from solution '{}'); try it: khive eval {} {}\n", out.string(), imp.name,
                             c.task, out.string());
    if (!imp.note.empty()) std::cout << "note: " << imp.note << "\n";
    return 0;
  } catch (const SolutionError& e) {
    std::cerr << fmt::format("khive import solution: {}: {}\n", c.path, e.what());
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "khive import solution: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace

int run_import_command(const ImportCli& c) {
  if (*c.kernelbench) return import_kernelbench(c);
  if (*c.flashinfer) return import_flashinfer(c);
  return import_solution_file(c);
}

}  // namespace khive
