// Elementwise stages over inputs of several float storage types (issue 24: SOL-ExecBench's bf16 gradients in float32
// references, L1 013 / 051 / 090): an input of another type than the output's is read as its own type (khive_read,
// khive_foreign(k)) and converted to float like the others, read at i, broadcast or through a view; and a chain's
// pointwise intermediate stored as its stage's "dtype" (float32 where the reference computes in float32). The
// binder's prologue and entry, its refusals by field, rendered elementwise.cpu kernels against the formula exactly
// over other sizes (a planted misread type fails), and the chain's buffer type.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tuner_support.hpp"

#include "khive/compile/builder.hpp"
#include "khive/tuner/auto_bind.hpp"

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// C [N, K] (out_dtype) = A * B + D - E: A bf16 [N, K] read at i, B float32 [N, K], D float16 [K] broadcast per
// column, E bf16 [K, N] read transposed through a view; two workloads. `edit` changes the definition further.
Task mixed_task(const char* out_dtype, const std::function<void(json&)>& edit = {}) {
  const fs::path d = make_temp_dir(fs::temp_directory_path(), "khive-tuner-test") / "imported" / "mixed";
  fs::create_directories(d);
  auto t = [](std::initializer_list<const char*> s, const char* dt) { return json{{"shape", s}, {"dtype", dt}}; };
  json def = {{"name", "mixed"},
              {"axes", {{"N", {{"type", "var"}}}, {"K", {{"type", "var"}}}}},
              {"inputs",
               {{"A", t({"N", "K"}, "bfloat16")},
                {"B", t({"N", "K"}, "float32")},
                {"D", t({"K"}, "float16")},
                {"E", t({"K", "N"}, "bfloat16")}}},
              {"outputs", {{"C", t({"N", "K"}, out_dtype)}}}};
  if (edit) edit(def);
  std::ofstream(d / "definition.json") << def.dump(2);
  std::ofstream(d / "workload.jsonl") << "{\"uuid\": \"a\", \"axes\": {\"N\": 3, \"K\": 5}}\n"
                                         "{\"uuid\": \"b\", \"axes\": {\"N\": 8, \"K\": 70}}\n";
  return load_task(d);
}

// The elementwise binding of `spec` for the mixed task (no bindings file names it).
Binding ew_binding(const json& spec) {
  Binding b;
  b.key = "imported/mixed";
  b.family = "elementwise";
  b.spec = spec;
  b.file = "mixed.json";
  return b;
}

json mixed_spec() {
  return {{"family", "elementwise"},
          {"inputs", {"A", "B", "D", "E"}},
          {"output", "C"},
          {"op", "A * B + D - E"},
          {"views", {{"E", {{"shape", {"out0", "out1"}}, {"strides", {"1", "in1"}}}}}}};
}

// Every element of C against the formula computed with the prelude's own conversions (the kernel computes the same
// float operations), exactly; C of bf16 compared by its bits after the same rounding.
std::string mixed_harness(bool bf16_out) {
  std::string h = R"(
#include <cstdio>
#include <vector>
int main() {
  const long long shapes[][2] = {{1, 1}, {3, 5}, {7, 70}, {33, 129}, {2, 1031}};
  long long bad = 0;
  for (auto& s : shapes) {
    const long long N = s[0], K = s[1];
    std::vector<khive_bf16> A(N * K), E(K * N);
    std::vector<float> B(N * K);
    std::vector<khive_f16> D(K);
    std::vector<OUT_T> C(N * K);
    for (long long i = 0; i < N * K; ++i) {
      A[i] = khive_float_to_bf16(0.25f + float(i % 53) * 0.375f);
      B[i] = float((i * 7919) % 1013) / 7.0f - 50.0f;
      E[i] = khive_float_to_bf16(float((i * 31) % 97) * 1.5f - 20.0f);
    }
    for (long long k = 0; k < K; ++k) D[k] = khive_float_to_f16(float(k % 11) * 0.5f - 2.0f);
    khive_launch(A.data(), B.data(), D.data(), E.data(), C.data(), N, K);
    for (long long n = 0; n < N; ++n)
      for (long long k = 0; k < K; ++k) {
        const long long i = n * K + k;
        const float want = khive_bf16_to_float(A[i]) * B[i] + khive_f16_to_float(D[k]) - khive_bf16_to_float(E[k * N + n]);
        bad += !(SAME);
      }
  }
  std::printf("bad %lld\n", bad);
}
)";
  const std::string t = bf16_out ? "khive_bf16" : "float";
  const std::string same = bf16_out ? "C[i].bits == khive_float_to_bf16(want).bits" : "C[i] == want";
  h.replace(h.find("OUT_T"), 5, t);
  h.replace(h.find("SAME"), 4, same);
  return h;
}

}  // namespace

TEST(ElementwiseMixed, InputsOfOtherTypesAreReadAsTheirOwnType) {
  const Task t = mixed_task("float32");
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(t, be, ew_binding(mixed_spec()));
    const std::string& p = bt.placeholders.at("PROLOGUE");
    const std::string& e = bt.placeholders.at("ENTRY");
    const std::string bf = be == Backend::cuda ? "__nv_bfloat16" : "khive_bf16";
    const std::string hf = be == Backend::cuda ? "__half" : "khive_f16";
    EXPECT_TRUE(has(p, "constexpr unsigned long long KHIVE_FOREIGN_MASK = 0xdull;")) << p;  // A, D, E; B is C's type
    EXPECT_TRUE(has(p, "constexpr bool KHIVE_ANY_FOREIGN = true;")) << p;
    EXPECT_TRUE(has(p, "case 0: return khive_to_float_bf16(reinterpret_cast<const " + bf + "*>(in.p[0])[j]);")) << p;
    EXPECT_TRUE(has(p, "case 2: return khive_to_float_f16(reinterpret_cast<const " + hf + "*>(in.p[2])[j]);")) << p;
    EXPECT_TRUE(has(p, "case 3: return khive_to_float_bf16(")) << p;
    EXPECT_FALSE(has(p, "case 1:")) << p;  // B is float32 like C: read as khive_t
    EXPECT_TRUE(has(e,
                    "khive_in{ {reinterpret_cast<const khive_t*>(A), B, reinterpret_cast<const khive_t*>(D), "
                    "reinterpret_cast<const khive_t*>(E)}"))
        << e;
    EXPECT_TRUE(has(bt.summary, "A (bfloat16)")) << bt.summary;
    EXPECT_TRUE(has(bt.summary, "D (float16) (broadcast")) << bt.summary;
  }
  // One storage type throughout: no foreign input, khive_read is the plain read.
  const Task same = mixed_task("float32", [](json& d) {
    for (const char* n : {"A", "D", "E"}) d["inputs"][n]["dtype"] = "float32";
  });
  const std::string p = bind_task(same, Backend::cpu, ew_binding(mixed_spec())).placeholders.at("PROLOGUE");
  EXPECT_TRUE(has(p, "KHIVE_FOREIGN_MASK = 0x0ull;")) << p;
  EXPECT_FALSE(has(p, "switch (k)")) << p;
}

TEST(ElementwiseMixed, BadInputTypesAndDtypesAreRefusedNamingTheField) {
  const Task ints = mixed_task("float32", [](json& d) { d["inputs"]["B"]["dtype"] = "int32"; });
  EXPECT_EQ(has_all(bind_error(ints, ew_binding(mixed_spec())).what(),
                    {"inputs[1]", "a float32, bfloat16 or float16 tensor", "\"B\" of dtype int32"}),
            "");
  const Task t = mixed_task("float32");
  json s = mixed_spec();
  s["dtype"] = "bfloat16";
  EXPECT_EQ(has_all(bind_error(t, ew_binding(s)).what(), {".dtype", "C's storage type \"float32\"", "bfloat16"}), "");
}

TEST(ElementwiseMixed, CpuKernelsReadEachTypeExactly) {
  for (const char* out : {"float32", "bfloat16"}) {
    const Task task = mixed_task(out);
    const BoundTask bt = bind_task(task, Backend::cpu, ew_binding(mixed_spec()));
    const Template& t = repo_template("elementwise.cpu");
    const std::string h = mixed_harness(std::string(out) == "bfloat16");
    const std::string prelude = generate_prelude(task, Backend::cpu);
    for (const char* vec : {"1", "8", "16"}) {  // chunks of 1024 start inside rows (2 x 1031)
      Point p = t.default_point();
      p["VEC"] = vec;
      p["MIN_PAR"] = "0";
      p["CHUNK"] = "1024";
      EXPECT_EQ(run_cpu_kernel(prelude + render(t, bt, p), h, fmt::format("ew-mixed-{}-{}", out, vec)), "bad 0\n")
          << out << " VEC " << vec;
    }
    // Planted: D's float16 bits read as bf16 must fail the check.
    std::string src = render(t, bt, t.default_point());
    const std::string read_d = "case 2: return khive_to_float_f16(reinterpret_cast<const khive_f16*>";
    const auto at = src.find(read_d);
    ASSERT_NE(at, std::string::npos) << src;
    src.replace(at, read_d.size(), "case 2: return khive_bf16_to_float(reinterpret_cast<const khive_bf16*>");
    EXPECT_NE(run_cpu_kernel(prelude + src, h, fmt::format("ew-mixed-planted-{}", out)), "bad 0\n") << out;
  }
}

// A chain whose pointwise stage stores its intermediate as "dtype" float32 from a bf16 and a float32 input (a bf16
// gradient times a float32 weight), read by a second pointwise stage writing a float32 output; without "dtype" the
// intermediate is bf16 (the chain's rule: its widest input's type) and the result is rounded; a dtype that is no
// float storage type is refused naming the field; and a reduction into a float32 output binds only over the float32
// intermediate (the reduce family keeps x's type: SOL L1 013's grad_weight).
TEST(ElementwiseMixed, AChainStoresAPointwiseIntermediateAsItsDtype) {
  const Task task = mixed_task("float32", [](json& d) {
    d["outputs"] = {{"S", {{"shape", {"N", "K"}}, {"dtype", "float32"}}}};
    d["inputs"].erase("D");
    d["inputs"].erase("E");
  });
  json chain = json::parse(R"J({"stages": [
    {"family": "elementwise", "inputs": ["A", "B"], "output": "t1", "op": "A * B", "dtype": "float32"},
    {"family": "elementwise", "inputs": ["t1"], "output": "S", "op": "t1 + 0.25f"}]})J");
  const auto binding = [](const json& s) { return chain_binding_of("imported/mixed", "mixed.json", s); };
  const BoundTask bt = bind_task(task, Backend::cpu, binding(chain));
  EXPECT_TRUE(has(bt.placeholders.at("RUN"), "float* t1 = static_cast<float*>")) << bt.placeholders.at("RUN");
  const std::string h = R"(
#include <cstdio>
#include <vector>
int main() {
  long long bad = 0;
  for (long long N : {1, 4, 9})
    for (long long K : {1, 300, 2049}) {
      std::vector<khive_bf16> A(N * K);
      std::vector<float> B(N * K), S(N * K, -7.0f);
      for (long long i = 0; i < N * K; ++i) {
        A[i] = khive_float_to_bf16(1.0f + float(i % 13) / 128.0f);
        B[i] = 1.0f + float(i % 7) / 1024.0f;
      }
      khive_launch(A.data(), B.data(), S.data(), N, K);
      for (long long i = 0; i < N * K; ++i) bad += S[i] != khive_bf16_to_float(A[i]) * B[i] + 0.25f;
    }
  std::printf("bad %lld\n", bad);
}
)";
  const Template& t = *applicable_templates(repo_library(), bt).front();
  const std::string prelude = generate_prelude(task, Backend::cpu);
  EXPECT_EQ(run_cpu_kernel(prelude + render(t, bt, t.default_point()), h, "ew-mixed-chain"), "bad 0\n");
  // Stored as bf16, the products lose their low bits (1 + i / 128 times 1 + j / 1024 needs more than 8): it fails.
  json rounded = chain;
  rounded["stages"][0].erase("dtype");
  const BoundTask rb = bind_task(task, Backend::cpu, binding(rounded));
  EXPECT_TRUE(has(rb.placeholders.at("RUN"), "khive_bf16* t1")) << rb.placeholders.at("RUN");
  EXPECT_NE(run_cpu_kernel(prelude + render(t, rb, t.default_point()), h, "ew-mixed-chain-bf16"), "bad 0\n");
  // A dtype that is no float storage type is refused naming the stage and the field.
  json bad = chain;
  bad["stages"][0]["dtype"] = "int8";
  EXPECT_EQ(has_all(refusal_of(task, binding(bad)), {"stages[0]", "dtype: expected the intermediate's storage type"}),
            "");
  // A sum of the products into a float32 output: over a float32 intermediate it binds, over a bf16 one the reduce
  // family refuses it (its output has x's type).
  const Task sum = mixed_task("float32", [](json& d) {
    d["outputs"] = {{"S", {{"shape", {"N"}}, {"dtype", "float32"}}}};
    d["inputs"].erase("D");
    d["inputs"].erase("E");
  });
  json summed = chain;
  summed["stages"][1] = {{"family", "reduce"}, {"op", "sum"}, {"x", "t1"}, {"y", "S"}, {"dim", 1}};
  EXPECT_EQ(refusal_of(sum, binding(summed)), "bound");
  summed["stages"][0].erase("dtype");
  EXPECT_EQ(has_all(refusal_of(sum, binding(summed)), {"stages[1].y", "an output of x's dtype"}), "");
}

// khive.op.stages[i].dtype as recognize.py writes it: the inferred chain's stage carries it and the intermediate is
// stored so; a bad one is refused naming khive.op.stages[0].dtype.
TEST(ElementwiseMixed, ARecognisedStagesDtypeReachesTheChain) {
  auto op = [](const json& dtype) {
    json o = json::parse(R"J({"op": "chain", "family": "chain", "ops": ["mul", "sum"], "stages": [
      {"op": "elementwise", "family": "elementwise", "expression": "(A * B)", "flags": ["named_inputs", "torch_broadcast"],
       "inputs": ["A", "B"], "output": "khive_t1"},
      {"op": "sum", "family": "reduce", "dim": 1, "inputs": ["khive_t1"], "output": "S"}]})J");
    o["stages"][0]["dtype"] = dtype;
    return o;
  };
  auto task = [&](const json& o) {
    return mixed_task("float32", [&](json& d) {
      d["outputs"] = {{"S", {{"shape", {"N"}}, {"dtype", "float32"}}}};
      d["inputs"].erase("D");
      d["inputs"].erase("E");
      d["khive"] = {{"op", o}};
    });
  };
  const Task t = task(op("float32"));
  std::string why;
  auto b = infer_binding(t, &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->spec["stages"][0]["dtype"], "float32");
  const BoundTask bt = bind_task(t, Backend::cpu, *b);
  EXPECT_TRUE(has(bt.placeholders.at("RUN"), "float* khive_t1")) << bt.placeholders.at("RUN");
  std::string why2;
  EXPECT_FALSE(infer_binding(task(op("int8")), &why2));
  EXPECT_EQ(has_all(why2, {"khive.op.stages[0].dtype", "float32, bfloat16 or float16"}), "") << why2;
}
