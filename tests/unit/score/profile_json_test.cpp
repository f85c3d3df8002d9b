// Hardware profile JSON: round trip and error messages.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "khive/score/score.hpp"

namespace khive {
namespace {

namespace fs = std::filesystem;

class ProfileJson : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("khive_profile_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& text) {
    fs::path p = dir_ / "profile.json";
    std::ofstream(p) << text;
    return p;
  }
  // The message of the error load_profile throws on text.
  std::string error_of(const std::string& text) {
    try {
      load_profile(write(text));
    } catch (const TaskFormatError& e) {
      return e.what();
    }
    return "(no error)";
  }
  fs::path dir_;
};

TEST_F(ProfileJson, RoundTripBuiltin) {
  HardwareProfile h = builtin_profile("NVIDIA H200").value();
  fs::path p = dir_ / "h200.json";
  save_profile(h, p);
  EXPECT_FALSE(fs::exists(dir_ / "h200.json.tmp"));
  HardwareProfile g = load_profile(p);
  EXPECT_EQ(g.name, h.name);
  EXPECT_EQ(g.source, h.source);
  EXPECT_EQ(g.peak_flops, h.peak_flops);  // exact: doubles round-trip through the JSON text
  EXPECT_EQ(g.peak_bandwidth, h.peak_bandwidth);
  EXPECT_EQ(g.measured_flops, h.measured_flops);
  EXPECT_EQ(g.measured_bandwidth, h.measured_bandwidth);
  EXPECT_EQ(profile_to_json(g), profile_to_json(h));
}

TEST_F(ProfileJson, RoundTripOddValues) {
  HardwareProfile h;
  h.name = "cpu:Some \"quoted\" CPU (2 threads)";
  h.source = "khive calibrate";
  h.peak_flops = {{ComputeUnit::fp32, 1.0 / 3.0 * 1e11}, {ComputeUnit::fp64, 12345.678901234567}};
  h.peak_bandwidth = 2.0e10 / 7.0;
  h.measured_flops = {{ComputeUnit::fp32, 0.1}};
  save_profile(h, dir_ / "p.json");
  HardwareProfile g = load_profile(dir_ / "p.json");
  EXPECT_EQ(g.name, h.name);
  EXPECT_EQ(g.peak_flops, h.peak_flops);
  EXPECT_EQ(g.peak_bandwidth, h.peak_bandwidth);
  EXPECT_EQ(g.measured_flops, h.measured_flops);
  EXPECT_EQ(g.measured_bandwidth, 0.0);
}

TEST_F(ProfileJson, UnitsAreKeyedByName) {
  HardwareProfile h = builtin_profile("H100").value();
  auto j = nlohmann::json::parse(profile_to_json(h));
  EXPECT_DOUBLE_EQ(j["peak_flops"]["bf16"].get<double>(), 989.4e12);
  EXPECT_DOUBLE_EQ(j["peak_flops"]["fp8"].get<double>(), 1978.9e12);
  EXPECT_DOUBLE_EQ(j["peak_bandwidth"].get<double>(), 3.35e12);
  EXPECT_EQ(j["peak_flops"].size(), 7u);
}

TEST_F(ProfileJson, MinimalFileLoads) {
  HardwareProfile g = load_profile(write(R"({"name": "x", "peak_bandwidth": 1e12})"));
  EXPECT_EQ(g.name, "x");
  EXPECT_TRUE(g.peak_flops.empty());
  EXPECT_EQ(g.bandwidth(true), 1e12);
}

TEST_F(ProfileJson, ErrorsNameFileAndField) {
  const std::string ok_head = R"("name": "x", "peak_bandwidth": 1e12)";
  std::string e = error_of("{" + ok_head + R"(, "peak_flops": {"bf16": -1}})");
  EXPECT_NE(e.find("profile.json: peak_flops.bf16: expected a positive number"), std::string::npos) << e;

  e = error_of("{" + ok_head + R"(, "peak_flops": {"bf16": "fast"}})");
  EXPECT_NE(e.find("profile.json: peak_flops.bf16: expected a positive number"), std::string::npos) << e;

  e = error_of("{" + ok_head + R"(, "measured_flops": {"fp32": 0}})");
  EXPECT_NE(e.find("profile.json: measured_flops.fp32: expected a positive number"), std::string::npos) << e;

  e = error_of("{" + ok_head + R"(, "peak_flops": {"fp7": 1}})");
  EXPECT_NE(e.find("profile.json: peak_flops.fp7: expected a compute unit"), std::string::npos) << e;

  e = error_of("{" + ok_head + R"(, "peak_flops": [1, 2]})");
  EXPECT_NE(e.find("profile.json: peak_flops: expected an object"), std::string::npos) << e;

  e = error_of(R"({"name": "x"})");
  EXPECT_NE(e.find("profile.json: peak_bandwidth: expected a positive number"), std::string::npos) << e;

  e = error_of(R"({"name": "x", "peak_bandwidth": true})");
  EXPECT_NE(e.find("profile.json: peak_bandwidth: expected a positive number"), std::string::npos) << e;

  e = error_of(R"({"name": "x", "peak_bandwidth": 1e12, "measured_bandwidth": -3})");
  EXPECT_NE(e.find("profile.json: measured_bandwidth: expected a non-negative number"), std::string::npos) << e;

  e = error_of(R"({"peak_bandwidth": 1e12})");
  EXPECT_NE(e.find("profile.json: name: expected a non-empty string"), std::string::npos) << e;

  e = error_of(R"({"name": "x", "peak_bandwidth": )");
  EXPECT_NE(e.find("profile.json: (file): expected valid JSON"), std::string::npos) << e;

  e = error_of(R"([1])");
  EXPECT_NE(e.find("profile.json: (root): expected an object"), std::string::npos) << e;
}

TEST_F(ProfileJson, MissingFile) {
  try {
    load_profile(dir_ / "absent.json");
    FAIL() << "no error";
  } catch (const TaskFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("absent.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace khive
