// Softmax over a non-last axis (kernels/rowop/*_softmax_strided): the rowop binding's "dim" (x as [OUTER, COLS,
// INNER], the op strided_softmax / strided_log_softmax, served only by the strided templates), its refusals, the
// binding inferred from a recognised softmax's axis (khive.op.dim), and the rendered CPU kernel against a
// double-precision reference over sizes.
#include <fmt/format.h>

#include "tuner_support.hpp"

#include "khive/tuner/auto_bind.hpp"

namespace {

const fs::path kFixture = repo() / "tests/tuner-fixtures/reduce_argmax_dim1";  // x [B, N, D] float32

// The fixture with its output made y [B, N, D] float32 (x's shape), and `more` applied.
Task softmax_task(const std::function<void(json&)>& more = {}) {
  return edited_copy(kFixture, [&](json& def) {
    def["outputs"]["idx"]["shape"] = json::array({"B", "N", "D"});
    def["outputs"]["idx"]["dtype"] = "float32";
    if (more) more(def);
  });
}

json softmax_spec(const char* op, const json& dim) {
  json s{{"family", "rowop"}, {"op", op}, {"x", "x"}, {"y", "idx"}};
  if (!dim.is_null()) s["dim"] = dim;
  return s;
}

// The fixture's binding (a reduce one) made a rowop binding with spec s.
Binding rowop_binding(const Task& t, const json& s) {
  Binding b = binding_with(t, s);
  b.family = "rowop";
  return b;
}

}  // namespace

TEST(StridedSoftmaxBinding, AMiddleAxisIsStridedRowsServedByTheStridedTemplates) {
  const Task t = softmax_task();
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(t, be, rowop_binding(t, softmax_spec("softmax", 1)));
    EXPECT_EQ(bt.op, "strided_softmax");
    for (std::size_t w = 0; w < t.workloads.size(); ++w) {
      const auto& ax = t.workloads[w].axes;
      EXPECT_EQ(bt.workload_vars[w].at("ROWS"), ax.at("B") * ax.at("D"));
      EXPECT_EQ(bt.workload_vars[w].at("COLS"), ax.at("N"));
    }
    EXPECT_NE(bt.placeholders.at("ENTRY").find(be == Backend::cuda
                                                   ? "khive_run(khive_a, int64_t(1) * B, N, int64_t(1) * D, stream);"
                                                   : "khive_run(khive_a, int64_t(1) * B, N, int64_t(1) * D);"),
              std::string::npos)
        << bt.placeholders.at("ENTRY");
    // Only the strided templates serve it; the last axis (-1 or 2) stays a plain softmax for the row templates.
    const auto names = [&](const BoundTask& b) {
      std::set<std::string> n;
      for (const Template* tp : applicable_templates(repo_library(), b, 0)) n.insert(tp->name);
      return n;
    };
    EXPECT_EQ(names(bt), (std::set<std::string>{be == Backend::cuda ? "rowop.cuda_softmax_strided"
                                                                    : "rowop.cpu_softmax_strided"}));
    const BoundTask last = bind_task(t, be, rowop_binding(t, softmax_spec("log_softmax", -1)));
    EXPECT_EQ(last.op, "log_softmax");
    EXPECT_FALSE(names(last).count("rowop.cpu_softmax_strided") || names(last).count("rowop.cuda_softmax_strided"));
    EXPECT_NE(last.placeholders.at("ENTRY").find("khive_run(khive_a, int64_t(1) * B * N, D"), std::string::npos)
        << last.placeholders.at("ENTRY");
  }
}

TEST(StridedSoftmaxBinding, BadDimsAreErrorsNamingTheField) {
  const Task t = softmax_task();
  auto msg = [&](const json& s) { return std::string(bind_error(t, rowop_binding(t, s)).what()); };
  EXPECT_EQ(has_all(msg(softmax_spec("softmax", 3)),
                    {"tasks.reduce_argmax_dim1.dim", "an axis index of x [B, N, D]", "(-3 to 2)"}),
            "");
  EXPECT_EQ(has_all(msg(softmax_spec("softmax", json::array({1, 2}))),
                    {"tasks.reduce_argmax_dim1.dim", "the index of the normalised axis"}),
            "");
  json rms = softmax_spec("rmsnorm", 1);
  rms["eps"] = 1e-5;
  EXPECT_EQ(has_all(msg(rms), {"tasks.reduce_argmax_dim1.dim", "no dim for rmsnorm"}), "");
}

// A recognised softmax's axis (khive.op.dim) gives the binding of any rank; without it only a 2-D tensor binds.
TEST(StridedSoftmaxBinding, InferredFromTheRecognisedAxis) {
  auto recognised = [](std::optional<int> dim) {
    return softmax_task([&](json& d) {
      d["name"] = "kb2_049_convtranspose3d_softmax_sigmoid";
      d["op_type"] = "kernelbench";
      d["khive"]["op"] = {{"op", "softmax"}, {"family", "softmax"}, {"ops", {"_softmax"}}};
      if (dim) d["khive"]["op"]["dim"] = *dim;
    });
  };
  std::string why;
  auto b = infer_binding(recognised(1), &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "rowop");
  EXPECT_EQ(b->spec["dim"], 1);
  EXPECT_EQ(bind_task(recognised(1), Backend::cpu, *b).op, "strided_softmax");
  EXPECT_FALSE(infer_binding(recognised(std::nullopt), &why));
  EXPECT_NE(why.find("khive.op.dim"), std::string::npos) << why;
}

// The rendered rowop.cpu_softmax_strided over sizes (INNER 1 included), both sweeps (ONLINE 0 / 1), ICHUNK 8 (chunks
// that end part-way), softmax and log-softmax, against a double-precision reference; a column that holds a -inf and
// one of all -inf but one value are there too.
TEST(StridedSoftmaxCpuKernel, MatchesADoubleReferenceOverSizes) {
  const Template& tp = repo_template("rowop.cpu_softmax_strided");
  const std::string harness = R"(
#include <cstdio>
#include <vector>
int main() {
  const long long shapes[][3] = {{1, 1, 1}, {2, 16, 1}, {3, 7, 19}, {2, 64, 100}, {1, 3, 8}, {4, 1, 5}, {2, 300, 9}};
  long long bad = 0;
  for (auto& s : shapes) {
    const long long B = s[0], N = s[1], D = s[2];
    std::vector<float> x(B * N * D);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(int((i * 7919) % 29) - 14) * 0.41f + float(i % 5);
    if (D > 1 && N > 1) {
      x[1 * D + 0] = -INFINITY;                        // column (0, 0): one -inf
      for (long long j = 0; j < N; ++j) x[j * D + 1] = j == N - 1 ? 2.0f : -INFINITY;   // column (0, 1)
    }
    std::vector<float> y(x.size(), -7.0f);
    khive_launch(x.data(), y.data(), B, N, D);
    for (long long b = 0; b < B; ++b)
      for (long long d = 0; d < D; ++d) {
        double m = -INFINITY, sum = 0.0;
        for (long long j = 0; j < N; ++j) m = std::max(m, double(x[(b * N + j) * D + d]));
        for (long long j = 0; j < N; ++j) sum += std::exp(double(x[(b * N + j) * D + d]) - m);
        for (long long j = 0; j < N; ++j) {
          const double v = x[(b * N + j) * D + d];
          const double want = LOG ? v - m - std::log(sum) : std::exp(v - m) / sum;
          const double got = y[(b * N + j) * D + d];
          // log-softmax: x - (max + log(sum)) in fp32 is off by an ulp or two of the larger terms
          const double tol = LOG ? 2e-6 * (std::fabs(v) + std::fabs(m) + 1.0) : 3e-6 * (std::fabs(want) + 1e-3);
          const bool ok = std::isinf(want) ? got == want : std::fabs(got - want) <= tol;
          if (!ok && bad++ < 5)
            std::printf("shape %lld %lld %lld at %lld,%lld,%lld: got %.9g want %.9g\n", B, N, D, b, j, d, got, want);
        }
      }
  }
  std::printf("bad %lld\n", bad);
}
)";
  const Task t = softmax_task();
  for (const char* op : {"softmax", "log_softmax"}) {
    const BoundTask bt = bind_task(t, Backend::cpu, rowop_binding(t, softmax_spec(op, 1)));
    for (const char* online : {"0", "1"}) {
      Point p = tp.default_point();
      p["ICHUNK"] = "8";
      p["ONLINE"] = online;
      p["MIN_PAR"] = "0";
      const bool log = std::string(op) == "log_softmax";
      const std::string out = run_cpu_kernel(render(tp, bt, p), fmt::format("#define LOG {}\n", log ? 1 : 0) + harness,
                                             fmt::format("strided_softmax{}{}", log, online));
      EXPECT_EQ(out, "bad 0\n") << op << " ONLINE " << online;
    }
  }
}
