// Chains of several outputs (chain.hpp, issue 24: a backward pass's grad_input and grad_weight, a projection's q, k
// and v): stages that each write an intermediate or one of the task's outputs, a task output an earlier stage wrote
// read by a later one, independent products; the binder's checks (every output written exactly once, every
// intermediate read later, nothing read before it is written; each refusal naming the field), the binding inferred
// from a recognised multi-output chain (khive.op.stages with output names), and the rendered CPU chain against the
// formula over sizes other than the workloads', exactly; a chain with one wrong stage must fail it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tuner_support.hpp"

#include "khive/compile/builder.hpp"
#include "khive/tuner/auto_bind.hpp"

namespace {

// y [M, N] = x [M, K] @ w [N, K]^T, z [M, N] = 2 y + tanh(y), g [K, N] = x^T @ y: three float32 outputs, two
// workloads; `op`: khive.op (a recognised chain) when not null.
Task three_outputs(const json& op = nullptr) {
  const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-tuner-test") / "imported" / "three_outputs";
  fs::create_directories(d);
  auto f32 = [](std::initializer_list<const char*> s) { return json{{"shape", s}, {"dtype", "float32"}}; };
  json def = {{"name", "three_outputs"},
              {"axes", {{"M", {{"type", "var"}}}, {"N", {{"type", "var"}}}, {"K", {{"type", "var"}}}}},
              {"inputs", {{"x", f32({"M", "K"})}, {"w", f32({"N", "K"})}}},
              {"outputs", {{"y", f32({"M", "N"})}, {"z", f32({"M", "N"})}, {"g", f32({"K", "N"})}}}};
  if (!op.is_null()) def["khive"] = {{"op", op}};
  std::ofstream(d / "definition.json") << def.dump(2);
  std::ofstream(d / "workload.jsonl") << "{\"uuid\": \"a\", \"axes\": {\"M\": 3, \"N\": 5, \"K\": 7}}\n"
                                         "{\"uuid\": \"b\", \"axes\": {\"M\": 8, \"N\": 16, \"K\": 33}}\n";
  return load_task(d);
}

// The chain: y by a product, an intermediate t1 = 2 y, z from t1 and y (a task output read after it was written),
// g by a second product that reads y too.
json spec() {
  return json::parse(R"J({"stages": [
    {"family": "gemm", "A": "x", "B": "w", "C": "y", "M": "M", "N": "N", "K": "K", "layout_a": "row", "layout_b": "col"},
    {"family": "elementwise", "inputs": ["y"], "output": "t1", "op": "2.0f * y"},
    {"family": "elementwise", "inputs": ["t1", "y"], "output": "z", "op": "t1 + tanhf(y)"},
    {"family": "gemm", "A": "x", "B": "y", "C": "g", "M": "K", "N": "N", "K": "M", "layout_a": "col", "layout_b": "row"}
  ]})J");
}

Binding chain_binding(const json& s) { return chain_binding_of("imported/three_outputs", "multi.json", s); }

std::string refusal(const Task& t, const json& s) { return refusal_of(t, chain_binding(s)); }

// Checks the rendered kernel against the formula (double sums, a tolerance of float32 rounding) over `sizes`.
std::string harness(const std::vector<std::array<long, 3>>& sizes) {
  std::string h =
      "#include <cmath>\n#include <cstdio>\n#include <random>\n#include <vector>\nint main() {\n"
      "  std::mt19937 gen(11);\n  std::normal_distribution<float> d(0.0f, 1.0f);\n  long bad = 0;\n";
  for (const auto& [M, N, K] : sizes)
    h += fmt::format(
        "  {{ const long M = {}, N = {}, K = {};\n"
        "    std::vector<float> x(M * K), w(N * K), y(M * N, -7.f), z(M * N, -7.f), g(K * N, -7.f);\n"
        "    for (auto& v : x) v = d(gen); for (auto& v : w) v = 0.5f * d(gen);\n"
        "    khive_launch(x.data(), w.data(), y.data(), z.data(), g.data(), M, N, K);\n"
        "    std::vector<double> ry(M * N);\n"
        "    for (long m = 0; m < M; ++m) for (long n = 0; n < N; ++n) {{ double s = 0;\n"
        "      for (long k = 0; k < K; ++k) s += double(x[m * K + k]) * w[n * K + k]; ry[m * N + n] = s; }}\n"
        "    auto off = [](double got, double want, double scale) {{\n"
        "      return !(std::fabs(got - want) <= 1e-4 * (1.0 + scale)); }};\n"
        "    for (long i = 0; i < M * N; ++i) {{\n"
        "      bad += off(y[i], ry[i], std::fabs(ry[i]) + K);\n"
        "      const double yf = y[i];  // z from the y the kernel wrote (float rounding of the product aside)\n"
        "      bad += off(z[i], 2.0 * yf + std::tanh(yf), std::fabs(yf)); }}\n"
        "    for (long k = 0; k < K; ++k) for (long n = 0; n < N; ++n) {{ double s = 0;\n"
        "      for (long m = 0; m < M; ++m) s += double(x[m * K + k]) * y[m * N + n];\n"
        "      bad += off(g[k * N + n], s, std::fabs(s) + M * K); }} }}\n",
        M, N, K);
  return h + "  std::printf(\"bad %ld\\n\", bad);\n  return 0;\n}\n";
}

}  // namespace

TEST(MultiOutputChain, StagesWriteTheOutputsAndReadOnesWrittenBefore) {
  const Task task = three_outputs();
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(task, be, chain_binding(spec()));
    ASSERT_EQ(bt.stages.size(), 4u);
    EXPECT_EQ(bt.op, "gemm>map>map>gemm");
    const std::string& run = bt.placeholders.at("RUN");
    // one kept buffer, for t1 only: y, z and g are the call's output pointers
    EXPECT_NE(run.find("khive_chain_buffer<0>"), std::string::npos) << run;
    EXPECT_EQ(run.find("khive_chain_buffer<1>"), std::string::npos) << run;
    EXPECT_NE(run.find("khive_s1::khive_stage(x, w, y, M, N, K"), std::string::npos) << run;
    EXPECT_NE(run.find("khive_s3::khive_stage(t1, y, z, M, N, K"), std::string::npos) << run;
    EXPECT_NE(run.find("khive_s4::khive_stage(x, y, g, M, N, K"), std::string::npos) << run;
    // the stages read y through const pointers of their own launch signatures
    EXPECT_NE(bt.stages[2].placeholders.at("LAUNCH").find("const float* y"), std::string::npos);
  }
}

TEST(MultiOutputChain, RefusalsNameTheField) {
  const Task task = three_outputs();
  const std::string k = "multi.json: tasks.three_outputs.";
  auto edited = [](std::size_t i, const std::string& f, const json& v) {
    json s = spec();
    s["stages"][i][f] = v;
    return s;
  };
  // an output written twice
  EXPECT_EQ(has_all(refusal(task, edited(2, "output", "y")),
                    {(k + "stages[2].output").c_str(), "exactly once", "\"y\", which stages[0] wrote before"}),
            "");
  // an output never written: the last stage writes an intermediate, or no stage writes g
  EXPECT_EQ(has_all(refusal(task, edited(3, "C", "t9")),
                    {(k + "stages[3].C").c_str(), "a task output (left to write: \"g\")", "\"t9\""}),
            "");
  json three = spec();
  three["stages"].erase(3);
  EXPECT_EQ(has_all(refusal(task, three), {(k + "stages").c_str(), "every output", "\"g\" left unwritten"}), "");
  // an intermediate no later stage reads
  EXPECT_EQ(has_all(refusal(task, edited(2, "inputs", json::array({"y"}))),
                    {(k + "stages[1].output").c_str(), "\"t1\", which no later stage reads"}),
            "");
  // a task output read before any stage wrote it
  EXPECT_EQ(has_all(refusal(task, edited(1, "inputs", json::array({"z"}))),
                    {(k + "stages[1]").c_str(), "\"z\" (an output no earlier stage wrote)"}),
            "");
  // a field that is no tensor name; an intermediate named like an input
  EXPECT_EQ(has_all(refusal(task, edited(0, "C", 7)), {(k + "stages[0]").c_str(), "C: expected a tensor name"}), "");
  EXPECT_EQ(has_all(refusal(task, edited(1, "output", "w")),
                    {(k + "stages[1].output").c_str(), "a new name for the intermediate"}),
            "");
  // a stage's own family checks against the output it writes: g is [K, N], x @ w^T is [M, N]
  json wrong = spec();
  wrong["stages"][3] = spec()["stages"][0];
  wrong["stages"][3]["C"] = "g";
  EXPECT_EQ(has_all(refusal(task, wrong), {(k + "stages[3]").c_str()}), "");
  EXPECT_NE(refusal(task, wrong), "bound");
}

TEST(MultiOutputChain, RenderedCpuKernelMatchesTheFormulaOverSizes) {
  const Task task = three_outputs();
  const BoundTask bt = bind_task(task, Backend::cpu, chain_binding(spec()));
  const auto ts = applicable_templates(repo_library(), bt);
  ASSERT_FALSE(ts.empty());
  const Template& t = *ts.front();
  EXPECT_EQ(t.name, "chain:gemm.cpu_blocked+elementwise.cpu+elementwise.cpu+gemm.cpu_blocked");
  const std::string h = harness({{1, 1, 1}, {4, 9, 13}, {37, 21, 70}, {130, 67, 5}});
  const std::string src = render(t, bt, t.default_point());
  EXPECT_EQ(run_cpu_kernel(generate_prelude(task, Backend::cpu) + src, h, "multi-out"), "bad 0\n");
  // Planted: z's stage subtracts tanh(y) where the reference adds it; a wrong stage must fail the check.
  json planted = spec();
  planted["stages"][2]["op"] = "t1 - tanhf(y)";
  const BoundTask pb = bind_task(task, Backend::cpu, chain_binding(planted));
  EXPECT_NE(run_cpu_kernel(generate_prelude(task, Backend::cpu) + render(t, pb, t.default_point()), h, "multi-planted"),
            "bad 0\n");
}

// khive.op.stages as recognize.py writes a multi-output chain: each stage's "output" an intermediate or a task
// output; the binding inferred stage by stage, each product with its operands.
TEST(MultiOutputChain, ARecognisedChainOfSeveralOutputsBinds) {
  const json op = json::parse(R"J({"op": "chain", "family": "chain", "ops": ["mm", "mul", "tanh", "add", "mm"],
    "stages": [
      {"op": "matmul", "family": "gemm", "operands": {"A": "x", "B": "w", "layout_a": "row", "layout_b": "col"},
       "inputs": ["x", "w"], "output": "y"},
      {"op": "elementwise", "family": "elementwise", "expression": "((2.0f * y) + tanhf(y))",
       "flags": ["named_inputs", "torch_broadcast"], "inputs": ["y"], "output": "z"},
      {"op": "matmul", "family": "gemm", "operands": {"A": "x", "B": "w", "layout_a": "row", "layout_b": "col"},
       "inputs": ["x", "w"], "output": "khive_t1"},
      {"op": "matmul", "family": "gemm", "operands": {"A": "x", "B": "khive_t1", "layout_a": "col", "layout_b": "row"},
       "inputs": ["x", "khive_t1"], "output": "g"}]})J");
  const Task task = three_outputs(op);
  std::string why;
  auto b = infer_binding(task, &why);
  ASSERT_TRUE(b) << why;
  ASSERT_EQ(b->family, "chain");
  const json& st = b->spec["stages"];
  ASSERT_EQ(st.size(), 4u);
  EXPECT_EQ(st[0]["C"], "y");
  EXPECT_EQ(st[1]["output"], "z");
  EXPECT_EQ(st[2]["C"], "khive_t1");
  EXPECT_EQ(st[3]["C"], "g");
  EXPECT_EQ(st[3]["layout_a"], "col");
  EXPECT_EQ(st[3]["M"], "K");
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(task, be, *b);
    EXPECT_EQ(bt.stages.size(), 4u);
  }
  const BoundTask bt = bind_task(task, Backend::cpu, *b);
  const Template& t = *applicable_templates(repo_library(), bt).front();
  EXPECT_EQ(run_cpu_kernel(generate_prelude(task, Backend::cpu) + render(t, bt, t.default_point()),
                           harness({{2, 3, 4}, {19, 40, 11}}), "multi-recognised"),
            "bad 0\n");
  // a stage without an output name in a task of several outputs is refused naming the field
  json bad = op;
  bad["stages"][3]["output"] = nullptr;
  std::string why2;
  EXPECT_FALSE(infer_binding(three_outputs(bad), &why2));
  EXPECT_EQ(has_all(why2, {"khive.op.stages[3]", "\"output\""}), "") << why2;
}
