// attention.cuda_decode (kernels/attention/cuda_decode.*): which tasks it serves, its register rule, its fast path
// (head dims 64 and 128), and what a rendered instance contains.
#include <gtest/gtest.h>

#include "tuner_support.hpp"

namespace {

const fs::path kRepo = fixtures::repo();
const Library& lib() { return fixtures::repo_library(); }
const Template& decode_tpl() { return fixtures::repo_template("attention.cuda_decode"); }

Task sol(const char* name) { return load_task(kRepo / "tasks/sol" / name); }

BoundTask bound(const char* name) {
  const Task task = sol(name);
  return bind_task(task, Backend::cuda, *lib().binding_for(task));
}

// A decode task described by its workloads only: (BATCH, SKV, HQ, HKV, D, perf) each, bf16.
BoundTask synthetic_decode(std::vector<std::array<int64_t, 6>> ws) {
  BoundTask bt;
  bt.key = "synthetic/attention_decode";
  bt.family = "attention";
  bt.op = "decode";
  bt.dtype = "bfloat16";
  bt.backend = Backend::cuda;
  for (std::size_t i = 0; i < ws.size(); ++i) {
    const auto& w = ws[i];
    bt.workload_vars.push_back({{"BATCH", w[0]},
                                {"SQ", 1},
                                {"SKV", w[1]},
                                {"HQ", w[2]},
                                {"HKV", w[3]},
                                {"D", w[4]},
                                {"ELEM_BYTES", 2},
                                {"CAUSAL", 0},
                                {"GROUP", w[2] / w[3]}});
    bt.workload_names.push_back("w" + std::to_string(i));
    bt.workload_perf.push_back(w[5] != 0);
  }
  return bt;
}

Point with(Point p, std::initializer_list<std::pair<const char*, const char*>> changes) {
  for (const auto& [k, v] : changes) p[k] = v;
  return p;
}

std::vector<std::string> strategy_names(const char* task, Backend be) {
  TunerOptions o;
  o.kernels_dir = kRepo / "kernels";
  auto agent = make_tuner_agent(o);
  std::vector<std::string> names;
  for (const auto& s : agent->strategies(sol(task), be)) names.push_back(s.name);
  return names;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST(AttentionDecode, ServesOnlyDecodeOnCuda) {
  const Template& t = decode_tpl();
  EXPECT_TRUE(template_applies(t, bound("attention_decode")));
  EXPECT_FALSE(
      template_applies(t, bound("attention")));  // prefill: one CTA per KV head would re-read the cache per query
  EXPECT_FALSE(template_applies(t, bound("attention_causal")));
  const Task dec = sol("attention_decode");
  EXPECT_FALSE(template_applies(t, bind_task(dec, Backend::cpu, *lib().binding_for(dec))));
  const auto cuda_dec = strategy_names("attention_decode", Backend::cuda);
  for (const char* s : {"attention.decode_split", "attention.decode_loads", "attention.decode_gqa"})
    EXPECT_TRUE(contains(cuda_dec, s)) << s;
  for (const char* task : {"attention", "attention_causal"})
    for (const auto& s : strategy_names(task, Backend::cuda))
      EXPECT_EQ(s.rfind("attention.decode_", 0), std::string::npos) << task << ": " << s;
}

TEST(AttentionDecode, RegisterRuleBoundsRowsDimsAndUnroll) {
  const Template& t = decode_tpl();
  const BoundTask bt = bound("attention_decode");
  const Point d = t.default_point();
  const Validity v = check_point(t, bt, d);
  ASSERT_TRUE(v.ok) << v.message;
  // Every sol decode workload has D 64 or 128: the split kernel takes all of them.
  EXPECT_EQ(v.perf_total, 10u);  // the cuda-timed workloads (B2-L2048-Hq8 is timed on the CPU only)
  EXPECT_EQ(v.perf_fast, v.perf_total);
  EXPECT_TRUE(v.generic.empty()) << fast_path_note(v);
  // 8 rows x 16 dims: q and the accumulators alone are 256 registers per thread.
  const Validity wide = check_point(t, bt, with(d, {{"LANE_DIMS", "16"}, {"QROWS", "8"}}));
  EXPECT_FALSE(wide.ok);
  EXPECT_NE(wide.message.find("8 query rows x 16 dims"), std::string::npos) << wide.message;
  EXPECT_NE(wide.message.find("> 240: spills"), std::string::npos) << wide.message;
  // 4 rows x 16 dims fit with one row step (232), not with two (264).
  EXPECT_TRUE(check_point(t, bt, with(d, {{"LANE_DIMS", "16"}, {"QROWS", "4"}, {"UNROLL", "1"}})).ok);
  const Validity two = check_point(t, bt, with(d, {{"LANE_DIMS", "16"}, {"QROWS", "4"}, {"UNROLL", "2"}}));
  EXPECT_FALSE(two.ok);
  EXPECT_NE(two.message.find("~264 registers"), std::string::npos) << two.message;
  // 8 rows x 8 dims: UNROLL 2 (232) fits, 4 (264) does not; 4 rows x 8 dims fit even UNROLL 8 (232).
  EXPECT_TRUE(check_point(t, bt, with(d, {{"QROWS", "8"}, {"UNROLL", "2"}})).ok);
  EXPECT_FALSE(check_point(t, bt, with(d, {{"QROWS", "8"}, {"UNROLL", "4"}})).ok);
  EXPECT_TRUE(check_point(t, bt, with(d, {{"QROWS", "4"}, {"UNROLL", "8"}})).ok);
  // The split count and warps never change registers.
  for (const char* s : {"1", "64"})
    for (const char* w : {"4", "8"})
      EXPECT_TRUE(check_point(t, bt, with(d, {{"SPLIT", s}, {"WARPS", w}})).ok) << s << " " << w;
}

TEST(AttentionDecode, RingRuleBoundsSharedMemory) {
  const Template& t = decode_tpl();
  const BoundTask bt = bound("attention_decode");
  const Point d = t.default_point();
  EXPECT_EQ(d.at("STAGES"), "4");
  // 8 warps x 6 stages x 4 row steps x 8 dims: 196608 bytes of ring, past 160 KB.
  const Validity big = check_point(t, bt, with(d, {{"WARPS", "8"}, {"STAGES", "6"}, {"UNROLL", "4"}}));
  EXPECT_FALSE(big.ok);
  EXPECT_NE(big.message.find("8 warps x 6 stages x 4 row steps of 8-dim K and V rows need a 196608-byte ring"),
            std::string::npos)
      << big.message;
  // 4 warps of the same fit (98304), and so does 8 x 4 x 4 (131072); no ring (STAGES 0) never needs shared memory.
  EXPECT_TRUE(check_point(t, bt, with(d, {{"WARPS", "4"}, {"STAGES", "6"}, {"UNROLL", "4"}})).ok);
  EXPECT_TRUE(check_point(t, bt, with(d, {{"WARPS", "8"}, {"STAGES", "4"}, {"UNROLL", "4"}})).ok);
  EXPECT_TRUE(check_point(t, bt, with(d, {{"WARPS", "8"}, {"STAGES", "0"}, {"UNROLL", "8"}})).ok);
  const std::string cu = render(t, bt, with(d, {{"STAGES", "0"}}));
  EXPECT_NE(cu.find("constexpr int kStages = 0;"), std::string::npos);
}

TEST(AttentionDecode, HeadDimsOtherThan64And128GoGeneric) {
  const Template& t = decode_tpl();
  // One timed D 96 shape, one D 128: the fast path takes one of two, and the note names the other.
  const Validity v = check_point(
      t, synthetic_decode({{4, 4096, 32, 8, 96, 1}, {4, 4096, 32, 8, 128, 1}, {1, 7, 2, 1, 80, 0}}), t.default_point());
  ASSERT_TRUE(v.ok) << v.message;
  EXPECT_EQ(v.perf_fast, 1u);
  EXPECT_EQ(v.perf_total, 2u);
  ASSERT_EQ(v.generic.size(), 2u);
  EXPECT_NE(v.generic[0].find("head dim 96: the split kernel is compiled for 64 and 128 (workload w0, perf)"),
            std::string::npos)
      << v.generic[0];
  EXPECT_NE(v.generic[1].find("head dim 80"), std::string::npos) << v.generic[1];
  // No timed shape the fast path takes: the template is not proposed.
  const Validity none =
      check_point(t, synthetic_decode({{4, 4096, 32, 8, 96, 1}, {1, 7, 2, 1, 64, 0}}), t.default_point());
  EXPECT_FALSE(none.ok);
  EXPECT_NE(none.message.find("the fast path takes none of the 1 perf workloads"), std::string::npos) << none.message;
}

TEST(AttentionDecode, RendersParamsAndTheDecodeEntry) {
  const Template& t = decode_tpl();
  const BoundTask bt = bound("attention_decode");
  const std::string cu = render(t, bt, with(t.default_point(), {{"WARPS", "8"}, {"SPLIT", "16"}, {"QROWS", "2"}}));
  for (const char* s :
       {"constexpr int kWarps = 8, kThreads = 32 * kWarps;", "constexpr int kLaneDims = 8;",
        "constexpr int kQRows = 2;", "constexpr int kUnroll = 2;", "constexpr int kSplitParam = 16;",
        "#define KHIVE_CAUSAL 0", "using khive_t = __nv_bfloat16;",
        "khive_run(q, k, v, o, B, int64_t(1), L, Hq, Hkv, D, stream);", "if (D == 64) khive_launch_d<64>(a, stream);",
        "khive_decode_generic<<<blocks, kGenThreads, smem, stream>>>(a, D);", "extern \"C\""})
    EXPECT_NE(cu.find(s), std::string::npos) << s;
  EXPECT_EQ(cu.find("{{"), std::string::npos);
}
