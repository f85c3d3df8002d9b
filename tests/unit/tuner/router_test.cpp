// The router family (kernels/router, sol/moe_router): the binding's checks and errors, the workload variables it
// gives the rules, the CUDA template's rules and fast path (SIMT vector loads, tensor-core path), rendering on both
// backends, and the tuner's strategies.
#include <functional>
#include <tuple>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tuner_support.hpp"

namespace {

const fs::path kRepo = repo();
const Library& lib() { return repo_library(); }
const Template& tpl(const char* name) { return repo_template(name); }
Task router() { return repo_task("sol/moe_router"); }
Task edited_router(const std::function<void(json&)>& edit) { return edited_task("sol/moe_router", edit); }
Binding binding_with(const json& spec) { return fixtures::binding_with(router(), spec); }

// A router task described by its workloads only: (T, H, perf), E = 64, K = 8.
BoundTask synthetic(int64_t elem_bytes, std::vector<std::tuple<int64_t, int64_t, bool>> thp) {
  std::vector<std::pair<AxisValues, bool>> ws;
  for (const auto& [t, h, perf] : thp)
    ws.push_back({{{"TOKENS", t}, {"HIDDEN", h}, {"EXPERTS", 64}, {"TOPK", 8}, {"ELEM_BYTES", elem_bytes}}, perf});
  return synthetic_task("router", elem_bytes == 4 ? "float32" : "bfloat16", ws);
}

bool any_contains(const std::vector<std::string>& v, const std::string& a, const std::string& b) {
  for (const auto& s : v)
    if (s.find(a) != std::string::npos && s.find(b) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(RouterBinding, MoeRouterBindsWithItsAxesPerWorkload) {
  const Task task = router();
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(task, be, *lib().binding_for(task));
    EXPECT_EQ(bt.family, "router");
    EXPECT_EQ(bt.dtype, "bfloat16");
    ASSERT_EQ(bt.workload_vars.size(), task.workloads.size());
    for (std::size_t w = 0; w < task.workloads.size(); ++w) {
      const auto& ax = task.workloads[w].axes;
      EXPECT_EQ(bt.workload_vars[w].at("TOKENS"), ax.at("T")) << bt.workload_names[w];
      EXPECT_EQ(bt.workload_vars[w].at("HIDDEN"), ax.at("H")) << bt.workload_names[w];
      EXPECT_EQ(bt.workload_vars[w].at("EXPERTS"), ax.at("E")) << bt.workload_names[w];
      EXPECT_EQ(bt.workload_vars[w].at("TOPK"), 8);  // a const axis
      EXPECT_EQ(bt.workload_vars[w].at("ELEM_BYTES"), 2);
    }
    std::size_t perf = 0;
    for (bool p : bt.workload_perf) perf += p;
    EXPECT_EQ(perf, be == Backend::cuda ? 10u : 4u);  // prefill on CUDA only, T256 on the CPU only
    const std::string& e = bt.placeholders.at("ENTRY");
    EXPECT_NE(e.find(be == Backend::cuda ? "khive_run(x, w, topk_weights, topk_ids, T, H, E, int64_t(8), stream);"
                                         : "khive_run(x, w, topk_weights, topk_ids, T, H, E, int64_t(8));"),
              std::string::npos)
        << e;
    EXPECT_NE(bt.placeholders.at("PROLOGUE").find("khive_to_float_t"), std::string::npos);
  }
}

TEST(RouterBinding, BadFieldsAreErrorsNamingTheField) {
  const Task task = router();
  const json good = lib().binding_for(task)->spec;
  auto with = [&](const char* key, json v) {
    json s = good;
    if (v.is_null())
      s.erase(key);
    else
      s[key] = v;
    return binding_with(s);
  };
  TaskFormatError e = bind_error(task, with("x", "topk_ids"));  // an output
  EXPECT_EQ(e.field, "tasks.moe_router.x");
  EXPECT_NE(e.expected.find("an input tensor"), std::string::npos);
  EXPECT_NE(std::string(e.what()).find("kernels/bindings/sol.json"), std::string::npos) << e.what();
  e = bind_error(task, with("w", "x"));
  EXPECT_EQ(e.field, "tasks.moe_router.w");
  EXPECT_NE(e.expected.find("other than x"), std::string::npos) << e.expected;
  e = bind_error(task, with("w", nullptr));
  EXPECT_EQ(e.field, "tasks.moe_router.w");
  EXPECT_EQ(e.got, "nothing");
  e = bind_error(task, with("topk_weights", "x"));
  EXPECT_EQ(e.field, "tasks.moe_router.topk_weights");
  EXPECT_NE(e.expected.find("an output"), std::string::npos);
  // The two outputs swapped: the weights are int32.
  json swapped = good;
  swapped["topk_weights"] = "topk_ids";
  swapped["topk_ids"] = "topk_weights";
  e = bind_error(task, binding_with(swapped));
  EXPECT_EQ(e.field, "tasks.moe_router.topk_weights");
  EXPECT_NE(e.expected.find("float32"), std::string::npos);
  EXPECT_NE(e.got.find("int32"), std::string::npos);
  e = bind_error(task, with("topk_ids", "topk_weights"));
  EXPECT_EQ(e.field, "tasks.moe_router.topk_ids");
  e = bind_error(task, with("k", 8));
  EXPECT_EQ(e.field, "tasks.moe_router.k");
  EXPECT_NE(e.expected.find("one of the keys family, description, x, w, topk_weights, topk_ids"), std::string::npos)
      << e.expected;
}

TEST(RouterBinding, ShapesDtypesAndTopKAreChecked) {
  const Binding& b = *lib().binding_for(router());
  // w's hidden axis is not x's.
  TaskFormatError e = bind_error(edited_router([](json& d) {
                                   d["inputs"]["w"]["shape"] = json::array({"H", "E"});
                                 }),
                                 b);
  EXPECT_EQ(e.field, "tasks.moe_router.w");
  EXPECT_NE(e.expected.find("[experts, H]"), std::string::npos) << e.expected;
  EXPECT_NE(e.got.find("[H, E]"), std::string::npos) << e.got;
  // w in another dtype than x.
  e = bind_error(edited_router([](json& d) { d["inputs"]["w"]["dtype"] = "float16"; }), b);
  EXPECT_EQ(e.field, "tasks.moe_router.w");
  EXPECT_NE(e.expected.find("bfloat16"), std::string::npos);
  // x not 2-D.
  e = bind_error(edited_router([](json& d) {
                   d["axes"]["B"] = json{{"type", "const"}, {"value", 1}};
                   d["inputs"]["x"]["shape"] = json::array({"B", "T", "H"});
                 }),
                 b);
  EXPECT_EQ(e.field, "tasks.moe_router.x");
  EXPECT_NE(e.expected.find("[tokens, hidden]"), std::string::npos);
  // Outputs: weights not per token of x, ids not int32, ids not the weights' shape.
  e = bind_error(edited_router([](json& d) { d["outputs"]["topk_weights"]["shape"] = json::array({"E", "topk"}); }), b);
  EXPECT_EQ(e.field, "tasks.moe_router.topk_weights");
  EXPECT_NE(e.expected.find("[T, topk]"), std::string::npos) << e.expected;
  e = bind_error(edited_router([](json& d) {
                   d["outputs"]["topk_ids"]["dtype"] = "int64";
                   d["khive"]["tolerance"].erase("topk_ids");
                 }),
                 b);
  EXPECT_EQ(e.field, "tasks.moe_router.topk_ids");
  EXPECT_NE(e.expected.find("int32"), std::string::npos);
  EXPECT_NE(e.got.find("int64"), std::string::npos);
  e = bind_error(edited_router([](json& d) {
                   d["axes"]["k2"] = json{{"type", "const"}, {"value", 8}};
                   d["outputs"]["topk_ids"]["shape"] = json::array({"T", "k2"});
                 }),
                 b);
  EXPECT_EQ(e.field, "tasks.moe_router.topk_ids");
  EXPECT_NE(e.expected.find("[T, topk]"), std::string::npos) << e.expected;
  // A third input the family would ignore.
  e = bind_error(edited_router([](json& d) {
                   d["inputs"]["bias"] = json{{"shape", json::array({"E"})}, {"dtype", "bfloat16"}};
                 }),
                 b);
  EXPECT_EQ(e.field, "tasks.moe_router.x");
  EXPECT_NE(e.got.find("\"bias\" left out"), std::string::npos) << e.got;
  // More experts chosen than there are (the task's own constraint removed): named with the workload.
  e = bind_error(edited_router([](json& d) {
                   d["axes"]["topk"]["value"] = 9;
                   json c = json::array();
                   for (const auto& x : d["constraints"])
                     if (x != "topk <= E") c.push_back(x);
                   d["constraints"] = c;
                 }),
                 b);
  EXPECT_EQ(e.field, "tasks.moe_router.topk_ids");
  EXPECT_NE(e.got.find("topk = 9 with E = 8 experts on workload router-T1-H1-E8"), std::string::npos) << e.got;
}

TEST(RouterRules, CudaPathsFastPathAndLimits) {
  const Template& t = tpl("router.cuda");
  const BoundTask bt = bind_task(router(), Backend::cuda, *lib().binding_for(router()));
  // Default (auto, tensor cores from 128 tokens, VEC 8): every perf shape (H a multiple of 8) takes a fast path;
  // the correctness shapes with H = 1, 7, 100 or 4097 go generic, H = 1000 does not.
  const Validity v = check_point(t, bt, t.default_point());
  ASSERT_TRUE(v.ok) << v.message;
  EXPECT_EQ(v.perf_total, 10u);
  EXPECT_EQ(v.perf_fast, 10u);
  EXPECT_TRUE(any_contains(v.generic, "H = 4097 is not a multiple of VEC 8", "router-T9-H4097-E257"))
      << fast_path_note(v);
  EXPECT_TRUE(any_contains(v.generic, "H = 100 is not a multiple of VEC 8", "router-T17-H100-E60"))
      << fast_path_note(v);
  EXPECT_FALSE(any_contains(v.generic, "", "router-T5-H1000-E8")) << fast_path_note(v);
  // Always tensor cores: H = 100 is a multiple of VEC 4 but not of the 8 elements of a 16-byte cp.async.
  Point mma = t.default_point();
  mma["PATH"] = "mma";
  mma["VEC"] = "4";
  const Validity vm = check_point(t, bt, mma);
  ASSERT_TRUE(vm.ok) << vm.message;
  EXPECT_TRUE(any_contains(vm.generic, "tensor-core path: H = 100 is not a multiple of 8", "router-T17-H100-E60"))
      << fast_path_note(vm);
  Point simt4 = mma;
  simt4["PATH"] = "simt";
  EXPECT_FALSE(any_contains(check_point(t, bt, simt4).generic, "", "router-T17-H100-E60"));
  // fp32 inputs: no tensor cores, and VEC 8 would be a 32-byte load.
  const BoundTask f32 = synthetic(4, {{64, 4096, true}});
  Validity vf = check_point(t, f32, t.default_point());
  EXPECT_FALSE(vf.ok);
  EXPECT_NE(vf.message.find("VEC 8 x 4 B = more than a 16-byte load"), std::string::npos) << vf.message;
  Point p = t.default_point();
  p["VEC"] = "4";
  vf = check_point(t, f32, p);
  EXPECT_FALSE(vf.ok);
  EXPECT_NE(vf.message.find("the tensor-core path takes 16-bit inputs"), std::string::npos) << vf.message;
  p["PATH"] = "simt";
  EXPECT_TRUE(check_point(t, f32, p).ok);
  // Shared memory: 4 stages of (128 + 256) x 72 bf16 (216 KB) fit (the fused logit tile of one expert chunk reuses
  // them), 5 stages (270 KB) do not; a warp layout that does not split the token tile; register-heavy SIMT blocks.
  p = t.default_point();
  p["STAGES"] = "4";
  p["MMA_BK"] = "64";
  p["MMA_TILE_T"] = "128";
  p["MMA_TILE_E"] = "256";
  EXPECT_TRUE(check_point(t, bt, p).ok) << check_point(t, bt, p).message;
  p["STAGES"] = "5";
  Validity vs = check_point(t, bt, p);
  EXPECT_FALSE(vs.ok);
  EXPECT_NE(vs.message.find("276480 B of staged operands > 227 KB"), std::string::npos) << vs.message;
  p["MMA_BK"] = "32";  // 5 x 384 x 40 x 2 B = 150 KB
  EXPECT_TRUE(check_point(t, bt, p).ok) << check_point(t, bt, p).message;
  p["PATH"] = "simt";  // the tensor-core limits do not bind a SIMT-only point
  EXPECT_TRUE(check_point(t, bt, p).ok);
  p = t.default_point();
  p["MMA_TILE_T"] = "16";
  EXPECT_FALSE(check_point(t, bt, p).ok);
  p["MMA_WARPS_M"] = "1";
  EXPECT_TRUE(check_point(t, bt, p).ok);
  p = t.default_point();
  p["TILE_T"] = "64";
  p["BLOCK"] = "512";
  vs = check_point(t, bt, p);
  EXPECT_FALSE(vs.ok);
  EXPECT_NE(vs.message.find("TILE_T 64 accumulators x BLOCK 512 threads"), std::string::npos) << vs.message;
  // Every perf shape has an odd H and auto sends all of them to SIMT: VEC 8 takes none, VEC 1 all.
  const BoundTask odd = synthetic(2, {{16, 4097, true}, {16, 4096, false}});
  const Validity vo = check_point(t, odd, t.default_point());
  EXPECT_FALSE(vo.ok);
  EXPECT_NE(vo.message.find("the fast path takes none of the 1 perf workloads"), std::string::npos) << vo.message;
  p = t.default_point();
  p["VEC"] = "1";
  EXPECT_TRUE(check_point(t, odd, p).ok);
}

TEST(RouterRules, CpuRegisterBlock) {
  const Template& t = tpl("router.cpu");
  const BoundTask bt = bind_task(router(), Backend::cpu, *lib().binding_for(router()));
  ASSERT_TRUE(check_point(t, bt, t.default_point()).ok);
  Point p = t.default_point();
  p["TOKEN_BLOCK"] = "16";
  p["LANES"] = "64";
  const Validity v = check_point(t, bt, p);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.message.find("TOKEN_BLOCK 16 x LANES 64 accumulators"), std::string::npos) << v.message;
  p["LANES"] = "32";
  EXPECT_TRUE(check_point(t, bt, p).ok);
}

TEST(RouterTemplates, RenderBothBackendsAndTheTunerOffersTheirStrategies) {
  const Task task = router();
  const BoundTask bc = bind_task(task, Backend::cuda, *lib().binding_for(task));
  const std::string cu = render(tpl("router.cuda"), bc, tpl("router.cuda").default_point());
  for (const char* s : {"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
                        "constexpr bool kPathSimt = 0, kPathMma = 0;", "constexpr int64_t kMmaMinT = 128;",
                        "khive_run(x, w, topk_weights, topk_ids, T, H, E, int64_t(8), stream);", "extern \"C\""})
    EXPECT_NE(cu.find(s), std::string::npos) << s;
  EXPECT_EQ(cu.find("{{"), std::string::npos);
  const BoundTask bp = bind_task(task, Backend::cpu, *lib().binding_for(task));
  const std::string cpp = render(tpl("router.cpu"), bp, tpl("router.cpu").default_point());
  for (const char* s : {"#pragma omp for schedule(static)", "constexpr int64_t kTokenBlock = 4, kExpertBlock = 8;",
                        "khive_run(x, w, topk_weights, topk_ids, T, H, E, int64_t(8));"})
    EXPECT_NE(cpp.find(s), std::string::npos) << s;
  EXPECT_EQ(cpp.find("{{"), std::string::npos);

  TunerOptions o;
  o.kernels_dir = kRepo / "kernels";
  auto agent = make_tuner_agent(o);
  for (auto [be, want] :
       {std::pair{Backend::cpu,
                  std::vector<std::string>{"router.blocking", "router.vector", "router.schedule", "tuner.dispatch"}},
        std::pair{Backend::cuda, std::vector<std::string>{"router.path", "router.simt", "router.mma_tile",
                                                          "router.mma_pipeline", "tuner.dispatch"}}}) {
    std::vector<std::string> names;
    for (const auto& s : agent->strategies(task, be)) names.push_back(s.name);
    EXPECT_EQ(names, want) << backend_name(be);
  }
}
