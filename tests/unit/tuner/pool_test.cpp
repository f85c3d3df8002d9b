// The pool family (kernels/pool, tests/tuner-fixtures/pool_max3d_ceil): the binding's checks (torch's output size
// with ceil_mode, the padding bound, the options of the other pool) and the variables it gives, the binding the tuner
// infers from a recognised pooling (khive.op.pool), and the rendered CPU kernel over max and average pools of 1-3
// axes, padded, dilated, with ceil_mode, count_include_pad off and a divisor override, NaNs planted, against a plain
// reference written from torch's definitions.
#include <fmt/format.h>

#include "tuner_support.hpp"

#include "khive/tuner/auto_bind.hpp"

namespace {

const fs::path kFixture = repo() / "tests/tuner-fixtures/pool_max3d_ceil";

json fixture_binding() {
  return json{{"family", "pool"},
              {"op", "max"},
              {"x", "x"},
              {"y", "y"},
              {"kernel", {3, 3, 3}},
              {"stride", {2, 2, 2}},
              {"padding", {1, 1, 1}},
              {"dilation", {2, 2, 2}},
              {"ceil_mode", true}};
}

// One pooling as a test case: x [N, C, *in] with N = 2, C = 3 fixed and the pooled sizes literal.
struct PoolCase {
  const char* name;
  bool max;
  std::vector<int> in, k, s, p, d;
  bool ceil, count_pad;
  int divisor;
  static int out1(int in, int k, int s, int p, int d, bool ceil) {
    const int reach = in + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
    if (reach < 0) return 0;
    int o = reach / s + 1;
    if (ceil && (o - 1) * s >= in + p) --o;
    return o;
  }
  std::vector<int> out() const {
    std::vector<int> o;
    for (std::size_t a = 0; a < in.size(); ++a) o.push_back(out1(in[a], k[a], s[a], p[a], d[a], ceil));
    return o;
  }
};

Task case_task(const PoolCase& k) {
  auto shape = [](const std::vector<int>& v) {
    json s = json::array({"N", "C"});
    for (int e : v) s.push_back(std::to_string(e));
    return s;
  };
  return edited_copy(
      kFixture,
      [&](json& d) {
        d["axes"] = {{"N", {{"type", "var"}}}, {"C", {{"type", "var"}}}};
        d["inputs"]["x"]["shape"] = shape(k.in);
        d["outputs"]["y"]["shape"] = shape(k.out());
        d["constraints"] = {"N >= 1"};
        d["khive"].erase("cost");
        d["khive"].erase("op");
      },
      [](std::string& w) {
        w = "{\"uuid\": \"n2c3\", \"axes\": {\"N\": 2, \"C\": 3}, \"khive\": {\"role\": \"both\"}}\n";
      });
}

Binding case_binding(const Task& t, const PoolCase& k) {
  json spec{{"family", "pool"}, {"op", k.max ? "max" : "avg"}, {"x", "x"}, {"y", "y"}, {"kernel", k.k}, {"stride", k.s},
            {"padding", k.p},   {"ceil_mode", k.ceil}};
  if (k.max) spec["dilation"] = k.d;
  if (!k.max) spec["count_include_pad"] = k.count_pad;
  if (k.divisor) spec["divisor_override"] = k.divisor;
  return binding_with(t, spec);
}

}  // namespace

TEST(PoolBinding, TheFixtureBindsWithTorchsOutputSizes) {
  const Task task = load_task(kFixture);
  const Binding* b = repo_library().binding_for(task);
  ASSERT_NE(b, nullptr);
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(task, be, *b);
    EXPECT_EQ(bt.family, "pool");
    EXPECT_EQ(bt.op, "max_pool");
    for (std::size_t w = 0; w < task.workloads.size(); ++w) {
      const auto& ax = task.workloads[w].axes;
      auto o = [](int64_t in) { return (in - 2) / 2 + 1; };
      EXPECT_EQ(bt.workload_vars[w].at("PLANES"), ax.at("N") * ax.at("C"));
      EXPECT_EQ(bt.workload_vars[w].at("OUT_SPATIAL"), o(ax.at("D")) * o(ax.at("H")) * o(ax.at("W")));
      EXPECT_EQ(bt.workload_vars[w].at("WINDOW"), 27);
    }
    const std::string& p = bt.placeholders.at("PROLOGUE");
    for (const char* s : {"khive_dil(int a) { return a == 0 ? 2 : a == 1 ? 2 : 2; }",
                          "KHIVE_MAX = true, KHIVE_CEIL = true", "KHIVE_DIVISOR = 0;"})
      EXPECT_NE(p.find(s), std::string::npos) << s << "\n" << p;
    EXPECT_NE(bt.placeholders.at("ENTRY").find("khive_pool_out(D, 0)"), std::string::npos)
        << bt.placeholders.at("ENTRY");
  }
}

TEST(PoolBinding, BadFieldsAreErrorsNamingTheField) {
  const Task task = load_task(kFixture);
  auto msg = [&](const std::function<void(json&)>& edit) {
    json spec = fixture_binding();
    edit(spec);
    return std::string(bind_error(task, binding_with(task, spec)).what());
  };
  EXPECT_EQ(has_all(msg([](json& s) { s["op"] = "min"; }), {"tasks.pool_max3d_ceil.op", "max or avg"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["kernel"] = json::array(); }), {".kernel", "1 to 3"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["stride"] = {2, 2}; }), {".stride", "3 integers"}), "");
  // Without ceil_mode the last window of an even axis does not fit: y's size is no longer torch's.
  EXPECT_EQ(has_all(msg([](json& s) { s["ceil_mode"] = false; }), {".y", "pooled axis", "workload"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["padding"] = {3, 1, 1}; }), {".padding", "half the window"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["count_include_pad"] = false; }), {".count_include_pad", "average"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["op"] = "avg"; }), {".dilation", "an average pool has none"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["ceil_mode"] = 1; }), {".ceil_mode", "true or false"}), "");
}

TEST(PoolBinding, InferredFromTheRecognisedPooling) {
  const Task t = load_task(kFixture);
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "pool");
  EXPECT_EQ(b->spec["op"], "max");
  EXPECT_EQ(b->spec["dilation"], json({2, 2, 2}));
  EXPECT_NO_THROW(bind_task(t, Backend::cpu, *b));
  const Task bare = edited_copy(kFixture, [](json& d) {
    d["khive"]["op"] = {{"op", "pool"}, {"family", "pool"}, {"ops", {"max_pool2d_with_indices"}}};
  });
  EXPECT_FALSE(infer_binding(bare, &why));
  EXPECT_NE(why.find("khive.op.pool"), std::string::npos) << why;
  for (const auto& [field, value] : std::vector<std::pair<std::string, json>>{
           {"op", "sum"}, {"kernel", json::array({0, 1, 1})}, {"ceil_mode", "yes"}, {"divisor_override", 0}}) {
    try {
      edited_copy(kFixture, [&](json& d) { d["khive"]["op"]["pool"][field] = value; });
      ADD_FAILURE() << "khive.op.pool." << field << " = " << value.dump() << " loaded";
    } catch (const TaskFormatError& e) {
      EXPECT_NE(std::string(e.what()).find("khive.op.pool." + field), std::string::npos) << e.what();
    }
  }
}

// Every case, ROWS 1 and 16 (MIN_PAR 0): the rendered pool.cpu kernel against a plain reference.
TEST(PoolCpuKernel, EveryVariantMatchesTorchsDefinition) {
  const std::vector<PoolCase> cases = {
      {"max1d_dilated", true, {40}, {8}, {1}, {4}, {3}, false, true, 0},
      {"max2d", true, {9, 8}, {4, 4}, {1, 1}, {1, 1}, {1, 1}, false, true, 0},
      {"max3d_ceil", true, {7, 6, 5}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {2, 2, 2}, true, true, 0},
      {"avg1d_padded", false, {19}, {8}, {1}, {4}, {1}, false, true, 0},
      {"avg2d_ceil_nopad", false, {10, 9}, {3, 2}, {2, 2}, {1, 1}, {1, 1}, true, false, 0},
      {"avg2d_ceil_pad", false, {10, 9}, {3, 2}, {2, 2}, {1, 1}, {1, 1}, true, true, 0},
      {"avg3d_divisor", false, {5, 6, 7}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, false, true, 5},
  };
  const Template& t = repo_template("pool.cpu");
  const std::string harness = R"(
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>
int main() {
  const int in3[3] = {IN3}, k3[3] = {K3}, s3[3] = {S3}, p3[3] = {P3}, d3[3] = {D3}, o3[3] = {O3};
  const long P = 6, in_px = long(in3[0]) * in3[1] * in3[2], out_px = long(o3[0]) * o3[1] * o3[2];
  std::vector<float> x(P * in_px);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(int((i * 7919) % 29) - 14) / 4.0f;
  if (MAXP) x[5] = NAN;   // plane 0: every window over element 5 must read NaN
  std::vector<float> y(P * out_px, -1234.5f);
  khive_launch(x.data(), y.data(), 2, 3);
  long bad = 0;
  for (long p = 0; p < P; ++p)
    for (int od = 0; od < o3[0]; ++od) for (int oh = 0; oh < o3[1]; ++oh) for (int ow = 0; ow < o3[2]; ++ow) {
      const int o[3] = {od, oh, ow};
      double want;
      if (MAXP) {
        double m = -INFINITY; bool nan = false;
        for (int a = 0; a < k3[0]; ++a) for (int b = 0; b < k3[1]; ++b) for (int c = 0; c < k3[2]; ++c) {
          const int i[3] = {o[0] * s3[0] - p3[0] + a * d3[0], o[1] * s3[1] - p3[1] + b * d3[1], o[2] * s3[2] - p3[2] + c * d3[2]};
          if (i[0] < 0 || i[0] >= in3[0] || i[1] < 0 || i[1] >= in3[1] || i[2] < 0 || i[2] >= in3[2]) continue;
          const float v = x[p * in_px + (long(i[0]) * in3[1] + i[1]) * in3[2] + i[2]];
          if (std::isnan(v)) nan = true; else if (v > m) m = v;
        }
        want = nan ? NAN : m;
      } else {
        int lo[3], hi[3]; long padded = 1, real = 1; bool empty = false;
        for (int a = 0; a < 3; ++a) {
          const int st = o[a] * s3[a] - p3[a], e = std::min(st + k3[a], in3[a] + p3[a]);
          padded *= e - st; lo[a] = std::max(st, 0); hi[a] = std::min(e, in3[a]);
          empty = empty || lo[a] >= hi[a]; real *= hi[a] - lo[a];
        }
        double sum = 0;
        if (!empty)
          for (int a = lo[0]; a < hi[0]; ++a) for (int b = lo[1]; b < hi[1]; ++b) for (int c = lo[2]; c < hi[2]; ++c)
            sum += x[p * in_px + (long(a) * in3[1] + b) * in3[2] + c];
        want = empty ? 0.0 : sum / double(DIVISOR ? DIVISOR : COUNT_PAD ? padded : real);
      }
      const float got = y[p * out_px + (long(od) * o3[1] + oh) * o3[2] + ow];
      const bool ok = std::isnan(want) ? std::isnan(got) : std::fabs(got - want) <= 1e-5 * (1 + std::fabs(want));
      if (!ok && bad++ < 5) std::printf("plane %ld at %d,%d,%d: got %g want %g\n", p, od, oh, ow, got, want);
    }
  std::printf("bad %ld of %ld\n", bad, P * out_px);
}
)";
  for (const auto& k : cases) {
    const Task task = case_task(k);
    const BoundTask bt = bind_task(task, Backend::cpu, case_binding(task, k));
    auto pad3 = [&](const std::vector<int>& v, int fill) {
      std::vector<int> r(3 - v.size(), fill);
      r.insert(r.end(), v.begin(), v.end());
      return fmt::format("{}", fmt::join(r, ", "));
    };
    const std::string defs = fmt::format(
        "#define IN3 {}\n#define K3 {}\n#define S3 {}\n#define P3 {}\n#define D3 {}\n#define O3 {}\n#define MAXP {}\n"
        "#define COUNT_PAD {}\n#define DIVISOR {}\n",
        pad3(k.in, 1), pad3(k.k, 1), pad3(k.s, 1), pad3(k.p, 0), pad3(k.d, 1), pad3(k.out(), 1), k.max ? 1 : 0,
        k.count_pad ? 1 : 0, k.divisor);
    for (const char* rows : {"1", "16"}) {
      Point p = t.default_point();
      p["ROWS"] = rows;
      p["MIN_PAR"] = "0";
      const std::string got = run_cpu_kernel(render(t, bt, p), defs + harness, fmt::format("pool-{}-{}", k.name, rows));
      EXPECT_EQ(got.substr(0, 6), "bad 0 ") << k.name << " ROWS " << rows << "\n" << got;
    }
  }
}
