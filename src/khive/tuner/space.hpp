// A template's space for one bound task: which points are valid (checked before anything is built), how a
// point becomes source text, and the order in which the search visits a sub-space around a base point.
//
//   Validity v = check_point(t, bt, {{"VEC","8"},{"ITEMS","4"}});   // v.ok, v.message ("smem 240 KB > 227 KB")
//   std::string src = render(t, bt, point);                         // {{NAME}} replaced; header comment added
//   auto order = subspace_order(t, base, {"VEC","ITEMS"}, seed);     // base's neighbours first, then further out
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "khive/tuner/bind.hpp"
#include "khive/tuner/library.hpp"

namespace khive::tuner {

struct Validity {
  bool ok = true;
  std::string message;  // the failing rule's message, with {NAME} filled in, and the workload
  // Fast-path applicability (templates with fast_path rules): perf workloads the fast path takes, out of all
  // perf workloads, and the workloads (any role) that go through the generic path, each with the reason.
  std::size_t perf_fast = 0, perf_total = 0;
  std::vector<std::string> generic;
};

// A point is valid when it sets every parameter to one of its values, every rule holds on every workload, and
// its fast_path rules all hold on at least one perf workload (a fast path that no timed shape takes is useless).
// Workloads the fast path does not take stay correct through the template's generic path; listed in `generic`.
Validity check_point(const Template& t, const BoundTask& bt, const Point& p);

// "fast path on 5 of 7 perf workloads; generic path: <reason> (workload w1); ... (+3 more)"; "" without fast_path
// rules.
std::string fast_path_note(const Validity& v, std::size_t max_listed = 2);

// The variables a rule sees for one workload: the family's, numeric parameters, NAME_value flags of the
// identifier-valued ones (1 for the chosen value, 0 for the others), derived values in order.
AxisValues point_variables(const Template& t, const Point& p, const AxisValues& workload_vars);

// Source text: every {{NAME}} replaced by the point's parameter, a flag {{NAME_value}} of an identifier-valued
// parameter (1 or 0), or the binding's placeholder (PROLOGUE, ENTRY, LAUNCH, ...). An unknown placeholder throws
// std::runtime_error naming the template and the name.
std::string render(const Template& t, const BoundTask& bt, const Point& p);
// The parts of render a chain's (chain.hpp) shares: the header comment naming the template, task and point, and
// t.source with every {{NAME}} replaced by value(NAME); a name value() does not know throws, naming the template's
// file and `known` (what it may hold).
std::string render_header(const Template& t, const BoundTask& bt, const Point& p);
std::string fill_placeholders(const Template& t,
                              const std::function<std::optional<std::string>(const std::string&)>& value,
                              std::string_view known);

// Points of the sub-space where the `free` parameters vary and the others keep the base's values, best
// first: fewest parameters changed, then fewest steps along the value lists, ties broken by a hash of
// (seed, point) so that equal seeds give equal orders. The base itself is not included. At most `limit`
// points (larger sub-spaces are sampled deterministically).
std::vector<Point> subspace_order(const Template& t, const Point& base, const std::vector<std::string>& free,
                                  uint64_t seed, std::size_t limit = 20000);

// "VEC 4->8, ITEMS 2->4" (only the parameters that differ); "" when equal.
std::string describe_change(const Point& from, const Point& to);
// "VEC=8 ITEMS=4" (all parameters, in name order).
std::string describe_point(const Point& p);

// The template's point recorded in a candidate's params: its defaults, overridden by the params that name one of
// its parameters ("template" and anything else dropped).
Point point_from_params(const Template& t, const std::map<std::string, std::string>& params);

}  // namespace khive::tuner
