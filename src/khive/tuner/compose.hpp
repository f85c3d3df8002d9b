// Per-shape dispatch (strategy "tuner.dispatch"): one kernel made of several accepted template points, each
// called on the shapes where it measured fastest. The guard's single leader must be slower nowhere, so a point
// that is best on long rows but poor on short ones never leads; a composite takes the best of each.
//
//   DispatchPlan plan = plan_dispatch(task, bt, lib, leader, backups);   // per perf shape: the fastest point
//   if (plan.ok()) { std::string src = render_composite(task, bt, plan.variants, plan.routes); ... }
//   else plan.reason                                                       // "no shape gains more than 3% ..."
//
// The composite: the binding's PROLOGUE once, each variant's rendered body in `namespace khive_v<i> { ... }`
// (its #include lines hoisted to the top, the macros it defines #undef'd after it), then the ENTRY once, its
// khive_run call going through a dispatcher that picks the variant of the nearest measured shape in log space
// of the task's var axes. Any shape, measured or not, runs a point the guard accepted on every workload.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "khive/agent/agent.hpp"
#include "khive/tuner/bind.hpp"
#include "khive/tuner/library.hpp"

namespace khive::tuner {

inline constexpr const char* kDispatchTemplate = "tuner.dispatch";

// A composite cannot be made from these variants (mixed families, a construct that cannot live in a namespace).
struct ComposeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A rendered kernel made ready to live in a namespace: its #include lines and the guarded configuration blocks
// before them (to hoist above every namespace), the rest, and the macros it defines (to #undef after it). Shared by the
// composites here and the chains' stages (chain.hpp). Throws ComposeError, `what` first, for what cannot be wrapped: an
// extern "C" declaration, an #include inside #if, #pragma once, a library namespace reopened or a library template
// specialized.
struct NamespacedBody {
  std::vector<std::string> includes;  // hoisted above the namespaces: #include lines and guarded configuration blocks
  std::string text;
  std::set<std::string> macros;
};
NamespacedBody namespaced_body(const std::string& rendered, const std::string& what);
// Adds a body's hoisted units once each; two different configuration blocks of one macro are a ComposeError.
// Both the composites (variant_bodies) and the chains (render_chain) merge their parts' units through it.
void merge_hoisted(std::vector<std::string>& hoisted, const NamespacedBody& b, const std::string& what);

struct Variant {
  const Template* t = nullptr;
  Point point;
  std::string candidate;  // the accepted candidate it was measured as ("" when unknown)
};

// One measured call shape (the var axes of one or more perf workloads) and the variant it runs.
struct Route {
  std::vector<std::string> workloads;   // uuids of the perf workloads with this shape
  std::map<std::string, int64_t> axes;  // the task's var axes
  int variant = 0;
};

// The timed shapes of a bound task: its perf workloads grouped by their var axes (workloads of one shape cannot be
// told apart at run time), in workload order, each with its workloads' uuids and weights.
struct PerfShape {
  std::map<std::string, int64_t> axes;
  std::vector<std::string> workloads;
  std::vector<double> weights;
};
std::vector<PerfShape> perf_shapes(const Task& task, const BoundTask& bt);

// Throws ComposeError naming the reason. Every variant's template must apply to bt (one binding: the same
// PROLOGUE and ENTRY), at least one variant and one route, routes naming existing variants.
std::string render_composite(const Task& task, const BoundTask& bt, const std::vector<Variant>& variants,
                             const std::vector<Route>& routes);

struct DispatchOptions {
  double min_gain = 0.03;        // a shape leaves the leader's point only for a point this much faster there
  std::size_t max_variants = 4;  // compile time grows with each (a CUTLASS point is a minute of nvcc)
};

struct DispatchPlan {
  std::vector<Variant> variants;
  std::vector<Route> routes;
  std::map<std::string, std::string> params;  // template tuner.dispatch, variants, v0.., route
  std::string note;                           // which shape goes where and the expected gain
  double expected_time_s = 0;                 // weighted geometric mean of the chosen points' medians
  std::string reason;                         // why there is no plan (empty when there is one)
  bool ok() const { return reason.empty(); }
};

// Per perf shape the fastest template point among the leader and backups (a composite among them counts as
// its variants, each with the composite's own measured time on its shapes). No plan when the leader's own
// points would be chosen everywhere, when no shape gains min_gain, or when a template of another binding
// family is involved (that candidate is skipped and named in the reason only when nothing else is left).
DispatchPlan plan_dispatch(const Task& task, const BoundTask& bt, const Library& lib,
                           const std::optional<MeasuredKernel>& leader, const std::vector<MeasuredKernel>& backups,
                           const DispatchOptions& o = {});

// "rowop.cpu_softmax|LANES=16|ROW_BLOCK=4" -> {"template": "rowop.cpu_softmax", "LANES": "16", ...}; the inverse of
// point_key. Throws std::runtime_error on a malformed key.
std::map<std::string, std::string> parse_point_key(const std::string& key);

// The template points of a composite's params (v0, v1, ... in order), each with "template"; empty for other params.
std::vector<std::map<std::string, std::string>> dispatch_variant_points(
    const std::map<std::string, std::string>& params);

}  // namespace khive::tuner
