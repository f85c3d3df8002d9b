// The PyTorch baselines file (eval/pytorch_baselines.hpp): device slugs, where the file lives, validation
// with errors naming the file and the field, and lookups that refuse numbers measured at other shapes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "khive/eval/pytorch_baselines.hpp"

namespace khive {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

class PytorchFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("khive_pytorch_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "suite" / "gemm");
    fs::create_directories(dir_ / "suite" / "baselines");
  }
  void TearDown() override { fs::remove_all(dir_); }

  static json good() {
    return json::parse(R"({
      "schema": "khive.pytorch-baselines/1", "gpu": "h200", "device": "NVIDIA H200", "torch": "2.11.0",
      "date": "2026-11-30T00:00:00Z",
      "tasks": {
        "gemm": {"workloads": {
          "big":   {"median_s": 2.5e-3, "spread": 0.004, "samples": 40, "min_s": 2.4e-3, "p10_s": 2.45e-3, "p90_s": 2.6e-3,
                    "axes": {"M": 4096, "N": 4096}},
          "small": {"median_s": 1e-5, "samples": 10}}},
        "broken": {"workloads": {}, "error": "workload w1: RuntimeError: boom"}
      }})");
  }
  fs::path write(const json& j, const std::string& name = "pytorch-h200.json") {
    fs::path p = dir_ / "suite" / "baselines" / name;
    std::ofstream(p) << j.dump(2);
    return p;
  }
  fs::path write_text(const std::string& text) {
    fs::path p = dir_ / "suite" / "baselines" / "pytorch-h200.json";
    std::ofstream(p) << text;
    return p;
  }
  // The message load_pytorch_baselines throws for a file, or "" when it loads.
  std::string error_for(const json& j) {
    try {
      load_pytorch_baselines(write(j));
    } catch (const TaskFormatError& e) {
      return e.what();
    }
    return "";
  }
  Task task() const {
    Task t;
    t.name = "gemm";
    t.dir = dir_ / "suite" / "gemm";
    Workload big;
    big.uuid = "big";
    big.axes = {{"M", 4096}, {"N", 4096}};
    Workload small;
    small.uuid = "small";
    small.axes = {{"M", 8}, {"N", 8}};
    t.workloads = {big, small};
    return t;
  }
  fs::path dir_;
};

TEST(DeviceSlug, KnownGpusUnknownGpusAndCpus) {
  EXPECT_EQ(device_slug("NVIDIA H200", Backend::cuda), "h200");
  EXPECT_EQ(device_slug("NVIDIA H100 80GB HBM3", Backend::cuda), "h100");
  EXPECT_EQ(device_slug("NVIDIA GeForce RTX 4090", Backend::cuda), "nvidia_geforce_rtx_4090");
  EXPECT_EQ(device_slug("  --  ", Backend::cuda), "unknown");
  // Same rule as bench/pytorch_baselines.py: runs of other characters become one '_', none at the ends.
  EXPECT_EQ(device_slug("Intel(R) Xeon(R) Processor", Backend::cpu), "cpu-intel_r_xeon_r_processor");
  EXPECT_EQ(device_slug("AMD EPYC 7B13 64-Core Processor", Backend::cpu), "cpu-amd_epyc_7b13_64_core_processor");
}

TEST_F(PytorchFile, LivesInTheSuitesBaselinesFolder) {
  Task t = task();
  EXPECT_EQ(pytorch_baselines_path(t, Backend::cuda, "NVIDIA H200"),
            dir_ / "suite" / "baselines" / "pytorch-h200.json");
  t.dir = (dir_ / "suite" / "gemm").string() + "/";  // a trailing slash still names the task directory
  EXPECT_EQ(pytorch_baselines_path(t, Backend::cpu, "Some CPU"),
            dir_ / "suite" / "baselines" / "pytorch-cpu-some_cpu.json");
}

TEST_F(PytorchFile, ReadsNumbersAndErrors) {
  auto p = load_pytorch_baselines(write(good()));
  EXPECT_EQ(p.gpu, "h200");
  EXPECT_EQ(p.torch, "2.11.0");
  ASSERT_EQ(p.tasks.count("gemm"), 1u);
  const auto& big = p.tasks.at("gemm").at("big");
  EXPECT_DOUBLE_EQ(big.summary.median, 2.5e-3);
  EXPECT_DOUBLE_EQ(big.summary.rel_spread, 0.004);
  EXPECT_EQ(big.summary.n, 40u);
  EXPECT_DOUBLE_EQ(big.summary.p90, 2.6e-3);
  EXPECT_EQ(big.axes.at("M"), 4096);
  const auto& small = p.tasks.at("gemm").at("small");
  EXPECT_DOUBLE_EQ(small.summary.rel_spread, 0.0);  // optional fields default
  EXPECT_DOUBLE_EQ(small.summary.min, 1e-5);
  EXPECT_EQ(p.errors.at("broken"), "workload w1: RuntimeError: boom");
  EXPECT_TRUE(p.tasks.at("broken").empty());
}

TEST_F(PytorchFile, MalformedFilesNameTheFileAndTheField) {
  auto j = good();
  j["tasks"]["gemm"]["workloads"]["big"]["median_s"] = -1;
  EXPECT_EQ(error_for(j), "pytorch-h200.json: tasks.gemm.workloads.big.median_s: expected a positive number, got -1");
  j = good();
  j["tasks"]["gemm"]["workloads"]["big"].erase("samples");
  EXPECT_EQ(error_for(j), "pytorch-h200.json: tasks.gemm.workloads.big.samples: expected an integer >= 1, got nothing");
  j = good();
  j["tasks"]["gemm"]["workloads"]["small"]["spread"] = "low";
  EXPECT_EQ(error_for(j), "pytorch-h200.json: tasks.gemm.workloads.small.spread: expected a number >= 0, got \"low\"");
  j = good();
  j["tasks"]["gemm"]["workloads"]["big"]["axes"]["M"] = 1.5;
  EXPECT_EQ(error_for(j), "pytorch-h200.json: tasks.gemm.workloads.big.axes.M: expected an integer, got 1.5");
  j = good();
  j["schema"] = "khive.pytorch-baselines/0";
  EXPECT_EQ(error_for(j),
            "pytorch-h200.json: schema: expected \"khive.pytorch-baselines/1\", got \"khive.pytorch-baselines/0\"");
  j = good();
  j.erase("gpu");
  EXPECT_EQ(error_for(j), "pytorch-h200.json: gpu: expected a string, got nothing");
  j = good();
  j["tasks"] = json::array();
  EXPECT_EQ(error_for(j), "pytorch-h200.json: tasks: expected an object of task name -> {workloads, error}, got []");
  j = good();
  j["tasks"]["broken"]["error"] = 3;
  EXPECT_EQ(error_for(j), "pytorch-h200.json: tasks.broken.error: expected a string, got 3");
  write_text("{\"schema\": ");
  try {
    load_pytorch_baselines(dir_ / "suite" / "baselines" / "pytorch-h200.json");
    FAIL() << "a truncated file loaded";
  } catch (const TaskFormatError& e) {
    EXPECT_EQ(e.file, "pytorch-h200.json");
    EXPECT_EQ(e.field, "(syntax)");
  }
  EXPECT_EQ(error_for(good()), "");
}

TEST_F(PytorchFile, FoundOnlyForThePresentDeviceAndItsShapes) {
  Task t = task();
  EXPECT_FALSE(find_pytorch_baselines(t, Backend::cuda, "NVIDIA H100 80GB HBM3").has_value());  // no pytorch-h100.json
  write(good());
  auto p = find_pytorch_baselines(t, Backend::cuda, "NVIDIA H200");
  ASSERT_TRUE(p.has_value());
  ASSERT_TRUE(p->lookup(t, "big").has_value());
  EXPECT_DOUBLE_EQ(p->lookup(t, "big")->median, 2.5e-3);
  EXPECT_TRUE(p->lookup(t, "small").has_value());  // no axes recorded: taken as it is
  EXPECT_FALSE(p->lookup(t, "absent").has_value());
  t.workloads[0].axes["M"] = 2048;  // the task changed since PyTorch was measured
  EXPECT_FALSE(p->lookup(t, "big").has_value());
  t.name = "other";
  EXPECT_FALSE(p->lookup(t, "small").has_value());

  // A file named for one GPU holding another's numbers is an error, not silently used.
  auto j = good();
  j["gpu"] = "h100";
  write(j);
  try {
    find_pytorch_baselines(task(), Backend::cuda, "NVIDIA H200");
    FAIL() << "numbers for h100 were accepted for the H200";
  } catch (const TaskFormatError& e) {
    EXPECT_EQ(std::string(e.what()),
              "pytorch-h200.json: gpu: expected \"h200\" (the device this file is named for), got \"h100\"");
  }
}

}  // namespace
}  // namespace khive
