// What khive asks a judge process to do (Job), and how inputs are named (InputSpec). The judge answers with
// frames on the channel (channel.hpp):
//   {"type":"progress","check":5,"workload":"w3","note":"seed 2"}   where it is, for crash reports
//   {"type":"result", ...}                                            the verdict and the observations
// The judge is trusted (it never loads kernel code); the kernels run in executors it starts (executor/).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace khive {

// One set of input data: fresh values for `seed`; when perturb_seed != 0, a sparse set of elements in the
// second half of each input (fraction of them, plus the last element) is replaced by values drawn with
// perturb_seed (guard check 7's "a few elements changed"). Goldens are keyed by this spec.
struct InputSpec {
  uint64_t seed = 1;
  uint64_t perturb_seed = 0;
  double fraction = 0.01;
  // Float inputs on the default distribution (none in khive.inputs) drawn with mean 0 instead of 0.5: the default's
  // non-zero mean makes long dot products all positive, and a kernel wrong on negative values (relu for identity,
  // a gated MLP's halves swapped, saturated activations) then looks right (Session::correctness).
  bool centered = false;
  std::string key() const;  // "s1" | "s1p7" | "s1c"
  bool operator==(const InputSpec& o) const {
    return seed == o.seed && perturb_seed == o.perturb_seed && fraction == o.fraction && centered == o.centered;
  }
};
void to_json(nlohmann::json& j, const InputSpec& s);
void from_json(const nlohmann::json& j, InputSpec& s);

struct TimingPlan {
  int warmup = 3;
  int min_samples = 10, max_samples = 200;  // timed batches (solo) or pairs (A/B)
  double target_noise = 0.005;
  double time_cap_s = 2.0;
  // A timed batch is several calls when one call is short, so the judge's clock is long against its own
  // overhead: batch = clamp(target_batch_s / t_call, 1, max_batch) (and what fits in memory).
  double target_batch_s = 0;  // 0 = the backend's default (GPU 1 ms, CPU 5 ms)
  int max_batch = 256;
};
// Every field of these travels (to_json); a field the JSON lacks keeps the default above (from_json).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TimingPlan, warmup, min_samples, max_samples, target_noise, time_cap_s,
                                                target_batch_s, max_batch)

// How the executors are confined (executor/sandbox.hpp). Every layer is on unless a test turns it off.
struct SandboxOptions {
  bool seccomp = true, landlock = true, new_netns = true, drop_capabilities = true;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SandboxOptions, seccomp, landlock, new_netns, drop_capabilities)

// The version of how inputs, perturbations and goldens are made. Goldens live under goldens/v<N>/; a judge
// refuses a job from a khive of another version. Bump it with any change to numerics/inputs.hpp, numerics/prf.hpp,
// job/input_keys.hpp or the golden format. v7: every input from a keyed PRF of a 256-bit secret.
inline constexpr int kInputsVersion = 7;

struct Job {
  std::string mode;     // "evaluate" | "calibrate"
  std::string backend;  // "cpu" | "cuda"
  std::string task_dir;
  std::string perf_workloads;               // select_perf_workloads pattern the judge applies to the task (empty: none)
  std::vector<std::string> only_workloads;  // empty = all
  std::string library;                      // the kernel under test
  // Or the task's PyTorch reference as the kernel under test (T_b on the judge's clock: python/khive_torch/timed.py),
  // run by reference_python in a PyTorch executor confined by reference_jail; `library` is then empty.
  bool library_pytorch = false;
  bool library_vendor = false;  // a vendor baseline: its executor may load the vendor libraries
  std::string leader_library;   // check 11: interleaved A/B against this kernel (empty: none)
  bool leader_vendor = false;
  std::string reference_library;  // makes the goldens that are not cached yet
  // Or, when the task has no native reference for the backend: its PyTorch reference (definition.json "reference"),
  // run by `reference_python -m khive_torch.executor` with PYTHONPATH=reference_pythonpath (interop/python.hpp).
  std::string reference_python, reference_pythonpath;
  // The argv that confines it (khive-jail, its flags and "--", jail/jail.hpp); empty: unconfined (KHIVE_JAIL=off).
  std::vector<std::string> reference_jail;
  std::string golden_dir;         // where goldens are read and written (the judge's alone)
  std::string executor;           // the khive-exec binary
  uint64_t seed_base = 1;         // labels: correctness sets seed_base+1.., check 7's; timed and warm-up calls
  std::string input_secret;       // 64 hex digits: every input's data derive from it (input_keys.hpp)
  int seeds = 3;                  // correctness seeds per workload
  bool check_correctness = true;  // checks 3-7 on correctness workloads
  bool time = true;               // checks 8-9 (and 11) on perf workloads
  TimingPlan timing;
  double ab_alpha = 0.01, ab_alpha_slower = 0.05, ab_min_gain = 0.01;
  int ab_min_pairs = 20;
  double ab_min_gain_s = -1;     // check 11's minimum effect in time; < 0: the backend's (guard/stats.hpp)
  double timeout_s = 120;        // the longest one executor call may take (the reference's too)
  int omp_threads = 0;           // executors' OMP_NUM_THREADS; 0 = all cores
  int64_t cpu_memory_limit = 0;  // executors' RLIMIT_AS on the CPU backend; 0 = 3/4 of physical memory
  SandboxOptions sandbox;
  // Goldens are files: an output larger than this keeps only a sample of golden_sample_count elements
  // (sample_index in numerics/inputs.hpp). Timed goldens (every warm-up and timed call has its own) are sampled above
  // golden_timed_limit_bytes, on 2^16 elements, so a run's cache stays ~1 GB per task: a kernel that skips a fraction
  // f of its work escapes one timed call with probability (1 - f)^(2^16), and every call is compared. A golden made in
  // the evaluation itself is compared whole, on the device.
  int64_t golden_full_limit_bytes = 256ll << 20;
  int64_t golden_sample_count = 1ll << 22;
  int64_t golden_timed_limit_bytes = 1ll << 20;
  int inputs_version = kInputsVersion;
};
// One field list for both directions; a field the JSON lacks keeps Job{}'s default. The judge reads a job with
// parse_job, which also insists on the fields that have no safe default.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Job, mode, backend, task_dir, perf_workloads, only_workloads, library,
                                                library_pytorch, library_vendor, leader_library, leader_vendor,
                                                reference_library, reference_python, reference_pythonpath,
                                                reference_jail, golden_dir, executor, seed_base, input_secret, seeds,
                                                check_correctness, time, timing, ab_alpha, ab_alpha_slower, ab_min_gain,
                                                ab_min_pairs, ab_min_gain_s, timeout_s, omp_threads, cpu_memory_limit,
                                                sandbox, golden_full_limit_bytes, golden_sample_count,
                                                golden_timed_limit_bytes, inputs_version)

// A job as the judge accepts it: mode, backend and inputs_version present (a job without a version is from a
// khive that predates it, never the current one), and the limits in range. Throws std::invalid_argument naming
// the field; nlohmann's type_error when a field has the wrong type.
Job parse_job(const nlohmann::json& j);

}  // namespace khive
