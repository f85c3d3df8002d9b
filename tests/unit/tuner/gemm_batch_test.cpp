// A GEMM batched over a list of C's leading axes ("batch": ["Z", "H"], torch.matmul of N-D operands, issue 24): the
// binder's per-workload strides (an operand's leading axes aligned at the end of the batch, missing or of size 1 read
// again: stride 0), the fold of a batch that is one run into one axis (the templates' single-stride path) and the
// per-axis strides where it is not (KHIVE_BATCH_AXES > 1), its refusals (naming the field and what was expected), a
// float32 scalar input in the epilogue, and rendered gemm.cpu_blocked kernels against the formula, exactly.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tuner_support.hpp"

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// cutegen26/kb03 (its binding's key) as C [Z, H, M, N] = A @ B of fp32 tensors stored with the given shapes, `more`
// inputs after them (a scalar "s", a residual "R"), axes Z, H, M, N, K and `extra` ones; two workloads.
Task batch_task(const json& a, const json& b, const json& more = json::object(), const json& extra = json::object(),
                const std::string& w = "") {
  return edited_task(
      "cutegen26/kb03_matmul_batched",
      [&](json& d) {
        d["axes"] = {{"Z", {{"type", "var"}}},
                     {"H", {{"type", "var"}}},
                     {"M", {{"type", "var"}}},
                     {"N", {{"type", "var"}}},
                     {"K", {{"type", "var"}}}};
        for (auto it = extra.begin(); it != extra.end(); ++it) d["axes"][it.key()] = it.value();
        d["inputs"] = {{"A", {{"shape", a}, {"dtype", "float32"}}}, {"B", {{"shape", b}, {"dtype", "float32"}}}};
        for (auto it = more.begin(); it != more.end(); ++it) d["inputs"][it.key()] = it.value();
        d["outputs"]["C"]["shape"] = json::array({"Z", "H", "M", "N"});
        d["khive"].erase("cost");
        d.erase("constraints");
      },
      [&](std::string& s) {
        s = !w.empty() ? w
                       : "{\"uuid\": \"a\", \"axes\": {\"Z\": 2, \"H\": 3, \"M\": 4, \"N\": 5, \"K\": 6}}\n"
                         "{\"uuid\": \"b\", \"axes\": {\"Z\": 1, \"H\": 4, \"M\": 3, \"N\": 2, \"K\": 7}}\n";
      });
}

json gemm_spec(const std::string& la, const std::string& lb, const json& batch = json::array({"Z", "H"})) {
  return {{"family", "gemm"}, {"A", "A"}, {"B", "B"},       {"C", "C"},       {"M", "M"},
          {"N", "N"},         {"K", "K"}, {"layout_a", la}, {"layout_b", lb}, {"batch", batch}};
}

}  // namespace

// Both operands with the whole batch: one run, folded into one batch axis of Z * H entries (the single-stride path,
// written as the one-axis binding writes it).
TEST(GemmBatch, AContiguousBatchFoldsIntoOneAxis) {
  const Task t = batch_task({"Z", "H", "M", "K"}, {"Z", "H", "K", "N"});
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(t, be, binding_with(t, gemm_spec("row", "row")));
    const std::string &p = bt.placeholders.at("PROLOGUE"), &e = bt.placeholders.at("ENTRY");
    EXPECT_TRUE(has(p, "constexpr int KHIVE_BATCH_AXES = 1;")) << p;
    EXPECT_TRUE(has(p, "return khive_boffs{z * g.a_bs, z * g.b_bs, z * g.c_bs, z * g.r_bs};")) << p;
    EXPECT_FALSE(has(p, "bdim")) << p;
    EXPECT_TRUE(has(e, "khive_batch = int64_t(1) * Z * H;")) << e;
    EXPECT_TRUE(has(e,
                    "khive_g.a_bs = khive_M * khive_K; khive_g.b_bs = khive_K * khive_N; khive_g.c_bs = khive_M * "
                    "khive_N; khive_g.r_bs = 0;"))
        << e;
    EXPECT_TRUE(has(bt.summary, "batch [Z, H], float32")) << bt.summary;
    ASSERT_EQ(bt.workload_vars.size(), 2u);
    EXPECT_EQ(bt.workload_vars[0].at("BATCH"), 6);
    EXPECT_EQ(bt.workload_vars[1].at("BATCH"), 4);
    EXPECT_EQ(bt.workload_vars[0].at("BATCH_AXES"), 1);
  }
  // A matrix B shared by every entry (no leading axes: stride 0 along both) folds too.
  const Task shared = batch_task({"Z", "H", "K", "M"}, {"N", "K"});
  const BoundTask bs = bind_task(shared, Backend::cpu, binding_with(shared, gemm_spec("col", "col")));
  EXPECT_TRUE(has(bs.placeholders.at("ENTRY"), "khive_g.a_bs = khive_M * khive_K; khive_g.b_bs = 0;"))
      << bs.placeholders.at("ENTRY");
  // The one-axis form is unchanged: "batch": "Z" and ["Z"] write the same ENTRY.
  const Task three = edited_task("cutegen26/kb03_matmul_batched", [](json&) {});
  const Binding& kb03 = *repo_library().binding_for(three);
  json listed = kb03.spec;
  listed["batch"] = json::array({listed["batch"]});
  EXPECT_EQ(bind_task(three, Backend::cpu, kb03).placeholders.at("ENTRY"),
            bind_task(three, Backend::cpu, binding_with(three, listed)).placeholders.at("ENTRY"));
}

// K broadcast over the heads (GQA's K with one KV head: B [Z, G, N, K], G = 1) does not fold: two batch axes with
// per-axis strides, B's 0 along H. A G that is 1 on one workload and H on the other reads (G == 1 ? 0 : its stride).
TEST(GemmBatch, ABroadcastAlongAnInnerAxisKeepsPerAxisStrides) {
  const json g_axis = {{"G", {{"type", "const"}, {"value", 1}}}};
  const Task t = batch_task({"Z", "H", "M", "K"}, {"Z", "G", "N", "K"}, json::object(), g_axis);
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(t, be, binding_with(t, gemm_spec("row", "col")));
    const std::string &p = bt.placeholders.at("PROLOGUE"), &e = bt.placeholders.at("ENTRY");
    EXPECT_TRUE(has(p, "constexpr int KHIVE_BATCH_AXES = 2;")) << p;
    EXPECT_TRUE(has(p, "int64_t bdim[2], a_bst[2], b_bst[2], c_bst[2], r_bst[2];")) << p;
    EXPECT_TRUE(has(e,
                    "khive_g.bdim[0] = Z; khive_g.a_bst[0] = H * khive_M * khive_K; khive_g.b_bst[0] = int64_t(1) * "
                    "khive_K * khive_N; khive_g.c_bst[0] = H * khive_M * khive_N;"))
        << e;
    EXPECT_TRUE(has(e, "khive_g.bdim[1] = H; khive_g.a_bst[1] = khive_M * khive_K; khive_g.b_bst[1] = 0;")) << e;
    EXPECT_TRUE(has(bt.summary, "batch [Z, H] over 2 strided axes")) << bt.summary;
    EXPECT_EQ(bt.workload_vars[1].at("BATCH_AXES"), 2);
  }
  const Task var_g =
      batch_task({"Z", "H", "M", "K"}, {"Z", "G", "N", "K"}, json::object(), {{"G", {{"type", "var"}}}},
                 "{\"uuid\": \"a\", \"axes\": {\"Z\": 2, \"H\": 3, \"G\": 1, \"M\": 4, \"N\": 5, \"K\": 6}}\n"
                 "{\"uuid\": \"b\", \"axes\": {\"Z\": 2, \"H\": 4, \"G\": 4, \"M\": 3, \"N\": 2, \"K\": 7}}\n");
  const BoundTask bv = bind_task(var_g, Backend::cpu, binding_with(var_g, gemm_spec("row", "col")));
  EXPECT_TRUE(has(bv.placeholders.at("ENTRY"), "khive_g.b_bst[1] = (G == 1 ? int64_t(0) : khive_K * khive_N);"))
      << bv.placeholders.at("ENTRY");
  // The CUTLASS templates take one batch stride: a batch of two axes is their generic path, which the tuner sees.
  for (const char* name : {"gemm.cuda_sm80_simt", "gemm.cuda_sm80_3xtf32"}) {
    const Template& tp = repo_template(name);
    const Validity v =
        check_point(tp, bind_task(t, Backend::cuda, binding_with(t, gemm_spec("row", "col"))), tp.default_point());
    EXPECT_FALSE(v.ok) << name;
    EXPECT_TRUE(has(v.message, "strided axes")) << name << ": " << v.message;
  }
}

TEST(GemmBatch, BadBatchesAreRefusedNamingTheFieldAndWhatWasExpected) {
  const Task t = batch_task({"Z", "H", "M", "K"}, {"Z", "H", "K", "N"});
  auto error_for = [&](const json& spec) { return std::string(bind_error(t, binding_with(t, spec)).what()); };
  auto with = [&](const char* k, const json& v) {
    json s = gemm_spec("row", "row");
    s[k] = v;
    return error_for(s);
  };
  EXPECT_EQ(has_all(with("batch", json::array()), {"tasks.kb03_matmul_batched.batch", "a list of 1 to 8"}), "");
  EXPECT_EQ(has_all(with("batch", {"Z", 3}), {"batch[1]", "an axis name", "3"}), "");
  EXPECT_EQ(has_all(with("batch", {"Z", "Z"}), {"batch[1]", "an axis not listed before"}), "");
  EXPECT_EQ(has_all(with("batch", {"H", "Z"}),
                    {"tasks.kb03_matmul_batched.A", "shape [H, Z, M, K]", "Z = 2 where batch axis H is 3, workload a"}),
            "");
  const Task heads = batch_task({"H", "M", "K"}, {"H", "K", "N"});  // C [Z, H, M, N] is not [H, M, N]
  EXPECT_EQ(has_all(bind_error(heads, binding_with(heads, gemm_spec("row", "row", {"H"}))).what(),
                    {"tasks.kb03_matmul_batched.C", "shape [H, M, N]", "[Z, H, M, N]"}),
            "");
  EXPECT_EQ(has_all(with("batch", {"H"}), {".A:", "shape [H, M, K]", "as torch.matmul broadcasts", "[Z, H, M, K]"}),
            "");
  // An operand's leading axis of another size than the batch axis' (and not 1) on a workload.
  const Task off =
      batch_task({"Z", "H", "M", "K"}, {"Z", "G", "K", "N"}, json::object(), {{"G", {{"type", "var"}}}},
                 "{\"uuid\": \"a\", \"axes\": {\"Z\": 2, \"H\": 3, \"G\": 3, \"M\": 4, \"N\": 5, \"K\": 6}}\n"
                 "{\"uuid\": \"b\", \"axes\": {\"Z\": 2, \"H\": 4, \"G\": 2, \"M\": 3, \"N\": 2, \"K\": 7}}\n");
  EXPECT_EQ(has_all(bind_error(off, binding_with(off, gemm_spec("row", "row"))).what(),
                    {"tasks.kb03_matmul_batched.B", "shape [Z, H, K, N]", "G = 2 where batch axis H is 4, workload b"}),
            "");
  // A list M (rows of a matrix product) takes no batch.
  json rows = gemm_spec("row", "row");
  rows["M"] = json::array({"H", "M"});
  EXPECT_EQ(has_all(error_for(rows), {"batch", "nothing when M is a list of axes"}), "");
  // A scalar in the epilogue must be float32.
  const Task int_s =
      batch_task({"Z", "H", "M", "K"}, {"Z", "H", "K", "N"}, {{"s", {{"shape", nullptr}, {"dtype", "int64"}}}});
  json scaled = gemm_spec("row", "row");
  scaled["bias"] = "s";
  scaled["epilogue"] = "x * b";
  EXPECT_EQ(has_all(bind_error(int_s, binding_with(int_s, scaled)).what(), {"bias", "a float32 scalar input", "int64"}),
            "");
}

// Rendered gemm.cpu_blocked kernels against the formula, exactly (small integers: every sum exact in fp32), on sizes
// other than the workloads': a folded batch, K broadcast over the heads, an operand shared over the outer axis with
// a residual that is too, a column-major A times one shared matrix, and a float32 scalar in the epilogue; a planted
// wrong stride fails.
TEST(GemmBatch, CpuKernelsComputeTheBatchedProductExactly) {
  struct Case {
    json a, b, more, extra, spec;
    std::string a_len, b_len, a_at, b_at;   // C++ of Z, H, G, M, N, K (and z, h, m, n, k)
    std::string more_decl, more_args, epi;  // declarations, launch arguments after A, B; C from x (double)
    std::string dims;                       // the launch's axis arguments
  };
  const json g1 = {{"G", {{"type", "const"}, {"value", 1}}}};
  json scaled = gemm_spec("row", "col");
  scaled["bias"] = "s";
  scaled["epilogue"] = "x * b";
  json residual = gemm_spec("row", "row");
  residual["residual"] = "R";
  const std::vector<Case> cases = {
      {{"Z", "H", "M", "K"},
       {"Z", "H", "K", "N"},
       json::object(),
       json::object(),
       gemm_spec("row", "row"),
       "Z * H * M * K",
       "Z * H * K * N",
       "((z * H + h) * M + m) * K + k",
       "((z * H + h) * K + k) * N + n",
       "",
       "",
       "x",
       "Z, H, M, N, K"},
      {{"Z", "H", "M", "K"},
       {"Z", "G", "N", "K"},
       {{"s", {{"shape", nullptr}, {"dtype", "float32"}}}},
       g1,
       scaled,
       "Z * H * M * K",
       "Z * N * K",
       "((z * H + h) * M + m) * K + k",
       "(z * N + n) * K + k",
       "const float s = 0.5f;",
       "s, ",
       "x * 0.5",
       "Z, H, M, N, K"},
      {{"H", "M", "K"},
       {"Z", "H", "K", "N"},
       {{"R", {{"shape", {"H", "M", "N"}}, {"dtype", "float32"}}}},
       json::object(),
       residual,
       "H * M * K",
       "Z * H * K * N",
       "(h * M + m) * K + k",
       "((z * H + h) * K + k) * N + n",
       "std::vector<float> R(H * M * N); for (long long i = 0; i < H * M * N; ++i) R[i] = float(i % 9) - 4.0f;",
       "R.data(), ",
       "x + R[(h * M + m) * N + n]",
       "Z, H, M, N, K"},
      {{"Z", "H", "K", "M"},
       {"K", "N"},
       json::object(),
       json::object(),
       gemm_spec("col", "row"),
       "Z * H * K * M",
       "K * N",
       "((z * H + h) * K + k) * M + m",
       "k * N + n",
       "",
       "",
       "x",
       "Z, H, M, N, K"},
  };
  const Template& tp = repo_template("gemm.cpu_blocked");
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& cs = cases[ci];
    const Task task = batch_task(cs.a, cs.b, cs.more, cs.extra);
    const BoundTask bt = bind_task(task, Backend::cpu, binding_with(task, cs.spec));
    const std::string harness =
        fmt::format(R"(
#include <cstdio>
#include <vector>
int main() {{
  const long long shapes[][5] = {{{{1, 1, 1, 1, 1}}, {{3, 2, 5, 7, 9}}, {{2, 5, 17, 33, 40}}, {{1, 3, 70, 3, 300}}}};
  long long bad = 0;
  for (auto& sh : shapes) {{
    const long long Z = sh[0], H = sh[1], M = sh[2], N = sh[3], K = sh[4];
    std::vector<float> A({}), B({}), C(Z * H * M * N, -1.0f);
    for (std::size_t i = 0; i < A.size(); ++i) A[i] = float((i * 37 + i / 13) % 9) - 4.0f;   // no period
    for (std::size_t i = 0; i < B.size(); ++i) B[i] = float((i * 11 + i / 7) % 7) - 3.0f;
    {}
    khive_launch(A.data(), B.data(), {}C.data(), {});
    for (long long z = 0; z < Z; ++z)
      for (long long h = 0; h < H; ++h)
        for (long long m = 0; m < M; ++m)
          for (long long n = 0; n < N; ++n) {{
            double x = 0.0;
            for (long long k = 0; k < K; ++k) x += double(A[{}]) * double(B[{}]);
            bad += double(C[((z * H + h) * M + m) * N + n]) != {};
          }}
  }}
  std::printf("bad %lld\n", bad);
}}
)",
                    cs.a_len, cs.b_len, cs.more_decl, cs.more_args, cs.dims, cs.a_at, cs.b_at, cs.epi);
    for (const char* mr : {"4", "6"}) {
      Point p = tp.default_point();
      p["MR"] = mr;
      p["NR"] = "16";
      p["KC"] = "64";
      EXPECT_EQ(run_cpu_kernel(render(tp, bt, p), harness, fmt::format("gemm-batch{}-{}", ci, mr)), "bad 0\n")
          << "case " << ci << " MR " << mr;
    }
    if (ci == 1) {  // K's head read again for every head: a stride of its own instead fails
      std::string src = render(tp, bt, tp.default_point());
      const std::string want = "khive_g.a_bst[1] = khive_M * khive_K;";
      const auto at = src.find(want);
      ASSERT_NE(at, std::string::npos) << src;
      src.replace(at, want.size(), "khive_g.a_bst[1] = 0;");
      EXPECT_NE(run_cpu_kernel(src, harness, "gemm-batch-planted"), "bad 0\n");
    }
  }
}
