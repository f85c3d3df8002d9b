// The job khive hands a judge: every field survives the trip, absent fields keep their defaults, and the fields
// without a safe default (mode, backend, the inputs' version) or out of range are refused with the field's name.
#include <gtest/gtest.h>

#include "khive/job/protocol.hpp"

namespace khive {
namespace {

Job sample_job() {
  Job j;
  j.mode = "evaluate";
  j.backend = "cuda";
  j.task_dir = "tasks/sol/rmsnorm";
  j.only_workloads = {"w1", "w3"};
  j.library = "/c/cand.so";
  j.leader_library = "/c/lead.so";
  j.leader_vendor = true;
  j.reference_python = "python3";
  j.seed_base = 77;
  j.input_secret = std::string(32, 'a') + std::string(32, '5');
  j.seeds = 5;
  j.time = false;
  j.timing.max_batch = 17;
  j.timing.target_noise = 0.02;
  j.ab_alpha = 0.002;
  j.ab_min_pairs = 31;
  j.timeout_s = 9.5;
  j.cpu_memory_limit = int64_t{3} << 30;
  j.sandbox.landlock = false;
  j.golden_timed_limit_bytes = 4096;
  return j;
}

TEST(JobProtocol, EveryFieldSurvivesTheTrip) {
  const Job a = sample_job();
  const Job b = parse_job(nlohmann::json(a));
  EXPECT_EQ(nlohmann::json(b), nlohmann::json(a));
  EXPECT_EQ(b.input_secret, std::string(32, 'a') + std::string(32, '5'));
  EXPECT_EQ(b.only_workloads, (std::vector<std::string>{"w1", "w3"}));
  EXPECT_EQ(b.timing.max_batch, 17);
  EXPECT_FALSE(b.sandbox.landlock);
  EXPECT_TRUE(b.sandbox.seccomp);
  EXPECT_EQ(b.inputs_version, kInputsVersion);
}

TEST(JobProtocol, AbsentFieldsKeepTheirDefaults) {
  const Job b = parse_job(
      {{"mode", "calibrate"}, {"backend", "cpu"}, {"inputs_version", kInputsVersion}, {"timing", {{"warmup", 9}}}});
  const Job d;
  EXPECT_EQ(b.mode, "calibrate");
  EXPECT_EQ(b.seeds, d.seeds);
  EXPECT_EQ(b.timeout_s, d.timeout_s);
  EXPECT_EQ(b.timing.warmup, 9);
  EXPECT_EQ(b.timing.max_samples, d.timing.max_samples);  // a partial nested object keeps the rest
  EXPECT_EQ(b.golden_sample_count, d.golden_sample_count);
}

void expect_refused(nlohmann::json j, const std::string& names) {
  try {
    parse_job(j);
    FAIL() << "accepted " << j.dump();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

TEST(JobProtocol, RefusesMissingOrOutOfRangeFields) {
  const nlohmann::json ok = sample_job();
  for (const char* f : {"mode", "backend", "inputs_version"}) {
    nlohmann::json j = ok;
    j.erase(f);
    expect_refused(j, f);
  }
  nlohmann::json j = ok;
  j["seeds"] = 0;
  expect_refused(j, "seeds");
  j = ok;
  j["timeout_s"] = -1;
  expect_refused(j, "timeout_s");
  j = ok;
  j["input_secret"] = "1234";  // an evaluation's inputs all derive from it: 64 hex digits or nothing
  expect_refused(j, "input_secret");
  j = ok;
  j.erase("input_secret");
  expect_refused(j, "input_secret");
  j = ok;
  j["golden_sample_count"] = 1;
  expect_refused(j, "golden_sample_count");
  expect_refused(nlohmann::json::array(), "object");
  j = ok;
  j["seeds"] = "three";
  EXPECT_THROW(parse_job(j), nlohmann::json::type_error);
}

}  // namespace
}  // namespace khive
