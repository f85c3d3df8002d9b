// khive rescore (record/rescore.hpp): a synthetic run of demo-cpu/vector_add on a toy device whose T_sol is N / 1e9 s,
// PyTorch numbers for two of the three perf workloads; the scores follow SOL-ExecBench's formula by hand.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "khive/record/event_log.hpp"
#include "khive/record/rescore.hpp"
#include "khive/record/store.hpp"
#include "khive/support/files.hpp"

using namespace khive;
namespace fs = std::filesystem;

namespace {

// 12 N bytes at 12e9 B/s: T_sol = N / 1e9 s (compute is free).
HardwareProfile toy_gpu() {
  HardwareProfile h;
  h.name = "Toy GPU";
  h.peak_flops = {{ComputeUnit::fp32, 1e30}};
  h.peak_bandwidth = 12e9;
  return h;
}

const std::map<std::string, int64_t> kN = {
    {"vector_add-n1048576", 1048576}, {"vector_add-n4194304", 4194304}, {"vector_add-n16777216", 16777216}};
double sol(const std::string& uuid) { return double(kN.at(uuid)) / 1e9; }

struct Fixture {
  fs::path task_dir, run_dir;
};

// The task under <tmp>/demo/vector_add with PyTorch at 3 x T_sol for n1048576 and n4194304; a run whose reference
// takes 2 x T_sol and whose leader c0001 takes 1.5 x T_sol on every perf workload, plus a rejected c0002.
Fixture make_run() {
  const fs::path tmp = make_temp_dir(fs::temp_directory_path(), "khive-rescore-test");
  Fixture f{tmp / "demo" / "vector_add", tmp / "run"};
  fs::create_directories(f.task_dir);
  for (const auto& e : fs::directory_iterator(fs::path(KHIVE_SOURCE_DIR) / "tasks/demo-cpu/vector_add"))
    if (e.is_regular_file()) fs::copy_file(e.path(), f.task_dir / e.path().filename());
  nlohmann::json pt = {{"schema", "khive.pytorch-baselines/1"},
                       {"gpu", "toy_gpu"},
                       {"torch", "synthetic"},
                       {"date", "2026-11-30T00:00:00Z"}};
  for (const char* u : {"vector_add-n1048576", "vector_add-n4194304"})
    pt["tasks"]["vector_add"]["workloads"][u] = {
        {"median_s", 3 * sol(u)}, {"spread", 0.01}, {"samples", 10}, {"axes", {{"N", kN.at(u)}}}};
  fs::create_directories(tmp / "demo" / "baselines");
  std::ofstream(tmp / "demo" / "baselines" / "pytorch-toy_gpu.json") << pt.dump();

  fs::create_directories(f.run_dir);
  RunStore db(f.run_dir / "run.db");
  db.set_meta("reference", "c0000");
  db.set_meta("leader", "c0001");
  db.set_meta("backend", "cuda");
  db.set_meta("options", R"({"perf_workloads": ""})");
  auto cand = [&](const char* id, int seq, const char* verdict, double factor, std::optional<double> score) {
    CandidateRecord c;
    c.id = id;
    c.seq = seq;
    c.hash = id;
    c.standing = parse_standing(verdict).value();
    c.score = score;
    c.time_s = factor * 4e-3;
    if (factor > 0)
      for (const auto& [u, n] : kN) c.workload_median_s[u] = factor * sol(u);
    db.put_candidate(c);
  };
  cand("c0000", 0, "leader", 2.0, 0.5);
  cand("c0001", 1, "leader", 1.5, 0.6);
  cand("c0002", 2, "rejected", 0, std::nullopt);
  return f;
}

}  // namespace

TEST(Rescore, PytorchWhereTheSuiteHasItElseTheReference) {
  const Fixture f = make_run();
  const Rescore r = rescore_run(f.run_dir, f.task_dir, toy_gpu());
  EXPECT_EQ(r.task, "vector_add");
  EXPECT_EQ(r.leader, "c0001");
  EXPECT_NE(r.pytorch_file.find("pytorch-toy_gpu.json"), std::string::npos);
  ASSERT_EQ(r.t_b.size(), 3u);
  EXPECT_EQ(r.t_b_label.at("vector_add-n1048576"), "pytorch");
  EXPECT_EQ(r.t_b_label.at("vector_add-n16777216"), "reference");
  EXPECT_NEAR(r.t_b.at("vector_add-n4194304"), 3 * sol("vector_add-n4194304"), 1e-12);
  EXPECT_NEAR(r.t_b.at("vector_add-n16777216"), 2 * sol("vector_add-n16777216"), 1e-12);
  EXPECT_NEAR(r.t_sol.at("vector_add-n1048576"), sol("vector_add-n1048576"), 1e-12);

  ASSERT_EQ(r.candidates.size(), 2u);  // the rejected one is left out
  // reference (2 x T_sol): against PyTorch (3 x T_sol) 2/3 on two workloads, against itself 1/2 on the third.
  const RescoredCandidate* ref = r.find("c0000");
  ASSERT_NE(ref, nullptr);
  EXPECT_NEAR(*ref->rescored, (2.0 / 3 + 2.0 / 3 + 0.5) / 3, 1e-9);
  EXPECT_DOUBLE_EQ(*ref->recorded, 0.5);
  // leader (1.5 x T_sol): 2 / 2.5 = 0.8 against PyTorch, 1 / 1.5 against the reference.
  const RescoredCandidate* lead = r.find("c0001");
  ASSERT_NE(lead, nullptr);
  EXPECT_NEAR(*lead->rescored, (0.8 + 0.8 + 1.0 / 1.5) / 3, 1e-9);
  EXPECT_EQ(r.find("c0002"), nullptr);
}

TEST(Rescore, NoPytorchFileMeansTheReferenceEverywhere) {
  const Fixture f = make_run();
  HardwareProfile other = toy_gpu();
  other.name = "Other GPU";  // pytorch-other_gpu.json does not exist
  const Rescore r = rescore_run(f.run_dir, f.task_dir, other);
  EXPECT_TRUE(r.pytorch_file.empty());
  for (const auto& [u, label] : r.t_b_label) EXPECT_EQ(label, "reference") << u;
  EXPECT_NEAR(*r.find("c0000")->rescored, 0.5, 1e-9);
  EXPECT_NEAR(*r.find("c0001")->rescored, 1.0 / 1.5, 1e-9);
}

TEST(Rescore, ErrorsNameTheFile) {
  const fs::path empty = make_temp_dir(fs::temp_directory_path(), "khive-rescore-empty");
  try {
    rescore_run(empty, fs::path(KHIVE_SOURCE_DIR) / "tasks/demo-cpu/vector_add", toy_gpu());
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("run.db: no run database"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(empty / "run.db"));  // not created by looking
}

// A results folder that kept only the event log: the same scores from its candidate events.
TEST(Rescore, FromTheEventLogWhenTheDatabaseIsGone) {
  const Fixture f = make_run();
  const Rescore from_db = rescore_run(f.run_dir, f.task_dir, toy_gpu());
  {
    EventLog log(f.run_dir / "events.jsonl");
    log.append({{"type", "start"}, {"backend", "cuda"}, {"options", {{"perf_workloads", ""}}}});
    RunStore db(f.run_dir / "run.db");
    for (const auto& c : db.candidates()) {
      nlohmann::json w = nlohmann::json::object();
      for (const auto& [u, m] : c.workload_median_s) w[u] = m;
      log.append({{"type", "candidate"},
                  {"id", c.id},
                  {"verdict", c.standing},
                  {"strategy", c.id == "c0000" ? "reference" : "tile"},
                  {"time_s", c.time_s},
                  {"score", c.score ? nlohmann::json(*c.score) : nlohmann::json(nullptr)},
                  {"workloads", w}});
    }
    log.append({{"type", "end"}, {"leader", "c0001"}});
  }
  fs::remove(f.run_dir / "run.db");
  const Rescore from_log = rescore_run(f.run_dir, f.task_dir, toy_gpu());
  EXPECT_FALSE(fs::exists(f.run_dir / "run.db"));
  EXPECT_EQ(from_log.reference, "c0000");
  EXPECT_EQ(from_log.leader, "c0001");
  ASSERT_EQ(from_log.candidates.size(), 2u);
  for (const char* id : {"c0000", "c0001"})
    EXPECT_NEAR(*from_log.find(id)->rescored, *from_db.find(id)->rescored, 1e-12) << id;
}
