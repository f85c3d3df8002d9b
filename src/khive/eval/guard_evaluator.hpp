// The hive's real evaluator: every candidate through the guard (evaluate_kernel), with one seed base per
// run, the reference and the baselines timed once in prepare() and handed to every later evaluation (EvalOptions::
// measured, so the task score is eval's, computed once, against them), builds in parallel outside the device
// slots, and each judge process (with its executors) holding one device slot exclusively (one slot per visible
// GPU; one slot on the CPU backend, where builds also wait while a judge times: they would steal its cores).
#pragma once
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "khive/eval/evaluate.hpp"
#include "khive/eval/evaluator.hpp"

namespace khive {

class GuardEvaluator : public Evaluator {
 public:
  // slots: device ids for CUDA_VISIBLE_DEVICES ("0", "1", ...); empty = one slot (CPU: "cpu"; CUDA: inherit).
  // base.seed must be set (the run's seed base); base.leader is filled per candidate.
  GuardEvaluator(const Task& task, Backend backend, EvalOptions base, std::vector<std::string> slots = {});
  Evaluation prepare(const std::filesystem::path& reference) override;
  Evaluation prepare_pytorch() override;
  Evaluation evaluate(const std::filesystem::path& source, const std::optional<std::filesystem::path>& leader) override;
  std::vector<SlotUsage> slot_usage() const override;
  // Check 1 without a device: the build (cached by content) and the symbol policy, as the guard applies them.
  Evaluation build_only(const std::filesystem::path& source) override;
  Prebuilt prebuild(const std::filesystem::path& source, const std::atomic<bool>* cancel) override;
  void stop_evaluating(bool in_flight) override;

 private:
  Evaluation from_report(const EvalReport& r) const;
  BuildResult build(const std::filesystem::path& source, const std::atomic<bool>* cancel = nullptr);
  // prepare()'s and prepare_pytorch()'s: the runs kept for every later evaluation; `reference` is r's candidate, or
  // r's PyTorch when that was the kernel under test.
  Evaluation prepared(const EvalReport& r, bool candidate_is_pytorch);
  int acquire();  // -1 once stop_evaluating was called
  void release(int slot, double busy_s);
  EvalReport evaluate_in_slot(const std::filesystem::path& kernel, EvalOptions o);

  const Task& task_;
  Backend backend_;
  EvalOptions base_;
  std::shared_ptr<const MeasuredRuns> measured_;  // from prepare(): reference, baselines, PyTorch
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<SlotUsage> slots_;
  std::vector<std::string> slot_dev_;
  std::vector<bool> busy_;
  std::shared_mutex cpu_;            // CPU backend: builds shared, a judge exclusive
  bool stopping_ = false;            // under mu_: no evaluation starts on a slot any more
  std::atomic<bool> cancel_{false};  // the judges on the slots are killed (JudgeOptions::cancel)
};

// Visible GPUs as slot ids: $CUDA_VISIBLE_DEVICES when set, else the indices nvidia-smi lists; empty when none.
std::vector<std::string> visible_gpu_slots();

// Weighted geometric mean of per-workload times (the hive's single "time" of a kernel).
double weighted_geomean(const std::map<std::string, double>& t, const std::map<std::string, double>& weight);

}  // namespace khive
