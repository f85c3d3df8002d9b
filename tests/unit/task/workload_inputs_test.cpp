// A workload's own input distributions (workload.jsonl khive.inputs, issue 17): they win over the task's for
// that workload, other workloads keep the task's, and a bad one names the line, the field and what was expected.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "khive/task/task.hpp"

namespace fs = std::filesystem;
using namespace khive;

namespace {

struct Dir {
  fs::path root;
  explicit Dir(const std::string& workloads) {
    std::string tmpl = (fs::temp_directory_path() / "khive-wl-inputs-XXXXXX").string();
    root = ::mkdtemp(tmpl.data());
    fs::create_directories(root / "sm");
    std::ofstream(root / "sm/definition.json") << R"({"name": "sm", "axes": {"N": {"type": "var"}},
      "inputs": {"x": {"shape": ["N"], "dtype": "float32"}, "k": {"shape": ["N"], "dtype": "int32"}},
      "outputs": {"y": {"shape": ["N"], "dtype": "float32"}},
      "khive": {"inputs": {"x": {"dist": "normal", "mean": 0, "std": 60}}}})";
    std::ofstream(root / "sm/workload.jsonl") << workloads;
    std::ofstream(root / "sm/reference.cpp") << "// unused\n";
  }
  ~Dir() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  Task load() const { return load_task(root / "sm"); }
};

}  // namespace

TEST(WorkloadInputs, AWorkloadsOwnDistributionWinsForThatWorkloadOnly) {
  Dir d(R"({"uuid": "logits", "axes": {"N": 8}, "khive": {"inputs": {"x": {"dist": "normal", "mean": 0, "std": 3}}}}
{"uuid": "negative", "axes": {"N": 8}, "khive": {"inputs": {"x": {"dist": "uniform", "low": -60, "high": -20}, "k": {"low": 0, "high": 3}}}}
{"uuid": "plain", "axes": {"N": 8}}
)");
  Task t = d.load();
  ASSERT_EQ(t.workloads.size(), 3u);
  const Distribution logits = t.distribution_for("x", t.workloads[0]);
  EXPECT_EQ(logits.kind, Distribution::Kind::normal);
  EXPECT_EQ(logits.stddev, 3.0);
  const Distribution neg = t.distribution_for("x", t.workloads[1]);
  EXPECT_EQ(neg.kind, Distribution::Kind::uniform);
  EXPECT_EQ(neg.low, -60.0);
  EXPECT_EQ(t.distribution_for("k", t.workloads[1]).kind, Distribution::Kind::integers);  // an int input: integers
  EXPECT_EQ(t.distribution_for("k", t.workloads[1]).high, 3.0);
  EXPECT_EQ(t.distribution_for("x", t.workloads[2]).stddev, 60.0);  // no own distribution: the task's
  EXPECT_EQ(t.distribution_for("k", t.workloads[0]).low, -8.0);     // the dtype's default when neither names one
}

TEST(WorkloadInputs, ABadOneNamesTheLineTheFieldAndTheExpectation) {
  struct Case {
    std::string line, field, expected;
  } cases[] = {
      {R"({"axes": {"N": 8}, "khive": {"inputs": {"z": {"dist": "normal"}}}})", "line 1: khive.inputs.z",
       "the name of an input (x, k)"},
      {R"({"axes": {"N": 8}, "khive": {"inputs": {"x": {"dist": "uniform", "std": 2}}}})", "line 1: khive.inputs.x",
       "a known key"},
      {R"({"axes": {"N": 8}, "khive": {"inputs": {"x": {"dist": "gamma"}}}})", "line 1: khive.inputs.x.dist",
       "one of normal, uniform"},
      {R"({"axes": {"N": 8}, "khive": {"inputs": {"k": {"dist": "normal"}}}})", "line 1: khive.inputs.k.dist",
       "integers or constant"},
      {R"({"axes": {"N": 8}, "khive": {"inputs": [1]}})", "line 1: khive.inputs", "an object"},
  };
  for (const auto& c : cases) {
    Dir d(c.line + "\n");
    try {
      d.load();
      ADD_FAILURE() << "no error for " << c.line;
    } catch (const TaskFormatError& e) {
      EXPECT_EQ(e.file, "sm/workload.jsonl") << c.line;
      EXPECT_EQ(e.field.rfind(c.field, 0), 0u) << e.what();
      EXPECT_NE(e.expected.find(c.expected), std::string::npos) << e.what();
    }
  }
}
