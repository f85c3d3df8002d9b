#include "khive/run/protocol.hpp"

#include <stdexcept>

#include "khive/check/inputs.hpp"

namespace khive {

std::string InputSpec::key() const {
  std::string k = "s" + std::to_string(seed);
  if (perturb_seed) k += "p" + std::to_string(perturb_seed);
  return k;
}

void to_json(nlohmann::json& j, const InputSpec& s) {
  j = {{"seed", s.seed}, {"perturb_seed", s.perturb_seed}, {"fraction", s.fraction}};
}
void from_json(const nlohmann::json& j, InputSpec& s) {
  s.seed = j.at("seed").get<uint64_t>();
  s.perturb_seed = j.value("perturb_seed", uint64_t{0});
  s.fraction = j.value("fraction", 0.01);
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TimingPlan, warmup, min_samples, max_samples, target_noise, time_cap_s, target_batch_s,
                                                max_batch)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SandboxOptions, seccomp, landlock, new_netns, drop_capabilities)

uint64_t timed_seed(uint64_t input_secret, uint64_t seed_base, const std::string& uuid, uint64_t k) {
  uint64_t h = 0xcbf29ce484222325ull;   // FNV-1a of the workload's uuid
  for (unsigned char c : uuid) h = (h ^ c) * 0x100000001b3ull;
  return counter_hash(input_secret ^ (seed_base * 0x9E3779B97F4A7C15ull), h, k) | 1ull;
}

void to_json(nlohmann::json& j, const Job& job) {
  j = {{"mode", job.mode}, {"backend", job.backend}, {"task_dir", job.task_dir}, {"perf_workloads", job.perf_workloads},
       {"only_workloads", job.only_workloads}, {"library", job.library}, {"library_vendor", job.library_vendor},
       {"leader_library", job.leader_library}, {"leader_vendor", job.leader_vendor}, {"reference_library", job.reference_library},
       {"reference_python", job.reference_python}, {"reference_pythonpath", job.reference_pythonpath}, {"golden_dir", job.golden_dir},
       {"executor", job.executor}, {"seed_base", job.seed_base}, {"input_secret", job.input_secret},
       {"seeds", job.seeds}, {"check_correctness", job.check_correctness}, {"time", job.time}, {"timing", job.timing},
       {"ab_alpha", job.ab_alpha}, {"ab_alpha_slower", job.ab_alpha_slower}, {"ab_min_gain", job.ab_min_gain},
       {"ab_min_pairs", job.ab_min_pairs}, {"timeout_s", job.timeout_s}, {"omp_threads", job.omp_threads},
       {"cpu_memory_limit", job.cpu_memory_limit}, {"sandbox", job.sandbox}, {"golden_full_limit_bytes", job.golden_full_limit_bytes},
       {"golden_sample_count", job.golden_sample_count}, {"golden_timed_limit_bytes", job.golden_timed_limit_bytes},
       {"inputs_version", job.inputs_version}};
}

void from_json(const nlohmann::json& j, Job& job) {
  job.mode = j.at("mode").get<std::string>();
  job.backend = j.at("backend").get<std::string>();
  job.task_dir = j.value("task_dir", "");
  job.perf_workloads = j.value("perf_workloads", std::string());
  job.only_workloads = j.value("only_workloads", std::vector<std::string>{});
  job.library = j.value("library", "");
  job.library_vendor = j.value("library_vendor", false);
  job.leader_library = j.value("leader_library", "");
  job.leader_vendor = j.value("leader_vendor", false);
  job.reference_library = j.value("reference_library", "");
  job.reference_python = j.value("reference_python", "");
  job.reference_pythonpath = j.value("reference_pythonpath", "");
  job.golden_dir = j.value("golden_dir", "");
  job.executor = j.value("executor", "");
  job.seed_base = j.value("seed_base", uint64_t{1});
  job.input_secret = j.value("input_secret", uint64_t{0});
  job.seeds = j.value("seeds", 3);
  job.check_correctness = j.value("check_correctness", true);
  job.time = j.value("time", true);
  if (j.contains("timing")) job.timing = j.at("timing").get<TimingPlan>();
  job.ab_alpha = j.value("ab_alpha", 0.01);
  job.ab_alpha_slower = j.value("ab_alpha_slower", 0.05);
  job.ab_min_gain = j.value("ab_min_gain", 0.01);
  job.ab_min_pairs = j.value("ab_min_pairs", 10);
  job.timeout_s = j.value("timeout_s", 120.0);
  job.omp_threads = j.value("omp_threads", 0);
  job.cpu_memory_limit = j.value("cpu_memory_limit", int64_t{0});
  if (j.contains("sandbox")) job.sandbox = j.at("sandbox").get<SandboxOptions>();
  job.golden_full_limit_bytes = j.value("golden_full_limit_bytes", int64_t{256} << 20);
  job.golden_sample_count = j.value("golden_sample_count", int64_t{1} << 22);
  job.golden_timed_limit_bytes = j.value("golden_timed_limit_bytes", int64_t{16} << 20);
  job.inputs_version = j.value("inputs_version", 0);
  if (job.golden_full_limit_bytes < 1 || job.golden_sample_count < 2 || job.golden_timed_limit_bytes < 1)
    throw std::invalid_argument("job: golden_full_limit_bytes must be >= 1 and golden_sample_count >= 2");
  if (job.seeds < 1) throw std::invalid_argument("job: seeds must be >= 1");
  if (!(job.timeout_s > 0)) throw std::invalid_argument("job: timeout_s must be > 0");
}

}  // namespace khive
