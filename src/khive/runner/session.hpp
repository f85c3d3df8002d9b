// One runner session: a device, a task, loaded libraries, and the procedures for the three modes.
//   golden:   run the reference on each requested (workload, inputs) and store its outputs
//   evaluate: guard checks 2-9 on one candidate, stopping at the first failure
//   ab:       interleaved timing of the leader (A) and a candidate (B) for check 11
// Results are JSON objects; the caller signs and sends them.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/run/protocol.hpp"
#include "khive/runner/device.hpp"
#include "khive/task/task.hpp"

namespace khive {

// The first failed check, as the runner saw it.
struct Failure {
  Check check;
  std::string reason, workload, message, diagnosis;
  nlohmann::json to_json() const;
};

using ProgressFn = std::function<void(Check, const std::string& workload, const std::string& note)>;

class Session {
 public:
  Session(Device& dev, const Task& task, const Job& job, ProgressFn progress);
  nlohmann::json run_golden(EntryFn reference);
  nlohmann::json run_evaluate(EntryFn candidate);
  nlohmann::json run_ab(EntryFn leader, EntryFn candidate);

 private:
  struct Buffers;
  std::unique_ptr<Buffers> prepare(const Workload& w);
  void fill_inputs(Buffers& b, const Workload& w, const InputSpec& s);
  void fill_inputs_scalars(Buffers& b, const Workload& w, const InputSpec& s);
  // Timing inputs: the base data (seed) made once and kept pristine; each sample restores it and
  // applies its own perturbation, which is much cheaper than fresh random data on the CPU and still
  // changes every sample's inputs (nothing to replay).
  struct Pristine;
  std::unique_ptr<Pristine> keep_pristine(Buffers& b, const Workload& w, const InputSpec& base);
  // The golden process saves the timed samples' base inputs next to the goldens (CPU backend, <= 1 GiB).
  bool cache_base_inputs(const Workload& w) const;
  std::string base_input_path(const Workload& w, const InputSpec& base, std::size_t input) const;
  // Puts the base data with perturbation `s` into the inputs. Normally O(k): only the elements the previous
  // perturbation changed are copied back. `full` copies every input back (the validated samples, where the
  // inputs are also hashed around the call: a kernel that writes into its inputs is caught there).
  void restore_and_perturb(Buffers& b, Pristine& p, const Workload& w, const InputSpec& s, bool full = false);
  void poison_outputs(Buffers& b, Poison p);
  std::vector<Device::Region> regions(Buffers& b) const;   // inputs and outputs, for the cache flush
  std::vector<uint64_t> input_checksums(Buffers& b);
  const std::string& golden(const Workload& w, const InputSpec& s, std::size_t output);
  // Elements kept in a sampled golden of an n-element output (0: the golden is whole).
  int64_t sample_count(int64_t n, DType t, const InputSpec& s) const;
  static uint64_t sample_key(const InputSpec& s);
  std::string golden_path(const Workload& w, const InputSpec& s, std::size_t output) const;
  // Compares every output with its golden; returns a failure for the first output that does not pass.
  std::optional<Failure> check_outputs(Buffers& b, const Workload& w, const InputSpec& s, Poison p, Check check,
                                       const std::string& reason_if_wrong, const std::string& context);
  std::optional<Failure> guarded_call(EntryFn f, Buffers& b, const Workload& w, const std::string& context);
  std::optional<Failure> check_correctness(EntryFn f, const Workload& w, nlohmann::json& record);
  std::optional<Failure> time_workload(EntryFn f, const Workload& w, nlohmann::json& record);

  Device& dev_;
  const Task& task_;
  const Job& job_;
  ProgressFn progress_;
  std::map<std::string, std::string> golden_cache_;

 public:
  // Where the runner's time went, by phase (seconds): "kernel" is every call of the candidate or reference
  // (wall clock around the call, correctness and timed calls alike); the rest is the guard's own work.
  const std::map<std::string, double>& phases() const { return phases_; }

 private:
  std::map<std::string, double> phases_;
  struct PhaseTimer;
};

}  // namespace khive
