// The norm family (kernels/norm, tests/tuner-fixtures/norm_group_affine): the binding's views of x for torch's
// normalisations (batch, instance, group, layer, RMS over the channels, L1, L2 / Frobenius), its checks (each bad field
// named, the workload where a size is wrong), the binding the tuner infers from a recognised normalisation
// (khive.op.norm), and the rendered CPU kernel of every statistic and layout against a double-precision reference, in
// fp32 on data far from zero mean and in bf16 / fp16; two planted bugs must fail it.
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "tuner_support.hpp"

#include "khive/compile/builder.hpp"
#include "khive/tuner/auto_bind.hpp"

namespace {

const fs::path kFixture = repo() / "tests/tuner-fixtures/norm_group_affine";

json fixture_binding() {
  return json{{"family", "norm"}, {"stat", "var"}, {"x", "x"},           {"y", "y"},       {"axes", {1, 2, 3}},
              {"groups", 4},      {"eps", 1e-5},   {"weight", "weight"}, {"bias", "bias"}, {"affine_axes", {1}}};
}

// One normalisation as a test case: x [A0, A1, ...] of `dtype` (every axis a var), weight and bias shaped as x's
// affine axes when there are any, over `sets` of sizes (the task's one workload: the first).
struct NormCase {
  const char* name;
  const char* stat;
  std::vector<std::vector<int64_t>> sets;
  std::vector<int64_t> axes;
  int64_t groups;
  std::vector<int64_t> affine;  // empty: no weight or bias
  bool weight, bias;
  double eps, offset;
  const char* dtype;
  int stat_index() const {
    const std::string s = stat;
    return s == "var" ? 0 : s == "rms" ? 1 : s == "l2" ? 2 : 3;
  }
};

Task case_task(const NormCase& k) {
  const std::size_t rank = k.sets[0].size();
  return edited_copy(
      kFixture,
      [&](json& d) {
        d["axes"] = json::object();
        json shape = json::array(), wshape = json::array();
        for (std::size_t a = 0; a < rank; ++a) {
          d["axes"][fmt::format("A{}", a)] = {{"type", "var"}};
          shape.push_back(fmt::format("A{}", a));
        }
        for (auto a : k.affine) wshape.push_back(fmt::format("A{}", a));
        d["inputs"] = {{"x", {{"shape", shape}, {"dtype", k.dtype}}}};
        if (k.weight) d["inputs"]["weight"] = {{"shape", wshape}, {"dtype", k.dtype}};
        if (k.bias) d["inputs"]["bias"] = {{"shape", wshape}, {"dtype", k.dtype}};
        d["outputs"]["y"] = {{"shape", shape}, {"dtype", k.dtype}};
        d["constraints"] = json::array();
        d["khive"].erase("cost");
        d["khive"].erase("op");
        d["khive"].erase("inputs");
      },
      [&](std::string& w) {
        json ax = json::object();
        for (std::size_t a = 0; a < rank; ++a) ax[fmt::format("A{}", a)] = k.sets[0][a];
        w = json{{"uuid", "w0"}, {"axes", ax}, {"khive", {{"role", "both"}}}}.dump() + "\n";
      });
}

Binding case_binding(const Task& t, const NormCase& k) {
  json spec{{"family", "norm"}, {"stat", k.stat}, {"x", "x"}, {"y", "y"}, {"axes", k.axes}, {"eps", k.eps}};
  if (k.groups != 1) spec["groups"] = k.groups;
  if (k.weight) spec["weight"] = "weight";
  if (k.bias) spec["bias"] = "bias";
  if (!k.affine.empty()) spec["affine_axes"] = k.affine;
  return binding_with(t, spec);
}

// The family variables of case k's one workload.
AxisValues case_vars(const NormCase& k) {
  const Task t = case_task(k);
  return bind_task(t, Backend::cpu, case_binding(t, k)).workload_vars.at(0);
}

// The CPU side of tests/unit/tuner/norm_harness.inc (the element-by-element check, shared with tests/gpu/norm_cuda.py):
// khive_launch on the host vectors. fp32's tolerance grows with the data's offset: float holds x - mean to about an
// ulp of the offset (4e-4 at 300, where the naive E[x^2] - E[x]^2 is off by ~1 %).
std::string harness() {
  std::ifstream in(repo() / "tests/unit/tuner/norm_harness.inc");
  std::stringstream check;
  check << in.rdbuf();
  return "#include <vector>\n"
         "template <class X, class W>\n"
         "bool run_set(std::vector<X>& x, std::vector<W>& w, std::vector<W>& b, std::vector<X>& y, const long* d) {\n"
         "  CALL;\n"
         "  return true;\n"
         "}\n" +
         check.str();
}

// The harness's #defines for case k.
std::string case_defines(const NormCase& k) {
  const std::size_t rank = k.sets[0].size();
  std::vector<std::string> sets;
  for (const auto& s : k.sets) sets.push_back(fmt::format("{{{}}}", fmt::join(s, ", ")));
  std::vector<int> red(rank, 0);
  for (auto a : k.axes) red[static_cast<std::size_t>(a)] = 1;
  std::string call = "khive_launch(x.data()";
  if (k.weight) call += ", w.data()";
  if (k.bias) call += ", b.data()";
  call += ", y.data()";
  for (std::size_t a = 0; a < rank; ++a) call += fmt::format(", d[{}]", a);
  call += ")";
  const bool f32 = std::string(k.dtype) == "float32";
  return fmt::format(
      "#define NSETS {}\n#define RANK {}\n#define SIZES {}\n#define REDUCED {}\n#define GROUPS {}\n#define STAT {}\n"
      "#define AFF_LO {}\n#define AFF_HI {}\n#define HAS_W {}\n#define HAS_B {}\n#define EPS {:.17g}\n"
      "#define OFFSET {:.17g}\n#define TOL {}\n#define CALL {}\n",
      k.sets.size(), rank, fmt::join(sets, ", "), fmt::join(red, ", "), k.groups, k.stat_index(),
      k.affine.empty() ? 0 : k.affine.front(), k.affine.empty() ? -1 : k.affine.back(), k.weight ? 1 : 0,
      k.bias ? 1 : 0, k.eps, k.offset, f32 ? "(1e-4 + 1e-6 * OFFSET)" : "1e-2", call);
}

// Case k rendered at point p (the kernel's source edited by `plant` when given), compiled and run.
std::string run_case(const NormCase& k, const Point& p, const std::string& tag,
                     const std::function<void(std::string&)>& plant = {}) {
  const Task task = case_task(k);
  const BoundTask bt = bind_task(task, Backend::cpu, case_binding(task, k));
  std::string src = render(repo_template("norm.cpu"), bt, p);
  if (plant) plant(src);
  return run_cpu_kernel(generate_prelude(task, Backend::cpu) + src, case_defines(k) + harness(), tag);
}

const std::vector<NormCase>& cases() {
  static const std::vector<NormCase> c = {
      // batch norm (training): a group per channel over N x H x W, per-channel weight and bias; mean 300
      {"batch", "var", {{3, 5, 7, 9}, {2, 3, 40, 70}}, {0, 2, 3}, 1, {1}, true, true, 1e-5, 300.0, "float32"},
      // BatchNorm1d of [N, C]: runs of one element (the kept run is the last axis)
      {"batch1d", "var", {{7, 5}, {300, 3}}, {0}, 1, {1}, true, true, 1e-3, 2.0, "float32"},
      {"instance", "var", {{2, 3, 10, 11}, {1, 2, 64, 65}}, {2, 3}, 1, {}, false, false, 1e-5, 3.0, "float32"},
      // group norm: the channel (weight index) changes every H x W elements of a group
      {"group", "var", {{2, 8, 5, 7}, {1, 12, 31, 33}}, {1, 2, 3}, 4, {1}, true, true, 1e-5, 10.0, "float32"},
      // layer norm over three trailing axes: a weight element per element of the group
      {"layer", "var", {{3, 4, 6, 5}, {2, 5, 40, 41}}, {1, 2, 3}, 1, {1, 2, 3}, true, true, 1e-5, 300.0, "float32"},
      {"layer_bias_bf16", "var", {{5, 37}, {3, 5000}}, {1}, 1, {1}, false, true, 1e-5, 1.0, "bfloat16"},
      // RMSNorm over the channels (KernelBench 36): strided groups, COLS columns together
      {"rms_channels", "rms", {{2, 6, 5, 7}, {3, 64, 9, 31}}, {1}, 1, {}, false, false, 1e-5, 0.5, "float32"},
      {"rms_rows_f16", "rms", {{4, 3, 50}, {2, 2, 3000}}, {2}, 1, {}, false, false, 1e-6, 0.5, "float16"},
      {"mean_abs_rows", "mean_abs", {{4, 300}, {3, 20000}}, {1}, 1, {}, false, false, 0.0, 0.0, "float32"},
      // Frobenius: one group of every element, many slices
      {"l2_all", "l2", {{3, 4, 50, 60}, {2, 3, 5, 7}}, {0, 1, 2, 3}, 1, {}, false, false, 0.0, 0.25, "float32"},
      {"l2_middle", "l2", {{3, 40, 6}, {5, 7, 100}}, {1}, 1, {}, false, false, 0.5, 0.0, "float32"},
      // the mean and variance of strided groups (BatchNorm1d without a weight, an instance norm over a middle axis)
      {"var_middle", "var", {{4, 30, 7}, {3, 1500, 9}}, {1}, 1, {}, false, false, 1e-5, 50.0, "float32"},
      {"mean_abs_middle_f16",
       "mean_abs",
       {{2, 9, 5, 3}, {2, 33, 4, 70}},
       {1, 2},
       1,
       {},
       false,
       false,
       1e-3,
       0.25,
       "float16"},
  };
  return c;
}

}  // namespace

TEST(NormBinding, TheFixtureBindsAsGroupsOfRuns) {
  const Task task = load_task(kFixture);
  const Binding* b = repo_library().binding_for(task);
  ASSERT_NE(b, nullptr);
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(task, be, *b);
    EXPECT_EQ(bt.family, "norm");
    EXPECT_EQ(bt.op, "norm");
    for (std::size_t w = 0; w < task.workloads.size(); ++w) {
      const auto& ax = task.workloads[w].axes;
      const auto& v = bt.workload_vars[w];
      EXPECT_EQ(v.at("OUTER"), 1);
      EXPECT_EQ(v.at("MID"), ax.at("N") * 4);
      EXPECT_EQ(v.at("INNER"), ax.at("C") / 4 * ax.at("H") * ax.at("W"));
      EXPECT_EQ(v.at("GROUPS"), ax.at("N") * 4);
      EXPECT_EQ(v.at("GROUP_SIZE"), v.at("INNER"));
      EXPECT_EQ(v.at("STRIDED"), 0);
    }
    const std::string& p = bt.placeholders.at("PROLOGUE");
    for (const char* s :
         {"KHIVE_STAT = 0;", "KHIVE_REDUCE_MID = false;", "KHIVE_HAS_WEIGHT = true, KHIVE_HAS_BIAS = true"})
      EXPECT_NE(p.find(s), std::string::npos) << s << "\n" << p;
    // outer, mid (N's groups), inner (a group's channels x H x W), wdiv (H x W), wmod (C)
    EXPECT_NE(bt.placeholders.at("ENTRY").find("int64_t(1), (int64_t(1) * N) * 4, (int64_t(1) * C * H * W) / 4, "
                                               "int64_t(1) * H * W, int64_t(1) * C,"),
              std::string::npos)
        << bt.placeholders.at("ENTRY");
  }
}

TEST(NormBinding, TorchsNormalisationsAreViewedAsOuterMidInner) {
  // {OUTER, MID, INNER, STRIDED} of the first size set of each case
  const std::map<std::string, std::vector<int64_t>> want = {
      {"batch", {3, 5, 63, 0}},         // a group per channel: N runs of H x W
      {"batch1d", {7, 5, 1, 0}},        // [N, C] with a weight: a group per C over runs of 1
      {"instance", {1, 6, 110, 0}},     // a group per (n, c)
      {"group", {1, 8, 70, 0}},         // a group per (n, g): 2 channels x 35
      {"layer", {1, 3, 120, 0}},        // a group per n
      {"rms_channels", {2, 6, 35, 1}},  // a group per (n, h, w) over c
      {"l2_all", {1, 1, 36000, 0}},     // one group
      {"l2_middle", {3, 40, 6, 1}},     // a middle axis with a kept one after it
      {"mean_abs_middle_f16", {2, 45, 3, 1}},
  };
  for (const auto& k : cases()) {
    if (!want.count(k.name)) continue;
    const AxisValues v = case_vars(k);
    const auto& w = want.at(k.name);
    EXPECT_EQ((std::vector<int64_t>{v.at("OUTER"), v.at("MID"), v.at("INNER"), v.at("STRIDED")}), w) << k.name;
    EXPECT_EQ(v.at("GROUPS") * v.at("GROUP_SIZE"), v.at("OUTER") * v.at("MID") * v.at("INNER")) << k.name;
  }
  // BatchNorm1d without a weight reduces its first axis as strided columns instead
  NormCase bare = cases()[1];
  bare.affine = {};
  bare.weight = bare.bias = false;
  const AxisValues v = case_vars(bare);
  EXPECT_EQ((std::vector<int64_t>{v.at("OUTER"), v.at("MID"), v.at("INNER"), v.at("STRIDED")}),
            (std::vector<int64_t>{1, 7, 5, 1}));
}

TEST(NormBinding, BadFieldsAreErrorsNamingTheField) {
  const Task task = load_task(kFixture);
  auto msg = [&](const std::function<void(json&)>& edit) {
    json spec = fixture_binding();
    edit(spec);
    return std::string(bind_error(task, binding_with(task, spec)).what());
  };
  EXPECT_EQ(
      has_all(msg([](json& s) { s["stat"] = "std"; }), {"tasks.norm_group_affine.stat", "var, rms, l2 or mean_abs"}),
      "");
  EXPECT_EQ(has_all(msg([](json& s) { s["axes"] = json::array(); }), {".axes", "distinct axes of x"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["axes"] = {1, 4}; }), {".axes", "-4 to 3"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["axes"] = {1, -3}; }), {".axes", "distinct"}), "");
  EXPECT_EQ(has_all(msg([](json& s) {
                      s["axes"] = {1, 3};
                      s.erase("groups");
                    }),
                    {".axes", "all of them but one run"}),
            "");
  EXPECT_EQ(has_all(msg([](json& s) { s["axes"] = {0, 2, 3}; }), {".groups", "unless the axes are one run"}), "");
  // 4 groups do not divide 6 channels: the workload is named
  const Task six = edited_copy(
      kFixture, [](json& d) { d["constraints"] = {"N >= 1"}; },
      [](std::string& w) { w = "{\"uuid\": \"c6\", \"axes\": {\"N\": 1, \"C\": 6, \"H\": 2, \"W\": 2}}\n"; });
  EXPECT_EQ(has_all(bind_error(six, binding_with(six, fixture_binding())).what(),
                    {".groups", "a divisor of x's axis 1", "workload c6"}),
            "");
  EXPECT_EQ(has_all(msg([](json& s) { s["groups"] = 0; }), {".groups", "an integer >= 1"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["eps"] = -1; }), {".eps", "a number >= 0"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s.erase("eps"); }), {".eps", "nothing"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s.erase("affine_axes"); }), {".affine_axes", "the weight and bias are shaped"}),
            "");
  EXPECT_EQ(has_all(msg([](json& s) { s["affine_axes"] = {1, 3}; }), {".affine_axes", "one run"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["affine_axes"] = {2, 3}; }), {".weight", "2 axes", "[C]"}), "");
  EXPECT_EQ(
      has_all(msg([](json& s) { s["affine_axes"] = {3}; }), {".weight", "x's sizes on its affine axes", "workload"}),
      "");
  EXPECT_EQ(has_all(msg([](json& s) {
                      s["stat"] = "rms";
                      s["axes"] = {1};
                      s.erase("groups");
                    }),
                    {".weight", "strided"}),
            "");
  EXPECT_EQ(has_all(msg([](json& s) {
                      s.erase("weight");
                      s.erase("bias");
                      s.erase("affine_axes");
                    }),
                    {".x", "every input of the task bound", "weight"}),
            "");
  EXPECT_EQ(has_all(msg([](json& s) { s["y"] = "x"; }), {".y", "an output of task"}), "");
  EXPECT_EQ(has_all(msg([](json& s) { s["dim"] = 1; }), {".dim", "one of the keys"}), "");
  // A weight over the last axis of a group norm: its index neither constant over a group nor running through it
  const Task cw = edited_copy(kFixture, [](json& d) {
    d["inputs"]["weight"]["shape"] = {"W"};
    d["inputs"]["bias"]["shape"] = {"W"};
    d["khive"].erase("op");
  });
  json spec = fixture_binding();
  spec["affine_axes"] = {3};
  EXPECT_EQ(
      has_all(bind_error(cw, binding_with(cw, spec)).what(), {".affine_axes", "constant over each group", "workload"}),
      "");
}

TEST(NormBinding, InferredFromTheRecognisedNormalisation) {
  const Task t = load_task(kFixture);
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "norm");
  json want = fixture_binding();
  want.erase("family");
  EXPECT_EQ(b->spec, want) << b->spec.dump();
  EXPECT_NO_THROW(bind_task(t, Backend::cpu, *b));
  const Task bare = edited_copy(kFixture, [](json& d) {
    d["khive"]["op"] = {{"op", "norm"}, {"family", "norm"}, {"ops", {"native_group_norm"}}};
  });
  EXPECT_FALSE(infer_binding(bare, &why));
  EXPECT_NE(why.find("khive.op.norm"), std::string::npos) << why;
  for (const auto& [field, value] : std::vector<std::pair<std::string, json>>{{"stat", "std"},
                                                                              {"axes", json::array({2, 1})},
                                                                              {"axes", json::array({1, 2, 4})},
                                                                              {"groups", 0},
                                                                              {"eps", -1e-5},
                                                                              {"affine_axes", json::array()}}) {
    try {
      edited_copy(kFixture, [&](json& d) { d["khive"]["op"]["norm"][field] = value; });
      ADD_FAILURE() << "khive.op.norm." << field << " = " << value.dump() << " loaded";
    } catch (const TaskFormatError& e) {
      EXPECT_NE(std::string(e.what()).find("khive.op.norm." + field), std::string::npos) << e.what();
    }
  }
  // affine_axes without a weight or bias to shape, and a weight without them
  for (const bool drop_operands : {true, false}) {
    try {
      edited_copy(kFixture, [&](json& d) {
        if (drop_operands)
          d["khive"]["op"]["operands"] = {{"x", "x"}};
        else
          d["khive"]["op"]["norm"].erase("affine_axes");
      });
      ADD_FAILURE() << "loaded";
    } catch (const TaskFormatError& e) {
      EXPECT_NE(std::string(e.what()).find("khive.op.norm.affine_axes"), std::string::npos) << e.what();
    }
  }
}

// Every case at two points (small slices and column chunks on one path, large on the other; MIN_PAR 0: OpenMP on).
TEST(NormCpuKernel, EveryVariantMatchesADoublePrecisionReference) {
  const Template& t = repo_template("norm.cpu");
  for (const auto& k : cases())
    for (const auto& [slice, cols] :
         std::vector<std::pair<const char*, const char*>>{{"2048", "16"}, {"32768", "256"}}) {
      Point p = t.default_point();
      p["SLICE"] = slice;
      p["COLS"] = cols;
      p["MIN_PAR"] = "0";
      const std::string got = run_case(k, p, fmt::format("norm-{}-{}", k.name, slice));
      EXPECT_EQ(got.substr(0, 6), "bad 0 ") << k.name << " SLICE " << slice << " COLS " << cols << "\n" << got;
    }
}

// The harness catches what it must: the merge of two parts without their means' difference (a batch norm over runs
// whose means differ), and a group norm's weight taken per group instead of per channel.
TEST(NormCpuKernel, PlantedBugsFailTheReference) {
  const Template& t = repo_template("norm.cpu");
  Point p = t.default_point();
  p["SLICE"] = "2048";
  p["MIN_PAR"] = "0";
  auto replace = [](std::string from, std::string to) {
    return [from, to](std::string& src) {
      const auto at = src.find(from);
      ASSERT_NE(at, std::string::npos) << from;
      src.replace(at, from.size(), to);
    };
  };
  const std::string merge = run_case(cases()[0], p, "norm-planted-merge",
                                     replace("a.m2 + b.m2 + d * d * static_cast<float>(a.n) * fb", "a.m2 + b.m2"));
  EXPECT_EQ(merge.substr(0, 4), "set ") << merge;
  EXPECT_EQ(merge.find("bad 0 "), std::string::npos) << merge;
  const std::string weight =
      run_case(cases()[3], p, "norm-planted-weight", replace("idx = base + j / a.wdiv", "idx = base"));
  EXPECT_EQ(weight.substr(0, 4), "set ") << weight;
  EXPECT_EQ(weight.find("bad 0 "), std::string::npos) << weight;
}
