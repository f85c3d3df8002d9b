// Bindings the tuner finds by itself (auto_bind.hpp, issue 14): a task no bindings file names gets one for a
// recognised op, and the tuner then offers its templates; anything else is said plainly.
#include "tuner_support.hpp"

#include <sstream>
#include <tuple>

#include "khive/tuner/auto_bind.hpp"

namespace {

// A copy of tasks/cutegen26/<name> under a suite no bindings file knows, with its definition edited.
Task imported(const std::string& name, const std::string& as, const std::function<void(json&)>& edit) {
  return edited_copy(
      repo() / "tasks/cutegen26" / name,
      [&](json& def) {
        def["name"] = as;
        edit(def);
      },
      {}, "imported/" + as);
}

TEST(AutoBind, KernelBenchActivationByName) {
  Task t = imported("kb19_relu", "kb1_019_relu", [](json& d) { d["op_type"] = "kernelbench"; });
  ASSERT_EQ(repo_library().binding_for(t), nullptr);
  EXPECT_EQ(recognised_op_name(t), "relu");
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "elementwise");
  EXPECT_EQ(b->spec["op"], "x > 0.0f ? x : 0.0f");
  BoundTask bt = bind_task(t, Backend::cpu, *b);
  EXPECT_EQ(bt.family, "elementwise");
  TunerOptions o;
  o.kernels_dir = repo() / "kernels";
  auto agent = make_tuner_agent(o);
  EXPECT_FALSE(agent->strategies(t, Backend::cpu).empty());
  EXPECT_EQ(agent->idle_because(t, Backend::cpu), "");
}

// khive.op, recognised from the reference's graph at import (python/khive_torch/recognize.py): an elementwise chain
// binds with its exact expression, whatever the task is named; a product with an epilogue never binds as a plain gemm.
TEST(AutoBind, RecognisedOpFromTheGraph) {
  Task t = imported("kb19_relu", "kb1_020_leakyrelu_like", [](json& d) {
    d["op_type"] = "kernelbench";
    d["khive"]["op"] = {{"op", "elementwise"},
                        {"family", "elementwise"},
                        {"expression", "((x) > 0.0f ? (x) : 0.2f * (x))"},
                        {"ops", {"leaky_relu"}}};
  });
  EXPECT_EQ(recognised_op_name(t), "elementwise");
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "elementwise");
  EXPECT_EQ(b->spec["op"], "((x) > 0.0f ? (x) : 0.2f * (x))");
  EXPECT_NO_THROW(bind_task(t, Backend::cpu, *b));

  Task no_expr = imported("kb19_relu", "kb1_chain", [](json& d) {
    d["op_type"] = "kernelbench";
    d["khive"]["op"] = {{"op", "elementwise"}, {"family", "elementwise"}};
  });
  EXPECT_FALSE(infer_binding(no_expr, &why));
  EXPECT_NE(why.find("have no C expression"), std::string::npos) << why;

  Task tri = imported("kb01_matmul_square", "kb1_014_masked", [](json& d) {
    d["op_type"] = "kernelbench";
    d["khive"]["op"] = {{"op", "gemm+epilogue"}, {"family", "gemm"}, {"ops", {"mm", "triu"}}};
  });
  EXPECT_FALSE(infer_binding(tri, &why));
  EXPECT_NE(why.find("a matrix product with further ops"), std::string::npos) << why;

  // A malformed khive.op is a task format error naming the field.
  try {
    imported("kb19_relu", "kb1_bad_eps", [](json& d) { d["khive"]["op"] = {{"op", "rmsnorm"}, {"eps", -1}}; });
    ADD_FAILURE() << "khive.op.eps = -1 loaded";
  } catch (const TaskFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("khive.op.eps"), std::string::npos) << e.what();
  }
  for (const json& dim : {json("1"), json(1.5), json(99)}) {
    try {
      imported("kb19_relu", "kb1_bad_dim", [&](json& d) { d["khive"]["op"] = {{"op", "sum"}, {"dim", dim}}; });
      ADD_FAILURE() << "khive.op.dim = " << dim.dump() << " loaded";
    } catch (const TaskFormatError& e) {
      EXPECT_NE(std::string(e.what()).find("khive.op.dim"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("an integer"), std::string::npos) << e.what();
    }
  }
}

TEST(AutoBind, MatrixProductFromSignature) {
  Task t = imported("kb01_matmul_square", "kb1_001_square_matrix_multiplication",
                    [](json& d) { d["op_type"] = "kernelbench"; });
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "gemm");
  EXPECT_EQ(b->spec["M"], "N");
  EXPECT_EQ(b->spec["layout_b"], "row");
  EXPECT_NO_THROW(bind_task(t, Backend::cpu, *b));
  // B[N, K] is read as a column-major K x N operand.
  Task tb = imported("kb01_matmul_square", "mm_tb", [](json& d) {
    d["op_type"] = "gemm";
    d["axes"] = {{"N", {{"type", "var"}}},
                 {"M", {{"type", "expr"}, {"expression", "N"}}},
                 {"K", {{"type", "expr"}, {"expression", "N"}}}};
    d["inputs"]["A"]["shape"] = {"M", "K"};
    d["inputs"]["B"]["shape"] = {"N", "K"};
    d["outputs"]["C"]["shape"] = {"M", "N"};
  });
  auto b2 = infer_binding(tb, &why);
  ASSERT_TRUE(b2) << why;
  EXPECT_EQ(b2->spec["layout_b"], "col");
  EXPECT_EQ(b2->spec["K"], "K");
}

// A plain product whose operands the graph recorded (khive.op.operands): square A read transposed binds as such,
// where the shapes alone say row-major; an operand reshaped to other dimensions is refused with the reason.
TEST(AutoBind, MatrixProductOperandsFromTheGraph) {
  Task t = imported("kb01_matmul_square", "kb1_016_transposed_a", [](json& d) {
    d["op_type"] = "kernelbench";
    d["khive"]["op"] = {{"op", "matmul"},
                        {"family", "gemm"},
                        {"operands", {{"A", "A"}, {"B", "B"}, {"layout_a", "col"}, {"layout_b", "row"}}}};
  });
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->spec["layout_a"], "col");
  EXPECT_EQ(b->spec["layout_b"], "row");
  EXPECT_NO_THROW(bind_task(t, Backend::cpu, *b));
  // The same product recorded with B first (C = B @ A): the graph's roles, not the inputs' order.
  Task swapped = imported("kb01_matmul_square", "kb1_016_swapped", [](json& d) {
    d["op_type"] = "kernelbench";
    d["khive"]["op"] = {{"op", "matmul"}, {"family", "gemm"}, {"operands", {{"A", "B"}, {"B", "A"}}}};
  });
  auto bs = infer_binding(swapped, &why);
  ASSERT_TRUE(bs) << why;
  EXPECT_EQ(bs->spec["A"], "B");
  EXPECT_EQ(bs->spec["B"], "A");
  Task reshaped = imported("kb01_matmul_square", "kb1_016_reshaped", [](json& d) {
    d["op_type"] = "kernelbench";
    d["khive"]["op"] = {{"op", "matmul"}, {"family", "gemm"}, {"flags", {"operands_reinterpreted"}}};
  });
  EXPECT_FALSE(infer_binding(reshaped, &why));
  EXPECT_NE(why.find("reshaped to other dimensions"), std::string::npos) << why;
}

// KernelBench's batched product (A[b, m, k] . B[b, k, n]), its 3-D tensor times a matrix (B shared across the batch)
// and its matrix-vector product (a literal 1) bind as gemm with a batch axis or the literal; a 4-D tensor times a
// matrix as rows (M a list); leading axes that are not C's do not bind.
TEST(AutoBind, BatchedSharedAndLiteralProducts) {
  // A task written here: fp32 A, B -> C of these shapes, recognised as a matmul, one workload with every axis 4.
  auto product = [](const char* name, json a, json b, json c, json axes) {
    const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-autobind-test") / "imported" / name;
    fs::create_directories(d);
    json def = {
        {"name", name},
        {"op_type", "kernelbench"},
        {"axes", axes},
        {"inputs", {{"A", {{"shape", a}, {"dtype", "float32"}}}, {"B", {{"shape", b}, {"dtype", "float32"}}}}},
        {"outputs", {{"C", {{"shape", c}, {"dtype", "float32"}}}}},
        {"khive", {{"op", {{"op", "matmul"}, {"family", "gemm"}, {"ops", {"bmm"}}}}}}};  // as the import records
    std::ofstream(d / "definition.json") << def.dump(2);
    json w = {{"uuid", "w"}, {"axes", json::object()}};
    for (auto it = axes.begin(); it != axes.end(); ++it) w["axes"][it.key()] = 4;
    std::ofstream(d / "workload.jsonl") << w.dump() << "\n";
    return load_task(d);
  };
  const json v = {{"type", "var"}};
  std::string why;
  Task bmm = product("kb1_003_bmm", {"b", "m", "k"}, {"b", "k", "n"}, {"b", "m", "n"},
                     {{"b", v}, {"m", v}, {"k", v}, {"n", v}});
  auto b = infer_binding(bmm, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->spec["batch"], "b");
  EXPECT_EQ(b->spec["M"], "m");
  const BoundTask bt = bind_task(bmm, Backend::cpu, *b);
  EXPECT_NE(bt.placeholders.at("ENTRY").find("khive_batch = b"), std::string::npos) << bt.placeholders.at("ENTRY");
  Task shared = product("kb1_010_3d_tensor_matrix_multiplication", {"N", "M", "K"}, {"K", "L"}, {"N", "M", "L"},
                        {{"N", v}, {"M", v}, {"K", v}, {"L", v}});
  b = infer_binding(shared, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->spec["batch"], "N");
  EXPECT_EQ(b->spec["N"], "L");
  const BoundTask bs = bind_task(shared, Backend::cpu, *b);
  EXPECT_NE(bs.placeholders.at("ENTRY").find("khive_g.b_bs = 0"), std::string::npos) << bs.placeholders.at("ENTRY");
  Task mv = product("kb1_004_matrix_vector_multiplication", {"M", "K"}, {"K", "1"}, {"M", "1"}, {{"M", v}, {"K", v}});
  b = infer_binding(mv, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->spec["N"], "1");
  EXPECT_NO_THROW(bind_task(mv, Backend::cpu, *b));
  Task four = product("kb1_011_4d_tensor_matrix_multiplication", {"b", "i", "j", "l"}, {"l", "k"}, {"b", "i", "j", "k"},
                      {{"b", v}, {"i", v}, {"j", v}, {"l", v}, {"k", v}});
  b = infer_binding(four, &why);  // A's leading axes are C's rows: one GEMM of M = b * i * j
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->spec["M"], json::array({"b", "i", "j"}));
  EXPECT_EQ(b->spec["K"], "l");
  EXPECT_FALSE(b->spec.contains("batch"));
  const BoundTask b4 = bind_task(four, Backend::cpu, *b);
  EXPECT_NE(b4.placeholders.at("ENTRY").find("khive_M = int64_t(1) * b * i * j"), std::string::npos)
      << b4.placeholders.at("ENTRY");
  EXPECT_EQ(b4.workload_vars.at(0).at("M"), 64);
  EXPECT_NE(b4.summary.find("b*i*j"), std::string::npos) << b4.summary;
  // Leading axes that are not C's, or a 3-D A against a 4-D C: not a product of this kind.
  Task off = product("kb1_011_off", {"b", "i", "j", "l"}, {"l", "k"}, {"b", "j", "i", "k"},
                     {{"b", v}, {"i", v}, {"j", v}, {"l", v}, {"k", v}});
  EXPECT_FALSE(infer_binding(off, &why));
  EXPECT_NE(why.find("N-D tensor"), std::string::npos) << why;
  // The binding's own checks of a list M: a column-major A, a batch, a non-string entry, A's axes not C's rows.
  auto error_for = [&](const std::function<void(json&)>& edit) {
    Binding bad = *b;
    edit(bad.spec);
    try {
      bind_task(four, Backend::cpu, bad);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string msg = error_for([](json& s) { s["layout_a"] = "col"; });
  EXPECT_NE(msg.find("row when M is a list of axes"), std::string::npos) << msg;
  msg = error_for([](json& s) { s["batch"] = "b"; });
  EXPECT_NE(msg.find("nothing when M is a list of axes"), std::string::npos) << msg;
  msg = error_for([](json& s) { s["M"] = json::array({"b", 3}); });
  EXPECT_NE(msg.find("an axis name or a list of axis names"), std::string::npos) << msg;
  // (every axis the same size here: A [b, i, j, l] reads as [i, b, j, l], an axis of another name but the same
  // size being that axis, and C [b, i, j, k] is refused)
  msg = error_for([](json& s) { s["M"] = json::array({"i", "b", "j"}); });
  EXPECT_NE(msg.find("C: expected shape [i, b, j, k], got [b, i, j, k]"), std::string::npos) << msg;
}

// The CPU GEMM on a 4-D A times a matrix (kb1_011's form, M = b * i * j rows), at odd sizes, against a double
// reference: the rows of C are the flattened leading axes of A.
TEST(AutoBind, FourDimensionalTensorTimesAMatrixComputes) {
  const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-autobind-test") / "imported" / "kb1_011";
  fs::create_directories(d);
  const json v = {{"type", "var"}};
  json def = {{"name", "kb1_011"},
              {"op_type", "kernelbench"},
              {"axes", {{"b", v}, {"i", v}, {"j", v}, {"l", v}, {"k", v}}},
              {"inputs",
               {{"A", {{"shape", {"b", "i", "j", "l"}}, {"dtype", "float32"}}},
                {"B", {{"shape", {"l", "k"}}, {"dtype", "float32"}}}}},
              {"outputs", {{"C", {{"shape", {"b", "i", "j", "k"}}, {"dtype", "float32"}}}}},
              {"khive", {{"op", {{"op", "matmul"}, {"family", "gemm"}, {"ops", {"bmm"}}}}}}};
  std::ofstream(d / "definition.json") << def.dump(2);
  std::ofstream(d / "workload.jsonl")
      << json{{"uuid", "w"}, {"axes", {{"b", 3}, {"i", 5}, {"j", 7}, {"l", 33}, {"k", 19}}}}.dump() << "\n";
  const Task task = load_task(d);
  std::string why;
  const auto b = infer_binding(task, &why);
  ASSERT_TRUE(b) << why;
  const BoundTask bt = bind_task(task, Backend::cpu, *b);
  const std::string harness = R"(
#include <cmath>
#include <cstdio>
#include <vector>
int main() {
  const long b = 3, i = 5, j = 7, l = 33, k = 19, rows = b * i * j;
  std::vector<float> A(rows * l), B(l * k), C(rows * k, -1.0f);
  for (long e = 0; e < rows * l; ++e) A[e] = float((e * 7919) % 101) / 50.0f - 1.0f;
  for (long e = 0; e < l * k; ++e) B[e] = float((e * 104729) % 89) / 44.0f - 1.0f;
  khive_launch(A.data(), B.data(), C.data(), b, i, j, l, k);
  long bad = 0;
  for (long r = 0; r < rows; ++r)
    for (long c = 0; c < k; ++c) {
      double want = 0;
      for (long q = 0; q < l; ++q) want += double(A[r * l + q]) * B[q * k + c];
      bad += !(std::fabs(C[r * k + c] - want) <= 1e-4 * (1 + std::fabs(want)));
    }
  std::printf("bad %ld\n", bad);
}
)";
  const Template& t = repo_template("gemm.cpu_blocked");
  const std::string out = run_cpu_kernel(render(t, bt, t.default_point()), harness, "gemm-4d");
  EXPECT_EQ(out, "bad 0\n");
}

// A Linear with a pointwise epilogue (KernelBench level 2's Gemm_* problems), recognised from the graph with its
// operands (khive.op.operands: a square weight's layout is the graph's word, not a guess from its shape) and an
// expression of the product and the bias: it binds as gemm_epilogue, which the templates that compute their epilogue
// per element serve and the sm90 one (named activations on CUTLASS's fused epilogue) does not.
TEST(AutoBind, ProductWithABiasAndAnEpilogueFromTheGraph) {
  const fs::path fx = repo() / "tests/tuner-fixtures/gemm_bias_epilogue";
  Task t = load_task(fx);
  ASSERT_EQ(repo_library().binding_for(t), nullptr);
  EXPECT_EQ(recognised_op_name(t), "gemm+epilogue");
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "gemm");
  EXPECT_EQ(b->spec["layout_b"], "col");
  EXPECT_EQ(b->spec["bias"], "bias");
  EXPECT_EQ(b->spec["K"], "K");
  BoundTask bt = bind_task(t, Backend::cpu, *b);
  EXPECT_EQ(bt.op, "gemm_epilogue");
  EXPECT_NE(bt.placeholders["PROLOGUE"].find("KHIVE_HAS_BIAS = true"), std::string::npos);
  EXPECT_NE(bt.placeholders["PROLOGUE"].find("return ((((x + b) * 2.0f))"), std::string::npos);
  EXPECT_NE(bt.placeholders["ENTRY"].find("khive_g.bias = bias;"), std::string::npos);
  EXPECT_NE(bt.summary.find("b = bias[column]"), std::string::npos) << bt.summary;
  for (const auto* name : {"gemm.cpu_blocked", "gemm.cuda_simt", "gemm.cuda_sm80_simt"})
    EXPECT_TRUE(repo_template(name).ops.count("gemm_epilogue")) << name;
  EXPECT_FALSE(repo_template("gemm.cuda_sm90").ops.count("gemm_epilogue"));

  // Square operands: the shapes alone would read weight[N, K] as B[K, N]; the graph's layout decides.
  Task sq = edited_copy(
      fx,
      [](json& d) {
        d["axes"] = {{"M", {{"type", "var"}}}};
        d["inputs"]["x"]["shape"] = {"M", "64"};
        d["inputs"]["weight"]["shape"] = {"64", "64"};
        d["inputs"]["bias"]["shape"] = {"64"};
        d["outputs"]["y"]["shape"] = {"M", "64"};
        d["constraints"] = {"M >= 1"};
        d["khive"]["cost"] = {
            {"flops", "2 * M * 64 * 64"}, {"bytes", "4 * (M * 64 + 64 * 64 + 64 + M * 64)"}, {"unit", "fp32"}};
      },
      [](std::string& w) { w = "{\"uuid\": \"m5\", \"axes\": {\"M\": 5}, \"khive\": {\"role\": \"both\"}}\n"; });
  auto bs = infer_binding(sq, &why);
  ASSERT_TRUE(bs) << why;
  EXPECT_EQ(bs->spec["layout_b"], "col");
  EXPECT_NO_THROW(bind_task(sq, Backend::cpu, *bs));

  // The binder's word on what does not fit: a bias that is not one value per column, an activation next to an
  // epilogue, a bias on a triangular product.
  Binding bad = *b;
  bad.spec["bias"] = "x";
  EXPECT_NE(std::string(bind_error(t, bad).what()).find("bias: expected shape [N]"), std::string::npos)
      << bind_error(t, bad).what();
  bad = *b;
  bad.spec["activation"] = "relu";
  EXPECT_NE(std::string(bind_error(t, bad).what()).find("nothing next to an epilogue"), std::string::npos)
      << bind_error(t, bad).what();
  bad = *b;
  bad.spec.erase("epilogue");
  bad.spec["triangular"] = "upper";
  EXPECT_NE(std::string(bind_error(t, bad).what()).find("no bias with triangular upper"), std::string::npos)
      << bind_error(t, bad).what();
  // Without an epilogue the bias is added before the activation: act(A @ B + bias).
  Binding plain = *b;
  plain.spec.erase("epilogue");
  plain.spec["activation"] = "relu";
  BoundTask pb = bind_task(t, Backend::cpu, plain);
  EXPECT_NE(pb.placeholders["PROLOGUE"].find("return khive_act(x + b);"), std::string::npos);
  EXPECT_EQ(pb.op, "gemm_epilogue");

  // khive.op.operands must name the task's inputs and say row or col.
  for (const auto& [field, value] :
       std::vector<std::pair<std::string, std::string>>{{"A", "nowhere"}, {"layout_b", "diag"}}) {
    try {
      edited_copy(fx, [&](json& d) { d["khive"]["op"]["operands"][field] = value; });
      ADD_FAILURE() << "khive.op.operands." << field << " = " << value << " loaded";
    } catch (const TaskFormatError& e) {
      EXPECT_NE(std::string(e.what()).find("khive.op.operands." + field), std::string::npos) << e.what();
    }
  }
  // Without operands (an older import) a gemm+epilogue still says why it does not bind.
  Task old = edited_copy(fx, [](json& d) { d["khive"]["op"].erase("operands"); });
  EXPECT_FALSE(infer_binding(old, &why));
  EXPECT_NE(why.find("not one product and a pointwise epilogue"), std::string::npos) << why;
}

// A Linear followed by `* scale - gain` (KernelBench level 2's Gemm_Scale_* problems): the product's bias is b, the
// other vectors b1, b2 (khive.op.operands.vectors), one per column or (gain, a 0-d parameter) one for all. The binding
// the tuner infers renders gemm.cpu_blocked with khive_epi_v over the three, computed against a double reference
// at sizes with a ragged last tile; the planted read of the scale at [0] fails it. khive.op.operands.vectors is
// checked at load.
TEST(AutoBind, ProductWithSeveralVectorsInItsEpilogue) {
  const fs::path fx = repo() / "tests/tuner-fixtures/gemm_bias_epilogue";
  const Task t = edited_copy(
      fx,
      [](json& d) {
        d["inputs"]["scale"] = {{"shape", {"N"}}, {"dtype", "float32"}};
        d["inputs"]["gain"] = {{"shape", json::array()}, {"dtype", "float32"}};
        d["khive"]["op"]["expression"] = "(((x + b) * b1) - b2)";
        d["khive"]["op"]["operands"]["vectors"] = {"scale", "gain"};
      },
      [](std::string& w) { w = "{\"uuid\": \"w\", \"axes\": {\"M\": 37, \"N\": 70, \"K\": 45}}\n"; });
  std::string why;
  const auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->spec["bias"], "bias");
  EXPECT_EQ(b->spec["vectors"], json::array({"scale", "gain"}));
  const BoundTask bt = bind_task(t, Backend::cpu, *b);
  EXPECT_EQ(bt.op, "gemm_epilogue");
  const std::string& p = bt.placeholders.at("PROLOGUE");
  for (const char* s :
       {"const khive_t* vecs[2];", "e.b[0] = khive_to_float_t(g.bias[j]);", "e.b[1] = khive_to_float_t(g.vecs[0][j]);",
        "e.b[2] = khive_to_float_t(g.vecs[1][0]);", "return (((x + b) * b1) - b2);"})
    EXPECT_NE(p.find(s), std::string::npos) << s << "\n" << p;
  EXPECT_NE(bt.placeholders.at("ENTRY").find("khive_g.vecs[1] = gain;"), std::string::npos);
  const std::string harness = R"(
#include <cmath>
#include <cstdio>
#include <vector>
int main() {
  const long M = 37, N = 70, K = 45;
  std::vector<float> x(M * K), w(N * K), bias(N), scale(N), gain{0.625f}, y(M * N, -1.0f);
  for (long e = 0; e < M * K; ++e) x[e] = float((e * 7919) % 101) / 50.0f - 1.0f;
  for (long e = 0; e < N * K; ++e) w[e] = float((e * 104729) % 89) / 44.0f - 1.0f;
  for (long c = 0; c < N; ++c) bias[c] = float(c % 7) / 3.0f - 1.0f, scale[c] = 0.5f + float(c % 5);
  khive_launch(x.data(), w.data(), bias.data(), scale.data(), gain.data(), y.data(), M, N, K);
  long bad = 0;
  for (long r = 0; r < M; ++r)
    for (long c = 0; c < N; ++c) {
      double want = 0;
      for (long q = 0; q < K; ++q) want += double(x[r * K + q]) * w[c * K + q];
      want = (want + bias[c]) * scale[c] - gain[0];
      bad += !(std::fabs(y[r * N + c] - want) <= 1e-4 * (1 + std::fabs(want)));
    }
  std::printf("bad %ld\n", bad);
}
)";
  const Template& tp = repo_template("gemm.cpu_blocked");
  std::string src = render(tp, bt, tp.default_point());
  EXPECT_EQ(run_cpu_kernel(src, harness, "gemm-vectors"), "bad 0\n");
  const auto at = src.find("g.vecs[0][j]");
  ASSERT_NE(at, std::string::npos);
  src.replace(at, std::string("g.vecs[0][j]").size(), "g.vecs[0][0]");
  EXPECT_NE(run_cpu_kernel(src, harness, "gemm-vectors-planted"), "bad 0\n");

  // The binder's word: a vector that is neither per column nor one value; vectors without a bias.
  Binding bad = *b;
  bad.spec["vectors"] = {"x"};
  EXPECT_EQ(has_all(bind_error(t, bad).what(), {"tasks.gemm_bias_epilogue.vectors[0]", "one value per column"}), "");
  bad = *b;
  bad.spec.erase("bias");
  EXPECT_EQ(has_all(bind_error(t, bad).what(), {"tasks.gemm_bias_epilogue.vectors", "nothing without \"bias\""}), "");
  // khive.op.operands.vectors: a list of the task's inputs, after a vector or bias.
  for (const auto& [value, part] : std::vector<std::pair<json, std::string>>{
           {json("scale"), "a non-empty list"}, {json::array({"nowhere"}), "khive.op.operands.vectors[0]"}}) {
    try {
      edited_copy(t.dir, [&](json& d) { d["khive"]["op"]["operands"]["vectors"] = value; });
      ADD_FAILURE() << "khive.op.operands.vectors = " << value.dump() << " loaded";
    } catch (const TaskFormatError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  }
  try {
    edited_copy(t.dir, [&](json& d) { d["khive"]["op"]["operands"].erase("bias"); });
    ADD_FAILURE() << "khive.op.operands.vectors without a bias loaded";
  } catch (const TaskFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing without a \"vector\" or \"bias\""), std::string::npos) << e.what();
  }
}

// A pointwise chain of several inputs recognised with its expression over their names (khive.op.flags:
// named_inputs): kb1_005's A * s (a float scalar) and kb1_012's row scaling (A [N] broadcast over C [N, M]) bind as
// elementwise with inputs and scalars from the task; a non-float input is refused by name.
TEST(AutoBind, SeveralInputsByTheirNames) {
  auto task = [](const char* name, json inputs, json out, json axes, const char* expr) {
    const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-autobind-test") / "imported" / name;
    fs::create_directories(d);
    json def = {{"name", name},
                {"op_type", "kernelbench"},
                {"axes", axes},
                {"inputs", inputs},
                {"outputs", {{"C", {{"shape", out}, {"dtype", "float32"}}}}},
                {"khive",
                 {{"op",
                   {{"op", "elementwise"},
                    {"family", "elementwise"},
                    {"expression", expr},
                    {"flags", {"named_inputs"}},
                    {"ops", {"mul"}}}}}}};
    std::ofstream(d / "definition.json") << def.dump(2);
    json w = {{"uuid", "w"}, {"axes", json::object()}};
    for (auto it = axes.begin(); it != axes.end(); ++it) w["axes"][it.key()] = 3 + static_cast<int>(w["axes"].size());
    std::ofstream(d / "workload.jsonl") << w.dump() << "\n";
    return load_task(d);
  };
  const json v = {{"type", "var"}}, f32 = {{"dtype", "float32"}};
  std::string why;
  Task scaled =
      task("kb1_005",
           {{"A", {{"shape", {"M", "N"}}, {"dtype", "float32"}}}, {"s", {{"shape", nullptr}, {"dtype", "float32"}}}},
           {"M", "N"}, {{"M", v}, {"N", v}}, "(A * s)");
  auto b = infer_binding(scaled, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "elementwise");
  EXPECT_EQ(b->spec["inputs"], json::array({"A"}));
  EXPECT_EQ(b->spec["scalars"], json::array({"s"}));
  EXPECT_EQ(b->spec["op"], "(A * s)");
  EXPECT_NO_THROW(bind_task(scaled, Backend::cpu, *b));
  Task rows =
      task("kb1_012",
           {{"A", {{"shape", {"N"}}, {"dtype", "float32"}}}, {"B", {{"shape", {"N", "M"}}, {"dtype", "float32"}}}},
           {"N", "M"}, {{"N", v}, {"M", v}}, "(A * B)");
  b = infer_binding(rows, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->spec["inputs"], json::array({"A", "B"}));
  EXPECT_FALSE(b->spec.contains("scalars"));
  const BoundTask bt = bind_task(rows, Backend::cpu, *b);
  EXPECT_NE(bt.summary.find("A (broadcast [N]"), std::string::npos) << bt.summary;
  Task ints =
      task("ints", {{"A", {{"shape", {"N"}}, {"dtype", "float32"}}}, {"k", {{"shape", {"N"}}, {"dtype", "int32"}}}},
           {"N"}, {{"N", v}}, "(A * k)");
  EXPECT_FALSE(infer_binding(ints, &why));
  EXPECT_NE(why.find("k is int32"), std::string::npos) << why;
}

TEST(AutoBind, UnrecognisedOpIsSaidPlainly) {
  Task t = imported("kb19_relu", "kb2_005_conv_thing", [](json& d) { d["op_type"] = "conv2d"; });
  std::string why;
  EXPECT_FALSE(infer_binding(t, &why));
  EXPECT_NE(why.find("op 'conv2d' is none the tuner recognises"), std::string::npos) << why;
  TunerOptions o;
  o.kernels_dir = repo() / "kernels";
  auto agent = make_tuner_agent(o);
  EXPECT_TRUE(agent->strategies(t, Backend::cpu).empty());
  std::string said = agent->idle_because(t, Backend::cpu);
  EXPECT_NE(said.find("the tuner has no template for this task: op 'conv2d'"), std::string::npos) << said;
  EXPECT_NE(said.find("other agents (LLM"), std::string::npos) << said;
  // A recognised name with the wrong signature says what did not match.
  Task wrong = imported("kb19_relu", "kb1_099_relu", [](json& d) {
    d["op_type"] = "kernelbench";
    d["inputs"]["x"]["dtype"] = "bfloat16";
    d["outputs"]["y"]["dtype"] = "bfloat16";
  });
  EXPECT_FALSE(infer_binding(wrong, &why));
  EXPECT_NE(why.find("'relu': the recognised activations are written for float32"), std::string::npos) << why;
  // A triangular product masks its output (torch.triu(A @ B)): not a plain GEMM, whatever the signature.
  Task tri = imported("kb01_matmul_square", "kb1_014_matmul_for_upper_triangular_matrices",
                      [](json& d) { d["op_type"] = "kernelbench"; });
  EXPECT_FALSE(infer_binding(tri, &why));
  EXPECT_NE(why.find("is a triangular product"), std::string::npos) << why;
}

}  // namespace

namespace {

// A copy of tasks/sol/attention_causal (q [B, S, Hq, D], k and v [B, S, Hkv, D], bf16, D 64 and 128) under a suite no
// bindings file knows, without its op_type, with khive.op = op (as khive_torch.recognize --write records it).
// workloads: in place of the task's (one JSON object a line), when given.
Task attention_import(const std::string& as, const json& op, const std::function<void(json&)>& edit = nullptr,
                      const std::vector<json>& workloads = {}) {
  std::function<void(std::string&)> replace_workloads;
  if (!workloads.empty())
    replace_workloads = [&](std::string& text) {
      text.clear();
      for (const auto& w : workloads) text += w.dump() + "\n";
    };
  return edited_copy(
      repo() / "tasks/sol/attention_causal",
      [&](json& def) {
        def["name"] = as;
        def.erase("op_type");
        def["khive"]["op"] = op;
        if (edit) edit(def);
      },
      replace_workloads, "imported/" + as);
}

// khive.op.attention as recognize_attention.py records a plain causal GQA attention (flash layout, SDPA's head
// mapping, 1/sqrt(D), the mask bottom-right aligned), with `changes` applied.
json attention_op(const json& changes = json::object()) {
  json a = {{"q", "q"},
            {"k", "k"},
            {"v", "v"},
            {"layout", {{"q", "bshd"}, {"k", "bshd"}, {"v", "bshd"}, {"o", "bshd"}}},
            {"gqa", "interleave"},
            {"causal", "bottom_right"},
            {"scale", "1/sqrt(D)"},
            {"head_dim", 64}};
  if (changes.is_object()) a.merge_patch(changes);
  return {{"op", "attention"}, {"family", "attention"}, {"attention", a}, {"ops", {"_softmax", "bmm"}}};
}

// An attention the reference's graph showed to be exactly the templates' (khive.op.attention) binds to them: a
// plain causal GQA attention on both backends, non-causal, torch's top-left causal mask where every workload has
// as many queries as keys (the alignments agree), and decode.
TEST(AutoBind, RecognisedAttentionBindsTheAttentionTemplates) {
  Task t = attention_import("gqa_causal", attention_op());
  ASSERT_EQ(repo_library().binding_for(t), nullptr);
  EXPECT_EQ(recognised_op_name(t), "attention");
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "attention");
  EXPECT_EQ(b->spec, json::parse(R"({"q": "q", "k": "k", "v": "v", "o": "o", "causal": true, "decode": false})"));
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(t, be, *b);
    EXPECT_EQ(bt.op, "causal");
    std::vector<std::string> names;
    for (const Template* tp : applicable_templates(repo_library(), bt)) names.push_back(tp->name);
    if (be == Backend::cpu)
      EXPECT_EQ(names, std::vector<std::string>{"attention.cpu"});
    else
      EXPECT_NE(std::find(names.begin(), names.end(), "attention.cuda_flash"), names.end()) << names.size();
  }
  TunerOptions o;
  o.kernels_dir = repo() / "kernels";
  auto agent = make_tuner_agent(o);
  EXPECT_FALSE(agent->strategies(t, Backend::cpu).empty());

  b = infer_binding(attention_import("gqa", attention_op({{"causal", false}})), &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->spec["causal"], false);
  b = infer_binding(attention_import("gqa_top_left", attention_op({{"causal", "top_left"}})), &why);
  ASSERT_TRUE(b) << why;  // attention_causal's workloads have Sq = Skv: top-left and bottom-right agree
  EXPECT_EQ(b->spec["causal"], true);
  // A number equal to 1/sqrt(D) binds while every workload has that D.
  b = infer_binding(
      attention_import("gqa_scale", attention_op({{"scale", 0.125}}), nullptr,
                       {{{"uuid", "d64"}, {"axes", {{"B", 2}, {"S", 9}, {"Hq", 4}, {"Hkv", 2}, {"D", 64}}}}}),
      &why);
  ASSERT_TRUE(b) << why;

  Task dec = attention_import("decode", attention_op({{"layout", {{"q", "bhd"}, {"o", "bhd"}}}, {"causal", false}}),
                              [](json& d) {
                                d["inputs"]["q"]["shape"] = {"B", "Hq", "D"};
                                d["outputs"]["o"]["shape"] = {"B", "Hq", "D"};
                              });
  b = infer_binding(dec, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->spec["decode"], true);
  EXPECT_EQ(bind_task(dec, Backend::cuda, *b).op, "decode");
}

// Anything the templates do not compute is refused, each difference said: ops beyond the attention (recorded by
// recognize as khive.op.why, no reading), another layout, the KV heads tiled, another scale, a top-left mask where
// queries and keys differ in number, fp32; a malformed reading is a task format error naming the field.
TEST(AutoBind, RecognisedAttentionThatDiffersIsRefusedWithTheReason) {
  std::string why;
  json rope = {{"op", "attention"},
               {"family", "attention"},
               {"why", "q is computed from q, cos, sin by mul, add, slice, neg, cat (rope), not read from an input"}};
  EXPECT_FALSE(infer_binding(attention_import("rope", rope), &why));
  EXPECT_NE(why.find("the reference is an attention, not one the attention templates compute: q is computed from q, "
                     "cos, sin"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("(rope)"), std::string::npos) << why;
  json bare = {{"op", "attention"}, {"family", "attention"}};
  EXPECT_FALSE(infer_binding(attention_import("bare", bare), &why));
  EXPECT_NE(why.find("no attention of three inputs was read from its graph"), std::string::npos) << why;

  auto refused = [&](const std::string& as, const json& changes, const std::string& says,
                     const std::function<void(json&)>& edit = nullptr, const std::vector<json>& workloads = {}) {
    Task t = attention_import(as, attention_op(changes), edit, workloads);
    std::string w;
    EXPECT_FALSE(infer_binding(t, &w)) << as;
    EXPECT_NE(w.find("the reference is an attention, not one the attention templates compute: "), std::string::npos)
        << w;
    EXPECT_NE(w.find(says), std::string::npos) << w;
    TunerOptions o;
    o.kernels_dir = repo() / "kernels";
    EXPECT_TRUE(make_tuner_agent(o)->strategies(t, Backend::cpu).empty()) << as;
  };
  refused("bhsd", {{"layout", {{"q", "bhsd"}, {"k", "bhsd"}, {"v", "bhsd"}, {"o", "bhsd"}}}},
          "q, k, v, o are [B, H, S, D] (heads before the sequence); the templates take q and o as [B, Sq, Hq, D] "
          "(decode: [B, Hq, D]) and k and v as [B, Skv, Hkv, D]");
  refused("bhsd_kv", {{"layout", {{"k", "bhsd"}}}}, ": k is [B, H, S, D] (heads before the sequence); the templates");
  refused("merged_o", {{"layout", {{"o", "bs(hd)"}}}}, ": o is [B, S, H*D] (the heads merged); the templates");
  refused("tiled", {{"gqa", "tile"}}, "query head h reads KV head h % Hkv");
  refused("scale", {{"scale", 0.1}}, "the scores are scaled by 0.1, not by 1/sqrt(D) = 0.125 (D = 64)");
  // 1/sqrt(64) as a number, and a workload of another head dim: that number is not 1/sqrt(D) there.
  refused("scale_d", {{"scale", 0.125}},
          "1/sqrt(D) where the reference was traced, D = 64), and workload "
          "attention_causal-B2-S33-Hq4-Hkv2-D128 has D = 128");
  refused("fp32", {}, "q is float32; the attention templates compute bfloat16 and float16", [](json& d) {
    for (const char* n : {"q", "k", "v"}) d["inputs"][n]["dtype"] = "float32";
    d["outputs"]["o"]["dtype"] = "float32";
  });
  // torch's is_causal aligns the mask top-left; with fewer queries than keys the templates' bottom-right one differs.
  refused(
      "top_left", {{"causal", "top_left"}},
      "the causal mask is aligned top-left (query i sees keys j <= i, torch's is_causal) and workload kv-longer has "
      "Sq = 3 != Skv = 8",
      [](json& d) {
        d["axes"]["Skv"] = {{"type", "var"}};
        d["inputs"]["k"]["shape"] = {"B", "Skv", "Hkv", "D"};
        d["inputs"]["v"]["shape"] = {"B", "Skv", "Hkv", "D"};
      },
      {{{"uuid", "kv-equal"}, {"axes", {{"B", 1}, {"S", 4}, {"Skv", 4}, {"Hq", 2}, {"Hkv", 1}, {"D", 64}}}},
       {{"uuid", "kv-longer"}, {"axes", {{"B", 1}, {"S", 3}, {"Skv", 8}, {"Hq", 2}, {"Hkv", 1}, {"D", 64}}}}});

  try {
    attention_import("bad", attention_op({{"layout", {{"q", "bsdh"}}}}));
    ADD_FAILURE() << "khive.op.attention.layout.q = bsdh loaded";
  } catch (const TaskFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("khive.op.attention.layout.q"), std::string::npos) << e.what();
  }
  try {
    attention_import("bad_name", attention_op({{"v", "value"}}));
    ADD_FAILURE() << "khive.op.attention.v = value loaded";
  } catch (const TaskFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("khive.op.attention.v"), std::string::npos) << e.what();
  }
}

// A reference recognition could not read is recorded as khive.op = {op: "unknown", why}: the refusal says why,
// where it used to name the definition as the op; a name the tuner knows still binds.
TEST(AutoBind, UnrecognisedReferenceSaysWhy) {
  json unknown = {{"op", "unknown"}, {"why", "tracing run() failed: RuntimeError: aten._local_scalar_dense (.item())"}};
  Task t = imported("kb19_relu", "006_multimodal_rope_position_calculation", [&](json& d) {
    d.erase("op_type");
    d["khive"]["op"] = unknown;
  });
  EXPECT_EQ(recognised_op_name(t), "006_multimodal_rope_position_calculation");
  std::string why;
  EXPECT_FALSE(infer_binding(t, &why));
  EXPECT_NE(why.find("the reference was not recognised (tracing run() failed: RuntimeError: "
                     "aten._local_scalar_dense (.item())), and the task's name "
                     "'006_multimodal_rope_position_calculation' is no op the tuner recognises either"),
            std::string::npos)
      << why;
  TunerOptions o;
  o.kernels_dir = repo() / "kernels";
  const std::string said = make_tuner_agent(o)->idle_because(t, Backend::cpu);
  EXPECT_NE(said.find("tracing run() failed"), std::string::npos) << said;
  Task relu = imported("kb19_relu", "kb1_019_relu", [&](json& d) {
    d["op_type"] = "kernelbench";
    d["khive"]["op"] = unknown;
  });
  EXPECT_EQ(recognised_op_name(relu), "relu");
  EXPECT_TRUE(infer_binding(relu, &why)) << why;
}

TEST(AutoBind, RmsnormWithEpsFromTheReference) {
  Task t = edited_task("sol/rmsnorm", [](json& d) {
    d["op_type"] = "rmsnorm";
    d["reference"] = "import torch\n\ndef run(x, weight):\n    EPS = 1e-6\n    return x\n";
  });
  // edited_task keeps the repository's key (sol/rmsnorm): check the inference directly.
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "rowop");
  EXPECT_EQ(b->spec["op"], "rmsnorm");
  EXPECT_DOUBLE_EQ(b->spec["eps"].get<double>(), 1e-6);
  EXPECT_NO_THROW(bind_task(t, Backend::cpu, *b));
  Task no_eps = edited_task("sol/rmsnorm", [](json& d) { d["reference"] = "def run(x, weight):\n    return x\n"; });
  EXPECT_FALSE(infer_binding(no_eps, &why));
  EXPECT_NE(why.find("nor eps = <number> in the reference"), std::string::npos) << why;
}

// Every workload line of a task given eps = 1e-5 as a scalar input (the definitions below add the input).
void scalar_eps(std::string& w) {
  std::string out;
  std::istringstream in(w);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::ordered_json::parse(line);
    j["inputs"]["eps"] = {{"type", "scalar"}, {"value", 1e-5}};
    out += j.dump() + "\n";
  }
  w = out;
}

// SOL L1 069 and FlashInfer's fused_add_rmsnorm: recognise writes residual_rmsnorm with its operands (the residual
// added before the norm) and a scalar input of eps's value as the eps; the binding reads them, over N-D rows.
TEST(AutoBind, ResidualRmsnormFromTheRecognisedOperands) {
  auto edit = [](const nlohmann::ordered_json& operands) {
    return [operands](nlohmann::ordered_json& d) {
      d["op_type"] = "residual_rmsnorm";
      d["axes"]["B"] = {{"type", "const"}, {"value", 2}};
      for (const char* t : {"x", "residual"}) d["inputs"][t]["shape"] = {"B", "T", "H"};
      d["inputs"]["eps"] = {{"shape", nullptr}, {"dtype", "float32"}};
      d["outputs"].erase("residual_out");
      if (d["khive"].contains("tolerance")) d["khive"]["tolerance"].erase("residual_out");
      d["outputs"]["y"]["shape"] = {"B", "T", "H"};
      d["khive"]["op"] = {{"op", "residual_rmsnorm"}, {"family", "rowop"}, {"eps", 1e-5}, {"operands", operands}};
    };
  };
  Task t = edited_task("sol/add_rmsnorm",
                       edit({{"x", "residual"}, {"residual", "x"}, {"weight", "weight"}, {"eps", "eps"}}), scalar_eps);
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "rowop");
  EXPECT_EQ(b->spec["op"], "residual_rmsnorm");
  EXPECT_EQ(b->spec["x"], "residual");
  EXPECT_EQ(b->spec["residual"], "x");
  EXPECT_EQ(b->spec["eps"], "eps");  // the input, read per call
  EXPECT_NO_THROW(bind_task(t, Backend::cpu, *b));
  // A residual of another shape than x is refused, naming what was expected.
  Task bad = edited_task("sol/add_rmsnorm", edit({{"x", "residual"}, {"residual", "weight"}, {"weight", "weight"}}),
                         scalar_eps);
  EXPECT_FALSE(infer_binding(bad, &why));
  EXPECT_EQ(has_all(why, {"residual of x's shape", "khive.op.operands x, weight, residual"}), "");
}

// SOL L1 033, a post-norm residual: recognise writes the chain rowop rmsnorm (eps a scalar input) -> elementwise add
// of the residual over bf16 tensors; the chain binds with the eps input read by stage 1.
TEST(AutoBind, PostNormResidualChainWithAnEpsInput) {
  Task t = edited_task(
      "sol/add_rmsnorm",
      [](nlohmann::ordered_json& d) {
        d["op_type"] = "chain";
        d["inputs"]["eps"] = {{"shape", nullptr}, {"dtype", "float32"}};
        d["outputs"].erase("residual_out");
        if (d["khive"].contains("tolerance")) d["khive"]["tolerance"].erase("residual_out");
        d["khive"]["op"] = nlohmann::ordered_json::parse(R"J({"op": "chain", "family": "chain", "stages": [
          {"op": "rmsnorm", "family": "rowop", "eps": 1e-5, "operands": {"x": "x", "weight": "weight", "eps": "eps"},
           "inputs": ["x", "weight", "eps"], "output": "khive_t1"},
          {"op": "elementwise", "family": "elementwise", "expression": "(khive_t1 + residual)",
           "flags": ["named_inputs"], "inputs": ["khive_t1", "residual"], "output": null}]})J");
      },
      scalar_eps);
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->family, "chain");
  ASSERT_EQ(b->spec["stages"].size(), 2u);
  EXPECT_EQ(b->spec["stages"][0]["eps"], "eps");
  EXPECT_EQ(b->spec["stages"][0]["y"], "khive_t1");
  EXPECT_EQ(b->spec["stages"][1]["op"], "(khive_t1 + residual)");
  EXPECT_NO_THROW(bind_task(t, Backend::cpu, *b));
  EXPECT_NO_THROW(bind_task(t, Backend::cuda, *b));
}

}  // namespace

namespace {

// A projection whose result (or input) passes through layout ops (SOL L1 010, L1 063), as recognize.py writes it:
// x [B, S, 8] times w [6, 8]^T, the heads H = 2 of D = 3; axes B and S vary over two workloads.
Task heads_task(const std::string& as, const json& inputs, const json& outputs, const json& op) {
  return edited_copy(
      repo() / "tasks/cutegen26/kb12_matmul_diag",
      [&](json& d) {
        d = json{{"name", as},
                 {"axes",
                  {{"B", {{"type", "var"}}},
                   {"S", {{"type", "var"}}},
                   {"HID", {{"type", "const"}, {"value", 8}}},
                   {"H", {{"type", "const"}, {"value", 2}}},
                   {"D", {{"type", "const"}, {"value", 3}}},
                   {"HD", {{"type", "expr"}, {"expression", "H * D"}}}}},
                 {"inputs", inputs},
                 {"outputs", outputs},
                 {"khive", {{"op", op}}}};
      },
      [](std::string& w) {
        w = "{\"uuid\": \"a\", \"axes\": {\"B\": 2, \"S\": 4}}\n{\"uuid\": \"b\", \"axes\": {\"B\": 1, \"S\": 7}}\n";
      },
      "imported/" + as);
}

json bf16(std::initializer_list<const char*> shape) {
  return json{{"shape", json(std::vector<std::string>(shape.begin(), shape.end()))}, {"dtype", "bfloat16"}};
}

}  // namespace

// gemm -> copy: the product's [B, S, HD] result read as [B, H, S, D] (heads split, then transposed) by an elementwise
// stage through its view; a view that reads past the product is refused naming the stage's field.
TEST(AutoBind, AProductsResultReadThroughAViewIsAChainWithACopyStage) {
  const json op = json::parse(R"J({"op": "chain", "family": "chain", "stages": [
    {"op": "matmul", "family": "gemm", "operands": {"A": "x", "B": "w", "layout_a": "row", "layout_b": "col"},
     "inputs": ["w", "x"], "output": "khive_t1"},
    {"op": "elementwise", "family": "elementwise", "expression": "khive_t1", "flags": ["named_inputs"],
     "views": {"khive_t1": {"shape": ["out0", "out1", "out2", "out3"], "strides": ["in1 * in2", "out3", "in2", "1"],
                            "offset": "0"}}, "inputs": ["khive_t1"], "output": null}]})J");
  const json ins = {{"x", bf16({"B", "S", "HID"})}, {"w", bf16({"HD", "HID"})}};
  const json outs = {{"y", bf16({"B", "H", "S", "D"})}};
  Task t = heads_task("vproj", ins, outs, op);
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  ASSERT_EQ(b->spec["stages"].size(), 2u);
  EXPECT_EQ(b->spec["stages"][0]["M"], json::array({"B", "S"}));
  EXPECT_EQ(b->spec["stages"][1]["views"]["khive_t1"]["strides"][1], "out3");
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(t, be, *b);
    ASSERT_EQ(bt.stages.size(), 2u);
    EXPECT_NE(bt.stages[1].placeholders.at("ENTRY").find("{{(B), (int64_t(2)), (S), (int64_t(3))}}"), std::string::npos)
        << bt.stages[1].placeholders.at("ENTRY");
  }
  json bad = op;
  bad["stages"][1]["views"]["khive_t1"]["offset"] = "1";
  Task off = heads_task("vproj_off", ins, outs, bad);
  auto b2 = infer_binding(off, &why);
  ASSERT_TRUE(b2) << why;
  EXPECT_EQ(has_all(bind_error(off, *b2).what(),
                    {"stages[1].views.khive_t1", "a view inside khive_t1's 48 elements", "workload a"}),
            "");
}

// copy -> gemm: attn [B, H, S, D] transposed and merged to [B, S, HD] by a copy stage whose sizes (khive.op.shape)
// shape the intermediate, then the product of its rows.
TEST(AutoBind, AnInputReadThroughAViewIsCopiedBeforeTheProduct) {
  const json op = json::parse(R"J({"op": "chain", "family": "chain", "stages": [
    {"op": "elementwise", "family": "elementwise", "expression": "a", "flags": ["named_inputs"],
     "views": {"a": {"shape": ["out0", "out1", "in1", "in3"], "strides": ["in1 * in2 * in3", "in3", "in2 * in3", "1"],
                     "offset": "0"}}, "inputs": ["a"], "output": "khive_t1", "shape": ["in0", "in2", "in1 * in3"]},
    {"op": "matmul", "family": "gemm", "operands": {"A": "khive_t1", "B": "w", "layout_a": "row", "layout_b": "col"},
     "inputs": ["khive_t1", "w"], "output": null}]})J");
  Task t = heads_task("oproj", {{"a", bf16({"B", "H", "S", "D"})}, {"w", bf16({"HID", "HD"})}},
                      {{"y", bf16({"B", "S", "HID"})}}, op);
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->spec["stages"][0]["shape"], json::array({"in0", "in2", "in1 * in3"}));
  EXPECT_EQ(b->spec["stages"][1]["K"], "HD");  // the intermediate's merged axis named as the task's HD
  for (Backend be : {Backend::cpu, Backend::cuda}) EXPECT_NO_THROW(bind_task(t, be, *b));
  // sizes that are not the output's are refused naming the field
  json bad = b->spec;
  bad["stages"][0]["shape"][2] = "in1";
  Binding wrong = *b;
  wrong.spec = bad;
  EXPECT_EQ(has_all(bind_error(t, wrong).what(), {"stages[0]"}), "");
}

namespace {

// An attention product as SOL-ExecBench writes it (L1 031/049, 032/083), in bf16: inputs and one output of these
// shapes over axes B, S (var) and H = 4, D = 8 (HD = H * D), khive.op as recognize.py writes it, two workloads; a
// float32 scalar input "scaling" where `inputs` has one.
Task attention_product(const std::string& as, const json& inputs, const json& outputs, const json& op) {
  const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-autobind-test") / "imported" / as;
  fs::create_directories(d);
  const json def = {{"name", as},
                    {"axes",
                     {{"B", {{"type", "var"}}},
                      {"S", {{"type", "var"}}},
                      {"H", {{"type", "const"}, {"value", 4}}},
                      {"D", {{"type", "const"}, {"value", 8}}},
                      {"HD", {{"type", "expr"}, {"expression", "H * D"}}}}},
                    {"inputs", inputs},
                    {"outputs", outputs},
                    {"khive", {{"op", op}}}};
  std::ofstream(d / "definition.json") << def.dump(2);
  std::string w;
  for (const auto& [uuid, b, s] : {std::tuple{"a", 2, 5}, std::tuple{"b", 1, 9}}) {
    json one = {{"uuid", uuid}, {"axes", {{"B", b}, {"S", s}}}};
    if (inputs.contains("scaling")) one["inputs"] = {{"scaling", {{"type", "scalar"}, {"value", 0.125}}}};
    w += one.dump() + "\n";
  }
  std::ofstream(d / "workload.jsonl") << w;
  return load_task(d);
}

}  // namespace

// torch.matmul of 4-D operands: from the shapes alone (no operands recorded) a batch over C's two leading axes; from
// the graph, q @ k^T with K of one head read for every query head (GQA's repeat_kv of one KV head) and a float32
// scalar input in the epilogue (SOL L1 049); and p @ v with the result's heads transposed and merged by a copy stage
// (SOL L1 032, 083), the intermediate [B, H, S, D].
TEST(AutoBind, ProductsBatchedOverTwoAxes) {
  std::string why;
  const json shapes_only = {{"op", "matmul"}, {"family", "gemm"}, {"ops", {"bmm"}}};
  Task plain = attention_product("bhsd_matmul", {{"q", bf16({"B", "H", "S", "D"})}, {"k", bf16({"B", "H", "D", "S"})}},
                                 {{"s", bf16({"B", "H", "S", "S"})}}, shapes_only);
  auto b = infer_binding(plain, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->spec["batch"], json::array({"B", "H"}));
  EXPECT_EQ(b->spec["K"], "D");
  EXPECT_EQ(b->spec["layout_b"], "row");
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(plain, be, *b);
    EXPECT_NE(bt.placeholders.at("ENTRY").find("khive_batch = int64_t(1) * B * int64_t(4);"), std::string::npos)
        << bt.placeholders.at("ENTRY");
    EXPECT_EQ(bt.workload_vars[0].at("BATCH_AXES"), 1);
  }

  const json qk = json::parse(R"J({"op": "gemm+epilogue", "family": "gemm", "ops": ["bmm", "mul"],
    "expression": "(x * b)", "operands": {"A": "q", "B": "k", "layout_a": "row", "layout_b": "col", "bias": "scaling"}})J");
  Task gqa = attention_product("gqa_qk",
                               {{"q", bf16({"B", "H", "S", "D"})},
                                {"k", bf16({"B", "1", "S", "D"})},
                                {"scaling", {{"shape", nullptr}, {"dtype", "float32"}}}},
                               {{"s", bf16({"B", "H", "S", "S"})}}, qk);
  b = infer_binding(gqa, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->spec["batch"], json::array({"B", "H"}));
  EXPECT_EQ(b->spec["bias"], "scaling");
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(gqa, be, *b);
    EXPECT_EQ(bt.op, "gemm_epilogue");
    const std::string &p = bt.placeholders.at("PROLOGUE"), &e = bt.placeholders.at("ENTRY");
    EXPECT_NE(p.find("return khive_epi(v, g.scal[0]);"), std::string::npos) << p;
    EXPECT_NE(e.find("khive_g.bias = nullptr;\n  khive_g.scal[0] = float(scaling);"), std::string::npos) << e;
    EXPECT_NE(e.find("khive_g.bdim[1] = int64_t(4); khive_g.a_bst[1] = khive_M * khive_K; khive_g.b_bst[1] = 0;"),
              std::string::npos)
        << e;
    EXPECT_NE(bt.summary.find("b = scaling)"), std::string::npos) << bt.summary;
  }

  const json pv = json::parse(R"J({"op": "chain", "family": "chain", "ops": ["bmm"], "stages": [
    {"op": "matmul", "family": "gemm", "operands": {"A": "p", "B": "v", "layout_a": "row", "layout_b": "row"},
     "inputs": ["p", "v"], "output": "khive_t1"},
    {"op": "elementwise", "family": "elementwise", "expression": "khive_t1", "flags": ["named_inputs"],
     "views": {"khive_t1": {"shape": ["out0", "out1", "in1", "in3"], "strides": ["in1 * in2 * in3", "in3", "in2 * in3",
               "1"], "offset": "0"}}, "inputs": ["khive_t1"], "output": null}]})J");
  Task merged = attention_product("pv_merged", {{"p", bf16({"B", "H", "S", "S"})}, {"v", bf16({"B", "H", "S", "D"})}},
                                  {{"o", bf16({"B", "S", "HD"})}}, pv);
  b = infer_binding(merged, &why);
  ASSERT_TRUE(b) << why;
  ASSERT_EQ(b->spec["stages"].size(), 2u);
  EXPECT_EQ(b->spec["stages"][0]["batch"], json::array({"B", "H"}));
  EXPECT_EQ(b->spec["stages"][0]["C"], "khive_t1");
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(merged, be, *b);
    ASSERT_EQ(bt.stages.size(), 2u);
    EXPECT_NE(bt.stages[0].summary.find("batch [B, H]"), std::string::npos) << bt.stages[0].summary;
    // the copy reads the product's [B, H, S, D] (in0..in3) with the heads after the sequence
    EXPECT_NE(bt.stages[1].placeholders.at("ENTRY").find("{{(B), (S), (int64_t(4)), (int64_t(8))}}"), std::string::npos)
        << bt.stages[1].placeholders.at("ENTRY");
  }
}
