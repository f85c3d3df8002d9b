// Backward passes as chains (chain.hpp, issue 24): a gradient is several products in a row, one intermediate is read
// by several later stages (not only the next), a weight's gradient is a product summed over the batch axes (gemm "K"
// a list of axes: A = grad [B, S, H] read transposed, B = x [B, S, I]), a bias gradient is a reduce stage over the
// leading axes, and an input the computation does not read (the forward's bias) is listed in the chain's "unread".
// The binder's checks, each refusal naming the field; the binding inferred from a recognised graph of stages
// (recognize_dag.py's khive.op.stages); and the rendered CPU chain against the formula in double precision over sizes
// other than the workloads', with a planted wrong stage that must fail.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tuner_support.hpp"

#include "khive/compile/builder.hpp"
#include "khive/tuner/auto_bind.hpp"

namespace {

// g [B, S, H] (the output's gradient), x [B, S, I] (the forward's input), w [H, I], fwd_bias [I] (not read); four
// float32 outputs. `op`: khive.op (a recognised chain) when not null; `scale`: a scalar input when true.
Task mlp_back(const json& op = nullptr, bool scale = false) {
  const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-tuner-test") / "imported" / "mlp_back";
  fs::create_directories(d);
  auto f32 = [](std::initializer_list<const char*> s) { return json{{"shape", s}, {"dtype", "float32"}}; };
  json def = {
      {"name", "mlp_back"},
      {"axes",
       {{"B", {{"type", "var"}}}, {"S", {{"type", "var"}}}, {"H", {{"type", "var"}}}, {"I", {{"type", "var"}}}}},
      {"inputs",
       {{"g", f32({"B", "S", "H"})}, {"x", f32({"B", "S", "I"})}, {"w", f32({"H", "I"})}, {"fwd_bias", f32({"I"})}}},
      {"outputs", {{"gb", f32({"H"})}, {"gw", f32({"H", "I"})}, {"gi", f32({"I"})}, {"gx", f32({"I", "H"})}}}};
  if (scale) def["inputs"]["scale"] = {{"shape", nullptr}, {"dtype", "float32"}};
  if (!op.is_null()) def["khive"] = {{"op", op}};
  std::ofstream(d / "definition.json") << def.dump(2);
  std::ofstream(d / "workload.jsonl") << "{\"uuid\": \"a\", \"axes\": {\"B\": 2, \"S\": 3, \"H\": 5, \"I\": 7}}\n"
                                         "{\"uuid\": \"b\", \"axes\": {\"B\": 1, \"S\": 17, \"H\": 16, \"I\": 33}}\n";
  return load_task(d);
}

// gb = sum_{b,s} g; gw = g^T @ x over (b, s); t1 = g @ w; t2 = t1 * x; gi = sum_{b,s} t2; gx = t2^T @ g over (b, s).
// t2 is read by the last two stages.
json spec() {
  return json::parse(R"J({"stages": [
    {"family": "reduce", "op": "sum", "x": "g", "y": "gb", "dim": [0, 1]},
    {"family": "gemm", "A": "g", "B": "x", "C": "gw", "M": "H", "N": "I", "K": ["B", "S"], "layout_a": "col", "layout_b": "row"},
    {"family": "gemm", "A": "g", "B": "w", "C": "t1", "M": ["B", "S"], "N": "I", "K": "H", "layout_a": "row", "layout_b": "row"},
    {"family": "elementwise", "inputs": ["t1", "x"], "output": "t2", "op": "t1 * x"},
    {"family": "reduce", "op": "sum", "x": "t2", "y": "gi", "dim": [0, 1]},
    {"family": "gemm", "A": "t2", "B": "g", "C": "gx", "M": "I", "N": "H", "K": ["B", "S"], "layout_a": "col", "layout_b": "row"}
  ], "unread": ["fwd_bias"]})J");
}

Binding chain_binding(const json& s) { return chain_binding_of("imported/mlp_back", "back.json", s); }

std::string refusal(const Task& t, const json& s) { return refusal_of(t, chain_binding(s)); }

// The rendered chain against the formula (double sums; a float32 tolerance scaled by the sum's length) over `sizes`
// ({B, S, H, I}).
std::string harness(const std::vector<std::array<long, 4>>& sizes) {
  std::string h =
      "#include <cmath>\n#include <cstdio>\n#include <random>\n#include <vector>\nint main() {\n"
      "  std::mt19937 gen(5);\n  std::normal_distribution<float> d(0.0f, 1.0f);\n  long bad = 0;\n"
      "  auto off = [](double got, double want, double scale) { return !(std::fabs(got - want) <= 1e-4 * (1.0 + "
      "scale)); };\n";
  for (const auto& [B, S, H, I] : sizes)
    h += fmt::format(
        "  {{ const long B = {}, S = {}, H = {}, I = {}, R = B * S;\n"
        "    std::vector<float> g(R * H), x(R * I), w(H * I), fb(I, 1e30f);\n"
        "    std::vector<float> gb(H, -7.f), gw(H * I, -7.f), gi(I, -7.f), gx(I * H, -7.f);\n"
        "    for (auto& v : g) v = d(gen); for (auto& v : x) v = d(gen); for (auto& v : w) v = 0.5f * d(gen);\n"
        "    khive_launch(g.data(), x.data(), w.data(), fb.data(), gb.data(), gw.data(), gi.data(), gx.data(), B, S, "
        "H, I);\n"
        "    std::vector<double> t2(R * I);\n"
        "    for (long r = 0; r < R; ++r) for (long i = 0; i < I; ++i) {{ double s = 0;\n"
        "      for (long k = 0; k < H; ++k) s += double(g[r * H + k]) * w[k * I + i]; t2[r * I + i] = s * x[r * I + "
        "i]; "
        "}}\n"
        "    for (long k = 0; k < H; ++k) {{ double s = 0, a = 0; for (long r = 0; r < R; ++r) {{ s += g[r * H + k]; "
        "a += std::fabs(g[r * H + k]); }}\n"
        "      bad += off(gb[k], s, a); }}\n"
        "    for (long k = 0; k < H; ++k) for (long i = 0; i < I; ++i) {{ double s = 0;\n"
        "      for (long r = 0; r < R; ++r) s += double(g[r * H + k]) * x[r * I + i];\n"
        "      bad += off(gw[k * I + i], s, R); }}\n"
        "    for (long i = 0; i < I; ++i) {{ double s = 0, a = 0; for (long r = 0; r < R; ++r) {{ s += t2[r * I + i]; "
        "a += std::fabs(t2[r * I + i]); }}\n"
        "      bad += off(gi[i], s, a); }}\n"
        "    for (long i = 0; i < I; ++i) for (long k = 0; k < H; ++k) {{ double s = 0, a = 0;\n"
        "      for (long r = 0; r < R; ++r) {{ s += t2[r * I + i] * g[r * H + k]; a += std::fabs(t2[r * I + i] * g[r * "
        "H + k]); }}\n"
        "      bad += off(gx[i * H + k], s, a); }} }}\n",
        B, S, H, I);
  return h + "  std::printf(\"bad %ld\\n\", bad);\n  return 0;\n}\n";
}

}  // namespace

TEST(BackwardChain, AReusedIntermediateProductsOverTheBatchAxesAndAnUnreadInputBind) {
  const Task task = mlp_back();
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(task, be, chain_binding(spec()));
    ASSERT_EQ(bt.stages.size(), 6u);
    EXPECT_EQ(bt.op, "sum>gemm>gemm>map>sum>gemm");
    const std::string& run = bt.placeholders.at("RUN");
    // two kept buffers (t1, t2); t2 read by stages 5 and 6
    EXPECT_NE(run.find("khive_chain_buffer<1>"), std::string::npos) << run;
    EXPECT_EQ(run.find("khive_chain_buffer<2>"), std::string::npos) << run;
    EXPECT_NE(run.find("khive_s5::khive_stage(t2, gi,"), std::string::npos) << run;
    EXPECT_NE(run.find("khive_s6::khive_stage(t2, g, gx,"), std::string::npos) << run;
    // the weight gradients: K the product of the batch axes, A read transposed
    EXPECT_NE(bt.stages[1].summary.find("gw = g^T @ x (HxIx(B*S)"), std::string::npos) << bt.stages[1].summary;
    EXPECT_NE(bt.stages[1].placeholders.at("ENTRY").find("khive_K = int64_t(1) * B * S,"), std::string::npos)
        << bt.stages[1].placeholders.at("ENTRY");
    EXPECT_EQ(bt.stages[1].workload_vars.at(1).at("K"), 17);
    EXPECT_EQ(bt.stages[5].workload_vars.at(0).at("K"), 6);
  }
}

TEST(BackwardChain, RefusalsNameTheField) {
  const Task task = mlp_back();
  const std::string k = "back.json: tasks.mlp_back.";
  json s = spec();
  s.erase("unread");
  EXPECT_EQ(has_all(refusal(task, s),
                    {(k + "stages").c_str(), "read by a stage or listed in unread", "\"fwd_bias\" left out"}),
            "");
  s = spec();
  s["unread"] = json::array({"fwd_bias", "x"});
  EXPECT_EQ(
      has_all(refusal(task, s), {(k + "unread[1]").c_str(), "an input no stage reads", "\"x\", which stages[1] reads"}),
      "");
  s["unread"] = json::array({"gw"});
  EXPECT_EQ(has_all(refusal(task, s), {(k + "unread[0]").c_str(), "an input of the task", "\"gw\""}), "");
  s["unread"] = json::array({"fwd_bias", "fwd_bias"});
  EXPECT_EQ(has_all(refusal(task, s), {(k + "unread[1]").c_str(), "not listed before"}), "");
  s["unread"] = "fwd_bias";
  EXPECT_EQ(has_all(refusal(task, s), {(k + "unread").c_str(), "a list of the task's input names"}), "");
  // K a list: the operands must hold its axes where they hold K
  s = spec();
  s["stages"][1]["K"] = json::array({"S", "B"});
  EXPECT_EQ(has_all(refusal(task, s), {(k + "stages[1].A").c_str(), "shape [S, B, H]", "[B, S, H]"}), "");
  s["stages"][1]["K"] = json::array();
  EXPECT_EQ(has_all(refusal(task, s), {(k + "stages[1]").c_str(), "K"}), "");
  s = spec();
  s["stages"][1]["K"] = json::array({"B", 3});
  EXPECT_EQ(has_all(refusal(task, s), {(k + "stages[1]").c_str(), "K"}), "");
  EXPECT_NE(refusal(task, s), "bound");
}

TEST(BackwardChain, GemmKListRefusedWithABatchOrTriangularOperands) {
  const Task task = mlp_back();
  const std::string k = "back.json: tasks.mlp_back.stages[1].";
  json s = spec();
  s["stages"][1]["batch"] = "B";
  EXPECT_EQ(has_all(refusal(task, s), {(k + "batch").c_str(), "nothing when K is a list of axes"}), "");
  s = spec();
  s["stages"][1]["triangular"] = "upper";
  EXPECT_EQ(has_all(refusal(task, s), {(k + "triangular").c_str(), "none when K is a list of axes"}), "");
}

TEST(BackwardChain, RenderedCpuKernelMatchesTheFormulaOverSizes) {
  const Task task = mlp_back();
  const BoundTask bt = bind_task(task, Backend::cpu, chain_binding(spec()));
  const auto ts = applicable_templates(repo_library(), bt);
  ASSERT_FALSE(ts.empty());
  const Template& t = *ts.front();
  EXPECT_EQ(t.name, "chain:reduce.cpu+gemm.cpu_blocked+gemm.cpu_blocked+elementwise.cpu+reduce.cpu+gemm.cpu_blocked");
  const std::string h = harness({{1, 1, 1, 1}, {2, 3, 5, 7}, {3, 41, 19, 70}, {1, 130, 67, 5}});
  EXPECT_EQ(run_cpu_kernel(generate_prelude(task, Backend::cpu) + render(t, bt, t.default_point()), h, "back"),
            "bad 0\n");
  // Planted: the reused intermediate off by 0.01 (read by the bias and the weight gradient) must fail the check.
  json planted = spec();
  planted["stages"][3]["op"] = "t1 * x + 1e-2f";
  const BoundTask pb = bind_task(task, Backend::cpu, chain_binding(planted));
  EXPECT_NE(run_cpu_kernel(generate_prelude(task, Backend::cpu) + render(t, pb, t.default_point()), h, "back-planted"),
            "bad 0\n");
}

// khive.op.stages as recognize_dag.py writes them: a stage reads any earlier intermediate or output, the products over
// the batch axes carry A [B, S, H] read transposed; the input no stage reads becomes the chain's "unread".
TEST(BackwardChain, ARecognisedGraphOfStagesBinds) {
  const json op = json::parse(R"J({"op": "chain", "family": "chain", "ops": ["sum", "mm", "mm", "mul", "sum", "mm"],
    "stages": [
      {"op": "sum", "family": "reduce", "dim": [0, 1], "inputs": ["g"], "output": "gb"},
      {"op": "matmul", "family": "gemm", "operands": {"A": "g", "B": "x", "layout_a": "col", "layout_b": "row"},
       "inputs": ["g", "x"], "output": "gw"},
      {"op": "matmul", "family": "gemm", "operands": {"A": "g", "B": "w", "layout_a": "row", "layout_b": "row"},
       "inputs": ["g", "w"], "output": "khive_t1"},
      {"op": "elementwise", "family": "elementwise", "expression": "(khive_t1 * x)",
       "flags": ["named_inputs", "torch_broadcast"], "inputs": ["khive_t1", "x"], "output": "khive_t2"},
      {"op": "sum", "family": "reduce", "dim": [0, 1], "inputs": ["khive_t2"], "output": "gi"},
      {"op": "matmul", "family": "gemm", "operands": {"A": "khive_t2", "B": "g", "layout_a": "col", "layout_b": "row"},
       "inputs": ["khive_t2", "g"], "output": "gx"}]})J");
  const Task task = mlp_back(op);
  std::string why;
  auto b = infer_binding(task, &why);
  ASSERT_TRUE(b) << why;
  ASSERT_EQ(b->family, "chain");
  const json& st = b->spec["stages"];
  ASSERT_EQ(st.size(), 6u);
  EXPECT_EQ(st[1]["K"], json::array({"B", "S"}));
  EXPECT_EQ(st[1]["M"], "H");
  EXPECT_EQ(st[2]["M"], json::array({"B", "S"}));
  EXPECT_EQ(st[5]["K"], json::array({"B", "S"}));
  EXPECT_EQ(st[5]["M"], "I");
  EXPECT_EQ(b->spec["unread"], json::array({"fwd_bias"}));
  for (Backend be : {Backend::cpu, Backend::cuda}) EXPECT_EQ(bind_task(task, be, *b).stages.size(), 6u);
  const BoundTask bt = bind_task(task, Backend::cpu, *b);
  const Template& t = *applicable_templates(repo_library(), bt).front();
  EXPECT_EQ(run_cpu_kernel(generate_prelude(task, Backend::cpu) + render(t, bt, t.default_point()),
                           harness({{2, 2, 3, 4}, {1, 19, 40, 11}}), "back-recognised"),
            "bad 0\n");
  // A scalar input no stage reads may have steered the reference's Python: refused, naming it.
  std::string why2;
  EXPECT_FALSE(infer_binding(mlp_back(op, true), &why2));
  EXPECT_EQ(has_all(why2, {"\"scale\"", "scalar that no recognised stage reads"}), "") << why2;
}

// An elementwise stage's intermediate is its inputs broadcast as torch does, whichever is listed first: a [B, S, 1]
// statistic times a [B, S, H] gradient is [B, S, H] (a layer norm's backward, SOL L2 042), so the sum over (B, S)
// after it is [H].
TEST(BackwardChain, AnElementwiseIntermediateIsItsInputsBroadcast) {
  const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-tuner-test") / "imported" / "scaled_sum";
  fs::create_directories(d);
  auto f32 = [](std::initializer_list<const char*> s) { return json{{"shape", s}, {"dtype", "float32"}}; };
  json def = {{"name", "scaled_sum"},
              {"axes", {{"B", {{"type", "var"}}}, {"S", {{"type", "var"}}}, {"H", {{"type", "var"}}}}},
              {"inputs", {{"v", f32({"B", "S", "1"})}, {"g", f32({"B", "S", "H"})}}},
              {"outputs", {{"y", f32({"H"})}}}};
  std::ofstream(d / "definition.json") << def.dump(2);
  std::ofstream(d / "workload.jsonl") << "{\"uuid\": \"a\", \"axes\": {\"B\": 2, \"S\": 3, \"H\": 5}}\n";
  const Task task = load_task(d);
  Binding b;
  b.key = "imported/scaled_sum";
  b.family = "chain";
  b.file = "sum.json";
  b.spec = json::parse(R"J({"stages": [
    {"family": "elementwise", "inputs": ["v", "g"], "output": "t1", "op": "v * g", "broadcast": "torch"},
    {"family": "reduce", "op": "sum", "x": "t1", "y": "y", "dim": [0, 1]}]})J");
  const BoundTask bt = bind_task(task, Backend::cpu, b);
  EXPECT_NE(bt.placeholders.at("RUN").find("int64_t(1) * B * S * H"), std::string::npos) << bt.placeholders.at("RUN");
  const Template& t = *applicable_templates(repo_library(), bt).front();
  const std::string h =
      "#include <cmath>\n#include <cstdio>\nint main() {\n  const long B = 3, S = 4, H = 7;\n"
      "  float v[B * S], g[B * S * H], y[H];\n"
      "  for (long i = 0; i < B * S; ++i) v[i] = 0.5f + i;\n"
      "  for (long i = 0; i < B * S * H; ++i) g[i] = 1.0f / (1 + i);\n"
      "  khive_launch(v, g, y, B, S, H);\n  long bad = 0;\n"
      "  for (long h = 0; h < H; ++h) { double s = 0; for (long r = 0; r < B * S; ++r) s += double(v[r]) * g[r * H + "
      "h];\n"
      "    bad += !(std::fabs(y[h] - s) <= 1e-4 * (1 + std::fabs(s))); }\n"
      "  std::printf(\"bad %ld\\n\", bad);\n  return 0;\n}\n";
  EXPECT_EQ(run_cpu_kernel(generate_prelude(task, Backend::cpu) + render(t, bt, t.default_point()), h, "bcast-mid"),
            "bad 0\n");
}
