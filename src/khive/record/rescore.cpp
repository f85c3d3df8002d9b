// khive rescore (rescore.hpp).
#include "khive/record/rescore.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "khive/eval/pytorch_baselines.hpp"
#include "khive/record/run_records.hpp"
#include "khive/task/task.hpp"

namespace khive {

const RescoredCandidate* Rescore::find(const std::string& id) const {
  for (const auto& c : candidates)
    if (c.id == id) return &c;
  return nullptr;
}

Rescore rescore_run(const std::filesystem::path& run_dir, const std::filesystem::path& task_dir,
                    const HardwareProfile& profile) {
  const RunRecords rr = load_run_records(run_dir);
  const std::string db_file = (run_dir / "run.db").string();
  Rescore r;
  r.reference = rr.reference;
  r.leader = rr.leader;
  r.backend = rr.backend;
  Task task = load_task(task_dir);
  r.task = task.name;
  const auto backend = parse_backend(r.backend);
  if (!backend) throw std::runtime_error(db_file + ": backend: expected cpu or cuda, got \"" + r.backend + "\"");
  const std::string pattern = rr.options.value("perf_workloads", std::string());
  if (!pattern.empty()) select_perf_workloads(task, pattern, *backend);  // the run timed only these

  r.device = profile.name;
  const auto pytorch = find_pytorch_baselines(task, *backend, profile.name);
  if (pytorch) r.pytorch_file = pytorch->file.string();
  const auto& cands = rr.candidates;
  const CandidateRecord* ref = nullptr;
  for (const auto& c : cands)
    if (c.id == r.reference) ref = &c;
  if (!ref || ref->workload_median_s.empty())
    throw std::runtime_error(run_dir.string() + ": candidate " + r.reference +
                             " (the reference) has no recorded medians");

  std::map<std::string, double> weight;
  for (const auto& w : task.workloads) {
    if (!w.timed_on(*backend)) continue;
    weight[w.uuid] = w.weight;
    r.t_sol[w.uuid] = score_t_sol(task, resolve_axes(task, w), profile);  // datasheet roofline (score.hpp)
    if (auto s = pytorch ? pytorch->lookup(task, w.uuid) : std::nullopt) {
      r.t_b[w.uuid] = s->median;
      r.t_b_label[w.uuid] = "pytorch";
    } else if (auto it = ref->workload_median_s.find(w.uuid); it != ref->workload_median_s.end()) {
      r.t_b[w.uuid] = it->second;
      r.t_b_label[w.uuid] = "reference";
    }
  }
  for (const auto& c : cands) {
    if (!c.accepted()) continue;
    RescoredCandidate rc{c.id, c.standing, c.time_s, c.score, std::nullopt};
    std::vector<WorkloadScoreInput> in;
    for (const auto& [uuid, wt] : weight) {
      auto m = c.workload_median_s.find(uuid);
      std::optional<double> tb;
      if (auto it = r.t_b.find(uuid); it != r.t_b.end()) tb = it->second;
      in.push_back(
          {wt, m != c.workload_median_s.end(), m != c.workload_median_s.end() ? m->second : 0.0, r.t_sol[uuid], tb});
    }
    rc.rescored = task_score(in);
    r.candidates.push_back(rc);
  }
  return r;
}

}  // namespace khive
