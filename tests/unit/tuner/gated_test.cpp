// The gated family (kernels/gated, sol/swiglu): the binding's checks and errors, the workload variables it gives
// the rules, the CUDA template's vector rule and fast path, rendering on both backends, and the tuner's strategies.
#include <functional>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tuner_support.hpp"

namespace {

const fs::path kRepo = repo();
const Library& lib() { return repo_library(); }
const Template& tpl(const char* name) { return repo_template(name); }
Task swiglu() { return repo_task("sol/swiglu"); }
Task edited_swiglu(const std::function<void(json&)>& edit) { return edited_task("sol/swiglu", edit); }
Binding binding_with(const json& spec) { return fixtures::binding_with(swiglu(), spec); }

// A gated task described by its workloads only: (cols, perf) pairs, rows 4.
BoundTask synthetic(int64_t elem_bytes, std::vector<std::pair<int64_t, bool>> cols_perf) {
  std::vector<std::pair<AxisValues, bool>> ws;
  for (const auto& [cols, perf] : cols_perf)
    ws.push_back({{{"ROWS", 4}, {"COLS", cols}, {"ELEM_BYTES", elem_bytes}}, perf});
  return synthetic_task("gated", elem_bytes == 4 ? "float32" : "bfloat16", ws);
}

}  // namespace

TEST(GatedBinding, SwigluBindsWithRowsAndTheOutputRowLength) {
  const Task task = swiglu();
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(task, be, *lib().binding_for(task));
    EXPECT_EQ(bt.family, "gated");
    EXPECT_EQ(bt.dtype, "bfloat16");
    ASSERT_EQ(bt.workload_vars.size(), task.workloads.size());
    for (std::size_t w = 0; w < task.workloads.size(); ++w) {
      const auto& ax = task.workloads[w].axes;
      EXPECT_EQ(bt.workload_vars[w].at("ROWS"), ax.at("T")) << bt.workload_names[w];
      EXPECT_EQ(bt.workload_vars[w].at("COLS"), ax.at("I")) << bt.workload_names[w];  // y's row, half of x's
      EXPECT_EQ(bt.workload_vars[w].at("ELEM_BYTES"), 2);
    }
    // The prefill shapes are perf on CUDA only.
    std::size_t perf = 0;
    for (bool p : bt.workload_perf) perf += p;
    EXPECT_EQ(perf, be == Backend::cuda ? 9u : 5u);
    const std::string& p = bt.placeholders.at("PROLOGUE");
    EXPECT_NE(p.find("KHIVE_HD float khive_op(float gate, float up)"), std::string::npos) << p;
    EXPECT_NE(p.find("return gate / (1.0f + expf(-gate)) * up;"), std::string::npos) << p;
    EXPECT_NE(bt.placeholders.at("ENTRY").find(be == Backend::cuda ? "khive_run(x, y, int64_t(1) * T, I, stream);"
                                                                   : "khive_run(x, y, int64_t(1) * T, I);"),
              std::string::npos)
        << bt.placeholders.at("ENTRY");
  }
}

TEST(GatedBinding, BadFieldsAreErrorsNamingTheField) {
  const Task task = swiglu();
  const json good = lib().binding_for(task)->spec;
  auto with = [&](const char* key, json v) {
    json s = good;
    if (v.is_null())
      s.erase(key);
    else
      s[key] = v;
    return binding_with(s);
  };
  TaskFormatError e = bind_error(task, with("input", "y"));
  EXPECT_EQ(e.field, "tasks.swiglu.input");
  EXPECT_NE(e.expected.find("an input tensor"), std::string::npos);
  EXPECT_NE(std::string(e.what()).find("kernels/bindings/sol.json"), std::string::npos) << e.what();
  e = bind_error(task, with("output", "x"));
  EXPECT_EQ(e.field, "tasks.swiglu.output");
  e = bind_error(task, with("op", nullptr));
  EXPECT_EQ(e.field, "tasks.swiglu.op");
  e = bind_error(task, with("op", json{{"cpu", "gate * up"}}), Backend::cuda);  // no CUDA expression
  EXPECT_EQ(e.field, "tasks.swiglu.op.cuda");
  e = bind_error(task, with("gate", "x"));
  EXPECT_EQ(e.field, "tasks.swiglu.gate");
  EXPECT_NE(e.expected.find("one of the keys family, description, input, output, op"), std::string::npos) << e.expected;
}

TEST(GatedBinding, ShapesAndDtypesAreChecked) {
  const Binding& b = *lib().binding_for(swiglu());
  // x's last axis three times y's: named with the workload.
  TaskFormatError e = bind_error(edited_swiglu([](json& d) { d["axes"]["I2"]["expression"] = "3 * I"; }), b);
  EXPECT_EQ(e.field, "tasks.swiglu.output");
  EXPECT_NE(e.expected.find("half the input's"), std::string::npos) << e.expected;
  EXPECT_NE(e.got.find("I = 1 for I2 = 3 on workload swiglu-T1-I1"), std::string::npos) << e.got;
  // Leading axes differ.
  e = bind_error(edited_swiglu([](json& d) { d["outputs"]["y"]["shape"] = json::array({"I", "I"}); }), b);
  EXPECT_EQ(e.field, "tasks.swiglu.output");
  EXPECT_NE(e.expected.find("the input's leading axes [T]"), std::string::npos) << e.expected;
  EXPECT_NE(e.got.find("[I, I]"), std::string::npos) << e.got;
  // Rank differs.
  e = bind_error(edited_swiglu([](json& d) { d["outputs"]["y"]["shape"] = json::array({"I"}); }), b);
  EXPECT_EQ(e.field, "tasks.swiglu.output");
  // dtype of y differs from x.
  e = bind_error(edited_swiglu([](json& d) { d["outputs"]["y"]["dtype"] = "float16"; }), b);
  EXPECT_EQ(e.field, "tasks.swiglu.output");
  EXPECT_NE(e.expected.find("bfloat16"), std::string::npos);
  EXPECT_NE(e.got.find("float16"), std::string::npos);
  // Not a float type.
  // (Its distributions go too, the task's and the workloads' own: a normal distribution is for floats.)
  const auto no_workload_inputs = [](std::string& w) {
    std::string out;
    std::istringstream in(w);
    for (std::string l; std::getline(in, l);) {
      if (l.empty()) continue;
      auto j = json::parse(l);
      if (j.contains("khive")) j["khive"].erase("inputs");
      out += j.dump() + "\n";
    }
    w = out;
  };
  e = bind_error(edited_task(
                     "sol/swiglu",
                     [](json& d) {
                       d["inputs"]["x"]["dtype"] = "int32";
                       d["outputs"]["y"]["dtype"] = "int32";
                       d["khive"].erase("inputs");
                       d["khive"].erase("tolerance");
                     },
                     no_workload_inputs),
                 b);
  EXPECT_EQ(e.field, "tasks.swiglu.input");
  EXPECT_NE(e.expected.find("float32, bfloat16 or float16"), std::string::npos);
  // A second input the family would ignore.
  e = bind_error(edited_swiglu([](json& d) {
                   d["inputs"]["bias"] = json{{"shape", json::array({"I"})}, {"dtype", "bfloat16"}};
                 }),
                 b);
  EXPECT_EQ(e.field, "tasks.swiglu.input");
  EXPECT_NE(e.got.find("\"bias\" left out"), std::string::npos) << e.got;
}

TEST(GatedRules, VectorWidthAndFastPath) {
  const Template& t = tpl("gated.cuda");
  const BoundTask bt = bind_task(swiglu(), Backend::cuda, *lib().binding_for(swiglu()));
  // Default (VEC 8 = 16 bytes of bf16): every perf shape (I = 4096, 14336, 28672) takes the vector path; the odd
  // correctness shapes go generic.
  const Validity v = check_point(t, bt, t.default_point());
  ASSERT_TRUE(v.ok) << v.message;
  EXPECT_EQ(v.perf_total, 9u);
  EXPECT_EQ(v.perf_fast, 9u);
  bool odd = false, i1000 = false;
  for (const auto& g : v.generic) {
    odd |= g.find("a row of 4097 is not a multiple of VEC 8") != std::string::npos &&
           g.find("swiglu-T9-I4097") != std::string::npos;
    i1000 |= g.find("swiglu-T17-I1000") != std::string::npos;
  }
  EXPECT_TRUE(odd) << fast_path_note(v);
  EXPECT_FALSE(i1000) << "1000 is a multiple of 8";
  Point scalar = t.default_point();
  scalar["VEC"] = "1";
  const Validity vs = check_point(t, bt, scalar);
  ASSERT_TRUE(vs.ok);
  EXPECT_TRUE(vs.generic.empty());
  // fp32: VEC 8 would be a 32-byte access; VEC 4 is fine.
  const BoundTask f32 = synthetic(4, {{4096, true}});
  const Validity vf = check_point(t, f32, t.default_point());
  EXPECT_FALSE(vf.ok);
  EXPECT_NE(vf.message.find("VEC 8 x 4 B = more than a 16-byte access"), std::string::npos) << vf.message;
  Point v4 = t.default_point();
  v4["VEC"] = "4";
  EXPECT_TRUE(check_point(t, f32, v4).ok);
  // Every perf row odd: a vector width > 1 takes no timed shape and is ruled out; VEC 1 is not.
  const BoundTask oddperf = synthetic(2, {{4097, true}, {14336, false}});
  const Validity vo = check_point(t, oddperf, t.default_point());
  EXPECT_FALSE(vo.ok);
  EXPECT_NE(vo.message.find("the fast path takes none of the 1 perf workloads"), std::string::npos) << vo.message;
  EXPECT_TRUE(check_point(t, oddperf, scalar).ok);
}

TEST(GatedTemplates, RenderBothPathsAndTheTunerOffersTheirStrategies) {
  const Task task = swiglu();
  const BoundTask bc = bind_task(task, Backend::cuda, *lib().binding_for(task));
  const std::string cu = render(tpl("gated.cuda"), bc, tpl("gated.cuda").default_point());
  for (const char* s : {"khive_gated_vec<<<grid, kBlock, 0, stream>>>(x, y, rows, n)",
                        "khive_gated_scalar<<<grid, kBlock, 0, stream>>>(x, y, rows, cols)", "cols % kVec == 0",
                        "constexpr int kVec = 8, kItems = 2, kBlock = 128;", "extern \"C\""})
    EXPECT_NE(cu.find(s), std::string::npos) << s;
  EXPECT_EQ(cu.find("{{"), std::string::npos);
  const BoundTask bp = bind_task(task, Backend::cpu, *lib().binding_for(task));
  const std::string cpp = render(tpl("gated.cpu"), bp, tpl("gated.cpu").default_point());
  for (const char* s : {"#pragma omp parallel for schedule(static)", "constexpr int64_t kChunk = 4096;",
                        "khive_run(x, y, int64_t(1) * T, I);"})
    EXPECT_NE(cpp.find(s), std::string::npos) << s;
  EXPECT_EQ(cpp.find("{{"), std::string::npos);

  TunerOptions o;
  o.kernels_dir = kRepo / "kernels";
  auto agent = make_tuner_agent(o);
  for (auto [be, want] :
       {std::pair{Backend::cpu, std::vector<std::string>{"gated.vector", "gated.schedule", "tuner.dispatch"}},
        std::pair{Backend::cuda, std::vector<std::string>{"gated.vector", "gated.launch", "tuner.dispatch"}}}) {
    std::vector<std::string> names;
    for (const auto& s : agent->strategies(task, be)) names.push_back(s.name);
    EXPECT_EQ(names, want) << backend_name(be);
  }
}
