// The rope family (kernels/rope, sol/rope): the binding's checks and errors, the workload variables it gives the
// rules, the CUDA template's access-width rule and fast path, rendering on both backends, and the strategies.
#include <functional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tuner_support.hpp"

namespace {

const fs::path kRepo = repo();
const Library& lib() { return repo_library(); }
const Template& tpl(const char* name) { return repo_template(name); }
Task rope() { return repo_task("sol/rope"); }
Task edited_rope(const std::function<void(json&)>& edit, const std::string& extra_workload = "") {
  if (extra_workload.empty()) return edited_task("sol/rope", edit);
  return edited_task("sol/rope", edit, [&](std::string& w) { w += extra_workload + "\n"; });
}
Binding binding_with(const json& spec) { return fixtures::binding_with(rope(), spec); }

// A rope task described by its workloads only: (D, perf) pairs, T 512, Hq 32, Hkv 8.
BoundTask synthetic(int64_t elem_bytes, std::vector<std::pair<int64_t, bool>> d_perf) {
  std::vector<std::pair<AxisValues, bool>> ws;
  for (const auto& [d, perf] : d_perf)
    ws.push_back({{{"TOKENS", 512}, {"HQ", 32}, {"HKV", 8}, {"D", d}, {"ELEM_BYTES", elem_bytes}}, perf});
  return synthetic_task("rope", elem_bytes == 4 ? "float32" : "bfloat16", ws);
}

}  // namespace

TEST(RopeBinding, SolRopeBindsWithTokensHeadsAndHeadDim) {
  const Task task = rope();
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(task, be, *lib().binding_for(task));
    EXPECT_EQ(bt.family, "rope");
    EXPECT_EQ(bt.op, "rope");
    EXPECT_EQ(bt.dtype, "bfloat16");
    ASSERT_EQ(bt.workload_vars.size(), task.workloads.size());
    for (std::size_t w = 0; w < task.workloads.size(); ++w) {
      const auto& ax = task.workloads[w].axes;
      EXPECT_EQ(bt.workload_vars[w].at("TOKENS"), ax.at("T")) << bt.workload_names[w];
      EXPECT_EQ(bt.workload_vars[w].at("HQ"), ax.at("Hq")) << bt.workload_names[w];
      EXPECT_EQ(bt.workload_vars[w].at("HKV"), ax.at("Hkv")) << bt.workload_names[w];
      EXPECT_EQ(bt.workload_vars[w].at("D"), ax.at("D")) << bt.workload_names[w];
      EXPECT_EQ(bt.workload_vars[w].at("ELEM_BYTES"), 2);
    }
    // T >= 512 is timed on CUDA only, T = 256 on the CPU only.
    std::size_t perf = 0;
    for (bool p : bt.workload_perf) perf += p;
    EXPECT_EQ(perf, be == Backend::cuda ? 9u : 5u);
    const std::string want = be == Backend::cuda ? "khive_run(q, k, cos, sin, q_out, k_out, T, Hq, Hkv, D, stream);"
                                                 : "khive_run(q, k, cos, sin, q_out, k_out, T, Hq, Hkv, D);";
    EXPECT_NE(bt.placeholders.at("ENTRY").find(want), std::string::npos) << bt.placeholders.at("ENTRY");
    EXPECT_NE(bt.placeholders.at("PROLOGUE").find("using khive_t = "), std::string::npos);
  }
}

TEST(RopeBinding, BadFieldsAreErrorsNamingTheField) {
  const Task task = rope();
  const json good = lib().binding_for(task)->spec;
  auto with = [&](const char* key, json v) {
    json s = good;
    if (v.is_null())
      s.erase(key);
    else
      s[key] = v;
    return binding_with(s);
  };
  TaskFormatError e = bind_error(task, with("q", "q_out"));  // an output, not an input
  EXPECT_EQ(e.field, "tasks.rope.q");
  EXPECT_NE(e.expected.find("an input tensor"), std::string::npos) << e.expected;
  EXPECT_NE(std::string(e.what()).find("kernels/bindings/sol.json"), std::string::npos) << e.what();
  e = bind_error(task, with("k", nullptr));
  EXPECT_EQ(e.field, "tasks.rope.k");
  EXPECT_EQ(e.got, "nothing");
  e = bind_error(task, with("k", "q"));  // same tensor twice
  EXPECT_EQ(e.field, "tasks.rope.k");
  EXPECT_NE(e.expected.find("a tensor of its own"), std::string::npos) << e.expected;
  e = bind_error(task, with("cos", "q"));  // bf16 [T, Hq, D]
  EXPECT_EQ(e.field, "tasks.rope.cos");
  EXPECT_NE(e.expected.find("a float32 tensor"), std::string::npos) << e.expected;
  EXPECT_EQ(e.got, "bfloat16");
  e = bind_error(task, with("sin", "cos"));
  EXPECT_EQ(e.field, "tasks.rope.sin");
  e = bind_error(task, with("q_out", "k_out"));  // k's shape, not q's
  EXPECT_EQ(e.field, "tasks.rope.q_out");
  EXPECT_NE(e.expected.find("q's dtype and shape [T, Hq, D]"), std::string::npos) << e.expected;
  EXPECT_NE(e.got.find("[T, Hkv, D]"), std::string::npos) << e.got;
  e = bind_error(task, with("k_out", "q"));
  EXPECT_EQ(e.field, "tasks.rope.k_out");
  EXPECT_NE(e.expected.find("an output"), std::string::npos) << e.expected;
  e = bind_error(task, with("v", "k"));
  EXPECT_EQ(e.field, "tasks.rope.v");
  EXPECT_NE(e.expected.find("one of the keys family, description, q, k, cos, sin, q_out, k_out"), std::string::npos)
      << e.expected;
}

TEST(RopeBinding, ShapesAndDtypesAreChecked) {
  const Binding& b = *lib().binding_for(rope());
  // cos over the whole head dim instead of one value per pair: named with the first workload.
  TaskFormatError e = bind_error(edited_rope([](json& d) {
                                   d["inputs"]["cos"]["shape"] = json::array({"T", "D"});
                                   d["inputs"]["sin"]["shape"] = json::array({"T", "D"});
                                 }),
                                 b);
  EXPECT_EQ(e.field, "tasks.rope.cos");
  EXPECT_NE(e.expected.find("D / 2"), std::string::npos) << e.expected;
  EXPECT_NE(e.got.find("D = 2 for D = 2 on workload rope-T1-Hq1-Hkv1-D2"), std::string::npos) << e.got;
  // cos and sin of different shapes.
  e = bind_error(edited_rope([](json& d) { d["inputs"]["sin"]["shape"] = json::array({"T", "D"}); }), b);
  EXPECT_EQ(e.field, "tasks.rope.sin");
  EXPECT_NE(e.expected.find("cos's shape [T, h]"), std::string::npos) << e.expected;
  // cos not per token.
  e = bind_error(edited_rope([](json& d) { d["inputs"]["cos"]["shape"] = json::array({"h"}); }), b);
  EXPECT_EQ(e.field, "tasks.rope.cos");
  EXPECT_NE(e.got.find("of shape [h]"), std::string::npos) << e.got;
  // cos in bf16.
  e = bind_error(edited_rope([](json& d) {
                   d["inputs"]["cos"]["dtype"] = "bfloat16";
                   d["inputs"]["sin"]["dtype"] = "bfloat16";
                 }),
                 b);
  EXPECT_EQ(e.field, "tasks.rope.cos");
  EXPECT_EQ(e.got, "bfloat16");
  // k with another head dim than q.
  e = bind_error(edited_rope([](json& d) {
                   d["inputs"]["k"]["shape"] = json::array({"T", "Hkv", "h"});
                   d["outputs"]["k_out"]["shape"] = json::array({"T", "Hkv", "h"});
                 }),
                 b);
  EXPECT_EQ(e.field, "tasks.rope.k");
  EXPECT_NE(e.expected.find("shape [T, Hkv, D]"), std::string::npos) << e.expected;
  EXPECT_NE(e.got.find("[T, Hkv, h]"), std::string::npos) << e.got;
  // k in another dtype.
  e = bind_error(edited_rope([](json& d) {
                   d["inputs"]["k"]["dtype"] = "float16";
                   d["outputs"]["k_out"]["dtype"] = "float16";
                 }),
                 b);
  EXPECT_EQ(e.field, "tasks.rope.k");
  EXPECT_NE(e.expected.find("q's dtype bfloat16"), std::string::npos) << e.expected;
  // q without a head axis.
  e = bind_error(edited_rope([](json& d) {
                   d["inputs"]["q"]["shape"] = json::array({"T", "D"});
                   d["outputs"]["q_out"]["shape"] = json::array({"T", "D"});
                 }),
                 b);
  EXPECT_EQ(e.field, "tasks.rope.q");
  EXPECT_NE(e.expected.find("shape [T, Hq, D]"), std::string::npos) << e.expected;
  // q_out in float16.
  e = bind_error(edited_rope([](json& d) { d["outputs"]["q_out"]["dtype"] = "float16"; }), b);
  EXPECT_EQ(e.field, "tasks.rope.q_out");
  EXPECT_NE(e.got.find("float16"), std::string::npos) << e.got;
  // A fifth input the family would ignore.
  e = bind_error(edited_rope([](json& d) {
                   d["inputs"]["positions"] = json{{"shape", json::array({"T"})}, {"dtype", "float32"}};
                 }),
                 b);
  EXPECT_EQ(e.field, "tasks.rope.q");
  EXPECT_NE(e.got.find("\"positions\" left out"), std::string::npos) << e.got;
  // An odd head dim on one workload (the task's own constraint lifted): no pair for the last element.
  e = bind_error(
      edited_rope(
          [](json& d) { d["constraints"] = json::array({"T >= 1"}); },
          R"({"uuid": "rope-odd", "axes": {"T": 2, "Hq": 1, "Hkv": 1, "D": 3}, "khive": {"role": "correctness"}})"),
      b);
  EXPECT_EQ(e.field, "tasks.rope.q");
  EXPECT_NE(e.expected.find("an even head dim"), std::string::npos) << e.expected;
  EXPECT_NE(e.got.find("D = 3 on workload rope-odd"), std::string::npos) << e.got;
}

TEST(RopeRules, AccessWidthAndFastPath) {
  const Template& t = tpl("rope.cuda");
  const BoundTask bt = bind_task(rope(), Backend::cuda, *lib().binding_for(rope()));
  // Default (VEC 8 = 16 bytes of bf16): every perf shape (D = 64, 128) takes the vector path; D = 2 and D = 10
  // (1 and 5 pairs) go generic, D = 64 with 4 vectors of pairs does not.
  const Validity v = check_point(t, bt, t.default_point());
  ASSERT_TRUE(v.ok) << v.message;
  EXPECT_EQ(v.perf_total, 9u);
  EXPECT_EQ(v.perf_fast, 9u);
  ASSERT_EQ(v.generic.size(), 2u) << fast_path_note(v);
  EXPECT_NE(v.generic[0].find("D = 2: its D/2 rotation pairs are not a multiple of VEC 8"), std::string::npos)
      << v.generic[0];
  EXPECT_NE(v.generic[0].find("rope-T1-Hq1-Hkv1-D2"), std::string::npos) << v.generic[0];
  EXPECT_NE(v.generic[1].find("rope-T5-Hq3-Hkv1-D10"), std::string::npos) << v.generic[1];
  // VEC 1: every shape vectorizes (one pair per access); VEC 2 still leaves 1 and 5 pairs generic.
  Point p = t.default_point();
  p["VEC"] = "1";
  Validity vp = check_point(t, bt, p);
  ASSERT_TRUE(vp.ok) << vp.message;
  EXPECT_TRUE(vp.generic.empty()) << fast_path_note(vp);
  p["VEC"] = "2";
  vp = check_point(t, bt, p);
  ASSERT_TRUE(vp.ok);
  ASSERT_EQ(vp.generic.size(), 2u) << fast_path_note(vp);
  EXPECT_NE(vp.generic[1].find("D = 10: its D/2 rotation pairs are not a multiple of VEC 2"), std::string::npos)
      << vp.generic[1];
  // fp32: VEC 8 would be a 32-byte access; VEC 4 is fine.
  const BoundTask f32 = synthetic(4, {{128, true}});
  const Validity vf = check_point(t, f32, t.default_point());
  EXPECT_FALSE(vf.ok);
  EXPECT_NE(vf.message.find("VEC 8 x 4 B = more than a 16-byte access"), std::string::npos) << vf.message;
  p = t.default_point();
  p["VEC"] = "4";
  EXPECT_TRUE(check_point(t, f32, p).ok);
  // Registers: HEADS_PER_THREAD x VEC pairs of both halves live at once; 8 x 8 bf16 pairs (~200 registers) fit 256
  // threads of an SM's 65536, not 512; the default's 2 x 8 (~80) does not fit 1024.
  p = t.default_point();
  p["HEADS_PER_THREAD"] = "8";
  p["BLOCK"] = "512";
  const Validity vr = check_point(t, bt, p);
  EXPECT_FALSE(vr.ok);
  EXPECT_NE(vr.message.find("about 200 registers per thread (HEADS_PER_THREAD 8 x VEC 8 pairs of both halves held at "
                            "once) x BLOCK 512 threads"),
            std::string::npos)
      << vr.message;
  p["BLOCK"] = "256";
  EXPECT_TRUE(check_point(t, bt, p).ok);
  p["HEADS_PER_THREAD"] = "2";
  p["BLOCK"] = "1024";
  EXPECT_FALSE(check_point(t, bt, p).ok);
  p["HEADS_PER_THREAD"] = "1";
  EXPECT_TRUE(check_point(t, bt, p).ok);
  // The token mapping needs a head's pair vectors within one block: D = 1024 at VEC 1 is 512 of them.
  const BoundTask wide = synthetic(2, {{1024, true}, {128, true}});
  Point tok = t.default_point();
  tok["MAPPING"] = "token";
  tok["VEC"] = "1";
  tok["BLOCK"] = "256";
  const Validity vt = check_point(t, wide, tok);
  ASSERT_TRUE(vt.ok) << vt.message;
  EXPECT_EQ(vt.perf_fast, 1u);
  ASSERT_EQ(vt.generic.size(), 1u);
  EXPECT_NE(vt.generic[0].find("within a block of 256 threads"), std::string::npos) << vt.generic[0];
  tok["BLOCK"] = "512";
  EXPECT_TRUE(check_point(t, wide, tok).generic.empty());
  tok["MAPPING"] = "flat";
  tok["BLOCK"] = "256";
  EXPECT_TRUE(check_point(t, wide, tok).generic.empty());
  // Every perf head dim with an odd pair count: VEC > 1 takes no timed shape and is ruled out; VEC 1 is not.
  const BoundTask odd = synthetic(2, {{10, true}, {128, false}});
  const Validity vo = check_point(t, odd, t.default_point());
  EXPECT_FALSE(vo.ok);
  EXPECT_NE(vo.message.find("the fast path takes none of the 1 perf workloads"), std::string::npos) << vo.message;
  p = t.default_point();
  p["VEC"] = "1";
  EXPECT_TRUE(check_point(t, odd, p).ok);
}

TEST(RopeTemplates, RenderBothPathsAndTheTunerOffersTheirStrategies) {
  const Task task = rope();
  const BoundTask bc = bind_task(task, Backend::cuda, *lib().binding_for(task));
  Point p = tpl("rope.cuda").default_point();
  std::string cu = render(tpl("rope.cuda"), bc, p);
  for (const char* s :
       {"constexpr int kVec = 8, kHeads = 2, kBlock = 256;", "constexpr bool kTokenMapping = 0;",
        "constexpr bool kStreaming = 0;", "khive_rope_flat<uint32_t><<<", "khive_rope_scalar<<<", "h % kVec == 0",
        "extern \"C\"", "khive_run(q, k, cos, sin, q_out, k_out, T, Hq, Hkv, D, stream);"})
    EXPECT_NE(cu.find(s), std::string::npos) << s;
  EXPECT_EQ(cu.find("{{"), std::string::npos);
  p["MAPPING"] = "token";
  p["CACHE"] = "streaming";
  cu = render(tpl("rope.cuda"), bc, p);
  for (const char* s : {"constexpr bool kTokenMapping = 1;", "constexpr bool kStreaming = 1;"})
    EXPECT_NE(cu.find(s), std::string::npos) << s;
  const BoundTask bp = bind_task(task, Backend::cpu, *lib().binding_for(task));
  const std::string cpp = render(tpl("rope.cpu"), bp, tpl("rope.cpu").default_point());
  for (const char* s : {"#pragma omp parallel for schedule(static)", "constexpr int64_t kChunk = 8;",
                        "constexpr int64_t kVec = 16;", "khive_run(q, k, cos, sin, q_out, k_out, T, Hq, Hkv, D);"})
    EXPECT_NE(cpp.find(s), std::string::npos) << s;
  EXPECT_EQ(cpp.find("{{"), std::string::npos);

  TunerOptions o;
  o.kernels_dir = kRepo / "kernels";
  auto agent = make_tuner_agent(o);
  for (auto [be, want] :
       {std::pair{Backend::cpu, std::vector<std::string>{"rope.vector", "rope.schedule", "tuner.dispatch"}},
        std::pair{Backend::cuda,
                  std::vector<std::string>{"rope.vector", "rope.mapping", "rope.memory", "tuner.dispatch"}}}) {
    std::vector<std::string> names;
    for (const auto& s : agent->strategies(task, be)) names.push_back(s.name);
    EXPECT_EQ(names, want) << backend_name(be);
  }
}
