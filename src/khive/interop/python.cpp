// python/khive_torch from khive (python.hpp).
#include "khive/interop/python.hpp"

#include <cstdlib>
#include <filesystem>

extern char** environ;

namespace khive {

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

ProcessResult run_khive_torch(const std::vector<std::string>& args, double timeout_s) {
  ProcessSpec p;
  p.argv = {khive_python(), "-m", "khive_torch"};
  p.argv.insert(p.argv.end(), args.begin(), args.end());
  p.timeout_s = timeout_s;
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  env["PYTHONPATH"] = khive_pythonpath();
  env["PYTHONDONTWRITEBYTECODE"] = "1";
  p.env = env;
  return run_process(p);
}

}  // namespace khive
