// The attention family (kernels/attention, sol/attention, attention_causal, attention_decode): the binding's checks
// and errors, the workload variables it gives the rules, the templates' rules, rendering and the tuner's strategies.
#include <array>
#include <functional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tuner_support.hpp"

namespace {

const fs::path kRepo = repo();
const Library& lib() { return repo_library(); }
const Template& tpl(const char* name) { return repo_template(name); }
Task sol(const char* name) { return repo_task(std::string("sol/") + name); }
Task edited(const char* name, const std::function<void(json&)>& edit,
            const std::function<void(std::string&)>& edit_workloads = {}) {
  return edited_task(std::string("sol/") + name, edit, edit_workloads);
}

}  // namespace

TEST(AttentionBinding, TheThreeSolTasksBindWithTheirVariables) {
  for (const char* name : {"attention", "attention_causal", "attention_decode"}) {
    const Task task = sol(name);
    const bool decode = std::string(name) == "attention_decode", causal = std::string(name) == "attention_causal";
    for (Backend be : {Backend::cpu, Backend::cuda}) {
      const BoundTask bt = bind_task(task, be, *lib().binding_for(task));
      EXPECT_EQ(bt.family, "attention");
      EXPECT_EQ(bt.op, decode ? "decode" : causal ? "causal" : "prefill");
      EXPECT_EQ(bt.dtype, "bfloat16");
      ASSERT_EQ(bt.workload_vars.size(), task.workloads.size());
      for (std::size_t w = 0; w < task.workloads.size(); ++w) {
        const auto& ax = task.workloads[w].axes;
        const auto& v = bt.workload_vars[w];
        EXPECT_EQ(v.at("BATCH"), ax.at("B")) << bt.workload_names[w];
        EXPECT_EQ(v.at("SQ"), decode ? 1 : ax.at("S")) << bt.workload_names[w];
        EXPECT_EQ(v.at("SKV"), ax.at(decode ? "L" : "S")) << bt.workload_names[w];
        EXPECT_EQ(v.at("HQ"), ax.at("Hq"));
        EXPECT_EQ(v.at("HKV"), ax.at("Hkv"));
        EXPECT_EQ(v.at("GROUP"), ax.at("Hq") / ax.at("Hkv"));
        EXPECT_EQ(v.at("D"), ax.at("D"));
        EXPECT_EQ(v.at("ELEM_BYTES"), 2);
        EXPECT_EQ(v.at("CAUSAL"), causal ? 1 : 0);
      }
      const std::string& p = bt.placeholders.at("PROLOGUE");
      EXPECT_NE(p.find(causal ? "#define KHIVE_CAUSAL 1" : "#define KHIVE_CAUSAL 0"), std::string::npos) << p;
      EXPECT_NE(p.find(decode ? "#define KHIVE_DECODE 1" : "#define KHIVE_DECODE 0"), std::string::npos) << p;
      const std::string tail = be == Backend::cuda ? ", stream);" : ");";
      const std::string call = decode ? "khive_run(q, k, v, o, B, int64_t(1), L, Hq, Hkv, D" + tail
                                      : "khive_run(q, k, v, o, B, S, S, Hq, Hkv, D" + tail;
      EXPECT_NE(bt.placeholders.at("ENTRY").find(call), std::string::npos) << bt.placeholders.at("ENTRY");
    }
  }
}

TEST(AttentionBinding, BadFieldsAreErrorsNamingTheField) {
  const Task task = sol("attention");
  const json good = lib().binding_for(task)->spec;
  auto with = [&](const char* key, json v) {
    json s = good;
    if (v.is_null())
      s.erase(key);
    else
      s[key] = v;
    return binding_with(task, s);
  };
  TaskFormatError e = bind_error(task, with("q", "o"));
  EXPECT_EQ(e.field, "tasks.attention.q");
  EXPECT_NE(e.expected.find("an input tensor"), std::string::npos);
  EXPECT_NE(std::string(e.what()).find("kernels/bindings/sol.json"), std::string::npos) << e.what();
  e = bind_error(task, with("o", "q"));
  EXPECT_EQ(e.field, "tasks.attention.o");
  e = bind_error(task, with("v", nullptr));
  EXPECT_EQ(e.field, "tasks.attention.v");
  e = bind_error(task, with("causal", "yes"));
  EXPECT_EQ(e.field, "tasks.attention.causal");
  EXPECT_EQ(e.expected, "true or false");
  e = bind_error(task, with("scale", 0.5));
  EXPECT_EQ(e.field, "tasks.attention.scale");
  EXPECT_NE(e.expected.find("one of the keys family, description, q, k, v, o, causal, decode"), std::string::npos)
      << e.expected;
  // Causal decode is refused (one query sees the whole cache).
  json cd = good;
  cd["causal"] = true;
  cd["decode"] = true;
  e = bind_error(task, binding_with(task, cd));
  EXPECT_EQ(e.field, "tasks.attention.causal");
  // A prefill task bound as decode: q has 4 dimensions, decode wants [B, Hq, D].
  e = bind_error(task, with("decode", true));
  EXPECT_EQ(e.field, "tasks.attention.q");
  EXPECT_NE(e.expected.find("[B, Hq, D]"), std::string::npos) << e.expected;
  EXPECT_NE(e.got.find("[B, S, Hq, D]"), std::string::npos) << e.got;
  // The decode task bound as prefill: its q is 3-D.
  const Task dec = sol("attention_decode");
  json pre = lib().binding_for(dec)->spec;
  pre["decode"] = false;
  e = bind_error(dec, binding_with(dec, pre));
  EXPECT_EQ(e.field, "tasks.attention_decode.q");
  EXPECT_NE(e.expected.find("[B, Sq, Hq, D]"), std::string::npos) << e.expected;
  // k and v swapped with q: k must have q's head dim last and batch first (here: a 4-D tensor of other axes).
  e = bind_error(task, with("k", "q"));
  EXPECT_EQ(e.field, "tasks.attention.v");  // v's shape differs from the (q-shaped) k
}

TEST(AttentionBinding, ShapesDtypesAndHeadsAreChecked) {
  const Binding& b = *lib().binding_for(sol("attention"));
  // fp32 tensors: the family is bf16/fp16 (tensor-core MMA on CUDA).
  TaskFormatError e = bind_error(edited("attention",
                                        [](json& d) {
                                          for (const char* t : {"q", "k", "v"}) d["inputs"][t]["dtype"] = "float32";
                                          d["outputs"]["o"]["dtype"] = "float32";
                                        }),
                                 b);
  EXPECT_EQ(e.field, "tasks.attention.q");
  EXPECT_NE(e.expected.find("bfloat16 or float16"), std::string::npos);
  // v in another dtype than q.
  e = bind_error(edited("attention", [](json& d) { d["inputs"]["v"]["dtype"] = "float16"; }), b);
  EXPECT_EQ(e.field, "tasks.attention.v");
  EXPECT_NE(e.expected.find("q's dtype bfloat16"), std::string::npos) << e.expected;
  // o of another shape.
  e = bind_error(edited("attention",
                        [](json& d) {
                          d["outputs"]["o"]["shape"] = json::array({"B", "S", "Hkv", "D"});
                        }),
                 b);
  EXPECT_EQ(e.field, "tasks.attention.o");
  EXPECT_NE(e.expected.find("q's shape [B, S, Hq, D]"), std::string::npos) << e.expected;
  // v of another shape than k.
  e = bind_error(edited("attention",
                        [](json& d) {
                          d["inputs"]["v"]["shape"] = json::array({"B", "S", "Hq", "D"});
                        }),
                 b);
  EXPECT_EQ(e.field, "tasks.attention.v");
  // k's head dim is not q's.
  e = bind_error(edited("attention",
                        [](json& d) {
                          d["axes"]["Dk"] = json{{"type", "expr"}, {"expression", "D + 0"}};
                          d["inputs"]["k"]["shape"] = json::array({"B", "S", "Hkv", "Dk"});
                          d["inputs"]["v"]["shape"] = json::array({"B", "S", "Hkv", "Dk"});
                        }),
                 b);
  EXPECT_EQ(e.field, "tasks.attention.k");
  EXPECT_NE(e.expected.find("head dim axis D last"), std::string::npos) << e.expected;
  // Query heads not a multiple of the KV heads, on one workload: named with the workload.
  e = bind_error(edited(
                     "attention", [](json& d) { d["constraints"] = json::array({"B >= 1"}); },
                     [](std::string& w) {
                       const std::string from = R"("B": 2, "S": 33, "Hq": 4, "Hkv": 2)",
                                         to = R"("B": 2, "S": 33, "Hq": 3, "Hkv": 2)";
                       w.replace(w.find(from), from.size(), to);
                     }),
                 b);
  EXPECT_EQ(e.field, "tasks.attention.k");
  EXPECT_NE(e.expected.find("KV heads dividing the query heads"), std::string::npos) << e.expected;
  EXPECT_NE(e.got.find("Hq = 3, Hkv = 2 on workload attention-B2-S33-Hq4-Hkv2-D128"), std::string::npos) << e.got;
  // A fourth input the family would ignore.
  e = bind_error(edited("attention",
                        [](json& d) {
                          d["inputs"]["bias"] = json{{"shape", json::array({"S"})}, {"dtype", "bfloat16"}};
                        }),
                 b);
  EXPECT_EQ(e.field, "tasks.attention.q");
  EXPECT_NE(e.got.find("\"bias\" left out"), std::string::npos) << e.got;
}

TEST(AttentionRules, CpuWorkingSetBoundsTheBlocks) {
  const Template& t = tpl("attention.cpu");
  const Task task = sol("attention");
  const BoundTask bt = bind_task(task, Backend::cpu, *lib().binding_for(task));
  const Validity v = check_point(t, bt, t.default_point());
  EXPECT_TRUE(v.ok) << v.message;
  // 256 keys of D 128 in fp32, K and V: 256 KB before any query.
  Point big = t.default_point();
  big["KV_BLOCK"] = "256";
  const Validity vb = check_point(t, bt, big);
  EXPECT_FALSE(vb.ok);
  EXPECT_NE(vb.message.find("exceed 256 KB"), std::string::npos) << vb.message;
  // The same block is fine for head dim 64 with one query head per item and a small query block.
  big["GQA_SHARE"] = "0";
  big["QUERY_BLOCK"] = "4";
  EXPECT_TRUE(check_point(t, synthetic_attention(false, {{256, 256, 4, 2, 64, 1}}, Backend::cpu), big).ok);
  // GQA sharing multiplies the queries of an item by GROUP: 32 rows x 8 heads x D 128 is too many.
  Point wide = t.default_point();
  wide["QUERY_BLOCK"] = "32";
  EXPECT_TRUE(check_point(t, synthetic_attention(false, {{512, 512, 8, 8, 128, 1}}, Backend::cpu), wide).ok);
  EXPECT_FALSE(check_point(t, synthetic_attention(false, {{512, 512, 64, 8, 128, 1}}, Backend::cpu), wide).ok);
}

TEST(AttentionTemplates, CpuRendersTheBindingAndTheTunerOffersItsStrategies) {
  for (const char* name : {"attention", "attention_causal", "attention_decode"}) {
    const Task task = sol(name);
    const BoundTask bt = bind_task(task, Backend::cpu, *lib().binding_for(task));
    const std::string cpp = render(tpl("attention.cpu"), bt, tpl("attention.cpu").default_point());
    for (const char* s : {"constexpr int64_t kQueryBlock = 8;", "constexpr int64_t kKvBlock = 64;",
                          "#pragma omp for schedule(dynamic)", "constexpr bool kDotByKey = 1 != 0;", "extern \"C\""})
      EXPECT_NE(cpp.find(s), std::string::npos) << name << ": " << s;
    EXPECT_NE(cpp.find(std::string(name) == "attention_causal" ? "#define KHIVE_CAUSAL 1" : "#define KHIVE_CAUSAL 0"),
              std::string::npos);
    EXPECT_EQ(cpp.find("{{"), std::string::npos);
  }
  TunerOptions o;
  o.kernels_dir = kRepo / "kernels";
  auto agent = make_tuner_agent(o);
  std::vector<std::string> names;
  for (const auto& s : agent->strategies(sol("attention_causal"), Backend::cpu)) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"attention.blocking", "attention.schedule", "tuner.dispatch"}));
}

TEST(AttentionRules, CudaFlashWarpRowsRegistersAndSharedMemory) {
  const Template& t = tpl("attention.cuda_flash");
  const Task task = sol("attention");
  const BoundTask bt = bind_task(task, Backend::cuda, *lib().binding_for(task));
  const Validity v = check_point(t, bt, t.default_point());
  ASSERT_TRUE(v.ok) << v.message;
  EXPECT_EQ(v.perf_total, 9u);
  EXPECT_EQ(v.perf_fast, 9u);  // every perf shape has D 64 or 128
  EXPECT_TRUE(v.generic.empty()) << fast_path_note(v);
  // 8 warps over 64 rows: 8 rows per warp, not an m16 tile.
  Point p = t.default_point();
  p["BLOCK_M"] = "64";
  p["WARPS"] = "8";
  Validity r = check_point(t, bt, p);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("8 warps over 64 rows give 8 rows per warp"), std::string::npos) << r.message;
  p["WARPS"] = "4";
  EXPECT_TRUE(check_point(t, bt, p).ok);
  // 4 warps over 128 rows: 32 rows per warp; with Q in registers at D 128, 2 x (64 + 32 + 32) = 256 registers.
  p = t.default_point();
  p["WARPS"] = "4";
  p["Q_IN_REGS"] = "1";
  r = check_point(t, bt, p);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("256 registers per thread"), std::string::npos) << r.message;
  p["Q_IN_REGS"] = "0";  // FlashAttention-2's sm80 shape (128 x 64, 4 warps): 192; the default since the H200 runs
  EXPECT_TRUE(check_point(t, bt, p).ok);
  EXPECT_EQ(p, t.default_point());
  // Three stages of 128-key tiles at D 128: (128 + 768) rows x 136 x 2 B = 243712 B.
  p = t.default_point();
  p["WARPS"] = "8";
  p["Q_IN_REGS"] = "1";
  p["STAGES"] = "3";
  p["BLOCK_N"] = "128";
  r = check_point(t, bt, p);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("243712 B of shared memory at D 128"), std::string::npos) << r.message;
  // Only D 64 tasks: the same point fits.
  EXPECT_TRUE(check_point(t, synthetic_attention(false, {{4096, 4096, 32, 8, 64, 1}}), p).ok);
  // A head dim the MMA path is not compiled for goes generic; with no perf shape on the fast path the point is out.
  const Validity g = check_point(t, synthetic_attention(true, {{300, 300, 4, 2, 96, 0}, {4096, 4096, 32, 8, 128, 1}}),
                                 t.default_point());
  ASSERT_TRUE(g.ok) << g.message;
  ASSERT_EQ(g.generic.size(), 1u);
  EXPECT_NE(g.generic[0].find("head dim 96"), std::string::npos) << g.generic[0];
  EXPECT_FALSE(check_point(t, synthetic_attention(false, {{4096, 4096, 32, 8, 96, 1}}), t.default_point()).ok);
}

TEST(AttentionTemplates, CudaFlashServesPrefillAndCausalNotDecode) {
  TunerOptions o;
  o.kernels_dir = kRepo / "kernels";
  auto agent = make_tuner_agent(o);
  for (const char* name : {"attention", "attention_causal"}) {
    const Task task = sol(name);
    const BoundTask bt = bind_task(task, Backend::cuda, *lib().binding_for(task));
    EXPECT_TRUE(template_applies(tpl("attention.cuda_flash"), bt)) << name;
    const std::string cu = render(tpl("attention.cuda_flash"), bt, tpl("attention.cuda_flash").default_point());
    for (const char* s : {"constexpr int kBlockM = 128, kBlockN = 64, kWarps = 4, kStages = 2;",
                          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
                          "khive_run(q, k, v, o, B, S, S, Hq, Hkv, D, stream);", "#define KHIVE_ELEM_BF16 1"})
      EXPECT_NE(cu.find(s), std::string::npos) << name << ": " << s;
    EXPECT_EQ(cu.find("{{"), std::string::npos);
    std::vector<std::string> names;
    for (const auto& s : agent->strategies(task, Backend::cuda)) names.push_back(s.name);
    EXPECT_NE(std::find(names.begin(), names.end(), "attention.tile_shape"), names.end()) << name;
    EXPECT_NE(std::find(names.begin(), names.end(), "attention.pipeline"), names.end()) << name;
  }
  const Task dec = sol("attention_decode");
  EXPECT_FALSE(template_applies(tpl("attention.cuda_flash"), bind_task(dec, Backend::cuda, *lib().binding_for(dec))));
}
