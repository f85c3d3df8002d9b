// gemm.cuda_sm80_simt (kernels/gemm/cuda_sm80_simt.json): the CUTLASS 2.x SIMT constraints as rules, checked on the
// cutegen26 fp32 GEMM tasks and on hand-made workloads (column-major A, huge batches), the fast path, the
// rendering, and that the tuner offers the template next to gemm.cuda_simt.
#include <gtest/gtest.h>

#include "tuner_support.hpp"

namespace {

const fs::path kRepo = fixtures::repo();
const Library& lib() { return fixtures::repo_library(); }
const Template& sm80() { return fixtures::repo_template("gemm.cuda_sm80_simt"); }

BoundTask bound(const std::string& task) {
  const Task t = load_task(kRepo / "tasks/cutegen26" / task);
  return bind_task(t, Backend::cuda, *lib().binding_for(t));
}

// A gemm task described by its workloads only (what the rules see), for layouts and sizes cutegen26 lacks.
BoundTask synthetic(bool a_row, bool b_row, std::vector<std::pair<int64_t, bool>> batches_perf) {
  BoundTask bt;
  bt.key = "synthetic/gemm";
  bt.family = "gemm";
  bt.op = "gemm";
  bt.dtype = "float32";
  bt.backend = Backend::cuda;
  for (std::size_t i = 0; i < batches_perf.size(); ++i) {
    bt.workload_vars.push_back({{"M", 1024},
                                {"N", 1024},
                                {"K", 1024},
                                {"BATCH", batches_perf[i].first},
                                {"BATCH_AXES", 1},
                                {"ELEM_BYTES", 4},
                                {"A_ROW", a_row},
                                {"B_ROW", b_row},
                                {"HAS_RESIDUAL", 0},
                                {"HAS_ACTIVATION", 0}});
    bt.workload_names.push_back("w" + std::to_string(i));
    bt.workload_perf.push_back(batches_perf[i].second);
  }
  return bt;
}

Point with(Point p, std::initializer_list<std::pair<const char*, const char*>> changes) {
  for (const auto& [k, v] : changes) p[k] = v;
  return p;
}

// CUTLASS's profiler point for SIMT sgemm on sm80 (128x128x8, 4x2 warps of 32x64, 5 stages; the default before the
// H200 measurements): the rule tests below are written against it.
Point profiler_point(const Template& t) {
  return with(t.default_point(), {{"TB_M", "128"}, {"W_M", "32"}, {"W_N", "64"}});
}

void expect_invalid(const Template& t, const BoundTask& bt, const Point& p, const std::string& message) {
  const Validity v = check_point(t, bt, p);
  EXPECT_FALSE(v.ok) << describe_point(p);
  EXPECT_NE(v.message.find(message), std::string::npos) << describe_point(p) << ": " << v.message;
}

}  // namespace

// The default is the H200's best plain point over seven cutegen26 GEMMs (256x128x8, 4x2 warps of 64x64, 5 stages;
// 0.96-1.21x cuBLAS where CUTLASS's profiler point got 0.82-1.12x) and takes every cutegen26 fp32 GEMM, with the
// CUTLASS kernel on every workload (alignment 1: no generic shape).
TEST(TunerSm80Simt, DefaultIsTheMeasuredPointAndTakesEveryCutegen26Gemm) {
  const Template& t = sm80();
  // ... with SPLIT_K 0: partitions chosen per call (1 wherever the output has a tile per SM), parallel split-K.
  EXPECT_EQ(describe_point(t.default_point()),
            "RELAYOUT_A=0 RELAYOUT_B=0 SPLIT_K=0 SPLIT_MODE=parallel STAGES=5 SWIZZLE=1 TB_K=8 TB_M=256 TB_N=128 "
            "W_M=64 W_N=64");
  for (const char* task :
       {"kb01_matmul_square", "kb02_matmul_standard", "kb03_matmul_batched", "kb06_matmul_large_k",
        "kb07_matmul_small_k", "kb08_matmul_irregular", "kb09_matmul_tall_skinny", "kb17_matmul_transposed_b"}) {
    const BoundTask bt = bound(task);
    ASSERT_TRUE(template_applies(t, bt)) << task;
    const Validity v = check_point(t, bt, t.default_point());
    ASSERT_TRUE(v.ok) << task << ": " << v.message;
    EXPECT_EQ(v.perf_fast, v.perf_total) << task;
    EXPECT_GE(v.perf_total, 1u) << task;
    EXPECT_TRUE(v.generic.empty()) << task << ": " << fast_path_note(v);
  }
}

// Each CUTLASS constraint is a rule with its own message, so that no point that would fail to compile is built.
TEST(TunerSm80Simt, InvalidPointsNameTheConstraint) {
  const Template& t = sm80();
  const Point d = profiler_point(t);
  const BoundTask sq = bound("kb01_matmul_square");  // row-major A and B
  expect_invalid(t, sq, with(d, {{"TB_M", "32"}, {"W_M", "64"}}),
                 "threadblock tile 32x128 not divisible by the warp tile 64x64");
  expect_invalid(t, sq, with(d, {{"TB_M", "256"}, {"TB_N", "256"}, {"W_M", "16"}, {"W_N", "32"}}),
                 "128 warps per threadblock (1..16)");
  expect_invalid(t, sq, with(d, {{"TB_M", "256"}, {"TB_N", "256"}, {"W_M", "128"}, {"W_N", "64"}}),
                 "warp tile 128x64: 256 accumulators per thread exceed the register budget (128)");
  // 32x128 with 16x16 warps: 16 warps = 512 threads for an A tile of 32 x 8 = 256 elements.
  expect_invalid(t, sq, with(d, {{"TB_M", "32"}, {"W_M", "16"}, {"W_N", "16"}}),
                 "512 threads do not split the A tile 32x8");
  // TB_K 32 pads the transposed A tile by one row: lanes of 4 (warp tile 32 rows) do not fit.
  expect_invalid(
      t, sq, with(d, {{"TB_K", "32"}}),
      "row-major A is transposed into shared memory with TB_K/32 = 1 padding rows, not a multiple of the lane tile 4");
  expect_invalid(t, sq, with(d, {{"STAGES", "7"}}), "STAGES=7 is not one of its values");

  // Column-major A is not transposed: TB_K 32 is fine there unless B is column-major, and then shared memory binds.
  const BoundTask nn = synthetic(false, true, {{1, true}});
  EXPECT_TRUE(check_point(t, nn, with(d, {{"TB_K", "32"}})).ok);
  const BoundTask nt = synthetic(false, false, {{1, true}});
  expect_invalid(t, nt, with(d, {{"TB_K", "32"}}),
                 "column-major B is transposed into shared memory with TB_K/32 = 1 padding rows, not a multiple of the "
                 "lane tile 4");
  expect_invalid(
      t, nn, with(d, {{"TB_M", "256"}, {"TB_N", "128"}, {"TB_K", "32"}, {"W_M", "64"}, {"W_N", "64"}, {"STAGES", "6"}}),
      "6 stages x (256+128) x 32 x 4 B (+ A padding) = 295680 B of shared memory > 227 KB");
  EXPECT_TRUE(
      check_point(
          t, nn,
          with(d, {{"TB_M", "256"}, {"TB_N", "128"}, {"TB_K", "32"}, {"W_M", "64"}, {"W_N", "64"}, {"STAGES", "3"}}))
          .ok);
  // 16 warps of 64x64 need 512 x 128 accumulator registers alone: more than an SM has.
  expect_invalid(
      t, nn, with(d, {{"TB_M", "256"}, {"TB_N", "256"}, {"TB_K", "32"}, {"W_M", "64"}, {"W_N", "64"}, {"STAGES", "3"}}),
      "512 threads x about 128 accumulators + 72 other registers each exceed the 65536 registers of an SM");

  // Valid corners: the largest warp tile (64x64 = 128 accumulators), 1 warp, 16 warps.
  EXPECT_TRUE(check_point(t, sq, with(d, {{"TB_M", "256"}, {"W_M", "64"}})).ok);
  EXPECT_TRUE(check_point(t, sq, with(d, {{"TB_M", "32"}, {"TB_N", "64"}, {"W_M", "32"}, {"W_N", "64"}})).ok);
  EXPECT_TRUE(check_point(t, sq, with(d, {{"TB_M", "64"}, {"TB_N", "64"}, {"W_M", "16"}, {"W_N", "16"}})).ok);
}

// Split-K takes CUTLASS's batch dimension: not on batched tasks; the grid z limit sends huge batches to the generic
// path.
TEST(TunerSm80Simt, SplitKAndTheGridLimits) {
  const Template& t = sm80();
  const Point d = profiler_point(t);
  expect_invalid(t, bound("kb03_matmul_batched"), with(d, {{"SPLIT_K", "4"}}),
                 "split-K 4 shares CUTLASS's grid z with the batch: batch 3 > 1");
  EXPECT_TRUE(check_point(t, bound("kb06_matmul_large_k"), with(d, {{"SPLIT_K", "32"}})).ok);
  EXPECT_TRUE(check_point(t, bound("kb03_matmul_batched"), with(d, {{"SPLIT_K", "0"}})).ok)
      << "auto leaves batched calls unsplit";
  // The auto rule in the rendered source: one tile per SM, at most 64 partitions, none under 256 deep, batch 1 only.
  const std::string src = render(t, bound("kb06_matmul_large_k"), d);
  for (const char* part : {"if (g.batch != 1) return 1;", "if (tiles >= sms) return 1;", "if (s > 64) s = 64;",
                           "while (s > 1 && g.K / s < 256) --s;", "constexpr int kSplitK = 0;"})
    EXPECT_NE(src.find(part), std::string::npos) << part;

  const BoundTask huge = synthetic(true, true, {{70000, false}, {8, true}});
  const Validity v = check_point(t, huge, d);
  ASSERT_TRUE(v.ok) << v.message;
  EXPECT_EQ(v.perf_fast, 1u);
  ASSERT_EQ(v.generic.size(), 1u);
  EXPECT_NE(v.generic[0].find("grid over CUDA's limits (batch 70000, N=1024) (workload w0)"), std::string::npos)
      << v.generic[0];
  expect_invalid(t, synthetic(true, true, {{70000, true}}), d, "the fast path takes none of the 1 perf workloads");
}

// Parallel split-K (the default): a fixed count splits unbatched calls only (the batch owns CUTLASS's grid z; auto
// leaves batched calls unsplit, so the default point stays valid for them), never one partition (the unsplit kernel
// again); serial split-K stops at 64 partitions, parallel goes to 256.
TEST(TunerSm80Simt, ParallelSplitKRules) {
  const Template& t = sm80();
  const Point d = profiler_point(t);
  const BoundTask kb06 = bound("kb06_matmul_large_k"), kb03 = bound("kb03_matmul_batched");
  for (const char* k : {"0", "2", "16", "64", "128", "256"})
    EXPECT_TRUE(check_point(t, kb06, with(d, {{"SPLIT_MODE", "parallel"}, {"SPLIT_K", k}})).ok) << k;
  EXPECT_TRUE(check_point(t, kb03, d).ok) << "the default (parallel, auto) runs batched calls unsplit";
  expect_invalid(t, kb03, with(d, {{"SPLIT_K", "2"}}), "split-K 2 shares CUTLASS's grid z with the batch: batch 3 > 1");
  expect_invalid(t, kb06, with(d, {{"SPLIT_MODE", "parallel"}, {"SPLIT_K", "1"}}),
                 "SPLIT_MODE parallel with SPLIT_K 1 is the unsplit kernel");
  expect_invalid(t, kb06, with(d, {{"SPLIT_MODE", "serial"}, {"SPLIT_K", "128"}}),
                 "serial split-K 128: the 128 partitions of a tile would run their epilogues one after another");
  EXPECT_TRUE(check_point(t, kb06, with(d, {{"SPLIT_K", "64"}})).ok);
  // 16 warps of 32x64 (512 threads at ~130 registers) cannot launch; 16 warps of 32x32 can.
  expect_invalid(t, kb06, with(d, {{"TB_M", "256"}}),
                 "512 threads x about 64 accumulators + 72 other registers each exceed the 65536 registers");
  EXPECT_TRUE(check_point(t, kb06, with(d, {{"TB_M", "128"}, {"TB_N", "128"}, {"W_M", "32"}, {"W_N", "32"}})).ok);
  EXPECT_TRUE(check_point(t, kb03, with(d, {{"SPLIT_MODE", "serial"}, {"SPLIT_K", "1"}})).ok)
      << "serial points stay as they were";

  // gemm.scheduling varies SPLIT_MODE with the swizzle and the count.
  const auto& strategies = t.strategies;
  const auto it =
      std::find_if(strategies.begin(), strategies.end(), [](const auto& s) { return s.name == "gemm.scheduling"; });
  ASSERT_NE(it, strategies.end());
  EXPECT_EQ(it->params, (std::vector<std::string>{"SWIZZLE", "SPLIT_K", "SPLIT_MODE"}));
}

// Serial renders no partial GEMM; parallel renders the kGemmSplitKParallel instance with a plain epilogue, the
// reduction in partition order (residual first, activation last, as serial split-K accumulates) and its auto rule.
TEST(TunerSm80Simt, RenderingOfTheSplitModes) {
  const Template& t = sm80();
  const Point d = t.default_point();
  const std::string serial = render(t, bound("kb06_matmul_large_k"), with(d, {{"SPLIT_MODE", "serial"}}));
  EXPECT_NE(serial.find("#if 0\n// Parallel split-K"), std::string::npos);
  EXPECT_NE(serial.find("#if 0\n  return khive_splits_parallel(g);\n#else\n  return khive_splits_serial(g);"),
            std::string::npos);
  const std::string par =
      render(t, bound("kb06_matmul_large_k"), with(d, {{"SPLIT_MODE", "parallel"}, {"SPLIT_K", "128"}}));
  for (const char* part :
       {"#if 1\n// Parallel split-K", "constexpr int kSplitK = 128;",
        "cutlass::epilogue::thread::LinearCombination<float, 1, float, float>;",
        "cutlass::gemm::GemmUniversalMode::kGemmSplitKParallel",
        "const int parts = int(GemmPartial::get_grid_shape(args).z);",
        "if (splits > 1 && khive_run_parallel(g, splits, stream)) return;",
        "const int64_t target = int64_t(khive_sm_count()) * (occupancy > 0 ? occupancy : 2);",
        "if (s > g.K / 1024) s = g.K / 1024;", "constexpr int64_t kPartialBytesCap = int64_t(256) << 20;",
        "acc[t] += reinterpret_cast<const float*>(&x)[t];",
        "reinterpret_cast<float*>(&out)[t] = khive_epi_at(acc[t], g, j + t);"})
    EXPECT_NE(par.find(part), std::string::npos) << part;
  // The residual is the sum's starting value (serial split-K's partition 0 adds its accumulators to R).
  const std::string res = render(t, bound("kb06_matmul_large_k"), with(d, {{"SPLIT_MODE", "parallel"}}));
  EXPECT_LT(res.find("acc[t] = reinterpret_cast<const float*>(&r)[t];"), res.find("for (int z = 0; z < parts; ++z)"));
}

TEST(TunerSm80Simt, RenderingInstantiatesGemmUniversalForTheTasksLayouts) {
  const Template& t = sm80();
  const BoundTask tb = bound("kb17_matmul_transposed_b");
  const std::string s = render(t, tb, with(profiler_point(t), {{"SWIZZLE", "4"}, {"SPLIT_K", "8"}}));
  EXPECT_EQ(s.find("{{"), std::string::npos);
  for (const char* part :
       {"using LayoutA = std::conditional_t<kRelayoutA, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>;",
        "using LayoutB = std::conditional_t<kRelayoutB, cutlass::layout::RowMajor, cutlass::layout::ColumnMajor>;",
        "cutlass::gemm::GemmShape<128, 128, 8>, cutlass::gemm::GemmShape<32, 64, 8>",
        "GemmIdentityThreadblockSwizzle<4>", "constexpr int kSplitK = 8;",
        "cutlass::arch::OpClassSimt, cutlass::arch::Sm80", "khive_gemm_generic", "extern \"C\""})
    EXPECT_NE(s.find(part), std::string::npos) << part;
}

// RELAYOUT_A / RELAYOUT_B copy a K-contiguous operand M- / N-contiguous first: allowed only for such an operand,
// and the copy lifts the transposition rules (kb17's column-major B takes TB_K 32 once it is copied row-major).
TEST(TunerSm80Simt, RelayoutRules) {
  const Template& t = sm80();
  const Point d = t.default_point();
  EXPECT_EQ(d.at("RELAYOUT_A"), "0");
  EXPECT_EQ(d.at("RELAYOUT_B"), "0");
  const BoundTask kb17 = bound("kb17_matmul_transposed_b");   // row-major A, column-major B: both K-contiguous
  const BoundTask kb01 = bound("kb01_matmul_square");         // row-major A and B
  const BoundTask nt = synthetic(false, false, {{1, true}});  // column-major A and B
  for (const char* a : {"0", "1"})
    for (const char* b : {"0", "1"})
      EXPECT_TRUE(check_point(t, kb17, with(d, {{"RELAYOUT_A", a}, {"RELAYOUT_B", b}})).ok) << a << b;
  EXPECT_TRUE(check_point(t, kb01, with(d, {{"RELAYOUT_A", "1"}})).ok);
  expect_invalid(t, kb01, with(d, {{"RELAYOUT_B", "1"}}),
                 "RELAYOUT_B 1: B is row-major (N-contiguous) already; there is nothing to copy");
  expect_invalid(t, nt, with(d, {{"RELAYOUT_A", "1"}}),
                 "RELAYOUT_A 1: A is column-major (M-contiguous) already; there is nothing to copy");
  EXPECT_TRUE(check_point(t, nt, with(d, {{"RELAYOUT_B", "1"}})).ok);

  // TB_K 32 pads a transposed tile by one row, which lanes of 4 do not fit: refused while an operand is
  // K-contiguous, allowed once both are copied.
  const Point deep = with(d, {{"TB_K", "32"}, {"STAGES", "3"}});
  expect_invalid(t, kb17, deep, "row-major A is transposed into shared memory with TB_K/32 = 1 padding rows");
  expect_invalid(t, kb17, with(deep, {{"RELAYOUT_A", "1"}}),
                 "column-major B is transposed into shared memory with TB_K/32 = 1 padding rows");
  EXPECT_TRUE(check_point(t, kb17, with(deep, {{"RELAYOUT_A", "1"}, {"RELAYOUT_B", "1"}})).ok);
  EXPECT_TRUE(check_point(t, kb01, with(deep, {{"RELAYOUT_A", "1"}})).ok);

  const auto it = std::find_if(t.strategies.begin(), t.strategies.end(),
                               [](const auto& s) { return s.name == "gemm.operand_relayout"; });
  ASSERT_NE(it, t.strategies.end());
  EXPECT_EQ(it->params, (std::vector<std::string>{"RELAYOUT_A", "RELAYOUT_B", "TB_K"}));
}

// The relaid kernel is instantiated for the copies' layouts (column-major A, row-major B) and reads the copies'
// leading dimensions; without a copy it is the task's layouts, as before.
TEST(TunerSm80Simt, RenderingOfTheRelayout) {
  const Template& t = sm80();
  const BoundTask kb17 = bound("kb17_matmul_transposed_b");
  const std::string plain = render(t, kb17, t.default_point());
  EXPECT_NE(plain.find("constexpr bool kRelayoutA = 0 && KHIVE_A_ROW, kRelayoutB = 0 && !KHIVE_B_ROW;"),
            std::string::npos);
  const std::string both = render(t, kb17, with(t.default_point(), {{"RELAYOUT_A", "1"}, {"RELAYOUT_B", "1"}}));
  EXPECT_EQ(both.find("{{"), std::string::npos);
  for (const char* part :
       {"constexpr bool kRelayoutA = 1 && KHIVE_A_ROW, kRelayoutB = 1 && !KHIVE_B_ROW;",
        "using LayoutA = std::conditional_t<kRelayoutA, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>;",
        "using LayoutB = std::conditional_t<kRelayoutB, cutlass::layout::RowMajor, cutlass::layout::ColumnMajor>;",
        "const int64_t lda = kARow ? g.a_rs : g.a_cs, ldb = kBRow ? g.b_rs : g.b_cs;",
        "__global__ void __launch_bounds__(256) khive_relayout(",
        "khive_relayout_operand<1>(g.A, g.a_rs, g.a_cs, g.a_bs, g.M, g.K, g.batch, stream)",
        "khive_relayout_operand<2>(g.B, g.b_cs, g.b_rs, g.b_bs, g.N, g.K, g.batch, stream)",
        "if ((kRelayoutA && !khive_relayout_a(g, stream)) || (kRelayoutB && !khive_relayout_b(g, stream))) {"})
    EXPECT_NE(both.find(part), std::string::npos) << part;
}

// The fp32 CUDA templates serve the cutegen26 GEMMs; the strategies of this one are offered, and an agent on one of
// them starts from its default (CUTLASS's profiler point).
TEST(TunerSm80Simt, TunerOffersItNextToTheHandWrittenSimtTemplate) {
  const Task task = load_task(kRepo / "tasks/cutegen26/kb01_matmul_square");
  const BoundTask bt = bind_task(task, Backend::cuda, *lib().binding_for(task));
  std::vector<std::string> names;
  for (const auto& tpl : lib().templates)
    if (template_applies(tpl, bt)) names.push_back(tpl.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"gemm.cuda_simt", "gemm.cuda_sm80_3xtf32", "gemm.cuda_sm80_simt",
                                      "gemm.cuda_sm90_3xtf32", "gemm.cuda_sm90_rs3xtf32", "gemm.cuda_smallk_3xtf32"}));

  TunerOptions o;
  o.kernels_dir = kRepo / "kernels";
  auto agent = make_tuner_agent(o);
  std::vector<std::string> strategies;
  for (const auto& s : agent->strategies(task, Backend::cuda)) strategies.push_back(s.name);
  for (const char* s : {"gemm.tile_shape", "gemm.warp_shape", "gemm.pipeline", "gemm.scheduling"})
    EXPECT_NE(std::find(strategies.begin(), strategies.end(), s), strategies.end()) << s;
  // The hive deals strategies round robin over the templates: gemm.tile_shape (the SIMT ones), gemm.tf32x3_tile
  // (CUTLASS 2.x 3xTF32's first), gemm.tf32x3_sm90_tile (the Sm90 tripled TF32 GEMM's first), gemm.rs3xtf32_tile (the
  // register-A one's first; gemm.cuda_smallk_3xtf32 has no valid point at K = 4096 and is left out),
  // gemm.thread_tile (the hand-written one's second), gemm.tf32x3_warp, gemm.operand_relayout (this one's second);
  // with 7 agents the seventh starts there, i.e. from this default.
  ASSERT_GE(strategies.size(), 7u);
  EXPECT_EQ(strategies[1], "gemm.tf32x3_tile");
  EXPECT_EQ(strategies[2], "gemm.tf32x3_sm90_tile");
  EXPECT_EQ(strategies[3], "gemm.rs3xtf32_tile");
  EXPECT_EQ(strategies[5], "gemm.tf32x3_warp");
  EXPECT_EQ(strategies[6], "gemm.operand_relayout");
  EXPECT_EQ(std::find(strategies.begin(), strategies.end(), "gemm.smallk_tile"), strategies.end());

  AgentContext ctx;
  ctx.task = &task;
  ctx.backend = Backend::cuda;
  ctx.strategy = {"gemm.operand_relayout", ""};
  ctx.seed = 1;
  const auto p = agent->propose(ctx);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->params.at("template"), "gemm.cuda_sm80_simt");
  EXPECT_NE(p->note.find("default point"), std::string::npos) << p->note;
  EXPECT_EQ(p->ext, "cu");
}

// A template whose measured points all trail the leader by 1.5x or more on every timed shape (two points at least)
// is left alone: a strategy only it has declines, with the numbers, and the hive moves the agent on (kb17 on the
// H200: the hand-written SIMT template's points at 1.7-3.9x the CUTLASS leader took 13 of 24 candidates).
TEST(TunerSm80Simt, StrategiesOfATemplateTheLeaderLeavesFarBehindDecline) {
  const Task task = load_task(kRepo / "tasks/cutegen26/kb17_matmul_transposed_b");
  TunerOptions o;
  o.kernels_dir = kRepo / "kernels";
  const std::string w = "perf-2048x8192x4096";
  auto kernel = [&](const std::string& id, const std::string& tname, std::map<std::string, std::string> params,
                    double t) {
    MeasuredKernel k;
    k.id = id;
    k.params = std::move(params);
    k.params["template"] = tname;
    k.time_s = t;
    k.workload_median_s = {{w, t}};
    return k;
  };
  MeasuredKernel leader =
      kernel("c16", "gemm.cuda_sm80_simt", {{"TB_M", "128"}, {"W_M", "32"}, {"W_N", "128"}}, 2.956e-3);
  const MeasuredKernel simt1 = kernel("c10", "gemm.cuda_simt", {{"BK", "16"}, {"BN", "256"}}, 5.629e-3);
  const MeasuredKernel simt2 = kernel("c06", "gemm.cuda_simt", {{"BK", "16"}}, 5.801e-3);
  auto propose = [&](const std::vector<MeasuredKernel>& backups, const MeasuredKernel& lead, std::string* declined) {
    auto agent = make_tuner_agent(o);
    AgentContext ctx;
    ctx.task = &task;
    ctx.backend = Backend::cuda;
    ctx.strategy = {"gemm.thread_tile", ""};  // the hand-written template's own strategy
    ctx.seed = 3;
    ctx.leader = lead;
    ctx.backups = backups;
    auto p = agent->propose(ctx);
    *declined = agent->declined_because();
    return p;
  };
  std::string why;
  EXPECT_FALSE(propose({simt1, simt2}, leader, &why).has_value());
  EXPECT_EQ(why, "gemm.cuda_simt's 2 measured points are 1.90x the leader's time or more on every timed shape");

  // One measured point is not enough to judge a template; 1.35x behind is not far enough.
  auto p = propose({simt1}, leader, &why);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->params.at("template"), "gemm.cuda_simt");
  EXPECT_EQ(why, "");
  MeasuredKernel close = simt2;
  close.workload_median_s[w] = close.time_s = 4.0e-3;
  EXPECT_TRUE(propose({simt1, close}, leader, &why).has_value());
  // A timed shape the template was never measured on: no verdict.
  MeasuredKernel two_shapes = leader;
  two_shapes.workload_median_s["perf-other"] = 1e-3;
  EXPECT_TRUE(propose({simt1, simt2}, two_shapes, &why).has_value());
  // The leader's own template is never ruled out (gemm.tile_shape exists on both: the agent explores the leader's).
  auto agent = make_tuner_agent(o);
  AgentContext ctx;
  ctx.task = &task;
  ctx.backend = Backend::cuda;
  ctx.strategy = {"gemm.tile_shape", ""};
  ctx.seed = 3;
  ctx.leader = leader;
  ctx.backups = {simt1, simt2};
  const auto q = agent->propose(ctx);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->params.at("template"), "gemm.cuda_sm80_simt");
}
