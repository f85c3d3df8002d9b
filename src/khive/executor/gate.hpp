// The gate between the judge's stream and an executor's (docs/guard.md, "The clock"): 32-bit counters in a small
// region the judge shares, advanced and awaited by the GPU itself with stream memory operations (cuStreamWriteValue32,
// cuStreamWaitValue32), so that each timed call is bracketed by events on the judge's own stream without either
// process's host in the loop:
//
//   executor stream:  wait ready >= v -> event S -> [go = v, on its second stream] -> kernel -> event E -> done = v
//   judge stream:     wait go >= v -> reveal the call's inputs -> flush L2 -> event J0 -> ready = v -> wait done >= v
//                     -> event J1 -> checksum the outputs
//
// J1 - J0, less what the bracket holds beyond the executor's events around a built-in call that touches the workload's
// memory (calibrated per workload before the kernel is loaded; device.hpp, TouchCall), is the judge's time of the
// call; E - S is the executor's own, a cross-check only. Both sides enqueue a whole batch up front, the judge once the
// executor has its message (a host's enqueue blocks while its queue on the device is full). The counters are in memory
// the executor can write: forging them gains nothing (an early `ready` runs the kernel on inputs not yet revealed; an
// early `done` ends the judge's clock before the outputs are complete, which the checksum at J1 and the comparison
// after the batch see).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace khive::exec {

// Offsets of the counters in the gate region (each on its own 128-byte line).
inline constexpr std::size_t kGateReady = 0, kGateDone = 128, kGateGo = 256, kGateBytes = 384;

// A wait for `value` passes once (int32_t)(*flag - value) >= 0: CUDA compares the counters cyclically. Values only
// grow within a region (by far less than 2^31), so "after" is well defined.
constexpr bool gate_passes(uint32_t flag, uint32_t value) { return static_cast<int32_t>(flag - value) >= 0; }
// What the judge writes to release every wait it has enqueued when the executor failed mid-batch: past every value
// handed out so far (`next` is the first one not handed out), within half the cycle. (0xffffffff, the first
// choice, reads as *before* every small value: the judge's stream then waited out the whole timeout.)
constexpr uint32_t gate_release_value(uint32_t next) { return next + (1u << 20); }

// The primer: an empty kernel of kPrimerBlocksPerSm blocks per SM that each timed call enqueues after its `ready`,
// before event S (device_cuda.cu says why). KHIVE_EXEC_PRIMER sets the count: an integer 0 (off) to
// kPrimerMaxBlocksPerSm; the judge refuses anything else before it starts an executor, which reads it with the same
// rule.
inline constexpr int kPrimerBlocksPerSm = 2, kPrimerMaxBlocksPerSm = 32;
// KHIVE_EXEC_PRIMER's value (nullptr or "": unset) as blocks per SM; nullopt when it is not such a count.
constexpr std::optional<int> primer_blocks_per_sm(const char* v) {
  if (!v || !*v) return kPrimerBlocksPerSm;
  int n = 0;
  for (const char* p = v; *p; ++p) {  // (no range-for with an initialiser: the CUDA sources are C++17)
    const char c = *p;
    if (c < '0' || c > '9') return std::nullopt;
    n = 10 * n + (c - '0');
    if (n > kPrimerMaxBlocksPerSm) return std::nullopt;
  }
  return n;
}

// KHIVE_EXEC_TRIAL: comma-separated switches for measuring what in khive's executors changes a kernel's time (issue
// 21; scripts/device.sh step envprobe). Not for normal runs. keep_l2_limit: the executor sets no persisting-L2 size;
// go_after_launch: its `go` is signalled after the call's launch, not before (a launch that blocks on its own stream
// then holds the call until the judge's timeout); lazy_modules: CUDA_MODULE_LOADING=LAZY for the executor (the judge
// sets it; with the sandbox on, an H100 evaluation had not ended when its device call did: pair it with no_sandbox);
// no_sandbox: the judge asks for no seccomp, Landlock, network namespace or capability drop (the preflight shows each
// layer off).
inline constexpr std::string_view kExecTrials[] = {"keep_l2_limit", "go_after_launch", "lazy_modules", "no_sandbox"};

// The first word of KHIVE_EXEC_TRIAL's value (nullptr or "": unset) that is not one of kExecTrials, if any: a
// misspelt switch would otherwise measure the base case under the switch's name.
inline std::optional<std::string> unknown_exec_trial(const char* v) {
  for (std::string_view s(v ? v : ""); !s.empty();) {
    const std::size_t c = s.find(',');
    const std::string_view w = s.substr(0, c);
    bool known = false;
    for (std::string_view k : kExecTrials) known = known || w == k;
    if (!known) return std::string(w);
    s = c == std::string_view::npos ? std::string_view() : s.substr(c + 1);
  }
  return std::nullopt;
}

inline bool exec_trial(std::string_view what) {
  const char* v = std::getenv("KHIVE_EXEC_TRIAL");
  for (std::string_view s(v ? v : ""); !s.empty();) {
    const std::size_t c = s.find(',');
    if (s.substr(0, c) == what) return true;
    s = c == std::string_view::npos ? std::string_view() : s.substr(c + 1);
  }
  return false;
}

// KHIVE_EXEC_PROFILER: a command line (words split on spaces, the first an absolute path) that the judge puts in
// front of every native executor's own, so that a profiler (ncu) sees the kernels inside khive's executor and nothing
// of the judge (ncu following the whole `khive eval` crashes the judge: docs/results/2026-12-07-h100-s11). Issue 21's
// measurement of one kernel in the executor against an in-process harness; not for normal runs: the judge refuses it
// unless KHIVE_EXEC_TRIAL has no_sandbox (a profiler's injection needs system calls outside the executor's allowlist).
// No words when unset or blank; an error naming what is wrong when it is not such a command line.
struct ProfilerArgv {
  std::vector<std::string> words;  // empty: no profiler
  std::string error;               // non-empty: refuse, with this message
};
inline ProfilerArgv profiler_argv(const char* v) {
  ProfilerArgv r;
  for (std::string_view s(v ? v : ""); !s.empty();) {
    const std::size_t b = s.find_first_not_of(' ');
    if (b == std::string_view::npos) break;
    s.remove_prefix(b);
    const std::size_t e = s.find(' ');
    r.words.emplace_back(s.substr(0, e));
    s = e == std::string_view::npos ? std::string_view() : s.substr(e);
  }
  if (!r.words.empty() && r.words.front().front() != '/')
    r.error = "KHIVE_EXEC_PROFILER starts with '" + r.words.front() +
              "': expected the profiler's absolute path (the executor's PATH is /usr/bin:/bin)";
  return r;
}

#if defined(KHIVE_WITH_CUDA)
// The stream waits until gate_passes(*(uint32_t*)flag, value).
void stream_wait_geq(void* stream, void* flag, uint32_t value);
// The stream writes value to *(uint32_t*)flag once the work before it on the stream is done, after a system-wide
// memory fence (CU_STREAM_WRITE_VALUE_DEFAULT): the H200's driver refuses the unfenced write (invalid argument,
// 2026-12-03). The fence is not what makes memory-touching kernels read ~2-2.5 us long in the judge's bracket: a
// `done` stored by a one-thread kernel instead read the same (bench/gate_probe op 4; docs/guard.md, "What remains
// possible").
void stream_write(void* stream, void* flag, uint32_t value);
#endif

}  // namespace khive::exec
