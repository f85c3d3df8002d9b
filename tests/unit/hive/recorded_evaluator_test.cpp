// The recorded evaluator (hive/recorded_evaluator.hpp) on the curated H200 recordings of tests/recordings/: loading
// and validating them, matching a kernel the tuner renders today to the recorded point (or composite), the recorded
// verdicts, medians and scores, check 11 on the recorded medians, and the answer for what was never recorded.
#include <cmath>
#include <functional>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "recorded_support.hpp"

using namespace khive;
using namespace khive::recorded_test;

namespace {

const std::vector<std::string> kRecordings = {"h200-softmax-dispatch.json", "h200-gemm-bf16.json",
                                              "h200-kb08-relayout.json"};

nlohmann::json recording_json(const std::string& name) {
  return nlohmann::json::parse(read_file(repo() / "tests/recordings" / name));
}

// A copy of a recording with its JSON edited, in dir.
fs::path edited_recording(const fs::path& dir, const std::string& name,
                          const std::function<void(nlohmann::json&)>& edit) {
  auto j = recording_json(name);
  edit(j);
  return write_kernel(dir, "edited-" + name, j.dump(1));
}

std::string load_error(const fs::path& file) {
  try {
    load_recording(file);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// The weighted geometric-mean ratio leader / candidate over the timed workloads, and the counts beyond the noise
// (the rule recorded_evaluator.hpp documents, written out again here).
struct Expect11 {
  double gain = 0;
  int faster = 0, slower = 0;
};
Expect11 expect11(const Task& task, const RecordedCandidate& cand, const RecordedCandidate& leader, double noise) {
  Expect11 x;
  double lw = 0, ws = 0;
  for (const auto& w : task.workloads) {
    if (!w.timed_on(Backend::cuda)) continue;
    const double r = leader.workload_median_s.at(w.uuid) / cand.workload_median_s.at(w.uuid);
    x.faster += r - 1 > noise;
    x.slower += r - 1 < -noise;
    lw += w.weight * std::log(r);
    ws += w.weight;
  }
  x.gain = std::exp(lw / ws) - 1;
  return x;
}

}  // namespace

TEST(RecordedEvaluator, CuratedRecordingsLoadAndFitTheirTasks) {
  for (const auto& name : kRecordings) {
    SCOPED_TRACE(name);
    const fs::path f = repo() / "tests/recordings" / name;
    EXPECT_LT(fs::file_size(f), 256u * 1024) << "a curated recording stays small (tests/recordings/README.md)";
    const Recorded& r = recorded(name);
    EXPECT_EQ(r.rec.device, "NVIDIA H200");
    EXPECT_FALSE(r.rec.source_run.empty());
    EXPECT_GE(r.rec.candidates.size(), 8u);
    EXPECT_TRUE(r.rec.reference.accepted());
    // The task as loaded today times exactly the recorded workloads (else the constructor throws).
    EXPECT_NO_THROW(RecordedEvaluator(r.task, backend_of(r), r.rec));
    // Every recorded template point is a point of today's library: the replay can match what the tuner renders.
    for (const auto& c : r.rec.candidates) {
      const auto k = recorded_point_key(c.params);
      ASSERT_FALSE(k.empty()) << c.id << " has no template point";
      if (!is_composite(c.params)) EXPECT_NE(library().find_template(c.params.at("template")), nullptr) << c.id;
    }
  }
}

TEST(RecordedEvaluator, MalformedRecordingsNameTheFileAndField) {
  TempDir d("khive-rec-");
  auto bad = [&](const std::function<void(nlohmann::json&)>& edit) {
    return load_error(edited_recording(d.path, "h200-gemm-bf16.json", edit));
  };
  EXPECT_NE(bad([](auto& j) { j["schema"] = "khive.recording/0"; }).find("schema: expected \"khive.recording/1\""),
            std::string::npos);
  const std::string no_median = bad([](auto& j) { j["candidates"][2]["workloads"].erase("gemm_bf16-M1-N6144-K4096"); });
  EXPECT_NE(no_median.find("edited-h200-gemm-bf16.json: candidates[2].workloads: accepted without a median on the "
                           "timed workload gemm_bf16-M1-N6144-K4096"),
            std::string::npos)
      << no_median;
  EXPECT_NE(bad([](auto& j) { j["candidates"][0]["verdict"] = "pending"; }).find("candidates[0].verdict"),
            std::string::npos);
  EXPECT_NE(bad([](auto& j) { j["candidates"][1]["id"] = j["candidates"][0]["id"]; }).find("appears twice"),
            std::string::npos);
  EXPECT_NE(bad([](auto& j) { j["task"].erase("timed"); }).find("task.timed: missing"), std::string::npos);
  EXPECT_NE(bad([](auto& j) { j["reference"]["verdict"] = "rejected"; }).find("reference.verdict"), std::string::npos);
  EXPECT_EQ(bad([](auto&) {}), "");
}

TEST(RecordedEvaluator, RefusesAnotherTaskOrOtherTimedWorkloads) {
  const Recorded& softmax = recorded("h200-softmax-dispatch.json");
  const Recorded& gemm = recorded("h200-gemm-bf16.json");
  EXPECT_THROW(RecordedEvaluator(gemm.task, Backend::cuda, softmax.rec), std::invalid_argument);
  EXPECT_THROW(RecordedEvaluator(softmax.task, Backend::cpu, softmax.rec), std::invalid_argument);
  Task narrowed = gemm.task;
  select_perf_workloads(narrowed, "M8192", Backend::cuda);
  try {
    RecordedEvaluator ev(narrowed, Backend::cuda, gemm.rec);
    FAIL() << "a task timing other workloads than the recording must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("recorded, not timed here: gemm_bf16-M1-N6144-K4096"), std::string::npos)
        << e.what();
  }
}

TEST(RecordedEvaluator, TheReferenceAndEveryRecordedKernelAnswerAsRecorded) {
  for (const auto& name : kRecordings) {
    SCOPED_TRACE(name);
    const Recorded& r = recorded(name);
    RecordedEvaluator ev(r.task, backend_of(r), r.rec);
    TempDir d("khive-rec-");
    const Evaluation ref = ev.prepare(*r.task.reference_for(backend_of(r)));
    EXPECT_EQ(ref.status, EvalStatus::accepted);
    EXPECT_EQ(ref.time_s, r.rec.reference.time_s);
    EXPECT_EQ(ref.workload_median_s, r.rec.reference.workload_median_s);
    EXPECT_NE(ref.score_basis.find(name), std::string::npos) << ref.score_basis;
    int i = 0;
    for (const auto& c : r.rec.candidates) {
      SCOPED_TRACE(c.id);
      // The tuner renders the recorded point (or the composite of its recorded variants) today; the evaluator finds
      // it by the point its header names, whatever the text of the templates became since.
      const fs::path f = write_kernel(d.path, fmt::format("k{}.cu", i++), render_recorded(r, c.params));
      const RecordedCandidate* found = ev.find("cu", read_file(f));
      ASSERT_NE(found, nullptr);
      EXPECT_EQ(found->id, c.id);
      const Evaluation e = ev.evaluate(f, std::nullopt);
      ASSERT_EQ(e.status, c.accepted()                       ? EvalStatus::accepted
                          : c.standing == Standing::rejected ? EvalStatus::rejected
                                                             : EvalStatus::error)
          << e.message;
      EXPECT_EQ(e.workload_median_s, c.workload_median_s);
      EXPECT_EQ(e.time_s, c.time_s);
      EXPECT_EQ(e.score, c.score);
      EXPECT_FALSE(e.beats_leader.has_value());  // no leader given
      EXPECT_NE(e.message.find("recorded as " + c.id), std::string::npos) << e.message;
    }
    // By source hash where today's rendering is byte for byte the recorded one, else by the point its header names.
    const auto st = ev.stats();
    EXPECT_EQ(st.by_hash + st.by_point, static_cast<int>(r.rec.candidates.size()));
    EXPECT_EQ(st.unrecorded, 0);
  }
}

TEST(RecordedEvaluator, CheckElevenIsDecidedOnTheRecordedMedians) {
  const Recorded& r = recorded("h200-softmax-dispatch.json");
  RecordedEvaluator ev(r.task, Backend::cuda, r.rec);
  TempDir d("khive-rec-");
  ev.prepare(*r.task.reference_for(Backend::cuda));
  std::map<std::string, fs::path> file;
  for (const auto& c : r.rec.candidates) file[c.id] = write_kernel(d.path, c.id + ".cu", render_recorded(r, c.params));
  int leads = 0, stays = 0;
  for (const auto& c : r.rec.candidates)
    for (const auto& l : r.rec.candidates) {
      if (!c.accepted() || !l.accepted()) continue;
      SCOPED_TRACE(c.id + " against the leader " + l.id);
      const Evaluation e = ev.evaluate(file[c.id], file[l.id]);
      const Expect11 x = expect11(r.task, c, l, r.rec.noise);
      ASSERT_TRUE(e.beats_leader.has_value()) << e.message;
      EXPECT_NEAR(*e.gain_vs_leader, x.gain, 1e-12);
      const bool lead = x.slower == 0 && x.faster > 0 && x.gain > r.rec.min_gain;
      EXPECT_EQ(*e.beats_leader, lead) << e.message;
      (lead ? leads : stays)++;
      if (c.id == l.id) EXPECT_FALSE(*e.beats_leader) << "an identical kernel never leads";
    }
  // Both outcomes occur on this data (the rule is exercised, not vacuous).
  EXPECT_GT(leads, 0);
  EXPECT_GT(stays, 0);
  // The recorded run's final leader (a per-shape composite) beats its predecessor leader here too.
  const RecordedCandidate* last = nullptr;
  for (const auto& c : r.rec.candidates)
    if (c.standing == Standing::leader && c.id != r.rec.leader) last = &c;
  ASSERT_NE(last, nullptr);
  EXPECT_TRUE(ev.evaluate(file[r.rec.leader], file[last->id]).beats_leader.value_or(false));
  // A noise larger than every recorded difference leaves every candidate a backup.
  RecordedOptions wide;
  wide.noise = 10.0;
  RecordedEvaluator strict(r.task, Backend::cuda, r.rec, wide);
  EXPECT_FALSE(strict.evaluate(file[r.rec.leader], file[last->id]).beats_leader.value_or(true));
}

TEST(RecordedEvaluator, WhatWasNotRecordedIsAnErrorNamingIt) {
  const Recorded& r = recorded("h200-gemm-bf16.json");
  RecordedEvaluator ev(r.task, Backend::cuda, r.rec);
  TempDir d("khive-rec-");
  // A valid point of the same template that the run never measured: the first recorded point with one parameter moved.
  const tuner::Template* t = library().find_template(r.rec.candidates[0].params.at("template"));
  ASSERT_NE(t, nullptr);
  std::optional<tuner::Point> unrecorded;
  for (const auto& p :
       tuner::subspace_order(*t, tuner::point_from_params(*t, r.rec.candidates[0].params), {"TILE_N", "STAGES"}, 1)) {
    auto params = p;
    params["template"] = t->name;
    if (tuner::check_point(*t, r.bt, p).ok && !recorded_point(r.rec, params)) {
      unrecorded = p;
      break;
    }
  }
  ASSERT_TRUE(unrecorded.has_value());
  const fs::path f = write_kernel(d.path, "unrecorded.cu", tuner::render(*t, r.bt, *unrecorded));
  const Evaluation e = ev.evaluate(f, std::nullopt);
  EXPECT_EQ(e.status, EvalStatus::error);
  EXPECT_EQ(e.reason, "not_recorded");
  EXPECT_NE(e.message.find("not in the recording h200-gemm-bf16.json: tuner point " + point_key(t->name, *unrecorded)),
            std::string::npos)
      << e.message;
  // A kernel that no tuner rendered is named by its source hash.
  const fs::path g = write_kernel(d.path, "handwritten.cu", "extern \"C\" void khive_launch() {}\n");
  const Evaluation h = ev.evaluate(g, std::nullopt);
  EXPECT_EQ(h.status, EvalStatus::error);
  EXPECT_NE(h.message.find("source hash " + candidate_hash("cu", read_file(g)).substr(0, 16)), std::string::npos)
      << h.message;
  const auto st = ev.stats();
  EXPECT_EQ(st.unrecorded, 2);
  ASSERT_EQ(st.unrecorded_keys.size(), 2u);
  EXPECT_EQ(st.unrecorded_keys[0], point_key(t->name, *unrecorded));
  EXPECT_EQ(st.unrecorded_keys[1].rfind("hash:", 0), 0u);
}

TEST(RecordedEvaluator, SourceHashesRejectionsAndErrorsReplayAsRecorded) {
  TempDir d("khive-rec-");
  const std::string mine = "// a hand-written kernel\nextern \"C\" void khive_launch() {}\n";
  const fs::path f = edited_recording(d.path, "h200-kb08-relayout.json", [&](nlohmann::json& j) {
    j["candidates"][0]["hash"] = candidate_hash("cu", mine);  // matched by its source, not by a point
    auto& c = j["candidates"][1];
    c["verdict"] = "rejected";
    c["check"] = "correctness";
    c["reason"] = "mismatch";
    c["message"] = "output y differs";
    j["candidates"][2]["verdict"] = "error";
    j["candidates"][2]["message"] = "the runner crashed";
  });
  const Recorded& base = recorded("h200-kb08-relayout.json");
  const Recording rec = load_recording(f);
  RecordedEvaluator ev(base.task, Backend::cuda, rec);
  const Evaluation byhash = ev.evaluate(write_kernel(d.path, "mine.cu", mine), std::nullopt);
  EXPECT_EQ(byhash.status, EvalStatus::accepted);
  EXPECT_EQ(byhash.time_s, rec.candidates[0].time_s);
  EXPECT_NE(byhash.message.find("matched by source hash"), std::string::npos) << byhash.message;
  const Evaluation rej =
      ev.evaluate(write_kernel(d.path, "r.cu", render_recorded(base, rec.candidates[1].params)), std::nullopt);
  EXPECT_EQ(rej.status, EvalStatus::rejected);
  EXPECT_EQ(rej.check, Check::correctness);
  EXPECT_EQ(rej.reason, "mismatch");
  EXPECT_EQ(rej.message, "output y differs");
  const Evaluation err =
      ev.evaluate(write_kernel(d.path, "e.cu", render_recorded(base, rec.candidates[2].params)), std::nullopt);
  EXPECT_EQ(err.status, EvalStatus::error);
  EXPECT_NE(err.message.find("the runner crashed"), std::string::npos);
  const auto st = ev.stats();
  EXPECT_EQ(st.by_hash + st.by_point, 3);
  EXPECT_EQ(st.unrecorded, 0);
}

TEST(RecordedEvaluator, ModeledCompositesTakeTheMediansOfTheirRoutedPoints) {
  const Recorded& r = recorded("h200-gemm-bf16.json");
  // Per timed shape the recorded point that is fastest there: a composite the run never measured.
  std::vector<MeasuredKernel> points;
  for (const auto& c : r.rec.candidates) {
    if (!c.accepted()) continue;
    MeasuredKernel k;
    k.id = c.id;
    k.params = c.params;
    k.time_s = c.time_s;
    k.workload_median_s = c.workload_median_s;
    points.push_back(k);
  }
  std::sort(points.begin(), points.end(), [](auto& a, auto& b) { return a.time_s < b.time_s; });
  const MeasuredKernel leader = points.front();
  const std::vector<MeasuredKernel> rest(points.begin() + 1, points.end());
  const tuner::DispatchPlan plan = tuner::plan_dispatch(r.task, r.bt, library(), leader, rest);
  ASSERT_TRUE(plan.ok()) << plan.reason;
  TempDir d("khive-rec-");
  const fs::path f =
      write_kernel(d.path, "composite.cu", tuner::render_composite(r.task, r.bt, plan.variants, plan.routes));
  EXPECT_EQ(source_point_key(read_file(f)), recorded_point_key(plan.params));
  RecordedEvaluator plain(r.task, Backend::cuda, r.rec);
  EXPECT_EQ(plain.evaluate(f, std::nullopt).reason, "not_recorded");
  RecordedOptions o;
  o.model_composites = true;
  RecordedEvaluator modeled(r.task, Backend::cuda, r.rec, o);
  const Evaluation e = modeled.evaluate(f, std::nullopt);
  ASSERT_EQ(e.status, EvalStatus::accepted) << e.message;
  EXPECT_NE(e.message.find("modeled, not measured"), std::string::npos);
  EXPECT_FALSE(e.score.has_value());
  std::map<std::string, const MeasuredKernel*> by_id;
  for (const auto& k : points) by_id[k.id] = &k;
  for (const auto& route : plan.routes)
    for (const auto& w : route.workloads)
      EXPECT_EQ(e.workload_median_s.at(w), by_id.at(plan.variants[route.variant].candidate)->workload_median_s.at(w))
          << w;
  EXPECT_LT(e.time_s, leader.time_s);  // per shape never slower than the fastest single point, faster on some
  EXPECT_EQ(modeled.stats().modeled, 1);
}
