// Elementwise broadcast inputs (cutegen26/kb12: C = A[N] * B[N, M], one value of A per row) and triangular GEMMs
// (kb14/kb15: C = triu(triu(A)·triu(B)) and tril): the binders' maps and refusals, which templates serve them,
// and rendered CPU kernels run against a double-precision reference with garbage in the operands' other triangle.
#include <cmath>
#include <regex>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tuner_support.hpp"

namespace {

BoundTask bound(const Task& t, Backend b = Backend::cpu) { return bind_task(t, b, *repo_library().binding_for(t)); }
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// kb12 with C and B [N, N] (A [N] then lines up with either axis); M stays an axis the shapes do not use.
Task square_kb12() {
  return edited_task("cutegen26/kb12_matmul_diag", [](json& d) {
    d["inputs"]["B"]["shape"] = json::array({"N", "N"});
    d["outputs"]["C"]["shape"] = json::array({"N", "N"});
  });
}

}  // namespace

TEST(ElementwiseBroadcast, Kb12BindsARowScaleOnBothBackends) {
  const Task task = repo_task("cutegen26/kb12_matmul_diag");
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bound(task, be);
    EXPECT_EQ(bt.family, "elementwise");
    EXPECT_EQ(bt.op, "map");
    const std::string& p = bt.placeholders.at("PROLOGUE");
    const std::string& e = bt.placeholders.at("ENTRY");
    EXPECT_TRUE(has(p, "constexpr unsigned long long KHIVE_BCAST_MASK = 0x1ull;")) << p;  // A broadcast, B not
    EXPECT_TRUE(has(p, "constexpr bool KHIVE_ANY_BCAST = true;")) << p;
    EXPECT_TRUE(has(p, "return A * B;")) << p;
    // A [N] over C [N, M]: index (i / M) % N; B is read at i.
    EXPECT_TRUE(has(
        e, "const khive_ins khive_in{ {A, B}, {int64_t(1) * M, int64_t(1)}, {int64_t(1) * N, khive_n}, {}, {}, {} };"))
        << e;
    EXPECT_TRUE(has(bt.summary, "broadcast [N] over C axes 0..0")) << bt.summary;
    ASSERT_EQ(bt.workload_vars.size(), task.workloads.size());
    for (std::size_t w = 0; w < task.workloads.size(); ++w) {
      EXPECT_EQ(bt.workload_vars[w].at("COUNT"), task.workloads[w].axes.at("N") * task.workloads[w].axes.at("M"));
      EXPECT_EQ(bt.workload_vars[w].at("NBCAST"), 1);
      EXPECT_EQ(bt.workload_vars[w].at("NIN"), 2);
    }
  }
  // A plain elementwise task has no broadcast input.
  const BoundTask relu = bound(repo_task("cutegen26/kb19_relu"));
  EXPECT_TRUE(has(relu.placeholders.at("PROLOGUE"), "KHIVE_BCAST_MASK = 0x0ull;"));
  EXPECT_TRUE(has(relu.placeholders.at("PROLOGUE"), "KHIVE_ANY_BCAST = false;"));
}

TEST(ElementwiseBroadcast, TrailingAxesGiveAPerColumnMap) {
  const Task task =
      edited_task("cutegen26/kb12_matmul_diag", [](json& d) { d["inputs"]["A"]["shape"] = json::array({"M"}); });
  const BoundTask bt = bound(task);
  EXPECT_TRUE(has(bt.placeholders.at("ENTRY"), "{A, B}, {int64_t(1), int64_t(1)}, {int64_t(1) * M, khive_n}"))
      << bt.placeholders.at("ENTRY");
  EXPECT_TRUE(has(bt.summary, "broadcast [M] over C axes 1..1")) << bt.summary;
}

TEST(ElementwiseBroadcast, AmbiguousPlacementNeedsTheBroadcastField) {
  const Task task = square_kb12();
  const Binding plain = *repo_library().binding_for(task);
  const std::string msg = bind_error(task, plain).what();
  EXPECT_TRUE(has(msg, "tasks.kb12_matmul_diag.broadcast")) << msg;
  EXPECT_TRUE(has(msg, "at axes 0 and 1")) << msg;

  json spec = plain.spec;
  spec["broadcast"] = {{"A", 0}};
  BoundTask bt = bind_task(task, Backend::cpu, binding_with(task, spec));
  EXPECT_TRUE(has(bt.placeholders.at("ENTRY"), "{int64_t(1) * N, int64_t(1)}, {int64_t(1) * N, khive_n}"))
      << bt.placeholders.at("ENTRY");
  spec["broadcast"] = {{"A", 1}};
  bt = bind_task(task, Backend::cpu, binding_with(task, spec));
  EXPECT_TRUE(has(bt.placeholders.at("ENTRY"), "{int64_t(1), int64_t(1)}, {int64_t(1) * N, khive_n}"))
      << bt.placeholders.at("ENTRY");
}

TEST(ElementwiseBroadcast, ShapesItCannotExpressAreRefusedNamingTheField) {
  // [N, N] is no run of C's [N, M] axes.
  Task task = edited_task("cutegen26/kb12_matmul_diag", [](json& d) {
    d["inputs"]["A"]["shape"] = json::array({"N", "N"});
  });
  std::string msg = bind_error(task, *repo_library().binding_for(task)).what();
  EXPECT_TRUE(has(msg, "kernels/bindings/cutegen26.json")) << msg;
  EXPECT_TRUE(has(msg, "tasks.kb12_matmul_diag.inputs[0]")) << msg;
  EXPECT_TRUE(has(msg, "contiguous run of the output's")) << msg;
  EXPECT_TRUE(has(msg, "\"A\" of shape [N, N]")) << msg;

  const Task kb12 = repo_task("cutegen26/kb12_matmul_diag");
  json spec = repo_library().binding_for(kb12)->spec;
  auto error_for = [&](const json& broadcast) {
    json s = spec;
    s["broadcast"] = broadcast;
    return std::string(bind_error(kb12, binding_with(kb12, s)).what());
  };
  msg = error_for({{"X", 0}});
  EXPECT_TRUE(has(msg, "tasks.kb12_matmul_diag.broadcast.X") && has(msg, "one of the binding's inputs")) << msg;
  msg = error_for({{"A", 2}});
  EXPECT_TRUE(has(msg, "broadcast.A") && has(msg, "an output axis index 0..1")) << msg;
  msg = error_for({{"A", 1}});  // A [N] does not line up with C's axis 1 (M)
  EXPECT_TRUE(has(msg, "broadcast.A") && has(msg, "lines up with")) << msg;
  msg = error_for({{"B", 1}});  // B has C's shape: it is read at i
  EXPECT_TRUE(has(msg, "broadcast.B") && has(msg, "0 (the input has the output's shape")) << msg;
  msg = error_for(json::array({0}));
  EXPECT_TRUE(has(msg, "tasks.kb12_matmul_diag.broadcast:") && has(msg, "an object")) << msg;
}

// Rendered elementwise.cpu kernels (VEC 8 with odd row lengths: row changes inside a vector block, VEC 1, and the
// per-column map) run against the formula, exactly: one fp32 multiply per element.
TEST(ElementwiseBroadcast, CpuKernelsComputeTheRowAndColumnScalesExactly) {
  const Template& t = repo_template("elementwise.cpu");
  const std::string harness = R"(
#include <cstdio>
#include <vector>
int main() {
  const long long shapes[][2] = {{1, 1}, {7, 33}, {129, 1000}, {1000, 3}, {3, 70000}, {300, 301}};
  long long bad = 0;
  for (auto& s : shapes) {
    const long long N = s[0], M = s[1];
    std::vector<float> A(PER_COLUMN ? M : N), B(N * M), C(N * M, -1.0f);
    for (std::size_t i = 0; i < A.size(); ++i) A[i] = 0.5f + float(i % 97) * 0.125f;
    for (std::size_t i = 0; i < B.size(); ++i) B[i] = float((i * 7919) % 1013) / 7.0f - 50.0f;
    khive_launch(A.data(), B.data(), C.data(), N, M);
    for (long long i = 0; i < N; ++i)
      for (long long j = 0; j < M; ++j) bad += C[i * M + j] != (PER_COLUMN ? A[j] : A[i]) * B[i * M + j];
  }
  std::printf("bad %lld\n", bad);
}
)";
  for (bool per_column : {false, true}) {
    const Task task = per_column ? edited_task("cutegen26/kb12_matmul_diag",
                                               [](json& d) { d["inputs"]["A"]["shape"] = json::array({"M"}); })
                                 : repo_task("cutegen26/kb12_matmul_diag");
    const BoundTask bt = bound(task);
    for (const char* vec : {"1", "8"}) {
      Point p = t.default_point();
      p["VEC"] = vec;
      p["MIN_PAR"] = "0";  // OpenMP chunks start inside rows too
      p["CHUNK"] = "1024";
      const std::string out =
          run_cpu_kernel(render(t, bt, p), fmt::format("#define PER_COLUMN {}\n", per_column ? 1 : 0) + harness,
                         fmt::format("ew{}{}", per_column, vec));
      EXPECT_EQ(out, "bad 0\n") << "per column " << per_column << " VEC " << vec;
    }
  }
}

namespace {

// kb12 reshaped into torch's broadcasting: C [N, K, H] = A * B with A and B of the given shapes, and "broadcast":
// "torch" (what the tuner infers for a recognised reference whose inputs are read as stored).
Task torch_task(const json& a, const json& b) { return nkh_elementwise_task(a, b); }

Binding torch_binding(const Task& t) {
  return binding_with(
      t,
      json{
          {"family", "elementwise"}, {"inputs", {"A", "B"}}, {"output", "C"}, {"op", "A * B"}, {"broadcast", "torch"}});
}

}  // namespace

// "broadcast": "torch" places each input by torch's rule: aligned at the end, each axis the output's (by name or by
// size on every workload) or 1, those of the output's one run (1s on both sides count either way); a 0-d tensor or
// [1] is one value for all. Each map as (i / inner) % extent; what is no run is refused naming the input.
TEST(ElementwiseBroadcast, TorchsRulePlacesInputsByAlignment) {
  const json full = json::array({"N", "K", "H"});
  for (const auto& [a, inner, extent, text] : std::vector<std::tuple<json, std::string, std::string, std::string>>{
           {json::array({"K", "1"}), "int64_t(1) * H", "int64_t(1) * K", "broadcast [K, 1] over C axes 1..1"},
           {json::array({"5", "1"}), "int64_t(1) * H", "int64_t(1) * K", "broadcast [5, 1] over C axes 1..1"},
           {json::array({"N", "1", "1"}), "int64_t(1) * K * H", "int64_t(1) * N", "axes 0..0"},
           {json::array({"1", "K", "H"}), "int64_t(1)", "int64_t(1) * K * H", "axes 1..2"},
           {json::array(), "int64_t(1)", "int64_t(1)", "broadcast []: one value for all of C"},
           {json::array({"1"}), "int64_t(1)", "int64_t(1)", "broadcast [1]: one value for all of C"}}) {
    // (the first workload's K is 5, the second's 4: "5" is K on one workload only, so it is refused below)
    if (a == json::array({"5", "1"})) {
      const std::string msg = bind_error(torch_task(a, full), torch_binding(torch_task(a, full))).what();
      EXPECT_TRUE(has(msg, "tasks.kb12_matmul_diag.inputs[0]") && has(msg, "neither the output's axis 1 (K) nor 1"))
          << msg;
      continue;
    }
    const Task t = torch_task(a, full);
    const BoundTask bt = bind_task(t, Backend::cpu, torch_binding(t));
    EXPECT_TRUE(
        has(bt.placeholders.at("ENTRY"), fmt::format("{{A, B}}, {{{}, int64_t(1)}}, {{{}, khive_n}}", inner, extent)))
        << a.dump() << "\n"
        << bt.placeholders.at("ENTRY");
    EXPECT_TRUE(has(bt.summary, text)) << bt.summary;
  }
  // Refusals: an axis neither the output's nor 1 (A [N] lines up with H), the output's axes not one run, more axes
  // than the output, an unknown rule.
  for (const auto& [a, part] : std::vector<std::pair<json, std::string>>{
           {json::array({"N"}), "its axis 0 (N) is neither the output's axis 2 (H) nor 1"},
           {json::array({"N", "1", "H"}), "not one run"},
           {json::array({"2", "N", "K", "H"}), "more axes than the output"}}) {
    const Task t = torch_task(a, full);
    const std::string msg = bind_error(t, torch_binding(t)).what();
    EXPECT_TRUE(has(msg, "tasks.kb12_matmul_diag.inputs[0]") && has(msg, "by torch's rule") && has(msg, part)) << msg;
  }
  const Task t = torch_task(json::array({"K", "1"}), full);
  Binding b = torch_binding(t);
  b.spec["broadcast"] = "numpy";
  const std::string msg = bind_error(t, b).what();
  EXPECT_TRUE(has(msg, "tasks.kb12_matmul_diag.broadcast") && has(msg, "or \"torch\"")) << msg;
}

// Both inputs broadcast by torch's rule (A [K, 1] per channel, B [N, 1, 1] per batch entry), rendered
// elementwise.cpu at VEC 1 and 8 against the formula, exactly; A read at i % K (the planted per-row map) fails it.
TEST(ElementwiseBroadcast, CpuKernelsComputeTorchsBroadcastExactly) {
  const Task task = torch_task(json::array({"K", "1"}), json::array({"N", "1", "1"}));
  const BoundTask bt = bind_task(task, Backend::cpu, torch_binding(task));
  const Template& t = repo_template("elementwise.cpu");
  const std::string harness = R"(
#include <cstdio>
#include <vector>
int main() {
  const long long shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {2, 4, 70}, {5, 33, 1000}};
  long long bad = 0;
  for (auto& s : shapes) {
    const long long N = s[0], K = s[1], H = s[2];
    std::vector<float> A(K), B(N), C(N * K * H, -1.0f);
    for (std::size_t i = 0; i < A.size(); ++i) A[i] = 0.5f + float(i % 97) * 0.125f;
    for (std::size_t i = 0; i < B.size(); ++i) B[i] = float((i * 7919) % 1013) / 7.0f - 50.0f;
    khive_launch(A.data(), B.data(), C.data(), N, K, H);
    for (long long n = 0; n < N; ++n)
      for (long long k = 0; k < K; ++k)
        for (long long h = 0; h < H; ++h) bad += C[(n * K + k) * H + h] != A[k] * B[n];
  }
  std::printf("bad %lld\n", bad);
}
)";
  for (const char* vec : {"1", "8"}) {
    Point p = t.default_point();
    p["VEC"] = vec;
    p["MIN_PAR"] = "0";
    p["CHUNK"] = "1024";
    EXPECT_EQ(run_cpu_kernel(render(t, bt, p), harness, fmt::format("ew-torch{}", vec)), "bad 0\n") << vec;
  }
  std::string src = render(t, bt, t.default_point());
  const auto at = src.find("{A, B}, {int64_t(1) * H, ");
  ASSERT_NE(at, std::string::npos) << src;
  src.replace(at, std::string("{A, B}, {int64_t(1) * H, ").size(), "{A, B}, {int64_t(1), ");
  EXPECT_NE(run_cpu_kernel(src, harness, "ew-torch-planted"), "bad 0\n");
}

TEST(TriangularGemm, Kb14AndKb15BindWithTheirOpAndOnlyTheTemplatesThatRestrictK) {
  for (const auto& [name, op, tri] : std::vector<std::tuple<std::string, std::string, int>>{
           {"cutegen26/kb14_matmul_upper_triangular", "gemm_triu", 1},
           {"cutegen26/kb15_matmul_lower_triangular", "gemm_tril", 2}}) {
    const Task task = repo_task(name);
    for (Backend be : {Backend::cpu, Backend::cuda}) {
      const BoundTask bt = bound(task, be);
      EXPECT_EQ(bt.op, op);
      EXPECT_TRUE(has(bt.placeholders.at("PROLOGUE"), fmt::format("constexpr int KHIVE_TRI = {};", tri)))
          << bt.placeholders.at("PROLOGUE");
      for (const auto& v : bt.workload_vars) {
        EXPECT_EQ(v.at("TRI"), tri);
        EXPECT_EQ(v.at("M"), v.at("K"));
      }
      std::vector<std::string> serving;
      for (const auto& t : repo_library().templates)
        if (template_applies(t, bt)) serving.push_back(t.name);
      EXPECT_EQ(serving, std::vector<std::string>{be == Backend::cpu ? "gemm.cpu_blocked" : "gemm.cuda_simt"}) << name;
    }
  }
  // A plain GEMM is op gemm, TRI 0, and every GEMM template of its backend still serves it.
  const BoundTask plain = bound(repo_task("cutegen26/kb01_matmul_square"), Backend::cuda);
  EXPECT_EQ(plain.op, "gemm");
  EXPECT_EQ(plain.workload_vars[0].at("TRI"), 0);
  EXPECT_TRUE(has(plain.placeholders.at("PROLOGUE"), "constexpr int KHIVE_TRI = 0;"));
  EXPECT_TRUE(template_applies(repo_template("gemm.cuda_sm80_simt"), plain));
  EXPECT_TRUE(template_applies(repo_template("gemm.cuda_simt"), plain));
  EXPECT_TRUE(template_applies(repo_template("gemm.cuda_sm90"),
                               bound(repo_task("sol/gemm_bf16"), Backend::cuda)));  // bf16 only
}

TEST(TriangularGemm, RefusalsNameTheField) {
  const Task kb14 = repo_task("cutegen26/kb14_matmul_upper_triangular");
  const json spec = repo_library().binding_for(kb14)->spec;
  auto error_for = [&](const Task& task, const json& s) {
    return std::string(bind_error(task, binding_with(task, s)).what());
  };
  json s = spec;
  s["triangular"] = "diagonal";
  std::string msg = error_for(kb14, s);
  EXPECT_TRUE(has(msg, "tasks.kb14_matmul_upper_triangular.triangular") && has(msg, "\"diagonal\"")) << msg;
  s = spec;
  s["activation"] = "relu";
  msg = error_for(kb14, s);
  EXPECT_TRUE(has(msg, "tasks.kb14_matmul_upper_triangular.activation") && has(msg, "none with triangular upper"))
      << msg;
  // Not square: kb02's M, N, K differ.
  const Task kb02 = repo_task("cutegen26/kb02_matmul_standard");
  s = repo_library().binding_for(kb02)->spec;
  s["triangular"] = "lower";
  msg = error_for(kb02, s);
  EXPECT_TRUE(has(msg, "tasks.kb02_matmul_standard.triangular") && has(msg, "square operands (M = N = K)") &&
              has(msg, "on workload"))
      << msg;
}

// gemm.cpu_blocked in triangular mode, with small panels (several k panels, M blocks and N panels per call), on
// operands whose other triangle holds NaN: C must match triu(triu(A)·triu(B)) (tril) and hold exact zeros there.
TEST(TriangularGemm, CpuKernelIgnoresTheOtherTriangleAndWritesZeros) {
  const Template& t = repo_template("gemm.cpu_blocked");
  const std::string harness = R"(
#include <cmath>
#include <cstdio>
#include <vector>
int main() {
  double worst = 0;
  long long zeros_bad = 0;
  for (long long N : {1LL, 2LL, 33LL, 100LL, 261LL}) {
    std::vector<float> A(N * N), B(N * N), C(N * N, 7.0f);
    auto inside = [](long long r, long long c) { return UPPER ? c >= r : c <= r; };
    for (long long i = 0; i < N; ++i)
      for (long long j = 0; j < N; ++j) {
        A[i * N + j] = inside(i, j) ? float((i * 31 + j * 17) % 23) / 11.0f - 0.5f : NAN;
        B[i * N + j] = inside(i, j) ? float((i * 13 + j * 29) % 19) / 9.0f - 1.0f : NAN;
      }
    khive_launch(A.data(), B.data(), C.data(), N);
    for (long long i = 0; i < N; ++i)
      for (long long j = 0; j < N; ++j) {
        if (!inside(i, j)) { zeros_bad += C[i * N + j] != 0.0f; continue; }
        double ref = 0;
        for (long long k = 0; k < N; ++k)
          if (inside(i, k) && inside(k, j)) ref += double(A[i * N + k]) * double(B[k * N + j]);
        worst = std::fmax(worst, std::fabs(C[i * N + j] - ref) / (1.0 + std::fabs(ref)));
        if (std::isnan(C[i * N + j])) worst = 1e30;
      }
  }
  std::printf("zeros_bad %lld worst %.3g\n", zeros_bad, worst);
}
)";
  for (const auto& [name, upper] : std::vector<std::pair<std::string, bool>>{
           {"cutegen26/kb14_matmul_upper_triangular", true}, {"cutegen26/kb15_matmul_lower_triangular", false}}) {
    const BoundTask bt = bound(repo_task(name));
    Point p = t.default_point();
    p["KC"] = "64";
    p["MC"] = "24";
    p["NC"] = "256";
    p["MR"] = "4";
    p["NR"] = "16";
    ASSERT_TRUE(check_point(t, bt, p).ok);
    const std::string out = run_cpu_kernel(render(t, bt, p), fmt::format("#define UPPER {}\n", upper ? 1 : 0) + harness,
                                           upper ? "triu" : "tril");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(zeros_bad (\d+) worst ([0-9.e+-]+))"))) << out;
    EXPECT_EQ(m[1], "0") << name;
    EXPECT_LT(std::stod(m[2]), 1e-5) << name << ": " << out;
  }
}
