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
#include "khive/judge/executor.hpp"

namespace khive {

class ExecutorProcess : public Executor {
 public:
  ExecutorProcess(const ExecutorSpec& spec, JudgeDevice& dev);  // throws ExecutorFault (before_load) if it cannot start
  ~ExecutorProcess() override;
  ExecutorProcess(const ExecutorProcess&) = delete;
  ExecutorProcess& operator=(const ExecutorProcess&) = delete;

  // The Executor interface (executor.hpp says what each one does), over a khive-exec process.
  const nlohmann::json& sandbox() const override { return sandbox_; }
  void note_sandbox(const std::string& layer, const std::string& note) override { sandbox_[layer] = note; }
  const std::string& role() const override { return spec_.role; }
  bool loaded() const override { return loaded_; }
  void share(const Arena& arena, bool goldens) override;
  void share(const nlohmann::json& map, const nlohmann::json& layout, const std::vector<int>& fds) override;
  void share_gate(SharedRegion& gate) override;
  Overhead calibrate_batch(int calls, int exchanges, const std::function<void()>& before) override;
  void load() override;
  // (executor/gate.hpp: a host's enqueue blocks while its queue on the device is full, and the judge's queue drains
  // only as the executor's calls come; enqueued before the message, a long batch could wait for ever: hence
  // after_send.)
  Exchange call(const std::vector<Call>& calls, uint32_t gate_first = 0,
                const std::function<void()>& after_send = {}) override;
  Exchange null_gated(int calls, uint32_t gate_first, const nlohmann::json& touch = nullptr,
                      const std::function<void()>& after_send = {}) override;
  void finish() override;
  std::string log_tail(std::size_t max_bytes = 2000) const override;

 private:
  Exchange exchange(const nlohmann::json& msg, const std::vector<int>& fds, const char* expect,
                    const std::function<void()>& after_send = {});
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
