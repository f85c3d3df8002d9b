// The judge's handle on one executor process (executor/protocol.hpp): start it sandboxed, talk to it, and time
// every exchange with the judge's own clock. The executor runs only while the judge waits for its answer: it is
// SIGSTOPped as soon as it has answered (and before the judge touches anything it shares), and continued just
// before the next message, so nothing it leaves behind runs beside the judge's fills, checks, other executors or
// timing; on a GPU the judge then drains the device (JudgeDevice::drain) before it reads its clock.
//
//   ExecutorProcess ex(spec);                 // fork + exec khive-exec, wait for hello (sandbox report)
//   ex.share(arena, false);                   // map + layout
//   Overhead o = ex.calibrate_batch(1, 200, flush);   // null exchanges, before any kernel code is loaded
//   ex.load();
//   Exchange x = ex.call({{0, arena.scalars(0)}});   // x.judge_s: the judge's clock; x.in_process_s: the executor's
//
// Whatever goes wrong is an ExecutorFault: the executor crashed, aborted, hung, broke the sandbox (the system
// call is named: seccomp notifications come to the judge, not to a handler the kernel could replace), spoke
// out of protocol, or reported a CUDA error. `external` is set when it was killed from outside (SIGKILL the judge
// did not send: the OOM killer, an operator), which is a harness error, not the kernel's fault.
#pragma once
#include <sys/types.h>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/executor/protocol.hpp"
#include "khive/guard/checks.hpp"

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
  std::vector<double> copy_s;        // per call, what a PyTorch executor timed as a kernel spent copying run()'s results
                                     // into the output slots (ExecutorSpec::answers_copy); empty otherwise
};

struct Overhead {
  double median_s = 0, jitter_s = 0;                // of one null exchange (or gated null call)
  static Overhead of(std::vector<double> samples);  // median and 1.4826 MAD
};

class ExecutorProcess {
 public:
  ExecutorProcess(const ExecutorSpec& spec, JudgeDevice& dev);  // throws ExecutorFault (before_load) if it cannot start
  ~ExecutorProcess();
  ExecutorProcess(const ExecutorProcess&) = delete;
  ExecutorProcess& operator=(const ExecutorProcess&) = delete;

  const nlohmann::json& sandbox() const { return sandbox_; }
  const std::string& role() const { return spec_.role; }
  bool loaded() const { return loaded_; }
  void share(const Arena& arena, bool goldens);
  // The same exchanges for a share made elsewhere (Arena::Share's parts, e.g. a reference's staged host regions);
  // closes the descriptors.
  void share(const nlohmann::json& map, const nlohmann::json& layout, const std::vector<int>& fds);
  // GPU: the gate region (executor/gate.hpp), kept by the executor for its lifetime.
  void share_gate(SharedRegion& gate);
  // Null batches of `calls` calls, `before` (the judge's flush) ahead of each, as a timed batch is run.
  Overhead calibrate_batch(int calls, int exchanges, const std::function<void()>& before);
  void load();
  struct Call {
    int set;
    nlohmann::json scalars;
  };
  // gate_first > 0: the calls run behind the gate as gate_first, gate_first + 1, ... (the judge has enqueued its
  // side of the gate before this; `before_wait` runs after the message is sent, before the answer is awaited).
  // `after_send` (gated calls): what the judge enqueues on its own stream for these calls, run once the executor
  // has the message and before its answer is awaited (executor/gate.hpp: a host's enqueue blocks while its queue on
  // the device is full, and the judge's queue drains only as the executor's calls come; enqueued before the message,
  // a long batch can wait for ever). If it throws, the executor is killed and the exception passes on.
  Exchange call(const std::vector<Call>& calls, uint32_t gate_first = 0, const std::function<void()>& after_send = {});
  // Null calls behind the gate (before load): the judge's calibration of the gate itself; with `touch` (spans of the
  // mapped regions, Arena::touch_spans), each call reads and writes those spans (executor/device.hpp, TouchCall).
  Exchange null_gated(int calls, uint32_t gate_first, const nlohmann::json& touch = nullptr, const std::function<void()>& after_send = {});
  // Asks it to quit and checks that it ends cleanly (a kernel whose destructors crash at exit is rejected).
  void finish();
  std::string log_tail(std::size_t max_bytes = 2000) const;

 private:
  Exchange exchange(const nlohmann::json& msg, const std::vector<int>& fds, const char* expect, const std::function<void()>& after_send = {});
  exec::Message wait_answer(double deadline);
  void on_notification();
  void stop();
  void resume();
  // CPU backend: the executor's threads one per CPU of its mask, round robin in thread-id order, set by the judge while
  // the executor is stopped (after each answer, when its threads changed). The kernel cannot undo it
  // (sched_setaffinity is outside its allowlist). Without it, a kernel's two OpenMP threads on a 2-core machine shared
  // one core in stretches of dozens of calls (~600 us per call against ~300 us), differently in the two executors of an
  // A/B, and identical kernels read up to 1.7x apart (docs/results/2026-12-03-cpu). KHIVE_CPU_PIN=0 turns it off.
  void pin_threads();
  [[noreturn]] void died(const std::string& while_doing);
  void drain_pipes();
  void kill_now();
  bool try_reap();

  ExecutorSpec spec_;
  JudgeDevice& dev_;
  pid_t pid_ = -1;
  int sock_ = -1, out_ = -1, err_ = -1, notify_ = -1;
  bool stopped_ = false, loaded_ = false, kernel_code_ran_ = false, killed_by_judge_ = false, reaped_ = false;
  int wait_status_ = 0;
  std::vector<int> cpus_;      // the executor's CPU mask, in order (pin_threads)
  std::vector<pid_t> pinned_;  // the thread ids pin_threads last placed
  std::string out_log_, err_log_;
  nlohmann::json sandbox_;
};

}  // namespace khive
