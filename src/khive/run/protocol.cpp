#include "khive/run/protocol.hpp"

namespace khive {

const char* check_name(Check c) {
  switch (c) {
    case Check::preflight: return "preflight";
    case Check::build: return "build";
    case Check::run: return "run";
    case Check::inputs: return "inputs";
    case Check::written: return "written";
    case Check::correctness: return "correctness";
    case Check::determinism: return "determinism";
    case Check::anti_caching: return "anti-caching";
    case Check::timing: return "timing";
    case Check::timed_outputs: return "timed outputs";
    case Check::plausibility: return "plausibility";
    case Check::acceptance: return "acceptance";
  }
  return "?";
}

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

void to_json(nlohmann::json& j, const TimingPlan& p) {
  j = {{"seed_base", p.seed_base}, {"validate_at", p.validate_at}, {"warmup", p.warmup},
       {"min_samples", p.min_samples}, {"max_samples", p.max_samples}, {"target_noise", p.target_noise},
       {"time_cap_s", p.time_cap_s}};
}
void from_json(const nlohmann::json& j, TimingPlan& p) {
  p.seed_base = j.at("seed_base").get<uint64_t>();
  p.validate_at = j.at("validate_at").get<std::vector<int>>();
  p.warmup = j.at("warmup").get<int>();
  p.min_samples = j.at("min_samples").get<int>();
  p.max_samples = j.at("max_samples").get<int>();
  p.target_noise = j.at("target_noise").get<double>();
  p.time_cap_s = j.at("time_cap_s").get<double>();
}

void to_json(nlohmann::json& j, const Job& job) {
  nlohmann::json gs = nlohmann::json::array();
  for (auto& g : job.goldens) gs.push_back({{"workload", g.workload}, {"input", g.input}});
  j = {{"mode", job.mode}, {"backend", job.backend}, {"task_dir", job.task_dir}, {"library", job.library},
       {"leader_library", job.leader_library}, {"golden_dir", job.golden_dir}, {"goldens", gs},
       {"seeds", job.seeds}, {"new_data_seed", job.new_data_seed}, {"perturb_seed", job.perturb_seed},
       {"check_correctness", job.check_correctness}, {"time", job.time}, {"timing", job.timing},
       {"only_workloads", job.only_workloads}, {"perf_workloads", job.perf_workloads}, {"orchestrator_netns", job.orchestrator_netns},
       {"seccomp", job.seccomp}, {"golden_full_limit_bytes", job.golden_full_limit_bytes},
       {"golden_sample_count", job.golden_sample_count}, {"golden_timed_limit_bytes", job.golden_timed_limit_bytes},
       {"inputs_version", job.inputs_version}};
}
void from_json(const nlohmann::json& j, Job& job) {
  job.mode = j.at("mode").get<std::string>();
  job.backend = j.at("backend").get<std::string>();
  job.task_dir = j.value("task_dir", "");
  job.library = j.value("library", "");
  job.leader_library = j.value("leader_library", "");
  job.golden_dir = j.value("golden_dir", "");
  job.goldens.clear();
  for (auto& g : j.value("goldens", nlohmann::json::array()))
    job.goldens.push_back({g.at("workload").get<std::string>(), g.at("input").get<InputSpec>()});
  job.seeds = j.value("seeds", std::vector<uint64_t>{});
  job.new_data_seed = j.value("new_data_seed", uint64_t{0});
  job.perturb_seed = j.value("perturb_seed", uint64_t{0});
  job.check_correctness = j.value("check_correctness", true);
  job.time = j.value("time", true);
  if (j.contains("timing")) job.timing = j.at("timing").get<TimingPlan>();
  job.only_workloads = j.value("only_workloads", std::vector<std::string>{});
  job.perf_workloads = j.value("perf_workloads", std::string());
  job.orchestrator_netns = j.value("orchestrator_netns", uint64_t{0});
  job.seccomp = j.value("seccomp", true);
  job.golden_full_limit_bytes = j.value("golden_full_limit_bytes", int64_t{256} << 20);
  job.golden_sample_count = j.value("golden_sample_count", int64_t{1} << 22);
  job.golden_timed_limit_bytes = j.value("golden_timed_limit_bytes", int64_t{16} << 20);
  job.inputs_version = j.value("inputs_version", 0);
  if (job.golden_full_limit_bytes < 1 || job.golden_sample_count < 2 || job.golden_timed_limit_bytes < 1)
    throw std::invalid_argument("job: golden_full_limit_bytes must be >= 1 and golden_sample_count >= 2");
}

}  // namespace khive
