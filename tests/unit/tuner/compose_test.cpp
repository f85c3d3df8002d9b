// Per-shape dispatch (tuner.dispatch): choosing a point per timed shape from recorded medians, rendering the composite
// (compiled with the real builder, its dispatcher run in a harness), refusing what cannot share one unit, and the
// agent's strategy (proposed once per composite, recomposed when the measurements change).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <regex>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "khive/compile/builder.hpp"
#include "khive/support/files.hpp"
#include "khive/support/subprocess.hpp"
#include "khive/tuner/compose.hpp"
#include "tuner_support.hpp"

namespace {

BoundTask bound(const Task& t, Backend b = Backend::cpu) { return bind_task(t, b, *repo_library().binding_for(t)); }

MeasuredKernel measured(const std::string& id, const std::string& tname, const Point& p,
                        const std::map<std::string, double>& t) {
  MeasuredKernel k;
  k.id = id;
  k.params = p;
  k.params["template"] = tname;
  k.workload_median_s = t;
  double s = 0;
  for (auto& [w, v] : t) s += std::log(v);
  k.time_s = std::exp(s / static_cast<double>(t.size()));
  return k;
}

const Point kA{{"ROW_BLOCK", "4"}, {"LANES", "16"}, {"ONLINE", "0"}};
const Point kB{{"ROW_BLOCK", "1"}, {"LANES", "4"}, {"ONLINE", "1"}};
const Point kC{{"ROW_BLOCK", "32"}, {"LANES", "8"}, {"ONLINE", "0"}};

// demo-cpu/softmax has two perf shapes: 512x4096 and 2048x1024 (B, D).
const std::string kW1 = "softmax-512x4096", kW2 = "softmax-2048x1024";

std::string run_text(const std::vector<std::string>& argv, const fs::path& cwd) {
  ProcessSpec ps;
  ps.argv = argv;
  ps.cwd = cwd;
  ps.timeout_s = 300;
  const ProcessResult r = run_process(ps);
  EXPECT_TRUE(r.ok()) << r.describe() << "\n" << r.out << r.err;
  return r.out;
}

}  // namespace

TEST(TunerCompose, PlanRoutesEachShapeToItsFastestPoint) {
  const Task task = repo_task("demo-cpu/softmax");
  const BoundTask bt = bound(task);
  // The leader is best on 512x4096, the backup 40% faster on 2048x1024.
  const auto leader = measured("c1", "rowop.cpu_softmax", kA, {{kW1, 1.0e-3}, {kW2, 2.0e-3}});
  const auto b = measured("c2", "rowop.cpu_softmax", kB, {{kW1, 1.5e-3}, {kW2, 1.2e-3}});
  const auto c = measured("c3", "rowop.cpu_softmax", kC, {{kW1, 1.01e-3}, {kW2, 2.5e-3}});  // nowhere best
  const DispatchPlan plan = plan_dispatch(task, bt, repo_library(), leader, {c, b});
  ASSERT_TRUE(plan.ok()) << plan.reason;
  ASSERT_EQ(plan.variants.size(), 2u);
  EXPECT_EQ(plan.variants[0].candidate, "c1");  // the leader's point first
  EXPECT_EQ(plan.variants[1].candidate, "c2");
  EXPECT_EQ(plan.params.at("template"), "tuner.dispatch");
  EXPECT_EQ(plan.params.at("variants"), "c1 c2");
  EXPECT_EQ(plan.params.at("v0"), point_key("rowop.cpu_softmax", kA));
  EXPECT_EQ(plan.params.at("route"), kW1 + "=v0 " + kW2 + "=v1");
  ASSERT_EQ(plan.routes.size(), 2u);
  EXPECT_EQ(plan.routes[0].variant, 0);
  EXPECT_EQ(plan.routes[1].variant, 1);
  EXPECT_EQ(plan.routes[1].axes, (std::map<std::string, int64_t>{{"B", 2048}, {"D", 1024}}));
  EXPECT_NEAR(plan.expected_time_s, std::sqrt(1.0e-3 * 1.2e-3), 1e-12);
  EXPECT_NE(plan.note.find("v1 rowop.cpu_softmax LANES=4 ONLINE=1 ROW_BLOCK=1 (c2): " + kW2 + " (+67%)"),
            std::string::npos)
      << plan.note;
  EXPECT_NE(plan.note.find("expected -22.5% weighted time"), std::string::npos) << plan.note;
}

TEST(TunerCompose, NoPlanWhenTheLeaderIsFastestOrGainsAreNoise) {
  const Task task = repo_task("demo-cpu/softmax");
  const BoundTask bt = bound(task);
  const auto leader = measured("c1", "rowop.cpu_softmax", kA, {{kW1, 1.0e-3}, {kW2, 1.0e-3}});
  EXPECT_EQ(plan_dispatch(task, bt, repo_library(), std::nullopt, {}).reason, "no leader yet");
  // 2% faster on one shape: noise, the leader keeps it.
  auto p = plan_dispatch(task, bt, repo_library(), leader,
                         {measured("c2", "rowop.cpu_softmax", kB, {{kW1, 0.98e-3}, {kW2, 1.5e-3}})});
  EXPECT_FALSE(p.ok());
  EXPECT_NE(p.reason.find("fastest on every shape"), std::string::npos) << p.reason;
  // Only kernels not made from templates: nothing to compose from.
  MeasuredKernel llm = measured("c3", "x", kB, {{kW1, 0.5e-3}, {kW2, 0.5e-3}});
  llm.params.clear();
  p = plan_dispatch(task, bt, repo_library(), leader, {llm});
  EXPECT_FALSE(p.ok());
}

TEST(TunerCompose, ACompositeLeaderCountsAsItsVariants) {
  const Task task = repo_task("demo-cpu/softmax");
  const BoundTask bt = bound(task);
  const auto a = measured("c1", "rowop.cpu_softmax", kA, {{kW1, 1.0e-3}, {kW2, 2.0e-3}});
  const auto b = measured("c2", "rowop.cpu_softmax", kB, {{kW1, 1.5e-3}, {kW2, 1.2e-3}});
  const DispatchPlan first = plan_dispatch(task, bt, repo_library(), a, {b});
  ASSERT_TRUE(first.ok());
  // The composite leads with what it measured; no other point beats it: nothing new.
  MeasuredKernel comp = measured("c4", "tuner.dispatch", {}, {{kW1, 1.0e-3}, {kW2, 1.2e-3}});
  comp.params = first.params;
  auto p = plan_dispatch(task, bt, repo_library(), comp, {a, b});
  EXPECT_FALSE(p.ok());
  EXPECT_NE(p.reason.find("points are the fastest on every shape"), std::string::npos) << p.reason;
  // A later point beats the composite on 512x4096: the new composite keeps c2's point for 2048x1024.
  const auto c = measured("c5", "rowop.cpu_softmax", kC, {{kW1, 0.7e-3}, {kW2, 3.0e-3}});
  p = plan_dispatch(task, bt, repo_library(), comp, {c, a, b});
  ASSERT_TRUE(p.ok()) << p.reason;
  EXPECT_EQ(p.params.at("variants"), "c5 c2");  // the composite's v1 (candidate c2) keeps its shape
  EXPECT_EQ(p.params.at("route"), kW1 + "=v0 " + kW2 + "=v1");
  EXPECT_EQ(dispatch_variant_points(p.params)[0].at("ROW_BLOCK"), "32");
  EXPECT_EQ(p.params.at("v1"), point_key("rowop.cpu_softmax", kB));
}

TEST(TunerCompose, MixedFamiliesAreRefused) {
  const Task task = repo_task("demo-cpu/softmax");
  const BoundTask bt = bound(task);
  try {
    render_composite(task, bt,
                     {{&repo_template("rowop.cpu_softmax"), kA, "c1"},
                      {&repo_template("gemm.cpu_blocked"), repo_template("gemm.cpu_blocked").default_point(), "c2"}},
                     {{{kW1}, {{"B", 512}, {"D", 4096}}, 0}, {{kW2}, {{"B", 2048}, {"D", 1024}}, 1}});
    ADD_FAILURE() << "a gemm point was composed into a rowop task";
  } catch (const ComposeError& e) {
    EXPECT_NE(std::string(e.what()).find("variant v1 (gemm.cpu_blocked: family gemm, cpu) does not serve the task's "
                                         "binding demo-cpu/softmax (family rowop"),
              std::string::npos)
        << e.what();
  }
  // In planning, a backup of another family is skipped: it never becomes a variant.
  const auto leader = measured("c1", "rowop.cpu_softmax", kA, {{kW1, 1.0e-3}, {kW2, 2.0e-3}});
  const auto gemm = measured("c2", "gemm.cpu_blocked", repo_template("gemm.cpu_blocked").default_point(),
                             {{kW1, 0.1e-3}, {kW2, 0.1e-3}});
  const auto p = plan_dispatch(task, bt, repo_library(), leader, {gemm});
  EXPECT_FALSE(p.ok());
  EXPECT_EQ(p.variants.size(), 0u);
}

TEST(TunerCompose, PointKeysRoundTrip) {
  const auto k = point_key("rowop.cpu_softmax", kA);
  auto p = parse_point_key(k);
  EXPECT_EQ(p.at("template"), "rowop.cpu_softmax");
  p.erase("template");
  EXPECT_EQ(p, kA);
  EXPECT_THROW(parse_point_key("rowop.cpu_softmax|LANES"), std::runtime_error);
  EXPECT_THROW(parse_point_key("|LANES=4"), std::runtime_error);
}

// What cannot live in a namespace is refused with the reason; macros a variant defines are #undef'd after it.
TEST(TunerCompose, GlobalScopeConstructsAreHandledOrRefused) {
  const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-compose-test");
  auto lib_with = [&](const std::string& body) {
    fs::create_directories(d / "rowop");
    fs::create_directories(d / "bindings");
    std::ofstream(d / "rowop" / "toy.cpp.in") << "{{PROLOGUE}}\n#include <algorithm>\n"
                                              << body
                                              << "\nnamespace {\nvoid khive_run(const khive_rowargs& a, int64_t rows, "
                                                 "int64_t cols) { (void)a; (void)rows; (void)cols; }\n}\n{{ENTRY}}\n";
    std::ofstream(d / "rowop" / "toy.json")
        << R"({"name": "rowop.toy", "family": "rowop", "backend": "cpu", "source": "toy.cpp.in", "dtypes": ["float32"],
      "params": {"X": {"values": [1, 2]}}, "strategies": {"rowop.toy": {"description": "x", "params": ["X"]}}})";
    std::ofstream(d / "bindings" / "demo-cpu.json")
        << R"({"suite": "demo-cpu", "tasks": {"softmax": {"family": "rowop", "op": "softmax", "x": "x", "y": "y"}}})";
    return load_library(d);
  };
  const Task task = repo_task("demo-cpu/softmax");
  const std::vector<Route> routes{{{kW1}, {{"B", 512}, {"D", 4096}}, 0}, {{kW2}, {{"B", 2048}, {"D", 1024}}, 1}};
  auto compose = [&](const Library& lib) {
    const BoundTask bt = bind_task(task, Backend::cpu, *lib.binding_for(task));
    const Template& t = *lib.find_template("rowop.toy");
    return render_composite(task, bt, {{&t, {{"X", "1"}}, ""}, {&t, {{"X", "2"}}, ""}}, routes);
  };
  auto refusal = [&](const std::string& body) -> std::string {
    try {
      compose(lib_with(body));
    } catch (const ComposeError& e) {
      return e.what();
    }
    return "(composed)";
  };
  EXPECT_NE(refusal("extern \"C\" int khive_toy_{{X}}() { return 0; }").find("extern \"C\""), std::string::npos);
  EXPECT_NE(refusal("#if 1\n#include <vector>\n#endif").find("an #include inside #if, line"), std::string::npos);
  EXPECT_NE(refusal("namespace std {\n}").find("a library namespace reopened"), std::string::npos);
  EXPECT_NE(refusal("#pragma once").find("#pragma once"), std::string::npos);
  // A macro of the variant: #undef'd after each namespace; the includes are hoisted, once.
  const std::string src = compose(lib_with("#define KHIVE_TOY_X {{X}}\nconstexpr int kX = KHIVE_TOY_X;"));
  std::size_t undefs = 0;
  for (auto at = src.find("#undef KHIVE_TOY_X"); at != std::string::npos; at = src.find("#undef KHIVE_TOY_X", at + 1))
    ++undefs;
  EXPECT_EQ(undefs, 2u);
  const auto inc = src.find("#include <algorithm>");
  ASSERT_NE(inc, std::string::npos);
  EXPECT_EQ(src.find("#include <algorithm>", inc + 1), std::string::npos);
  EXPECT_LT(inc, src.find("namespace khive_v0 {"));
  EXPECT_NE(src.find("khive_dispatch::run(khive_dispatch::pick(B, D), "), std::string::npos) << src;

  // A guarded configuration block before a variant's #include is read with the headers: hoisted above them, once.
  const std::string guard = "#ifndef KHIVE_TOY_CFG\n#define KHIVE_TOY_CFG 1\n#endif";
  const std::string cfg = compose(lib_with(guard + "\n#include <vector>\nconstexpr int kX = {{X}} + KHIVE_TOY_CFG;"));
  const auto g = cfg.find(guard);
  ASSERT_NE(g, std::string::npos) << cfg;
  EXPECT_EQ(cfg.find(guard, g + 1), std::string::npos) << "once";
  EXPECT_LT(g, cfg.find("#include <vector>"));
  EXPECT_LT(cfg.find("#include <vector>"), cfg.find("namespace khive_v0 {"));
  EXPECT_EQ(cfg.find("#undef KHIVE_TOY_CFG"), std::string::npos) << "hoisted, not the variant's own";
  // Two variants that configure one macro differently cannot share the headers' one reading.
  const std::string clash = refusal("#ifndef KHIVE_TOY_CFG\n#define KHIVE_TOY_CFG {{X}}\n#endif\n#include <vector>");
  EXPECT_NE(clash.find("variant v1 (rowop.toy) configures KHIVE_TOY_CFG before its headers differently"),
            std::string::npos)
      << clash;
  // After the last #include, or with code inside, a guarded block is the variant's own: it stays in its namespace.
  const std::string late =
      compose(lib_with("#include <vector>\n#ifndef KHIVE_TOY_LATE\n#define KHIVE_TOY_LATE {{X}}\n#endif"));
  EXPECT_GT(late.find("#define KHIVE_TOY_LATE 1"), late.find("namespace khive_v0 {"));
  EXPECT_NE(late.find("#undef KHIVE_TOY_LATE"), std::string::npos);
  const std::string code = compose(lib_with("#if 1\nconstexpr int kY = {{X}};\n#endif\n#include <vector>"));
  EXPECT_GT(code.find("constexpr int kY = 2;"), code.find("namespace khive_v1 {"));
}

// Two rowop.cpu_softmax points composed for demo-cpu/softmax: the real builder compiles the composite, and a harness
// (the builder's unit plus a main) checks the dispatcher's choice per shape and the softmax it computes.
TEST(TunerCompose, CpuCompositeBuildsRoutesAndComputesSoftmax) {
  const Task task = repo_task("demo-cpu/softmax");
  const BoundTask bt = bound(task);
  const Template& t = repo_template("rowop.cpu_softmax");
  const std::vector<Route> routes{{{kW1}, {{"B", 512}, {"D", 4096}}, 1}, {{kW2}, {{"B", 2048}, {"D", 1024}}, 0}};
  const std::string src = render_composite(task, bt, {{&t, kA, "c1"}, {&t, kB, "c2"}}, routes);
  const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-compose-build");
  const fs::path file = d / "composite.cpp";
  std::ofstream(file) << src;

  BuildOptions bo;
  bo.backend = Backend::cpu;
  bo.use_cache = false;
  const BuildResult r = build_candidate(task, file, bo);
  ASSERT_TRUE(r.ok) << r.summary() << "\n" << r.log;
  EXPECT_EQ(r.warning_count(), 0u) << r.log;

  // The harness: which variant each shape runs, and the composite's output against a double-precision softmax.
  std::string h = generate_unit(task, Backend::cpu, file);
  h += R"(
#include <cstdio>
#include <vector>
int main() {
  const long long shapes[][2] = {{512, 4096}, {2048, 1024}, {17, 1000}, {1, 1}, {64, 4097}, {100000, 900}, {3, 5}};
  for (auto& s : shapes) std::printf("pick %lld %lld %d\n", s[0], s[1], khive_dispatch::pick(s[0], s[1]));
  for (auto& s : shapes) {
    if (s[0] * s[1] > 4000000) continue;
    std::vector<float> x(s[0] * s[1]), y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = float((i * 7919) % 1000) / 100.0f;
    khive_launch(x.data(), y.data(), s[0], s[1]);
    double worst = 0;
    for (long long r = 0; r < s[0]; ++r) {
      double m = -1e300, sum = 0;
      for (long long j = 0; j < s[1]; ++j) m = std::max(m, double(x[r * s[1] + j]));
      for (long long j = 0; j < s[1]; ++j) sum += std::exp(double(x[r * s[1] + j]) - m);
      for (long long j = 0; j < s[1]; ++j) {
        const double ref = std::exp(double(x[r * s[1] + j]) - m) / sum;
        worst = std::max(worst, std::fabs(y[r * s[1] + j] - ref) / (ref + 1e-30));
      }
    }
    std::printf("err %lld %lld %.3g\n", s[0], s[1], worst);
  }
}
)";
  std::ofstream(d / "harness.cpp") << h;
  run_text({"g++", "-std=c++20", "-O1", "-fopenmp", "harness.cpp", "-o", "harness"}, d);
  const std::string out = run_text({(d / "harness").string()}, d);
  // Exact for the measured shapes; others by log distance: 17x1000 and 3x5 are nearer 512x4096 than 2048x1024 in
  // (log B, log D)... computed here independently.
  auto expect_pick = [&](long long b, long long dd) {
    auto dist = [&](double B, double D) {
      return std::pow(std::log(double(b)) - std::log(B), 2) + std::pow(std::log(double(dd)) - std::log(D), 2);
    };
    return dist(512, 4096) <= dist(2048, 1024) ? 1 : 0;
  };
  for (auto [b, dd] : std::vector<std::pair<long long, long long>>{
           {512, 4096}, {2048, 1024}, {17, 1000}, {1, 1}, {64, 4097}, {100000, 900}, {3, 5}})
    EXPECT_NE(out.find(fmt::format("pick {} {} {}\n", b, dd, expect_pick(b, dd))), std::string::npos)
        << b << "x" << dd << "\n"
        << out;
  EXPECT_NE(out.find("pick 512 4096 1\n"), std::string::npos);
  EXPECT_NE(out.find("pick 2048 1024 0\n"), std::string::npos);
  std::regex err(R"(err (\d+) (\d+) ([0-9.e+-]+))");
  int checked = 0;
  for (std::sregex_iterator it(out.begin(), out.end(), err), end; it != end; ++it, ++checked)
    EXPECT_LT(std::stod((*it)[3]), 1e-4) << (*it)[0];
  EXPECT_EQ(checked, 6);
}

// The CUDA templates: includes (CUTLASS's too) hoisted above the namespaces, kernels inside them; nvcc proof:
// khive-tune compose (docs/tuner.md).
TEST(TunerCompose, CudaCompositesHoistIncludesAboveTheVariants) {
  for (const auto& [task_name, tname] : std::vector<std::pair<std::string, std::string>>{
           {"sol/softmax", "rowop.cuda_softmax"}, {"sol/gemm_bf16", "gemm.cuda_sm90"}}) {
    const Task task = repo_task(task_name);
    const BoundTask bt = bound(task, Backend::cuda);
    const Template& t = repo_template(tname);
    std::vector<Point> pts;
    ASSERT_TRUE(check_point(t, bt, t.default_point()).ok) << tname;
    pts.push_back(t.default_point());
    std::vector<std::string> all;
    for (const auto& prm : t.params) all.push_back(prm.name);
    for (const Point& p : subspace_order(t, t.default_point(), all, 1, 200))
      if (check_point(t, bt, p).ok && pts.size() < 2) pts.push_back(p);
    ASSERT_EQ(pts.size(), 2u) << tname;
    std::vector<Route> routes;
    int n = 0;
    for (std::size_t w = 0; w < task.workloads.size() && routes.size() < 2; ++w)
      if (bt.workload_perf[w]) routes.push_back({{task.workloads[w].uuid}, task.workloads[w].axes, n++});
    const std::string src = render_composite(task, bt, {{&t, pts[0], ""}, {&t, pts[1], ""}}, routes);
    const auto v0 = src.find("namespace khive_v0 {"), v1 = src.find("namespace khive_v1 {"),
               disp = src.find("namespace khive_dispatch {");
    ASSERT_NE(v0, std::string::npos);
    ASSERT_NE(v1, std::string::npos);
    EXPECT_LT(v0, v1);
    EXPECT_LT(v1, disp);
    for (auto at = src.find("#include"); at != std::string::npos; at = src.find("#include", at + 1)) {
      EXPECT_LT(at, v0) << tname;
    }
    EXPECT_NE(src.find("khive_v1::khive_run("), std::string::npos);
    EXPECT_EQ(src.find("extern \"C\""), src.rfind("extern \"C\"")) << "one khive_launch";
    if (tname == "gemm.cuda_sm90") {
      EXPECT_LT(src.find("#include \"cutlass/cutlass.h\""), v0);
    }
  }
  // attention.cuda_sm90 with 176-key tiles needs CuTe's extended wgmma shapes: the switch that enables them must
  // come before CuTe's headers, as in the point rendered alone (it did not: 0.71x of SDPA, 2026-12-07).
  const Task task = repo_task("sol/attention");
  const BoundTask bt = bound(task, Backend::cuda);
  const Template& t = repo_template("attention.cuda_sm90");
  Point n176 = t.default_point(), persistent = t.default_point();
  n176["BLOCK_N"] = "176";
  n176["OVERLAP"] = "1";
  persistent["SCHEDULE"] = "persistent";
  ASSERT_TRUE(check_point(t, bt, n176).ok);
  ASSERT_TRUE(check_point(t, bt, persistent).ok);
  std::vector<Route> routes;
  for (std::size_t w = 0; w < task.workloads.size() && routes.size() < 2; ++w)
    if (bt.workload_perf[w]) routes.push_back({{task.workloads[w].uuid}, task.workloads[w].axes, int(routes.size())});
  const std::string src = render_composite(task, bt, {{&t, n176, ""}, {&t, persistent, ""}}, routes);
  const auto sw = src.find("#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED");
  ASSERT_NE(sw, std::string::npos);
  EXPECT_LT(sw, src.find("#include \"cute/tensor.hpp\"")) << src.substr(0, 3000);
  EXPECT_EQ(src.find("#undef CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED"), std::string::npos);
}

// The agent: tuner.dispatch is offered with two or more timed shapes; it proposes a composite once and again when
// the measurements change; an earlier run's composite warm-starts as its variants.
TEST(TunerCompose, AgentProposesEachCompositeOnce) {
  const Task task = repo_task("demo-cpu/softmax");
  TunerOptions o;
  o.memory = std::make_shared<TunerMemory>();
  auto agent = make_tuner_agent(o);
  const auto strategies = agent->strategies(task, Backend::cpu);
  ASSERT_TRUE(
      std::any_of(strategies.begin(), strategies.end(), [](const Strategy& s) { return s.name == "tuner.dispatch"; }));
  // One timed shape: nothing to dispatch on, no strategy.
  const Task one = edited_task(
      "demo-cpu/softmax", [](nlohmann::ordered_json&) {},
      [](std::string& w) {
        const auto at = w.find("\"perf\"");
        w.replace(at, 6, "\"correctness\"");
      });
  for (const auto& s : agent->strategies(one, Backend::cpu)) EXPECT_NE(s.name, "tuner.dispatch");
  AgentContext ctx;
  ctx.task = &task;
  ctx.strategy = {"tuner.dispatch", ""};
  ctx.leader = measured("c1", "rowop.cpu_softmax", kA, {{kW1, 1.0e-3}, {kW2, 2.0e-3}});
  EXPECT_FALSE(agent->propose(ctx)) << "no backups: nothing to compose";
  ctx.backups = {measured("c2", "rowop.cpu_softmax", kB, {{kW1, 1.5e-3}, {kW2, 1.2e-3}})};
  auto p = agent->propose(ctx);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->params.at("template"), "tuner.dispatch");
  EXPECT_EQ(p->parent, "c1");
  EXPECT_EQ(p->ext, "cpp");
  EXPECT_NE(p->source.find("namespace khive_v1 {"), std::string::npos);
  EXPECT_EQ(p->label, "dispatch-c1-c2");
  EXPECT_FALSE(agent->propose(ctx)) << "the same composite twice";
  // Same points re-measured under other ids: the same composite.
  ctx.backups[0].id = "c9";
  EXPECT_FALSE(agent->propose(ctx));
  // A new point is fastest on 2048x1024: a new composite.
  ctx.backups.push_back(measured("c3", "rowop.cpu_softmax", kC, {{kW1, 3.0e-3}, {kW2, 0.6e-3}}));
  p = agent->propose(ctx);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->params.at("variants"), "c1 c3");
  Outcome out;
  out.candidate = "c4";
  out.standing = Standing::leader;
  out.delta_vs_leader = 0.2;
  out.time_s = 1e-3;
  const auto e = agent->observe(ctx, *p, out);
  ASSERT_TRUE(e);
  EXPECT_NE(e->text.find("dispatch over 2 points (candidates c1 c3): new leader (own run 1 ms); +20.0% vs the leader"),
            std::string::npos)
      << e->text;
  out.comparison =
      "A/B vs c1: +20.0% overall; faster beyond the noise on 2 of 2 workload(s), slower on none";  // the hive's words
  const auto e2 = agent->observe(ctx, *p, out);
  ASSERT_TRUE(e2);
  EXPECT_NE(e2->text.find("; A/B vs c1: +20.0% overall; faster beyond the noise on 2 of 2"), std::string::npos)
      << e2->text;

  // Warm start from a run whose leader was a composite: its variants' points come first.
  TunerOptions w;
  w.memory = std::make_shared<TunerMemory>();
  w.warm_start = {p->params};
  auto warm = make_tuner_agent(w);
  AgentContext c2;
  c2.task = &task;
  c2.strategy = strategies.front();
  auto first = warm->propose(c2), second = warm->propose(c2);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(point_key(first->params.at("template"), first->params), p->params.at("v0"));
  EXPECT_EQ(point_key(second->params.at("template"), second->params), p->params.at("v1"));
}

// A composite the recorded medians promise to be 5% or more faster (weighted) is proposed by a tuner agent under any
// strategy, once; a smaller promise waits for an agent that holds tuner.dispatch.
TEST(TunerCompose, AClearGainIsProposedUnderAnyStrategyOnce) {
  const Task task = repo_task("demo-cpu/softmax");
  TunerOptions o;
  o.memory = std::make_shared<TunerMemory>();
  auto agent = make_tuner_agent(o);
  AgentContext ctx;
  ctx.task = &task;
  ctx.strategy = agent->strategies(task, Backend::cpu).front();
  ASSERT_NE(ctx.strategy.name, "tuner.dispatch");
  ctx.leader = measured("c1", "rowop.cpu_softmax", kA, {{kW1, 1.0e-3}, {kW2, 2.0e-3}});
  // 2048x1024 4% faster on c2: a plan (> 3% on a shape) but about 2% on the weighted time: the strategy's own search.
  ctx.backups = {measured("c2", "rowop.cpu_softmax", kB, {{kW1, 1.5e-3}, {kW2, 1.92e-3}})};
  auto p = agent->propose(ctx);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->params.at("template"), "rowop.cpu_softmax") << p->note;
  // 2048x1024 40% faster on c3: about 23% on the weighted time: the composite comes first, under this strategy.
  ctx.backups.push_back(measured("c3", "rowop.cpu_softmax", kC, {{kW1, 3.0e-3}, {kW2, 1.2e-3}}));
  p = agent->propose(ctx);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->params.at("template"), "tuner.dispatch");
  EXPECT_EQ(p->params.at("variants"), "c1 c3");
  EXPECT_NE(p->note.find("proposed under " + ctx.strategy.name), std::string::npos) << p->note;
  p = agent->propose(ctx);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->params.at("template"), "rowop.cpu_softmax") << "the same composite is not proposed twice";
}
