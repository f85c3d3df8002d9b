// khive-jail [--read PATH]... [--write DIR]... [--cuda] [--memory BYTES] [--file-size BYTES] [--best-effort] -- COMMAND
// ARGS... Confines itself (jail.hpp) and executes COMMAND. Exit 125 when a layer cannot be applied or the flags are
// wrong, 127 when COMMAND cannot be executed; otherwise COMMAND's own status.
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include <nlohmann/json.hpp>

#include "khive/executor/sandbox.hpp"
#include "khive/jail/jail.hpp"

int main(int argc, char** argv) {
  khive::JailArgs a;
  try {
    a = khive::parse_jail_args(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 125;
  }
  // Each layer's state for the report ("on" or "off: why"); a layer that fails stops the start unless best_effort.
  nlohmann::json report = {{"jail", "khive-jail"}};
  auto layer = [&](const char* key, const std::string& name, const std::string& why, const std::string& on) {
    if (why.empty()) {
      report[key] = on;
      return true;
    }
    if (!a.policy.best_effort) {
      std::cerr << "khive-jail: cannot confine " << a.command[0] << ": " << name << ": " << why
                << " (KHIVE_JAIL=off runs task Python and compilers unconfined, with your full rights)\n";
      return false;
    }
    std::cerr << "khive-jail: " << name << " off: " << why << " (" << a.command[0] << " runs without it)\n";
    report[key] = "off: " + why;
    return true;
  };
  if (!layer("netns", "network namespace", khive::exec::enter_new_netns(), "on")) return 125;
  std::vector<std::string> read = khive::jail_system_paths();
  read.insert(read.end(), a.policy.read.begin(), a.policy.read.end());
  int abi = 0;
  // Scopes (ABI >= 6): no signal to a process outside the jail, no abstract unix socket out of it.
  const std::string landlock =
      khive::exec::apply_landlock(read, khive::exec::device_paths(a.policy.cuda), true, abi,
                                  khive::exec::kScopeAbstractUnixSockets | khive::exec::kScopeSignals, a.policy.write);
  if (!layer("landlock", "Landlock", landlock,
             "abi " + std::to_string(abi) + ": reads " + std::to_string(read.size()) +
                 " system and named paths, writes " + std::to_string(a.policy.write.size()) + " folder(s)"))
    return 125;
  if (!layer("capabilities", "capabilities", khive::exec::drop_capabilities(), "dropped")) return 125;
  rlimit zero{0, 0};
  ::setrlimit(RLIMIT_CORE, &zero);
  std::string limits = "no core files";
  if (a.policy.memory_bytes > 0) {
    rlimit as{static_cast<rlim_t>(a.policy.memory_bytes), static_cast<rlim_t>(a.policy.memory_bytes)};
    ::setrlimit(RLIMIT_AS, &as);
    limits += "; address space " + std::to_string(a.policy.memory_bytes >> 20) + " MiB";
  }
  if (a.policy.file_bytes > 0) {
    rlimit fs{static_cast<rlim_t>(a.policy.file_bytes), static_cast<rlim_t>(a.policy.file_bytes)};
    ::setrlimit(RLIMIT_FSIZE, &fs);
    limits += "; files up to " + std::to_string(a.policy.file_bytes >> 20) + " MiB";
  }
  report["rlimits"] = limits;
  // What was applied, for the confined program to report (the PyTorch reference's hello: docs/guard.md, "Isolation").
  ::setenv("KHIVE_JAIL_REPORT", report.dump().c_str(), 1);
  std::vector<char*> args;
  for (auto& s : a.command) args.push_back(s.data());
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  std::cerr << "khive-jail: cannot execute " << a.command[0] << ": " << std::strerror(errno) << "\n";
  return 127;
}
