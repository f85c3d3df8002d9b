// khive-jail [--read PATH]... [--write DIR]... [--cuda] [--memory BYTES] [--file-size BYTES] -- COMMAND ARGS...
// Confines itself (jail.hpp) and executes COMMAND. Exit 125 when a layer cannot be applied or the flags are wrong,
// 127 when COMMAND cannot be executed; otherwise COMMAND's own status.
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

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
  auto refuse = [&](const std::string& layer, const std::string& why) {
    std::cerr << "khive-jail: cannot confine " << a.command[0] << ": " << layer << ": " << why
              << " (KHIVE_JAIL=off runs task Python and compilers unconfined, with your full rights)\n";
    return 125;
  };
  if (std::string why = khive::exec::enter_new_netns(); !why.empty()) return refuse("network namespace", why);
  std::vector<std::string> read = khive::jail_system_paths();
  read.insert(read.end(), a.policy.read.begin(), a.policy.read.end());
  int abi = 0;
  // Scopes (ABI >= 6): no signal to a process outside the jail, no abstract unix socket out of it.
  if (std::string why = khive::exec::apply_landlock(read, khive::exec::device_paths(a.policy.cuda), true, abi,
                                                    khive::exec::kScopeAbstractUnixSockets | khive::exec::kScopeSignals, a.policy.write);
      !why.empty())
    return refuse("Landlock", why);
  if (std::string why = khive::exec::drop_capabilities(); !why.empty()) return refuse("capabilities", why);
  rlimit zero{0, 0};
  ::setrlimit(RLIMIT_CORE, &zero);
  if (a.policy.memory_bytes > 0) {
    rlimit as{static_cast<rlim_t>(a.policy.memory_bytes), static_cast<rlim_t>(a.policy.memory_bytes)};
    ::setrlimit(RLIMIT_AS, &as);
  }
  if (a.policy.file_bytes > 0) {
    rlimit fs{static_cast<rlim_t>(a.policy.file_bytes), static_cast<rlim_t>(a.policy.file_bytes)};
    ::setrlimit(RLIMIT_FSIZE, &fs);
  }
  // What was applied, for the confined program to report (the PyTorch reference's hello: docs/guard.md, "Isolation").
  std::string limits = "no core files";
  if (a.policy.memory_bytes > 0) limits += "; address space " + std::to_string(a.policy.memory_bytes >> 20) + " MiB";
  if (a.policy.file_bytes > 0) limits += "; files up to " + std::to_string(a.policy.file_bytes >> 20) + " MiB";
  const std::string report = "{\"process\": \"khive-jail\", \"netns\": \"on\", \"landlock\": \"abi " + std::to_string(abi) + ": reads " +
                             std::to_string(read.size()) + " system and named paths, writes " + std::to_string(a.policy.write.size()) +
                             " folder(s)\", \"capabilities\": \"dropped\", \"rlimits\": \"" + limits + "\"}";
  ::setenv("KHIVE_JAIL_REPORT", report.c_str(), 1);
  std::vector<char*> args;
  for (auto& s : a.command) args.push_back(s.data());
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  std::cerr << "khive-jail: cannot execute " << a.command[0] << ": " << std::strerror(errno) << "\n";
  return 127;
}
