#include "khive/record/run_records.hpp"

#include <map>
#include <stdexcept>

#include "khive/record/event_log.hpp"

namespace khive {

namespace {
// A string field of an event, "" when absent or of another type (events of older runs lack some fields).
std::string event_str(const nlohmann::json& e, const char* key) {
  auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
}
double event_num(const nlohmann::json& e, const char* key) {
  auto it = e.find(key);
  return it != e.end() && it->is_number() ? it->get<double>() : 0.0;
}
}  // namespace

nlohmann::json candidate_event(const CandidateRecord& c) {
  return {{"type", "candidate"},
          {"id", c.id},
          {"agent", c.agent},
          {"strategy", c.strategy},
          {"parent", c.parent},
          {"label", c.label},
          {"hash", c.hash},
          {"file", c.file},
          {"params", c.params},
          {"note", c.note},
          {"verdict", c.standing},
          {"check", c.check_text()},
          {"reason", c.reason},
          {"message", c.message},
          {"score", c.score ? nlohmann::json(*c.score) : nlohmann::json()},
          {"time_s", c.time_s},
          {"delta", c.delta},
          {"workloads", c.workload_median_s},
          {"eval_s", c.eval_s},
          {"comparison", c.comparison ? comparison_json(*c.comparison) : nlohmann::json()}};
}

CandidateRecord candidate_from_event(const nlohmann::json& e) {
  CandidateRecord c;
  c.id = event_str(e, "id");
  for (auto [field, key] : {std::pair{&c.agent, "agent"},
                            {&c.strategy, "strategy"},
                            {&c.parent, "parent"},
                            {&c.label, "label"},
                            {&c.hash, "hash"},
                            {&c.file, "file"},
                            {&c.note, "note"},
                            {&c.reason, "reason"},
                            {&c.message, "message"}})
    *field = event_str(e, key);
  // An event without a verdict (none is written so) reads as a harness error: no verdict; a name this version does not
  // know is an error saying what was expected (verdict/verdict.hpp's readers), never another standing.
  try {
    if (!event_str(e, "verdict").empty()) c.standing = e["verdict"].get<Standing>();
    if (!event_str(e, "check").empty()) c.check = e["check"].get<Check>();
  } catch (const std::invalid_argument& ex) {
    throw std::invalid_argument("candidate " + c.id + ": " + ex.what());
  }
  c.time_s = event_num(e, "time_s");
  c.delta = event_num(e, "delta");
  c.eval_s = event_num(e, "eval_s");
  c.t = event_num(e, "t");
  if (e.contains("params") && e["params"].is_object())
    for (const auto& [k, v] : e["params"].items())
      if (v.is_string()) c.params[k] = v.get<std::string>();
  if (e.contains("score") && e["score"].is_number()) c.score = e["score"].get<double>();
  if (e.contains("workloads") && e["workloads"].is_object())
    for (const auto& [u, m] : e["workloads"].items())
      if (m.is_number()) c.workload_median_s[u] = m.get<double>();
  if (e.contains("comparison") && e["comparison"].is_object()) {
    try {
      c.comparison = comparison_from_json(e["comparison"]);
    } catch (const std::exception&) {
    }
  }
  return c;
}

RunRecords load_run_records(const std::filesystem::path& run_dir, bool require_reference) {
  namespace fs = std::filesystem;
  RunRecords rr;
  const fs::path db_file = run_dir / "run.db", log_file = run_dir / "events.jsonl";
  // A damaged run.db is read around, from the event log, never as an empty run.
  const bool has_db = fs::is_regular_file(db_file);
  const std::optional<std::string> db_problem = has_db ? run_db_problem(db_file) : std::nullopt;
  if (db_problem && !fs::is_regular_file(log_file))
    throw std::runtime_error(db_file.string() + " " + *db_problem + ", and there is no events.jsonl to read instead");
  if (has_db && !db_problem) {
    RunStore db(db_file, RunStore::Access::read_only);
    rr.source = "run.db";
    rr.reference = db.meta("reference").value_or("");
    rr.leader = db.meta("leader").value_or("");
    rr.backend = db.meta("backend").value_or("cuda");
    rr.seed = db.meta("seed").value_or("");
    rr.task = db.meta("task").value_or("");
    rr.task_dir = db.meta("task_dir").value_or("");
    rr.task_dir_from_run = db.meta("task_dir_from_run").value_or("");
    rr.stop_reason = db.meta("stop_reason");
    auto o = nlohmann::json::parse(db.meta("options").value_or("{}"), nullptr, false);
    if (o.is_object()) rr.options = o;
    rr.candidates = db.candidates();
    if (require_reference && rr.reference.empty())
      throw std::runtime_error(db_file.string() + ": meta.reference: the run never measured its reference");
    return rr;
  }
  if (!fs::is_regular_file(log_file))
    throw std::runtime_error(db_file.string() +
                             ": no run database and no events.jsonl (expected a khive optimize run directory)");
  rr.source = db_problem ? "events.jsonl (run.db " + *db_problem + ")" : "events.jsonl";
  std::map<std::string, std::size_t> at;
  for (const auto& e : read_event_log(log_file).events) {
    const std::string type = event_str(e, "type");
    if (type == "start") {
      rr.backend = e.contains("backend") ? event_str(e, "backend") : "cuda";
      rr.task = event_str(e, "task");
      if (e.contains("seed")) rr.seed = e["seed"].is_string() ? e["seed"].get<std::string>() : e["seed"].dump();
      if (e.contains("options") && e["options"].is_object()) rr.options = e["options"];
    } else if (type == "stop" || type == "end") {
      // run.db records the stop reason when the run ends; a log cut after "stop" still says why it stopped.
      if (e.contains("reason")) rr.stop_reason = event_str(e, "reason");
      if (type == "end" && !event_str(e, "leader").empty()) rr.leader = event_str(e, "leader");
    } else if (type == "candidate") {
      CandidateRecord c;
      try {
        c = candidate_from_event(e);
      } catch (const std::invalid_argument& ex) {
        throw std::runtime_error(log_file.string() + ": " + ex.what());
      }
      if (c.strategy == "reference" && rr.reference.empty()) rr.reference = c.id;
      if (c.standing == Standing::leader) rr.leader = c.id;
      if (auto it = at.find(c.id); it != at.end()) {
        c.seq = rr.candidates[it->second].seq;
        rr.candidates[it->second] = c;
      } else {
        c.seq = static_cast<int64_t>(rr.candidates.size());
        at[c.id] = rr.candidates.size(), rr.candidates.push_back(c);
      }
    }
  }
  if (require_reference && rr.reference.empty())
    throw std::runtime_error(log_file.string() + ": no candidate event of the reference (strategy \"reference\")");
  return rr;
}

nlohmann::json run_records_json(const RunRecords& rr, const std::filesystem::path& run_dir) {
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  auto none_if_empty = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
  nlohmann::json cands = nlohmann::json::array();
  for (const auto& c : rr.candidates)
    cands.push_back({{"id", c.id},
                     {"seq", c.seq},
                     {"agent", c.agent},
                     {"strategy", c.strategy},
                     {"parent", c.parent},
                     {"label", c.label},
                     {"file", c.file},
                     {"params", c.params},
                     {"verdict", c.standing},
                     {"check", c.check_text()},
                     {"reason", c.reason},
                     {"message", c.message},
                     {"score", opt(c.score)},
                     {"time_s", c.time_s},
                     {"delta", c.delta},
                     {"workloads", c.workload_median_s},
                     {"t", c.t},
                     {"eval_s", c.eval_s},
                     {"comparison", c.comparison ? comparison_json(*c.comparison) : nlohmann::json(nullptr)}});
  return {{"schema", "khive.run-export/1"},
          {"run", run_dir.string()},
          {"source", rr.source},
          {"meta",
           {{"task", rr.task},
            {"task_dir", rr.task_dir},
            {"task_dir_from_run", rr.task_dir_from_run},
            {"backend", rr.backend},
            {"seed", rr.seed},
            {"reference", none_if_empty(rr.reference)},
            {"leader", none_if_empty(rr.leader)},
            {"stop_reason", opt(rr.stop_reason)},
            {"options", rr.options}}},
          {"candidates", cands}};
}

}  // namespace khive
