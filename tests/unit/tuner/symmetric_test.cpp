// Symmetric GEMM operands (cutegen26/kb13: C = S(A)·S(B), S(X)[i, k] = X[min(i, k), max(i, k)], BLAS SYMM
// storage): the binder's "symmetric" field, its refusals, which templates serve it, and rendered CPU kernels run
// against a double-precision reference with NaN in the operands' unstored triangle.
#include <algorithm>
#include <regex>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tuner_support.hpp"

namespace {

const char* kKb13 = "cutegen26/kb13_matmul_symmetric";

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

json kb13_spec() { return repo_library().binding_for(repo_task(kKb13))->spec; }

std::string error_for(const Task& task, const json& spec) { return bind_error(task, binding_with(task, spec)).what(); }

}  // namespace

TEST(SymmetricGemm, Kb13BindsAPlainGemmOnCopiesServedByEveryFp32GemmTemplate) {
  const Task task = repo_task(kKb13);
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(task, be, *repo_library().binding_for(task));
    EXPECT_EQ(bt.op, "gemm");
    const std::string& p = bt.placeholders.at("PROLOGUE");
    const std::string& e = bt.placeholders.at("ENTRY");
    EXPECT_TRUE(has(p, "constexpr bool KHIVE_SYMM_UPPER = true;")) << p;
    EXPECT_TRUE(has(p, be == Backend::cuda ? "static bool khive_symm_prepare(khive_gemm_args& g, cudaStream_t stream)"
                                           : "static void khive_symm_prepare(khive_gemm_args& g)"))
        << p;
    EXPECT_EQ(has(p, "__global__"), be == Backend::cuda) << p;
    // The copies are made before the one khive_run call, which then sees full operands.
    const auto prep = e.find(be == Backend::cuda ? "if (!khive_symm_prepare(khive_g, stream)) return;"
                                                 : "khive_symm_prepare(khive_g);");
    const auto run = e.find("khive_run(khive_g");
    ASSERT_NE(prep, std::string::npos) << e;
    ASSERT_NE(run, std::string::npos) << e;
    EXPECT_LT(prep, run) << e;
    EXPECT_EQ(e.find("khive_run(", run + 1), std::string::npos) << e;
    EXPECT_TRUE(has(bt.summary, "C = S(A) @ S(B) of symmetric operands stored as their upper triangles")) << bt.summary;
    for (const auto& v : bt.workload_vars) {
      EXPECT_EQ(v.at("M"), v.at("N"));
      EXPECT_EQ(v.at("K"), v.at("N"));
      EXPECT_EQ(v.at("TRI"), 0);
    }
    std::vector<std::string> serving;
    for (const auto& t : repo_library().templates)
      if (template_applies(t, bt)) serving.push_back(t.name);
    std::sort(serving.begin(), serving.end());
    const std::vector<std::string> want =
        be == Backend::cpu
            ? std::vector<std::string>{"gemm.cpu_blocked"}
            : std::vector<std::string>{"gemm.cuda_simt",        "gemm.cuda_sm80_3xtf32",   "gemm.cuda_sm80_simt",
                                       "gemm.cuda_sm90_3xtf32", "gemm.cuda_sm90_rs3xtf32", "gemm.cuda_smallk_3xtf32"};
    EXPECT_EQ(serving, want);
  }
  // On CUDA the copy S(A) is read column-major (its row-major storage is its column-major storage): M-contiguous
  // for the SIMT mainloops, no transposition into shared memory and nothing for RELAYOUT_A to copy. The CPU
  // template keeps the row-major read.
  {
    const BoundTask cuda = bind_task(task, Backend::cuda, *repo_library().binding_for(task));
    EXPECT_TRUE(has(cuda.placeholders.at("PROLOGUE"), "constexpr bool KHIVE_A_ROW = false, KHIVE_B_ROW = true"));
    EXPECT_TRUE(has(cuda.placeholders.at("ENTRY"), "khive_g.a_rs = 1; khive_g.a_cs = khive_M;"));
    EXPECT_EQ(cuda.placeholders.at("CUTLASS_LAYOUT_A"), "cutlass::layout::ColumnMajor");
    EXPECT_EQ(cuda.workload_vars.back().at("A_ROW"), 0);
    EXPECT_TRUE(has(cuda.summary, "C = S(A) @ S(B)")) << cuda.summary;
    const BoundTask cpu = bind_task(task, Backend::cpu, *repo_library().binding_for(task));
    EXPECT_TRUE(has(cpu.placeholders.at("PROLOGUE"), "constexpr bool KHIVE_A_ROW = true, KHIVE_B_ROW = true"));
  }
  // Lower storage says so in the prologue; a plain GEMM's prologue and ENTRY carry none of it.
  json s = kb13_spec();
  s["symmetric"] = "lower";
  const BoundTask lower = bind_task(task, Backend::cuda, binding_with(task, s));
  EXPECT_TRUE(has(lower.placeholders.at("PROLOGUE"), "constexpr bool KHIVE_SYMM_UPPER = false;"));
  EXPECT_TRUE(has(lower.summary, "stored as their lower triangles")) << lower.summary;
  const Task kb01 = repo_task("cutegen26/kb01_matmul_square");
  const BoundTask plain = bind_task(kb01, Backend::cuda, *repo_library().binding_for(kb01));
  EXPECT_FALSE(has(plain.placeholders.at("PROLOGUE"), "symm")) << plain.placeholders.at("PROLOGUE");
  EXPECT_FALSE(has(plain.placeholders.at("ENTRY"), "symm")) << plain.placeholders.at("ENTRY");
}

TEST(SymmetricGemm, RefusalsNameTheField) {
  const Task kb13 = repo_task(kKb13);
  json s = kb13_spec();
  s["symmetric"] = "full";
  std::string msg = error_for(kb13, s);
  EXPECT_TRUE(has(msg, "tasks.kb13_matmul_symmetric.symmetric") && has(msg, "\"full\"") && has(msg, "none, upper"))
      << msg;
  s = kb13_spec();
  s["symmetric"] = true;
  msg = error_for(kb13, s);
  EXPECT_TRUE(has(msg, "tasks.kb13_matmul_symmetric.symmetric") && has(msg, "a string")) << msg;
  s = kb13_spec();
  s["triangular"] = "upper";
  msg = error_for(kb13, s);
  EXPECT_TRUE(has(msg, "tasks.kb13_matmul_symmetric.triangular") && has(msg, "none with symmetric upper")) << msg;
  // The stored triangle is read row-major: a transposed storage would silently mirror the other triangle.
  s = kb13_spec();
  s["layout_a"] = "col";
  msg = error_for(kb13, s);
  EXPECT_TRUE(has(msg, "tasks.kb13_matmul_symmetric.layout_a") && has(msg, "row with symmetric upper") &&
              has(msg, "\"col\""))
      << msg;
  s = kb13_spec();
  s["layout_b"] = "col";
  msg = error_for(kb13, s);
  EXPECT_TRUE(has(msg, "tasks.kb13_matmul_symmetric.layout_b") && has(msg, "row with symmetric upper")) << msg;
  // Not square: kb02's M, N, K differ.
  const Task kb02 = repo_task("cutegen26/kb02_matmul_standard");
  s = repo_library().binding_for(kb02)->spec;
  s["symmetric"] = "upper";
  msg = error_for(kb02, s);
  EXPECT_TRUE(has(msg, "tasks.kb02_matmul_standard.symmetric") && has(msg, "square operands (M = N = K)") &&
              has(msg, "on workload"))
      << msg;
  // Batched: the copies are one matrix per operand.
  const Task kb03 = repo_task("cutegen26/kb03_matmul_batched");
  s = repo_library().binding_for(kb03)->spec;
  ASSERT_TRUE(s.contains("batch"));
  s["symmetric"] = "lower";
  msg = error_for(kb03, s);
  EXPECT_TRUE(has(msg, "tasks.kb03_matmul_batched.batch") && has(msg, "no batch with symmetric lower")) << msg;
}

// gemm.cpu_blocked on kb13's binding (upper and lower storage; relu as an epilogue that goes through unchanged), with
// small panels (several k panels, M blocks and N panels per call), on operands whose unstored triangle holds NaN:
// C must match S(A)·S(B) in double. Shapes grow and shrink between calls, so the kept copy buffers are reused.
TEST(SymmetricGemm, CpuKernelReadsOnlyTheStoredTriangle) {
  const Template& t = repo_template("gemm.cpu_blocked");
  const Task task = repo_task(kKb13);
  const std::string harness = R"(
#include <cmath>
#include <cstdio>
#include <vector>
int main() {
  double worst = 0;
  long long nan_out = 0;
  for (long long N : {1LL, 33LL, 261LL, 2LL, 100LL}) {
    std::vector<float> A(N * N), B(N * N), C(N * N, 7.0f);
    auto stored = [](long long r, long long c) { return UPPER ? r <= c : r >= c; };
    for (long long i = 0; i < N; ++i)
      for (long long j = 0; j < N; ++j) {
        A[i * N + j] = stored(i, j) ? float((i * 31 + j * 17) % 23) / 11.0f - 0.5f : NAN;
        B[i * N + j] = stored(i, j) ? float((i * 13 + j * 29) % 19) / 9.0f - 1.0f : NAN;
      }
    auto S = [&](const std::vector<float>& X, long long r, long long c) { return double(stored(r, c) ? X[r * N + c] : X[c * N + r]); };
    khive_launch(A.data(), B.data(), C.data(), N);
    for (long long i = 0; i < N; ++i)
      for (long long j = 0; j < N; ++j) {
        double ref = 0;
        for (long long k = 0; k < N; ++k) ref += S(A, i, k) * S(B, k, j);
        if (RELU && ref < 0) ref = 0;
        if (std::isnan(C[i * N + j])) ++nan_out;
        else worst = std::fmax(worst, std::fabs(C[i * N + j] - ref) / (1.0 + std::fabs(ref)));
      }
  }
  std::printf("nan %lld worst %.3g\n", nan_out, worst);
}
)";
  for (const auto& [sym, act] :
       std::vector<std::pair<std::string, std::string>>{{"upper", "none"}, {"lower", "none"}, {"upper", "relu"}}) {
    json s = kb13_spec();
    s["symmetric"] = sym;
    s["activation"] = act;
    const BoundTask bt = bind_task(task, Backend::cpu, binding_with(task, s));
    Point p = t.default_point();
    p["KC"] = "64";
    p["MC"] = "24";
    p["NC"] = "256";
    p["MR"] = "4";
    p["NR"] = "16";
    ASSERT_TRUE(check_point(t, bt, p).ok);
    const std::string out = run_cpu_kernel(
        render(t, bt, p), fmt::format("#define UPPER {}\n#define RELU {}\n", sym == "upper", act == "relu") + harness,
        sym + "-" + act);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(nan (\d+) worst ([0-9.e+-]+))"))) << out;
    EXPECT_EQ(m[1], "0") << sym << " " << act;
    EXPECT_LT(std::stod(m[2]), 1e-5) << sym << " " << act << ": " << out;
  }
}
