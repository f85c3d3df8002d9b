#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include <sqlite3.h>

#include "khive/record/store.hpp"
#include "khive/support/files.hpp"

using namespace khive;
namespace fs = std::filesystem;

namespace {
fs::path tmpdir() { return make_temp_dir(fs::temp_directory_path(), "khive-store-test"); }
}  // namespace

TEST(RunStore, CandidatesBoardSwitchesAgentsRoundTrip) {
  auto d = tmpdir();
  {
    RunStore db(d / "run.db");
    db.set_meta("task", "softmax");
    CandidateRecord c;
    c.id = "c0001";
    c.seq = 1;
    c.hash = candidate_hash("cpp", "src");
    c.agent = "a0";
    c.strategy = "s.x";
    c.source = "src";
    c.ext = "cpp";
    c.params = {{"tile", "64"}};
    c.standing = Standing::backup;
    c.score = 0.61;
    c.time_s = 0.002;
    c.workload_median_s = {{"w1", 0.002}};
    db.put_candidate(c);
    BoardEntry e;
    e.kind = "failed";
    e.text = "x";
    e.reason = "build_error";
    auto id = db.add_board_entry(e, 1.5);
    db.add_board_entry(e, 2.5);
    db.evict_board_entries({id});
    db.add_switch({0, 3.0, "a0", "s.x", "s.y", "plateau", ""});
    db.put_agent({0, "a0", "replay:d", "s.y", ""});
  }
  RunStore db(d / "run.db");  // reopened: everything persisted
  EXPECT_EQ(db.meta("task").value(), "softmax");
  EXPECT_FALSE(db.meta("nothing"));
  auto c = db.find_by_hash(candidate_hash("cpp", "src"));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->params.at("tile"), "64");
  EXPECT_DOUBLE_EQ(*c->score, 0.61);
  EXPECT_DOUBLE_EQ(c->workload_median_s.at("w1"), 0.002);
  EXPECT_FALSE(db.find_by_hash(candidate_hash("cu", "src")));  // the extension is part of the identity
  EXPECT_EQ(db.board(false).size(), 1u);
  EXPECT_EQ(db.board(true).size(), 2u);
  EXPECT_EQ(db.switches().at(0).reason, "plateau");
  EXPECT_EQ(db.agents().at(0).strategy, "s.y");
}

TEST(RunStore, UnwritablePathIsAnErrorNamingIt) {
  try {
    RunStore db("/proc/khive-no/run.db");
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/khive-no"), std::string::npos) << e.what();
  }
}

// A damaged run database is named as such and never read as an empty run (issue 25: a 0-byte run.db made `khive
// report` overwrite a 20 kB report.html with an empty run's, exit 0); readers of a finished run fall back to the
// event log, and the report refuses without writing.
TEST(RunDbProblem, EmptyGarbageRunlessAndWhole) {
  auto d = tmpdir();
  const fs::path db = d / "run.db";
  std::ofstream(db).close();
  ASSERT_TRUE(run_db_problem(db));
  EXPECT_NE(run_db_problem(db)->find("empty (0 bytes)"), std::string::npos);
  EXPECT_EQ(fs::file_size(db), 0u) << "checking must not turn the empty file into a database";
  std::ofstream(db, std::ios::binary) << std::string(4096, '\x5a');
  ASSERT_TRUE(run_db_problem(db));
  EXPECT_NE(run_db_problem(db)->find("not a readable SQLite database"), std::string::npos) << *run_db_problem(db);
  fs::remove(db);
  { RunStore s(db); }  // the schema, but no run
  ASSERT_TRUE(run_db_problem(db));
  EXPECT_NE(run_db_problem(db)->find("records nothing"), std::string::npos);
  {
    RunStore s(db);
    s.set_meta("task", "softmax");
  }
  EXPECT_FALSE(run_db_problem(db));
  fs::remove_all(d);
}

// run.db holds names; one this version does not know (a newer khive's, a hand edit) is an error naming the file, the
// row and the column, never read as another standing.
TEST(RunStore, UnknownStoredNamesAreErrorsNamingTheFileRowAndColumn) {
  auto d = tmpdir();
  const fs::path file = d / "run.db";
  {
    RunStore db(file);
    CandidateRecord c;
    c.id = "c0001";
    c.hash = "h1";
    c.standing = Standing::pending;
    db.put_candidate(c);
    db.put_pending({"c0001", "a0", "k1", PendingStatus::awaiting, 1.0, 0, ""});
    ASSERT_EQ(db.candidates().at(0).standing, Standing::pending);
    ASSERT_EQ(db.pending(PendingStatus::awaiting).size(), 1u);
  }
  auto expect_error = [&](const char* sql, const std::function<void(RunStore&)>& read, const std::string& column) {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, sql, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    RunStore db(file, RunStore::Access::read_only);
    try {
      read(db);
      FAIL() << "read an unknown name: " << sql;
    } catch (const std::runtime_error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(file.string()), std::string::npos) << m;
      EXPECT_NE(m.find("c0001"), std::string::npos) << m;
      EXPECT_NE(m.find(column), std::string::npos) << m;
    }
  };
  expect_error(
      "UPDATE pending SET status = 'done'", [](RunStore& db) { db.pending(); }, "column status is 'done'");
  expect_error(
      "UPDATE candidates SET verdict = 'winner'", [](RunStore& db) { db.candidates(); }, "column verdict is 'winner'");
  expect_error(
      "UPDATE candidates SET verdict = 'rejected', check_name = 'vibes'", [](RunStore& db) { db.find_by_hash("h1"); },
      "column check_name is 'vibes'");
}
