// The attention family's binder: scaled dot-product attention with grouped-query heads (prefill, causal, decode).
#include "khive/tuner/bind/common.hpp"

#include <fmt/format.h>

namespace khive::tuner::bind_detail {

// Scaled dot-product attention with grouped-query heads: q [B, Sq, Hq, D], k and v [B, Skv, Hkv, D], o like q
// (decode: q and o [B, Hq, D], one query per sequence, Sq = 1 with the same memory layout). The scale 1/sqrt(D) is
// fixed (SDPA's default) and query head h reads KV head h / (Hq / Hkv); causal: query i sees keys
// j <= i + (Skv - Sq), the last query row seeing every key (the bottom-right alignment of flash-attention).
BoundTask bind_attention(const Ctx& c) {
  c.check_keys({"description", "q", "k", "v", "o", "causal", "decode"});
  BoundTask bt;
  const bool causal = c.flag("causal"), decode = c.flag("decode");
  if (causal && decode) c.fail("causal", "false with decode (one query sees every cached key)", "true");
  bt.op = decode ? "decode" : causal ? "causal" : "prefill";
  const TensorSpec& q = c.input("q");
  const TensorSpec& k = c.input("k");
  const TensorSpec& v = c.input("v");
  const TensorSpec& o = c.output("o");
  if (q.dtype != DType::bf16 && q.dtype != DType::f16)
    c.fail("q", "a bfloat16 or float16 tensor", std::string(dtype_name(q.dtype)));
  for (const auto& [key, t] : {std::pair<const char*, const TensorSpec*>{"k", &k}, {"v", &v}, {"o", &o}})
    if (t->dtype != q.dtype)
      c.fail(key, std::string("q's dtype ") + std::string(dtype_name(q.dtype)), std::string(dtype_name(t->dtype)));
  const std::size_t q_rank = decode ? 3 : 4;
  if (q.shape.size() != q_rank)
    c.fail("q", decode ? "shape [B, Hq, D] (decode: one query per sequence)" : "shape [B, Sq, Hq, D]",
           "\"" + q.name + "\" of shape " + shape_text(q.shape));
  if (k.shape.size() != 4) c.fail("k", "shape [B, Skv, Hkv, D]", "\"" + k.name + "\" of shape " + shape_text(k.shape));
  if (v.shape != k.shape)
    c.fail("v", "k's shape " + shape_text(k.shape), "\"" + v.name + "\" of shape " + shape_text(v.shape));
  if (o.shape != q.shape)
    c.fail("o", "q's shape " + shape_text(q.shape), "\"" + o.name + "\" of shape " + shape_text(o.shape));
  const std::string B = q.shape[0], Hq = q.shape[q_rank - 2], D = q.shape[q_rank - 1];
  const std::string Sq = decode ? "" : q.shape[1], Skv = k.shape[1], Hkv = k.shape[2];
  if (k.shape[0] != B)
    c.fail("k", "q's batch axis " + B + " first", "\"" + k.name + "\" of shape " + shape_text(k.shape));
  if (k.shape[3] != D)
    c.fail("k", "q's head dim axis " + D + " last", "\"" + k.name + "\" of shape " + shape_text(k.shape));
  if (c.task.inputs.size() != 3)
    for (const auto& t : c.task.inputs)
      if (t.name != q.name && t.name != k.name && t.name != v.name)
        c.fail("q", "a task whose only inputs are q, k and v", "\"" + t.name + "\" left out");
  if (c.task.outputs.size() != 1)
    c.fail("o", "a task with exactly one output", std::to_string(c.task.outputs.size()) + " outputs");

  const auto axes = resolved(c.task);
  for (std::size_t w = 0; w < axes.size(); ++w) {
    auto val = [&](const std::string& n) { return axis_value(axes[w], n); };
    const int64_t hq = val(Hq), hkv = val(Hkv), sq = val(Sq), skv = val(Skv);
    const std::string at = " on workload " + c.task.workloads[w].uuid;
    if (hkv <= 0 || hq % hkv != 0)
      c.fail("k", "KV heads dividing the query heads (GQA: query head h reads KV head h / (Hq / Hkv))",
             fmt::format("{} = {}, {} = {}{}", Hq, hq, Hkv, hkv, at));
    if (causal && sq > skv)
      c.fail("causal", "at most as many queries as keys (query i sees keys j <= i + Skv - Sq)",
             fmt::format("{} = {} > {} = {}{}", Sq, sq, Skv, skv, at));
    add_workload(bt, c, w,
                 {{"BATCH", val(B)},
                  {"SQ", sq},
                  {"SKV", skv},
                  {"HQ", hq},
                  {"HKV", hkv},
                  {"D", val(D)},
                  {"ELEM_BYTES", static_cast<int64_t>(dtype_size(q.dtype))},
                  {"CAUSAL", causal ? 1 : 0},
                  {"GROUP", hq / hkv}});
  }

  std::string p = typed_prologue(c, q.dtype);
  p += "// Causal: query i of Sq sees keys j <= i + (Skv - Sq). Decode: Sq = 1 (q and o are [B, Hq, D]).\n";
  p += fmt::format("#define KHIVE_CAUSAL {}\n#define KHIVE_DECODE {}\n", causal ? 1 : 0, decode ? 1 : 0);
  p += fmt::format("#define KHIVE_ELEM_BF16 {}\n", q.dtype == DType::bf16 ? 1 : 0);
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e +=
      fmt::format("  khive_run({}, {}, {}, {}, {}, {}, {}, {}, {}, {}{});\n}}\n", q.name, k.name, v.name, o.name,
                  axis_cpp(c.task, B), decode ? std::string("int64_t(1)") : axis_cpp(c.task, Sq), axis_cpp(c.task, Skv),
                  axis_cpp(c.task, Hq), axis_cpp(c.task, Hkv), axis_cpp(c.task, D), launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(q.dtype));
  bt.summary = fmt::format("{} = softmax({}·{}^T / sqrt({}){})·{} ({}, GQA {} / {} heads, {})", o.name, q.name, k.name,
                           D, causal ? ", causal" : "", v.name, bt.op, Hq, Hkv, bt.dtype);
  return bt;
}

}  // namespace khive::tuner::bind_detail
