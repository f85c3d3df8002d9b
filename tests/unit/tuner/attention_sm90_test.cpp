// attention.cuda_sm90 (kernels/attention/cuda_sm90.{json,cu.in}, issue 22): which tasks it serves, its rules
// (warpgroup rows, consumer registers, shared memory), the fast path's head dims, rendering and its strategies. No GPU:
// tests/gpu/attention_sm90.py checks and times the kernels.
#include <algorithm>
#include <array>

#include <gtest/gtest.h>

#include "tuner_support.hpp"

namespace {

const fs::path kRepo = repo();
const Library& lib() { return repo_library(); }
const Template& sm90() { return repo_template("attention.cuda_sm90"); }
Task sol(const char* name) { return repo_task(std::string("sol/") + name); }
BoundTask bound(const char* name) {
  const Task task = sol(name);
  return bind_task(task, Backend::cuda, *lib().binding_for(task));
}

Point with(Point p, std::initializer_list<std::pair<const char*, const char*>> changes) {
  for (const auto& [k, v] : changes) p[k] = v;
  return p;
}

std::string refusal(const BoundTask& bt, const Point& p) {
  const Validity v = check_point(sm90(), bt, p);
  return v.ok ? std::string("(valid)") : v.message;
}

}  // namespace

TEST(AttentionSm90, ServesPrefillAndCausalNotDecode) {
  TunerOptions o;
  o.kernels_dir = kRepo / "kernels";
  auto agent = make_tuner_agent(o);
  for (const char* name : {"attention", "attention_causal"}) {
    EXPECT_TRUE(template_applies(sm90(), bound(name))) << name;
    std::vector<std::string> names;
    for (const auto& s : agent->strategies(sol(name), Backend::cuda)) names.push_back(s.name);
    for (const char* s : {"attention.wgmma_tile", "attention.wgmma_pipeline", "attention.tile_shape"})
      EXPECT_NE(std::find(names.begin(), names.end(), s), names.end()) << name << ": " << s;
  }
  EXPECT_FALSE(template_applies(sm90(), bound("attention_decode")));
  const Task task = sol("attention");
  EXPECT_FALSE(template_applies(sm90(), bind_task(task, Backend::cpu, *lib().binding_for(task))));
}

TEST(AttentionSm90, DefaultTakesEveryPerfShapeOnTheFastPath) {
  for (const char* name : {"attention", "attention_causal"}) {
    const Validity v = check_point(sm90(), bound(name), sm90().default_point());
    ASSERT_TRUE(v.ok) << name << ": " << v.message;
    EXPECT_EQ(v.perf_total, 9u) << name;
    EXPECT_EQ(v.perf_fast, 9u) << name;
    EXPECT_TRUE(v.generic.empty()) << fast_path_note(v);
  }
  const Point d = sm90().default_point();
  EXPECT_EQ(d.at("BLOCK_M"), "128");
  EXPECT_EQ(d.at("BLOCK_N"), "128");
  EXPECT_EQ(d.at("STAGES"), "2");
  EXPECT_EQ(d.at("CONSUMER_WG"), "2");
  EXPECT_EQ(d.at("OVERLAP"), "0");  // the simple schedule first; the tuner turns the overlap on
  EXPECT_EQ(d.at("REGS"), "1");
  EXPECT_EQ(d.at("PINGPONG"), "0");
}

TEST(AttentionSm90, PingPongTakesTurnsBetweenTwoWarpgroups) {
  const BoundTask bt = bound("attention_causal");
  const Point d = sm90().default_point();
  // One consumer warpgroup has no one to take turns with: the point would repeat PINGPONG 0.
  EXPECT_NE(refusal(bt, with(d, {{"BLOCK_M", "64"}, {"CONSUMER_WG", "1"}, {"PINGPONG", "1"}}))
                .find("PINGPONG 1 needs two consumer warpgroups to take turns (CONSUMER_WG 1)"),
            std::string::npos);
  for (const char* overlap : {"0", "1"}) {
    const Point p = with(d, {{"PINGPONG", "1"}, {"OVERLAP", overlap}});
    ASSERT_TRUE(check_point(sm90(), bt, p).ok) << overlap;
    const std::string cu = render(sm90(), bt, p);
    for (const char* s :
         {"constexpr bool kPingPong = 1 != 0 && kConsumerWG == 2;", "asm volatile(\"bar.sync %0, 256;\"",
          "asm volatile(\"bar.arrive %0, 256;\"", "if (wg == 1) khive_turn_pass(wg);"})
      EXPECT_NE(cu.find(s), std::string::npos) << overlap << ": " << s;
  }
  EXPECT_NE(render(sm90(), bt, d).find("constexpr bool kPingPong = 0 != 0"), std::string::npos);
  // 176-key tiles at D 128: 196 fragment registers leave too few for the turns and the causal mask (ptxas spilled);
  // without the mask they fit.
  const Point n176 = with(d, {{"PINGPONG", "1"}, {"OVERLAP", "1"}, {"BLOCK_N", "176"}});
  EXPECT_NE(refusal(bt, n176).find("PINGPONG 1 on causal attention with 196 fragment registers"), std::string::npos)
      << refusal(bt, n176);
  EXPECT_TRUE(check_point(sm90(), bound("attention"), n176).ok);
  EXPECT_TRUE(check_point(sm90(), bt, with(n176, {{"PINGPONG", "0"}})).ok);
  // The tuner reaches it through the pipeline strategy.
  const auto& strategies = sm90().strategies;
  bool listed = false;
  for (const auto& s : strategies)
    if (s.name == "attention.wgmma_pipeline")
      listed = std::find(s.params.begin(), s.params.end(), "PINGPONG") != s.params.end();
  EXPECT_TRUE(listed);
}

TEST(AttentionSm90, WarpgroupRowsAreOneOrTwoM64Atoms) {
  const BoundTask bt = bound("attention");
  const Point d = sm90().default_point();
  EXPECT_NE(refusal(bt, with(d, {{"BLOCK_M", "64"}})).find("2 consumer warpgroups over 64 rows give 32 rows each"),
            std::string::npos);
  EXPECT_NE(refusal(bt, with(d, {{"BLOCK_M", "256"}, {"CONSUMER_WG", "1"}})).find("256 rows each"), std::string::npos);
  EXPECT_TRUE(check_point(sm90(), bt, with(d, {{"BLOCK_M", "64"}, {"CONSUMER_WG", "1"}})).ok);
}

TEST(AttentionSm90, ConsumerRegistersBoundTheFragments) {
  const BoundTask bt = bound("attention");  // D 128 on every perf shape
  const Point d = sm90().default_point();
  // Two warpgroups of 128 rows: at D 64 (the first workload that breaks the rule) 128 x (64 + 128 + 64) / 128 = 256
  // fragment registers, at D 128 320.
  EXPECT_NE(refusal(bt, with(d, {{"BLOCK_M", "256"}}))
                .find("256 registers per consumer thread of O, S and P fragments at D 64"),
            std::string::npos)
      << refusal(bt, with(d, {{"BLOCK_M", "256"}}));
  EXPECT_NE(refusal(synthetic_attention(false, {{4096, 4096, 32, 8, 128, 1}}), with(d, {{"BLOCK_M", "256"}}))
                .find("320 registers"),
            std::string::npos);
  // 176-key tiles: 64 x (128 + 176 + 88) / 128 = 196 (+ 40 <= 240 with setmaxnreg), FlashAttention-3's hdim-128 tile.
  EXPECT_TRUE(check_point(sm90(), bt, with(d, {{"BLOCK_N", "176"}})).ok);
  // Without the reallocation two consumer warpgroups keep the launch's 168 registers: 160 + 40 is too many.
  EXPECT_NE(refusal(bt, with(d, {{"REGS", "0"}})).find("> 168"), std::string::npos);
  // One consumer warpgroup (256 threads) has 255 and no reallocation: REGS 0 there would only repeat the REGS 1 kernel.
  EXPECT_TRUE(check_point(sm90(), bt, with(d, {{"BLOCK_M", "64"}, {"CONSUMER_WG", "1"}})).ok);
  EXPECT_NE(refusal(bt, with(d, {{"BLOCK_M", "64"}, {"CONSUMER_WG", "1"}, {"REGS", "0"}})).find("a duplicate point"),
            std::string::npos);
  // 128 rows per warpgroup fit at D 64 with 64-key tiles: 128 x (64 + 64 + 32) / 128 = 160.
  const BoundTask d64 = synthetic_attention(false, {{4096, 4096, 32, 8, 64, 1}});
  EXPECT_TRUE(check_point(sm90(), d64, with(d, {{"BLOCK_M", "256"}, {"BLOCK_N", "64"}})).ok);
  EXPECT_FALSE(check_point(sm90(), d64, with(d, {{"BLOCK_M", "256"}, {"BLOCK_N", "128"}})).ok);
}

TEST(AttentionSm90, SharedMemoryBoundsTheStages) {
  const BoundTask bt = bound("attention");
  const Point d = sm90().default_point();
  // Three stages of 128 keys at D 128: (128 + 768) x 128 x 2 + 1024 = 230400 B <= 227 KB; four: 295936 B.
  EXPECT_TRUE(check_point(sm90(), bt, with(d, {{"STAGES", "3"}})).ok);
  EXPECT_NE(refusal(bt, with(d, {{"STAGES", "4"}})).find("295936 B of shared memory at D 128"), std::string::npos);
  EXPECT_NE(refusal(bt, with(d, {{"STAGES", "3"}, {"BLOCK_N", "176"}})).find("304128 B"), std::string::npos);
  // D 64 only: four stages fit.
  EXPECT_TRUE(
      check_point(sm90(), synthetic_attention(false, {{4096, 4096, 32, 8, 64, 1}}), with(d, {{"STAGES", "4"}})).ok);
}

TEST(AttentionSm90, OtherHeadDimsGoGeneric) {
  const Validity g =
      check_point(sm90(), synthetic_attention(true, {{300, 300, 4, 2, 96, 0}, {4096, 4096, 32, 8, 128, 1}}),
                  sm90().default_point());
  ASSERT_TRUE(g.ok) << g.message;
  ASSERT_EQ(g.generic.size(), 1u);
  EXPECT_NE(g.generic[0].find("head dim 96"), std::string::npos) << g.generic[0];
  // No perf shape on the fast path: the point is out.
  EXPECT_FALSE(
      check_point(sm90(), synthetic_attention(false, {{4096, 4096, 32, 8, 96, 1}}), sm90().default_point()).ok);
}

TEST(AttentionSm90, RendersTheParamsTheBindingAndTheGenericPath) {
  for (const char* name : {"attention", "attention_causal"}) {
    const bool causal = std::string(name) == "attention_causal";
    const Point p = with(sm90().default_point(), {{"BLOCK_N", "176"}, {"OVERLAP", "1"}, {"STAGES", "2"}});
    const std::string cu = render(sm90(), bound(name), p);
    for (const char* s :
         {"constexpr int kBlockM = 128, kBlockN = 176, kStages = 2, kConsumerWG = 2;",
          "constexpr bool kOverlap = 1 != 0;", "constexpr bool kRegRealloc = 1 != 0 && kConsumerWG == 2;",
          "khive_run(q, k, v, o, B, S, S, Hq, Hkv, D, stream);", "#define KHIVE_ELEM_BF16 1", "cute::SM90_TMA_LOAD",
          "cutlass::arch::warpgroup_reg_alloc<kConsumerRegs>",
          "cute::prefetch_tma_descriptor(p.tma_v.get_tma_descriptor());",
          "__global__ void __launch_bounds__(128) khive_attn_generic(", "khive_attn_generic_launch(q, k, v, o"})
      EXPECT_NE(cu.find(s), std::string::npos) << name << ": " << s;
    EXPECT_NE(cu.find(causal ? "#define KHIVE_CAUSAL 1" : "#define KHIVE_CAUSAL 0"), std::string::npos) << name;
    EXPECT_EQ(cu.find("{{"), std::string::npos);
    EXPECT_EQ(cu.find("\n// khive:include"), std::string::npos);
  }
}
