// khive-jail's command line, shared by the callers that build it and the binary that reads it (jail.hpp).
#include "khive/jail/jail.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "khive/support/files.hpp"

namespace khive {

namespace {

int64_t parse_bytes(const std::string& flag, const std::string& v) {
  std::size_t used = 0;
  long long n = -1;
  try {
    n = std::stoll(v, &used);
  } catch (const std::exception&) {
  }
  if (used != v.size() || n < 0)
    throw std::invalid_argument("khive-jail: " + flag + ": expected a number of bytes >= 0, got '" + v + "'");
  return n;
}
}  // namespace

bool jail_disabled() {
  const char* v = std::getenv("KHIVE_JAIL");
  return v && (std::string_view(v) == "off" || std::string_view(v) == "0");
}

std::filesystem::path jail_path() { return sibling_executable("KHIVE_JAIL_BIN", "khive-jail"); }

std::vector<std::string> jail_system_paths() {
  return {"/usr",
          "/lib",
          "/lib32",
          "/lib64",
          "/libx32",
          "/bin",
          "/sbin",
          "/opt",
          "/etc/ld.so.cache",
          "/etc/ld.so.conf",
          "/etc/ld.so.conf.d",
          "/etc/alternatives",
          "/etc/localtime",
          "/etc/nsswitch.conf",
          "/etc/passwd",
          "/etc/group",
          "/proc",
          "/sys"};
}

std::vector<std::string> jailed(const JailPolicy& policy, const std::vector<std::string>& command) {
  if (jail_disabled()) return command;
  std::vector<std::string> argv = {jail_path().string()};
  for (const auto& r : policy.read) argv.insert(argv.end(), {"--read", r});
  for (const auto& w : policy.write) argv.insert(argv.end(), {"--write", w});
  if (policy.cuda) argv.push_back("--cuda");
  if (policy.memory_bytes > 0) argv.insert(argv.end(), {"--memory", std::to_string(policy.memory_bytes)});
  if (policy.file_bytes > 0) argv.insert(argv.end(), {"--file-size", std::to_string(policy.file_bytes)});
  if (policy.best_effort) argv.push_back("--best-effort");
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

JailArgs parse_jail_args(const std::vector<std::string>& argv) {
  JailArgs a;
  std::size_t i = 0;
  auto value = [&](const std::string& flag) -> const std::string& {
    if (i + 1 >= argv.size()) throw std::invalid_argument("khive-jail: " + flag + ": expected a value after it");
    return argv[++i];
  };
  for (; i < argv.size(); ++i) {
    const std::string& f = argv[i];
    if (f == "--") {
      a.command.assign(argv.begin() + static_cast<std::ptrdiff_t>(i) + 1, argv.end());
      break;
    }
    if (f == "--read")
      a.policy.read.push_back(value(f));
    else if (f == "--write")
      a.policy.write.push_back(value(f));
    else if (f == "--cuda")
      a.policy.cuda = true;
    else if (f == "--best-effort")
      a.policy.best_effort = true;
    else if (f == "--memory")
      a.policy.memory_bytes = parse_bytes(f, value(f));
    else if (f == "--file-size")
      a.policy.file_bytes = parse_bytes(f, value(f));
    else
      throw std::invalid_argument(
          "khive-jail: unknown flag '" + f +
          "' (expected --read, --write, --cuda, --memory, --file-size, --best-effort, then -- COMMAND)");
  }
  if (a.command.empty()) throw std::invalid_argument("khive-jail: expected -- and the command to run after the flags");
  for (const auto& w : a.policy.write)
    if (w.empty() || w[0] != '/')
      throw std::invalid_argument("khive-jail: --write: expected an absolute folder, got '" + w + "'");
  return a;
}

}  // namespace khive
