// load_task on small task directories written by the tests; resolve_axes, tolerance precedence,
// launch_signature, workload_cost, find_tasks.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "khive/support/hash.hpp"
#include "khive/task/expr.hpp"
#include "khive/task/task.hpp"

namespace khive {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

// A fresh temporary directory, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "khive-task-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    root_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  const fs::path& root() const { return root_; }
  void write(const fs::path& rel, const std::string& content) const {
    fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
  }

 private:
  fs::path root_;
};

// The running example: C = alpha * A @ B with a var M and N, a const K and an expr axis.
json gemm_definition() {
  return json::parse(R"json({
    "name": "gemm_fp32",
    "description": "C = alpha * A @ B",
    "op_type": "gemm",
    "tags": ["status:verified", "model:test"],
    "axes": {
      "M": {"type": "var"},
      "N": {"type": "var", "description": "columns"},
      "K": {"type": "const", "value": 64},
      "MN": {"type": "expr", "expression": "M * N"}
    },
    "inputs": {
      "A": {"shape": ["M", "K"], "dtype": "float32"},
      "B": {"shape": ["K", "N"], "dtype": "float32"},
      "alpha": {"shape": null, "dtype": "float32"}
    },
    "outputs": {"C": {"shape": ["M", "N"], "dtype": "float32", "description": "the product"}},
    "constraints": ["M % 1 == 0", "N <= 4096"],
    "reference": "def run(A, B, alpha):\n    return alpha * A @ B\n",
    "khive": {
      "cost": {"flops": "2*M*N*K", "bytes": "4*(M*K + K*N + M*N)", "unit": "fp32"},
      "tolerance": {"C": {"atol": 1e-3}},
      "inputs": {"A": {"dist": "uniform", "low": -1, "high": 2}},
      "policy": {"libraries": ["cublas"]}
    }
  })json");
}

const char* kGemmWorkloads =
    R"({"uuid": "small", "axes": {"M": 16, "N": 32}, "inputs": {"alpha": {"type": "scalar", "value": 1.5}}, "khive": {"role": "correctness"}})"
    "\n"
    R"({"axes": {"M": 256, "N": 512}, "inputs": {"A": {"type": "random"}}, "khive": {"role": "perf", "weight": 2}})"
    "\n";

// Writes a task directory <tmp>/gemm with the given definition and workloads.
struct TaskFixture {
  TempDir tmp;
  fs::path dir;
  explicit TaskFixture(const json& def = gemm_definition(), const std::string& workloads = kGemmWorkloads,
                       const std::string& name = "gemm") {
    dir = tmp.root() / name;
    fs::create_directories(dir);
    if (!def.is_null()) write("definition.json", def.dump(2));
    write("workload.jsonl", workloads);
  }
  void write(const fs::path& rel, const std::string& content) const {
    fs::path p = dir / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
  }
  Task load() const { return load_task(dir); }
};

// The TaskFormatError thrown by load_task, or a failed expectation.
TaskFormatError load_error(const TaskFixture& f) {
  try {
    f.load();
  } catch (const TaskFormatError& e) {
    return e;
  }
  ADD_FAILURE() << "load_task did not throw";
  return TaskFormatError("", "", "");
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ------------------------------------------------------------------------------------ valid tasks

TEST(LoadTask, ReadsEveryDefinitionField) {
  TaskFixture f;
  Task t = f.load();
  EXPECT_EQ(t.dir, fs::absolute(f.dir).lexically_normal());
  EXPECT_EQ(t.name, "gemm_fp32");
  EXPECT_EQ(t.description, "C = alpha * A @ B");
  EXPECT_EQ(t.op_type, "gemm");
  EXPECT_EQ(t.tags, (std::vector<std::string>{"status:verified", "model:test"}));
  ASSERT_EQ(t.axes.size(), 4u);
  EXPECT_EQ(t.axes[0].name, "M");
  EXPECT_EQ(t.axes[0].kind, Axis::Kind::var);
  EXPECT_EQ(t.axes[2].kind, Axis::Kind::constant);
  EXPECT_EQ(t.axes[2].value, 64);
  EXPECT_EQ(t.axes[3].kind, Axis::Kind::expr);
  EXPECT_EQ(t.axes[3].expression, "M * N");
  EXPECT_EQ(t.var_axes(), (std::vector<std::string>{"M", "N"}));
  ASSERT_EQ(t.inputs.size(), 3u);
  EXPECT_EQ(t.inputs[2].name, "alpha");
  EXPECT_TRUE(t.inputs[2].scalar);
  EXPECT_EQ(t.inputs[0].shape, (std::vector<std::string>{"M", "K"}));
  ASSERT_EQ(t.outputs.size(), 1u);
  EXPECT_EQ(t.outputs[0].dtype, DType::f32);
  EXPECT_EQ(t.constraints.size(), 2u);
  EXPECT_TRUE(contains(t.pytorch_reference, "def run(A, B, alpha)"));
  EXPECT_EQ(t.cost.flops, "2*M*N*K");
  EXPECT_EQ(t.cost.unit, ComputeUnit::fp32);
  EXPECT_TRUE(t.policy.allows("cublas"));
  EXPECT_FALSE(t.policy.allows("cublasLt"));
  EXPECT_EQ(t.hash.size(), 64u);
  EXPECT_EQ(t.find_input("B"), &t.inputs[1]);
  EXPECT_EQ(t.find_input("C"), nullptr);
  EXPECT_EQ(t.find_output("C"), &t.outputs[0]);
}

TEST(LoadTask, ReadsWorkloadsWithDefaults) {
  TaskFixture f;
  Task t = f.load();
  ASSERT_EQ(t.workloads.size(), 2u);
  const Workload& a = t.workloads[0];
  EXPECT_EQ(a.uuid, "small");
  EXPECT_EQ(a.line, 1);
  EXPECT_EQ(a.axes, (std::map<std::string, int64_t>{{"M", 16}, {"N", 32}}));
  EXPECT_EQ(a.role, WorkloadRole::correctness);
  EXPECT_TRUE(a.checks_correctness());
  EXPECT_FALSE(a.is_perf());
  EXPECT_EQ(a.weight, 1.0);
  ASSERT_EQ(a.inputs.count("alpha"), 1u);
  EXPECT_EQ(a.inputs.at("alpha").kind, InputSource::Kind::scalar);
  EXPECT_EQ(a.inputs.at("alpha").value, 1.5);
  const Workload& b = t.workloads[1];
  EXPECT_EQ(b.uuid, "w2");
  EXPECT_EQ(b.role, WorkloadRole::perf);
  EXPECT_EQ(b.weight, 2.0);
  EXPECT_EQ(b.inputs.at("A").kind, InputSource::Kind::random);
}

TEST(LoadTask, WorkloadBackends) {
  TaskFixture f(gemm_definition(),
                R"({"uuid": "both", "axes": {"M": 1, "N": 1}, "khive": {"role": "correctness"}})"
                "\n"
                R"({"uuid": "cpu", "axes": {"M": 8, "N": 8}, "khive": {"role": "perf", "backends": ["cpu"]}})"
                "\n"
                R"({"uuid": "cuda", "axes": {"M": 4096, "N": 4096}, "khive": {"role": "perf", "backends": ["cuda"]}})"
                "\n"
                R"({"uuid": "listed", "axes": {"M": 2, "N": 2}, "khive": {"backends": ["cuda", "cpu"]}})"
                "\n"
                R"({"uuid": "null", "axes": {"M": 2, "N": 3}, "khive": {"backends": null}})"
                "\n");
  f.write("reference.cu", "//");
  f.write("reference.cpp", "//");
  Task t = f.load();
  ASSERT_EQ(t.workloads.size(), 5u);
  auto on = [&](std::size_t i, Backend b) { return t.workloads[i].runs_on(b); };
  EXPECT_TRUE(on(0, Backend::cpu) && on(0, Backend::cuda));  // default: both
  EXPECT_TRUE(on(1, Backend::cpu));
  EXPECT_FALSE(on(1, Backend::cuda));
  EXPECT_FALSE(on(2, Backend::cpu));
  EXPECT_TRUE(on(2, Backend::cuda));
  EXPECT_TRUE(on(3, Backend::cpu) && on(3, Backend::cuda));
  EXPECT_TRUE(on(4, Backend::cpu) && on(4, Backend::cuda));  // null = absent
}

TEST(LoadTask, BackendCoverageIsOnlyRequiredWhereThereIsAReference) {
  // CUDA-only perf workloads and no CPU perf workload: fine while the task has no CPU reference.
  const std::string wl = R"({"axes": {"M": 1, "N": 1}, "khive": {"role": "correctness"}})"
                         "\n"
                         R"({"axes": {"M": 4096, "N": 4096}, "khive": {"role": "perf", "backends": ["cuda"]}})"
                         "\n";
  TaskFixture f(gemm_definition(), wl);
  f.write("reference.cu", "//");
  EXPECT_NO_THROW(f.load());
  f.write("reference.cpp", "//");
  TaskFormatError e = load_error(f);
  EXPECT_EQ(e.field, "khive.backends");
  EXPECT_TRUE(contains(e.expected, "perf workload")) << e.expected;
  EXPECT_TRUE(contains(e.expected, "runs on cpu")) << e.expected;
}

TEST(LoadTask, KeepsDefinitionOrderOfTensorsAndAxes) {
  json def = gemm_definition();
  def["axes"] = json::parse(R"({"z": {"type":"var"}, "a": {"type":"var"}, "m": {"type":"const","value":2}})");
  def["inputs"] = json::parse(R"({"zeta": {"shape":["z"],"dtype":"float32"}, "alpha": {"shape":["a"],"dtype":"float32"},
                                  "mid": {"shape":null,"dtype":"int32"}})");
  def["outputs"] =
      json::parse(R"({"y": {"shape":["z","a"],"dtype":"float32"}, "b": {"shape":["m"],"dtype":"float32"}})");
  def["constraints"] = json::array();
  def.erase("khive");
  TaskFixture f(def, R"({"axes": {"z": 2, "a": 3}})");
  Task t = f.load();
  EXPECT_EQ(t.inputs[0].name, "zeta");
  EXPECT_EQ(t.inputs[1].name, "alpha");
  EXPECT_EQ(t.inputs[2].name, "mid");
  EXPECT_EQ(t.outputs[0].name, "y");
  EXPECT_EQ(t.outputs[1].name, "b");
  EXPECT_EQ(t.var_axes(), (std::vector<std::string>{"z", "a"}));
  EXPECT_EQ(launch_signature(t, Backend::cpu),
            "extern \"C\" void khive_launch(const float* zeta, const float* alpha, int32_t mid, float* y, float* b, "
            "int64_t z, int64_t a)");
}

TEST(LoadTask, MinimalDefinitionUsesDefaults) {
  json def = json::parse(R"({"name": "copy", "axes": {"N": {"type":"var"}},
      "inputs": {"x": {"shape":["N"],"dtype":"bfloat16"}}, "outputs": {"y": {"shape":["N"],"dtype":"bfloat16"}}})");
  TaskFixture f(def,
                "\n"
                R"({"axes": {"N": 8}})"
                "\n\n");
  Task t = f.load();
  EXPECT_TRUE(t.upstream);  // no khive block: upstream defaults, cost derived (upstream_test.cpp)
  EXPECT_EQ(t.cost.flops, "N");
  EXPECT_EQ(t.cost.bytes, "2 * N + 2 * N");
  EXPECT_TRUE(t.cost.derived());
  EXPECT_TRUE(t.policy.libraries.empty());
  EXPECT_FALSE(t.reference_cuda.has_value());
  EXPECT_FALSE(t.reference_cpu.has_value());
  EXPECT_TRUE(t.baselines.empty());
  ASSERT_EQ(t.workloads.size(), 1u);
  EXPECT_EQ(t.workloads[0].line, 2);  // blank lines are skipped but counted
  EXPECT_EQ(t.workloads[0].uuid, "w2");
  EXPECT_EQ(t.workloads[0].role, WorkloadRole::both);
  Workload w = t.workloads[0];
  Tolerance tol = t.tolerance_for("y", w);
  EXPECT_EQ(tol.atol, 1e-2);
  EXPECT_EQ(tol.rtol, 1e-2);
}

TEST(LoadTask, DefaultReferencesAndBaselinesAreFound) {
  TaskFixture f;
  f.write("reference.cu", "// cuda");
  f.write("reference.cpp", "// cpu");
  f.write("baselines/vendor.cu", "//");
  f.write("baselines/a_cpu.cpp", "//");
  f.write("baselines/notes.txt", "not a baseline");
  Task t = f.load();
  ASSERT_TRUE(t.reference_cuda.has_value());
  EXPECT_EQ(*t.reference_cuda, t.dir / "reference.cu");
  EXPECT_EQ(t.reference_for(Backend::cuda), t.dir / "reference.cu");
  EXPECT_EQ(t.reference_for(Backend::cpu), t.dir / "reference.cpp");
  ASSERT_EQ(t.baselines.size(), 2u);
  EXPECT_EQ(t.baselines[0], t.dir / "baselines" / "a_cpu.cpp");
  EXPECT_EQ(t.baselines[1], t.dir / "baselines" / "vendor.cu");
  EXPECT_TRUE(t.baselines[0].is_absolute());
}

TEST(LoadTask, ExplicitReferencesAndBaselines) {
  json def = gemm_definition();
  def["khive"]["reference"] = {{"cuda", "src/ref.cu"}, {"cpu", "src/ref.cpp"}};
  def["khive"]["baselines"] = json::array({"vendor/cublas.cu"});
  TaskFixture f(def);
  f.write("src/ref.cu", "//");
  f.write("src/ref.cpp", "//");
  f.write("vendor/cublas.cu", "//");
  f.write("baselines/ignored.cu", "//");  // explicit list replaces the default
  Task t = f.load();
  EXPECT_EQ(t.reference_cuda, t.dir / "src" / "ref.cu");
  EXPECT_EQ(t.reference_cpu, t.dir / "src" / "ref.cpp");
  ASSERT_EQ(t.baselines.size(), 1u);
  EXPECT_EQ(t.baselines[0], t.dir / "vendor" / "cublas.cu");
}

TEST(LoadTask, HashIsTheIdentityOfTheFiles) {
  TaskFixture f;
  f.write("reference.cu", "// v1");
  std::string h1 = f.load().hash;
  EXPECT_EQ(f.load().hash, h1);
  f.write("reference.cu", "// v2");
  std::string h2 = f.load().hash;
  EXPECT_NE(h2, h1);
  f.write("reference.cu", "// v1");
  EXPECT_EQ(f.load().hash, h1);
  fs::rename(f.dir / "reference.cu", f.dir / "reference2.cu");  // same content, another name
  EXPECT_NE(f.load().hash, h1);
  fs::rename(f.dir / "reference2.cu", f.dir / "reference.cu");
  f.write("baselines/x.cu", "//");  // files in subdirectories count
  EXPECT_NE(f.load().hash, h1);

  // The same files in another directory give the same identity.
  TaskFixture g(gemm_definition(), kGemmWorkloads, "elsewhere");
  g.write("reference.cu", "// v1");
  EXPECT_EQ(g.load().hash, h1);
}

// An imported task records what it was made from (khive import kernelbench, issue 25): a reference or a problem file
// changed since is refused, naming the field; the task as imported loads.
TEST(LoadTask, AnImportedTaskRefusesAChangedReferenceOrProblemFile) {
  json def = gemm_definition();
  const std::string problem = "import torch\nclass Model: pass\n";
  def["khive"]["source"] = {{"kind", "kernelbench"},
                            {"file", "kernelbench.py"},
                            {"sha256", sha256_hex(problem)},
                            {"reference_sha256", sha256_hex(def["reference"].get<std::string>())}};
  TaskFixture f(def);
  f.write("kernelbench.py", problem);
  EXPECT_NO_THROW(f.load());
  f.write("kernelbench.py", problem + "import os; os.remove('x')\n");
  TaskFormatError e = load_error(f);
  EXPECT_EQ(e.field, "khive.source.sha256");
  EXPECT_TRUE(contains(e.got, "a changed file")) << e.what();
  fs::remove(f.dir / "kernelbench.py");
  EXPECT_EQ(load_error(f).field, "khive.source.file");
  f.write("kernelbench.py", problem);
  def["reference"] = "def run(A, B, alpha):\n    import os\n    return alpha * A @ B\n";
  f.write("definition.json", def.dump(2));
  e = load_error(f);
  EXPECT_EQ(e.field, "reference");
  EXPECT_TRUE(contains(e.got, "import the problem file again")) << e.what();
  // A file name that leaves the task's folder is not followed.
  def = gemm_definition();
  def["khive"]["source"] = {{"kind", "kernelbench"}, {"file", "../../etc/hostname"}, {"sha256", "00"}};
  f.write("definition.json", def.dump(2));
  EXPECT_EQ(load_error(f).field, "khive.source.file");
}

TEST(LoadTask, ConstraintsAndExprAxesMayUseEveryOperator) {
  json def = gemm_definition();
  def["constraints"] = json::array({"M % 8 == 0 and N >= 1", "not (M > 4096) || N == 0", "0 < MN <= 2 ** 30"});
  TaskFixture f(def, R"({"axes": {"M": 16, "N": 32}})");
  EXPECT_NO_THROW(f.load());
}

TEST(LoadTask, LiteralSizesInShapesAsSolExecBenchAllows) {
  json def = gemm_definition();
  def["inputs"]["B"]["shape"] = json::array({"64", "N"});
  TaskFixture f(def);
  Task t = f.load();
  EXPECT_EQ(element_count(t.inputs[1], {{"N", 3}}), 192);
}

TEST(LoadTask, AcceptsSolExecBenchCorrectnessAndTraceRecords) {
  std::string lines =
      R"({"definition": "gemm_fp32", "workload": {"uuid": "a1", "axes": {"M": 4, "N": 4}, "inputs": {"A": {"type": "random"}}}, "solution": null, "evaluation": null})"
      "\n"
      R"({"uuid": "a2", "axes": {"M": 4, "N": 4}, "correctness": {"max_atol": 0.02, "max_rtol": 0.03, "required_matched_ratio": 0.99, "max_error_cap": 4.0, "sampling_validation_trials": 100}})"
      "\n";
  TaskFixture f(gemm_definition(), lines);
  Task t = f.load();
  ASSERT_EQ(t.workloads.size(), 2u);
  EXPECT_EQ(t.workloads[0].uuid, "a1");
  Tolerance tol = t.tolerance_for("C", t.workloads[1]);
  EXPECT_EQ(tol.atol, 0.02);
  EXPECT_EQ(tol.rtol, 0.03);
  EXPECT_EQ(tol.matched_ratio, 0.99);
  EXPECT_EQ(tol.max_error_cap, 4.0);
}

TEST(LoadTask, InputDistributions) {
  json def = gemm_definition();
  def["inputs"]["idx"] = {{"shape", json::array({"M"})}, {"dtype", "int32"}};
  def["inputs"]["mask"] = {{"shape", json::array({"M"})}, {"dtype", "bool"}};
  def["inputs"]["flag"] = {{"shape", nullptr}, {"dtype", "int64"}};
  def["khive"]["inputs"]["B"] = {{"dist", "constant"}, {"value", 3}};
  def["khive"]["inputs"]["idx"] = {{"low", 0}, {"high", 100}};  // dist defaults to integers for ints
  def["khive"]["inputs"]["alpha"] = {{"mean", -1.0}};           // ... and to normal for floats
  TaskFixture f(def);
  Task t = f.load();
  Distribution a = t.distribution_for("A");
  EXPECT_EQ(a.kind, Distribution::Kind::uniform);
  EXPECT_EQ(a.low, -1.0);
  EXPECT_EQ(a.high, 2.0);
  EXPECT_EQ(t.distribution_for("B").kind, Distribution::Kind::constant);
  EXPECT_EQ(t.distribution_for("B").value, 3.0);
  Distribution idx = t.distribution_for("idx");
  EXPECT_EQ(idx.kind, Distribution::Kind::integers);
  EXPECT_EQ(idx.low, 0.0);
  EXPECT_EQ(idx.high, 100.0);
  Distribution alpha = t.distribution_for("alpha");
  EXPECT_EQ(alpha.kind, Distribution::Kind::normal);
  EXPECT_EQ(alpha.mean, -1.0);
  EXPECT_EQ(alpha.stddev, 1.0);
  // Inputs without a khive entry: normal(0.5, 1) for floats, integers -8..8 for ints, 0..1 for bool.
  def["khive"].erase("inputs");
  TaskFixture g(def);
  Task u = g.load();
  Distribution fa = u.distribution_for("A");
  EXPECT_EQ(fa.kind, Distribution::Kind::normal);
  EXPECT_EQ(fa.mean, 0.5);
  EXPECT_EQ(fa.stddev, 1.0);
  Distribution fi = u.distribution_for("flag");
  EXPECT_EQ(fi.kind, Distribution::Kind::integers);
  EXPECT_EQ(fi.low, -8.0);
  EXPECT_EQ(fi.high, 8.0);
  Distribution fm = u.distribution_for("mask");
  EXPECT_EQ(fm.kind, Distribution::Kind::integers);
  EXPECT_EQ(fm.low, 0.0);
  EXPECT_EQ(fm.high, 1.0);
}

// ------------------------------------------------------------------- malformed definition.json

struct BadCase {
  const char* name;
  std::function<void(json& def, std::string& workloads, TaskFixture* f)> mutate;
  std::string file;      // "definition.json" or "workload.jsonl"
  std::string field;     // exact field
  std::string expected;  // a part of the expectation
  std::string got = "";  // a part of "got" (optional)
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class MalformedTask : public ::testing::TestWithParam<BadCase> {};

TEST_P(MalformedTask, NamesFileFieldAndExpectation) {
  const BadCase& c = GetParam();
  json def = gemm_definition();
  std::string workloads = kGemmWorkloads;
  c.mutate(def, workloads, nullptr);
  TaskFixture f(def, workloads);
  c.mutate(def, workloads, &f);  // a second call may write files into the task directory
  TaskFormatError e = load_error(f);
  EXPECT_EQ(e.file, "gemm/" + c.file);
  EXPECT_EQ(e.field, c.field);
  EXPECT_TRUE(contains(e.expected, c.expected)) << "expected: " << e.expected;
  EXPECT_TRUE(contains(e.got, c.got)) << "got: " << e.got;
  std::string what = e.what();
  EXPECT_EQ(what.rfind("gemm/" + c.file + ": " + c.field + ": expected " + e.expected, 0), 0u) << what;
  if (!e.got.empty()) {
    EXPECT_TRUE(contains(what, ", got " + e.got)) << what;
  }
}

using J = json;
#define DEF(body)                                  \
  [](json& def, std::string& wl, TaskFixture* f) { \
    (void)wl;                                      \
    (void)f;                                       \
    body;                                          \
  }

const BadCase kDefinitionCases[] = {
    {"syntax", [](json&, std::string&, TaskFixture* f) { if (f) f->write("definition.json", "{\"name\": }"); },
     "definition.json", "(syntax)", "valid JSON", "(byte "},
    {"root_not_object", DEF(def = J::array({1})), "definition.json", "(root)", "a JSON object", "an array"},
    {"name_missing", DEF(def.erase("name")), "definition.json", "name", "a non-empty string", "none"},
    {"name_number", DEF(def["name"] = 3), "definition.json", "name", "a non-empty string", "3"},
    {"name_empty", DEF(def["name"] = ""), "definition.json", "name", "a non-empty string", "\"\""},
    {"description_type", DEF(def["description"] = J::array()), "definition.json", "description", "a string"},
    {"tags_not_strings", DEF(def["tags"] = J::array({"a", 2})), "definition.json", "tags[1]", "a string", "2"},
    {"axes_not_object", DEF(def["axes"] = "M"), "definition.json", "axes", "an object", "\"M\""},
    {"axis_bad_type", DEF(def["axes"]["M"]["type"] = "variable"), "definition.json", "axes.M.type",
     "one of const, var, expr", "\"variable\""},
    {"axis_missing_type", DEF(def["axes"]["M"].erase("type")), "definition.json", "axes.M.type", "one of const"},
    {"axis_bad_name", DEF(def["axes"]["not"] = J::parse(R"({"type":"var"})")), "definition.json", "axes.not",
     "an identifier that is not a keyword"},
    {"const_value_string", DEF(def["axes"]["K"]["value"] = "64"), "definition.json", "axes.K.value", "an integer",
     "\"64\""},
    {"const_value_fraction", DEF(def["axes"]["K"]["value"] = 6.5), "definition.json", "axes.K.value", "an integer",
     "6.5"},
    {"const_value_negative", DEF(def["axes"]["K"]["value"] = -1), "definition.json", "axes.K.value",
     "an integer >= 0", "-1"},
    {"expr_unknown_axis", DEF(def["axes"]["MN"]["expression"] = "M * Q"), "definition.json", "axes.MN.expression",
     "over declared axes", "unknown axis 'Q' at 4"},
    {"expr_syntax", DEF(def["axes"]["MN"]["expression"] = "M *"), "definition.json", "axes.MN.expression",
     "a valid expression", "unexpected end of expression at 3"},
    {"expr_missing", DEF(def["axes"]["MN"].erase("expression")), "definition.json", "axes.MN.expression",
     "an expression"},
    {"expr_cycle", DEF(def["axes"]["X"] = J::parse(R"({"type":"expr","expression":"Y + 1"})");
                       def["axes"]["Y"] = J::parse(R"({"type":"expr","expression":"2 * X"})")),
     "definition.json", "axes.X.expression", "without a cycle", "X -> Y -> X"},
    {"expr_self_cycle", DEF(def["axes"]["MN"]["expression"] = "MN + 1"), "definition.json", "axes.MN.expression",
     "without a cycle", "MN -> MN"},
    {"inputs_missing", DEF(def.erase("inputs")), "definition.json", "inputs", "an object of tensors", "none"},
    {"outputs_empty", DEF(def["outputs"] = J::object(); def["khive"].erase("tolerance")), "definition.json", "outputs",
     "at least one output"},
    {"dtype_unknown", DEF(def["inputs"]["A"]["dtype"] = "float33"), "definition.json", "inputs.A.dtype",
     "one of float64, float32", "\"float33\""},
    {"dtype_number", DEF(def["inputs"]["A"]["dtype"] = 32), "definition.json", "inputs.A.dtype", "a non-empty string",
     "32"},
    {"dtype_missing", DEF(def["outputs"]["C"].erase("dtype")), "definition.json", "outputs.C.dtype", "one of float64",
     "none"},
    {"shape_unknown_axis", DEF(def["inputs"]["A"]["shape"] = J::array({"M", "Q"})), "definition.json",
     "inputs.A.shape[1]", "a declared axis name (M, N, K, MN)", "\"Q\""},
    {"shape_expression", DEF(def["inputs"]["A"]["shape"] = J::array({"M * 2"})), "definition.json",
     "inputs.A.shape[0]", "a declared axis name", "\"M * 2\""},
    {"shape_not_array", DEF(def["inputs"]["A"]["shape"] = "M"), "definition.json", "inputs.A.shape",
     "an array of axis names, or null", "\"M\""},
    {"shape_entry_number", DEF(def["inputs"]["A"]["shape"] = J::array({"M", 4})), "definition.json",
     "inputs.A.shape[1]", "an axis name (string)", "4"},
    {"shape_missing", DEF(def["inputs"]["A"].erase("shape")), "definition.json", "inputs.A.shape",
     "an array of axis names", "none"},
    {"tensor_not_object", DEF(def["inputs"]["A"] = "float32"), "definition.json", "inputs.A", "an object"},
    {"tensor_name_reserved", DEF(def["inputs"]["stream"] = J::parse(R"({"shape":null,"dtype":"int32"})")),
     "definition.json", "inputs.stream", "a C identifier that is not a C++ keyword"},
    {"tensor_name_not_identifier", DEF(def["outputs"]["C-out"] = J::parse(R"({"shape":null,"dtype":"int32"})")),
     "definition.json", "outputs.C-out", "a C identifier"},
    {"tensor_name_is_axis", DEF(def["inputs"]["K"] = J::parse(R"({"shape":null,"dtype":"int32"})")),
     "definition.json", "inputs.K", "not also an axis name"},
    {"output_same_as_input", DEF(def["outputs"]["A"] = J::parse(R"({"shape":null,"dtype":"int32"})")),
     "definition.json", "outputs.A", "not also an input"},
    {"constraints_not_array", DEF(def["constraints"] = "M > 0"), "definition.json", "constraints",
     "an array of strings"},
    {"constraint_syntax", DEF(def["constraints"][0] = "M >"), "definition.json", "constraints[0]",
     "a valid condition", "unexpected end of expression at 3"},
    {"constraint_unknown_axis", DEF(def["constraints"][1] = "Nn <= 4096"), "definition.json", "constraints[1]",
     "over declared axes", "unknown axis 'Nn' at 0"},
    {"reference_not_string", DEF(def["reference"] = 1), "definition.json", "reference", "a string"},
    {"khive_not_object", DEF(def["khive"] = J::array()), "definition.json", "khive", "an object"},
    {"khive_unknown_key", DEF(def["khive"]["costs"] = J::object()), "definition.json", "khive.costs",
     "a known key of khive (cost, tolerance", "\"costs\""},
    {"cost_unit", DEF(def["khive"]["cost"]["unit"] = "fp12"), "definition.json", "khive.cost.unit",
     "one of bf16, fp16, tf32, fp8, int8, fp32, fp64", "\"fp12\""},
    {"cost_unknown_axis", DEF(def["khive"]["cost"]["flops"] = "2*M*N*Q"), "definition.json", "khive.cost.flops",
     "a formula over declared axes", "unknown axis 'Q' at 6"},
    {"cost_syntax", DEF(def["khive"]["cost"]["bytes"] = "4 * (M"), "definition.json", "khive.cost.bytes",
     "a valid formula", "missing ')'"},
    {"cost_object", DEF(def["khive"]["cost"]["bytes"] = J::object()), "definition.json", "khive.cost.bytes",
     "a formula (string) or a number", "an empty object"},
    {"cost_unknown_key", DEF(def["khive"]["cost"]["flop"] = "1"), "definition.json", "khive.cost.flop",
     "a known key of khive.cost (flops, bytes, unit)"},
    {"tolerance_unknown_output", DEF(def["khive"]["tolerance"]["D"] = J::object()), "definition.json",
     "khive.tolerance.D", "the name of an output (C)", "\"D\""},
    {"tolerance_negative_atol", DEF(def["khive"]["tolerance"]["C"]["atol"] = -1), "definition.json",
     "khive.tolerance.C.atol", "a finite number >= 0", "-1"},
    {"tolerance_rtol_string", DEF(def["khive"]["tolerance"]["C"]["rtol"] = "1e-3"), "definition.json",
     "khive.tolerance.C.rtol", "a number", "\"1e-3\""},
    {"tolerance_ratio_zero", DEF(def["khive"]["tolerance"]["C"]["matched_ratio"] = 0), "definition.json",
     "khive.tolerance.C.matched_ratio", "a number in (0, 1]", "0"},
    {"tolerance_ratio_above_one", DEF(def["khive"]["tolerance"]["C"]["matched_ratio"] = 1.5), "definition.json",
     "khive.tolerance.C.matched_ratio", "a number in (0, 1]", "1.5"},
    {"tolerance_cap_zero", DEF(def["khive"]["tolerance"]["C"]["max_error_cap"] = 0), "definition.json",
     "khive.tolerance.C.max_error_cap", "a finite number > 0", "0"},
    {"tolerance_typo", DEF(def["khive"]["tolerance"]["C"]["rtl"] = 0.1), "definition.json", "khive.tolerance.C.rtl",
     "a known key of khive.tolerance.C (atol, rtol, matched_ratio, max_error_cap, allow_negative_inf)"},
    {"dist_unknown_input", DEF(def["khive"]["inputs"]["X"] = J::object()), "definition.json", "khive.inputs.X",
     "the name of an input (A, B, alpha)", "\"X\""},
    {"dist_unknown_kind", DEF(def["khive"]["inputs"]["A"]["dist"] = "gaussian"), "definition.json",
     "khive.inputs.A.dist", "one of normal, uniform, constant, integers", "\"gaussian\""},
    {"dist_wrong_key", DEF(def["khive"]["inputs"]["A"]["std"] = 2), "definition.json", "khive.inputs.A.std",
     "a known key of khive.inputs.A (dist, low, high)"},
    {"dist_low_above_high", DEF(def["khive"]["inputs"]["A"]["low"] = 3), "definition.json", "khive.inputs.A.high",
     "a number >= low (3)", "2"},
    {"dist_negative_std", DEF(def["khive"]["inputs"]["B"] = J::parse(R"({"dist":"normal","std":-1})")),
     "definition.json", "khive.inputs.B.std", "a number >= 0", "-1"},
    {"dist_constant_without_value", DEF(def["khive"]["inputs"]["B"] = J::parse(R"({"dist":"constant"})")),
     "definition.json", "khive.inputs.B.value", "a number (the constant)", "none"},
    {"dist_normal_for_int", DEF(def["inputs"]["B"]["dtype"] = "int32";
                                def["khive"]["inputs"]["B"] = J::parse(R"({"dist":"normal"})")),
     "definition.json", "khive.inputs.B.dist", "integers or constant for an input of dtype int32", "\"normal\""},
    {"dist_integers_fraction", DEF(def["khive"]["inputs"]["B"] = J::parse(R"({"dist":"integers","low":0.5})")),
     "definition.json", "khive.inputs.B.low", "an integer", "0.5"},
    {"dist_bool_range", DEF(def["inputs"]["B"]["dtype"] = "bool";
                            def["khive"]["inputs"]["B"] = J::parse(R"({"dist":"integers","high":2})")),
     "definition.json", "khive.inputs.B.high", "a bound within 0..1 for a bool input", "2"},
    {"policy_unknown_library", DEF(def["khive"]["policy"]["libraries"] = J::array({"cublasLt", "cudnn"})),
     "definition.json", "khive.policy.libraries[1]", "one of cublas, cublasLt", "\"cudnn\""},
    {"policy_not_array", DEF(def["khive"]["policy"]["libraries"] = "cublas"), "definition.json",
     "khive.policy.libraries", "an array of strings", "\"cublas\""},
    {"reference_missing_file", DEF(def["khive"]["reference"] = J::parse(R"({"cuda":"missing.cu"})")),
     "definition.json", "khive.reference.cuda", "an existing file", "\"missing.cu\" (not found)"},
    {"reference_outside", DEF(def["khive"]["reference"] = J::parse(R"({"cpu":"../other/reference.cpp"})")),
     "definition.json", "khive.reference.cpu", "a path inside the task directory"},
    {"reference_absolute", DEF(def["khive"]["reference"] = J::parse(R"({"cpu":"/etc/passwd"})")),
     "definition.json", "khive.reference.cpu", "a path relative to the task directory"},
    {"reference_unknown_backend", DEF(def["khive"]["reference"] = J::parse(R"({"rocm":"x.cpp"})")),
     "definition.json", "khive.reference.rocm", "a known key of khive.reference (cuda, cpu)"},
    {"baseline_missing_file", DEF(def["khive"]["baselines"] = J::array({"baselines/none.cu"})), "definition.json",
     "khive.baselines[0]", "an existing file"},
    {"baselines_not_array", DEF(def["khive"]["baselines"] = "b.cu"), "definition.json", "khive.baselines",
     "an array", "\"b.cu\""},
    {"definition_missing", [](json&, std::string&, TaskFixture* f) { if (f) fs::remove(f->dir / "definition.json"); },
     "definition.json", "(file)", "a definition.json file", "none found"},
};

INSTANTIATE_TEST_SUITE_P(Definition, MalformedTask, ::testing::ValuesIn(kDefinitionCases),
                         [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------- malformed workload.jsonl

#define WL(text) [](json&, std::string& wl, TaskFixture*) { wl = text; }
#define WLDEF(body, text)                        \
  [](json& def, std::string& wl, TaskFixture*) { \
    body;                                        \
    wl = text;                                   \
  }

const BadCase kWorkloadCases[] = {
    {"syntax",
     WL(R"({"axes": {"M": 1, "N": 1}})"
        "\n"
        R"({"axes": {"M": 1,)"
        "\n"),
     "workload.jsonl", "line 2: (syntax)", "valid JSON", "(byte "},
    {"not_object", WL("[1, 2]\n"), "workload.jsonl", "line 1: (root)", "a JSON object", "an array"},
    {"missing_var", WL(R"({"axes": {"M": 16}})"), "workload.jsonl", "line 1: axes.N", "a value for var axis N", "none"},
    {"const_axis_given", WL(R"({"axes": {"M": 16, "N": 16, "K": 64}})"), "workload.jsonl", "line 1: axes.K",
     "only var axes (M, N)", "\"K\" (a const axis)"},
    {"expr_axis_given", WL(R"({"axes": {"M": 16, "N": 16, "MN": 256}})"), "workload.jsonl", "line 1: axes.MN",
     "only var axes (M, N)", "\"MN\" (an expr axis)"},
    {"unknown_axis", WL(R"({"axes": {"M": 16, "N": 16, "Z": 1}})"), "workload.jsonl", "line 1: axes.Z",
     "only var axes (M, N)", "\"Z\" (not an axis)"},
    {"axis_string", WL(R"({"axes": {"M": "16", "N": 16}})"), "workload.jsonl", "line 1: axes.M", "an integer",
     "\"16\""},
    {"axis_negative", WL(R"({"axes": {"M": -16, "N": 16}})"), "workload.jsonl", "line 1: axes.M", "an integer >= 0",
     "-16"},
    {"axes_not_object", WL(R"({"axes": [16, 16]})"), "workload.jsonl", "line 1: axes", "an object", "an array"},
    {"uuid_number", WL(R"({"uuid": 7, "axes": {"M": 1, "N": 1}})"), "workload.jsonl", "line 1: uuid",
     "a non-empty string", "7"},
    {"uuid_duplicate",
     WL(R"({"uuid": "x", "axes": {"M": 1, "N": 1}})"
        "\n"
        R"({"uuid": "x", "axes": {"M": 2, "N": 2}})"),
     "workload.jsonl", "line 2: uuid", "a unique uuid", "\"x\" (also on line 1)"},
    {"uuid_duplicate_default",
     WL(R"({"uuid": "w2", "axes": {"M": 1, "N": 1}})"
        "\n"
        R"({"axes": {"M": 2, "N": 2}})"),
     "workload.jsonl", "line 2: uuid", "a unique uuid", "\"w2\" (also on line 1)"},
    {"unknown_input", WL(R"({"axes": {"M": 1, "N": 1}, "inputs": {"Q": {"type": "random"}}})"), "workload.jsonl",
     "line 1: inputs.Q", "the name of an input (A, B, alpha)", "\"Q\""},
    {"safetensors",
     WL(R"({"axes": {"M": 1, "N": 1}, "inputs": {"A": {"type": "safetensors", "path": "a.st", "tensor_key": "A"}}})"),
     "workload.jsonl", "line 1: inputs.A.path", "an existing .safetensors file", "\"a.st\" (not found)"},
    {"custom", WL(R"({"axes": {"M": 1, "N": 1}, "inputs": {"A": {"type": "custom"}}})"), "workload.jsonl",
     "line 1: inputs.A.type",
     "random, scalar or safetensors (\"custom\" needs the definition's custom_inputs_entrypoint)", "\"custom\""},
    {"input_type_unknown", WL(R"({"axes": {"M": 1, "N": 1}, "inputs": {"A": {"type": "zeros"}}})"), "workload.jsonl",
     "line 1: inputs.A.type", "one of random, scalar, safetensors, custom", "\"zeros\""},
    {"input_type_missing", WL(R"({"axes": {"M": 1, "N": 1}, "inputs": {"A": {}}})"), "workload.jsonl",
     "line 1: inputs.A.type", "one of random, scalar", "none"},
    {"scalar_for_tensor", WL(R"({"axes": {"M": 1, "N": 1}, "inputs": {"A": {"type": "scalar", "value": 1}}})"),
     "workload.jsonl", "line 1: inputs.A.type", "random for a tensor input"},
    {"scalar_without_value", WL(R"({"axes": {"M": 1, "N": 1}, "inputs": {"alpha": {"type": "scalar"}}})"),
     "workload.jsonl", "line 1: inputs.alpha.value", "a number", "none"},
    {"scalar_string_value", WL(R"({"axes": {"M": 1, "N": 1}, "inputs": {"alpha": {"type": "scalar", "value": "1"}}})"),
     "workload.jsonl", "line 1: inputs.alpha.value", "a number", "\"1\""},
    {"scalar_fraction_for_int",
     WLDEF(def["inputs"]["alpha"]["dtype"] = "int32",
           R"({"axes": {"M": 1, "N": 1}, "inputs": {"alpha": {"type": "scalar", "value": 1.5}}})"),
     "workload.jsonl", "line 1: inputs.alpha.value", "an integer for an input of dtype int32", "1.5"},
    {"role_unknown", WL(R"({"axes": {"M": 1, "N": 1}, "khive": {"role": "timing"}})"), "workload.jsonl",
     "line 1: khive.role", "one of correctness, perf, both", "\"timing\""},
    {"weight_zero", WL(R"({"axes": {"M": 1, "N": 1}, "khive": {"weight": 0}})"), "workload.jsonl",
     "line 1: khive.weight", "a finite number > 0", "0"},
    {"weight_string", WL(R"({"axes": {"M": 1, "N": 1}, "khive": {"weight": "2"}})"), "workload.jsonl",
     "line 1: khive.weight", "a number", "\"2\""},
    {"khive_unknown_key", WL(R"({"axes": {"M": 1, "N": 1}, "khive": {"rol": "perf"}})"), "workload.jsonl",
     "line 1: khive.rol", "a known key of khive (role, weight, tolerance, backends, inputs)", "\"rol\""},
    {"tolerance_unknown_output", WL(R"({"axes": {"M": 1, "N": 1}, "khive": {"tolerance": {"D": {"atol": 1}}}})"),
     "workload.jsonl", "line 1: khive.tolerance.D", "the name of an output (C)", "\"D\""},
    {"tolerance_bad_output_value", WL(R"({"axes": {"M": 1, "N": 1}, "khive": {"tolerance": {"C": {"rtol": -0.5}}}})"),
     "workload.jsonl", "line 1: khive.tolerance.C.rtol", "a finite number >= 0", "-0.5"},
    {"top_tolerance_ratio", WL(R"({"axes": {"M": 1, "N": 1}, "tolerance": {"matched_ratio": 1.5}})"), "workload.jsonl",
     "line 1: tolerance.matched_ratio", "a number in (0, 1]", "1.5"},
    {"top_tolerance_typo", WL(R"({"axes": {"M": 1, "N": 1}, "tolerance": {"atl": 1}})"), "workload.jsonl",
     "line 1: tolerance.atl", "a known key of tolerance"},
    {"sol_correctness_cap", WL(R"({"axes": {"M": 1, "N": 1}, "correctness": {"max_error_cap": -1}})"), "workload.jsonl",
     "line 1: correctness.max_error_cap", "a finite number > 0", "-1"},
    {"constraint_fails", WL(R"({"axes": {"M": 16, "N": 5000}})"), "workload.jsonl", "line 1: constraints[1]",
     "\"N <= 4096\" to hold", "false with N=5000"},
    {"constraint_fails_later_line",
     WL(R"({"axes": {"M": 1, "N": 1}})"
        "\n"
        R"({"axes": {"M": 16, "N": 5000}})"),
     "workload.jsonl", "line 2: constraints[1]", "\"N <= 4096\" to hold"},
    {"negative_dimension",
     WLDEF(def["axes"]["D"] = J::parse(R"({"type":"expr","expression":"M - 100"})");
           def["outputs"]["C"]["shape"] = J::array({"M", "D"}), R"({"axes": {"M": 16, "N": 1}})"),
     "workload.jsonl", "line 1: outputs.C.shape", "non-negative dimensions", "D = -84"},
    {"expr_not_integer", WLDEF(def["axes"]["MN"]["expression"] = "M / 3", R"({"axes": {"M": 16, "N": 1}})"),
     "workload.jsonl", "line 1: axes.MN", "an integer from \"M / 3\"", "expected an integer result"},
    {"expr_division_by_zero", WLDEF(def["axes"]["MN"]["expression"] = "M // (N - 1)", R"({"axes": {"M": 16, "N": 1}})"),
     "workload.jsonl", "line 1: axes.MN", "an integer from", "division by zero at 2"},
    {"trace_wrong_definition", WL(R"({"definition": "other", "workload": {"axes": {"M": 1, "N": 1}}})"),
     "workload.jsonl", "line 1: definition", "\"gemm_fp32\" (the definition's name)", "\"other\""},
    {"backends_not_array", WL(R"({"axes": {"M": 1, "N": 1}, "khive": {"backends": "cpu"}})"), "workload.jsonl",
     "line 1: khive.backends", "an array of backend names (cpu, cuda)", "\"cpu\""},
    {"backends_empty", WL(R"({"axes": {"M": 1, "N": 1}, "khive": {"backends": []}})"), "workload.jsonl",
     "line 1: khive.backends", "at least one backend", "an empty array"},
    {"backends_unknown", WL(R"({"axes": {"M": 1, "N": 1}, "khive": {"backends": ["cuda", "rocm"]}})"), "workload.jsonl",
     "line 1: khive.backends[1]", "one of cpu, cuda", "\"rocm\""},
    {"backends_not_string", WL(R"({"axes": {"M": 1, "N": 1}, "khive": {"backends": [1]}})"), "workload.jsonl",
     "line 1: khive.backends[0]", "a non-empty string", "1"},
    {"backends_twice", WL(R"({"axes": {"M": 1, "N": 1}, "khive": {"backends": ["cpu", "cpu"]}})"), "workload.jsonl",
     "line 1: khive.backends[1]", "each backend once", "\"cpu\" (listed twice)"},
    {"backends_later_line",
     WL(R"({"axes": {"M": 1, "N": 1}})"
        "\n"
        R"({"axes": {"M": 2, "N": 2}, "khive": {"backends": ["CPU"]}})"),
     "workload.jsonl", "line 2: khive.backends[0]", "one of cpu, cuda", "\"CPU\""},
    // A backend with a reference needs a correctness and a perf workload that run on it.
    {"cpu_reference_without_cpu_perf",
     [](json&, std::string& wl, TaskFixture* f) {
       wl = R"({"axes": {"M": 1, "N": 1}, "khive": {"role": "correctness"}})"
            "\n"
            R"({"axes": {"M": 4096, "N": 4096}, "khive": {"role": "perf", "backends": ["cuda"]}})";
       if (f) f->write("reference.cpp", "//");
     },
     "workload.jsonl", "khive.backends", "at least one perf workload (role perf or both) that runs on cpu", "none"},
    {"cuda_reference_without_cuda_check",
     [](json&, std::string& wl, TaskFixture* f) {
       wl = R"({"axes": {"M": 1, "N": 1}, "khive": {"role": "correctness", "backends": ["cpu"]}})"
            "\n"
            R"({"axes": {"M": 64, "N": 64}, "khive": {"role": "perf"}})";
       if (f) f->write("reference.cu", "//");
     },
     "workload.jsonl", "khive.backends",
     "at least one correctness workload (role correctness or both) that runs on cuda", "none"},
    {"empty_file", WL("\n  \n"), "workload.jsonl", "(workloads)", "at least one workload", "none"},
    {"only_perf", WL(R"({"axes": {"M": 1, "N": 1}, "khive": {"role": "perf"}})"), "workload.jsonl", "khive.role",
     "at least one workload with role correctness or both", "only perf workloads"},
    {"workload_missing",
     [](json&, std::string&, TaskFixture* f) {
       if (f) fs::remove(f->dir / "workload.jsonl");
     },
     "workload.jsonl", "(file)", "a workload.jsonl file", "none found"},
};

INSTANTIATE_TEST_SUITE_P(Workload, MalformedTask, ::testing::ValuesIn(kWorkloadCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(TaskFormatError, WhatReadsFileFieldExpectedGot) {
  TaskFormatError e("gemm/definition.json", "inputs.A.dtype", "one of float32", "\"f32\"");
  EXPECT_STREQ(e.what(), "gemm/definition.json: inputs.A.dtype: expected one of float32, got \"f32\"");
  TaskFormatError n("gemm/workload.jsonl", "line 3: axes.M", "an integer");
  EXPECT_STREQ(n.what(), "gemm/workload.jsonl: line 3: axes.M: expected an integer");
  EXPECT_EQ(n.file, "gemm/workload.jsonl");
  EXPECT_EQ(n.field, "line 3: axes.M");
  EXPECT_EQ(n.expected, "an integer");
}

TEST(LoadTask, TrailingSlashAndDotPathsNameTheTaskDirectory) {
  TaskFixture f(gemm_definition(), R"({"axes": {"M": 1}})");
  for (const fs::path& p : {fs::path(f.dir.string() + "/"), f.dir / ".", f.dir / "sub" / ".."}) {
    fs::create_directories(f.dir / "sub");
    try {
      load_task(p);
      ADD_FAILURE() << "no error for " << p;
    } catch (const TaskFormatError& e) {
      EXPECT_EQ(e.file, "gemm/workload.jsonl") << p;
    }
  }
}

// ------------------------------------------------------------------------------------ resolve_axes

json chain_definition() {
  // C is declared before the B it depends on: evaluation follows dependencies, not declaration order.
  return json::parse(R"({
    "name": "chain",
    "axes": {
      "C": {"type": "expr", "expression": "B + A"},
      "A": {"type": "var"},
      "B": {"type": "expr", "expression": "A * H"},
      "H": {"type": "const", "value": 4},
      "D": {"type": "expr", "expression": "C // 3 - 1"}
    },
    "inputs": {"x": {"shape": ["A", "B"], "dtype": "float16"}},
    "outputs": {"y": {"shape": ["C"], "dtype": "float16"}},
    "constraints": ["B == A * H", "D >= 0"]
  })");
}

TEST(ResolveAxes, EvaluatesExprChainsInDependencyOrder) {
  TaskFixture f(chain_definition(), R"({"axes": {"A": 6}})");
  Task t = f.load();
  auto v = resolve_axes(t, t.workloads[0]);
  EXPECT_EQ(v, (std::map<std::string, int64_t>{{"A", 6}, {"B", 24}, {"C", 30}, {"D", 9}, {"H", 4}}));
  EXPECT_EQ(element_count(t.inputs[0], v), 6 * 24);
  EXPECT_EQ(element_count(t.outputs[0], v), 30);
}

TEST(ResolveAxes, FailingConstraintNamesTheLineAndValues) {
  TaskFixture f(chain_definition(), R"({"axes": {"A": 6}})");
  Task t = f.load();
  Workload w;
  w.line = 7;
  w.axes = {{"A", 0}};  // D = 0 // 3 - 1 = -1
  try {
    resolve_axes(t, w);
    FAIL() << "no error";
  } catch (const TaskFormatError& e) {
    EXPECT_EQ(e.file, "gemm/workload.jsonl");
    EXPECT_EQ(e.field, "line 7: constraints[1]");
    EXPECT_EQ(e.expected, "\"D >= 0\" to hold");
    EXPECT_EQ(e.got, "false with D=-1");
  }
}

TEST(ResolveAxes, MissingAndExtraAxesInAHandBuiltWorkload) {
  TaskFixture f(chain_definition(), R"({"axes": {"A": 6}})");
  Task t = f.load();
  Workload w;
  w.line = 3;
  try {
    resolve_axes(t, w);
    FAIL() << "no error";
  } catch (const TaskFormatError& e) {
    EXPECT_EQ(e.field, "line 3: axes.A");
    EXPECT_EQ(e.expected, "a value for var axis A");
  }
  w.axes = {{"A", 1}, {"H", 2}};
  try {
    resolve_axes(t, w);
    FAIL() << "no error";
  } catch (const TaskFormatError& e) {
    EXPECT_EQ(e.field, "line 3: axes.H");
  }
}

TEST(ResolveAxes, LoadRejectsAWorkloadWhoseConstraintFails) {
  TaskFixture f(chain_definition(), R"({"axes": {"A": 6}})"
                                    "\n"
                                    R"({"axes": {"A": 0}})");
  TaskFormatError e = load_error(f);
  EXPECT_EQ(e.field, "line 2: constraints[1]");
}

// --------------------------------------------------------------------------------------- tolerance

TEST(Tolerance, PerDTypeDefaults) {
  auto check = [](DType t, double atol, double rtol) {
    Tolerance tol = default_tolerance(t);
    EXPECT_EQ(tol.atol, atol) << dtype_name(t);
    EXPECT_EQ(tol.rtol, rtol) << dtype_name(t);
    EXPECT_EQ(tol.matched_ratio, 1.0) << dtype_name(t);
    EXPECT_FALSE(tol.max_error_cap.has_value()) << dtype_name(t);
  };
  check(DType::f64, 1e-9, 1e-9);
  check(DType::f32, 1e-4, 1e-4);
  check(DType::f16, 1e-3, 1e-3);
  check(DType::bf16, 1e-2, 1e-2);
  check(DType::f8e4m3, 1e-1, 1.25e-1);
  check(DType::f8e5m2, 1e-1, 1.25e-1);
  check(DType::f4e2m1, 0.5, 0.25);
  check(DType::f4e2m1x2, 0.5, 0.25);
  for (DType t : {DType::i64, DType::i32, DType::i16, DType::i8, DType::boolean}) check(t, 0, 0);
}

TEST(Tolerance, WorkloadOverTaskOverDTypeDefault) {
  json def = gemm_definition();
  def["outputs"]["D"] = {{"shape", json::array({"M"})}, {"dtype", "bfloat16"}};
  def["khive"]["tolerance"]["C"] = {{"atol", 1e-3}, {"max_error_cap", 10}};
  std::string lines =
      R"({"uuid": "plain", "axes": {"M": 1, "N": 1}})"
      "\n"
      R"({"uuid": "top", "axes": {"M": 1, "N": 1}, "tolerance": {"rtol": 0.05, "max_error_cap": null}})"
      "\n"
      R"({"uuid": "both", "axes": {"M": 1, "N": 1}, "tolerance": {"atol": 0.2}, "khive": {"tolerance": {"D": {"atol": 0.3, "matched_ratio": 0.9}}}})"
      "\n"
      R"({"uuid": "own", "axes": {"M": 1, "N": 1}, "khive": {"tolerance": {"D": {"rtol": 0.5}}}})"
      "\n";
  TaskFixture f(def, lines);
  Task t = f.load();
  const Workload& plain = t.workloads[0];
  const Workload& top = t.workloads[1];
  const Workload& both = t.workloads[2];
  const Workload& own = t.workloads[3];

  // Task-level: the given fields over the dtype default.
  Tolerance c = t.tolerance_for("C", plain);
  EXPECT_EQ(c.atol, 1e-3);
  EXPECT_EQ(c.rtol, 1e-4);
  EXPECT_EQ(c.max_error_cap, 10.0);
  Tolerance d = t.tolerance_for("D", plain);  // no task entry: bf16 default
  EXPECT_EQ(d.atol, 1e-2);
  EXPECT_EQ(d.rtol, 1e-2);

  // The workload's top-level tolerance applies to every output, over the task's.
  EXPECT_EQ(t.tolerance_for("C", top).atol, 1e-3);
  EXPECT_EQ(t.tolerance_for("C", top).rtol, 0.05);
  EXPECT_FALSE(t.tolerance_for("C", top).max_error_cap.has_value());
  EXPECT_EQ(t.tolerance_for("D", top).atol, 1e-2);
  EXPECT_EQ(t.tolerance_for("D", top).rtol, 0.05);

  // The khive per-output override wins over the top-level one.
  EXPECT_EQ(t.tolerance_for("C", both).atol, 0.2);
  EXPECT_EQ(t.tolerance_for("C", both).rtol, 1e-4);
  EXPECT_EQ(t.tolerance_for("D", both).atol, 0.3);
  EXPECT_EQ(t.tolerance_for("D", both).matched_ratio, 0.9);

  // A per-output override alone leaves the other outputs at the task's tolerance.
  EXPECT_EQ(own.tolerance.count("C"), 0u);
  EXPECT_EQ(t.tolerance_for("C", own).atol, 1e-3);
  EXPECT_EQ(t.tolerance_for("D", own).rtol, 0.5);
  EXPECT_EQ(t.tolerance_for("D", own).atol, 1e-2);

  EXPECT_THROW(t.tolerance_for("Z", plain), std::out_of_range);
}

TEST(Tolerance, HandBuiltWorkloadOverride) {
  TaskFixture f;
  Task t = f.load();
  Workload w;
  Tolerance mine;
  mine.atol = 7;
  w.tolerance["C"] = mine;
  EXPECT_EQ(t.tolerance_for("C", w).atol, 7);
}

// ---------------------------------------------------------------------------- launch_signature

TEST(LaunchSignature, CudaGemmWithAScalarInput) {
  TaskFixture f;
  Task t = f.load();
  EXPECT_EQ(launch_signature(t, Backend::cuda),
            "extern \"C\" void khive_launch(const float* A, const float* B, float alpha, float* C, int64_t M, "
            "int64_t N, cudaStream_t stream)");
  EXPECT_EQ(launch_signature(t, Backend::cpu),
            "extern \"C\" void khive_launch(const float* A, const float* B, float alpha, float* C, int64_t M, "
            "int64_t N)");
}

TEST(LaunchSignature, LowPrecisionIntegerAndBoolTypes) {
  json def = json::parse(R"({
    "name": "rmsnorm",
    "axes": {"T": {"type": "var"}, "D": {"type": "const", "value": 4096}},
    "inputs": {"x": {"shape": ["T", "D"], "dtype": "bfloat16"}, "idx": {"shape": ["T"], "dtype": "int32"},
               "eps": {"shape": null, "dtype": "float32"}, "q": {"shape": [], "dtype": "float8_e4m3fn"}},
    "outputs": {"y": {"shape": ["T", "D"], "dtype": "bfloat16"}, "mask": {"shape": ["T"], "dtype": "bool"},
                "total": {"shape": null, "dtype": "float64"}}
  })");
  TaskFixture f(def, R"({"axes": {"T": 2}})");
  Task t = f.load();
  EXPECT_EQ(launch_signature(t, Backend::cpu),
            "extern \"C\" void khive_launch(const khive_bf16* x, const int32_t* idx, float eps, "
            "const khive_fp8_e4m3* q, khive_bf16* y, bool* mask, double* total, int64_t T)");
  EXPECT_EQ(launch_signature(t, Backend::cuda),
            "extern \"C\" void khive_launch(const __nv_bfloat16* x, const int32_t* idx, float eps, "
            "const __nv_fp8_e4m3* q, __nv_bfloat16* y, bool* mask, double* total, int64_t T, cudaStream_t stream)");
  // 0-D tensors and scalars count one element.
  EXPECT_EQ(element_count(t.inputs[2], {}), 1);
  EXPECT_EQ(element_count(t.inputs[3], {}), 1);
}

TEST(LaunchSignature, NoVarAxes) {
  json def = json::parse(R"({"name": "fixed", "axes": {"N": {"type": "const", "value": 8}},
      "inputs": {"x": {"shape": ["N"], "dtype": "float16"}}, "outputs": {"y": {"shape": ["N"], "dtype": "float16"}}})");
  TaskFixture f(def, "{}\n");
  Task t = f.load();
  EXPECT_EQ(launch_signature(t, Backend::cpu), "extern \"C\" void khive_launch(const khive_f16* x, khive_f16* y)");
  EXPECT_EQ(launch_signature(t, Backend::cuda),
            "extern \"C\" void khive_launch(const __half* x, __half* y, cudaStream_t stream)");
}

// ------------------------------------------------------------------------------- workload_cost

TEST(WorkloadCost, EvaluatesTheFormulas) {
  TaskFixture f;
  Task t = f.load();
  auto axes = resolve_axes(t, t.workloads[0]);  // M=16, N=32, K=64
  WorkloadCost c = workload_cost(t, axes);
  EXPECT_EQ(c.flops, 2.0 * 16 * 32 * 64);
  EXPECT_EQ(c.bytes, 4.0 * (16 * 64 + 64 * 32 + 16 * 32));
}

TEST(WorkloadCost, NumbersAndDefaults) {
  json def = gemm_definition();
  def["khive"]["cost"] = {{"flops", 1000}, {"bytes", 2.5e9}, {"unit", "bf16"}};
  TaskFixture f(def);
  Task t = f.load();
  EXPECT_EQ(t.cost.unit, ComputeUnit::tc_bf16);
  WorkloadCost c = workload_cost(t, resolve_axes(t, t.workloads[0]));
  EXPECT_EQ(c.flops, 1000.0);
  EXPECT_EQ(c.bytes, 2.5e9);
  def["khive"].erase("cost");
  TaskFixture g(def);
  Task u = g.load();
  WorkloadCost z = workload_cost(u, resolve_axes(u, u.workloads[0]));  // derived (khive.cost absent): the
  EXPECT_EQ(z.flops, 2.0 * 16 * 32 * 64);  // signature A[M,K] x B[K,N] -> C[M,N] is a matrix product
  EXPECT_EQ(z.bytes, 4.0 * (16 * 64 + 64 * 32 + 16 * 32));
  EXPECT_EQ(u.cost.unit, ComputeUnit::fp32);
}

TEST(ComputeUnit, NamesRoundTrip) {
  for (ComputeUnit u : {ComputeUnit::tc_bf16, ComputeUnit::tc_fp16, ComputeUnit::tc_tf32, ComputeUnit::tc_fp8,
                        ComputeUnit::tc_int8, ComputeUnit::fp32, ComputeUnit::fp64})
    EXPECT_EQ(parse_compute_unit(compute_unit_name(u)), u);
  EXPECT_EQ(compute_unit_name(ComputeUnit::tc_tf32), "tf32");
  EXPECT_FALSE(parse_compute_unit("fp4").has_value());
}

TEST(ElementCount, Errors) {
  TensorSpec s;
  s.name = "x";
  s.shape = {"M", "N"};
  EXPECT_EQ(element_count(s, {{"M", 3}, {"N", 0}}), 0);
  EXPECT_THROW(element_count(s, {{"M", 3}}), std::invalid_argument);
  EXPECT_THROW(element_count(s, {{"M", int64_t{1} << 40}, {"N", int64_t{1} << 40}}), std::overflow_error);
}

// ------------------------------------------------------------------------------------ find_tasks

TEST(FindTasks, FindsTaskDirectoriesSorted) {
  TempDir tmp;
  const fs::path& r = tmp.root();
  tmp.write("suite/b_task/definition.json", "{}");
  tmp.write("suite/a_task/definition.json", "{}");
  tmp.write("suite/group/c_task/definition.json", "{}");
  tmp.write("suite/a_task/inner/definition.json", "{}");  // inside a task: not a separate task
  tmp.write("suite/.hidden/d_task/definition.json", "{}");
  tmp.write("suite/empty/readme.md", "");
  auto found = find_tasks(r / "suite");
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0], r / "suite" / "a_task");
  EXPECT_EQ(found[1], r / "suite" / "b_task");
  EXPECT_EQ(found[2], r / "suite" / "group" / "c_task");
  // A task directory given directly is itself the one task.
  EXPECT_EQ(find_tasks(r / "suite" / "b_task"), (std::vector<fs::path>{r / "suite" / "b_task"}));
  EXPECT_TRUE(find_tasks(r / "suite" / "empty").empty());
  EXPECT_THROW(find_tasks(r / "nope"), std::runtime_error);
}

TEST(LibraryPolicy, Allows) {
  LibraryPolicy p;
  EXPECT_FALSE(p.allows("cublas"));
  p.libraries = {"cublas", "cublasLt"};
  EXPECT_TRUE(p.allows("cublasLt"));
  EXPECT_FALSE(p.allows("cudnn"));
}

TEST(SelectPerfWorkloads, KeepsEveryCheckAndTimesOnlyTheMatches) {
  TaskFixture f(
      gemm_definition(),
      R"({"uuid": "check-1", "axes": {"M": 1, "N": 1}, "khive": {"role": "correctness"}})"
      "\n"
      R"({"uuid": "perf-M256", "axes": {"M": 256, "N": 256}, "khive": {"role": "perf"}})"
      "\n"
      R"({"uuid": "both-M512", "axes": {"M": 512, "N": 512}})"
      "\n"
      R"({"uuid": "perf-M4096", "axes": {"M": 4096, "N": 4096}, "khive": {"role": "perf", "backends": ["cuda"]}})"
      "\n"
      R"({"uuid": "perf-M1024", "axes": {"M": 1024, "N": 1024}, "khive": {"role": "perf"}})"
      "\n");
  f.write("reference.cu", "//");
  f.write("reference.cpp", "//");
  Task t = f.load();
  EXPECT_EQ(select_perf_workloads(t, "M1024|M4096", Backend::cpu), (std::vector<std::string>{"perf-M1024"}));
  std::vector<std::string> uuids;
  for (const auto& w : t.workloads) uuids.push_back(w.uuid);
  // check-1 stays; perf-M256 is dropped; both-M512 keeps only its check; perf-M4096 does not run on the CPU
  // (untouched: the CUDA backend never sees this filtered task).
  EXPECT_EQ(uuids, (std::vector<std::string>{"check-1", "both-M512", "perf-M4096", "perf-M1024"}));
  EXPECT_EQ(t.workloads[1].role, WorkloadRole::correctness);
  EXPECT_TRUE(t.workloads[3].is_perf());

  Task c = f.load();
  EXPECT_EQ(select_perf_workloads(c, "^perf-M4096$", Backend::cuda), (std::vector<std::string>{"perf-M4096"}));
  int timed = 0;
  for (const auto& w : c.workloads) timed += w.is_perf() && w.runs_on(Backend::cuda);
  EXPECT_EQ(timed, 1);
}

TEST(SelectPerfWorkloads, NoMatchOrBadPatternIsAnErrorAndLeavesTheTask) {
  TaskFixture f;
  Task t = f.load();
  const auto before = t.workloads.size();
  try {
    select_perf_workloads(t, "M8192", Backend::cpu);
    ADD_FAILURE() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(
        e.what(), "--perf-workloads 'M8192': no perf workload of task gemm_fp32 (cpu) matches; its perf workloads: w2"))
        << e.what();
  }
  try {
    select_perf_workloads(t, "M(", Backend::cpu);
    ADD_FAILURE() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "--perf-workloads 'M(': not a regular expression")) << e.what();
  }
  EXPECT_EQ(t.workloads.size(), before);
}

}  // namespace
}  // namespace khive
