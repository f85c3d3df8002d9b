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
    else if (binding.family == "chain")
      bt = bind_chain(c);
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
  if (!t.stages.empty() || !bt.stages.empty()) {
    if (t.stages.size() != bt.stages.size() || t.backend != bt.backend) return false;
    for (std::size_t i = 0; i < t.stages.size(); ++i)
      if (!template_applies(t.stages[i], bt.stages[i])) return false;
    return true;
  }
  return t.family == bt.family && t.backend == bt.backend && t.dtypes.count(bt.dtype) &&
         (t.ops.empty() || t.ops.count(bt.op));
}

std::vector<const Template*> applicable_templates(const Library& lib, const BoundTask& bt, std::size_t max_chains) {
  std::vector<const Template*> out;
  if (bt.stages.empty()) {
    for (const auto& t : lib.templates)
      if (template_applies(t, bt)) out.push_back(&t);
    return out;
  }
  // A chain: every combination of the stages' templates, stage 1's varying slowest.
  std::vector<std::vector<const Template*>> per;
  for (const auto& st : bt.stages) {
    per.emplace_back();
    for (const auto& t : lib.templates)
      if (template_applies(t, st)) per.back().push_back(&t);
    if (per.back().empty()) return out;
  }
  std::vector<std::size_t> idx(per.size(), 0);
  while (out.size() < max_chains) {
    std::vector<const Template*> pick;
    for (std::size_t i = 0; i < per.size(); ++i) pick.push_back(per[i][idx[i]]);
    try {
      out.push_back(&lib.chain_template(pick));
    } catch (const std::exception&) {  // no glue for the backend: no chain templates at all
      return out;
    }
    std::size_t i = per.size();
    while (i > 0 && ++idx[i - 1] == per[i - 1].size()) idx[--i] = 0;
    if (i == 0) break;
  }
  return out;
}

}  // namespace khive::tuner
