// Vendor baselines may link cuBLAS / cuBLASLt while candidates of the same task may not.
#include <algorithm>

#include <gtest/gtest.h>

#include "khive/compile/builder.hpp"
#include "khive/compile/symbol_policy.hpp"
#include "khive/eval/evaluate.hpp"

namespace khive {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

Task gemm_task() {
  Task t;
  t.name = "gemm_residual";
  return t;  // policy left at the default: no vendor library for candidates
}

TEST(BaselinePolicy, AllowsVendorLibrariesOnlyOnTheCopy) {
  Task t = gemm_task();
  Task b = baseline_task(t);
  EXPECT_TRUE(b.policy.allows("cublas"));
  EXPECT_TRUE(b.policy.allows("cublasLt"));
  EXPECT_FALSE(t.policy.allows("cublas"));
  EXPECT_FALSE(t.policy.allows("cublasLt"));
  EXPECT_EQ(b.name, t.name);
}

TEST(BaselinePolicy, KeepsWhatTheTaskAlreadyAllowsWithoutDuplicates) {
  Task t = gemm_task();
  t.policy.libraries = {"cublasLt"};
  Task b = baseline_task(t);
  EXPECT_EQ(std::count(b.policy.libraries.begin(), b.policy.libraries.end(), "cublasLt"), 1);
  EXPECT_TRUE(b.policy.allows("cublas"));
}

TEST(BaselinePolicy, OnlyTheBaselineBuildLinksCublasLt) {
  BuildOptions o;
  o.backend = Backend::cuda;
  Task t = gemm_task();
  auto cand = build_command(t, o);
  auto base = build_command(baseline_task(t), o);
  EXPECT_FALSE(has(cand, "-lcublasLt"));
  EXPECT_FALSE(has(cand, "-lcublas"));
  EXPECT_TRUE(has(base, "-lcublasLt"));
  EXPECT_TRUE(has(base, "-lcublas"));
}

TEST(BaselinePolicy, SymbolScanAcceptsCublasForTheBaselineOnly) {
  SymbolTable syms;
  syms.imported = {"cublasLtMatmul", "cublasLtCreate", "cudaLaunchKernel"};
  syms.exported = {"khive_launch", "khive_entry"};
  Task t = gemm_task();
  auto cand = check_symbols(syms, t.policy, Backend::cuda);
  ASSERT_EQ(cand.size(), 2u);
  EXPECT_NE(cand[0].rule.find("cublasLt"), std::string::npos);
  EXPECT_TRUE(check_symbols(syms, baseline_task(t).policy, Backend::cuda).empty());
}

TEST(BaselinePolicy, LibrariesNoPolicyMayAllowStayForbiddenForBaselines) {
  SymbolTable syms;
  syms.imported = {"cudnnCreate", "cudaEventRecord"};
  auto v = check_symbols(syms, baseline_task(gemm_task()).policy, Backend::cuda);
  EXPECT_EQ(v.size(), 2u);
}

}  // namespace
}  // namespace khive
