// Elementwise inputs read through a strided view of the output's flat index ("views": a transposed, sliced or
// expanded input, heads split or merged): the binder's per-workload evaluation of the view's sizes, strides and
// offset, its refusals (naming the field and what was expected), and rendered elementwise.cpu kernels against the
// formula, exactly.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "khive/tuner/bind/common.hpp"
#include "tuner_support.hpp"

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// C [N, K, H] = A * B with A stored as `a` (axes N, K, H and K2 = K + 2, for a slice) and B of C's
// shape, on two workloads.
Task view_task(const json& a) {
  return nkh_elementwise_task(a, json::array({"N", "K", "H"}), {{"K2", {{"type", "expr"}, {"expression", "K + 2"}}}});
}

Binding view_binding(const Task& t, const json& view) {
  json spec{{"family", "elementwise"}, {"inputs", {"A", "B"}}, {"output", "C"}, {"op", "A * B"}};
  if (!view.is_null()) spec["views"] = {{"A", view}};
  return binding_with(t, spec);
}

// A stored [H, N, K] read as C's [N, K, H]: A[h, n, k] at h * N * K + n * K + k.
const json kTransposed = {{"shape", {"out0", "out1", "out2"}}, {"strides", {"in2", "1", "in1 * in2"}}};

}  // namespace

TEST(ElementwiseView, StridesAreAxisExpressionsEvaluatedPerWorkloadAndWrittenInCpp) {
  const Task t = view_task(json::array({"H", "N", "K"}));
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(t, be, view_binding(t, kTransposed));
    const std::string& p = bt.placeholders.at("PROLOGUE");
    const std::string& e = bt.placeholders.at("ENTRY");
    EXPECT_TRUE(has(p, "KHIVE_VIEW_MASK = 0x1ull;")) << p;  // A viewed, B read at i
    EXPECT_TRUE(has(p, "KHIVE_NVIEW = 1, KHIVE_VRANK = 3;")) << p;
    EXPECT_TRUE(has(e, "{{(N), (K), (H)}}")) << e;                 // the view's shape: C's axes
    EXPECT_TRUE(has(e, "{{(K), int64_t(1), ((N) * (K))}}")) << e;  // in2, 1, in1 * in2
    EXPECT_TRUE(has(bt.summary, "A (view [out0, out1, out2] strides [in2, 1, in1 * in2] offset 0)")) << bt.summary;
    ASSERT_EQ(bt.workload_vars.size(), 2u);
    EXPECT_EQ(bt.workload_vars[0].at("NVIEW"), 1);
    EXPECT_EQ(bt.workload_vars[0].at("NBCAST"), 0);
  }
}

TEST(ElementwiseView, EvalViewGivesEachWorkloadsNumbers) {
  const Task t = view_task(json::array({"H", "N", "K"}));
  const Binding b = view_binding(t, kTransposed);
  const bind_detail::Ctx c{t, Backend::cpu, b};
  const auto axes = bind_detail::resolved(t);
  const TensorSpec &a = *t.find_input("A"), &out = t.outputs[0];
  const auto v0 = bind_detail::eval_view(c, "views.A", a, out, {"out0", "out1", "out2"}, {"in2", "1", "in1 * in2"}, "0",
                                         axes[0], "a");
  EXPECT_EQ(v0.shape, (std::vector<int64_t>{3, 5, 7}));
  EXPECT_EQ(v0.strides, (std::vector<int64_t>{5, 1, 15}));
  const auto v1 = bind_detail::eval_view(c, "views.A", a, out, {"N", "K", "H"}, {"K", "1", "N * K"}, "0", axes[1], "b");
  EXPECT_EQ(v1.strides, (std::vector<int64_t>{4, 1, 8}));  // the task's axis names work too
}

// A view that is the plain row-major read on every workload (C's own strides, no offset) reads A at i.
TEST(ElementwiseView, TheIdentityViewIsAPlainRead) {
  const Task t = view_task(json::array({"N", "K", "H"}));
  const BoundTask bt = bind_task(
      t, Backend::cpu, view_binding(t, {{"shape", {"N", "K * H"}}, {"strides", {"out1 * out2", "1"}}, {"offset", 0}}));
  EXPECT_TRUE(has(bt.placeholders.at("PROLOGUE"), "KHIVE_VIEW_MASK = 0x0ull;")) << bt.placeholders.at("PROLOGUE");
  EXPECT_TRUE(has(bt.placeholders.at("ENTRY"), "{A, B}, {int64_t(1), int64_t(1)}, {khive_n, khive_n}, {}, {}, {} };"))
      << bt.placeholders.at("ENTRY");
}

TEST(ElementwiseView, BadViewsAreRefusedNamingTheFieldAndWhatWasExpected) {
  const Task t = view_task(json::array({"H", "N", "K"}));
  auto error_for = [&](const json& view) { return std::string(bind_error(t, view_binding(t, view)).what()); };
  auto with = [&](const char* k, const json& v) {
    json j = kTransposed;
    j[k] = v;
    return error_for(j);
  };
  EXPECT_EQ(has_all(with("strides", {"in2", "1"}), {"tasks.kb12_matmul_diag.views.A.strides", "3 strides"}), "");
  EXPECT_EQ(has_all(with("shape", {"out0", "out1", "out1"}),
                    {"views.A.shape", "product is C's element count 105", "[out0, out1, out1] (product 75)", "a"}),
            "");
  EXPECT_EQ(has_all(with("offset", 1), {"views.A:", "a view inside A's 105 elements", "its last element at 105"}), "");
  EXPECT_EQ(has_all(with("strides", {"in2", "1", "Q"}), {"views.A.strides[2]", "integer expression", "\"Q\""}), "");
  EXPECT_EQ(has_all(with("strides", {"in2", "0 - 1", "1"}), {"views.A.strides[1]", "a stride >= 0", "-1"}), "");
  EXPECT_EQ(has_all(with("shape", json::array()), {"views.A.shape", "1 to 8 sizes"}), "");
  EXPECT_EQ(has_all(with("step", 2), {"views.A.step", "no such key"}), "");
  EXPECT_EQ(has_all(error_for(json::array({1})), {"views.A", "\"shape\" and \"strides\""}), "");
  EXPECT_EQ(has_all(error_for({{"shape", {1.5}}, {"strides", {1}}}), {"views.A.shape", "an integer or an axis"}), "");

  json spec{{"family", "elementwise"}, {"inputs", {"A", "B"}}, {"output", "C"}, {"op", "A * B"}};
  spec["views"] = {{"X", kTransposed}};
  EXPECT_EQ(has_all(bind_error(t, binding_with(t, spec)).what(), {"views.X", "one of the binding's inputs"}), "");
  spec["views"] = {{"A", kTransposed}};
  spec["broadcast"] = {{"A", 0}};
  EXPECT_EQ(has_all(bind_error(t, binding_with(t, spec)).what(), {"broadcast.A", "read through its view"}), "");
  spec.erase("broadcast");
  spec["views"] = json::array();
  EXPECT_EQ(has_all(bind_error(t, binding_with(t, spec)).what(), {"tasks.kb12_matmul_diag.views:", "an object"}), "");
}

// Rendered elementwise.cpu kernels (VEC 1 and 8, chunks that start inside rows) against the formula, exactly, for a
// transpose, a slice (an offset) with a broadcast axis (stride 0), and heads merged through a split view; a planted
// wrong stride fails.
TEST(ElementwiseView, CpuKernelsReadTheViewsExactly) {
  struct Case {
    json a_shape, view;
    std::string index;  // A's element for C[n, k, h] (C++ of n, k, h, N, K, H)
  };
  const std::vector<Case> cases = {
      {json::array({"H", "N", "K"}), kTransposed, "h * N * K + n * K + k"},
      // A [N, K + 2, 1] read at rows 2.. (A[:, 2:, :]) and expanded over H
      {json::array({"N", "K2", "1"}),
       {{"shape", {"out0", "out1", "out2"}}, {"strides", {"in1", "1", "0"}}, {"offset", "2"}},
       "n * (K + 2) + 2 + k"},
      // A [K, N, H] with C's (k, h) merged and split again as A's ([N, K*H] viewed as [N, K, H]) after a transpose
      {json::array({"K", "N", "H"}),
       {{"shape", {"out0", "out1", "out2"}}, {"strides", {"in2", "in1 * in2", "1"}}},
       "k * N * H + n * H + h"},
  };
  const Template& t = repo_template("elementwise.cpu");
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& cs = cases[ci];
    const Task task = view_task(cs.a_shape);
    const BoundTask bt = bind_task(task, Backend::cpu, view_binding(task, cs.view));
    const std::string harness = fmt::format(R"(
#include <cstdio>
#include <vector>
int main() {{
  const long long shapes[][3] = {{{{1, 1, 1}}, {{3, 5, 7}}, {{2, 4, 70}}, {{5, 33, 100}}}};
  long long bad = 0;
  for (auto& s : shapes) {{
    const long long N = s[0], K = s[1], H = s[2];
    std::vector<float> A(N * (K + 2) * H + N * K * H), B(N * K * H), C(N * K * H, -1.0f);
    for (std::size_t i = 0; i < A.size(); ++i) A[i] = 0.5f + float(i % 97) * 0.125f;
    for (std::size_t i = 0; i < B.size(); ++i) B[i] = float((i * 7919) % 1013) / 7.0f - 50.0f;
    khive_launch(A.data(), B.data(), C.data(), N, K, H);
    for (long long n = 0; n < N; ++n)
      for (long long k = 0; k < K; ++k)
        for (long long h = 0; h < H; ++h) bad += C[(n * K + k) * H + h] != A[{}] * B[(n * K + k) * H + h];
  }}
  std::printf("bad %lld\n", bad);
}}
)",
                                            cs.index);
    for (const char* vec : {"1", "8"}) {
      Point p = t.default_point();
      p["VEC"] = vec;
      p["MIN_PAR"] = "0";
      p["CHUNK"] = "1024";
      EXPECT_EQ(run_cpu_kernel(render(t, bt, p), harness, fmt::format("ew-view{}-{}", ci, vec)), "bad 0\n")
          << "case " << ci << " VEC " << vec;
    }
    if (ci == 0) {
      std::string src = render(t, bt, t.default_point());
      const auto at = src.find("{{(K), int64_t(1), ((N) * (K))}}");
      ASSERT_NE(at, std::string::npos) << src;
      src.replace(at, std::string("{{(K), int64_t(1), ((N) * (K))}}").size(), "{{(K), int64_t(1), ((N) * (H))}}");
      EXPECT_NE(run_cpu_kernel(src, harness, "ew-view-planted"), "bad 0\n");
    }
  }
}
