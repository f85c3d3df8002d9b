// Leaderboard rows (suite/bench.hpp): aggregates over perf workloads, the best vendor and candidate,
// and what bench.json / bench.md / the live line say about them. Synthetic rows, no runner.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "khive/suite/bench.hpp"

namespace khive {
namespace {

SampleSummary at(double median) {
  SampleSummary s;
  s.median = median;
  s.n = 10;
  return s;
}

BenchImpl impl(std::string label, std::string kind, bool accepted, std::map<std::string, double> medians) {
  BenchImpl m;
  m.label = std::move(label);
  m.kind = std::move(kind);
  m.accepted = accepted;
  m.verdict = accepted ? "accepted" : "rejected at check 5 (wrong_output): output y differs";
  for (auto& [w, t] : medians) m.times[w] = at(t);
  return m;
}

// Two perf workloads (weights 1 and 3), T_sol 1 ms and 2 ms, T_b from PyTorch 4 ms and 8 ms.
BenchRow row() {
  BenchRow r;
  r.task = "softmax";
  r.workloads = {{"a", 1, 0, 0, 1e-3, 4e-3, "pytorch"}, {"b", 3, 0, 0, 2e-3, 8e-3, "pytorch"}};
  r.impls = {impl("reference", "reference", true, {{"a", 8e-3}, {"b", 16e-3}}),
             impl("pytorch", "pytorch", true, {{"a", 4e-3}, {"b", 8e-3}}),
             impl("baseline:slow", "vendor", true, {{"a", 5e-3}, {"b", 10e-3}}),
             impl("baseline:fast", "vendor", true, {{"a", 3e-3}, {"b", 6e-3}}),
             impl("candidate:ok.cu", "candidate", true, {{"a", 2e-3}, {"b", 4e-3}}),
             impl("candidate:faster_on_a.cu", "candidate", true, {{"a", 1.5e-3}, {"b", 5e-3}}),
             impl("candidate:wrong.cu", "candidate", false, {}),
             impl("candidate:partial.cu", "candidate", true, {{"a", 1e-3}})};  // no time for b: not ranked
  return r;
}

TEST(BenchRow, WeightedGeometricMeansAndScores) {
  BenchRow r = row();
  finish_row(r);
  const BenchImpl& ref = r.impls[0];
  ASSERT_TRUE(ref.gmean_s.has_value());
  // exp((1·ln 8 + 3·ln 16) / 4) ms = 8^(1/4)·16^(3/4) ms
  EXPECT_NEAR(*ref.gmean_s, std::pow(8e-3, 0.25) * std::pow(16e-3, 0.75), 1e-12);
  EXPECT_NEAR(*ref.fraction_of_sol, 0.125, 1e-12);  // 1/8 on both workloads
  // SOL-ExecBench score per workload: (T_b - T_sol) / ((T_k - T_sol) + (T_b - T_sol)).
  // reference: a: 3/(7+3) = 0.3, b: 6/(14+6) = 0.3
  EXPECT_NEAR(*ref.score, 0.3, 1e-12);
  const BenchImpl& pt = r.impls[1];
  EXPECT_NEAR(*pt.score, 0.5, 1e-12);  // T_b itself scores 0.5
  const BenchImpl& ok = r.impls[4];
  // a: 3/(1+3) = 0.75, b: 6/(2+6) = 0.75
  EXPECT_NEAR(*ok.score, 0.75, 1e-12);
  EXPECT_FALSE(r.impls[6].gmean_s.has_value());  // rejected
  EXPECT_FALSE(r.impls[7].gmean_s.has_value());  // incomplete
  EXPECT_FALSE(r.impls[7].score.has_value());
}

TEST(BenchRow, BestVendorAndCandidateAreTheFastestComplete) {
  BenchRow r = row();
  finish_row(r);
  ASSERT_GE(r.best_vendor, 0);
  EXPECT_EQ(r.impls[static_cast<std::size_t>(r.best_vendor)].label, "baseline:fast");
  ASSERT_GE(r.best_candidate, 0);
  // ok.cu: 2^(1/4)·4^(3/4) = 3.36 ms; faster_on_a.cu: 1.5^(1/4)·5^(3/4) = 3.70 ms; weight 3 on b decides.
  EXPECT_EQ(r.impls[static_cast<std::size_t>(r.best_candidate)].label, "candidate:ok.cu");
  BenchRow none;
  none.workloads = row().workloads;
  none.impls = {impl("candidate:wrong.cu", "candidate", false, {})};
  finish_row(none);
  EXPECT_EQ(none.best_candidate, -1);
  EXPECT_EQ(none.best_vendor, -1);
}

TEST(BenchRow, JsonMarkdownAndLiveLineReportEveryVerdict) {
  BenchReport rep;
  rep.suite = "tasks/demo";
  rep.backend = "cuda";
  rep.device = "NVIDIA H200";
  rep.rows.push_back(row());
  finish_row(rep.rows[0]);
  BenchRow bad;
  bad.task = "gelu";
  bad.error = "no cuda reference";
  rep.rows.push_back(bad);

  auto j = bench_json(rep);
  EXPECT_EQ(j["schema"], "khive.bench/1");
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["best_candidate"], "candidate:ok.cu");
  EXPECT_EQ(j["rows"][0]["best_vendor"], "baseline:fast");
  EXPECT_EQ(j["rows"][0]["impls"].size(), 8u);
  EXPECT_EQ(j["rows"][0]["impls"][6]["accepted"], false);
  EXPECT_EQ(j["rows"][0]["workloads"][1]["t_b_label"], "pytorch");
  EXPECT_TRUE(j["rows"][0]["error"].is_null());
  EXPECT_EQ(j["rows"][1]["error"], "no cuda reference");
  EXPECT_TRUE(j["rows"][1]["best_candidate"].is_null());

  std::string line = bench_row_line(rep.rows[0]);
  EXPECT_NE(line.find("softmax"), std::string::npos);
  EXPECT_NE(line.find("ok.cu"), std::string::npos);
  EXPECT_NE(line.find("0.750"), std::string::npos);
  EXPECT_NE(line.find("3/4 candidates accepted"), std::string::npos);
  EXPECT_NE(line.find("wrong.cu rejected at check 5 (wrong_output)"), std::string::npos);
  EXPECT_NE(bench_row_line(rep.rows[1]).find("ERROR: no cuda reference"), std::string::npos);

  std::string md = bench_markdown(rep);
  EXPECT_NE(md.find("| softmax |"), std::string::npos);
  EXPECT_NE(md.find("## Where the time went"), std::string::npos);
  EXPECT_NE(md.find("- softmax / candidate:wrong.cu: rejected at check 5"), std::string::npos);
  EXPECT_NE(md.find("- gelu: no cuda reference"), std::string::npos);
  EXPECT_TRUE(rep.failed());  // a task that could not be benched
  rep.rows.pop_back();
  EXPECT_FALSE(rep.failed());  // a rejected candidate is a result, not a failure
  rep.rows[0].impls[0].accepted = false;
  EXPECT_TRUE(rep.failed());  // a rejected reference is
}

// --ab-vendor: the interleaved A/B entries of a candidate in bench.json and their section in bench.md; a row
// without them has no such section.
TEST(BenchAb, JsonAndMarkdown) {
  BenchReport rep;
  rep.rows.push_back(row());
  finish_row(rep.rows[0]);
  EXPECT_EQ(bench_ab_markdown(rep), "");
  EXPECT_FALSE(bench_json(rep)["rows"][0]["impls"][4].contains("ab"));

  AbReport faster;
  faster.test.pairs = 21;
  faster.test.ratio = 1.034;
  faster.test.noise = 0.004;
  faster.test.p_faster = 2e-5;
  faster.faster = true;
  AbReport tie = faster;
  tie.test.ratio = 1.002;
  tie.test.p_faster = 0.31;
  tie.faster = false;
  BenchImpl& c = rep.rows[0].impls[4];  // candidate:ok.cu
  c.ab["baseline:fast"]["a"] = faster;
  c.ab["baseline:fast"]["b"] = tie;
  rep.rows[0].impls[5].ab_error = "A/B timing failed: runner crashed";

  auto j = bench_json(rep)["rows"][0]["impls"];
  EXPECT_DOUBLE_EQ(j[4]["ab"]["baseline:fast"]["a"]["vendor_over_this"].get<double>(), 1.034);
  EXPECT_EQ(j[4]["ab"]["baseline:fast"]["a"]["faster"], true);
  EXPECT_EQ(j[4]["ab"]["baseline:fast"]["b"]["faster"], false);
  EXPECT_EQ(j[4]["ab"]["baseline:fast"]["b"]["slower"], false);
  EXPECT_EQ(j[4]["ab"]["baseline:fast"]["b"]["pairs"], 21);
  EXPECT_TRUE(j[4]["ab_error"].is_null());
  EXPECT_EQ(j[5]["ab_error"], "A/B timing failed: runner crashed");

  std::string md = bench_ab_markdown(rep);
  EXPECT_NE(md.find("## Interleaved A/B against the vendor baselines"), std::string::npos);
  EXPECT_NE(md.find("| softmax | ok.cu | fast | a | 1.0340x | 0.40% | 21 | 2e-05 | faster |"), std::string::npos) << md;
  EXPECT_NE(md.find("| softmax | ok.cu | fast | b | 1.0020x | 0.40% | 21 | 0.31 | within noise |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("A/B timing failed: runner crashed"), std::string::npos);
  EXPECT_NE(bench_markdown(rep).find("## Interleaved A/B"), std::string::npos);
}

}  // namespace
}  // namespace khive
