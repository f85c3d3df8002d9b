// The tuner: library loading and its errors, bindings, validity rules, rendering, visiting order, and the
// agent's search replayed against a recorded table of params -> time (no build, no GPU).
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "khive/support/files.hpp"
#include "khive/tuner/bind.hpp"
#include "khive/tuner/library.hpp"
#include "khive/tuner/space.hpp"
#include "khive/tuner/tuner.hpp"

namespace fs = std::filesystem;
using namespace khive;
using namespace khive::tuner;

namespace {

const fs::path kRepo = KHIVE_SOURCE_DIR;

void write(const fs::path& p, const std::string& s) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << s;
}

// A small library: one elementwise template with X, Y in 1..8, a rule that excludes X + Y == 9, and a binding
// for demo-cpu/vector_add.
fs::path toy_library(const std::string& rules = R"([{"require": "X + Y != 9", "message": "X {X} + Y {Y} = 9"}])") {
  const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-tuner-test");
  write(d / "elementwise" / "toy.cpp.in",
        "{{PROLOGUE}}\n// X={{X}} Y={{Y}} MODE={{MODE}} fast={{MODE_fast}}\nvoid khive_run(const khive_ins&, khive_t*, "
        "int64_t, const "
        "khive_scalars&) {}\n{{ENTRY}}\n");
  write(d / "elementwise" / "toy.json",
        R"({"name": "elementwise.toy", "family": "elementwise", "backend": "cpu", "source": "toy.cpp.in",
    "dtypes": ["float32"],
    "params": {"X": {"range": [1, 8], "default": 1}, "Y": {"range": [1, 8], "default": 1}, "MODE": {"values": ["slow", "fast"]}},
    "derived": {"XY": "X * Y"},
    "rules": )" +
            rules + R"(,
    "strategies": {"elementwise.xy": {"description": "X and Y", "params": ["X", "Y"]},
                   "elementwise.mode": {"description": "mode", "params": ["MODE"]}}})");
  write(
      d / "bindings" / "demo.json",
      R"({"suite": "demo-cpu", "tasks": {"vector_add": {"family": "elementwise", "inputs": ["a", "b"], "output": "c", "op": "a + b"}}})");
  return d;
}

Task vector_add() { return load_task(kRepo / "tasks/demo-cpu/vector_add"); }

}  // namespace

TEST(TunerLibrary, RepositoryLibraryLoadsAndBindsTheDemoTasks) {
  const Library lib = load_library(kRepo / "kernels");
  EXPECT_NE(lib.find_template("gemm.cuda_sm90"), nullptr);
  EXPECT_NE(lib.find_template("elementwise.cpu"), nullptr);
  for (const char* t : {"vector_add", "gelu", "softmax", "gemm"}) {
    const Task task = load_task(kRepo / "tasks/demo-cpu" / t);
    const Binding* b = lib.binding_for(task);
    ASSERT_NE(b, nullptr) << t;
    for (Backend be : {Backend::cpu, Backend::cuda}) {
      const BoundTask bt = bind_task(task, be, *b);
      int applicable = 0;
      for (const auto& tpl : lib.templates)
        if (template_applies(tpl, bt)) {
          ++applicable;
          // Rendering the start point of every applicable template leaves no placeholder behind.
          const std::string src = render(tpl, bt, tpl.default_point());
          EXPECT_EQ(src.find("{{"), std::string::npos) << tpl.name;
          EXPECT_NE(src.find("khive_launch"), std::string::npos);
        }
      EXPECT_GE(applicable, 1) << t << " " << backend_name(be);
    }
  }
}

TEST(TunerLibrary, ErrorsNameFileFieldAndExpectation) {
  const fs::path d = toy_library();
  write(d / "elementwise" / "toy.json",
        R"({"name": "elementwise.toy", "family": "elementwise", "backend": "cpu", "source": "toy.cpp.in",
    "dtypes": ["float32"], "params": {"X": {"values": [1, 2], "default": 3}}, "strategies": {"elementwise.x": {"description": "x", "params": ["X"]}}})");
  try {
    load_library(d);
    FAIL() << "expected an error";
  } catch (const TaskFormatError& e) {
    EXPECT_EQ(e.field, "params.X.default");
    EXPECT_NE(std::string(e.what()).find("toy.json"), std::string::npos);
    EXPECT_NE(e.expected.find("one of the parameter's values"), std::string::npos);
  }
  // A rule naming something that is neither a parameter nor a task variable.
  const fs::path d2 = toy_library(R"([{"require": "Z > 1", "message": "m"}])");
  try {
    load_library(d2);
    FAIL() << "expected an error";
  } catch (const TaskFormatError& e) {
    EXPECT_EQ(e.field, "rules[0].require");
    EXPECT_NE(e.got.find("\"Z\""), std::string::npos);
  }
  // A strategy outside its family's namespace.
  write(d / "elementwise" / "toy.json",
        R"({"name": "elementwise.toy", "family": "elementwise", "backend": "cpu", "source": "toy.cpp.in",
    "dtypes": ["float32"], "params": {"X": {"values": [1, 2]}}, "strategies": {"gemm.x": {"description": "x", "params": ["X"]}}})");
  EXPECT_THROW(load_library(d), TaskFormatError);
}

TEST(TunerBinding, BadBindingIsAnErrorNamingTheField) {
  const fs::path d = toy_library();
  write(
      d / "bindings" / "demo.json",
      R"({"suite": "demo-cpu", "tasks": {"vector_add": {"family": "elementwise", "inputs": ["a"], "output": "c", "op": "a"}}})");
  const Library lib = load_library(d);
  try {
    bind_task(vector_add(), Backend::cpu, *lib.binding_for(vector_add()));
    FAIL() << "expected an error";
  } catch (const TaskFormatError& e) {
    EXPECT_EQ(e.field, "tasks.vector_add.inputs");
    EXPECT_NE(e.got.find("\"b\" left out"), std::string::npos);
  }
}

TEST(TunerSpace, RulesFlagsAndRendering) {
  const Library lib = load_library(toy_library());
  const Template& t = *lib.find_template("elementwise.toy");
  const BoundTask bt = bind_task(vector_add(), Backend::cpu, *lib.binding_for(vector_add()));
  EXPECT_TRUE(check_point(t, bt, {{"X", "4"}, {"Y", "4"}, {"MODE", "slow"}}).ok);
  const Validity v = check_point(t, bt, {{"X", "4"}, {"Y", "5"}, {"MODE", "slow"}});
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.message.find("X 4 + Y 5 = 9"), std::string::npos) << v.message;
  EXPECT_FALSE(check_point(t, bt, {{"X", "9"}, {"Y", "1"}, {"MODE", "slow"}}).ok);  // not one of its values
  EXPECT_FALSE(check_point(t, bt, {{"X", "1"}, {"Y", "1"}}).ok);                    // MODE missing
  const std::string src = render(t, bt, {{"X", "3"}, {"Y", "7"}, {"MODE", "fast"}});
  EXPECT_NE(src.find("// X=3 Y=7 MODE=fast fast=1"), std::string::npos);
  EXPECT_NE(src.find(launch_signature(vector_add(), Backend::cpu)), std::string::npos);
  EXPECT_NE(src.find("return a + b;"), std::string::npos);
  Template broken = t;
  broken.source = "{{NOPE}}";
  EXPECT_THROW(render(broken, bt, t.default_point()), std::runtime_error);
}

TEST(TunerSpace, SubspaceOrderIsNearestFirstAndDeterministic) {
  const Library lib = load_library(toy_library());
  const Template& t = *lib.find_template("elementwise.toy");
  const Point base{{"X", "4"}, {"Y", "4"}, {"MODE", "slow"}};
  const auto a = subspace_order(t, base, {"X", "Y"}, 7);
  EXPECT_EQ(a.size(), 63u);  // 8 x 8 minus the base
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_EQ(describe_change(base, a[i]).find(','), std::string::npos) << "one parameter, one step first";
  for (const auto& p : a) EXPECT_EQ(p.at("MODE"), "slow");
  EXPECT_EQ(a, subspace_order(t, base, {"X", "Y"}, 7));
  EXPECT_NE(a, subspace_order(t, base, {"X", "Y"}, 8));  // another seed breaks ties differently
  const std::string c = describe_change(base, a[0]);     // "X 4->3"
  EXPECT_TRUE(c == "X 4->3" || c == "X 4->5" || c == "Y 4->3" || c == "Y 4->5") << c;
}

// Replay: a recorded table of times (Kernel Tuner's simulation mode). The hive's rules are mimicked: the
// fastest so far is the leader. The tuner must never repeat a point, never propose an invalid one, and reach
// the table's optimum within a small budget; equal seeds give equal runs.
std::vector<std::string> replay(uint64_t seed, int budget, double* best_time) {
  const fs::path lib = toy_library();
  TunerOptions o;
  o.kernels_dir = lib;
  auto agent = make_tuner_agent(o);
  const Task task = vector_add();
  auto time_of = [](const Point& p) {
    const double x = std::stod(p.at("X")), y = std::stod(p.at("Y"));
    return 1.0 + (x - 6) * (x - 6) + 0.5 * (y - 2) * (y - 2) + (p.at("MODE") == "fast" ? 0.0 : 0.25);
  };
  // The template's two strategies (the search replayed here), then tuner.dispatch (vector_add has 3 timed shapes).
  auto strategies = agent->strategies(task, Backend::cpu);
  EXPECT_EQ(strategies.size(), 3u);
  EXPECT_EQ(strategies.back().name, "tuner.dispatch");
  if (!strategies.empty() && strategies.back().name == "tuner.dispatch") strategies.pop_back();
  std::optional<MeasuredKernel> leader;
  std::vector<std::string> seen;
  std::set<std::string> unique;
  int n = 0, s = 0, idle = 0;
  while (n < budget && idle < 2) {
    AgentContext ctx;
    ctx.task = &task;
    ctx.strategy = strategies[s % strategies.size()];
    ctx.seed = seed;
    ctx.leader = leader;
    auto p = agent->propose(ctx);
    if (!p) {  // strategy exhausted: the hive would switch
      ++s;
      ++idle;
      continue;
    }
    idle = 0;
    ++n;
    Point pt = p->params;
    EXPECT_EQ(pt.at("template"), "elementwise.toy");
    pt.erase("template");
    EXPECT_NE(std::stoi(pt.at("X")) + std::stoi(pt.at("Y")), 9) << "an invalid point was proposed";
    EXPECT_TRUE(unique.insert(describe_point(pt)).second) << "proposed twice: " << describe_point(pt);
    seen.push_back(describe_point(pt));
    const double t = time_of(pt);
    Outcome out;
    out.candidate = "c" + std::to_string(n);
    out.time_s = t;
    out.delta_vs_leader = leader ? leader->time_s / t - 1 : 0;
    out.standing = !leader || t < leader->time_s * 0.995 ? Standing::leader : Standing::backup;
    auto entry = agent->observe(ctx, *p, out);
    EXPECT_TRUE(entry.has_value());
    if (entry) EXPECT_EQ(entry->kind, out.standing == Standing::leader ? "worked" : "insight");
    if (out.standing == Standing::leader) {
      MeasuredKernel k;
      k.id = out.candidate;
      k.params = p->params;
      k.time_s = t;
      leader = k;
    }
    if (n % 6 == 0) ++s;  // a plateau switch every few candidates, as the hive would do
  }
  *best_time = leader ? leader->time_s : 1e9;
  return seen;
}

TEST(TunerSearch, ReplayFindsTheOptimumWithoutRepeatsOrInvalidPoints) {
  double best = 0;
  const auto a = replay(42, 40, &best);
  EXPECT_DOUBLE_EQ(best, 1.0) << "the optimum X=6 Y=2 MODE=fast within 40 of 128 points";
  double best2 = 0;
  EXPECT_EQ(a, replay(42, 40, &best2));
  EXPECT_LE(a.size(), 40u);
}

TEST(TunerSearch, ExhaustsItsSubspacesAndStops) {
  // Every strategy runs dry around the final leader (X=6 Y=2 fast): its 8x8 X/Y plane less the 7 invalid
  // pairs is 57 points, plus what was visited on the way there; never the whole 128-point space.
  double best = 0;
  const auto all = replay(3, 1000, &best);
  EXPECT_DOUBLE_EQ(best, 1.0);
  EXPECT_GE(all.size(), 57u);
  EXPECT_LT(all.size(), 114u);
}

TEST(TunerSearch, ObserveReportsRejectionsWithTheirReason) {
  TunerOptions o;
  o.kernels_dir = toy_library();
  auto agent = make_tuner_agent(o);
  const Task task = vector_add();
  AgentContext ctx;
  ctx.task = &task;
  ctx.strategy = agent->strategies(task, Backend::cpu).front();
  auto p = agent->propose(ctx);
  ASSERT_TRUE(p);
  Outcome out;
  out.standing = Standing::rejected;
  out.check = Check::correctness;
  out.reason = "wrong_output";
  out.message = "3 of 7 elements off";
  auto e = agent->observe(ctx, *p, out);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, "failed");
  EXPECT_NE(e->text.find("rejected at correctness (wrong_output)"), std::string::npos) << e->text;
  out.standing = Standing::error;
  EXPECT_FALSE(agent->observe(ctx, *p, out).has_value());
}

// A tuner over the toy library, with ctx on `task` and its first strategy other than tuner.dispatch.
std::unique_ptr<Agent> toy_tuner_on_first_strategy(const Task& task, AgentContext& ctx) {
  TunerOptions o;
  o.kernels_dir = toy_library();
  auto agent = make_tuner_agent(o);
  ctx.task = &task;
  for (const auto& s : agent->strategies(task, Backend::cpu))
    if (s.name != "tuner.dispatch" && ctx.strategy.name.empty()) ctx.strategy = s;
  return agent;
}

// After a hive-wide plateau the hive restarts an agent from a backup (ctx.start): the tuner's next point is a
// neighbour of that backup's point, and the proposal names the backup as its parent, not the leader.
TEST(TunerSearch, ARestartFromABackupDerivesFromTheBackupNotTheLeader) {
  const Task task = vector_add();
  AgentContext ctx;
  auto agent = toy_tuner_on_first_strategy(task, ctx);
  auto kernel = [](const std::string& id, const std::string& x, const std::string& y, double t) {
    MeasuredKernel k;
    k.id = id;
    k.params = {{"template", "elementwise.toy"}, {"X", x}, {"Y", y}, {"MODE", "fast"}};
    k.time_s = t;
    return k;
  };
  ctx.leader = kernel("c0007", "6", "2", 1.0);
  const MeasuredKernel backup = kernel("c0003", "1", "7", 2.0);
  ctx.backups = {backup};
  ctx.start = backup;
  auto p = agent->propose(ctx);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->parent, "c0003") << p->note;
  // One step from the backup's point (X 1, Y 7), far from the leader's (X 6, Y 2).
  const int dx = std::abs(std::stoi(p->params.at("X")) - 1), dy = std::abs(std::stoi(p->params.at("Y")) - 7);
  EXPECT_LE(dx + dy, 2) << describe_point(p->params);

  ctx.start = ctx.leader;  // no restart: the leader's neighbourhood
  auto q = agent->propose(ctx);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->parent, "c0007") << q->note;
}

// peek (the hive's speculative builds): the next proposals in propose()'s own order, nothing marked tried, so the
// following proposals are exactly the peeked texts (the build cache then has them); a second peek says the same.
TEST(TunerSearch, PeekShowsTheNextProposalsWithoutTakingThem) {
  const Task task = vector_add();
  AgentContext ctx;
  auto agent = toy_tuner_on_first_strategy(task, ctx);
  MeasuredKernel leader;
  leader.id = "c0001";
  leader.params = {{"template", "elementwise.toy"}, {"X", "4"}, {"Y", "4"}, {"MODE", "fast"}};
  leader.time_s = 1.0;
  ctx.leader = leader;
  auto first = agent->propose(ctx);
  ASSERT_TRUE(first);
  const auto peeked = agent->peek(ctx, 3);
  ASSERT_EQ(peeked.size(), 3u);
  EXPECT_EQ(agent->peek(ctx, 3).size(), 3u);
  std::set<std::string> texts;
  for (const auto& q : peeked) {
    EXPECT_NE(q.source, first->source) << "the proposal under evaluation is not peeked again";
    EXPECT_TRUE(texts.insert(q.source).second) << "peeked twice: " << describe_point(q.params);
    EXPECT_NE(std::stoi(q.params.at("X")) + std::stoi(q.params.at("Y")), 9) << "an invalid point was peeked";
  }
  for (const auto& q : peeked) {
    auto next = agent->propose(ctx);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->source, q.source) << describe_point(next->params) << " vs " << describe_point(q.params);
    EXPECT_EQ(next->params, q.params);
  }
  EXPECT_TRUE(agent->peek(ctx, 0).empty());
}

// --warm-start: the given points come first, in order, whatever the strategy; a point of a template that does not
// apply, one the rules rule out (X + Y = 9) and one already proposed are skipped; then the search goes on as usual.
TEST(TunerSearch, WarmStartPointsComeFirstValidOnesOnlyOnce) {
  TunerOptions o;
  o.kernels_dir = toy_library();
  o.memory = std::make_shared<TunerMemory>();
  o.warm_start = {{{"template", "gemm.cpu_blocked"}, {"MC", "64"}},           // not this task's family
                  {{"template", "elementwise.toy"}, {"X", "4"}, {"Y", "5"}},  // X + Y = 9: ruled out
                  {{"template", "elementwise.toy"}, {"X", "6"}, {"Y", "2"}, {"MODE", "fast"}},
                  {{"template", "elementwise.toy"}, {"X", "6"}, {"Y", "2"}, {"MODE", "fast"}},  // the same again
                  {{"template", "elementwise.toy"}, {"X", "3"}, {"NOT_A_PARAM", "1"}}};         // unknown keys dropped
  auto a = make_tuner_agent(o), b = make_tuner_agent(o);  // two agents of one run share the memory
  const Task task = vector_add();
  AgentContext ctx;
  ctx.task = &task;
  for (const auto& s : a->strategies(task, Backend::cpu))
    if (s.name == "elementwise.mode") ctx.strategy = s;  // the warm points ignore it
  auto p1 = a->propose(ctx);
  ASSERT_TRUE(p1);
  EXPECT_EQ(p1->params.at("X"), "6");
  EXPECT_EQ(p1->params.at("Y"), "2");
  EXPECT_EQ(p1->params.at("MODE"), "fast");
  EXPECT_EQ(p1->note.rfind("warm start", 0), 0u) << p1->note;
  auto p2 = b->propose(ctx);  // the other agent: the next warm point, not the same one
  ASSERT_TRUE(p2);
  EXPECT_EQ(p2->params.at("X"), "3");
  EXPECT_EQ(p2->params.at("Y"), "1");  // missing: the default
  EXPECT_EQ(p2->params.count("NOT_A_PARAM"), 0u);
  auto p3 = a->propose(ctx);  // warm points spent: the strategy's own search
  ASSERT_TRUE(p3);
  EXPECT_EQ(p3->note.find("warm start"), std::string::npos) << p3->note;
}

// fast_path rules: checked on the perf workloads only (the point must take at least one); correctness shapes the
// fast path cannot take are listed as going through the generic path, and compile rules still hold everywhere.
TEST(TunerFastPath, Sm90GemmTakesAlignedPerfShapesAndSendsOddShapesToTheGenericPath) {
  const Library lib = load_library(kRepo / "kernels");
  const Template& t = *lib.find_template("gemm.cuda_sm90");
  ASSERT_FALSE(t.fast_path.empty());
  for (const char* name : {"gemm_bf16", "gemm_residual"}) {
    const Task task = load_task(kRepo / "tasks/sol" / name);
    const BoundTask bt = bind_task(task, Backend::cuda, *lib.binding_for(task));
    std::size_t perf = 0;
    for (const auto& w : task.workloads) perf += w.is_perf() && w.runs_on(Backend::cuda);
    const Validity v = check_point(t, bt, t.default_point());
    ASSERT_TRUE(v.ok) << name << ": " << v.message;
    EXPECT_EQ(v.perf_total, perf);
    EXPECT_EQ(v.perf_fast, perf);  // every perf shape of these tasks is 16-byte aligned
    ASSERT_FALSE(v.generic.empty());
    EXPECT_NE(v.generic.front().find("TMA needs 16-byte aligned rows: M=1 N=1 K=1"), std::string::npos)
        << v.generic.front();
    EXPECT_NE(fast_path_note(v).find("generic path"), std::string::npos);
    // A compile rule still rules a point out, whatever the shapes.
    Point big = t.default_point();
    big["STAGES"] = "7";
    big["TILE_K"] = "128";
    big["TILE_N"] = "256";
    const Validity vb = check_point(t, bt, big);
    EXPECT_FALSE(vb.ok);
    EXPECT_NE(vb.message.find("shared memory"), std::string::npos) << vb.message;
  }
}

TEST(TunerFastPath, PointTakingNoPerfWorkloadIsInvalidAndPartialOnesAreCounted) {
  const Library lib = load_library(kRepo / "kernels");
  const Template& t = *lib.find_template("rowop.cuda_softmax");
  // cutegen26 kb23: one perf shape with rows of 393216 floats: no register cache can hold that.
  const Task big = load_task(kRepo / "tasks/cutegen26/kb23_softmax");
  const BoundTask bb = bind_task(big, Backend::cuda, *lib.binding_for(big));
  const Validity v = check_point(t, bb, t.default_point());
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.message.find("the fast path takes none of the 1 perf workloads"), std::string::npos) << v.message;
  Point none = t.default_point();
  none["CACHE"] = "none";
  none["CHUNKS"] = "1";
  EXPECT_FALSE(check_point(t, bb, none).ok) << "DISPATCH=by_cols needs the register cache";
  none["DISPATCH"] = "fixed";
  EXPECT_TRUE(check_point(t, bb, none).ok);
  // sol/softmax: the default register cache (by_cols: up to 1024 x 4 x 4 = 16384 floats) takes the short rows,
  // not the vocab rows; fixed at 64 threads per row (1024 floats) it takes rows of 1024 but not of 4096.
  const Task sm = load_task(kRepo / "tasks/sol/softmax");
  const BoundTask bs = bind_task(sm, Backend::cuda, *lib.binding_for(sm));
  const Validity vs = check_point(t, bs, t.default_point());
  ASSERT_TRUE(vs.ok) << vs.message;
  EXPECT_GT(vs.perf_fast, 0u);
  EXPECT_LT(vs.perf_fast, vs.perf_total);
  bool vocab_generic = false, r16384 = false;
  for (const auto& g : vs.generic) {
    vocab_generic |=
        g.find("a row of 128256 does not fit") != std::string::npos && g.find(", perf)") != std::string::npos;
    r16384 |= g.find("R16384-C4096") != std::string::npos;
  }
  EXPECT_TRUE(vocab_generic);
  EXPECT_FALSE(r16384) << "rows of 4096 fit the default register cache";
  Point fixed = t.default_point();
  fixed["DISPATCH"] = "fixed";
  const Validity vf = check_point(t, bs, fixed);
  ASSERT_TRUE(vf.ok) << vf.message;
  EXPECT_LT(vf.perf_fast, vs.perf_fast);
  bool c4096 = false;
  for (const auto& g : vf.generic) c4096 |= g.find("a row of 4096 does not fit in 64 threads") != std::string::npos;
  EXPECT_TRUE(c4096);
}

TEST(TunerFastPath, RenderedKernelsCarryTheFastAndTheGenericPath) {
  const Library lib = load_library(kRepo / "kernels");
  const Task g = load_task(kRepo / "tasks/sol/gemm_bf16");
  const BoundTask bg = bind_task(g, Backend::cuda, *lib.binding_for(g));
  const Template& sm90 = *lib.find_template("gemm.cuda_sm90");
  const std::string gs = render(sm90, bg, sm90.default_point());
  for (const char* s : {"GemmUniversalAdapter", "khive_gemm_generic", "khive_fast_path_takes",
                        "if (!khive_fast_path_takes(g))", "khive_run_generic(g, stream)"})
    EXPECT_NE(gs.find(s), std::string::npos) << s;
  EXPECT_NE(gs.find("constexpr bool KHIVE_A_ROW = true, KHIVE_B_ROW = false, KHIVE_HAS_RESIDUAL = false, "
                    "KHIVE_HAS_BIAS = false;"),
            std::string::npos);
  for (const char* task : {"softmax", "rmsnorm", "add_rmsnorm"}) {
    const Task r = load_task(kRepo / "tasks/sol" / task);
    const BoundTask br = bind_task(r, Backend::cuda, *lib.binding_for(r));
    for (const auto& t : lib.templates) {
      if (!template_applies(t, br) || t.source_path.filename() != "cuda_rowop.cu.in")
        continue;  // the cluster template: its own test
      const std::string rs = render(t, br, t.default_point());
      for (const char* s : {"khive_rowk_generic<true><<<", "khive_rowk<kTpr, kRpb, kVectorOk><<<",
                            "cols <= reg_capacity", "khive_launch_by_cols<1024, kVectorOk>"})
        EXPECT_NE(rs.find(s), std::string::npos) << task << ": " << s;
    }
  }
}

// "// khive:include NAME" shares code between templates: the file next to the template is spliced in (nested
// includes too) before rendering, so its placeholders render like the template's own.
TEST(TunerLibrary, IncludesAreSplicedBeforeRendering) {
  const fs::path d = toy_library();
  write(d / "elementwise" / "toy.cpp.in",
        "{{PROLOGUE}}\n  // khive:include shared.cuh\nvoid khive_run(const khive_ins&, khive_t*, int64_t, const "
        "khive_scalars&) {}\n{{ENTRY}}\n");
  write(d / "elementwise" / "shared.cuh", "// shared X={{X}}\n// khive:include inner.cuh\n");
  write(d / "elementwise" / "inner.cuh", "constexpr int kInnerY = {{Y}};");
  const Library lib = load_library(d);
  const Template& t = *lib.find_template("elementwise.toy");
  EXPECT_EQ(t.source.find("khive:include"), std::string::npos) << t.source;
  const Task task = vector_add();
  const BoundTask bt = bind_task(task, Backend::cpu, *lib.binding_for(task));
  Point p = t.default_point();
  p["X"] = "3";
  p["Y"] = "5";
  const std::string r = render(t, bt, p);
  EXPECT_NE(r.find("// shared X=3\nconstexpr int kInnerY = 5;\nvoid khive_run"), std::string::npos) << r;
}

// "// khive:include common/NAME" takes the file from the library's common/ folder (code of every family); a
// common file's own includes resolve in common/ too.
TEST(TunerLibrary, CommonIncludesComeFromTheLibrarysCommonFolder) {
  const fs::path d = toy_library();
  fs::create_directories(d / "common");
  write(d / "elementwise" / "toy.cpp.in",
        "{{PROLOGUE}}\n// khive:include common/device.cuh\nvoid khive_run(const khive_ins&, khive_t*, int64_t, const "
        "khive_scalars&) {}\n{{ENTRY}}\n");
  write(d / "common" / "device.cuh",
        "// device X={{X}}\n// khive:include common/inner.cuh\n// khive:include more.cuh\n");
  write(d / "common" / "inner.cuh", "constexpr int kInner = 1;");
  write(d / "common" / "more.cuh", "constexpr int kMore = 2;");
  const Library lib = load_library(d);
  EXPECT_EQ(lib.find_template("common.device"), nullptr);  // common/ holds no templates
  const Template& t = *lib.find_template("elementwise.toy");
  const Task task = vector_add();
  const BoundTask bt = bind_task(task, Backend::cpu, *lib.binding_for(task));
  Point p = t.default_point();
  p["X"] = "3";
  const std::string r = render(t, bt, p);
  EXPECT_NE(r.find("// device X=3\nconstexpr int kInner = 1;\nconstexpr int kMore = 2;\nvoid khive_run"),
            std::string::npos)
      << r;
}

TEST(TunerLibrary, BadIncludeIsAnErrorNamingTheLine) {
  for (const auto& [name, expect] : std::vector<std::pair<std::string, std::string>>{
           {"missing.cuh", "\"missing.cuh\" (missing)"},
           {"../toy.json", "a file name in the template's directory"},
           {"self.cuh", "nested at most 4 deep"},
           {"common/missing.cuh", "an existing file in the library's common/ folder"},
           {"common/../x.cuh", "common/<file name>"},
           {"gemm/x.cuh", "common/<file name>"}}) {
    const fs::path d = toy_library();
    write(d / "elementwise" / "toy.cpp.in", "{{PROLOGUE}}\n\n// khive:include " + name + "\n{{ENTRY}}\n");
    write(d / "elementwise" / "self.cuh", "// khive:include self.cuh\n");
    try {
      load_library(d);
      ADD_FAILURE() << name << ": expected an error";
    } catch (const TaskFormatError& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
      EXPECT_NE(e.field.find("khive:include"), std::string::npos) << e.field;
    }
  }
}

// PREFETCH (the next row loaded while the current one is reduced) needs the register cache and room for a second
// copy of the row's chunks.
TEST(TunerFastPath, PrefetchNeedsTheRegisterCacheAndRegisters) {
  const Library lib = load_library(kRepo / "kernels");
  const Template& t = *lib.find_template("rowop.cuda_softmax");
  const Task sm = load_task(kRepo / "tasks/sol/softmax");
  const BoundTask bs = bind_task(sm, Backend::cuda, *lib.binding_for(sm));
  Point p = t.default_point();
  p["PREFETCH"] = "1";
  p["VEC"] = "8";
  p["CHUNKS"] = "4";
  EXPECT_TRUE(check_point(t, bs, p).ok) << check_point(t, bs, p).message;
  EXPECT_NE(render(t, bs, p).find("khive_row_blocks<kTpr, kRpb, kVectorOk>(smem)"), std::string::npos);
  p["CHUNKS"] = "8";
  const Validity big = check_point(t, bs, p);
  EXPECT_FALSE(big.ok);
  EXPECT_NE(big.message.find("PREFETCH doubles the row's registers: 8 x 8"), std::string::npos) << big.message;
  p["CHUNKS"] = "1";
  p["CACHE"] = "smem";
  p["DISPATCH"] = "fixed";
  const Validity smem = check_point(t, bs, p);
  EXPECT_FALSE(smem.ok);
  EXPECT_NE(smem.message.find("it needs the register cache"), std::string::npos) << smem.message;
}

TEST(TunerFastPath, BadFastPathEntryIsAnErrorNamingTheField) {
  const fs::path d = toy_library();
  write(d / "elementwise" / "toy.json",
        R"({"name": "elementwise.toy", "family": "elementwise", "backend": "cpu", "source": "toy.cpp.in",
    "dtypes": ["float32"], "params": {"X": {"values": [1, 2]}, "Y": {"values": [1]}, "MODE": {"values": ["slow"]}},
    "fast_path": [{"require": "COUNT >= X", "message": "ok"}, {"require": "NOPE > 1", "message": "m"}],
    "strategies": {"elementwise.x": {"description": "x", "params": ["X"]}}})");
  try {
    load_library(d);
    FAIL() << "expected an error";
  } catch (const TaskFormatError& e) {
    EXPECT_EQ(e.field, "fast_path[1].require");
  }
}
