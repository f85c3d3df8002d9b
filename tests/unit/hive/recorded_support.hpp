// Fixtures of the recorded-evaluator tests (recorded_evaluator_test.cpp, recorded_replay_test.cpp): the curated H200
// recordings of tests/recordings/, their tasks, the tuner's library bound to them, a recorded candidate rendered
// again by the tuner (a template point, or a composite from its recorded variants and routes), and a hive run of
// tuner agents through a RecordedEvaluator in a fresh directory.
//
//   const Recorded& r = recorded("h200-kb08-relayout.json");          // recording, task, library, binding
//   std::string src = render_recorded(r, r.rec.candidates[0]);          // the tuner's source for that point
//   Replay rp = replay(r, {.agents = 1, .plateau = 3, .budget = 30});   // rp.records, rp.events, rp.stats, rp.result
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "khive/eval/recorded_evaluator.hpp"
#include "khive/hive/hive.hpp"
#include "khive/record/event_log.hpp"
#include "khive/record/run_records.hpp"
#include "khive/support/files.hpp"
#include "khive/tuner/bind.hpp"
#include "khive/tuner/compose.hpp"
#include "khive/tuner/library.hpp"
#include "khive/tuner/space.hpp"
#include "khive/tuner/tuner.hpp"

namespace khive::recorded_test {

namespace fs = std::filesystem;

inline const fs::path& repo() {
  static const fs::path p = KHIVE_SOURCE_DIR;
  return p;
}

inline const tuner::Library& library() {
  static const tuner::Library l = tuner::load_library(repo() / "kernels");
  return l;
}

struct Recorded {
  Recording rec;
  Task task;
  tuner::BoundTask bt;
};

// Loaded once per file name (tests/recordings/NAME).
inline const Recorded& recorded(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Recorded>> cache;
  auto& slot = cache[name];
  if (!slot) {
    Recording rec = load_recording(repo() / "tests/recordings" / name);
    Task task = load_recorded_task(rec, repo());
    const Backend b = rec.backend == "cuda" ? Backend::cuda : Backend::cpu;
    const tuner::Binding* binding = library().binding_for(task);
    if (!binding) throw std::runtime_error(name + ": the library has no binding for " + rec.task_dir);
    tuner::BoundTask bt = tuner::bind_task(task, b, *binding);
    slot = std::make_unique<Recorded>(Recorded{std::move(rec), std::move(task), std::move(bt)});
  }
  return *slot;
}

inline Backend backend_of(const Recorded& r) { return r.rec.backend == "cuda" ? Backend::cuda : Backend::cpu; }

inline bool is_composite(const std::map<std::string, std::string>& params) {
  auto t = params.find("template");
  return t != params.end() && t->second == tuner::kDispatchTemplate;
}

// The recorded candidate's kernel as the tuner renders it today: a template point, or a composite of its recorded
// variants routed as recorded.
inline std::string render_recorded(const Recorded& r, const std::map<std::string, std::string>& params) {
  if (!is_composite(params)) {
    const tuner::Template* t = library().find_template(params.at("template"));
    if (!t) throw std::runtime_error("template " + params.at("template") + " is not in kernels/");
    return tuner::render(*t, r.bt, tuner::point_from_params(*t, params));
  }
  std::vector<tuner::Variant> variants;
  for (const auto& p : tuner::dispatch_variant_points(params)) {
    const tuner::Template* t = library().find_template(p.at("template"));
    if (!t) throw std::runtime_error("template " + p.at("template") + " is not in kernels/");
    variants.push_back({t, tuner::point_from_params(*t, p), ""});
  }
  std::map<std::string, int> to;  // workload -> variant
  std::string route = params.at("route");
  for (std::size_t i = 0; i < route.size();) {
    std::size_t j = route.find(' ', i);
    if (j == std::string::npos) j = route.size();
    const std::string tok = route.substr(i, j - i);
    const auto eq = tok.rfind("=v");
    if (eq != std::string::npos) to[tok.substr(0, eq)] = std::stoi(tok.substr(eq + 2));
    i = j + 1;
  }
  std::vector<tuner::Route> routes;
  for (const auto& s : tuner::perf_shapes(r.task, r.bt))
    routes.push_back({s.workloads, s.axes, to.at(s.workloads.front())});
  return tuner::render_composite(r.task, r.bt, variants, routes);
}

inline fs::path write_kernel(const fs::path& dir, const std::string& name, const std::string& source) {
  fs::create_directories(dir);
  const fs::path p = dir / name;
  write_file_atomic(p, source);
  return p;
}

// An agent with no strategy for any task: the hive marks it done at once. Placed before a tuner agent, it gives the
// tuner the index (and so the first strategy and the seed) that agent had in the recorded run.
class IdleAgent : public Agent {
 public:
  std::string kind() const override { return "idle"; }
  std::vector<Strategy> strategies(const Task&, Backend) const override { return {}; }
  std::optional<Proposal> propose(const AgentContext&) override { return std::nullopt; }
  std::optional<BoardEntry> observe(const AgentContext&, const Proposal&, const Outcome&) override {
    return std::nullopt;
  }
};

struct ReplayOptions {
  int idle = 0;    // idle agents first: the tuner agents get indices idle, idle + 1, ...
  int agents = 1;  // tuner agents (one: a deterministic replay)
  int plateau = 6;
  int budget = 30;
  int max_backups = 8;
  int backups_per_family = 2;
  bool model_composites = false;
  std::vector<std::string> tried;  // points (point_key form) marked as already proposed before the replay starts
};

// A directory removed when the last copy of its holder goes.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& prefix) : path(make_temp_dir(fs::temp_directory_path(), prefix)) {}
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

struct Replay {
  HiveResult result;
  RunRecords records;                  // the replay's own run, as khive export reads it
  std::vector<nlohmann::json> events;  // events.jsonl, in order
  RecordedEvaluator::Stats stats;
  std::shared_ptr<TempDir> dir;
};

inline Replay replay(const Recorded& r, const ReplayOptions& ro) {
  RecordedOptions eo;
  eo.model_composites = ro.model_composites;
  RecordedEvaluator ev(r.task, backend_of(r), r.rec, eo);
  std::vector<std::unique_ptr<Agent>> agents;
  for (int i = 0; i < ro.idle; ++i) agents.push_back(std::make_unique<IdleAgent>());
  TunerOptions to;
  to.kernels_dir = repo() / "kernels";
  to.templates = recorded_templates(r.rec);  // the library as the recorded run knew it (templates added since: not)
  to.memory = std::make_shared<TunerMemory>();
  for (const auto& k : ro.tried) to.memory->try_mark(k);
  for (int i = 0; i < ro.agents; ++i) agents.push_back(make_tuner_agent(to));
  Replay out;
  out.dir = std::make_shared<TempDir>("khive-replay-");
  HiveOptions o;
  o.run_dir = out.dir->path / "run";
  o.seed = r.rec.seed;  // the recorded run's seed: each agent gets the seed its index had there
  o.plateau = ro.plateau;
  o.budget_candidates = ro.budget;
  o.max_backups = ro.max_backups;
  o.max_backups_per_family = ro.backups_per_family;
  o.max_harness_errors = 1000;  // unrecorded candidates are harness errors; the replay goes on past them
  Hive hive(r.task, backend_of(r), std::move(agents), ev, o);
  out.result = hive.run();
  out.records = load_run_records(o.run_dir);
  out.events = read_event_log(o.run_dir / "events.jsonl").events;
  out.stats = ev.stats();
  return out;
}

// The recorded candidate with this template point (or composite), or null.
inline const RecordedCandidate* recorded_point(const Recording& rec, const std::map<std::string, std::string>& params) {
  const std::string k = recorded_point_key(params);
  for (const auto& c : rec.candidates)
    if (!k.empty() && recorded_point_key(c.params) == k) return &c;
  return nullptr;
}

}  // namespace khive::recorded_test
