// What the judge needs of one executor (the process that loads one kernel and makes the calls it is handed): the
// seam between the session's checks and the process that runs untrusted code. ExecutorProcess (executor_process.hpp)
// is the real one; unit tests give the session scripted ones (tests/unit/judge/session_test.cpp) that answer late,
// wrongly, with the wrong number of times, or crash, so that each check is exercised in milliseconds without a process.
// Nothing the session decides may depend on an executor telling the truth: every answer is checked (outputs against
// goldens, inputs against their hashes, the judge's clock against the executor's).
#pragma once
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/executor/protocol.hpp"
#include "khive/verdict/verdict.hpp"

namespace khive {

class Arena;
class JudgeDevice;
class SharedRegion;

struct ExecutorFault : std::runtime_error {
  Reason reason;
  bool external = false;     // killed from outside: not the kernel's doing
  bool before_load = false;  // failed before any kernel code was loaded: the harness, not the kernel
  ExecutorFault(Reason r, const std::string& what, bool ext = false, bool pre = false)
      : std::runtime_error(what), reason(r), external(ext), before_load(pre) {}
};

struct ExecutorSpec {
  std::string role;               // "candidate", "leader", "reference", ...: for messages
  std::string path;               // khive-exec (or the interpreter of a PyTorch reference's executor)
  std::vector<std::string> args;  // before --socket/--setup: "-m", "khive_torch.executor" for a PyTorch reference
  std::vector<std::string> env;   // further NAME=value (PYTHONPATH of a PyTorch reference)
  exec::Setup setup;
  double timeout_s = 120;  // the longest one exchange may take
  double spin_s = 0;       // poll for the answer this long before blocking
  int omp_threads = 0;     // 0 = all cores
  std::string cuda_visible_devices;
  // The task's PyTorch reference (python/khive_torch): its layout names each argument's dtype and shape. As a kernel
  // under test (setup.as_kernel) it also answers how long each call spent copying its results into the output slots,
  // which the judge takes off the call's sample: a kernel writes in place, PyTorch's run() allocates its results.
  bool pytorch = false;
};

struct Exchange {
  double judge_s = 0;                // send .. answered, stopped (and the GPU drained): the judge's clock
  double drain_s = 0;                // the drain's share of judge_s (GPU)
  std::vector<double> in_process_s;  // the executor's own per-call times
  std::vector<double> copy_s;  // per call, what a PyTorch executor timed as a kernel spent copying run()'s results
                               // into the output slots (ExecutorSpec::answers_copy); empty otherwise
};

struct Overhead {
  double median_s = 0, jitter_s = 0;                // of one null exchange (or gated null call)
  static Overhead of(std::vector<double> samples);  // median and 1.4826 MAD
};

class Executor {
 public:
  virtual ~Executor() = default;
  struct Call {
    int set;
    nlohmann::json scalars;
  };
  virtual const nlohmann::json& sandbox() const = 0;  // the confinement it reported (its "hello")
  // A note on its confinement from the judge (a layer turned off, and why), reported with the sandbox.
  virtual void note_sandbox(const std::string& layer, const std::string& note) = 0;
  virtual const std::string& role() const = 0;
  virtual bool loaded() const = 0;
  virtual void share(const Arena& arena, bool goldens) = 0;
  // The same exchanges for a share made elsewhere (Arena::Share's parts, e.g. a reference's staged host regions);
  // closes the descriptors.
  virtual void share(const nlohmann::json& map, const nlohmann::json& layout, const std::vector<int>& fds) = 0;
  // GPU: the gate region (executor/gate.hpp), kept by the executor for its lifetime.
  virtual void share_gate(SharedRegion& gate) = 0;
  // Null batches of `calls` calls, `before` (the judge's flush) ahead of each, as a timed batch is run.
  virtual Overhead calibrate_batch(int calls, int exchanges, const std::function<void()>& before) = 0;
  virtual void load() = 0;
  // gate_first > 0: the calls run behind the gate as gate_first, gate_first + 1, ... (the judge has enqueued its
  // side of the gate before this). `after_send` (gated calls): what the judge enqueues on its own stream for these
  // calls, run once the executor has the message and before its answer is awaited. If it throws, the executor is
  // killed and the exception passes on. The answer's in_process_s has one time per call (the session checks it).
  virtual Exchange call(const std::vector<Call>& calls, uint32_t gate_first = 0,
                        const std::function<void()>& after_send = {}) = 0;
  // Null calls behind the gate (before load): the judge's calibration of the gate itself; with `touch` (spans of the
  // mapped regions, Arena::touch_spans), each call reads and writes those spans (executor/device.hpp, TouchCall).
  virtual Exchange null_gated(int calls, uint32_t gate_first, const nlohmann::json& touch = nullptr,
                              const std::function<void()>& after_send = {}) = 0;
  // Asks it to quit and checks that it ends cleanly (a kernel whose destructors crash at exit is rejected).
  virtual void finish() = 0;
  virtual std::string log_tail(std::size_t max_bytes = 2000) const = 0;
};

// How the session starts an executor (default: an ExecutorProcess). Throws ExecutorFault (before_load) if it cannot.
using ExecutorFactory = std::function<std::unique_ptr<Executor>(const ExecutorSpec& spec, JudgeDevice& dev)>;

}  // namespace khive
