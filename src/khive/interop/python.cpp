// python/khive_torch from khive (python.hpp).
#include "khive/interop/python.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "khive/support/files.hpp"

namespace khive {

namespace fs = std::filesystem;

namespace {
// khive's Python children: khive_torch and the project's torch on the path, no .pyc files left in the tree.
std::map<std::string, std::string> python_env() {
  std::map<std::string, std::string> env = inherited_env();
  env["PYTHONPATH"] = khive_pythonpath();
  env["PYTHONDONTWRITEBYTECODE"] = "1";
  return env;
}
}  // namespace

namespace {
std::string repo_root() {
  if (const char* s = std::getenv("KHIVE_SOURCE_DIR"); s && *s) return s;
  return KHIVE_SOURCE_DIR;
}
}  // namespace

std::string khive_python() {
  if (const char* p = std::getenv("KHIVE_PYTHON"); p && *p) return p;
  return "python3";
}

std::string khive_pythonpath() {
  std::string root = repo_root();
  std::string p = root + "/python:" + root + "/.deps/torch";
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) p += std::string(":") + old;
  return p;
}

const TorchPython& torch_python() {
  static std::mutex mu;
  static std::optional<TorchPython> found;
  std::lock_guard<std::mutex> lk(mu);
  if (found) return *found;
  const std::string py = khive_python();
  if (py.find('/') == std::string::npos && find_program(py).empty())
    throw std::runtime_error("no Python interpreter: '" + py +
                             "' is not on PATH (install python3 3.11, or set KHIVE_PYTHON to one)");
  ProcessSpec p;
  p.argv = {py, "-c", "import sys, torch; print(sys.executable); print(torch.__version__)"};
  p.timeout_s = 300;
  std::map<std::string, std::string> env = python_env();
  p.env = env;
  ProcessResult r = run_process(p);
  std::istringstream out(r.out);
  TorchPython t;
  std::getline(out, t.executable);
  std::getline(out, t.torch_version);
  if (!r.ok() || t.executable.empty() || t.torch_version.empty()) {
    std::string why = r.err;
    if (auto k = why.find_last_not_of(" \n"); k != std::string::npos) why.erase(k + 1);
    if (auto nl = why.rfind('\n'); nl != std::string::npos) why = why.substr(nl + 1);  // the exception's line
    throw std::runtime_error("PyTorch is not usable from " + py + " (" + (why.empty() ? r.describe() : why) +
                             "): run scripts/setup.sh (it installs torch into " + repo_root() +
                             "/.deps/torch), or set KHIVE_PYTHON to an interpreter that has torch");
  }
  t.pythonpath = env["PYTHONPATH"];
  found = t;
  return *found;
}

const std::vector<std::string>& python_read_paths() {
  static std::mutex mu;
  static std::optional<std::vector<std::string>> found;
  std::lock_guard<std::mutex> lk(mu);
  if (found) return *found;
  ProcessSpec p;
  p.argv = {khive_python(), "-c",
            "import os, sys\n"
            "for x in [sys.executable, sys.prefix, sys.exec_prefix] + sys.path:\n"
            "    if x and os.path.exists(x): print(x); print(os.path.realpath(x))\n"};
  p.timeout_s = 60;
  p.env = python_env();
  ProcessResult r = run_process(p);
  std::vector<std::string> paths;
  std::istringstream out(r.out);
  for (std::string line; std::getline(out, line);)
    if (!line.empty() && line[0] == '/' && std::find(paths.begin(), paths.end(), line) == paths.end())
      paths.push_back(line);
  found = std::move(paths);
  return *found;
}

ProcessResult run_khive_torch(const std::vector<std::string>& args, double timeout_s, JailPolicy jail) {
  const fs::path scratch = make_temp_dir(fs::temp_directory_path(), "khive-py");
  const std::vector<std::string>& py = python_read_paths();
  jail.read.insert(jail.read.end(), py.begin(), py.end());
  jail.write.push_back(scratch.string());
  if (jail.memory_bytes == 0) jail.memory_bytes = physical_memory_bytes() / 2;
  std::vector<std::string> command = {khive_python(), "-m", "khive_torch"};
  command.insert(command.end(), args.begin(), args.end());
  ProcessSpec p;
  p.argv = jailed(jail, command);
  p.timeout_s = timeout_s;
  std::map<std::string, std::string> env = python_env();
  env["HOME"] = env["TMPDIR"] = scratch.string();
  p.env = env;
  ProcessResult r = run_process(p);
  std::error_code ec;
  fs::remove_all(scratch, ec);
  return r;
}

}  // namespace khive
