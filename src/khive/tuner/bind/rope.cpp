// The rope family's binder: rotary position embedding (rotate-half) of q and k in one launch.
#include "khive/tuner/bind/common.hpp"

#include <fmt/format.h>

namespace khive::tuner::bind_detail {

// Rotary position embedding, rotate-half form (GPT-NeoX, HF Llama), out of place on q and k together: x [T, H, D]
// per head splits into x1 = x[..., :D/2] and x2 = x[..., D/2:]; cos and sin [T, D/2] fp32 hold one value per
// rotation pair (already gathered per token): out1 = x1·cos - x2·sin, out2 = x2·cos + x1·sin. q and k share the
// token and head-dim axes and cos/sin, so one template call rotates both (one launch on the GPU).
BoundTask bind_rope(const Ctx& c) {
  c.check_keys({"description", "q", "k", "cos", "sin", "q_out", "k_out"});
  BoundTask bt;
  bt.op = "rope";
  const TensorSpec& q = c.input("q");
  const TensorSpec& k = c.input("k");
  const TensorSpec& cs = c.input("cos");
  const TensorSpec& sn = c.input("sin");
  const TensorSpec& qo = c.output("q_out");
  const TensorSpec& ko = c.output("k_out");
  if (q.name == k.name || cs.name == sn.name)
    c.fail(q.name == k.name ? "k" : "sin", "a tensor of its own (q, k, cos and sin are four inputs)",
           "\"" + (q.name == k.name ? k.name : sn.name) + "\"");
  if (!is_float_storage(q.dtype))
    c.fail("q", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(q.dtype)));
  if (q.shape.size() != 3)
    c.fail("q", "shape [T, Hq, D] (tokens, heads, head dim)", "\"" + q.name + "\" of shape " + shape_text(q.shape));
  if (k.dtype != q.dtype)
    c.fail("k", std::string("q's dtype ") + std::string(dtype_name(q.dtype)), std::string(dtype_name(k.dtype)));
  const std::string T = q.shape[0], Hq = q.shape[1], D = q.shape[2];
  if (k.shape.size() != 3 || k.shape[0] != T || k.shape[2] != D)
    c.fail("k", "shape [" + T + ", Hkv, " + D + "] (q's token and head-dim axes)",
           "\"" + k.name + "\" of shape " + shape_text(k.shape));
  const std::string Hkv = k.shape[1];
  for (const auto& [key, t] : {std::pair<const char*, const TensorSpec*>{"cos", &cs}, {"sin", &sn}}) {
    if (t->dtype != DType::f32)
      c.fail(key, "a float32 tensor (one value per token and rotation pair)", std::string(dtype_name(t->dtype)));
    if (t->shape.size() != 2 || t->shape[0] != T)
      c.fail(key, "shape [" + T + ", " + D + " / 2] (per token, one value per rotation pair)",
             "\"" + t->name + "\" of shape " + shape_text(t->shape));
  }
  if (cs.shape != sn.shape)
    c.fail("sin", "cos's shape " + shape_text(cs.shape), "\"" + sn.name + "\" of shape " + shape_text(sn.shape));
  if (qo.dtype != q.dtype || qo.shape != q.shape)
    c.fail("q_out", "an output with q's dtype and shape " + shape_text(q.shape),
           "\"" + qo.name + "\" of shape " + shape_text(qo.shape) + ", " + std::string(dtype_name(qo.dtype)));
  if (ko.dtype != k.dtype || ko.shape != k.shape)
    c.fail("k_out", "an output with k's dtype and shape " + shape_text(k.shape),
           "\"" + ko.name + "\" of shape " + shape_text(ko.shape) + ", " + std::string(dtype_name(ko.dtype)));
  if (qo.name == ko.name) c.fail("k_out", "an output other than q_out", "\"" + ko.name + "\"");
  if (c.task.inputs.size() != 4)
    for (const auto& t : c.task.inputs)
      if (t.name != q.name && t.name != k.name && t.name != cs.name && t.name != sn.name)
        c.fail("q", "a task whose only inputs are q, k, cos and sin", "\"" + t.name + "\" left out");
  if (c.task.outputs.size() != 2)
    c.fail("q_out", "a task with exactly two outputs (q_out, k_out)",
           std::to_string(c.task.outputs.size()) + " outputs");

  const auto axes = resolved(c.task);
  for (std::size_t w = 0; w < axes.size(); ++w) {
    auto v = [&](const std::string& n) { return axis_value(axes[w], n); };
    const int64_t d = v(D), h = v(cs.shape[1]);
    const std::string at = " on workload " + c.task.workloads[w].uuid;
    if (d < 2 || d % 2 != 0)
      c.fail("q", "an even head dim >= 2 (rotate-half pairs x[i] with x[i + D/2])", fmt::format("{} = {}{}", D, d, at));
    if (h != d / 2)
      c.fail("cos", "a last axis of D / 2 (one value per rotation pair)",
             fmt::format("{} = {} for {} = {}{}", cs.shape[1], h, D, d, at));
    add_workload(bt, c, w,
                 {{"TOKENS", v(T)},
                  {"HQ", v(Hq)},
                  {"HKV", v(Hkv)},
                  {"D", d},
                  {"ELEM_BYTES", static_cast<int64_t>(dtype_size(q.dtype))}});
  }

  std::string p = typed_prologue(c, q.dtype);
  p += "// Rotate-half RoPE: per token t, head and pair i < D/2, with c = cos[t*D/2 + i], s = sin[t*D/2 + i]:\n"
       "// out[i] = x[i]*c - x[i + D/2]*s, out[i + D/2] = x[i + D/2]*c + x[i]*s (fp32, one rounding to khive_t).\n";
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  khive_run({}, {}, {}, {}, {}, {}, {}, {}, {}, {}{});\n}}\n", q.name, k.name, cs.name, sn.name,
                   qo.name, ko.name, axis_cpp(c.task, T), axis_cpp(c.task, Hq), axis_cpp(c.task, Hkv),
                   axis_cpp(c.task, D), launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(q.dtype));
  bt.summary = fmt::format("{}, {} = rope({}, {}; {}, {}) rotate-half over {}, {} / {} heads ({})", qo.name, ko.name,
                           q.name, k.name, cs.name, sn.name, D, Hq, Hkv, bt.dtype);
  return bt;
}

}  // namespace khive::tuner::bind_detail
