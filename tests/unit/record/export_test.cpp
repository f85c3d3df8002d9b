// `khive export RUN`'s document (run_records_json over load_run_records): the same records from run.db and from a
// folder that kept only events.jsonl; a run cut before its reference; a folder that is no run.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>

#include "khive/record/event_log.hpp"
#include "khive/record/report.hpp"
#include "khive/record/run_records.hpp"
#include "khive/support/files.hpp"

using namespace khive;
namespace fs = std::filesystem;

namespace {

CandidateRecord cand(const std::string& id, int64_t seq, const std::string& strategy, const std::string& verdict,
                     double time_s, std::optional<double> score) {
  CandidateRecord c;
  c.id = id;
  c.seq = seq;
  c.hash = "h" + id;
  c.agent = seq == 0 ? "hive" : "a0";
  c.strategy = strategy;
  c.label = strategy + "-" + id;
  c.file = "candidates/" + id + ".cu";
  c.standing = parse_standing(verdict).value();
  c.score = score;
  c.time_s = time_s;
  c.t = 1.5 * static_cast<double>(seq + 1);
  if (verdict == "rejected") {
    c.check = Check::correctness;
    c.reason = "max abs error 3 > 0.01";
  } else {
    c.workload_median_s = {{"w-small", time_s / 2}, {"w-large", time_s * 2}};
  }
  if (strategy != "reference") c.params = {{"template", "rowop"}, {"BLOCK", "256"}};
  return c;
}

// A finished run: reference c0000, leader c0002, a rejected c0001, a backup c0003.
std::vector<CandidateRecord> candidates() {
  return {cand("c0000", 0, "reference", "leader", 4e-3, 0.5), cand("c0001", 1, "rowop", "rejected", 0, std::nullopt),
          cand("c0002", 2, "rowop", "leader", 2e-3, 0.75), cand("c0003", 3, "rowop", "backup", 2.5e-3, 0.7)};
}

fs::path db_run() {
  const fs::path run = make_temp_dir(fs::temp_directory_path(), "khive-export-db");
  RunStore db(run / "run.db");
  db.set_meta("task", "softmax");
  db.set_meta("task_dir", "/somewhere/tasks/sol/softmax");
  db.set_meta("task_dir_from_run", "../../tasks/sol/softmax");
  db.set_meta("backend", "cuda");
  db.set_meta("seed", "20261130");
  db.set_meta("options", R"({"budget_time_s":38.0,"n_agents":3,"perf_workloads":""})");
  db.set_meta("reference", "c0000");
  db.set_meta("leader", "c0002");
  db.set_meta("stop_reason", "candidate budget spent");
  for (const auto& c : candidates()) db.put_candidate(c);
  return run;
}

// The same run as its event log writes it (record/run_records.hpp's candidate_event, as the hive writes it), c0002
// first recorded as a backup and then again as the leader (the last event of an id wins, at its first place).
fs::path log_run() {
  const fs::path run = make_temp_dir(fs::temp_directory_path(), "khive-export-log");
  EventLog log(run / "events.jsonl");
  log.append({{"type", "start"},
              {"task", "softmax"},
              {"backend", "cuda"},
              {"seed", 20261130ull},
              {"options", {{"budget_time_s", 38.0}, {"n_agents", 3}, {"perf_workloads", ""}}}});
  auto event = [&](const CandidateRecord& c) {
    nlohmann::json e = candidate_event(c);
    e["t"] = c.t;
    log.append(e);
  };
  auto cs = candidates();
  event(cs[0]);
  event(cs[1]);
  CandidateRecord early = cs[2];
  early.standing = Standing::backup;
  event(early);
  event(cs[3]);
  event(cs[2]);
  log.append({{"type", "stop"}, {"reason", "candidate budget spent"}});
  log.append({{"type", "end"}, {"reason", "candidate budget spent"}, {"leader", "c0002"}});
  return run;
}

}  // namespace

TEST(RunExport, FromTheDatabase) {
  const fs::path run = db_run();
  const nlohmann::json j = run_records_json(load_run_records(run), run);
  EXPECT_EQ(j["schema"], "khive.run-export/1");
  EXPECT_EQ(j["source"], "run.db");
  const auto& m = j["meta"];
  EXPECT_EQ(m["task"], "softmax");
  EXPECT_EQ(m["task_dir"], "/somewhere/tasks/sol/softmax");
  EXPECT_EQ(m["task_dir_from_run"], "../../tasks/sol/softmax");
  EXPECT_EQ(m["seed"], "20261130");
  EXPECT_EQ(m["reference"], "c0000");
  EXPECT_EQ(m["leader"], "c0002");
  EXPECT_EQ(m["stop_reason"], "candidate budget spent");
  EXPECT_EQ(m["options"]["budget_time_s"], 38.0);
  ASSERT_EQ(j["candidates"].size(), 4u);
  const auto& c1 = j["candidates"][1];
  EXPECT_EQ(c1["id"], "c0001");
  EXPECT_EQ(c1["seq"], 1);
  EXPECT_EQ(c1["verdict"], "rejected");
  EXPECT_EQ(c1["check"], "correctness");
  EXPECT_TRUE(c1["score"].is_null());
  EXPECT_TRUE(c1["workloads"].empty());
  const auto& c2 = j["candidates"][2];
  EXPECT_EQ(c2["label"], "rowop-c0002");
  EXPECT_EQ(c2["params"]["BLOCK"], "256");
  EXPECT_EQ(c2["score"], 0.75);
  EXPECT_EQ(c2["time_s"], 2e-3);
  EXPECT_EQ(c2["workloads"]["w-large"], 4e-3);
  EXPECT_EQ(c2["t"], 4.5);
}

// A results folder that kept only events.jsonl exports the same meta and candidates as the database would.
TEST(RunExport, FromTheEventLogTheSameAsFromTheDatabase) {
  const fs::path from_db = db_run(), from_log = log_run();
  nlohmann::json a = run_records_json(load_run_records(from_db), from_db);
  nlohmann::json b = run_records_json(load_run_records(from_log), from_log);
  EXPECT_FALSE(fs::exists(from_log / "run.db"));  // looking creates no database
  EXPECT_EQ(b["source"], "events.jsonl");
  // The log records the task's name, not where its directory was.
  EXPECT_EQ(b["meta"]["task_dir"], "");
  for (auto* j : {&a, &b}) {
    j->erase("run");
    j->erase("source");
    (*j)["meta"].erase("task_dir");
    (*j)["meta"].erase("task_dir_from_run");
  }
  EXPECT_EQ(a, b) << a.dump(1) << "\n" << b.dump(1);
}

TEST(RunExport, EventLogStopAndLeaderDetails) {
  const fs::path run = make_temp_dir(fs::temp_directory_path(), "khive-export-cut");
  {
    EventLog log(run / "events.jsonl");
    log.append({{"type", "start"}, {"task", "softmax"}, {"backend", "cpu"}, {"seed", 7}});
    log.append(
        {{"type", "candidate"}, {"id", "c0000"}, {"strategy", "reference"}, {"verdict", "leader"}, {"time_s", 1e-3}});
    log.append(
        {{"type", "end"}, {"reason", "paused: 2 candidate(s) await evaluation"}, {"leader", ""}});  // no leader named
  }
  RunRecords rr = load_run_records(run);
  EXPECT_EQ(rr.leader, "c0000");  // an end event naming no leader does not erase the one recorded
  EXPECT_EQ(rr.backend, "cpu");
  EXPECT_EQ(rr.seed, "7");
  ASSERT_TRUE(rr.stop_reason.has_value());
  EXPECT_EQ(*rr.stop_reason, "paused: 2 candidate(s) await evaluation");
}

// Cut before the reference was measured: exported (reference null) for readers to report; required, an error.
TEST(RunExport, RunWithoutItsReference) {
  const fs::path run = make_temp_dir(fs::temp_directory_path(), "khive-export-noref");
  {
    EventLog log(run / "events.jsonl");
    log.append({{"type", "start"}, {"task", "softmax"}, {"backend", "cuda"}, {"seed", 1}});
  }
  const nlohmann::json j = run_records_json(load_run_records(run, /*require_reference=*/false), run);
  EXPECT_TRUE(j["meta"]["reference"].is_null());
  EXPECT_TRUE(j["meta"]["leader"].is_null());
  EXPECT_TRUE(j["meta"]["stop_reason"].is_null());
  EXPECT_TRUE(j["candidates"].empty());
  try {
    load_run_records(run);
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("events.jsonl: no candidate event of the reference"), std::string::npos)
        << e.what();
  }
}

TEST(RunExport, FolderWithNeitherIsAnErrorNamingIt) {
  const fs::path empty = make_temp_dir(fs::temp_directory_path(), "khive-export-empty");
  try {
    load_run_records(empty, /*require_reference=*/false);
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find((empty / "run.db").string() + ": no run database and no events.jsonl"), std::string::npos)
        << what;
  }
  EXPECT_FALSE(fs::exists(empty / "run.db"));
}

// An event log whose candidate carries a verdict or a check this version does not know: an error naming the log, the
// candidate and the field, never a candidate read as another standing.
TEST(RunExport, UnknownVerdictInTheLogIsAnErrorNamingIt) {
  for (auto [field, value] : {std::pair{"verdict", "winner"}, {"check", "vibes"}}) {
    const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-export-badverdict");
    {
      EventLog log(d / "events.jsonl");
      log.append({{"type", "start"}, {"task", "softmax"}, {"backend", "cpu"}});
      nlohmann::json c = {{"type", "candidate"}, {"id", "c0003"}, {"verdict", "rejected"}, {"check", "build"}};
      c[field] = value;
      log.append(c);
    }
    try {
      load_run_records(d, /*require_reference=*/false);
      ADD_FAILURE() << "read " << field << " '" << value << "'";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find((d / "events.jsonl").string() + ": candidate c0003: " + field + " '" + value + "'"),
                std::string::npos)
          << what;
    }
  }
}

// The event the hive writes for a candidate reads back as the same record (the log adds the time; the diagnosis and
// the recording order are not in the event).
TEST(CandidateEvent, ReadsBackAsTheSameRecord) {
  for (const CandidateRecord& c : candidates()) {
    nlohmann::json e = candidate_event(c);
    EXPECT_EQ(e["type"], "candidate");
    e["t"] = c.t;
    const CandidateRecord back = candidate_from_event(e);
    EXPECT_EQ(back.id, c.id);
    EXPECT_EQ(back.agent, c.agent);
    EXPECT_EQ(back.strategy, c.strategy);
    EXPECT_EQ(back.parent, c.parent);
    EXPECT_EQ(back.label, c.label);
    EXPECT_EQ(back.hash, c.hash);
    EXPECT_EQ(back.file, c.file);
    EXPECT_EQ(back.note, c.note);
    EXPECT_EQ(back.params, c.params);
    EXPECT_EQ(back.standing, c.standing);
    EXPECT_EQ(back.check, c.check);
    EXPECT_EQ(back.reason, c.reason);
    EXPECT_EQ(back.message, c.message);
    EXPECT_EQ(back.score, c.score);
    EXPECT_EQ(back.time_s, c.time_s);
    EXPECT_EQ(back.delta, c.delta);
    EXPECT_EQ(back.workload_median_s, c.workload_median_s);
    EXPECT_EQ(back.eval_s, c.eval_s);
    EXPECT_EQ(back.t, c.t);
    EXPECT_EQ(back.comparison.has_value(), c.comparison.has_value());
  }
  // An event of an older run without most fields reads as empty ones, not as an error (no verdict: a harness error).
  const CandidateRecord old = candidate_from_event({{"type", "candidate"}, {"id", "c0009"}, {"score", "n/a"}});
  EXPECT_EQ(old.id, "c0009");
  EXPECT_EQ(old.standing, Standing::error);
  EXPECT_FALSE(old.check.has_value());
  EXPECT_FALSE(old.score.has_value());
}

// A run whose run.db was emptied: export reads its event log (and says so), the report refuses and keeps its file.
TEST(DamagedRunDb, ExportReadsTheLogAndTheReportWritesNothing) {
  namespace fs = std::filesystem;
  const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-damaged-db");
  {
    EventLog log(d / "events.jsonl");
    log.append({{"type", "start"}, {"task", "softmax"}, {"backend", "cpu"}});
    CandidateRecord c;
    c.id = "c0000";
    c.strategy = "reference";
    c.standing = Standing::leader;
    c.ext = "cpp";
    log.append(candidate_event(c));
  }
  std::ofstream(d / "run.db").close();
  std::ofstream(d / "report.html") << "<html>the good report</html>";
  const RunRecords rr = load_run_records(d);
  EXPECT_EQ(rr.source, "events.jsonl (run.db is empty (0 bytes))");
  ASSERT_EQ(rr.candidates.size(), 1u);
  EXPECT_EQ(rr.reference, "c0000");
  EXPECT_THROW(write_report(d), std::runtime_error);
  std::ifstream f(d / "report.html");
  std::string kept((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, "<html>the good report</html>");
  EXPECT_EQ(fs::file_size(d / "run.db"), 0u);
  fs::remove_all(d);
}
