// The router family's binder: the MoE top-k router (x @ w^T, softmax over the experts, top k per token).
#include "khive/tuner/bind/common.hpp"

#include <fmt/format.h>

namespace khive::tuner::bind_detail {

// MoE top-k router: logits[t, e] = x[t, :] . w[e, :] (x [T, H], w [E, H], fp32 accumulation), p[t, :] = softmax
// over the E experts, and per token the K experts of largest p in descending order, ties toward the lower expert
// index: topk_ids [T, K] int32, topk_weights [T, K] float32 = p[t, id] (not renormalized over the K).
BoundTask bind_router(const Ctx& c) {
  c.check_keys({"description", "x", "w", "topk_weights", "topk_ids"});
  BoundTask bt;
  bt.op = "router";
  const TensorSpec& x = c.input("x");
  const TensorSpec& w = c.input("w");
  const TensorSpec& tw = c.output("topk_weights");
  const TensorSpec& ti = c.output("topk_ids");
  if (!is_float_storage(x.dtype))
    c.fail("x", "a float32, bfloat16 or float16 tensor", std::string(dtype_name(x.dtype)));
  if (x.shape.size() != 2)
    c.fail("x", "a tensor of shape [tokens, hidden]", "\"" + x.name + "\" of shape " + shape_text(x.shape));
  if (w.name == x.name) c.fail("w", "the router weight, an input other than x", "\"" + w.name + "\"");
  if (w.dtype != x.dtype)
    c.fail("w", std::string("x's dtype ") + std::string(dtype_name(x.dtype)), std::string(dtype_name(w.dtype)));
  if (w.shape.size() != 2 || w.shape[1] != x.shape[1])
    c.fail("w", "a tensor of shape [experts, " + x.shape[1] + "] (x's hidden axis last)",
           "\"" + w.name + "\" of shape " + shape_text(w.shape));
  if (tw.dtype != DType::f32) c.fail("topk_weights", "a float32 tensor", std::string(dtype_name(tw.dtype)));
  if (tw.shape.size() != 2 || tw.shape[0] != x.shape[0])
    c.fail("topk_weights", "a tensor of shape [" + x.shape[0] + ", topk] (x's token axis first)",
           "\"" + tw.name + "\" of shape " + shape_text(tw.shape));
  if (ti.name == tw.name) c.fail("topk_ids", "an output other than topk_weights", "\"" + ti.name + "\"");
  if (ti.dtype != DType::i32) c.fail("topk_ids", "an int32 tensor", std::string(dtype_name(ti.dtype)));
  if (ti.shape != tw.shape)
    c.fail("topk_ids", "topk_weights' shape " + shape_text(tw.shape),
           "\"" + ti.name + "\" of shape " + shape_text(ti.shape));
  for (const auto& t : c.task.inputs)
    if (t.name != x.name && t.name != w.name)
      c.fail("x", "a task whose inputs are x and w only", "\"" + t.name + "\" left out");
  for (const auto& t : c.task.outputs)
    if (t.name != tw.name && t.name != ti.name)
      c.fail("topk_ids", "a task whose outputs are topk_weights and topk_ids only", "\"" + t.name + "\" left out");

  const auto axes = resolved(c.task);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    auto v = [&](const std::string& n) { return axis_value(axes[i], n); };
    const int64_t T = v(x.shape[0]), H = v(x.shape[1]), E = v(w.shape[0]), K = v(tw.shape[1]);
    // K > E would leave slots no expert can fill: the family has no value to write there.
    if (K < 1 || K > E)
      c.fail("topk_ids", "a top-k axis of 1 to the number of experts",
             fmt::format("{} = {} with {} = {} experts on workload {}", tw.shape[1], K, w.shape[0], E,
                         c.task.workloads[i].uuid));
    add_workload(bt, c, i,
                 {{"TOKENS", T},
                  {"HIDDEN", H},
                  {"EXPERTS", E},
                  {"TOPK", K},
                  {"ELEM_BYTES", static_cast<int64_t>(dtype_size(x.dtype))}});
  }

  std::string p = typed_prologue(c, x.dtype);
  std::string e = launch_signature(c.task, c.backend) + " {\n";
  e += fmt::format("  khive_run({}, {}, {}, {}, {}, {}, {}, {}{});\n}}\n", x.name, w.name, tw.name, ti.name,
                   axis_cpp(c.task, x.shape[0]), axis_cpp(c.task, x.shape[1]), axis_cpp(c.task, w.shape[0]),
                   axis_cpp(c.task, tw.shape[1]), launch_args_tail(c.backend));
  bt.placeholders["PROLOGUE"] = p;
  bt.placeholders["ENTRY"] = e;
  bt.dtype = std::string(dtype_name(x.dtype));
  bt.summary = fmt::format("{}, {} = the top k = {} experts of softmax({} @ {}^T) over {} per token ({})", ti.name,
                           tw.name, tw.shape[1], x.name, w.name, w.shape[0], bt.dtype);
  return bt;
}

}  // namespace khive::tuner::bind_detail
