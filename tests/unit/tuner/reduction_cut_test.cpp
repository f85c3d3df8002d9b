// References of one output cut as a graph of stages (recognize_dag.py for one output, issue 24): a softmax backward is
// a pointwise product, a row sum kept as [*, 1] and a pointwise stage reading it broadcast; a softmax after pointwise
// ops (Gemma's soft-capping) is a pointwise stage then the softmax, of any float storage type (bf16 here: the
// softmax gate took float32 only). Both bind from khive.op.stages as recognize.py writes them, on cpu and cuda; the
// rendered CPU chains are checked against the formula in double precision over sizes other than the workloads', with
// a planted wrong stage that must fail.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tuner_support.hpp"

#include "khive/compile/builder.hpp"
#include "khive/tuner/auto_bind.hpp"

namespace {

// A task of inputs `ins` and one output `out` ({name, shape}) over var axes B, H, T, of `dtype`, with khive.op = op.
Task one_output(const std::string& name, const std::vector<std::pair<std::string, std::vector<std::string>>>& ins,
                const std::pair<std::string, std::vector<std::string>>& out, const json& op,
                const std::string& dtype = "float32", const std::string& out_dtype = "") {
  const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-tuner-test") / "imported" / name;
  fs::create_directories(d);
  json def = {{"name", name},
              {"axes", {{"B", {{"type", "var"}}}, {"H", {{"type", "var"}}}, {"T", {{"type", "var"}}}}},
              {"inputs", json::object()},
              {"outputs", json::object()}};
  for (const auto& [n, sh] : ins) def["inputs"][n] = {{"shape", sh}, {"dtype", dtype}};
  def["outputs"][out.first] = {{"shape", out.second}, {"dtype", out_dtype.empty() ? dtype : out_dtype}};
  if (!op.is_null()) def["khive"] = {{"op", op}};
  std::ofstream(d / "definition.json") << def.dump(2);
  std::ofstream(d / "workload.jsonl") << "{\"uuid\": \"a\", \"axes\": {\"B\": 2, \"H\": 3, \"T\": 5}}\n"
                                         "{\"uuid\": \"b\", \"axes\": {\"B\": 1, \"H\": 4, \"T\": 33}}\n";
  return load_task(d);
}

// gx = y * (g - sum(y * g, -1, keepdim)) * 0.125 over [B, H, T, T], as recognize.py cuts it.
json softmax_back_op(const std::string& last = "((y * (g - khive_t2)) * 0.125f)") {
  json op = json::parse(R"J({"op": "chain", "family": "chain", "ops": ["mul", "sum", "sub", "mul", "mul"],
    "stages": [
      {"op": "elementwise", "family": "elementwise", "expression": "(y * g)", "flags": ["named_inputs",
       "torch_broadcast"], "inputs": ["y", "g"], "output": "khive_t1"},
      {"op": "sum", "family": "reduce", "dim": -1, "flags": ["keepdim"], "inputs": ["khive_t1"], "output": "khive_t2"},
      {"op": "elementwise", "family": "elementwise", "expression": "", "flags": ["named_inputs", "torch_broadcast"],
       "inputs": ["y", "g", "khive_t2"], "output": "gx"}]})J");
  op["stages"][2]["expression"] = last;
  return op;
}

Task softmax_back(const json& op) {
  const std::vector<std::string> s{"B", "H", "T", "T"};
  return one_output("softmax_back", {{"g", s}, {"y", s}}, {"gx", s}, op);
}

std::string softmax_back_harness(const std::vector<std::array<long, 3>>& sizes) {
  std::string h =
      "#include <cmath>\n#include <cstdio>\n#include <random>\n#include <vector>\nint main() {\n"
      "  std::mt19937 gen(3);\n  std::normal_distribution<float> d(0.0f, 1.0f);\n  long bad = 0;\n";
  for (const auto& [B, H, T] : sizes)
    h += fmt::format(
        "  {{ const long B = {}, H = {}, T = {}, R = B * H * T;\n"
        "    std::vector<float> g(R * T), y(R * T), gx(R * T, -7.f);\n"
        "    for (auto& v : g) v = d(gen); for (auto& v : y) v = d(gen);\n"
        "    khive_launch(g.data(), y.data(), gx.data(), B, H, T);\n"
        "    for (long r = 0; r < R; ++r) {{ double s = 0, a = 0;\n"
        "      for (long j = 0; j < T; ++j) {{ s += double(y[r * T + j]) * g[r * T + j]; a += std::fabs(double(y[r * "
        "T + j]) * g[r * T + j]); }}\n"
        "      for (long j = 0; j < T; ++j) {{ const double want = y[r * T + j] * (g[r * T + j] - s) * 0.125;\n"
        "        bad += !(std::fabs(gx[r * T + j] - want) <= 1e-5 * (1.0 + a) * (1.0 + std::fabs(y[r * T + j]))); "
        "}} }} }}\n",
        B, H, T);
  return h + "  std::printf(\"bad %ld\\n\", bad);\n  return 0;\n}\n";
}

// p = softmax(tanh(x / 30) * 30, -1) over [B, H, T], as recognize.py cuts it.
json softcap_op(const std::string& first = "(tanhf((x / 30.0f)) * 30.0f)") {
  json op = json::parse(R"J({"op": "chain", "family": "chain", "ops": ["div", "tanh", "mul", "_softmax"],
    "stages": [
      {"op": "elementwise", "family": "elementwise", "expression": "", "flags": ["named_inputs", "torch_broadcast"],
       "inputs": ["x"], "output": "khive_t1"},
      {"op": "softmax", "family": "softmax", "dim": 2, "inputs": ["khive_t1"], "output": "p"}]})J");
  op["stages"][0]["expression"] = first;
  return op;
}

Task softcap(const json& op, const std::string& dtype = "float32") {
  const std::vector<std::string> s{"B", "H", "T"};
  return one_output(fmt::format("softcap_{}", dtype), {{"x", s}}, {"p", s}, op, dtype);
}

std::string softcap_harness(const std::vector<std::array<long, 3>>& sizes) {
  std::string h =
      "#include <cmath>\n#include <cstdio>\n#include <random>\n#include <vector>\nint main() {\n"
      "  std::mt19937 gen(4);\n  std::normal_distribution<float> d(0.0f, 40.0f);\n  long bad = 0;\n";
  for (const auto& [B, H, T] : sizes)
    h += fmt::format(
        "  {{ const long B = {}, H = {}, T = {}, R = B * H;\n"
        "    std::vector<float> x(R * T), p(R * T, -7.f);\n"
        "    for (auto& v : x) v = d(gen);\n"
        "    khive_launch(x.data(), p.data(), B, H, T);\n"
        "    for (long r = 0; r < R; ++r) {{ double m = -1e300, s = 0; std::vector<double> c(T);\n"
        "      for (long j = 0; j < T; ++j) {{ c[j] = std::tanh(double(x[r * T + j]) / 30.0) * 30.0; m = c[j] > m ? "
        "c[j] : m; }}\n"
        "      for (long j = 0; j < T; ++j) s += std::exp(c[j] - m);\n"
        "      for (long j = 0; j < T; ++j) bad += !(std::fabs(p[r * T + j] - std::exp(c[j] - m) / s) <= 1e-5); }} "
        "}}\n",
        B, H, T);
  return h + "  std::printf(\"bad %ld\\n\", bad);\n  return 0;\n}\n";
}

// The CPU chain `task` binds to, rendered at its default point, must pass the harness `h`; the same template
// rendered for `planted` (one stage's formula wrong) must fail it. Returns the template's name.
std::string expect_exact_and_planted_caught(const Task& task, const Task& planted, const std::string& h,
                                            const std::string& tag) {
  std::string why;
  auto b = infer_binding(task, &why);
  auto pb = infer_binding(planted, &why);
  if (!b || !pb) {
    ADD_FAILURE() << tag << ": " << why;
    return "";
  }
  const BoundTask bt = bind_task(task, Backend::cpu, *b);
  const Template& t = *applicable_templates(repo_library(), bt).front();
  EXPECT_EQ(run_cpu_kernel(generate_prelude(task, Backend::cpu) + render(t, bt, t.default_point()), h, tag), "bad 0\n");
  const BoundTask pbt = bind_task(planted, Backend::cpu, *pb);
  EXPECT_NE(
      run_cpu_kernel(generate_prelude(planted, Backend::cpu) + render(t, pbt, t.default_point()), h, tag + "-planted"),
      "bad 0\n");
  return t.name;
}

}  // namespace

TEST(ReductionCut, ASoftmaxBackwardIsAProductARowSumAndAStageReadingItBroadcast) {
  const Task task = softmax_back(softmax_back_op());
  std::string why;
  auto b = infer_binding(task, &why);
  ASSERT_TRUE(b) << why;
  ASSERT_EQ(b->family, "chain");
  const json& st = b->spec["stages"];
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[1]["family"], "reduce");
  EXPECT_EQ(st[1]["keepdim"], true);
  for (Backend be : {Backend::cpu, Backend::cuda}) EXPECT_EQ(bind_task(task, be, *b).stages.size(), 3u);
  // Planted: the last stage off by 1e-3 times the row sum it reads must fail the check.
  EXPECT_EQ(expect_exact_and_planted_caught(
                task, softmax_back(softmax_back_op("((y * (g - khive_t2)) * 0.125f + 1e-3f * khive_t2)")),
                softmax_back_harness({{1, 1, 1}, {2, 3, 7}, {1, 2, 130}, {3, 1, 41}}), "smb"),
            "chain:elementwise.cpu+reduce.cpu+elementwise.cpu");
}

TEST(ReductionCut, ASoftmaxAfterPointwiseOpsBindsInBf16AndMatchesInFloat32) {
  // bf16: the softmax stage binds (the row-op templates compute in float and round at the store)
  const Task bf = softcap(softcap_op(), "bfloat16");
  std::string why;
  auto b = infer_binding(bf, &why);
  ASSERT_TRUE(b) << why;
  const json& st = b->spec["stages"];
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[1]["family"], "rowop");
  EXPECT_EQ(st[1]["op"], "softmax");
  EXPECT_EQ(st[1]["dim"], 2);
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(bf, be, *b);
    ASSERT_EQ(bt.stages.size(), 2u);
    EXPECT_EQ(bt.stages[1].dtype, "bfloat16");
  }
  // float32: the rendered chain against the formula; a planted wrong cap must fail it
  EXPECT_FALSE(expect_exact_and_planted_caught(softcap(softcap_op()),
                                               softcap(softcap_op("(tanhf((x / 30.0f)) * 29.0f)")),
                                               softcap_harness({{1, 1, 1}, {2, 3, 9}, {1, 2, 200}}), "softcap")
                   .empty());
}

TEST(ReductionCut, ASoftmaxOfAnotherOutputTypeIsRefused) {
  // one softmax of a bf16 input into a float32 output: the row-op templates store x's type
  const std::vector<std::string> s{"B", "H", "T"};
  const json op = {{"op", "softmax"}, {"family", "softmax"}, {"dim", 2}, {"ops", {"_softmax"}}};
  const Task t = one_output("softmax_mixed", {{"x", s}}, {"p", s}, op, "bfloat16", "float32");
  std::string why;
  EXPECT_FALSE(infer_binding(t, &why));
  EXPECT_NE(
      why.find("'softmax': expected one float32, bfloat16 or float16 input and one output of its shape and dtype"),
      std::string::npos)
      << why;
  const Task same = one_output("softmax_bf16", {{"x", s}}, {"p", s}, op, "bfloat16");
  auto b = infer_binding(same, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "rowop");
}

namespace {

// y = (x - mean) / sqrt(var + eps) * w + b over x [T, H]'s last axis, eps a scalar input (a reference's eps argument,
// which SOL's workloads vary: L2 023 has 1e-5 and 1e-6).
Task layer_norm_eps() {
  const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-tuner-test") / "imported" / "ln_eps";
  fs::create_directories(d);
  auto f32 = [](std::initializer_list<const char*> s) { return json{{"shape", s}, {"dtype", "float32"}}; };
  json def = {{"name", "ln_eps"},
              {"axes", {{"T", {{"type", "var"}}}, {"H", {{"type", "var"}}}}},
              {"inputs",
               {{"x", f32({"T", "H"})},
                {"w", f32({"H"})},
                {"b", f32({"H"})},
                {"eps", {{"shape", nullptr}, {"dtype", "float32"}}}}},
              {"outputs", {{"y", f32({"T", "H"})}}}};
  std::ofstream(d / "definition.json") << def.dump(2);
  std::ofstream(d / "workload.jsonl") << "{\"uuid\": \"a\", \"axes\": {\"T\": 3, \"H\": 8}, \"inputs\": {\"eps\": "
                                         "{\"type\": \"scalar\", \"value\": 1e-5}}}\n";
  return load_task(d);
}

Binding norm_binding(const json& eps) {
  Binding b;
  b.key = "imported/ln_eps";
  b.family = "norm";
  b.file = "ln.json";
  b.spec = json{{"stat", "var"}, {"x", "x"},      {"y", "y"},    {"axes", {1}},
                {"eps", eps},    {"weight", "w"}, {"bias", "b"}, {"affine_axes", {1}}};
  return b;
}

}  // namespace

// A normalisation's eps may name a float scalar input, read per call (bind/norm.cpp), as a row op's may; a chain's
// norm stage then reads that input (chain.cpp's stage inputs), and recognize.py names it (khive.op.operands.eps).
TEST(ReductionCut, ANormsEpsNamesAScalarInputReadPerCall) {
  const Task task = layer_norm_eps();
  const BoundTask bt = bind_task(task, Backend::cpu, norm_binding("eps"));
  EXPECT_NE(bt.placeholders.at("ENTRY").find("static_cast<float>(eps)"), std::string::npos)
      << bt.placeholders.at("ENTRY");
  EXPECT_NO_THROW(bind_task(task, Backend::cuda, norm_binding("eps")));
  for (const json& bad : {json("x"), json("nope"), json(-1.0)}) {
    try {
      bind_task(task, Backend::cpu, norm_binding(bad));
      ADD_FAILURE() << bad.dump() << " bound";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("eps: expected a number >= 0 or the name of a float scalar input"),
                std::string::npos)
          << e.what();
    }
  }
  // a number leaves the scalar unbound: refused, naming it
  try {
    bind_task(task, Backend::cpu, norm_binding(1e-5));
    ADD_FAILURE() << "eps as a number bound with the scalar input left out";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("\"eps\" left out"), std::string::npos) << e.what();
  }
  // The rendered kernel reads the eps it is called with: 0.25 here, where 1e-5 would be far off.
  const Template& t = repo_template("norm.cpu");
  const std::string h =
      "#include <cmath>\n#include <cstdio>\n#include <vector>\nint main() {\n  long bad = 0;\n"
      "  for (long T : {1L, 5L}) for (long H : {3L, 70L}) {\n"
      "    std::vector<float> x(T * H), w(H), b(H), y(T * H, -7.f);\n"
      "    for (long i = 0; i < T * H; ++i) x[i] = 0.01f * float((i * 37) % 23) - 0.1f;\n"
      "    for (long j = 0; j < H; ++j) { w[j] = 0.5f + 0.1f * float(j % 5); b[j] = 0.2f * float(j % 3) - 0.2f; }\n"
      "    khive_launch(x.data(), w.data(), b.data(), 0.25f, y.data(), T, H);\n"
      "    for (long r = 0; r < T; ++r) { double m = 0, v = 0;\n"
      "      for (long j = 0; j < H; ++j) m += x[r * H + j]; m /= H;\n"
      "      for (long j = 0; j < H; ++j) v += (x[r * H + j] - m) * (x[r * H + j] - m); v /= H;\n"
      "      for (long j = 0; j < H; ++j) { const double want = (x[r * H + j] - m) / std::sqrt(v + 0.25) * w[j] + "
      "b[j];\n"
      "        bad += !(std::fabs(y[r * H + j] - want) <= 1e-5); } } }\n"
      "  std::printf(\"bad %ld\\n\", bad);\n  return 0;\n}\n";
  EXPECT_EQ(run_cpu_kernel(generate_prelude(task, Backend::cpu) + render(t, bt, t.default_point()), h, "ln-eps"),
            "bad 0\n");
  // Planted: the eps baked as the traced 1e-5 must fail.
  std::string planted = render(t, bt, t.default_point());
  const auto at = planted.find("static_cast<float>(eps)");
  ASSERT_NE(at, std::string::npos);
  planted.replace(at, std::string("static_cast<float>(eps)").size(), "1e-5f");
  EXPECT_NE(run_cpu_kernel(generate_prelude(task, Backend::cpu) + planted, h, "ln-eps-planted"), "bad 0\n");
  // In a chain, the norm stage reads the scalar: the chain task's eps is no unread input.
  const json op = json::parse(R"J({"op": "chain", "family": "chain", "ops": ["native_layer_norm", "relu"],
    "stages": [
      {"op": "norm", "family": "norm", "norm": {"stat": "var", "axes": [1], "eps": 1e-05, "affine_axes": [1]},
       "operands": {"x": "x", "weight": "w", "bias": "b", "eps": "eps"}, "inputs": ["x", "w", "b", "eps"],
       "output": "khive_t1"},
      {"op": "elementwise", "family": "elementwise", "expression": "fmaxf(khive_t1, 0.0f)",
       "flags": ["named_inputs", "torch_broadcast"], "inputs": ["khive_t1"], "output": "y"}]})J");
  const fs::path dir = task.dir;
  json def = json::parse(std::ifstream(dir / "definition.json"));
  def["khive"] = {{"op", op}};
  std::ofstream(dir / "definition.json") << def.dump(2);
  const Task chained = load_task(dir);
  std::string why;
  auto cb = infer_binding(chained, &why);
  ASSERT_TRUE(cb) << why;
  EXPECT_EQ(cb->spec["stages"][0]["eps"], "eps");
  EXPECT_FALSE(cb->spec.contains("unread")) << cb->spec.dump();
  for (Backend be : {Backend::cpu, Backend::cuda}) EXPECT_EQ(bind_task(chained, be, *cb).stages.size(), 2u);
}
