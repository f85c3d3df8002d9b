#include "khive/job/protocol.hpp"

#include <stdexcept>

#include "khive/job/input_keys.hpp"

namespace khive {

std::string InputSpec::key() const {
  std::string k = "s" + std::to_string(seed);
  if (perturb_seed) k += "p" + std::to_string(perturb_seed);
  if (centered) k += "c";
  return k;
}

void to_json(nlohmann::json& j, const InputSpec& s) {
  j = {{"seed", s.seed}, {"perturb_seed", s.perturb_seed}, {"fraction", s.fraction}, {"centered", s.centered}};
}
void from_json(const nlohmann::json& j, InputSpec& s) {
  s.seed = j.at("seed").get<uint64_t>();
  s.perturb_seed = j.value("perturb_seed", uint64_t{0});
  s.fraction = j.value("fraction", 0.01);
  s.centered = j.value("centered", false);
}

Job parse_job(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("job: expected a JSON object");
  for (const char* f : {"mode", "backend", "inputs_version"})
    if (!j.contains(f)) throw std::invalid_argument(std::string("job: the field \"") + f + "\" is missing");
  Job job = j.get<Job>();
  if (job.golden_full_limit_bytes < 1 || job.golden_sample_count < 2 || job.golden_timed_limit_bytes < 1)
    throw std::invalid_argument(
        "job: golden_full_limit_bytes and golden_timed_limit_bytes must be >= 1, golden_sample_count >= 2");
  if (job.seeds < 1) throw std::invalid_argument("job: seeds must be >= 1");
  if (!(job.timeout_s > 0)) throw std::invalid_argument("job: timeout_s must be > 0");
  if (job.mode == "evaluate") InputSecret::from_hex(job.input_secret);  // throws, naming what is wrong
  return job;
}

}  // namespace khive
