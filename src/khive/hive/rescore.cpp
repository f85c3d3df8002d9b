// khive rescore (rescore.hpp).
#include "khive/hive/rescore.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "khive/eval/pytorch_baselines.hpp"
#include "khive/hive/store.hpp"
#include "khive/task/task.hpp"

namespace khive {

const RescoredCandidate* Rescore::find(const std::string& id) const {
  for (const auto& c : candidates)
    if (c.id == id) return &c;
  return nullptr;
}

namespace {

// What rescoring needs from a run: its reference, leader, backend, options and candidates — from run.db, or, when a
// run directory kept only its event log (the log is the crash-safe record; results folders may omit the database),
// from the log's start, candidate and end events (the last event of a candidate id wins).
struct RunRecords {
  std::string reference, leader, backend;
  nlohmann::json options = nlohmann::json::object();
  std::vector<CandidateRecord> candidates;
};

RunRecords read_run_records(const std::filesystem::path& run_dir) {
  namespace fs = std::filesystem;
  RunRecords rr;
  const fs::path db_file = run_dir / "run.db", log_file = run_dir / "events.jsonl";
  if (fs::is_regular_file(db_file)) {
    RunStore db(db_file);
    rr.reference = db.meta("reference").value_or("");
    rr.leader = db.meta("leader").value_or("");
    rr.backend = db.meta("backend").value_or("cuda");
    auto o = nlohmann::json::parse(db.meta("options").value_or("{}"), nullptr, false);
    if (o.is_object()) rr.options = o;
    rr.candidates = db.candidates();
    if (rr.reference.empty()) throw std::runtime_error(db_file.string() + ": meta.reference: the run never measured its reference");
    return rr;
  }
  if (!fs::is_regular_file(log_file))
    throw std::runtime_error(db_file.string() + ": no run database and no events.jsonl (expected a khive optimize run directory)");
  std::map<std::string, std::size_t> at;
  for (const auto& e : read_event_log(log_file).events) {
    const std::string type = e.value("type", "");
    if (type == "start") {
      rr.backend = e.value("backend", "cuda");
      if (e.contains("options") && e["options"].is_object()) rr.options = e["options"];
    } else if (type == "end") {
      rr.leader = e.value("leader", rr.leader);
    } else if (type == "candidate") {
      CandidateRecord c;
      c.id = e.value("id", "");
      c.verdict = e.value("verdict", "");
      c.strategy = e.value("strategy", "");
      c.time_s = e.value("time_s", 0.0);
      if (e.contains("score") && e["score"].is_number()) c.score = e["score"].get<double>();
      if (e.contains("workloads") && e["workloads"].is_object())
        for (const auto& [u, m] : e["workloads"].items())
          if (m.is_number()) c.workload_median_s[u] = m.get<double>();
      if (c.strategy == "reference" && rr.reference.empty()) rr.reference = c.id;
      if (c.verdict == "leader") rr.leader = c.id;
      if (auto it = at.find(c.id); it != at.end()) rr.candidates[it->second] = c;
      else at[c.id] = rr.candidates.size(), rr.candidates.push_back(c);
    }
  }
  if (rr.reference.empty()) throw std::runtime_error(log_file.string() + ": no candidate event of the reference (strategy \"reference\")");
  return rr;
}

}  // namespace

Rescore rescore_run(const std::filesystem::path& run_dir, const std::filesystem::path& task_dir, const HardwareProfile& profile) {
  const RunRecords rr = read_run_records(run_dir);
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
  if (!pattern.empty()) select_perf_workloads(task, pattern, *backend);   // the run timed only these

  r.device = profile.name;
  const auto pytorch = find_pytorch_baselines(task, *backend, profile.name);
  if (pytorch) r.pytorch_file = pytorch->file.string();
  const auto& cands = rr.candidates;
  const CandidateRecord* ref = nullptr;
  for (const auto& c : cands)
    if (c.id == r.reference) ref = &c;
  if (!ref || ref->workload_median_s.empty())
    throw std::runtime_error(run_dir.string() + ": candidate " + r.reference + " (the reference) has no recorded medians");

  std::map<std::string, double> weight;
  for (const auto& w : task.workloads) {
    if (!w.timed_on(*backend)) continue;
    weight[w.uuid] = w.weight;
    r.t_sol[w.uuid] = sol_seconds(task, resolve_axes(task, w), profile, /*measured=*/true);
    if (auto s = pytorch ? pytorch->lookup(task, w.uuid) : std::nullopt) {
      r.t_b[w.uuid] = s->median;
      r.t_b_label[w.uuid] = "pytorch";
    } else if (auto it = ref->workload_median_s.find(w.uuid); it != ref->workload_median_s.end()) {
      r.t_b[w.uuid] = it->second;
      r.t_b_label[w.uuid] = "reference";
    }
  }
  for (const auto& c : cands) {
    if (c.verdict != "leader" && c.verdict != "backup") continue;
    RescoredCandidate rc{c.id, c.verdict, c.time_s, c.score, std::nullopt};
    std::vector<WorkloadScoreInput> in;
    for (const auto& [uuid, wt] : weight) {
      auto m = c.workload_median_s.find(uuid);
      std::optional<double> tb;
      if (auto it = r.t_b.find(uuid); it != r.t_b.end()) tb = it->second;
      in.push_back({wt, m != c.workload_median_s.end(), m != c.workload_median_s.end() ? m->second : 0.0, r.t_sol[uuid], tb});
    }
    rc.rescored = task_score(in);
    r.candidates.push_back(rc);
  }
  return r;
}

}  // namespace khive
