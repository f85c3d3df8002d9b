// Binding tasks to families (docs/tuner.md, "Bindings"). The generated PROLOGUE gives a template everything it
// needs in the family's own terms (storage type, conversions, the op), and ENTRY adapts the task's exact
// khive_launch signature to the family's internal khive_run, so a template never mentions a task's tensor names.
#include "khive/tuner/bind.hpp"

#include "khive/tuner/bind/common.hpp"

namespace khive::tuner {

using namespace bind_detail;

BoundTask bind_task(const Task& task, Backend backend, const Binding& binding) {
  Ctx c{task, backend, binding};
  BoundTask bt;
  try {
    if (binding.family == "elementwise")
      bt = bind_elementwise(c);
    else if (binding.family == "gated")
      bt = bind_gated(c);
    else if (binding.family == "rope")
      bt = bind_rope(c);
    else if (binding.family == "rowop")
      bt = bind_rowop(c);
    else if (binding.family == "gemm")
      bt = bind_gemm(c);
    else if (binding.family == "attention")
      bt = bind_attention(c);
    else if (binding.family == "router")
      bt = bind_router(c);
    else if (binding.family == "reduce")
      bt = bind_reduce(c);
    else if (binding.family == "scan")
      bt = bind_scan(c);
    else if (binding.family == "conv")
      bt = bind_conv(c);
    else if (binding.family == "pool")
      bt = bind_pool(c);
    else if (binding.family == "norm")
      bt = bind_norm(c);
    else
      c.fail("family", known_families_text(), "\"" + binding.family + "\"");
  } catch (const TaskFormatError&) {
    throw;
  } catch (const std::exception& e) {  // axis translation, resolve_axes
    throw TaskFormatError(c.file(), c.field("family"), "a task the " + binding.family + " family can bind", e.what());
  }
  bt.key = binding.key;
  bt.family = binding.family;
  bt.backend = backend;
  bt.placeholders["LAUNCH"] = launch_signature(task, backend);
  return bt;
}

bool template_applies(const Template& t, const BoundTask& bt) {
  return t.family == bt.family && t.backend == bt.backend && t.dtypes.count(bt.dtype) &&
         (t.ops.empty() || t.ops.count(bt.op));
}

}  // namespace khive::tuner
