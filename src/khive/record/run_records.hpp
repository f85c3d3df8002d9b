// What a finished run recorded, read back from run.db or from its event log alone.
//
//   RunRecords rr = load_run_records(".khive/runs/softmax-1");       // rr.source: "run.db" or "events.jsonl"
//   std::string doc = run_records_json(rr, ".khive/runs/softmax-1").dump(2);   // what `khive export` prints
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/record/store.hpp"

namespace khive {

// What a run recorded, from run.db or, when a folder kept only its event log (the log is the crash-safe record;
// results folders may leave the database out), from the log's start, candidate, stop and end events (the last event
// of a candidate id wins). For readers of finished runs: khive rescore, optimize --warm-start, khive export (and
// through it the bench/*.py tables).
struct RunRecords {
  std::string source;  // "run.db" or "events.jsonl": what was read
  std::string reference, leader, backend, seed;
  std::string task, task_dir, task_dir_from_run;  // as recorded; an event log records the task's name only
  std::optional<std::string> stop_reason;         // none: the run never recorded stopping (it was cut short)
  nlohmann::json options = nlohmann::json::object();
  std::vector<CandidateRecord> candidates;  // in recording order; from a log, seq is that order (0 = first)
};
// Throws std::runtime_error naming the file when the directory has neither, or (require_reference) the reference was
// never recorded; never creates a database.
RunRecords load_run_records(const std::filesystem::path& run_dir, bool require_reference = true);

// A candidate as the event log records it ({"type": "candidate", ...}; the log's writer adds "t"), and back (seq is
// the reader's to set). The hive writes with the one and load_run_records reads with the other, so they agree.
// An unknown verdict or check name throws std::invalid_argument naming the candidate and the field.
nlohmann::json candidate_event(const CandidateRecord& c);
CandidateRecord candidate_from_event(const nlohmann::json& e);
// `khive export RUN`'s document (schema khive.run-export/1): the run's meta and its candidates without their sources.
nlohmann::json run_records_json(const RunRecords& rr, const std::filesystem::path& run_dir);

}  // namespace khive
