// A recorded evaluator (Kernel Tuner's "simulation mode"): answers the hive's Evaluator calls from a run recorded on
// a GPU instead of running the guard, so that the tuner's search, the hive's leader / backup / plateau rules and the
// per-shape dispatcher can be replayed on real measurements on any machine (CI has no GPU). Recordings are small JSON
// files (schema khive.recording/1, format and curation in tests/recordings/README.md).
//
//   Recording rec = load_recording("tests/recordings/h200-softmax-dispatch.json");
//   Task task = load_recorded_task(rec, repo_root);          // the task dir it names, narrowed as the run was
//   RecordedEvaluator ev(task, Backend::cuda, rec);
//   Hive hive(task, Backend::cuda, std::move(agents), ev, o);  // o.seed = rec.seed for the recorded run's proposals
//   hive.run();  ev.stats().unrecorded                          // candidates the recording could not answer
//
// How a candidate is matched (first that applies):
//   1. its source hash (sha256 of ext + source, as run.db keeps it) is a recorded candidate's, or the reference's
//      (the file given to prepare());
//   2. it is a tuner template instance (the header the tuner renders names the template and the point) and the
//      recording holds that template point; or a tuner.dispatch composite (its header names the variants, its routing
//      table which workload runs which) and the recording holds a composite that runs the same point on every
//      timed workload;
//   3. with RecordedOptions::model_composites, a composite of recorded accepted points gets, per workload, the recorded
//      median of the point it runs there ("modeled, not measured" in its message; no score).
// An unrecorded candidate gets status "error", reason "not_recorded", and a message naming the recording and the
// point (or hash): the recording has no verdict on it, so it is no verdict on the kernel. The hive treats it as a
// harness failure: nothing is concluded from it, it does not count towards plateaus, and max_harness_errors in a row
// stop the run (a search that has left what was recorded).
//
// Verdicts, medians and scores are the recorded ones. Check 11 (new leader or backup) cannot be replayed as an
// interleaved A/B of two kernels that may never have been timed together; it is decided on the recorded medians with
// the guard's rule for recorded medians (guard/leader.hpp, compare_recorded_medians) with `noise` and `min_gain` from
// the recording's "rule" (overridable). gain_vs_leader is that rule's weighted gain.
#pragma once
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/eval/evaluator.hpp"
#include "khive/task/task.hpp"

namespace khive {

// One candidate of a recording, as the recorded run judged it (its verdict at recording time; a recording keeps no
// diagnosis).
struct RecordedCandidate : VerdictRecord {
  std::string id, agent, strategy;
  std::string hash;                           // candidate_hash(ext, source) of the recorded source
  std::map<std::string, std::string> params;  // as recorded; "template" names the tuner template
  std::optional<double> score;
  double time_s = 0;  // weighted geometric mean of the medians (accepted)
  double delta = 0;   // recorded gain over the leader of that time
  std::map<std::string, double> workload_median_s;
  double t = 0;       // seconds since the run started, when the verdict was recorded
  double eval_s = 0;  // the evaluation's wall time (it started at about t - eval_s)
};

struct Recording {
  std::filesystem::path file;
  std::string what;                             // one line: the run
  std::string source_run, device, score_basis;  // where it comes from (source_run: the run directory, in history)
  std::string task_name, task_dir, backend;     // task_dir: relative to the repository root
  std::string perf_workloads;                   // the run's --perf-workloads pattern ("" = all)
  std::vector<std::string> timed;               // the perf workloads it timed
  uint64_t seed = 0;
  int agents = 0;
  nlohmann::json options = nlohmann::json::object();  // the run's options, as recorded
  std::string leader;                                 // the recorded run's final leader
  double noise = 0.01, min_gain = 0.005;              // the replay's check-11 rule (see above)
  RecordedCandidate reference;
  std::vector<RecordedCandidate> candidates;  // in recording order, the reference excluded
};

// Reads and validates a recording. Throws std::runtime_error "FILE: FIELD: what was expected".
Recording load_recording(const std::filesystem::path& file);

// The recording's task: root / task_dir loaded, its timed workloads narrowed by the run's pattern.
Task load_recorded_task(const Recording& rec, const std::filesystem::path& repo_root);

// The templates the recorded candidates were made from (params "template", and each "vI" point of a per-shape
// composite): a replay's tuner is given these (TunerOptions::templates), the library as the recorded run knew it.
std::set<std::string> recorded_templates(const Recording& rec);

// The key candidates are matched by: a tuner point "T|K=V|..." (point_key's form, parameters sorted); a composite
// "tuner.dispatch{UUID=T|K=V|...;...}" (per routed workload, sorted by uuid, the point it runs); "" for neither.
std::string recorded_point_key(const std::map<std::string, std::string>& params);
// The same key read from the header the tuner renders into a candidate's first lines; "" when it has none.
std::string source_point_key(const std::string& source);

struct RecordedOptions {
  std::optional<double> noise, min_gain;  // override the recording's rule
  bool model_composites = false;          // see 3. above
};

class RecordedEvaluator : public Evaluator {
 public:
  // Throws std::invalid_argument when the task is not the recording's (name, backend, or timed workloads: apply
  // select_perf_workloads with rec.perf_workloads, or use load_recorded_task).
  RecordedEvaluator(const Task& task, Backend backend, Recording rec, RecordedOptions o = {});

  // The recorded reference's evaluation (its medians are the run's T_b where PyTorch had none); the file given is
  // the reference from now on, whatever its hash.
  Evaluation prepare(const std::filesystem::path& reference) override;
  Evaluation evaluate(const std::filesystem::path& source, const std::optional<std::filesystem::path>& leader) override;
  std::vector<SlotUsage> slot_usage() const override;  // one slot, "recording"

  struct Stats {
    int by_hash = 0, by_point = 0, modeled = 0, unrecorded = 0;
    std::vector<std::string> unrecorded_keys;  // the point key, else "hash:<sha256>", in order
  };
  Stats stats() const;
  const Recording& recording() const { return rec_; }

  // The recorded candidate a source matches (steps 1 and 2 above; the reference only after prepare()), or null.
  const RecordedCandidate* find(const std::string& ext, const std::string& source) const;

 private:
  struct Match {
    const RecordedCandidate* c = nullptr;
    std::string key;
    int how = 0;  // 1 hash, 2 point, 3 modeled
  };
  Match match(const std::string& ext, const std::string& source);  // callers hold mu_
  Evaluation answer(const RecordedCandidate& c, const RecordedCandidate* leader, const std::string& how) const;

  const Task& task_;
  Backend backend_;
  Recording rec_;
  double noise_, min_gain_;
  bool model_composites_;
  std::map<std::string, double> weight_;  // timed workload -> weight
  std::map<std::string, const RecordedCandidate*> by_hash_, by_key_;
  mutable std::mutex mu_;
  std::map<std::string, const RecordedCandidate*> answered_;  // source hash -> what it was answered with
  std::deque<RecordedCandidate> modeled_;
  Stats stats_;
  int evaluations_ = 0;
};

}  // namespace khive
