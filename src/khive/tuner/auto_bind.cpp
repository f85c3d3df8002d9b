// Bindings the tuner finds by itself (auto_bind.hpp).
#include "khive/tuner/auto_bind.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "khive/support/text.hpp"
#include "khive/tuner/bind/common.hpp"
#include "khive/tuner/chain.hpp"

namespace khive::tuner {
namespace {

using ojson = nlohmann::ordered_json;

const std::map<std::string, std::string>& activations() {
  static const std::map<std::string, std::string> m = {
      {"relu", "x > 0.0f ? x : 0.0f"},
      {"sigmoid", "1.0f / (1.0f + expf(-x))"},
      {"tanh", "tanhf(x)"},
      {"swish", "x / (1.0f + expf(-x))"},
      {"silu", "x / (1.0f + expf(-x))"},
      {"gelu", "0.5f * x * (1.0f + erff(x * 0.70710678118654752f))"},
      {"selu", "1.0507009873554804934f * (x > 0.0f ? x : 1.6732632423543772848f * expm1f(x))"},
      {"hardsigmoid", "fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f)"},
      {"softplus", "x > 20.0f ? x : log1pf(expf(x))"},
      {"softsign", "x / (1.0f + fabsf(x))"},
      {"elu", "x > 0.0f ? x : expm1f(x)"},
      {"hardtanh", "fminf(fmaxf(x, -1.0f), 1.0f)"},
  };
  return m;
}

std::vector<const TensorSpec*> tensor_inputs(const Task& t) {
  std::vector<const TensorSpec*> v;
  for (const auto& s : t.inputs)
    if (!s.scalar) v.push_back(&s);
  return v;
}

std::string key_of(const Task& t) { return t.dir.parent_path().filename().string() + "/" + t.dir.filename().string(); }

Binding make(const Task& t, const std::string& family, ojson spec) {
  Binding b;
  b.key = key_of(t);
  b.family = family;
  b.spec = std::move(spec);
  b.file = "(inferred by the tuner from op_type and signature)";
  return b;
}

// The product's operands as the reference's graph recorded them (khive.op.operands: which input is A and B, and
// which is read transposed; a Linear's weight is stored [N, K]), so a square operand's layout is not guessed from its
// shape: the gemm spec of C = A @ B with M, N, K from the shapes, which must agree.
// A of rank >= 3 is a batch of rows [*rows, K] (torch.matmul / F.linear of a 3-D input): the output is [*rows, N] and
// M is the list of those axes (one GEMM over their product, row-major as stored). Otherwise an output of rank >= 3 is
// a batch of products over its leading axes (torch.matmul of N-D operands, bmm): each operand [*lead, rows, cols],
// its leading axes broadcast against the batch as torch.matmul does (the binder checks them on every workload).
std::optional<ojson> recognised_product(const Task& t, std::string* why) {
  const auto& o = t.op_operands;
  const TensorSpec *A = t.find_input(o.at("A")), *B = t.find_input(o.at("B"));
  const std::string la = o.count("layout_a") ? o.at("layout_a") : "row",
                    lb = o.count("layout_b") ? o.at("layout_b") : "row";
  // Axes that differ by name may still be one (a copy's head_dim where the weight says kv_proj_size =
  // num_key_value_heads * head_dim with one KV head): the same size on every workload.
  const auto axes = bind_detail::resolved(t);
  auto same = [&](const std::string& a, const std::string& b) {
    return a == b || std::all_of(axes.begin(), axes.end(), [&](const AxisValues& ax) {
             return bind_detail::axis_value(ax, a) == bind_detail::axis_value(ax, b);
           });
  };
  if (A && B && t.outputs.size() == 1 && A->shape.size() >= 3 && B->shape.size() == 2 && la == "row") {
    const auto& c = t.outputs[0].shape;
    const std::vector<std::string> rows(A->shape.begin(), A->shape.end() - 1);
    const std::string k = A->shape.back();
    const bool b_ok = c.size() == A->shape.size() && std::equal(rows.begin(), rows.end(), c.begin()) &&
                      B->shape.size() == 2 &&
                      (lb == "row" ? same(B->shape[0], k) && same(B->shape[1], c.back())
                                   : same(B->shape[0], c.back()) && same(B->shape[1], k));
    if (!b_ok) {
      *why = fmt::format("shapes {}[{}], {}[{}] ({}) -> {}[{}] are not the recognised product of rows", A->name,
                         fmt::join(A->shape, ","), B->name, fmt::join(B->shape, ","), lb, t.outputs[0].name,
                         fmt::join(c, ","));
      return std::nullopt;
    }
    ojson spec{{"A", A->name}, {"B", B->name},   {"C", t.outputs[0].name}, {"N", c.back()},
               {"K", k},       {"layout_a", la}, {"layout_b", lb}};
    spec["M"] = rows.size() == 1 ? ojson(rows[0]) : ojson(rows);
    return spec;
  }
  // A [*K, M] read transposed and B [*K, N] as stored, C [M, N]: a weight's gradient summed over a batch of rows
  // (grad_out.reshape(-1, M).t() @ x.reshape(-1, N)); K is the list of their shared leading axes.
  if (A && B && t.outputs.size() == 1 && t.outputs[0].shape.size() == 2 && A->shape.size() >= 3 &&
      B->shape.size() == A->shape.size() && la == "col" && lb == "row") {
    const auto& c = t.outputs[0].shape;
    const std::vector<std::string> ka(A->shape.begin(), A->shape.end() - 1), kb(B->shape.begin(), B->shape.end() - 1);
    if (ka != kb || !same(A->shape.back(), c[0]) || !same(B->shape.back(), c[1])) {
      *why = fmt::format(
          "shapes {}[{}] (col), {}[{}] (row) -> {}[{}] are not the recognised product summed over "
          "their leading axes",
          A->name, fmt::join(A->shape, ","), B->name, fmt::join(B->shape, ","), t.outputs[0].name, fmt::join(c, ","));
      return std::nullopt;
    }
    return ojson{{"A", A->name}, {"B", B->name}, {"C", t.outputs[0].name}, {"M", c[0]},
                 {"N", c[1]},    {"K", ka},      {"layout_a", la},         {"layout_b", lb}};
  }
  if (A && B && t.outputs.size() == 1 && t.outputs[0].shape.size() >= 3 && A->shape.size() >= 2 &&
      B->shape.size() >= 2) {
    const auto& c = t.outputs[0].shape;
    const std::vector<std::string> batch(c.begin(), c.end() - 2);
    const std::string m = c[c.size() - 2], n = c.back();
    const auto& a = A->shape;
    const auto& b = B->shape;
    const std::string a_m = la == "row" ? a[a.size() - 2] : a.back(), k = la == "row" ? a.back() : a[a.size() - 2];
    const bool ok = a_m == m && a.size() - 2 <= batch.size() && b.size() - 2 <= batch.size() &&
                    (lb == "row" ? b[b.size() - 2] == k && b.back() == n : b[b.size() - 2] == n && b.back() == k);
    if (!ok) {
      *why = fmt::format("shapes {}[{}] ({}), {}[{}] ({}) -> {}[{}] are not the recognised batched product", A->name,
                         fmt::join(a, ","), la, B->name, fmt::join(b, ","), lb, t.outputs[0].name, fmt::join(c, ","));
      return std::nullopt;
    }
    ojson spec{{"A", A->name}, {"B", B->name}, {"C", t.outputs[0].name}, {"M", m},
               {"N", n},       {"K", k},       {"layout_a", la},         {"layout_b", lb}};
    spec["batch"] = batch.size() == 1 ? ojson(batch[0]) : ojson(batch);
    return spec;
  }
  if (!A || !B || t.outputs.size() != 1 || A->shape.size() != 2 || B->shape.size() != 2 ||
      t.outputs[0].shape.size() != 2) {
    *why = "the gemm templates take 2-D operands (or an [*rows, K] batch of rows times a matrix) and one output";
    return std::nullopt;
  }
  const std::string m = t.outputs[0].shape[0], n = t.outputs[0].shape[1];
  const std::string k = la == "row" ? A->shape[1] : A->shape[0];
  const bool a_ok = (la == "row" ? A->shape[0] : A->shape[1]) == m;
  const bool b_ok =
      lb == "row" ? B->shape == std::vector<std::string>{k, n} : B->shape == std::vector<std::string>{n, k};
  if (!a_ok || !b_ok) {
    *why = fmt::format("shapes {}[{}] ({}), {}[{}] ({}) -> {}[{}] are not the recognised product", A->name,
                       fmt::join(A->shape, ","), la, B->name, fmt::join(B->shape, ","), lb, t.outputs[0].name,
                       fmt::join(t.outputs[0].shape, ","));
    return std::nullopt;
  }
  return ojson{{"A", A->name}, {"B", B->name}, {"C", t.outputs[0].name}, {"M", m},
               {"N", n},       {"K", k},       {"layout_a", la},         {"layout_b", lb}};
}

bool has_operands(const Task& t) { return t.op_operands.count("A") && t.op_operands.count("B"); }

// The result of a batched product A @ B (either read transposed) of t's tensors, as torch.matmul shapes it: the
// operands' leading axes broadcast (aligned at the end; where both have one, the axis whose size is the larger on
// every workload, the other being 1 or the same there: the binder checks it), then [M, N].
std::vector<std::string> batched_product_shape(const Task& t, const TensorSpec& A, const TensorSpec& B, bool arow,
                                               bool brow) {
  const std::vector<std::string> la(A.shape.begin(), A.shape.end() - 2), lb(B.shape.begin(), B.shape.end() - 2);
  const std::size_t n = std::max(la.size(), lb.size());
  const auto axes = bind_detail::resolved(t);
  auto at_least = [&](const std::string& x, const std::string& y) {  // x's size >= y's on every workload
    return std::all_of(axes.begin(), axes.end(), [&](const AxisValues& ax) {
      return bind_detail::axis_value(ax, x) >= bind_detail::axis_value(ax, y);
    });
  };
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string x = i + la.size() >= n ? la[i + la.size() - n] : "",
                      y = i + lb.size() >= n ? lb[i + lb.size() - n] : "";
    out.push_back(y.empty() || (!x.empty() && at_least(x, y)) ? x : y);
  }
  out.push_back(A.shape[A.shape.size() - (arow ? 2 : 1)]);
  out.push_back(B.shape[B.shape.size() - (brow ? 1 : 2)]);
  return out;
}

// C[*b, M, N] = A[*b?, M, K] (or [K, M]) . B[*b?, K, N] (or [N, K]): 2-D operands, or N-D ones batched over C's
// leading axes (their leading axes aligned at the end of C's, torch.matmul's broadcast: missing, of size 1, or the
// batch axis; an operand without them is shared across the batch). A literal size ("1": a matrix-vector product)
// stands for itself; the gemm binder checks the rest.
std::optional<Binding> gemm(const Task& t, std::string* why) {
  if (has_operands(t)) {  // the graph says which input is which and how it is read
    auto spec = recognised_product(t, why);
    return spec ? std::optional<Binding>(make(t, "gemm", *spec)) : std::nullopt;
  }
  if (std::find(t.op_flags.begin(), t.op_flags.end(), "operands_reinterpreted") != t.op_flags.end()) {
    *why =
        "an operand is a 2-D input reshaped to other dimensions (khive.op.flags: operands_reinterpreted), which "
        "no gemm template reads";
    return std::nullopt;
  }
  auto ins = tensor_inputs(t);
  if (ins.size() != 2 || t.inputs.size() != 2 || t.outputs.size() != 1) {
    *why = "a matrix product needs two tensor inputs and one output";
    return std::nullopt;
  }
  std::vector<std::string> a = ins[0]->shape, b = ins[1]->shape, c = t.outputs[0].shape;
  // An N-D tensor times a matrix (N >= 4; torch.matmul, einsum "bijl,lk->bijk"): A's leading axes are C's rows, one
  // GEMM of M = their product. (Other N-D operands are a batch over C's leading axes, below.)
  if (c.size() >= 4 && a.size() == c.size() && b.size() == 2 && std::equal(c.begin(), c.end() - 1, a.begin()) &&
      a.back() == b[0] && c.back() == b[1]) {
    const std::vector<std::string> rows(c.begin(), c.end() - 1);
    return make(t, "gemm",
                ojson{{"A", ins[0]->name},
                      {"B", ins[1]->name},
                      {"C", t.outputs[0].name},
                      {"M", rows},
                      {"N", b[1]},
                      {"K", b[0]},
                      {"layout_a", "row"},
                      {"layout_b", "row"}});
  }
  std::vector<std::string> batch;
  if (c.size() >= 3) {
    batch.assign(c.begin(), c.end() - 2);
    c.erase(c.begin(), c.end() - 2);
    for (auto* s : {&a, &b})
      if (s->size() > 2 && s->size() - 2 <= batch.size()) s->erase(s->begin(), s->end() - 2);
  }
  const char* forms =
      "the gemm templates take 2-D operands, N-D ones batched over the output's leading axes (torch.matmul's "
      "broadcast), or an N-D tensor whose leading axes are the output's times a matrix";
  if (a.size() != 2 || b.size() != 2 || c.size() != 2) {
    *why = forms;
    return std::nullopt;
  }
  const std::string m = c[0], n = c[1];
  std::string layout_a, layout_b, k;
  if (a[0] == m)
    layout_a = "row", k = a[1];
  else if (a[1] == m)
    layout_a = "col", k = a[0];
  if (b[0] == k && b[1] == n)
    layout_b = "row";
  else if (b[1] == k && b[0] == n)
    layout_b = "col";
  if (layout_a.empty() || layout_b.empty()) {
    *why = fmt::format("shapes {}[{}], {}[{}] -> {}[{}] are not a matrix product ({})", ins[0]->name,
                       fmt::join(ins[0]->shape, ","), ins[1]->name, fmt::join(ins[1]->shape, ","), t.outputs[0].name,
                       fmt::join(t.outputs[0].shape, ","), forms);
    return std::nullopt;
  }
  ojson spec{{"A", ins[0]->name},    {"B", ins[1]->name},   {"C", t.outputs[0].name}, {"M", m}, {"N", n}, {"K", k},
             {"layout_a", layout_a}, {"layout_b", layout_b}};
  if (batch.size() == 1) spec["batch"] = batch[0];
  if (batch.size() > 1) spec["batch"] = batch;
  return make(t, "gemm", spec);
}

// A product and its epilogue, recognised from the reference's graph (khive.op.operands, khive.op.expression): C =
// epilogue(x = A @ B, b = bias[column], b1, b2, ... = the vectors').
std::optional<Binding> gemm_epilogue(const Task& t, std::string* why) {
  if (!has_operands(t) || t.op_expression.empty()) {
    *why =
        "a matrix product with further ops, not one product and a pointwise epilogue (with vectors over its columns "
        "or single values) of the kind the gemm templates fuse";
    return std::nullopt;
  }
  auto spec = recognised_product(t, why);
  if (!spec) return std::nullopt;
  (*spec)["epilogue"] = t.op_expression;
  if (t.op_operands.count("bias")) (*spec)["bias"] = t.op_operands.at("bias");
  if (t.op_operands.count("residual")) (*spec)["residual"] = t.op_operands.at("residual");
  if (!t.op_vectors.empty()) (*spec)["vectors"] = t.op_vectors;
  return make(t, "gemm", *spec);
}

// A convolution and its pointwise epilogue, recognised from the reference's graph (khive.op.conv: aten.convolution's
// options; khive.op.operands: x, weight, its bias, the per-channel vectors; khive.op.expression of x, b, b1, ...). The
// binder checks the shapes against the options on every workload.
std::optional<Binding> conv(const Task& t, std::string* why) {
  const auto& o = t.op_operands;
  if (!t.op_conv || !o.count("x") || !o.count("weight")) {
    *why =
        "no single convolution followed only by pointwise ops (with per-channel vectors or single values) was "
        "recognised in the reference's graph (khive.op.conv, khive.op.operands)";
    return std::nullopt;
  }
  if (t.outputs.size() != 1) {
    *why = "the conv templates write one output";
    return std::nullopt;
  }
  const auto& c = *t.op_conv;
  ojson spec{{"x", o.at("x")},     {"weight", o.at("weight")},   {"y", t.outputs[0].name},
             {"stride", c.stride}, {"padding", c.padding},       {"dilation", c.dilation},
             {"groups", c.groups}, {"transposed", c.transposed}, {"output_padding", c.output_padding}};
  if (o.count("bias")) spec["bias"] = o.at("bias");
  if (o.count("vector")) spec["vector"] = o.at("vector");
  if (!t.op_vectors.empty()) spec["vectors"] = t.op_vectors;
  if (!t.op_expression.empty()) spec["epilogue"] = t.op_expression;
  return make(t, "conv", spec);
}

// A max or average pool of the one input, recognised from the reference's graph (khive.op.pool).
std::optional<Binding> pool(const Task& t, std::string* why) {
  if (!t.op_pool) {
    *why = "no single max / average pool of the input was recognised in the reference's graph (khive.op.pool)";
    return std::nullopt;
  }
  if (t.inputs.size() != 1 || t.inputs[0].scalar || t.outputs.size() != 1) {
    *why = "the pool templates take one tensor input and one output";
    return std::nullopt;
  }
  const auto& p = *t.op_pool;
  ojson spec{{"op", p.op},         {"x", t.inputs[0].name}, {"y", t.outputs[0].name},  {"kernel", p.kernel},
             {"stride", p.stride}, {"padding", p.padding},  {"ceil_mode", p.ceil_mode}};
  if (p.op == "max") spec["dilation"] = p.dilation;
  if (p.op == "avg") spec["count_include_pad"] = p.count_include_pad;
  if (p.op == "avg" && p.divisor_override) spec["divisor_override"] = p.divisor_override;
  return make(t, "pool", spec);
}

// A normalisation of one input over some of its axes (batch, instance, group, layer, RMS, L1, L2 norms), recognised
// from the reference's graph (khive.op.norm, khive.op.operands).
std::optional<Binding> norm(const Task& t, std::string* why) {
  if (!t.op_norm) {
    *why = "no single normalisation of an input was recognised in the reference's graph (khive.op.norm)";
    return std::nullopt;
  }
  const std::string x = t.op_operands.count("x") ? t.op_operands.at("x") : t.inputs.empty() ? "" : t.inputs[0].name;
  if (t.outputs.size() != 1 || x.empty()) {
    *why = "the norm templates take an input x (with a weight and a bias or without) and one output";
    return std::nullopt;
  }
  const auto& n = *t.op_norm;
  ojson spec{{"stat", n.stat}, {"x", x}, {"y", t.outputs[0].name}, {"axes", n.axes}};
  if (n.groups != 1) spec["groups"] = n.groups;
  spec["eps"] = n.eps;
  // eps read from a scalar input (khive.op.operands.eps: the one scalar input of the traced eps's value)
  if (t.op_operands.count("eps")) spec["eps"] = t.op_operands.at("eps");
  for (const char* role : {"weight", "bias"})
    if (t.op_operands.count(role)) spec[role] = t.op_operands.at(role);
  if (!n.affine_axes.empty()) spec["affine_axes"] = n.affine_axes;
  return make(t, "norm", spec);
}

// What a layout of khive.op.attention.layout is, in words.
std::string layout_text(const std::string& l) {
  static const std::map<std::string, std::string> m = {{"bshd", "[B, S, H, D]"},
                                                       {"bhsd", "[B, H, S, D] (heads before the sequence)"},
                                                       {"bhd", "[B, H, D] (decode: one query per sequence)"},
                                                       {"bsd", "[B, S, D] (one head, no head axis)"},
                                                       {"bs(hd)", "[B, S, H*D] (the heads merged)"}};
  auto it = m.find(l);
  return it == m.end() ? l : it->second;
}

// An attention the reference's graph showed to be exactly one of three inputs (khive.op.attention,
// python/khive_torch/recognize_attention.py), bound to the attention templates only when every fact is theirs: q and o
// [B, Sq, Hq, D] (decode: [B, Hq, D]), k and v [B, Skv, Hkv, D], query head h reading KV head h / (Hq / Hkv), the
// scale 1/sqrt(D), no mask or the causal one aligned bottom-right (query i sees keys j <= i + Skv - Sq), bf16 or fp16.
// Anything else is refused, each fact that differs said.
std::optional<Binding> attention(const Task& t, std::string* why) {
  if (!t.op_attention) {
    *why = !t.op_why.empty() ? t.op_why
                             : "no attention of three inputs was read from its graph (khive.op.attention; `python3 -m "
                               "khive_torch.recognize TASK --write` records it)";
    return std::nullopt;
  }
  const auto& a = *t.op_attention;
  const TensorSpec *q = t.find_input(a.q), *k = t.find_input(a.k), *v = t.find_input(a.v);
  std::vector<std::string> differs;
  if (t.inputs.size() != 3 || t.outputs.size() != 1 || !q || !k || !v) {
    *why = fmt::format("the templates take three inputs q, k, v and one output; the task has {} inputs and {} outputs",
                       t.inputs.size(), t.outputs.size());
    return std::nullopt;
  }
  const bool decode = a.layout.at("q") == "bhd";
  // The tensors not in the templates' layout, grouped by the layout they are in.
  std::map<std::string, std::vector<std::string>> by_layout;
  const std::pair<const char*, std::string> roles[] = {{"q", a.q}, {"k", a.k}, {"v", a.v}, {"o", t.outputs[0].name}};
  for (const auto& [role, name] : roles) {
    const std::string want = role == std::string("k") || role == std::string("v") ? "bshd" : decode ? "bhd" : "bshd";
    const std::string& got = a.layout.at(role);
    if (got != want) by_layout[got].push_back(name == role ? name : fmt::format("{} ({})", role, name));
  }
  if (!by_layout.empty()) {
    std::vector<std::string> parts;
    for (const auto& [layout, names] : by_layout)
      parts.push_back(
          fmt::format("{} {} {}", fmt::join(names, ", "), names.size() > 1 ? "are" : "is", layout_text(layout)));
    differs.push_back(fmt::format(
        "{}; the templates take q and o as [B, Sq, Hq, D] (decode: [B, Hq, D]) and k and v as [B, Skv, Hkv, D]",
        fmt::join(parts, ", ")));
  }
  if (a.gqa == "tile")
    differs.push_back(
        "query head h reads KV head h % Hkv (the KV heads tiled, k.repeat(1, G, 1, 1)); the templates read KV head h / "
        "(Hq / Hkv) (repeat_interleave, SDPA's enable_gqa)");
  for (const TensorSpec* s : {q, k, v, &t.outputs[0]})
    if (s->dtype != DType::bf16 && s->dtype != DType::f16) {
      differs.push_back(
          fmt::format("{} is {}; the attention templates compute bfloat16 and float16", s->name, dtype_name(s->dtype)));
      break;
    }
  // The axes per workload, read where the layouts put them: Sq, Skv and D.
  auto axis_at = [](const TensorSpec& s, const std::string& layout, char what) -> std::string {
    const auto& d = s.shape;
    if (layout == "bshd" && d.size() == 4) return what == 's' ? d[1] : d[3];
    if (layout == "bhsd" && d.size() == 4) return what == 's' ? d[2] : d[3];
    if (layout == "bhd" && d.size() == 3) return what == 's' ? "1" : d[2];
    if (layout == "bsd" && d.size() == 3) return what == 's' ? d[1] : d[2];
    return "";
  };
  const std::string sq_axis = axis_at(*q, a.layout.at("q"), 's'), skv_axis = axis_at(*k, a.layout.at("k"), 's'),
                    d_axis = axis_at(*q, a.layout.at("q"), 'd');
  if (sq_axis.empty() || skv_axis.empty() || d_axis.empty()) {
    differs.push_back(fmt::format("q and k's shapes ({}, {}) are not of their recorded layouts",
                                  fmt::join(q->shape, ","), fmt::join(k->shape, ",")));
  } else {
    bool scale_said = false, causal_said = false;
    const double ideal = 1.0 / std::sqrt(static_cast<double>(a.head_dim));
    if (a.scale && std::abs(*a.scale - ideal) > 1e-6 * ideal) {
      differs.push_back(fmt::format(
          "the scores are scaled by {:.6g}, not by 1/sqrt(D) = {:.6g} (D = {}), the scale the templates fix", *a.scale,
          ideal, a.head_dim));
      scale_said = true;
    }
    for (const auto& w : t.workloads) {
      std::map<std::string, int64_t> ax;
      try {
        ax = resolve_axes(t, w);
      } catch (const std::exception&) {
        continue;  // the loader has said so
      }
      const int64_t sq = dim_size(*q, sq_axis, ax), skv = dim_size(*k, skv_axis, ax), d = dim_size(*q, d_axis, ax);
      if (a.scale && !scale_said && d != a.head_dim) {
        differs.push_back(fmt::format(
            "the scores are scaled by the number {:.6g} (1/sqrt(D) where the reference was traced, D = {}), and "
            "workload {} has D = {}; the templates scale by 1/sqrt(D) on every workload",
            *a.scale, a.head_dim, w.uuid, d));
        scale_said = true;
      }
      if (a.causal == "top_left" && !causal_said && sq != skv) {
        differs.push_back(fmt::format(
            "the causal mask is aligned top-left (query i sees keys j <= i, torch's is_causal) and workload {} has Sq "
            "= {} != Skv = {}; the templates align it bottom-right (j <= i + Skv - Sq)",
            w.uuid, sq, skv));
        causal_said = true;
      }
    }
  }
  if (!differs.empty()) {
    *why = fmt::format("{}", fmt::join(differs, "; "));
    return std::nullopt;
  }
  // Causal on decode (one query, the last one): every cached key is seen, as without a mask.
  const bool causal = !decode && a.causal != "none";
  return make(
      t, "attention",
      ojson{{"q", a.q}, {"k", a.k}, {"v", a.v}, {"o", t.outputs[0].name}, {"causal", causal}, {"decode", decode}});
}

bool unary_float32(const Task& t, std::string* why) {
  if (t.inputs.size() != 1 || t.outputs.size() != 1 || t.inputs[0].scalar || t.inputs[0].shape != t.outputs[0].shape) {
    *why = "expected one input and one output of the same shape";
    return false;
  }
  if (t.inputs[0].dtype != DType::f32 || t.outputs[0].dtype != DType::f32) {
    *why = "the recognised activations are written for float32";
    return false;
  }
  return true;
}

// y = f(inputs...) of a recognised pointwise chain over several inputs: every tensor of a float storage type
// (float32, bfloat16, float16: the output's or another, each read as its own type and converted to float; the
// template computes the expression in float and rounds once, where a bf16 reference of several ops rounds after
// each: the guard judges the difference), every scalar a float.
std::optional<Binding> named_elementwise(const Task& t, std::string* why) {
  ojson inputs = ojson::array(), scalars = ojson::array();
  if (t.outputs.size() != 1 || !bind_detail::is_float_storage(t.outputs[0].dtype)) {
    *why = "'elementwise' over several inputs: expected one float32, bfloat16 or float16 output";
    return std::nullopt;
  }
  for (const auto& in : t.inputs) {
    if (in.scalar ? !dtype_is_float(in.dtype) : !bind_detail::is_float_storage(in.dtype)) {
      *why = fmt::format("'elementwise' over several inputs: {} is {}, expected {}", in.name, dtype_name(in.dtype),
                         in.scalar ? "a float scalar" : "a float32, bfloat16 or float16 tensor");
      return std::nullopt;
    }
    (in.scalar ? scalars : inputs).push_back(in.name);
  }
  if (inputs.empty()) {
    *why = "'elementwise' over several inputs: no tensor input";
    return std::nullopt;
  }
  ojson spec{{"inputs", inputs}, {"output", t.outputs[0].name}, {"op", t.op_expression}};
  if (!scalars.empty()) spec["scalars"] = scalars;
  // Every input read as stored (khive.op.flags torch_broadcast): torch's rule places them (aligned at the end), as the
  // reference broadcasts them; else (A.unsqueeze(1) * B) their axis names do.
  if (std::find(t.op_flags.begin(), t.op_flags.end(), "torch_broadcast") != t.op_flags.end())
    spec["broadcast"] = "torch";
  // Inputs read through a strided view of the output's index (khive.op.views: a transpose, heads split or merged,
  // an expand or a slice of the stored tensor): the binder checks the view on every workload.
  if (!t.op_views.empty()) spec["views"] = ojson::parse(t.op_views);
  // An input read through several views (khive.op.aliases: the other views' names), and a cat's equal parts told
  // apart by khive_piece (khive.op.select).
  if (!t.op_aliases.empty()) spec["aliases"] = ojson::parse(t.op_aliases);
  if (!t.op_select.empty()) spec["select"] = ojson::parse(t.op_select);
  return make(t, "elementwise", spec);
}

// The epsilon of an RMSNorm reference: `eps=1e-6` / `EPS = 1e-5` in its source, else nullopt.
std::optional<double> reference_eps(const Task& t) {
  static const std::regex re(
      R"((?:\beps|\bEPS|\bepsilon|variance_epsilon)\s*=\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?))");
  std::smatch m;
  if (!std::regex_search(t.pytorch_reference, m, re)) return std::nullopt;
  return std::stod(m[1].str());
}

// rmsnorm: x[*rows, H], weight[H] -> y of x's shape; residual_rmsnorm: the same of x + residual (an input of x's
// shape, added before the norm). The operands recognised from the reference's graph (khive.op.operands: x, weight,
// residual, eps), else x and weight in the task's order. eps: the scalar input named there, else the recognised
// number (khive.op.eps), else "eps = <number>" in the reference.
std::optional<Binding> rmsnorm(const Task& t, const std::string& op, std::string* why) {
  const bool residual = op == "residual_rmsnorm";
  auto operand = [&](const char* role) -> const TensorSpec* {
    auto it = t.op_operands.find(role);
    return it == t.op_operands.end() ? nullptr : t.find_input(it->second);
  };
  const TensorSpec* x = operand("x");
  const TensorSpec* w = operand("weight");
  const TensorSpec* res = operand("residual");
  if (!x && !w && !residual && t.inputs.size() == 2) x = &t.inputs[0], w = &t.inputs[1];
  auto shape = [](const TensorSpec& s) { return s.name + bind_detail::shape_text(s.shape); };
  const std::string want = residual ? "x[*rows, H], residual of x's shape and weight[H] -> y of x's shape"
                                    : "x[*rows, H] and weight[H] -> y of x's shape";
  if (!x || !w || (residual && !res) || t.outputs.size() != 1 || x->scalar || x->shape.empty() ||
      w->shape.size() != 1 || w->shape[0] != x->shape.back() || t.outputs[0].shape != x->shape ||
      (res && res->shape != x->shape)) {
    *why = "expected " + want + " (khive.op.operands x, weight" + (residual ? ", residual" : "") + "), got " +
           (x ? shape(*x) : std::string("no x")) + ", " + (w ? shape(*w) : std::string("no weight")) +
           (res ? ", " + shape(*res) : std::string()) + " -> " +
           (t.outputs.empty() ? std::string("nothing") : shape(t.outputs[0]));
    return std::nullopt;
  }
  ojson spec{
      {"op", residual ? "residual_rmsnorm" : "rmsnorm"}, {"x", x->name}, {"weight", w->name}, {"y", t.outputs[0].name}};
  if (res) spec["residual"] = res->name;
  if (const TensorSpec* e = operand("eps"); e && e->scalar) {
    spec["eps"] = e->name;
  } else if (auto eps = t.op_eps ? t.op_eps : reference_eps(t)) {
    spec["eps"] = *eps;
  } else {
    *why = "no eps: neither a scalar input (khive.op.operands.eps) nor eps = <number> in the reference";
    return std::nullopt;
  }
  return make(t, "rowop", spec);
}

// A chain of stages recognised from the reference's graph (khive.op.stages, chain.hpp): each stage's op read against
// its stage task (the task's inputs it reads and the intermediates before it) and bound as that op alone would be;
// the intermediates shaped by their stage's family as they are bound.
std::optional<Binding> chain(const Task& t, std::string* why) {
  if (t.op_stages.size() < 2) {
    *why = fmt::format("no chain of 2 to {} stages was recognised in the reference's graph (khive.op.stages)",
                       Task::kMaxStages);
    return std::nullopt;
  }
  const std::string file = (t.dir.filename() / "definition.json").string();
  ChainLayout layout(t);
  ojson stages = ojson::array();
  for (std::size_t i = 0; i < t.op_stages.size(); ++i) {
    const std::string field = fmt::format("khive.op.stages[{}]", i);
    const ojson st = ojson::parse(t.op_stages[i]);
    const bool last = i + 1 == t.op_stages.size();
    std::vector<std::string> inputs;
    if (st.contains("inputs") && st["inputs"].is_array())
      for (const auto& n : st["inputs"])
        if (n.is_string()) inputs.push_back(n.get<std::string>());
    // "output": an intermediate's name or one of the task's outputs (a multi-output chain); null: the task's one
    // output, written by the last stage.
    const std::string output = st.contains("output") && st["output"].is_string() ? st["output"].get<std::string>()
                               : last && t.outputs.size() == 1                   ? t.outputs[0].name
                                                                                 : "";
    if (inputs.empty() || inputs.size() != st["inputs"].size() || output.empty()) {
      *why = fmt::format(
          "{}: expected \"inputs\" (tensor names) and \"output\" (an intermediate or one of the task's outputs; "
          "null only for the last stage of a task of one output)",
          field);
      return std::nullopt;
    }
    const bool mid = t.find_output(output) == nullptr;  // an intermediate, shaped here
    Task s;
    // A copy stage that writes an intermediate (a view of its input made contiguous for the next stage), or a
    // pointwise stage whose inputs are read through views of its result (a cat's parts), has its sizes recorded
    // (khive.op.stages[i].shape, axis expressions of its first input's axes): shaped before it is bound, as its
    // views are of that shape.
    const bool preshaped = mid && st.contains("shape") && st["shape"].is_array();
    try {
      if (preshaped) {
        std::vector<std::string> exprs;
        for (const auto& e : st["shape"]) exprs.push_back(e.is_string() ? e.get<std::string>() : e.dump());
        layout.shape_as(output, inputs[0], exprs, i, ChainLayout::stored_dtype(st));
      }
      s = layout.stage_task(inputs, output, i);
      read_recognised_op(file, field, t.op_stages[i], s);
    } catch (const std::exception& e) {
      *why = fmt::format("{}: {}", field, e.what());
      return std::nullopt;
    }
    // A product's intermediate is [M, N] (the recognisers check the output against the operands).
    if (mid && s.op_family == "gemm" && s.op_operands.count("A") && s.op_operands.count("B")) {
      const TensorSpec *A = s.find_input(s.op_operands.at("A")), *B = s.find_input(s.op_operands.at("B"));
      const bool arow = !s.op_operands.count("layout_a") || s.op_operands.at("layout_a") == "row",
                 brow = !s.op_operands.count("layout_b") || s.op_operands.at("layout_b") == "row";
      if (A && B && A->shape.size() == 2 && B->shape.size() == 2)
        s.outputs[0].shape = {A->shape[arow ? 0 : 1], B->shape[brow ? 1 : 0]};
      else if (A && B && A->shape.size() >= 3 && B->shape.size() == A->shape.size() && !arow && brow)
        s.outputs[0].shape = {A->shape.back(), B->shape.back()};  // summed over their leading axes (K a list)
      else if (A && B && A->shape.size() >= 3 && B->shape.size() == 2 && arow) {  // [*rows, K] @ B: [*rows, N]
        s.outputs[0].shape.assign(A->shape.begin(), A->shape.end() - 1);
        s.outputs[0].shape.push_back(B->shape[brow ? 1 : 0]);
      } else if (A && B && A->shape.size() >= 2 && B->shape.size() >= 2 &&
                 (A->shape.size() >= 3 || B->shape.size() >= 3)) {  // a batch: [*batch, M, N]
        s.outputs[0].shape = batched_product_shape(s, *A, *B, arow, brow);
      }
    }
    // A row op's intermediate is x's shape (the rowop binder checks y against x).
    if (mid && s.op_family == "rowop" && s.op_operands.count("x"))
      if (const TensorSpec* x = s.find_input(s.op_operands.at("x"))) {
        s.outputs[0].shape = x->shape;
        s.outputs[0].dtype = x->dtype;
        s.outputs[0].scalar = false;
      }
    std::string detail;
    auto b = s.op_recognized == "chain" ? std::nullopt : infer_binding(s, &detail);
    if (!b) {
      *why =
          fmt::format("stage {} ({}): {}", i + 1, s.op_recognized, detail.empty() ? "a chain inside a chain" : detail);
      return std::nullopt;
    }
    ojson spec{{"family", b->family}};
    for (auto it = b->spec.begin(); it != b->spec.end(); ++it) spec[it.key()] = it.value();
    if (preshaped && b->family == "elementwise") spec["shape"] = st["shape"];
    // The storage type the reference holds a pointwise intermediate in (khive.op.stages[i].dtype: float32 where a
    // bf16 reference computes in float32), else the chain's rule (its widest input's).
    if (mid && b->family == "elementwise" && st.contains("dtype")) spec["dtype"] = st["dtype"];
    if (mid && !preshaped) {
      try {
        layout.shape_output(b->family, spec, output, i);
      } catch (const std::exception& e) {
        *why = fmt::format("stage {} ({}): {}", i + 1, b->family, e.what());
        return std::nullopt;
      }
    }
    if (!mid) layout.mark_written(output);
    stages.push_back(std::move(spec));
  }
  // Tensor inputs the graph never reads (a backward pass handed the forward's bias): the chain's "unread". A scalar
  // input no stage reads may have steered the reference's Python (traced as the value it had), so it stays refused.
  std::set<std::string> read;
  for (const auto& s : t.op_stages) {
    const ojson st = ojson::parse(s);
    for (const auto& n : st["inputs"]) read.insert(n.get<std::string>());
  }
  ojson unread = ojson::array();
  for (const auto& in : t.inputs) {
    if (read.count(in.name)) continue;
    // A scalar the graph never reads, traced with another value to the same stages (khive.op.unread_scalars: an
    // eps the reference takes and does not use) is no branch: it is left unread like a tensor.
    const bool checked =
        std::find(t.op_unread_scalars.begin(), t.op_unread_scalars.end(), in.name) != t.op_unread_scalars.end();
    if (in.scalar && !checked) {
      *why = fmt::format(
          "input \"{}\" is a scalar that no recognised stage reads: the reference may branch on it in Python (the "
          "trace follows the branch of one workload's value), so the stages need not compute it on every workload",
          in.name);
      return std::nullopt;
    }
    unread.push_back(in.name);
  }
  ojson spec{{"stages", stages}};
  if (!unread.empty()) spec["unread"] = unread;
  return make(t, "chain", spec);
}

}  // namespace

std::string recognised_op_name(const Task& t) {
  // "unknown": the graph said nothing (khive.op.why says why); op_type or the name may still.
  if (!t.op_recognized.empty() && t.op_recognized != "unknown" &&
      (t.op_type.empty() || lower(t.op_type) == "kernelbench"))
    return lower(t.op_recognized);
  std::string op = lower(t.op_type);
  if (!op.empty() && op != "kernelbench") return op;
  std::string name = lower(t.name);
  std::smatch m;
  if (std::regex_match(name, m, std::regex(R"(kb\d*_\d+_(.*))"))) return m[1].str();
  return name;
}

std::optional<Binding> infer_binding(const Task& t, std::string* why) {
  const std::string op = recognised_op_name(t);
  std::string detail;
  auto has = [&](const char* w) { return op.find(w) != std::string::npos; };
  if (op == "gemm+epilogue") {  // recognised from the graph (khive.op): one product and what follows it
    if (auto b = gemm_epilogue(t, &detail)) return b;
    *why = fmt::format("the reference is a matrix product with further ops ({}): {}",
                       t.op_family.empty() ? "gemm" : t.op_family, detail);
    // Why recognition read no chain of stages either (a reference of several outputs: khive.op.why).
    if (!t.op_why.empty()) *why += "; recognition: " + t.op_why;
    return std::nullopt;
  }
  if (op == "attention") {
    if (auto b = attention(t, &detail)) return b;
    *why = fmt::format("the reference is an attention, not one the attention templates compute: {}", detail);
    return std::nullopt;
  }
  if (op == "chain") {
    if (auto b = chain(t, &detail)) return b;
    *why = fmt::format("the reference is a chain of stages: {}", detail);
    return std::nullopt;
  }
  if (op == "conv" || op == "conv+epilogue") {
    if (auto b = conv(t, &detail)) return b;
    *why = fmt::format("the reference is a convolution ({}): {}", op, detail);
    return std::nullopt;
  }
  if (op == "max_pool" || op == "avg_pool" || op == "pool") {
    if (auto b = pool(t, &detail)) return b;
    *why = fmt::format("the reference is a pooling ({}): {}", op, detail);
    return std::nullopt;
  }
  if (op == "norm") {
    if (auto b = norm(t, &detail)) return b;
    *why = fmt::format("the reference is a normalisation ({}): {}", op, detail);
    return std::nullopt;
  }
  if (op == "matmul_chain") {
    *why = fmt::format("the reference is several matrix products ({}): no template fuses those ops",
                       t.op_family.empty() ? "gemm" : t.op_family);
    return std::nullopt;
  }
  if (has("triangular")) {  // KernelBench 14/15: the product's output is masked (triu / tril): not a plain GEMM
    *why = fmt::format("'{}' is a triangular product (its output is masked), which no template computes", op);
    return std::nullopt;
  }
  if (has("gemm") || has("matmul") || has("matrix_multiplication") || op == "mm" || op == "bmm" || has("linear")) {
    if (auto b = gemm(t, &detail)) return b;
    *why = fmt::format("'{}' looks like a matrix product, but {}", op, detail);
    return std::nullopt;
  }
  if (op == "softmax" || op == "log_softmax" || op == "logsoftmax") {
    // Of any float storage type (the row-op templates compute in float and round at the store, as torch's bf16
    // softmax does), y of x's.
    const bool one =
        t.inputs.size() == 1 && t.outputs.size() == 1 && !t.inputs[0].scalar && t.inputs[0].shape == t.outputs[0].shape;
    if (!one || !bind_detail::is_float_storage(t.inputs[0].dtype) || t.outputs[0].dtype != t.inputs[0].dtype) {
      *why = fmt::format("'{}': expected one float32, bfloat16 or float16 input and one output of its shape and dtype",
                         op);
      return std::nullopt;
    }
    // The axis recognised from the graph (khive.op.dim), any rank; without it only a 2-D tensor's last axis is sure.
    if (!t.op_dim && t.inputs[0].shape.size() != 2) {
      *why = fmt::format(
          "'{}': the row-op templates take a 2-D tensor (rows x the reduced last axis), or the normalised axis "
          "recognised from the reference's graph (khive.op.dim)",
          op);
      return std::nullopt;
    }
    ojson spec{{"op", op == "softmax" ? "softmax" : "log_softmax"}, {"x", t.inputs[0].name}, {"y", t.outputs[0].name}};
    if (t.op_dim) spec["dim"] = *t.op_dim;
    return make(t, "rowop", spec);
  }
  if (op == "rmsnorm" || op == "rms_norm" || op == "residual_rmsnorm") {
    if (auto b = rmsnorm(t, op, &detail)) return b;
    *why = fmt::format("'{}': {}", op, detail);
    return std::nullopt;
  }
  // op(gate, up) of the two halves of one input's last axis (SwiGLU, GeGLU), recognised from the graph with its C
  // expression of gate and up; the gated binder checks the shapes (y is x with its last axis halved).
  if (op == "gated" && t.op_family == "gated") {
    if (t.op_expression.empty() || t.inputs.size() != 1 || t.inputs[0].scalar || t.outputs.size() != 1) {
      *why = "'gated': expected one tensor input, one output and the expression of gate and up (khive.op.expression)";
      return std::nullopt;
    }
    return make(t, "gated", ojson{{"input", t.inputs[0].name}, {"output", t.outputs[0].name}, {"op", t.op_expression}});
  }
  // A chain of pointwise ops of one input, recognised from the reference's graph with its exact C expression.
  if (op == "elementwise" || (!t.op_expression.empty() && t.op_family == "elementwise")) {
    if (t.op_expression.empty()) {
      *why = "'elementwise': the reference's ops have no C expression (khive.op.expression)";
      return std::nullopt;
    }
    // ... or of several inputs, the expression over their names (khive.op.flags: named_inputs): tensors read at the
    // output's index or broadcast along a run of its axes (the binder checks which), float scalars by value.
    if (std::find(t.op_flags.begin(), t.op_flags.end(), "named_inputs") != t.op_flags.end())
      return named_elementwise(t, why);
    if (!unary_float32(t, &detail)) {
      *why = fmt::format("'{}': {}", op, detail);
      return std::nullopt;
    }
    return make(
        t, "elementwise",
        ojson{{"inputs", ojson::array({t.inputs[0].name})}, {"output", t.outputs[0].name}, {"op", t.op_expression}});
  }
  // A reduction over one axis or a run of neighbouring ones, recognised from the graph with them (khive.op.dim).
  static const std::set<std::string> reductions{"sum", "mean", "max", "min", "prod", "argmax", "argmin", "logsumexp"};
  if (reductions.count(op)) {
    if (!t.op_dim && t.op_dims.empty()) {
      *why =
          fmt::format("'{}': the reduced axis is not known (khive.op.dim, recognised from the reference's graph)", op);
      return std::nullopt;
    }
    if (t.inputs.size() != 1 || t.inputs[0].scalar || t.outputs.size() != 1) {
      *why = fmt::format("'{}': the reduce templates take one tensor input and one output", op);
      return std::nullopt;
    }
    ojson spec{{"op", op},
               {"x", t.inputs[0].name},
               {"y", t.outputs[0].name},
               {"dim", t.op_dims.empty() ? ojson(*t.op_dim) : ojson(t.op_dims)}};
    if (std::find(t.op_flags.begin(), t.op_flags.end(), "keepdim") != t.op_flags.end()) spec["keepdim"] = true;
    return make(t, "reduce", spec);
  }
  // A scan over one axis (cumsum, cumprod), recognised from the graph with its axis and how it walks (khive.op).
  if (op == "cumsum" || op == "cumprod") {
    if (!t.op_dim) {
      *why =
          fmt::format("'{}': the scanned axis is not known (khive.op.dim, recognised from the reference's graph)", op);
      return std::nullopt;
    }
    auto flagged = [&](const char* f) {
      return std::find(t.op_flags.begin(), t.op_flags.end(), f) != t.op_flags.end();
    };
    auto ins = tensor_inputs(t);
    const bool masked = flagged("masked");
    if (ins.size() != t.inputs.size() || ins.size() != (masked ? 2u : 1u) || t.outputs.size() != 1) {
      *why = fmt::format("'{}': the scan templates take x{} and one output", op, masked ? " and a mask" : "");
      return std::nullopt;
    }
    if (masked && !dtype_is_float(ins[0]->dtype))
      std::swap(ins[0], ins[1]);  // x is the float input, the mask the other
    ojson spec{{"op", op}, {"x", ins[0]->name}, {"y", t.outputs[0].name}, {"dim", *t.op_dim}};
    if (flagged("reverse")) spec["reverse"] = true;
    if (flagged("exclusive")) spec["exclusive"] = true;
    if (masked) spec["mask"] = ins[1]->name;
    return make(t, "scan", spec);
  }
  auto it = activations().find(op);
  if (it != activations().end()) {
    if (!unary_float32(t, &detail)) {
      *why = fmt::format("'{}': {}", op, detail);
      return std::nullopt;
    }
    return make(t, "elementwise",
                ojson{{"inputs", ojson::array({t.inputs[0].name})}, {"output", t.outputs[0].name}, {"op", it->second}});
  }
  const std::string known =
      "matrix products, convolutions, poolings, normalisations, softmax / log_softmax, rmsnorm, the KernelBench "
      "activations, elementwise chains, reductions and scans over one axis, attention of three inputs";
  if (t.op_recognized == "unknown") {  // the graph said nothing: why it did not, before what the name does not say
    *why = fmt::format(
        "the reference was not recognised ({}), and {} '{}' is no op the tuner recognises either ({}); no bindings "
        "file names task {}",
        t.op_why.empty() ? "khive.op says op \"unknown\"" : t.op_why, t.op_type.empty() ? "the task's name" : "op_type",
        op, known, key_of(t));
    return std::nullopt;
  }
  *why = fmt::format("op '{}' is none the tuner recognises ({}) and no bindings file names task {}",
                     op.empty() ? "(no op_type)" : op, known, key_of(t));
  return std::nullopt;
}

}  // namespace khive::tuner
