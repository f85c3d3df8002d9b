// What the orchestrator asks a runner process to do (Job), and the names both sides use for checks
// and reasons. The runner answers with frames on the channel (channel.hpp):
//   {"type":"progress","check":5,"workload":"w3","note":"seed 2"}   where it is, for crash reports
//   {"type":"result", ...}                                            the observations (see runner/)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace khive {

// Guard checks, DESIGN.md order.
enum class Check : int {
  preflight = 0, build = 1, run = 2, inputs = 3, written = 4, correctness = 5, determinism = 6,
  anti_caching = 7, timing = 8, timed_outputs = 9, plausibility = 10, acceptance = 11,
};
const char* check_name(Check c);   // "preflight", "build", ...

// One set of input data: fresh values for `seed`; when perturb_seed != 0, a sparse set of elements in
// the second half of each input (fraction of them, plus the last element) is replaced by values drawn
// with perturb_seed. Goldens are keyed by this spec.
struct InputSpec {
  uint64_t seed = 1;
  uint64_t perturb_seed = 0;
  double fraction = 0.01;
  std::string key() const;   // "s1" | "s1p7"
  bool operator==(const InputSpec& o) const { return seed == o.seed && perturb_seed == o.perturb_seed && fraction == o.fraction; }
};
void to_json(nlohmann::json& j, const InputSpec& s);
void from_json(const nlohmann::json& j, InputSpec& s);

struct TimingPlan {
  uint64_t seed_base = 1000;            // base data of the timed samples (see timing_input)
  std::vector<int> validate_at;         // samples whose outputs are compared with goldens (check 9)
  int warmup = 3;
  int min_samples = 10, max_samples = 200;
  double target_noise = 0.005;
  double time_cap_s = 2.0;
};
// The inputs of timed sample k: the base data (seed_base) with its own perturbation (0.2% of the
// second half of every input, and the last element), so no two samples see the same inputs. Enough to
// make a replayed output wrong on thousands of sampled positions; few enough that the per-sample work
// (random accesses, O(k)) stays small next to the kernel.
inline InputSpec timing_input(const TimingPlan& p, int k) {
  return InputSpec{p.seed_base, p.seed_base + 1 + static_cast<uint64_t>(k), 0.002};
}
void to_json(nlohmann::json& j, const TimingPlan& p);
void from_json(const nlohmann::json& j, TimingPlan& p);

// The version of how inputs, perturbations and goldens are made. Goldens live under goldens/v<N>/, and a
// runner refuses a job from a khive of another version: the two processes must make the same inputs, or
// honest kernels would be judged against goldens of other data. Bump it with any change to check/inputs.hpp,
// timing_input or the golden format.
inline constexpr int kInputsVersion = 5;

struct GoldenRequest {
  std::string workload;   // uuid
  InputSpec input;
};

struct Job {
  std::string mode;              // "golden" | "evaluate" | "ab" | "calibrate"
  std::string backend;           // "cpu" | "cuda"
  std::string task_dir;
  std::string library;           // the candidate (or reference in golden mode)
  std::string leader_library;    // mode "ab": A = leader, B = candidate
  std::string golden_dir;        // where goldens are read (evaluate) or written (golden)
  std::vector<GoldenRequest> goldens;      // mode golden
  // mode evaluate:
  std::vector<uint64_t> seeds;             // correctness seeds (fresh per evaluation)
  uint64_t new_data_seed = 0;              // check 7: new data at old addresses
  uint64_t perturb_seed = 0;               // check 7: a few elements changed at old addresses
  bool check_correctness = true;           // checks 3-7 on correctness workloads
  bool time = true;                        // checks 8-9 on perf workloads
  TimingPlan timing;
  std::vector<std::string> only_workloads; // empty = all
  std::string perf_workloads;              // select_perf_workloads pattern the runner applies to the task (empty: none)
  uint64_t orchestrator_netns = 0;         // inode of the orchestrator's network namespace
  bool seccomp = true;
  // Goldens are files in the cache: an output larger than this keeps only a sample of golden_sample_count
  // elements (sample_index in check/inputs.hpp), and timed outputs are compared on that sample.
  int64_t golden_full_limit_bytes = 256ll << 20;
  int64_t golden_sample_count = 1ll << 22;
  // Timed samples (check 9) look for work skipped or wrong under timing, not for a subtle numeric error
  // (the correctness workloads are compared whole): their goldens are sampled above 16 MiB, on 2^20
  // elements drawn anew for every sample. A kernel that skips a fraction f of its work escapes with
  // probability (1 - f)^(2^20).
  int64_t golden_timed_limit_bytes = 16ll << 20;
  int inputs_version = kInputsVersion;
};
void to_json(nlohmann::json& j, const Job& job);
void from_json(const nlohmann::json& j, Job& job);

// Marker the runner's SIGSYS handler prints to stderr before exiting with kSandboxExit.
inline constexpr const char* kSandboxMarker = "khive-sandbox: forbidden system call ";
inline constexpr int kSandboxExit = 159;

}  // namespace khive
