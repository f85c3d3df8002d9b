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

// A run of neighbouring axes reduced together (a global average pool's mean over H and W): R is their product, y is x
// without them or with 1s in their place (keepdim says which when given); axes that are not neighbours, or y of the
// other form than keepdim says, are errors naming the field.
TEST(ReduceBinding, ARunOfNeighbouringAxesIsOneReducedAxis) {
  const Task none = reduce_task(json::array({"B"}), "float32");
  json spec{{"family", "reduce"}, {"op", "mean"}, {"x", "x"}, {"y", "idx"}, {"dim", json::array({2, 1})}};
  const BoundTask bt = bind_task(none, Backend::cpu, binding_with(none, spec));
  for (std::size_t w = 0; w < none.workloads.size(); ++w) {
    const auto& ax = none.workloads[w].axes;
    EXPECT_EQ(bt.workload_vars[w].at("OUTER"), ax.at("B"));
    EXPECT_EQ(bt.workload_vars[w].at("R"), ax.at("N") * ax.at("D"));
    EXPECT_EQ(bt.workload_vars[w].at("INNER"), 1);
  }
  EXPECT_NE(bt.placeholders.at("ENTRY").find("khive_run(x, idx, int64_t(1) * B, int64_t(1) * N * D, int64_t(1));"),
            std::string::npos)
      << bt.placeholders.at("ENTRY");
  const Task kept = reduce_task(json::array({"1", "1", "D"}), "float32");
  spec["dim"] = json::array({-3, 1});
  spec["op"] = "logsumexp";
  const BoundTask bk = bind_task(kept, Backend::cuda, binding_with(kept, spec));
  EXPECT_EQ(bk.workload_vars[2].at("OUTER"), 1);
  EXPECT_EQ(bk.workload_vars[2].at("R"), 16 * 256);
  EXPECT_EQ(bk.workload_vars[2].at("INNER"), kept.workloads[2].axes.at("D"));
  EXPECT_NE(bk.placeholders.at("PROLOGUE").find("constexpr int KHIVE_OP = 7;"), std::string::npos);

  auto msg = [&](const Task& t, const json& s) { return std::string(bind_error(t, binding_with(t, s)).what()); };
  auto has = [](const std::string& m, const char* s) { return m.find(s) != std::string::npos; };
  json bad = spec;
  bad["dim"] = json::array({0, 2});
  std::string m = msg(kept, bad);
  EXPECT_TRUE(has(m, "tasks.reduce_argmax_dim1.dim") && has(m, "neighbouring axes of x [B, N, D]") && has(m, "[0,2]"))
      << m;
  bad["dim"] = json::array({0, 0});
  m = msg(kept, bad);
  EXPECT_TRUE(has(m, "tasks.reduce_argmax_dim1.dim") && has(m, "each once")) << m;
  bad["dim"] = json::array({1, 3});
  m = msg(kept, bad);
  EXPECT_TRUE(has(m, "tasks.reduce_argmax_dim1.dim") && has(m, "axis indices of x [B, N, D] (-3 to 2)")) << m;
  bad["dim"] = json::array({0, 1});
  bad["keepdim"] = false;
  m = msg(kept, bad);
  EXPECT_TRUE(has(m, "tasks.reduce_argmax_dim1.y") && has(m, "the shape [D] (keepdim false)") && has(m, "[1, 1, D]"))
      << m;
  bad["keepdim"] = true;
  EXPECT_NO_THROW(bind_task(kept, Backend::cpu, binding_with(kept, bad)));
  // The scan family still takes one axis.
  json scan{{"family", "scan"}, {"op", "cumsum"}, {"x", "x"}, {"y", "idx"}, {"dim", json::array({1, 2})}};
  const Task same = reduce_task(json::array({"B", "N", "D"}), "float32");
  Binding sb = binding_with(same, scan);
  sb.family = "scan";
  m = std::string(bind_error(same, sb).what());
  EXPECT_TRUE(has(m, "tasks.reduce_argmax_dim1.dim") && has(m, "the index of the scanned axis")) << m;
}

// khive.op.dim as a list (and the keepdim flag) gives a reduce binding over those axes; logsumexp is one of the ops.
TEST(ReduceBinding, InferredOverSeveralAxesAndForLogsumexp) {
  const Task t = reduce_task(json::array({"B", "1", "1"}), "float32", [&](json& d) {
    d["name"] = "kb2_067_conv2d_gelu_globalavgpool";
    d["op_type"] = "kernelbench";
    d["khive"]["op"] = {{"op", "logsumexp"},
                        {"family", "reduce"},
                        {"dim", json::array({1, 2})},
                        {"flags", json::array({"keepdim"})},
                        {"ops", {"logsumexp"}}};
  });
  ASSERT_EQ(t.op_dims, (std::vector<int>{1, 2}));
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->spec["op"], "logsumexp");
  EXPECT_EQ(b->spec["dim"], json::array({1, 2}));
  EXPECT_EQ(b->spec["keepdim"], true);
  EXPECT_NO_THROW(bind_task(t, Backend::cpu, *b));
  // A list of one axis is not how khive.op writes one: the definition is refused naming the field.
  try {
    reduce_task(json::array({"B", "D"}), "float32", [&](json& d) {
      d["khive"]["op"] = {{"op", "mean"}, {"family", "reduce"}, {"dim", json::array({1})}};
    });
    ADD_FAILURE() << "a one-axis list was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("khive.op.dim"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a list of 2 or more"), std::string::npos) << e.what();
  }
}

// logsumexp and mean over a run of axes, on both paths of reduce.cpu, against a double-precision reference over
// sizes; rows with +inf, all -inf and a NaN follow torch (inf, -inf, NaN).
TEST(ReduceCpuKernel, LogsumexpAndAxisRunsMatchADoubleReference) {
  const Template& t = repo_template("reduce.cpu");
  const std::string harness = R"(
#include <cstdio>
#include <vector>
int main() {
  const long long shapes[][3] = {{1, 1, 1}, {3, 257, 5}, {2, 8, 1}, {4, 33, 70}, {5, 1, 9}, {1, 1000, 3}, {7, 3, 2}};
  long long bad = 0;
  for (auto& s : shapes) {
    const long long B = s[0], N = s[1], D = s[2];
    // RUN 12: axes 1 and 2 (outer B, R = N * D, inner 1); RUN 01: axes 0 and 1 (outer 1, R = B * N, inner D)
    const long long outer = RUN == 12 ? B : 1, R = RUN == 12 ? N * D : B * N, inner = RUN == 12 ? 1 : D;
    std::vector<float> x(B * N * D);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(int((i * 7919) % 23) - 11) * 0.37f + (i % 3) * 8.0f;
    const bool special = OP == 7 && outer * inner >= 4;
    // output 0: a +inf; output 1: all -inf; output 2: a NaN; output 3: +inf twice
    auto at = [&](long long o, long long j, long long i) -> float& { return x[(o * R + j) * inner + i]; };
    auto out_at = [&](long long k, long long j) -> float& { return at(k / inner, j, k % inner); };
    if (special) {
      out_at(0, R / 2) = INFINITY;
      for (long long j = 0; j < R; ++j) out_at(1, j) = -INFINITY;
      out_at(2, R - 1) = NAN;
      out_at(3, 0) = INFINITY;
      out_at(3, R - 1) = INFINITY;
    }
    std::vector<float> y(outer * inner);
    khive_launch(x.data(), y.data(), B, N, D);
    for (long long o = 0; o < outer; ++o)
      for (long long i = 0; i < inner; ++i) {
        double m = -INFINITY, sum = 0.0, mag = 0.0;
        bool nan = false;
        for (long long j = 0; j < R; ++j) m = std::max(m, double(at(o, j, i))), nan |= std::isnan(at(o, j, i));
        const double shift = std::isinf(m) ? 0.0 : m;
        for (long long j = 0; j < R; ++j) {
          const double v = at(o, j, i);
          if (OP == 7) sum += std::exp(v - shift);
          else sum += v, mag += std::fabs(v);
        }
        const double want = nan ? NAN : OP == 7 ? std::log(sum) + shift : sum / R;
        const double got = y[o * inner + i];
        bool ok;
        if (std::isnan(want)) ok = std::isnan(got);
        else if (std::isinf(want)) ok = got == want;
        else ok = std::fabs(got - want) <= (OP == 7 ? 2e-6 * (std::fabs(want) + 1.0) : 1e-6 * (mag / R + 1.0));
        if (!ok && bad++ < 5) std::printf("shape %lld %lld %lld at %lld,%lld: got %.9g want %.9g\n", B, N, D, o, i, got, want);
      }
  }
  std::printf("bad %lld\n", bad);
}
)";
  for (int op : {1, 7})
    for (int run : {12, 1}) {
      const Task task = reduce_task(run == 12 ? json::array({"B"}) : json::array({"D"}), "float32");
      json spec{{"family", "reduce"}, {"op", op == 7 ? "logsumexp" : "mean"}, {"x", "x"}, {"y", "idx"}};
      spec["dim"] = run == 12 ? json::array({1, 2}) : json::array({0, 1});
      const BoundTask bt = bind_task(task, Backend::cpu, binding_with(task, spec));
      for (const char* lanes : {"1", "8"}) {
        Point p = t.default_point();
        p["LANES"] = lanes;
        p["ICHUNK"] = "8";
        p["MIN_PAR"] = "0";
        const std::string out =
            run_cpu_kernel(render(t, bt, p), fmt::format("#define OP {}\n#define RUN {}\n", op, run) + harness,
                           fmt::format("reduce_run{}{}{}", op, run, lanes));
        EXPECT_EQ(out, "bad 0\n") << "op " << op << " run " << run << " LANES " << lanes;
      }
    }
}
