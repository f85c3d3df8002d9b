// The reduce family (kernels/reduce, tests/tuner-fixtures/reduce_argmax_dim1): the binding's checks and the
// workload variables it gives, the bindings the tuner infers from a recognised reduction (khive.op.dim), and the
// rendered CPU kernel of every op over shapes with the reduced axis last and in the middle, ties and NaNs, against a
// plain reference with torch's rules (NaN wins max/min and their arg, the first index on ties).
#include <fmt/format.h>

#include "tuner_support.hpp"

#include "khive/tuner/auto_bind.hpp"

namespace {

const fs::path kFixture = repo() / "tests/tuner-fixtures/reduce_argmax_dim1";

// A copy of the fixture with y's shape and dtype edited.
Task reduce_task(const json& y_shape, const char* y_dtype, const std::function<void(json&)>& more = {}) {
  return edited_copy(kFixture, [&](json& def) {
    def["outputs"]["idx"]["shape"] = y_shape;
    def["outputs"]["idx"]["dtype"] = y_dtype;
    if (more) more(def);
  });
}

Binding reduce_binding(const Task& t, const char* op, int dim) {
  return binding_with(t, json{{"family", "reduce"}, {"op", op}, {"x", "x"}, {"y", "idx"}, {"dim", dim}});
}

}  // namespace

TEST(ReduceBinding, TheFixtureBindsAsOuterReducedInner) {
  const Task task = load_task(kFixture);
  const Binding* b = repo_library().binding_for(task);
  ASSERT_NE(b, nullptr);
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(task, be, *b);
    EXPECT_EQ(bt.family, "reduce");
    EXPECT_EQ(bt.op, "argmax");
    ASSERT_EQ(bt.workload_vars.size(), task.workloads.size());
    for (std::size_t w = 0; w < task.workloads.size(); ++w) {
      const auto& ax = task.workloads[w].axes;
      EXPECT_EQ(bt.workload_vars[w].at("OUTER"), ax.at("B"));
      EXPECT_EQ(bt.workload_vars[w].at("R"), ax.at("N"));
      EXPECT_EQ(bt.workload_vars[w].at("INNER"), ax.at("D"));
      EXPECT_EQ(bt.workload_vars[w].at("ELEM_BYTES"), 4);
    }
    const std::string& p = bt.placeholders.at("PROLOGUE");
    EXPECT_NE(p.find("using khive_out_t = int64_t;"), std::string::npos) << p;
    EXPECT_NE(p.find("constexpr int KHIVE_OP = 5;"), std::string::npos) << p;
    EXPECT_NE(bt.placeholders.at("ENTRY").find(be == Backend::cuda
                                                   ? "khive_run(x, idx, int64_t(1) * B, N, int64_t(1) * D, stream);"
                                                   : "khive_run(x, idx, int64_t(1) * B, N, int64_t(1) * D);"),
              std::string::npos)
        << bt.placeholders.at("ENTRY");
  }
  // The last axis, counted from the end, and kept as a literal 1.
  const Task last = reduce_task(json::array({"B", "N", "1"}), "float32");
  const BoundTask bt = bind_task(last, Backend::cpu, reduce_binding(last, "sum", -1));
  EXPECT_EQ(bt.workload_vars[2].at("OUTER"), 16 * 256);
  EXPECT_EQ(bt.workload_vars[2].at("R"), 256);
  EXPECT_EQ(bt.workload_vars[2].at("INNER"), 1);
}

TEST(ReduceBinding, BadFieldsAreErrorsNamingTheField) {
  const Task task = load_task(kFixture);
  auto msg = [&](const Task& t, const Binding& b) { return std::string(bind_error(t, b).what()); };
  auto has = [](const std::string& m, const char* s) { return m.find(s) != std::string::npos; };
  std::string m = msg(task, reduce_binding(task, "median", 1));
  EXPECT_TRUE(has(m, "tasks.reduce_argmax_dim1.op") && has(m, "argmin")) << m;
  m = msg(task, reduce_binding(task, "argmax", 3));
  EXPECT_TRUE(has(m, "tasks.reduce_argmax_dim1.dim") && has(m, "-3 to 2")) << m;
  m = msg(task, reduce_binding(task, "max", 1));  // idx is int64: max's output has x's dtype
  EXPECT_TRUE(has(m, "tasks.reduce_argmax_dim1.y") && has(m, "x's dtype")) << m;
  m = msg(task, reduce_binding(task, "argmax", 2));  // idx [B, D] is not x without axis 2
  EXPECT_TRUE(has(m, "tasks.reduce_argmax_dim1.y") && has(m, "[B, N]")) << m;
  const Task f32 = reduce_task(json::array({"B", "D"}), "float32");
  m = msg(f32, reduce_binding(f32, "argmin", 1));
  EXPECT_TRUE(has(m, "int64")) << m;
  json spec = reduce_binding(task, "argmax", 1).spec;
  spec["dim"] = "N";
  m = msg(task, binding_with(task, spec));
  EXPECT_TRUE(has(m, "tasks.reduce_argmax_dim1.dim") && has(m, "index")) << m;
  EXPECT_TRUE(has(m, "kernels/bindings/tuner-fixtures.json")) << m;
}

// A task no bindings file names binds by its recognised reduction and axis; without the axis it says so.
TEST(ReduceBinding, InferredFromTheRecognisedOpAndAxis) {
  auto renamed = [](const char* op, std::optional<int> dim) {
    return reduce_task(json::array({"B", "D"}), "float32", [&](json& d) {
      d["name"] = "kb1_048_mean_reduction";
      d["op_type"] = "kernelbench";
      d["khive"]["op"] = {{"op", op}, {"family", "reduce"}, {"ops", {"mean"}}};
      if (dim) d["khive"]["op"]["dim"] = *dim;
    });
  };
  const Task t = renamed("mean", 1);
  std::string why;
  // (the folder keeps the fixture's key; infer_binding is what a task without a binding gets)
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "reduce");
  EXPECT_EQ(b->spec["op"], "mean");
  EXPECT_EQ(b->spec["dim"], 1);
  EXPECT_NO_THROW(bind_task(t, Backend::cpu, *b));
  EXPECT_FALSE(infer_binding(renamed("mean", std::nullopt), &why));
  EXPECT_NE(why.find("khive.op.dim"), std::string::npos) << why;
}

// Every op, the reduced axis in the middle (INNER > 1) and last (INNER == 1), LANES 1 and 8, ICHUNK 8: the rendered
// reduce.cpu kernel against a plain reference. Values come from a small set (ties everywhere) with a NaN planted in
// some rows for max/min and their args.
TEST(ReduceCpuKernel, EveryOpOnBothPathsMatchesTorchsRules) {
  const Template& t = repo_template("reduce.cpu");
  const std::string harness = R"(
#include <cstdio>
#include <vector>
int main() {
  const long long shapes[][3] = {{1, 1, 1}, {3, 257, 5}, {2, 8, 1}, {4, 33, 70}, {5, 1, 9}, {1, 1000, 1}};
  long long bad = 0;
  for (auto& s : shapes) {
    const long long B = s[0], N = s[1], D = s[2];
    const long long outer = DIM == 1 ? B : B * N, R = DIM == 1 ? N : D, inner = DIM == 1 ? D : 1;
    std::vector<float> x(B * N * D);
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] = OP == 4 ? 0.75f + 0.125f * float((i * 37) % 5) : float(int((i * 7919) % 11) - 5) * 0.5f;
    if (OP == 2 || OP == 3 || OP == 5 || OP == 6)
      for (std::size_t i = 3; i < x.size(); i += 97) x[i] = NAN;
    std::vector<OUT_T> y(outer * inner);
    khive_launch(x.data(), y.data(), B, N, D);
    for (long long o = 0; o < outer; ++o)
      for (long long i = 0; i < inner; ++i) {
        double acc = OP == 4 ? 1.0 : 0.0, mag = 0.0;
        long long best = 0;
        float bv = x[(o * R) * inner + i];
        for (long long j = 0; j < R; ++j) {
          const float v = x[(o * R + j) * inner + i];
          if (OP == 0 || OP == 1) acc += v, mag += std::fabs(v);
          if (OP == 4) acc *= v;
          const bool beats = (OP == 2 || OP == 5) ? v > bv : v < bv;
          if (j > 0 && !std::isnan(bv) && (beats || std::isnan(v))) bv = v, best = j;
        }
        const double got = double(y[o * inner + i]);
        bool ok;
        if (OP == 5 || OP == 6) ok = (long long)y[o * inner + i] == best;
        else if (OP == 2 || OP == 3) ok = std::isnan(bv) ? std::isnan(got) : got == bv;
        else if (OP == 4) ok = std::fabs(got - acc) <= 2e-4 * std::fabs(acc) + 1e-30;
        else ok = std::fabs(got - acc / (OP == 1 ? R : 1)) <= (1e-6 * mag + 1e-6) / (OP == 1 ? R : 1);
        if (!ok && bad++ < 5) std::printf("shape %lld %lld %lld at %lld,%lld: got %g\n", B, N, D, o, i, got);
      }
  }
  std::printf("bad %lld\n", bad);
}
)";
  const char* ops[] = {"sum", "mean", "max", "min", "prod", "argmax", "argmin"};
  for (int op = 0; op < 7; ++op)
    for (int dim : {1, 2}) {
      const bool arg = op >= 5;
      const Task task =
          reduce_task(dim == 1 ? json::array({"B", "D"}) : json::array({"B", "N"}), arg ? "int64" : "float32");
      const BoundTask bt = bind_task(task, Backend::cpu, reduce_binding(task, ops[op], dim));
      for (const char* lanes : {"1", "8"}) {
        Point p = t.default_point();
        p["LANES"] = lanes;
        p["ICHUNK"] = "8";
        p["MIN_PAR"] = "0";
        const std::string out = run_cpu_kernel(
            render(t, bt, p),
            fmt::format("#define OP {}\n#define DIM {}\n#define OUT_T {}\n", op, dim, arg ? "int64_t" : "float") +
                harness,
            fmt::format("reduce{}{}{}", op, dim, lanes));
        EXPECT_EQ(out, "bad 0\n") << ops[op] << " dim " << dim << " LANES " << lanes;
      }
    }
}
