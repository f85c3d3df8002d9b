// Chains (src/khive/tuner/chain.hpp, tests/tuner-fixtures/chain_conv_pool_tanh): stages bound one by one against
// their stage tasks, the intermediates' shapes (a convolution's output that no tensor of the task has, a pooled
// size that is a floor division), the refusals (each naming the stage's field), the chain templates the library makes,
// the binding inferred from a recognised chain (khive.op.stages), and the rendered CPU chain against a plain reference
// over several sizes; a chain whose intermediate is sized one column off must fail it.
#include <fmt/format.h>

#include <array>

#include "tuner_support.hpp"

#include "khive/compile/builder.hpp"
#include "khive/task/expr.hpp"
#include "khive/tuner/auto_bind.hpp"
#include "khive/tuner/bind/common.hpp"
#include "khive/tuner/chain.hpp"

namespace {

const fs::path kFixture = repo() / "tests/tuner-fixtures/chain_conv_pool_tanh";

json fixture_spec() { return json(repo_library().binding_for(load_task(kFixture))->spec); }

// The fixture's binding with stage i's field k set to v (null: removed).
Binding edited(const Task& t, std::size_t i, const std::string& k, const json& v) {
  json spec = fixture_spec();
  if (v.is_null())
    spec["stages"][i].erase(k);
  else
    spec["stages"][i][k] = v;
  return binding_with(t, spec);
}

}  // namespace

TEST(ChainBinding, TheFixtureBindsStageByStage) {
  const Task task = load_task(kFixture);
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(task, be, *repo_library().binding_for(task));
    EXPECT_EQ(bt.family, "chain");
    ASSERT_EQ(bt.stages.size(), 3u);
    EXPECT_EQ(bt.op, "conv>max_pool>map");
    EXPECT_EQ(bt.stages[0].family, "conv");
    EXPECT_EQ(bt.stages[1].family, "pool");
    EXPECT_EQ(bt.stages[2].family, "elementwise");
    const std::string& run = bt.placeholders.at("RUN");
    // the convolution's output sizes are no axis of the task: new axes computed from H and W
    EXPECT_NE(run.find("const int64_t khive_m1_2 = ((H + 0 - 1 * (int64_t(3) - 1) - 1) / 1 + 1);"), std::string::npos)
        << run;
    // the pool's output sizes are the task output's OH, OW ((H - 2) // 2, floor division as Python's)
    EXPECT_EQ(run.find("khive_m2_"), std::string::npos) << run;
    EXPECT_NE(run.find("khive_chain_buffer<1>"), std::string::npos) << run;
    EXPECT_NE(run.find("khive_s3::khive_stage(t2, y, N, H, W, khive_m1_2, khive_m1_3"), std::string::npos) << run;
    for (std::size_t i = 0; i < 3; ++i)
      EXPECT_EQ(bt.stages[i].placeholders.at("ENTRY").rfind("static void khive_stage(", 0), 0u) << i;
    for (std::size_t w = 0; w < task.workloads.size(); ++w) {
      const auto& ax = task.workloads[w].axes;
      const auto& v = bt.workload_vars[w];
      EXPECT_EQ(v.at("S1_C_OUT"), 8);
      EXPECT_EQ(v.at("S1_OUT_SPATIAL"), (ax.at("H") - 2) * (ax.at("W") - 2));
      EXPECT_EQ(v.at("S2_PLANES"), ax.at("N") * 8);
      EXPECT_EQ(v.at("S2_OUT_SPATIAL"), (ax.at("H") - 2) / 2 * ((ax.at("W") - 2) / 2));
      EXPECT_EQ(v.at("S3_COUNT"), ax.at("N") * 8 * ((ax.at("H") - 2) / 2) * ((ax.at("W") - 2) / 2));
    }
  }
}

TEST(ChainBinding, EachRefusalNamesTheStageField) {
  const Task task = load_task(kFixture);
  const std::string k = "tasks.chain_conv_pool_tanh.";
  auto msg = [&](const Binding& b) { return std::string(bind_error(task, b).what()); };
  json one = fixture_spec();
  one["stages"].erase(1);
  one["stages"].erase(1);
  EXPECT_EQ(has_all(msg(binding_with(task, one)), {(k + "stages").c_str(), "2 to 32 stage bindings"}), "");
  json many = fixture_spec();  // more than Task::kMaxStages
  while (many["stages"].size() < Task::kMaxStages + 1) many["stages"].push_back(many["stages"][2]);
  EXPECT_EQ(has_all(msg(binding_with(task, many)), {(k + "stages").c_str(), "2 to 32 stage bindings"}), "");
  EXPECT_EQ(has_all(msg(edited(task, 1, "x", "t9")),
                    {(k + "stages[1]").c_str(), "an intermediate an earlier stage wrote", "\"t9\""}),
            "");
  // (a stage that reads no intermediate: here its own family refuses x's shape first; an intermediate no later stage
  // reads is refused in MultiOutputChain.RefusalsNameTheField)
  EXPECT_EQ(has_all(msg(edited(task, 2, "inputs", json::array({"x"}))), {(k + "stages[2].inputs[0]").c_str()}), "");
  EXPECT_EQ(
      has_all(msg(edited(task, 2, "output", "t3")), {(k + "stages[2].output").c_str(), "the task's output \"y\""}), "");
  EXPECT_EQ(
      has_all(msg(edited(task, 0, "y", "bias")), {(k + "stages[0].y").c_str(), "a new name for the intermediate"}), "");
  EXPECT_EQ(has_all(msg(edited(task, 1, "family", "scan")), {(k + "stages[1]").c_str(), "conv, gemm, pool"}), "");
  EXPECT_EQ(has_all(msg(edited(task, 0, "bias", nullptr)), {(k + "stages").c_str(), "\"bias\" left out"}), "");
  // a stage's own family checks, its field under the stage: a pool of a window larger than the convolution's output
  EXPECT_EQ(has_all(msg(edited(task, 1, "kernel", json::array({9, 9}))), {(k + "stages[1]").c_str(), "no output"}), "");
  EXPECT_EQ(has_all(msg(edited(task, 2, "op", 7)), {(k + "stages[2].op").c_str()}), "");
}

TEST(ChainTemplates, TheLibraryMakesThemFromTheirStages) {
  const Library& lib = repo_library();
  const Template* t = lib.find_template("chain:conv.cpu+pool.cpu");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->family, "chain");
  EXPECT_EQ(t->stages.size(), 2u);
  EXPECT_EQ(t->params.size(),
            lib.find_template("conv.cpu")->params.size() + lib.find_template("pool.cpu")->params.size());
  EXPECT_NE(t->find_param("S1_OCB"), nullptr);
  EXPECT_NE(t->find_param("S2_ROWS"), nullptr);
  EXPECT_EQ(t->strategies.front().name, "stage1.conv.channel_block");
  EXPECT_EQ(t->strategies[1].name, "stage2.pool.rows");
  EXPECT_EQ(lib.find_template("chain:conv.cpu+pool.cpu"), t);  // made once
  EXPECT_EQ(lib.find_template("chain:conv.cpu+nope.cpu"), nullptr);
  EXPECT_EQ(lib.find_template("chain:conv.cpu+pool.cuda"), nullptr);  // one backend
  // a point's stage parts, and a rule of a stage checked as that stage's
  const Task task = load_task(kFixture);
  const BoundTask bt = bind_task(task, Backend::cpu, *lib.binding_for(task));
  const auto ts = applicable_templates(lib, bt);
  ASSERT_EQ(ts.size(), 1u);
  EXPECT_EQ(ts[0]->name, "chain:conv.cpu+pool.cpu+elementwise.cpu");
  Point p = ts[0]->default_point();
  EXPECT_TRUE(check_point(*ts[0], bt, p).ok);
  p["S2_ROWS"] = "3";
  EXPECT_EQ(has_all(check_point(*ts[0], bt, p).message, {"stage 2 (pool.cpu)", "ROWS=3"}), "");
  p.erase("S2_ROWS");
  EXPECT_EQ(has_all(check_point(*ts[0], bt, p).message, {"stage 2", "ROWS is not set"}), "");
}

TEST(ChainTemplates, TheTunerProposesChainPoints) {
  const Task task = load_task(kFixture);
  TunerUnder u = tuner_under(task, Backend::cpu, "stage2.pool.rows", {"stage1.conv.channel_block", "stage2.pool.rows"});
  auto p = u.agent->propose(u.ctx);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->params.at("template"), "chain:conv.cpu+pool.cpu+elementwise.cpu");
  EXPECT_NE(p->source.find("namespace khive_s2 {"), std::string::npos);
}

// The rendered CPU chain against a plain reference (the fixture's), element by element, over sizes that leave an odd
// row and column out of the pool; the harness is the fixture's reference.cpp renamed.
std::string chain_harness(const std::vector<std::array<long, 3>>& sizes) {
  std::string ref = read_file(kFixture / "reference.cpp");
  const auto at = ref.find("extern \"C\" void khive_launch(");
  ref = ref.substr(0, at) + "static void reference_launch(" +
        ref.substr(at + std::string("extern \"C\" void khive_launch(").size());
  std::string h = ref +
                  "#include <cstdio>\n#include <random>\nint main() {\n  std::mt19937 g(7);\n"
                  "  std::normal_distribution<float> d(0.5f, 1.0f);\n  int bad = 0;\n";
  for (const auto& s : sizes)
    h += fmt::format(
        "  {{ const long N = {}, H = {}, W = {};\n"
        "    std::vector<float> x(N * 4 * H * W), w(288), b(8), y(N * 8 * ((H - 2) / 2) * ((W - 2) / 2), -7.0f), "
        "r(y.size());\n"
        "    for (auto& v : x) v = d(g); for (auto& v : w) v = 0.3f * d(g); for (auto& v : b) v = 0.2f * d(g);\n"
        "    khive_launch(x.data(), w.data(), b.data(), y.data(), N, H, W);\n"
        "    reference_launch(x.data(), w.data(), b.data(), r.data(), N, H, W);\n"
        "    for (size_t i = 0; i < y.size(); ++i) if (!(std::fabs(y[i] - r[i]) <= 1e-4f + 1e-4f * std::fabs(r[i]))) "
        "++bad; }}\n",
        s[0], s[1], s[2]);
  return h + "  std::printf(\"bad %d\\n\", bad);\n  return 0;\n}\n";
}

TEST(ChainCpuKernel, MatchesTheReferenceOverSizes) {
  const Task task = load_task(kFixture);
  const BoundTask bt = bind_task(task, Backend::cpu, *repo_library().binding_for(task));
  const Template& t = *repo_library().find_template("chain:conv.cpu+pool.cpu+elementwise.cpu");
  const std::string h = chain_harness({{1, 4, 4}, {2, 9, 13}, {3, 33, 30}, {2, 64, 17}});
  Point other = t.default_point();
  other["S1_OCB"] = "2";
  other["S2_ROWS"] = "1";
  other["S3_VEC"] = "4";
  other["S1_MIN_PAR"] = t.find_param("S1_MIN_PAR")->values.front();
  int i = 0;
  for (const Point& p : {t.default_point(), other}) {
    EXPECT_EQ(run_cpu_kernel(generate_prelude(task, Backend::cpu) + render(t, bt, p), h, fmt::format("chain{}", i++)),
              "bad 0\n")
        << describe_point(p);
  }
  // Planted: the convolution's output one column wider than torch's (the stages then disagree with the reference).
  std::string src = render(t, bt, t.default_point());
  const auto at = src.find("khive_m1_3 = (");
  ASSERT_NE(at, std::string::npos);
  src.replace(at, std::string("khive_m1_3 = (").size(), "khive_m1_3 = 1 + (");
  EXPECT_NE(run_cpu_kernel(generate_prelude(task, Backend::cpu) + src, h, "chain-planted"), "bad 0\n");
}

// `//` and `%` in an axis expression are Python's (floor, the divisor's sign) in the C++ the binders write.
TEST(ChainBinding, AxisFloorDivisionKeepsPythonsMeaning) {
  const Task task = edited_copy(kFixture, [](json& d) {
    d["axes"]["Q"] = {{"type", "expr"}, {"expression", "(H - 9) // 4 + (W - 10) % 3 * 2"}};
  });
  const std::string q = bind_detail::axis_cpp(task, "Q");
  std::string h = "#include <cstdio>\n#include <cstdint>\nint main() {\n";
  std::string want;
  for (int64_t H : {0, 3, 9, 10, 17}) {
    for (int64_t W : {1, 10, 12}) {
      h += fmt::format("  {{ const int64_t H = {}, W = {}; std::printf(\"%lld \", (long long){}); }}\n", H, W, q);
      want += std::to_string(eval_int_expr("(H - 9) // 4 + (W - 10) % 3 * 2", {{"H", H}, {"W", W}})) + " ";
    }
  }
  EXPECT_EQ(run_cpu_kernel("", h + "  return 0;\n}\n", "axis-floordiv"), want) << q;
  const Task bad = edited_copy(kFixture, [](json& d) {
    d["axes"]["Q"] = {{"type", "expr"}, {"expression", "H ** 2"}};
  });
  try {
    bind_detail::axis_cpp(bad, "Q");
    ADD_FAILURE() << "true division accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(has_all(e.what(), {"axis 'Q'", "H ** 2", "+ - * // %"}), "");
  }
}

// The fixture's first stage as khive.op.stages records it: a 2-D convolution of x into khive_t1, stride 1, no padding.
json conv_stage() {
  return {{"op", "conv"},
          {"family", "conv"},
          {"inputs", {"x", "weight", "bias"}},
          {"output", "khive_t1"},
          {"conv",
           {{"stride", {1, 1}},
            {"padding", {0, 0}},
            {"dilation", {1, 1}},
            {"output_padding", {0, 0}},
            {"groups", 1},
            {"transposed", false}}},
          {"operands", {{"x", "x"}, {"weight", "weight"}, {"bias", "bias"}}}};
}

// A chain the reference's graph recorded (khive.op.stages, as khive_torch.recognize writes it) binds stage by stage.
TEST(ChainAutoBind, ARecognisedChainBindsAsItsStages) {
  auto with_stages = [](json stages) {
    return edited_copy(kFixture, [&](json& d) {
      d["op_type"] = "kernelbench";
      d["khive"]["op"] = {{"op", "chain"}, {"family", "chain"}, {"stages", stages}};
    });
  };
  json conv = conv_stage();
  conv["expression"] = "fmaxf(x, 0.0f)";
  json pool = {{"op", "max_pool"},
               {"family", "pool"},
               {"inputs", {"khive_t1"}},
               {"output", "khive_t2"},
               {"pool",
                {{"op", "max"},
                 {"kernel", {2, 2}},
                 {"stride", {2, 2}},
                 {"padding", {0, 0}},
                 {"dilation", {1, 1}},
                 {"ceil_mode", false}}}};
  json ew = {{"op", "elementwise"},
             {"family", "elementwise"},
             {"inputs", {"khive_t2"}},
             {"output", nullptr},
             {"expression", "(2.0f * tanhf(khive_t2))"},
             {"flags", {"named_inputs"}}};
  const Task t = with_stages(json::array({conv, pool, ew}));
  std::string why;
  const auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "chain");
  ASSERT_EQ(b->spec["stages"].size(), 3u);
  EXPECT_EQ(b->spec["stages"][1]["family"], "pool");
  EXPECT_EQ(b->spec["stages"][2]["inputs"], json::array({"khive_t2"}));
  const BoundTask bt = bind_task(t, Backend::cpu, *b);
  EXPECT_EQ(bt.stages.size(), 3u);
  // A stage no family binds alone: the chain is refused, the stage named.
  json bad_pool = pool;
  bad_pool["pool"]["op"] = "median";
  EXPECT_FALSE(infer_binding(with_stages(json::array({conv, bad_pool, ew})), &why));
  EXPECT_EQ(has_all(why, {"chain of stages", "khive.op.stages[1].pool.op"}), "");
  json softmax = {{"op", "softmax"}, {"family", "softmax"}, {"inputs", {"khive_t2"}}, {"output", nullptr}};
  EXPECT_FALSE(infer_binding(with_stages(json::array({conv, pool, softmax})), &why));
  EXPECT_EQ(has_all(why, {"stage 3 (softmax)", "2-D tensor"}), "");
}

// SOL-ExecBench's Linear layers read [batch, seq, hidden] rows: a product of rows (M the list of A's leading axes) with
// a residual (recognize.py: operands.residual), and a gated MLP of rows, gemm -> gated -> gemm, the gated stage's
// output named after the task's axis of half the gate-and-up size.
TEST(ChainAutoBind, RowsOfAProductWithAResidualAndAGatedMlp) {
  auto rows_task = [](const std::function<void(json&)>& more) {
    return edited_copy(
        kFixture,
        [&](json& d) {
          d["op_type"] = "kernelbench";
          d.erase("constraints");
          d["axes"] = {{"B", {{"type", "var"}}}, {"S", {{"type", "var"}}}};
          d["khive"].erase("cost");
          d["khive"].erase("inputs");
          more(d);
        },
        [](std::string& w) {
          w = R"({"uuid": "b1s3", "axes": {"B": 1, "S": 3}, "khive": {"role": "both"}})"
              "\n"
              R"({"uuid": "b2s5", "axes": {"B": 2, "S": 5}, "khive": {"role": "correctness"}})"
              "\n";
        });
  };
  // o_proj + residual: x [B, S, 6] @ w^T + r, w [5, 6], r and y [B, S, 5].
  const Task o = rows_task([](json& d) {
    d["inputs"] = {{"x", {{"shape", {"B", "S", "6"}}, {"dtype", "float32"}}},
                   {"w", {{"shape", {"5", "6"}}, {"dtype", "float32"}}},
                   {"r", {{"shape", {"B", "S", "5"}}, {"dtype", "float32"}}}};
    d["outputs"] = {{"y", {{"shape", {"B", "S", "5"}}, {"dtype", "float32"}}}};
    d["khive"]["tolerance"] = {{"y", {{"atol", 1e-4}, {"rtol", 1e-4}}}};
    d["khive"]["op"] = {
        {"op", "gemm+epilogue"},
        {"family", "gemm"},
        {"expression", "x"},
        {"operands", {{"A", "x"}, {"B", "w"}, {"layout_a", "row"}, {"layout_b", "col"}, {"residual", "r"}}}};
  });
  std::string why;
  auto b = infer_binding(o, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "gemm");
  EXPECT_EQ(b->spec["M"], json::array({"B", "S"}));
  EXPECT_EQ(b->spec["residual"], "r");
  EXPECT_NE(bind_task(o, Backend::cpu, *b).summary.find("x @ w^T + r"), std::string::npos);
  // A gated MLP: gate_up [8, 6], down [6, 4]: t1 [B, S, 8], t2 = silu(gate) * up [B, S, 4], y = t2 @ down^T [B, S, 6].
  const Task mlp = rows_task([](json& d) {
    d["inputs"] = {{"x", {{"shape", {"B", "S", "6"}}, {"dtype", "float32"}}},
                   {"w_gu", {{"shape", {"8", "6"}}, {"dtype", "float32"}}},
                   {"w_d", {{"shape", {"6", "4"}}, {"dtype", "float32"}}}};
    d["outputs"] = {{"y", {{"shape", {"B", "S", "6"}}, {"dtype", "float32"}}}};
    d["khive"]["tolerance"] = {{"y", {{"atol", 1e-4}, {"rtol", 1e-4}}}};
    json gemm1 = {{"op", "matmul"},
                  {"family", "gemm"},
                  {"operands", {{"A", "x"}, {"B", "w_gu"}, {"layout_a", "row"}, {"layout_b", "col"}}},
                  {"inputs", {"w_gu", "x"}},
                  {"output", "khive_t1"}};
    json gated = {{"op", "gated"},
                  {"family", "gated"},
                  {"expression", "(up * (gate / (1.0f + expf(-(gate)))))"},
                  {"inputs", {"khive_t1"}},
                  {"output", "khive_t2"}};
    json gemm2 = {{"op", "matmul"},
                  {"family", "gemm"},
                  {"operands", {{"A", "khive_t2"}, {"B", "w_d"}, {"layout_a", "row"}, {"layout_b", "col"}}},
                  {"inputs", {"khive_t2", "w_d"}},
                  {"output", nullptr}};
    d["khive"]["op"] = {{"op", "chain"}, {"family", "chain"}, {"stages", json::array({gemm1, gated, gemm2})}};
  });
  b = infer_binding(mlp, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "chain");
  ASSERT_EQ(b->spec["stages"].size(), 3u);
  EXPECT_EQ(b->spec["stages"][0]["M"], json::array({"B", "S"}));
  EXPECT_EQ(b->spec["stages"][1]["family"], "gated");
  EXPECT_EQ(b->spec["stages"][2]["K"], "4");  // the gated stage's [B, S, 8 / 2]
  const BoundTask bt = bind_task(mlp, Backend::cpu, *b);
  EXPECT_EQ(bt.stages.size(), 3u);
  // A gate-and-up of odd size has no halves: refused with the stage named.
  const Task odd = rows_task([&](json& d) {
    d["inputs"] = {{"x", {{"shape", {"B", "S", "6"}}, {"dtype", "float32"}}},
                   {"w_gu", {{"shape", {"7", "6"}}, {"dtype", "float32"}}},
                   {"w_d", {{"shape", {"6", "4"}}, {"dtype", "float32"}}}};
    d["outputs"] = {{"y", {{"shape", {"B", "S", "6"}}, {"dtype", "float32"}}}};
    d["khive"]["tolerance"] = {{"y", {{"atol", 1e-4}, {"rtol", 1e-4}}}};
    d["khive"]["op"] = json::parse(read_file(mlp.dir / "definition.json"))["khive"]["op"];
  });
  EXPECT_FALSE(infer_binding(odd, &why));
  EXPECT_EQ(has_all(why, {"stage", "even size"}), "") << why;
}

// Intermediates are named after the task's axes of the same sizes; two axes of one intermediate with equal sizes on
// every workload (H == W) get two different names where the task has them, so a later stage that keeps only the
// second (a reduction over the first, then a softmax over the channels: kb2_024) still reads [N, 8, WC], the output's
// axes, and binds.
TEST(ChainAutoBind, EqualSizedAxesOfAnIntermediateKeepDistinctNames) {
  const Task t = edited_copy(
      kFixture,
      [](json& d) {
        d["op_type"] = "kernelbench";
        d["axes"]["HC"] = {{"type", "expr"}, {"expression", "H - 2"}};
        d["axes"]["WC"] = {{"type", "expr"}, {"expression", "W - 2"}};
        d["outputs"]["y"]["shape"] = json::array({"N", "8", "WC"});
        json conv = conv_stage();
        json mean = {
            {"op", "mean"}, {"family", "reduce"}, {"dim", 2}, {"inputs", {"khive_t1"}}, {"output", "khive_t2"}};
        json softmax = {
            {"op", "softmax"}, {"family", "softmax"}, {"dim", 1}, {"inputs", {"khive_t2"}}, {"output", nullptr}};
        d["khive"]["op"] = {{"op", "chain"}, {"family", "chain"}, {"stages", json::array({conv, mean, softmax})}};
      },
      [](std::string& w) {  // H == W on every workload
        w = "{\"uuid\": \"a\", \"axes\": {\"N\": 1, \"H\": 5, \"W\": 5}, \"khive\": {\"role\": \"correctness\"}}\n"
            "{\"uuid\": \"b\", \"axes\": {\"N\": 2, \"H\": 12, \"W\": 12}, \"khive\": {\"role\": \"both\"}}\n";
      });
  std::string why;
  const auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->spec["stages"][2]["family"], "rowop");
  const BoundTask bt = bind_task(t, Backend::cpu, *b);
  ASSERT_EQ(bt.stages.size(), 3u);
  EXPECT_EQ(bt.stages[2].op, "strided_softmax");
}

// More than four stages (KernelBench level 2 has chains of 5 and 6): the fixture's computation as six stages, the
// relu and the 2 tanh each split off as elementwise stages (five intermediates, five kept buffers), binds, names its
// template after its six stages, and computes the fixture's reference over the sizes above.
TEST(ChainCpuKernel, SixStagesMatchTheReference) {
  const Task task = load_task(kFixture);
  json spec = fixture_spec();
  spec["stages"] =
      json::array({{{"family", "conv"}, {"x", "x"}, {"weight", "weight"}, {"bias", "bias"}, {"y", "t1"}},
                   {{"family", "elementwise"}, {"inputs", {"t1"}}, {"output", "t2"}, {"op", "t1 > 0.0f ? t1 : 0.0f"}},
                   {{"family", "pool"}, {"op", "max"}, {"x", "t2"}, {"y", "t3"}, {"kernel", {2, 2}}},
                   {{"family", "elementwise"}, {"inputs", {"t3"}}, {"output", "t4"}, {"op", "tanhf(t3)"}},
                   {{"family", "elementwise"}, {"inputs", {"t4"}}, {"output", "t5"}, {"op", "0.5f * t4"}},
                   {{"family", "elementwise"}, {"inputs", {"t5"}}, {"output", "y"}, {"op", "4.0f * t5"}}});
  const BoundTask bt = bind_task(task, Backend::cpu, binding_with(task, spec));
  ASSERT_EQ(bt.stages.size(), 6u);
  EXPECT_EQ(bt.op, "conv>map>max_pool>map>map>map");
  const auto ts = applicable_templates(repo_library(), bt);
  ASSERT_FALSE(ts.empty());
  const Template& t = *ts.front();
  EXPECT_EQ(t.name, "chain:conv.cpu+elementwise.cpu+pool.cpu+elementwise.cpu+elementwise.cpu+elementwise.cpu");
  const std::string src = render(t, bt, t.default_point());
  EXPECT_NE(src.find("khive_chain_buffer<4>"), std::string::npos);
  EXPECT_NE(src.find("khive_s6::khive_stage("), std::string::npos);
  EXPECT_EQ(run_cpu_kernel(generate_prelude(task, Backend::cpu) + src,
                           chain_harness({{1, 4, 4}, {2, 9, 13}, {3, 33, 30}}), "chain-six"),
            "bad 0\n");
}
