// Child processes with a watchdog: compilers, the judge, nvidia-smi.
//
//   ProcessSpec p; p.argv = {"g++", "--version"}; p.timeout_s = 10;
//   ProcessResult r = run_process(p);        // r.exit_code, r.out, r.err, r.timed_out, r.signal
//
// The child is the leader of a new process group; on timeout the whole group gets SIGKILL, so a
// compiler's or candidate's own children die with it. The group also dies with khive, however khive ends
// (kill -9, a second Ctrl-C, SIGTERM): its leader is a small guardian process that forks the real child and,
// told by the kernel that khive is gone (PR_SET_PDEATHSIG), kills the group. The exit status is the real
// child's. Output is captured up to a cap per stream.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace khive {

struct ProcessSpec {
  std::vector<std::string> argv;                          // argv[0] is looked up in PATH when it has no '/'
  std::optional<std::map<std::string, std::string>> env;  // nullopt = inherit; a map = exactly this
  std::filesystem::path cwd;                              // empty = inherit
  double timeout_s = 0;                                   // 0 = none
  std::size_t capture_limit = 1 << 20;                    // bytes kept per stream (rest counted, dropped)
  std::string stdin_data;                                 // written to the child's stdin, then closed
  // Descriptors to keep open in the child, as (parent fd, child fd). Every other fd >= 3 is closed.
  std::vector<std::pair<int, int>> pass_fds;
  // Runs in the child after fork, before exec (resource limits, namespaces). Must be async-signal-safe
  // in spirit: no allocation, no locks. Returning false aborts the exec with exit code 127.
  std::function<bool()> in_child;
  // When set and it becomes true (Ctrl-C), the child's group is killed at once and the result says cancelled.
  const std::atomic<bool>* cancel = nullptr;
  // Called in the parent with each chunk read from extra_read_fd (a pipe the caller owns), if set.
  int extra_read_fd = -1;
  std::function<void(const char*, std::size_t)> on_extra;
};

struct ProcessResult {
  int exit_code = -1;  // valid when exited normally
  int signal = 0;      // terminating signal, 0 if none
  bool timed_out = false;
  bool start_failed = false;  // exec failed (errno text in err)
  bool cancelled = false;     // killed because ProcessSpec::cancel became true
  std::string out, err;
  std::size_t out_dropped = 0, err_dropped = 0;
  double wall_s = 0;
  bool ok() const { return !timed_out && !cancelled && signal == 0 && exit_code == 0 && !start_failed; }
  std::string describe()
      const;  // "exit 1" | "killed by SIGSEGV (Segmentation fault)" | "timed out after 5.0 s" | "cancelled"
};

ProcessResult run_process(const ProcessSpec& spec);

// This process's environment as a map: the start of a child's ProcessSpec::env that adds or removes a few variables.
std::map<std::string, std::string> inherited_env();

// This machine's physical memory in bytes, 0 when the system does not say: the base of children's memory limits.
int64_t physical_memory_bytes();

// Looks a program up in PATH; empty when not found.
std::filesystem::path find_program(const std::string& name);

}  // namespace khive
