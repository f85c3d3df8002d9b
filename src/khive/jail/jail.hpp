// khive-jail: runs a program khive does not trust with a user's rights — a task's Python (a KernelBench problem
// file at import, a PyTorch reference at every evaluation) or the compiler on a candidate's source — confined:
//
//   network     a new network namespace: no interface but loopback (which is down)
//   files       Landlock: read (and execute) only the system's libraries and toolchains and the paths the policy
//               names; write only beneath its writable folders; never home, the cache, runs or /tmp unless named
//   rights      every capability dropped, no_new_privs
//   limits      no core files; RLIMIT_AS when the policy gives a memory limit; RLIMIT_FSIZE when a file-size limit
//
// A layer the kernel cannot give fails the start (exit 125, the layer and why on stderr): a task's Python never runs
// unconfined unless the user said so (KHIVE_JAIL=off); the compiler runs with the layers it can have
// (JailPolicy::best_effort), and its log says which it lacked. Time limits stay with the caller (its
// watchdog), as for every child process.
//
//   JailPolicy p;
//   p.read = {"/work/task"};  p.write = {"/tmp/khive-import-x1"};  p.memory_bytes = 8ll << 30;
//   ProcessSpec s;  s.argv = jailed(p, {"python3", "-m", "khive_torch", "import-kernelbench", ...});
//   // s.argv == {".../khive-jail", "--read", "/work/task", "--write", "/tmp/...", "--memory", "8589934592",
//   //            "--", "python3", "-m", ...}   (or the command unchanged under KHIVE_JAIL=off)
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace khive {

struct JailPolicy {
  std::vector<std::string> read;   // files or folders to read and execute beyond the system's (jail_system_paths)
  std::vector<std::string> write;  // folders: every right beneath them
  bool cuda = false;               // the GPU's device nodes, read-write
  int64_t memory_bytes = 0;        // RLIMIT_AS; 0: none (the CUDA driver reserves more address space than any limit)
  int64_t file_bytes = 0;          // RLIMIT_FSIZE; 0: none
  // A layer the kernel cannot give is said on stderr ("khive-jail: ... off: why") and the program runs without it,
  // instead of not at all: for the compiler, which runs no code of the candidate's (khive would be unusable on a
  // kernel without Landlock or user namespaces). A task's Python is never started so.
  bool best_effort = false;
};

// The argv that runs `command` under the policy: khive-jail's flags, "--", then the command. `command` unchanged
// when jail_disabled().
std::vector<std::string> jailed(const JailPolicy& policy, const std::vector<std::string>& command);
// KHIVE_JAIL=off (or 0): the user's choice to run task Python and compilers unconfined.
bool jail_disabled();
// $KHIVE_JAIL_BIN, else khive-jail beside this executable (or in an ancestor's bin/, for test executables).
std::filesystem::path jail_path();

// What every jailed program may read besides the policy's paths: the system's libraries, toolchains and headers
// (/usr, /lib*, /bin, /sbin, /opt), ld.so's configuration, the few /etc files a toolchain or an interpreter opens,
// /proc and /sys, and the null/zero/random devices. Not /etc as a whole (shadow, ssh keys), not /root, /home, /tmp.
std::vector<std::string> jail_system_paths();

// khive-jail's own command line (main.cpp; exposed for tests).
struct JailArgs {
  JailPolicy policy;
  std::vector<std::string> command;
};
// Throws std::invalid_argument naming the flag and what was expected.
JailArgs parse_jail_args(const std::vector<std::string>& argv);

}  // namespace khive
