// The tensor-core GEMM templates of issue 23, without a GPU: gemm.cuda_tc_gemv (skinny bf16/fp16 products, M <= 16)
// and gemm.cuda_sm80_3xtf32 (fp32 at fp32-level accuracy on TF32 tensor cores). Which tasks they serve, which
// workloads their fast paths take, the rules that refuse points before anything is built, what the rendered source
// instantiates, the strategies the tuner deals, and the per-shape dispatcher routing the decode shapes of a sol GEMM
// to the GEMV point next to a CUTLASS sm90 leader. Their kernels are checked on the GPU by tests/gpu/gemm_cuda.py.
#include <gtest/gtest.h>

#include "khive/agent/agent.hpp"
#include "khive/tuner/compose.hpp"
#include "tuner_support.hpp"

namespace {

const Template& gemv() { return repo_template("gemm.cuda_tc_gemv"); }
const Template& tf32x3() { return repo_template("gemm.cuda_sm80_3xtf32"); }

BoundTask bound(const std::string& suite_task) { return bound_cuda(suite_task); }

Point with(Point p, std::initializer_list<std::pair<const char*, const char*>> changes) { return with_set(p, changes); }

void expect_invalid(const Template& t, const BoundTask& bt, const Point& p, const std::string& message) {
  const Validity v = check_point(t, bt, p);
  EXPECT_FALSE(v.ok) << describe_point(p);
  EXPECT_NE(v.message.find(message), std::string::npos) << describe_point(p) << ": " << v.message;
}

// The perf workloads (CUDA) of a bound task whose M is at most 16.
std::set<std::string> skinny_perf(const BoundTask& bt) {
  std::set<std::string> out;
  for (std::size_t w = 0; w < bt.workload_vars.size(); ++w)
    if (bt.workload_perf[w] && bt.workload_vars[w].at("M") <= 16) out.insert(bt.workload_names[w]);
  return out;
}

std::vector<std::string> strategy_names(const std::string& suite_task, const std::set<std::string>& only = {}) {
  TunerOptions o;
  o.kernels_dir = repo() / "kernels";
  o.templates = only;
  const Task task = repo_task(suite_task);
  std::vector<std::string> names;
  for (const auto& s : make_tuner_agent(o)->strategies(task, Backend::cuda)) names.push_back(s.name);
  return names;
}

MeasuredKernel measured(const std::string& id, const Template& t, const Point& p,
                        const std::map<std::string, double>& times) {
  MeasuredKernel k;
  k.id = id;
  k.params = p;
  k.params["template"] = t.name;
  k.workload_median_s = times;
  double s = 0;
  for (const auto& [w, v] : times) s += std::log(v);
  k.time_s = std::exp(s / static_cast<double>(times.size()));
  return k;
}

}  // namespace

// The GEMV template serves the bf16 sol GEMMs (plain, residual, o-projection); its default takes exactly the decode
// shapes (M <= 16) on the fast path, and every other workload runs the generic path (a correct SIMT kernel) or, for a
// larger M of the weight layout, the same kernel once per 16 rows.
TEST(TunerTcGemv, ServesTheSolGemmsAndTakesTheDecodeShapes) {
  const Template& t = gemv();
  for (const char* task : {"sol/gemm_bf16", "sol/gemm_residual", "sol/attn_o_proj_residual"}) {
    SCOPED_TRACE(task);
    const BoundTask bt = bound(task);
    ASSERT_TRUE(template_applies(t, bt));
    const Validity v = check_point(t, bt, t.default_point());
    ASSERT_TRUE(v.ok) << v.message;
    EXPECT_EQ(v.perf_fast, skinny_perf(bt).size()) << fast_path_note(v, 20);
    EXPECT_GE(v.perf_fast, 2u);
    EXPECT_LT(v.perf_fast, v.perf_total);
    for (const auto& g : v.generic) {
      const bool k_unaligned = g.find("16-byte loads need K a multiple of 8") != std::string::npos;
      const bool m_large = g.find("> 16: the kernel runs once per 16 rows of A") != std::string::npos;
      EXPECT_TRUE(k_unaligned || m_large) << g;
    }
  }
  const BoundTask bf16 = bound("sol/gemm_bf16");
  EXPECT_EQ(skinny_perf(bf16), (std::set<std::string>{"gemm_bf16-M1-N6144-K4096", "gemm_bf16-M16-N28672-K4096",
                                                      "gemm_bf16-M16-N4096-K14336"}));
  // 16-bit types only: the fp32 GEMMs are not its tasks.
  EXPECT_FALSE(template_applies(t, bound("cutegen26/kb02_matmul_standard")));
  // On the CPU backend there is nothing of it.
  const Task task = repo_task("sol/gemm_bf16");
  EXPECT_FALSE(template_applies(t, bind_task(task, Backend::cpu, *repo_library().binding_for(task))));
}

// Registers (loads in flight, fragments, accumulators), registers per SM, and the warps' shared-memory sums: each a
// rule with its own message, so no point that would spill or not launch is built.
TEST(TunerTcGemv, RulesRefuseWhatWouldSpillOrNotLaunch) {
  const Template& t = gemv();
  const BoundTask bt = bound("sol/gemm_bf16");
  const Point d = t.default_point();
  EXPECT_EQ(describe_point(d), "B_LOAD=stream KSTAGE=256 ROW_BLOCKS=2 SPLIT=0 STAGES=4 UNROLL=1 WARPS=8");
  expect_invalid(t, bt, with(d, {{"ROW_BLOCKS", "4"}, {"UNROLL", "4"}}),
                 "ROW_BLOCKS 4 x UNROLL 4: about 240 registers per thread");
  expect_invalid(t, bt, with(d, {{"WARPS", "16"}, {"ROW_BLOCKS", "4"}, {"UNROLL", "2"}}),
                 "512 threads x about 160 registers exceed the 65536 registers of an SM");
  expect_invalid(t, bt, with(d, {{"WARPS", "16"}, {"ROW_BLOCKS", "4"}, {"UNROLL", "1"}}),
                 "16 warps x 64 rows x 17 floats = 69632 B of static shared memory for the warps' sums > 48 KB");
  for (const auto& p : {with(d, {{"WARPS", "16"}, {"ROW_BLOCKS", "2"}, {"UNROLL", "1"}}),
                        with(d, {{"WARPS", "8"}, {"ROW_BLOCKS", "4"}, {"UNROLL", "2"}}),
                        with(d, {{"ROW_BLOCKS", "1"}, {"UNROLL", "4"}, {"SPLIT", "32"}, {"B_LOAD", "ldg"}})})
    EXPECT_TRUE(check_point(t, bt, p).ok) << describe_point(p) << ": " << check_point(t, bt, p).message;
  // B_LOAD=bulk: the ring (STAGES x ROWS x (2 KSTAGE + 16) B) and the warps' sums within a CTA's 226 KB; STAGES
  // and KSTAGE cost nothing on the other load paths.
  expect_invalid(t, bt, with(d, {{"B_LOAD", "bulk"}, {"ROW_BLOCKS", "4"}, {"STAGES", "8"}}),
                 "a ring of 8 stages x 64 rows x (2 x 256 + 16) B = 270336 B plus 34816 B for the warps' sums exceed");
  for (const auto& p : {with(d, {{"B_LOAD", "bulk"}}),
                        with(d, {{"B_LOAD", "bulk"}, {"STAGES", "8"}, {"KSTAGE", "512"}, {"ROW_BLOCKS", "1"}}),
                        with(d, {{"ROW_BLOCKS", "4"}, {"STAGES", "8"}, {"KSTAGE", "512"}})})
    EXPECT_TRUE(check_point(t, bt, p).ok) << describe_point(p) << ": " << check_point(t, bt, p).message;
  // A task with no decode shape among its timed workloads has no use for the template's fast path.
  const BoundTask big = synthetic_task("gemm", "bfloat16",
                                       {{{{"M", 4096},
                                          {"N", 4096},
                                          {"K", 4096},
                                          {"BATCH", 1},
                                          {"ELEM_BYTES", 2},
                                          {"A_ROW", 1},
                                          {"B_ROW", 0},
                                          {"HAS_RESIDUAL", 0},
                                          {"HAS_ACTIVATION", 0}},
                                         true}},
                                       "gemm");
  expect_invalid(t, big, d, "the fast path takes none of the 1 perf workloads");
  // B row-major ([K, N]) is not the weight layout: generic.
  const BoundTask nn = synthetic_task("gemm", "bfloat16",
                                      {{{{"M", 1},
                                         {"N", 4096},
                                         {"K", 4096},
                                         {"BATCH", 1},
                                         {"ELEM_BYTES", 2},
                                         {"A_ROW", 1},
                                         {"B_ROW", 1},
                                         {"HAS_RESIDUAL", 0},
                                         {"HAS_ACTIVATION", 0}},
                                        true}},
                                      "gemm");
  expect_invalid(t, nn, d, "the fast kernel reads A row-major and B K-contiguous");
}

// The rendered source: bf16 and fp16 MMAs (chosen by the element type), the deterministic split combine, the generic
// path and the per-pass loop; the residual binding adds R once, before the epilogue.
TEST(TunerTcGemv, RenderedSource) {
  const Template& t = gemv();
  const std::string src = render(t, bound("sol/gemm_residual"), t.default_point());
  for (const char* part :
       {"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        "constexpr int kRowBlocks = 2;", "constexpr int kSplit = 0;", "constexpr bool kStreamB = 1;",
        "atomicAdd(&p.counters[blockIdx.x], 1) == p.splits - 1", "for (int z = 0; z < p.splits; ++z) v += __ldcg(",
        "p.counters[blockIdx.x] = 0;", "khive_run_generic(g, stream);", "for (int64_t m0 = 0; m0 < g.M; m0 += kMaxM)",
        "constexpr bool KHIVE_A_ROW = true, KHIVE_B_ROW = false, KHIVE_HAS_RESIDUAL = true",
        "if constexpr (KHIVE_HAS_RESIDUAL) v += khive_to_float_t(g.R[m * g.N + n]);"})
    EXPECT_NE(src.find(part), std::string::npos) << part;
  EXPECT_EQ(src.find("{{"), std::string::npos);
  EXPECT_NE(src.find("constexpr bool kBulk = 0;"), std::string::npos);
  // B_LOAD=bulk: the producer warp, the ring in dynamic shared memory (its opt-in) and the two barriers per stage.
  const std::string bulk = render(t, bound("sol/gemm_residual"), with(t.default_point(), {{"B_LOAD", "bulk"}}));
  for (const char* part :
       {"constexpr bool kBulk = 1;", "constexpr int kStages = 4;", "constexpr int kKStage = 256;",
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
        "cudaFuncAttributeMaxDynamicSharedMemorySize, kRingBytes", "khive_mbar_wait(&empty[s], (round - 1) & 1u);",
        "khive_mbar_wait(&full[s], uint32_t(i / kStages) & 1u);"})
    EXPECT_NE(bulk.find(part), std::string::npos) << part;
  // fp16 tasks get the same source with khive_t = __half.
  const Task f16 = edited_task("sol/gemm_bf16", [](json& d) {
    d["khive"].erase("baselines");  // the copy has no baselines/ folder
    for (const char* k : {"inputs", "outputs"})
      for (auto& [name, spec] : d[k].items()) spec["dtype"] = "float16";
  });
  const BoundTask bt16 = bind_task(f16, Backend::cuda, *repo_library().binding_for(f16));
  ASSERT_TRUE(template_applies(t, bt16));
  EXPECT_NE(render(t, bt16, t.default_point()).find("using khive_t = __half;"), std::string::npos);
}

// 3xTF32 serves every dense fp32 GEMM of cutegen26 (not the triangular ones, whose op only the SIMT templates
// serve); its default (16-byte accesses) takes every perf shape but kb08's, whose odd pitches need ALIGN 1.
TEST(TunerSm80Tf32x3, ServesTheDenseFp32GemmsWithTheFastPathOnTheirPerfShapes) {
  const Template& t = tf32x3();
  EXPECT_EQ(describe_point(t.default_point()),
            "ALIGN=4 SPLIT_K=0 STAGES=4 SWIZZLE=1 TB_K=16 TB_M=128 TB_N=128 W_M=64 W_N=32");
  for (const char* task :
       {"kb01_matmul_square", "kb02_matmul_standard", "kb03_matmul_batched", "kb06_matmul_large_k",
        "kb07_matmul_small_k", "kb09_matmul_tall_skinny", "kb13_matmul_symmetric", "kb17_matmul_transposed_b"}) {
    SCOPED_TRACE(task);
    const BoundTask bt = bound(std::string("cutegen26/") + task);
    ASSERT_TRUE(template_applies(t, bt));
    const Validity v = check_point(t, bt, t.default_point());
    ASSERT_TRUE(v.ok) << v.message;
    EXPECT_EQ(v.perf_fast, v.perf_total);
  }
  const BoundTask kb08 = bound("cutegen26/kb08_matmul_irregular");
  expect_invalid(t, kb08, t.default_point(),
                 "the fast path takes none of the 1 perf workloads: ALIGN 4 needs the operands' pitches and N "
                 "multiples of 4: M=8205 N=5921 K=2949");
  const Validity a1 = check_point(t, kb08, with(t.default_point(), {{"ALIGN", "1"}}));
  ASSERT_TRUE(a1.ok) << a1.message;
  EXPECT_EQ(a1.perf_fast, 1u);
  EXPECT_TRUE(a1.generic.empty()) << fast_path_note(a1);
  for (const char* task : {"kb14_matmul_upper_triangular", "kb15_matmul_lower_triangular"})
    EXPECT_FALSE(template_applies(t, bound(std::string("cutegen26/") + task))) << task;
  EXPECT_FALSE(template_applies(t, bound("sol/gemm_bf16")));
}

// Warp tiles whose two TF32 halves of every fragment plus the accumulators would spill (ptxas, sm_90a: 64x64 spills
// 992 B; 64x32 uses 241 registers, 32x64 233, 32x32 158), warp counts, shared memory, split-K on batches.
TEST(TunerSm80Tf32x3, RulesRefuseSpillsAndImpossibleTiles) {
  const Template& t = tf32x3();
  const Point d = t.default_point();
  const BoundTask kb02 = bound("cutegen26/kb02_matmul_standard");
  expect_invalid(t, kb02, with(d, {{"W_M", "64"}, {"W_N", "64"}}),
                 "warp tile 64x64: 128 accumulators + 128 big/small fragment registers");
  EXPECT_TRUE(check_point(t, kb02, with(d, {{"W_M", "32"}, {"W_N", "64"}})).ok);
  EXPECT_TRUE(check_point(t, kb02, with(d, {{"TB_M", "64"}, {"TB_N", "64"}, {"W_M", "32"}, {"W_N", "32"}})).ok);
  expect_invalid(t, kb02, with(d, {{"TB_M", "256"}, {"TB_N", "256"}}), "32 warps per threadblock (2..8)");
  expect_invalid(t, kb02, with(d, {{"TB_M", "64"}, {"TB_N", "64"}, {"W_M", "64"}, {"W_N", "64"}}), "1 warps per");
  expect_invalid(t, kb02, with(d, {{"TB_M", "256"}, {"TB_N", "128"}, {"W_M", "64"}, {"W_N", "64"}}), "warp tile 64x64");
  expect_invalid(
      t, kb02,
      with(d, {{"TB_M", "64"}, {"TB_N", "256"}, {"W_M", "32"}, {"W_N", "64"}, {"TB_K", "32"}, {"STAGES", "6"}}),
      "6 stages x (64+256) x 32 x 4 B = 245760 B of shared memory > 227 KB");
  expect_invalid(t, bound("cutegen26/kb03_matmul_batched"), with(d, {{"SPLIT_K", "4"}}),
                 "split-K 4 shares CUTLASS's grid z with the batch");
  EXPECT_TRUE(check_point(t, bound("cutegen26/kb06_matmul_large_k"), with(d, {{"SPLIT_K", "64"}})).ok);
}

// The rendered kernel instantiates the 3xTF32 operator (never plain TF32's OpMultiplyAdd on tensor cores), with the
// task's layouts: kb17's B column-major, kb13's symmetric copy read column-major.
TEST(TunerSm80Tf32x3, RendersTheFastF32OperatorInTheTasksLayouts) {
  const Template& t = tf32x3();
  const std::string kb17 = render(t, bound("cutegen26/kb17_matmul_transposed_b"), t.default_point());
  for (const char* part :
       {"cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80", "cutlass::arch::OpMultiplyAddFastF32>;",
        "cutlass::gemm::GemmShape<16, 8, 8>", "using LayoutB = cutlass::layout::ColumnMajor;",
        "using LayoutA = cutlass::layout::RowMajor;", "constexpr int kAlign = 4;"})
    EXPECT_NE(kb17.find(part), std::string::npos) << part;
  EXPECT_EQ(kb17.find("cutlass::arch::OpMultiplyAdd>"), std::string::npos);
  const std::string kb13 = render(t, bound("cutegen26/kb13_matmul_symmetric"), t.default_point());
  EXPECT_NE(kb13.find("using LayoutA = cutlass::layout::ColumnMajor;"), std::string::npos);
  EXPECT_NE(kb13.find("khive_symm_prepare"), std::string::npos);
}

// The tuner deals both templates' strategies: the GEMV template's after the CUTLASS sm90 one's on the bf16 GEMM (the
// first agent still starts on the big tiles), 3xTF32's second on the fp32 GEMMs; TunerOptions::templates narrows
// the library (a replay's recorded templates) and brings back the strategies the recorded run had.
TEST(TunerTcGemv, StrategiesAreDealtAndCanBeNarrowed) {
  EXPECT_EQ(strategy_names("sol/gemm_bf16"),
            (std::vector<std::string>{"gemm.tile_shape", "gemm.gemv_rows", "gemm.cluster_and_schedule",
                                      "gemm.gemv_loads", "gemm.scheduling", "gemm.gemv_split", "tuner.dispatch"}));
  EXPECT_EQ(
      strategy_names("sol/gemm_bf16", {"gemm.cuda_sm90"}),
      (std::vector<std::string>{"gemm.tile_shape", "gemm.cluster_and_schedule", "gemm.scheduling", "tuner.dispatch"}));
  const auto fp32 = strategy_names("cutegen26/kb02_matmul_standard");
  ASSERT_GE(fp32.size(), 3u);
  EXPECT_EQ(fp32[0], "gemm.tile_shape");
  EXPECT_EQ(fp32[1], "gemm.tf32x3_tile");
  for (const char* s : {"gemm.tf32x3_warp", "gemm.tf32x3_pipeline", "gemm.tf32x3_scheduling", "gemm.operand_relayout"})
    EXPECT_NE(std::find(fp32.begin(), fp32.end(), s), fp32.end()) << s;
}

// The dispatcher with a CUTLASS sm90 leader and a GEMV backup that is faster on the three decode shapes (and far
// slower on the big ones): those shapes go to the GEMV point, the others stay on the leader's, and the composite
// renders both bodies in their namespaces.
TEST(TunerTcGemv, DispatchRoutesTheDecodeShapesToTheGemvPoint) {
  const Task task = repo_task("sol/gemm_bf16");
  const BoundTask bt = bind_task(task, Backend::cuda, *repo_library().binding_for(task));
  const Template& sm90 = repo_template("gemm.cuda_sm90");
  const std::set<std::string> skinny = skinny_perf(bt);
  std::map<std::string, double> lead_t, gemv_t;
  for (std::size_t w = 0; w < bt.workload_names.size(); ++w) {
    if (!bt.workload_perf[w]) continue;
    const auto& v = bt.workload_vars[w];
    const double bytes = 2.0 * double(v.at("N")) * double(v.at("K"));
    const std::string& name = bt.workload_names[w];
    lead_t[name] = skinny.count(name) ? bytes / 2.0e12 : 2.0 * v.at("M") * v.at("N") * v.at("K") / 700e12;
    gemv_t[name] = skinny.count(name) ? bytes / 4.0e12 : lead_t[name] * 20;
  }
  const MeasuredKernel leader = measured("c1", sm90, sm90.default_point(), lead_t);
  const MeasuredKernel backup = measured("c2", gemv(), gemv().default_point(), gemv_t);
  const DispatchPlan plan = plan_dispatch(task, bt, repo_library(), leader, {backup});
  ASSERT_TRUE(plan.ok()) << plan.reason;
  ASSERT_EQ(plan.variants.size(), 2u);
  EXPECT_EQ(plan.variants[0].t->name, "gemm.cuda_sm90");
  EXPECT_EQ(plan.variants[1].t->name, "gemm.cuda_tc_gemv");
  for (const auto& r : plan.routes)
    for (const auto& w : r.workloads) EXPECT_EQ(r.variant, skinny.count(w) ? 1 : 0) << w;
  const std::string src = render_composite(task, bt, plan.variants, plan.routes);
  for (const char* part : {"namespace khive_v0 {", "namespace khive_v1 {", "khive_dispatch::run(khive_dispatch::pick(",
                           "mma.sync.aligned.m16n8k16", "cutlass::gemm::KernelTmaWarpSpecializedCooperative"})
    EXPECT_NE(src.find(part), std::string::npos) << part;
}
