// gemm.cuda_sm90_rs3xtf32 (the register-A 3xTF32 GEMM of issue 23) without a GPU: which cutegen26 GEMMs its fast path
// takes (A through TMA in place, or through its K-contiguous padded copy when A is column-major or its pitch is not a
// multiple of 4 floats), the rules that refuse points before anything is built, and what the rendered source holds.
// Its kernels are checked on the GPU by tests/gpu/gemm_cuda.py (`--only rs3x`) and khive bench's guard.
#include <gtest/gtest.h>

#include "tuner_support.hpp"

namespace {

const Template& rs3x() { return repo_template("gemm.cuda_sm90_rs3xtf32"); }

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

// kb13 hands A over column-major (its symmetric copy S(A)) and kb08's K = 2949 is no multiple of 4: both go through
// the padded copy of A rather than the generic kernel, so the default point takes every perf workload of the dense
// fp32 GEMMs with one batch axis.
TEST(Rs3xtf32, FastPathTakesEveryDenseFp32Gemm) {
  for (const char* t : {"kb01_matmul_square", "kb02_matmul_standard", "kb03_matmul_batched", "kb06_matmul_large_k",
                        "kb08_matmul_irregular", "kb13_matmul_symmetric", "kb17_matmul_transposed_b"}) {
    const Validity v = check_point(rs3x(), bound_cuda(std::string("cutegen26/") + t), rs3x().default_point());
    ASSERT_TRUE(v.ok) << t << ": " << v.message;
    EXPECT_EQ(v.perf_fast, v.perf_total) << t;
    EXPECT_GT(v.perf_total, 0u) << t;
  }
  const BoundTask kb13 = bound_cuda("cutegen26/kb13_matmul_symmetric");
  EXPECT_EQ(kb13.workload_vars.back().at("A_ROW"), 0);
}

TEST(Rs3xtf32, RulesCountRegistersAndSharedMemory) {
  const BoundTask bt = bound_cuda("cutegen26/kb02_matmul_standard");
  const Point d = rs3x().default_point();
  EXPECT_EQ(d.at("TILE_N"), "128");
  EXPECT_EQ(d.at("PROMOTE"), "1");
  // A promoted 128x256 tile: 256 accumulator registers + 48 + 40 > 232.
  Validity v = check_point(rs3x(), bt, with_set(d, {{"TILE_N", "256"}}));
  EXPECT_FALSE(v.ok);
  EXPECT_TRUE(has(v.message, "256 accumulator registers per consumer thread")) << v.message;
  // One chain on 128x256 fits the registers; its stages are 80 KB each, so two fit and three do not.
  EXPECT_TRUE(check_point(rs3x(), bt, with_set(d, {{"TILE_N", "256"}, {"PROMOTE", "0"}, {"STAGES", "2"}})).ok);
  v = check_point(rs3x(), bt, with_set(d, {{"TILE_N", "256"}, {"PROMOTE", "0"}, {"STAGES", "3"}}));
  EXPECT_FALSE(v.ok);
  EXPECT_TRUE(has(v.message, "of shared memory > 227 KB")) << v.message;
}

// The rendered source keeps A in place only where TMA can address it, else copies it (khive_rs_pad_a) and points the
// TMA descriptor at the copy; without memory for the copy the call runs the generic kernel.
TEST(Rs3xtf32, RendersTheCopyOfAAndItsFallback) {
  const std::string cu = render(rs3x(), bound_cuda("cutegen26/kb13_matmul_symmetric"), rs3x().default_point());
  for (const char* s :
       {"bool khive_a_tma_ready(const khive_gemm_args& g)", "__global__ void __launch_bounds__(256) khive_rs_pad_a(",
        "khive_workspace<2>(size_t(la * g.M * KP) * sizeof(float))",
        "if (!b2 || (!a_direct && !a_copy) || !configured)", "khive_tma_a(A, int(g.M), int(g.K), int(la), a_rs,",
        "constexpr bool KHIVE_A_ROW = false", "khive_symm_prepare",
        "cute::prefetch_tma_descriptor(p.tma_b.get_tma_descriptor());"})
    EXPECT_TRUE(has(cu, s)) << s;
  EXPECT_FALSE(has(cu, "{{"));
}
