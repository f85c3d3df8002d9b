#include <gtest/gtest.h>

#include "khive/llm/llm_agent.hpp"
#include "khive/llm/profile_parse.hpp"

namespace khive::llm {
namespace {

// The shape of `ncu --csv --page details` output (header names as ncu writes them; rule columns present).
const char* kCsv =
    "==PROF== Connected to process 4242 (/tmp/driver)\n"
    "==PROF== Profiling \"vadd\" - 0: 0%....50%....100% - 9 passes\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid "
    "Size\","
    "\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\",\"Rule Name\",\"Rule "
    "Type\",\"Rule Description\","
    "\"Estimated Speedup Type\",\"Estimated Speedup\"\n"
    "\"0\",\"4242\",\"driver\",\"h\",\"vadd(const float *, float *, long)\",\"1\",\"7\",\"(256, 1, 1)\",\"(16384, 1, "
    "1)\",\"0\",\"9.0\","
    "\"GPU Speed Of Light Throughput\",\"Duration\",\"us\",\"41.22\",\"\",\"\",\"\",\"\",\"\"\n"
    "\"0\",\"4242\",\"driver\",\"h\",\"vadd(const float *, float *, long)\",\"1\",\"7\",\"(256, 1, 1)\",\"(16384, 1, "
    "1)\",\"0\",\"9.0\","
    "\"GPU Speed Of Light Throughput\",\"DRAM Throughput\",\"%\",\"88.1\",\"\",\"\",\"\",\"\",\"\"\n"
    "\"0\",\"4242\",\"driver\",\"h\",\"vadd(const float *, float *, long)\",\"1\",\"7\",\"(256, 1, 1)\",\"(16384, 1, "
    "1)\",\"0\",\"9.0\","
    "\"Launch Statistics\",\"Registers Per Thread\",\"register/thread\",\"16\",\"\",\"\",\"\",\"\",\"\"\n"
    "\"0\",\"4242\",\"driver\",\"h\",\"vadd(const float *, float *, long)\",\"1\",\"7\",\"(256, 1, 1)\",\"(16384, 1, "
    "1)\",\"0\",\"9.0\","
    "\"Occupancy\",\"Achieved Occupancy\",\"%\",\"81.5\",\"Occupancy\",\"OPT\",\"The difference between calculated "
    "theoretical, "
    "\"\"quoted\"\"\",\"local\",\"18.5\"\n";

TEST(ProfileParse, NcuCsvMetricsAndAdvice) {
  auto p = parse_ncu_csv(kCsv);
  ASSERT_TRUE(p.metrics.contains("0: vadd"));
  auto& m = p.metrics["0: vadd"];
  EXPECT_EQ(m["Duration"], "41.22 us");
  EXPECT_EQ(m["Grid Size"], "(16384, 1, 1)");
  EXPECT_EQ(m["Registers Per Thread"], "16 register/thread");
  ASSERT_EQ(m["advice"].size(), 1u);
  EXPECT_NE(p.text.find("duration 41.22 us"), std::string::npos) << p.text;
  EXPECT_NE(p.text.find("DRAM throughput 88.1 %"), std::string::npos) << p.text;
  EXPECT_NE(
      p.text.find(
          "ncu advice: Occupancy: The difference between calculated theoretical, \"quoted\" (estimated speedup 18.5%)"),
      std::string::npos)
      << p.text;
  EXPECT_TRUE(parse_ncu_csv("==PROF== nothing profiled\n").text.empty());
}

TEST(ProfileParse, MemcheckExcerptPointsAtTheLine) {
  std::string out =
      "========= COMPUTE-SANITIZER\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at vadd(const float *, float *, long)+0x70 in /tmp/p/kernel.cu:3\n"
      "=========     by thread (255,0,0) in block (3,0,0)\n"
      "=========     Address 0x7f00 is out of bounds\n"
      "=========\n"
      "========= ERROR SUMMARY: 1 error\n";
  auto e = memcheck_excerpt(out, "a\nb\n  c[i + 1] = a[i];\n");
  EXPECT_NE(e.find("Invalid __global__ write"), std::string::npos) << e;
  EXPECT_NE(e.find("line 3:   c[i + 1] = a[i];"), std::string::npos) << e;
  EXPECT_NE(e.find("out of bounds"), std::string::npos) << e;
  EXPECT_EQ(memcheck_excerpt("========= ERROR SUMMARY: 0 errors\n", ""), "memcheck: no errors found on one call");
}

TEST(ProfileParse, CpuBackendIsSkippedWithANote) {
  Task t;
  ProfileJob j;
  j.task = &t;
  j.backend = Backend::cpu;
  auto r = profile_kernel(j);
  EXPECT_FALSE(r.ran);
  EXPECT_NE(r.skipped.find("CPU backend"), std::string::npos);
}

}  // namespace
}  // namespace khive::llm
