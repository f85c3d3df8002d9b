// The executor's sandbox: what an untrusted kernel may touch. Layers, each installed by the executor on itself
// before the kernel's library is loaded, and each reported in the hello message (a layer the kernel does not
// allow is reported "off" with why, never silently missing):
//
//   netns       a new network namespace (root, or an unprivileged user namespace): no interface but loopback
//   landlock    a filesystem allowlist: system libraries, the kernel's own library, /proc and /sys read-only,
//               the GPU's device nodes; never the cache, the goldens, runs, home or /tmp. With ABI >= 6 also
//               scoped signals and abstract unix sockets: it can signal nothing outside itself
//   caps        every capability dropped (also the bounding set), no_new_privs
//   rlimits     no core files, no file growth (RLIMIT_FSIZE 0), few descriptors, RLIMIT_AS on the CPU backend
//   seccomp     an allowlist of system calls (all threads). Anything else is reported to the judge through a
//               seccomp user-notification descriptor (the judge names the call and kills the executor: the
//               kernel cannot hide it by replacing a signal handler), or kills the process where the kernel has
//               no user notification. Signals only to itself, never SIGKILL (so a SIGKILL always came from
//               outside). Threads yes (OpenMP, the CUDA runtime), new processes no.
//
// Order: landlock and netns before the device is initialised (threads created later inherit them), seccomp
// after (the CUDA driver's initialisation needs calls a kernel never does).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace khive::exec {

struct SandboxReport {
  nlohmann::json layers = nlohmann::json::object();  // {"landlock": "abi 7" | "off: why", ...}
  int notify_fd = -1;                                // seccomp listener (send it to the judge), -1 if none
};

// The filesystem view: read-only paths (directories or files) and read-write device nodes. Returns "" or why
// Landlock could not be applied (too old a kernel, disabled); `abi` receives the Landlock ABI (0 when none).
// Vendor libraries (cuBLAS, cuDNN, ...) in those paths stay outside the view unless `vendor_libraries`.
// `scopes` (ABI >= 6): which of Landlock's scopes to set, kScopeAbstractUnixSockets | kScopeSignals by default.
enum LandlockScope : unsigned { kScopeAbstractUnixSockets = 1u, kScopeSignals = 2u };
// `write_paths` (directories): every right beneath them (create, write, remove), for a jailed tool's scratch folder
// (khive-jail); an executor has none.
std::string apply_landlock(const std::vector<std::string>& read_paths, const std::vector<std::string>& device_paths,
                           bool vendor_libraries, int& abi, unsigned scopes = kScopeAbstractUnixSockets | kScopeSignals,
                           const std::vector<std::string>& write_paths = {});
// The paths every executor needs read: system libraries, ld.so's cache, /proc, /sys; plus the directories of the
// shared objects already loaded (where a kernel's own dependencies are found).
std::vector<std::string> base_read_paths();
// /dev/null, /dev/zero, /dev/urandom and, for CUDA, every /dev/nvidia* node.
std::vector<std::string> device_paths(bool cuda);

std::string enter_new_netns();             // "" or why not
std::string drop_capabilities();           // "" or why not
void apply_rlimits(int64_t memory_limit);  // best effort

// The allowlist, installed on every thread. `cuda` allows opening the device nodes read-write.
// `extra` names further calls to allow (KHIVE_SANDBOX_EXTRA_SYSCALLS: an operator's escape hatch when a driver
// needs a call the list lacks; reported in the hello). Returns "" or why it failed; fills notify_fd.
std::string apply_seccomp(bool cuda, const std::vector<std::string>& extra, int& notify_fd);

// The system calls the allowlist lets through (for docs and tests).
std::vector<std::string> allowed_syscalls();

}  // namespace khive::exec
