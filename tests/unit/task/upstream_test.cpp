// Upstream schemas read as upstream writes them (issue 14) and load-time limits (issue 17, item 6):
// SOL-ExecBench tolerance spelling and defaults, allow_negative_inf, safetensors and custom inputs, data
// constraints, derived cost, cost formulas that fail for a workload, sizes that overflow or cannot fit.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "khive/task/data_constraint.hpp"
#include "khive/task/task.hpp"

namespace khive {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

struct Dir {
  fs::path root;
  Dir() {
    std::string tmpl = (fs::temp_directory_path() / "khive-upstream-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    root = tmpl;
  }
  ~Dir() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  fs::path task(const std::string& name, const json& def, const std::string& workloads) const {
    fs::path d = root / name;
    fs::create_directories(d);
    std::ofstream(d / "definition.json") << def.dump(2);
    std::ofstream(d / "workload.jsonl") << workloads;
    return d;
  }
};

// An upstream definition as SOL-ExecBench writes one: no "khive" block.
json rmsnorm() {
  return json::parse(R"({
    "name": "rmsnorm_h64", "op_type": "rmsnorm", "hf_id": "some/model",
    "axes": {"batch_size": {"type": "var", "description": null}, "hidden_size": {"type": "const", "value": 64}},
    "custom_inputs_entrypoint": null,
    "inputs": {"hidden_states": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"},
               "weight": {"shape": ["hidden_size"], "dtype": "bfloat16"}},
    "outputs": {"output": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"}},
    "reference": "import torch\n\n@torch.no_grad()\ndef run(hidden_states, weight):\n    return hidden_states * weight\n"
  })");
}

std::string what_of(const fs::path& dir) {
  try {
    load_task(dir);
  } catch (const TaskFormatError& e) {
    return e.what();
  }
  return "(loaded)";
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(Upstream, SolToleranceSpellingAndDefaults) {
  Dir d;
  auto dir = d.task(
      "rms", rmsnorm(),
      R"({"uuid": "a", "axes": {"batch_size": 7}, "inputs": {"hidden_states": {"type": "random"}, "weight": {"type": "random"}}})"
      "\n"
      R"({"uuid": "b", "axes": {"batch_size": 9}, "inputs": {}, "tolerance": {"max_atol": 0.001, "max_rtol": 0.002, "required_matched_ratio": 0.95, "max_error_cap": null, "allow_negative_inf": true}})"
      "\n");
  Task t = load_task(dir);
  EXPECT_TRUE(t.upstream);
  Tolerance a = t.tolerance_for("output", t.workloads[0]);  // SOL-ExecBench's ToleranceSpec defaults
  EXPECT_DOUBLE_EQ(a.atol, 1e-2);
  EXPECT_DOUBLE_EQ(a.rtol, 1e-2);
  EXPECT_DOUBLE_EQ(a.matched_ratio, 0.99);
  EXPECT_FALSE(a.allow_negative_inf);
  Tolerance b = t.tolerance_for("output", t.workloads[1]);
  EXPECT_DOUBLE_EQ(b.atol, 1e-3);
  EXPECT_DOUBLE_EQ(b.rtol, 2e-3);
  EXPECT_DOUBLE_EQ(b.matched_ratio, 0.95);
  EXPECT_FALSE(b.max_error_cap);
  EXPECT_TRUE(b.allow_negative_inf);
}

TEST(Upstream, MixedToleranceSpellingsAreRefused) {
  Dir d;
  auto dir = d.task("rms", rmsnorm(),
                    R"({"uuid": "a", "axes": {"batch_size": 7}, "tolerance": {"max_atol": 0.1, "rtol": 0.1}})"
                    "\n");
  EXPECT_TRUE(has(what_of(dir), "rms/workload.jsonl: line 1: tolerance: expected one spelling")) << what_of(dir);
  auto dir2 = d.task("rms2", rmsnorm(),
                     R"({"uuid": "a", "axes": {"batch_size": 7}, "tolerance": {"allow_negative_inf": 1}})"
                     "\n");
  EXPECT_TRUE(has(what_of(dir2), "line 1: tolerance.allow_negative_inf: expected true or false, got 1"))
      << what_of(dir2);
}

TEST(Upstream, SafetensorsInputFoundFromTheDatasetRoot) {
  Dir d;
  fs::create_directories(d.root / "blob");
  std::ofstream(d.root / "blob" / "w.safetensors") << "x";
  auto dir = d.task(
      "defs/rms", rmsnorm(),
      R"({"uuid": "a", "axes": {"batch_size": 2}, "inputs": {"weight": {"type": "safetensors", "path": "blob/w.safetensors", "tensor_key": "weight"}}})"
      "\n");
  Task t = load_task(dir);
  const InputSource& s = t.workloads[0].inputs.at("weight");
  EXPECT_EQ(s.kind, InputSource::Kind::safetensors);
  EXPECT_EQ(s.tensor_key, "weight");
  EXPECT_EQ(s.file, (d.root / "blob" / "w.safetensors").lexically_normal());
  EXPECT_TRUE(t.workloads[0].needs_python_inputs());

  auto missing = d.task(
      "rms_missing", rmsnorm(),
      R"({"uuid": "a", "axes": {"batch_size": 2}, "inputs": {"weight": {"type": "safetensors", "path": "blob/none.safetensors", "tensor_key": "w"}}})"
      "\n");
  EXPECT_TRUE(has(what_of(missing), "line 1: inputs.weight.path: expected an existing .safetensors file"))
      << what_of(missing);
  auto nokey = d.task(
      "rms_nokey", rmsnorm(),
      R"({"uuid": "a", "axes": {"batch_size": 2}, "inputs": {"weight": {"type": "safetensors", "path": "blob/w.safetensors"}}})"
      "\n");
  EXPECT_TRUE(
      has(what_of(nokey), "line 1: inputs.weight.tensor_key: expected the key of a tensor in the file, got none"))
      << what_of(nokey);
}

TEST(Upstream, CustomInputsNeedTheEntrypoint) {
  Dir d;
  json def = rmsnorm();
  auto dir = d.task("rms", def,
                    R"({"uuid": "a", "axes": {"batch_size": 2}, "inputs": {"weight": {"type": "custom"}}})"
                    "\n");
  EXPECT_TRUE(has(what_of(dir),
                  "inputs.weight.type: expected random, scalar or safetensors (\"custom\" needs the definition's "
                  "custom_inputs_entrypoint)"))
      << what_of(dir);
  def["custom_inputs_entrypoint"] = "make";
  auto undefined = d.task("rms2", def, "{\"uuid\": \"a\", \"axes\": {\"batch_size\": 2}}\n");
  EXPECT_TRUE(has(what_of(undefined),
                  "rms2/definition.json: custom_inputs_entrypoint: expected a function defined at the top level"))
      << what_of(undefined);
  def["reference"] = def["reference"].get<std::string>() + "\ndef make(axes_and_scalars, device):\n    return {}\n";
  auto ok = d.task("rms3", def,
                   R"({"uuid": "a", "axes": {"batch_size": 2}, "inputs": {"weight": {"type": "custom"}}})"
                   "\n");
  Task t = load_task(ok);
  EXPECT_EQ(t.custom_inputs_entrypoint, "make");
  EXPECT_EQ(t.workloads[0].inputs.at("weight").kind, InputSource::Kind::custom);
}

TEST(Upstream, ReferenceMustDefineRun) {
  Dir d;
  json def = rmsnorm();
  def["reference"] = "import torch\nx = 1\n";
  auto dir = d.task("rms", def, "{\"axes\": {\"batch_size\": 1}}\n");
  EXPECT_TRUE(has(what_of(dir),
                  "rms/definition.json: reference: expected Python source that defines a top-level function run(...)"))
      << what_of(dir);
}

json paged() {
  return json::parse(R"J({
    "name": "paged", "op_type": "gqa_paged",
    "axes": {"batch_size": {"type": "var"}, "len_indptr": {"type": "var"}, "num_kv_indices": {"type": "var"},
             "D": {"type": "const", "value": 8}},
    "constraints": ["len_indptr == batch_size + 1", "num_kv_indices == kv_indptr[-1].item()"],
    "inputs": {"q": {"shape": ["batch_size", "D"], "dtype": "float16"},
               "kv_indptr": {"shape": ["len_indptr"], "dtype": "int32"},
               "kv_indices": {"shape": ["num_kv_indices"], "dtype": "int32"}},
    "outputs": {"o": {"shape": ["batch_size", "D"], "dtype": "float16"}},
    "reference": "def run(q, kv_indptr, kv_indices):\n    return q\n"
  })J");
}

TEST(Upstream, DataConstraintsAreKeptAndAxisOnesChecked) {
  Dir d;
  auto dir = d.task("paged", paged(), "{\"axes\": {\"batch_size\": 2, \"len_indptr\": 3, \"num_kv_indices\": 5}}\n");
  Task t = load_task(dir);
  EXPECT_EQ(t.constraints, (std::vector<std::string>{"len_indptr == batch_size + 1"}));
  EXPECT_EQ(t.data_constraints, (std::vector<std::string>{"num_kv_indices == kv_indptr[-1].item()"}));
  auto wrong = d.task("paged2", paged(), "{\"axes\": {\"batch_size\": 2, \"len_indptr\": 4, \"num_kv_indices\": 5}}\n");
  EXPECT_TRUE(has(what_of(wrong), "line 1: constraints[0]: expected \"len_indptr == batch_size + 1\" to hold"))
      << what_of(wrong);
}

TEST(Upstream, UnsafeDataConstraintsAreRefusedAtLoad) {
  Dir d;
  for (const char* bad :
       {"kv_indptr.__class__ == 1", "open(kv_indptr) == 1", "kv_indptr[-1].item() == eval(1)", "kv_indptr[0 == 1"}) {
    json def = paged();
    def["constraints"] = json::array({bad});
    auto dir = d.task(std::string("p") + std::to_string(std::hash<std::string>()(bad) % 100000), def,
                      "{\"axes\": {\"batch_size\": 2, \"len_indptr\": 3, \"num_kv_indices\": 5}}\n");
    std::string w = what_of(dir);
    EXPECT_TRUE(has(w, "definition.json: constraints[0]: expected a condition over axes and inputs in the safe subset"))
        << bad << ": " << w;
  }
}

TEST(DataConstraint, Classification) {
  std::set<std::string> inputs = {"kv_indptr"};
  std::set<std::string> axes = {"n"};
  EXPECT_TRUE(is_data_constraint("n == kv_indptr[-1].item()", inputs));
  EXPECT_TRUE(is_data_constraint("n == x.shape", inputs));
  EXPECT_FALSE(is_data_constraint("n <= 4.5e3", inputs));
  EXPECT_FALSE(is_data_constraint("n % 2 == 0", inputs));
  EXPECT_NO_THROW(check_data_constraint("n == len(kv_indptr) - 1 and max(n, 1) >= 1", axes, inputs));
  EXPECT_NO_THROW(check_data_constraint("kv_indptr.shape[0] == kv_indptr.numel()", axes, inputs));
  EXPECT_THROW(check_data_constraint("kv_indptr.item", axes, inputs), ExprError);
  EXPECT_THROW(check_data_constraint("kv_indptr.tolist()", axes, inputs), ExprError);
  EXPECT_THROW(check_data_constraint("n == 'a'", axes, inputs), ExprError);
  EXPECT_THROW(check_data_constraint("(n", axes, inputs), ExprError);
}

TEST(DerivedCost, BytesAndMatmulFlopsWhenAbsent) {
  Dir d;
  json def = json::parse(R"({"name": "mm", "op_type": "gemm",
    "axes": {"M": {"type": "var"}, "N": {"type": "const", "value": 64}, "K": {"type": "const", "value": 32}},
    "inputs": {"A": {"shape": ["M", "K"], "dtype": "bfloat16"}, "B": {"shape": ["N", "K"], "dtype": "bfloat16"}},
    "outputs": {"C": {"shape": ["M", "N"], "dtype": "bfloat16"}},
    "reference": "def run(A, B):\n    return A @ B.T\n"})");
  Task t = load_task(d.task("mm", def, "{\"axes\": {\"M\": 16}}\n"));
  EXPECT_TRUE(t.cost.derived_flops && t.cost.derived_bytes && t.cost.derived_unit);
  EXPECT_EQ(t.cost.unit, ComputeUnit::tc_bf16);
  WorkloadCost c = workload_cost(t, resolve_axes(t, t.workloads[0]));
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 16 * 64 * 32);
  EXPECT_DOUBLE_EQ(c.bytes, 2.0 * (16 * 32 + 64 * 32 + 16 * 64));
  EXPECT_TRUE(has(t.cost.derivation, "matrix product")) << t.cost.derivation;

  Task r = load_task(d.task("rms", rmsnorm(), "{\"axes\": {\"batch_size\": 4}}\n"));
  EXPECT_FALSE(r.cost.derived_unit);
  WorkloadCost rc = workload_cost(r, resolve_axes(r, r.workloads[0]));
  EXPECT_DOUBLE_EQ(rc.flops, 4.0 * 64);  // one an output element: output shaped like hidden_states
  EXPECT_DOUBLE_EQ(rc.bytes, 2.0 * (4 * 64 + 64 + 4 * 64));

  json given = rmsnorm();
  given["khive"] = {{"cost", {{"flops", "7"}}}};
  Task g = load_task(d.task("given", given, "{\"axes\": {\"batch_size\": 4}}\n"));
  EXPECT_FALSE(g.cost.derived_flops);
  EXPECT_TRUE(g.cost.derived_bytes);
  EXPECT_EQ(g.cost.flops, "7");
}

// Issue 17, item 6: errors at load naming the file, the field and the workload.
TEST(LoadLimits, CostFormulaDividingByZeroNamesFieldAndWorkload) {
  Dir d;
  json def = rmsnorm();
  def["khive"] = {{"cost", {{"flops", "4096 // (batch_size - 3)"}, {"bytes", "1"}}}};
  auto dir = d.task(
      "rms", def,
      "{\"uuid\": \"ok\", \"axes\": {\"batch_size\": 4}}\n{\"uuid\": \"three\", \"axes\": {\"batch_size\": 3}}\n");
  std::string w = what_of(dir);
  EXPECT_TRUE(has(
      w,
      "rms/definition.json: khive.cost.flops: expected a formula that gives a finite number >= 0 for every workload"))
      << w;
  EXPECT_TRUE(has(w, "division by zero")) << w;
  EXPECT_TRUE(has(w, "for workload \"three\" (workload.jsonl line 2)")) << w;
}

TEST(LoadLimits, NegativeOrNonFiniteCostIsRefused) {
  Dir d;
  json def = rmsnorm();
  def["khive"] = {{"cost", {{"flops", "1"}, {"bytes", "hidden_size - 100"}}}};
  std::string w = what_of(d.task("neg", def, "{\"uuid\": \"a\", \"axes\": {\"batch_size\": 4}}\n"));
  EXPECT_TRUE(has(w, "neg/definition.json: khive.cost.bytes: expected a formula that gives a finite number >= 0")) << w;
  EXPECT_TRUE(has(w, "= -36 for workload \"a\"")) << w;
  def["khive"] = {{"cost", {{"flops", "10.0 ** 400"}, {"bytes", "1"}}}};
  w = what_of(d.task("inf", def, "{\"uuid\": \"a\", \"axes\": {\"batch_size\": 4}}\n"));
  EXPECT_TRUE(has(w, "inf/definition.json: khive.cost.flops: expected a formula that gives a finite number >= 0")) << w;
}

TEST(LoadLimits, ByteSizeOverflowIsRefused) {
  Dir d;
  // 2^31 * 2^31 elements fit in int64 (2^62) but 2^62 * 2 bytes do not.
  json def = rmsnorm();
  def["axes"]["hidden_size"] = {{"type", "var"}};
  std::string w =
      what_of(d.task("big", def, "{\"axes\": {\"batch_size\": 2147483648, \"hidden_size\": 2147483648}}\n"));
  EXPECT_TRUE(has(w, "big/workload.jsonl: line 1: inputs.hidden_states.shape: expected a byte size that fits in int64"))
      << w;
  EXPECT_TRUE(has(w, "hidden_states [2147483648 x 2147483648] bfloat16")) << w;
}

TEST(LoadLimits, AbsurdSizesAreRefused) {
  Dir d;
  // 2^40 elements: used to fail only when the goldens were made.
  json def = rmsnorm();
  def["axes"]["hidden_size"] = {{"type", "var"}};
  std::string w = what_of(d.task("huge", def, "{\"axes\": {\"batch_size\": 1048576, \"hidden_size\": 1048576}}\n"));
  EXPECT_TRUE(has(w,
                  "huge/workload.jsonl: line 1: inputs.hidden_states.shape: expected tensors that fit on one device "
                  "(at most 256 GiB"))
      << w;
  EXPECT_TRUE(has(w, "= 2 TiB")) << w;
  // Several tensors that add up past the limit are refused too.
  std::string w2 = what_of(d.task("sum", def, "{\"axes\": {\"batch_size\": 65536, \"hidden_size\": 1048576}}\n"));
  EXPECT_TRUE(has(w2, "outputs.output.shape: expected tensors that fit on one device")) << w2;
  EXPECT_TRUE(has(w2, "256 GiB with the tensors before it")) << w2;
}

}  // namespace
}  // namespace khive
