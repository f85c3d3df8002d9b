// Elementwise stages that read an input through several views ("aliases": another name of the same input with its own
// view) and tell a cat's equal parts apart ("select": the output's axis cut into parts, khive_piece the element's
// part): RoPE's rotate_half, cat((-x2, x1), dim=-1), as the recogniser writes it (python/khive_torch/
// recognize_pointwise.py). The binder's prologue and entry, its refusals by field, and rendered elementwise.cpu
// kernels against the formula, exactly, over other sizes; a planted wrong part size fails.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tuner_support.hpp"

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// C [N, K, H] = A * B + rotate_half(A) with A and B of C's shape, H even, on two workloads (3 5 8 and 2 4 70).
Task rotate_task(const char* second_h = "70") {
  return edited_task(
      "cutegen26/kb12_matmul_diag",
      [&](json& d) {
        d["axes"] = {{"N", {{"type", "var"}}}, {"K", {{"type", "var"}}}, {"H", {{"type", "var"}}}};
        d["inputs"]["A"]["shape"] = json::array({"N", "K", "H"});
        d["inputs"]["B"]["shape"] = json::array({"N", "K", "H"});
        d["outputs"]["C"]["shape"] = json::array({"N", "K", "H"});
        d["khive"].erase("cost");
        d.erase("constraints");
      },
      [&](std::string& w) {
        w = "{\"uuid\": \"a\", \"axes\": {\"N\": 3, \"K\": 5, \"H\": 8}, \"khive\": {\"role\": \"correctness\"}}\n"
            "{\"uuid\": \"b\", \"axes\": {\"N\": 2, \"K\": 4, \"H\": " +
            std::string(second_h) + "}, \"khive\": {\"role\": \"both\"}}\n";
      });
}

// A's upper half read at both halves of C's last axis (A_hi), and its lower half (A_lo): C as [N, K, 2, H / 2], the
// part axis of stride 0.
json half_view(const char* offset) {
  return {
      {"shape", {"out0", "out1", "2", "out2 // 2"}}, {"strides", {"in1 * in2", "in2", "0", "1"}}, {"offset", offset}};
}

json rotate_spec() {
  return {{"family", "elementwise"},
          {"inputs", {"A", "B"}},
          {"output", "C"},
          {"op", "A * B + (khive_piece == 0 ? -A_hi : A_lo)"},
          {"aliases", {{"A_hi", "A"}, {"A_lo", "A"}}},
          {"views", {{"A_hi", half_view("in2 // 2")}, {"A_lo", half_view("0")}}},
          {"select", {{"axis", 2}, {"pieces", 2}}}};
}

}  // namespace

TEST(ElementwiseSelect, AliasesAndTheSelectAreInThePrologueAndTheEntry) {
  const Task t = rotate_task();
  for (Backend be : {Backend::cpu, Backend::cuda}) {
    const BoundTask bt = bind_task(t, be, binding_with(t, rotate_spec()));
    const std::string& p = bt.placeholders.at("PROLOGUE");
    const std::string& e = bt.placeholders.at("ENTRY");
    EXPECT_TRUE(has(p, "constexpr int KHIVE_NIN = 4;")) << p;  // A, B and the two aliases of A
    EXPECT_TRUE(has(p, "KHIVE_VIEW_MASK = 0xcull;")) << p;     // the aliases viewed, A and B read at i
    EXPECT_TRUE(has(p, "constexpr bool KHIVE_HAS_PIECE = true;")) << p;
    EXPECT_TRUE(has(p, "constexpr int64_t KHIVE_PIECES = 2;")) << p;
    EXPECT_TRUE(has(p, "const float A_hi = khive_v[2];")) << p;
    EXPECT_TRUE(has(p, "int khive_piece")) << p;
    EXPECT_TRUE(has(e, "khive_ins khive_in{ {A, B, A, A}")) << e;  // an alias reads its input's pointer
    EXPECT_TRUE(has(e, "khive_in.pinner = int64_t(1) * ((H) / 2);")) << e;
    EXPECT_TRUE(has(bt.summary, "A_hi (A) (view")) << bt.summary;
    EXPECT_TRUE(has(bt.summary, "axis 2 of C in 2 parts (khive_piece)")) << bt.summary;
  }
  // Without a select the op still takes khive_piece (always 0) and the entry's inputs stay const.
  json plain{{"family", "elementwise"}, {"inputs", {"A", "B"}}, {"output", "C"}, {"op", "A * B"}};
  const BoundTask bt = bind_task(t, Backend::cpu, binding_with(t, plain));
  EXPECT_TRUE(has(bt.placeholders.at("PROLOGUE"), "constexpr bool KHIVE_HAS_PIECE = false;"));
  EXPECT_TRUE(has(bt.placeholders.at("ENTRY"), "  const khive_ins khive_in{"));
}

TEST(ElementwiseSelect, BadAliasesAndSelectsAreRefusedNamingTheField) {
  const Task t = rotate_task();
  auto error_for = [&](const json& spec, const Task& task) {
    return std::string(bind_error(task, binding_with(task, spec)).what());
  };
  auto with = [&](const char* k, const json& v) {
    json s = rotate_spec();
    s[k] = v;
    return error_for(s, t);
  };
  EXPECT_EQ(has_all(with("aliases", {{"A_hi", "X"}, {"A_lo", "A"}}), {"aliases.A_hi", "one of the binding's inputs"}),
            "");
  EXPECT_EQ(has_all(with("aliases", {{"B", "A"}}), {"aliases.B", "names no tensor of the task"}), "");
  EXPECT_EQ(has_all(with("aliases", {{"2x", "A"}}), {"aliases.2x", "a C identifier"}), "");
  EXPECT_EQ(has_all(with("aliases", json::array()), {"aliases", "an object"}), "");
  EXPECT_EQ(has_all(with("select", {{"axis", 3}, {"pieces", 2}}), {"select.axis", "0..2"}), "");
  EXPECT_EQ(has_all(with("select", {{"axis", 2}, {"pieces", 1}}), {"select.pieces", "2..64"}), "");
  EXPECT_EQ(has_all(with("select", {{"axis", 2}}), {"select", "\"pieces\""}), "");
  EXPECT_EQ(has_all(with("select", {{"axis", 1}, {"pieces", 2}}), {"select.pieces", "divides C's axis 1 (K)", "5"}),
            "");
  // A workload whose H is odd: no two equal halves (and the views no longer cover C).
  EXPECT_EQ(has_all(error_for(rotate_spec(), rotate_task("7")), {"views.A_hi"}), "");
}

// Rendered elementwise.cpu kernels (VEC 1 and 8, chunks that start inside rows and halves) against the formula,
// exactly, on sizes other than the task's; a planted wrong part size fails.
TEST(ElementwiseSelect, CpuKernelsComputeTheRotateHalfExactly) {
  const Task task = rotate_task();
  const BoundTask bt = bind_task(task, Backend::cpu, binding_with(task, rotate_spec()));
  const std::string harness = R"(
#include <cstdio>
#include <vector>
int main() {
  const long long shapes[][3] = {{1, 1, 2}, {3, 5, 8}, {2, 4, 70}, {7, 3, 70}, {3, 7, 90}, {5, 3, 128}};
  long long bad = 0;
  for (auto& s : shapes) {
    const long long N = s[0], K = s[1], H = s[2], h = H / 2;
    std::vector<float> A(N * K * H), B(N * K * H), C(N * K * H, -1.0f);
    for (std::size_t i = 0; i < A.size(); ++i) A[i] = 0.5f + float(i % 97) * 0.125f;
    for (std::size_t i = 0; i < B.size(); ++i) B[i] = float((i * 7919) % 1013) / 7.0f - 50.0f;
    khive_launch(A.data(), B.data(), C.data(), N, K, H);
    for (long long r = 0; r < N * K; ++r)
      for (long long j = 0; j < H; ++j) {
        const float rot = j < h ? -A[r * H + j + h] : A[r * H + j - h];
        bad += C[r * H + j] != A[r * H + j] * B[r * H + j] + rot;
      }
  }
  std::printf("bad %lld\n", bad);
}
)";
  const Template& t = repo_template("elementwise.cpu");
  for (const char* vec : {"1", "8"}) {  // chunks of 1024 start inside rows and inside halves (7x3x70, 3x7x90)
    Point p = t.default_point();
    p["VEC"] = vec;
    p["MIN_PAR"] = "0";
    p["CHUNK"] = "1024";
    EXPECT_EQ(run_cpu_kernel(render(t, bt, p), harness, fmt::format("ew-select-{}", vec)), "bad 0\n") << "VEC " << vec;
  }
  std::string src = render(t, bt, t.default_point());
  const std::string pin = "khive_in.pinner = int64_t(1) * ((H) / 2);";
  const auto at = src.find(pin);
  ASSERT_NE(at, std::string::npos) << src;
  src.replace(at, pin.size(), "khive_in.pinner = int64_t(1) * ((H) / 2 + 1);");
  EXPECT_NE(run_cpu_kernel(src, harness, "ew-select-planted"), "bad 0\n");
}
