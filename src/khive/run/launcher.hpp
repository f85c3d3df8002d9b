// Orchestrator side of one runner process: spawn it sandboxed, hand it the key and the job, collect
// the verified frames, and classify how it ended. Nothing the candidate does can reach this process
// except through the verified channel.
//
//   RunnerOutcome o = launch_runner(job, RunnerOptions{});
//   if (o.tampered) ... reject (channel_tampered)
//   else if (o.result) ... observations in (*o.result)
//   else ... o.process.describe(), o.last_progress says where it died
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/run/protocol.hpp"
#include "khive/support/subprocess.hpp"

namespace khive {

struct RunnerOptions {
  std::filesystem::path runner;          // empty = default_runner_path()
  double timeout_s = 120;                // watchdog for the whole process
  std::string cuda_visible_devices;      // the device slot ("0"); empty = inherit nothing (unset)
  int omp_threads = 0;                   // 0 = all cores
  int64_t cpu_memory_limit = 0;          // RLIMIT_AS for the CPU backend; 0 = 3/4 of physical memory
  bool new_netns = true;                 // run in a fresh network namespace where permitted
  std::filesystem::path scratch_parent;  // empty = <cache_root>/scratch
  bool keep_scratch = false;
};

struct RunnerOutcome {
  ProcessResult process;
  std::vector<nlohmann::json> frames;
  std::optional<nlohmann::json> result;          // the frame with type "result"
  std::optional<nlohmann::json> last_progress;   // the last "progress" frame
  bool tampered = false;
  std::string tamper_reason;
  bool sandbox_violation = false;                // killed by the seccomp filter
  std::string forbidden_syscall;                 // its name, when the runner could tell
  double seconds = 0;
};

RunnerOutcome launch_runner(const Job& job, const RunnerOptions& opt);
std::filesystem::path default_runner_path();   // $KHIVE_RUNNER, else khive-runner beside this executable
uint64_t current_netns_inode();

}  // namespace khive
