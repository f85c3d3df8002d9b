// Per-shape dispatch composites (compose.hpp): choosing a point per measured shape, and rendering several points of
// one binding into one translation unit.
#include "khive/tuner/compose.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "khive/support/text.hpp"
#include "khive/tuner/space.hpp"
#include "khive/tuner/tuner.hpp"

namespace khive::tuner {

namespace {

const std::string kPrologueMark = "/*@@khive-compose:PROLOGUE@@*/";
const std::string kEntryMark = "/*@@khive-compose:ENTRY@@*/";

// "#  define NAME(x) ..." -> ("define", "NAME(x) ..."); ("", "") for a line that is no directive.
std::pair<std::string, std::string> directive(const std::string& line) {
  const std::string t = trim(line);
  if (t.empty() || t[0] != '#') return {"", ""};
  std::size_t i = 1;
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t')) ++i;
  std::size_t j = i;
  while (j < t.size() && std::isalpha(static_cast<unsigned char>(t[j]))) ++j;
  return {t.substr(i, j - i), trim(t.substr(j))};
}

std::string macro_name(const std::string& rest) {
  std::size_t j = 0;
  while (j < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[j])) || rest[j] == '_')) ++j;
  return rest.substr(0, j);
}

// Macros a text defines (any #define, conditional or not).
std::set<std::string> defined_macros(const std::string& text) {
  std::set<std::string> out;
  for (const auto& l : split_lines(text))
    if (auto [d, rest] = directive(l); d == "define") out.insert(macro_name(rest));
  return out;
}

}  // namespace

// Splits a rendered text (PROLOGUE and ENTRY possibly replaced by the marks) into what is hoisted above the
// namespaces (its #includes, and each guarded block of directives before its last #include: a configuration default
// such as `#ifndef CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED / #define ... / #endif`, which must be in effect when the
// headers are read: left in the body, it came after the hoisted headers and a BLOCK_N 176 attention variant lost its
// m64n176 wgmma atom, 0.71x of SDPA where the same point alone read 0.98x, 2026-12-07) and the body, refusing what
// cannot live inside a namespace. Unconditional #defines stay in the body: they are the variant's own switches.
NamespacedBody namespaced_body(const std::string& rendered, const std::string& what) {
  auto refuse = [&](std::size_t line_no, const std::string& why) -> void {
    throw ComposeError(
        fmt::format("{}: {}, line {} of its rendered source; it cannot be wrapped in a namespace", what, why, line_no));
  };
  static const std::regex kLibNamespace(
      R"(^\s*namespace\s+(std|cute|cutlass|cub|thrust|cooperative_groups|nvcuda)\b[^=]*$)");
  static const std::regex kLibSpecialization(R"(template\s*<\s*>\s*(struct|class)\s+(std|cute|cutlass|cub|thrust)::)");
  std::vector<std::string> lines = split_lines(rendered);
  for (auto& line : lines)
    for (const std::string* m : {&kPrologueMark, &kEntryMark})
      if (auto at = line.find(*m); at != std::string::npos) line.erase(at, m->size());
  // Which lines continue the directive of the line before (a trailing backslash), and where the last #include is.
  std::vector<bool> cont(lines.size(), false);
  std::size_t last_include = 0;  // 1-based; 0: none
  for (std::size_t i = 0; i < lines.size(); ++i) {
    cont[i] = i > 0 && !lines[i - 1].empty() && lines[i - 1].back() == '\\';
    if (!cont[i] && directive(lines[i]).first == "include") last_include = i + 1;
  }
  // A guarded block of directives alone, from the #if* at `i` to its #endif, before the last #include: its end, else 0.
  auto config_block_end = [&](std::size_t i) -> std::size_t {
    int depth = 0;
    for (std::size_t j = i; j < lines.size() && j + 1 < last_include; ++j) {
      if (cont[j]) continue;
      const auto [d, rest] = directive(lines[j]);
      const std::string t = trim(lines[j]);
      if (d.empty() && !t.empty() && t.rfind("//", 0) != 0) return 0;  // code inside: the block stays in the body
      if (d == "include") return 0;                                    // refused below
      if (d == "if" || d == "ifdef" || d == "ifndef") ++depth;
      if (d == "endif" && --depth == 0) return j + 1;
    }
    return 0;
  };
  NamespacedBody b;
  int depth = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t n = i + 1;
    const std::string& line = lines[i];
    if (cont[i]) {
      b.text += line + "\n";
      continue;
    }
    const std::string tl = trim(line);
    const bool comment = tl.rfind("//", 0) == 0;
    const auto [d, rest] = directive(line);
    if (depth == 0 && (d == "if" || d == "ifdef" || d == "ifndef"))
      if (const std::size_t end = config_block_end(i)) {
        std::string unit;
        for (std::size_t j = i; j < end; ++j) unit += lines[j] + (j + 1 < end ? "\n" : "");
        b.includes.push_back(unit);
        i = end - 1;
        continue;
      }
    if (d == "if" || d == "ifdef" || d == "ifndef")
      ++depth;
    else if (d == "endif")
      --depth;
    if (d == "include") {
      if (depth > 0) refuse(n, "an #include inside #if");
      b.includes.push_back(tl);
      continue;
    }
    if (d == "pragma" && trim(rest) == "once") refuse(n, "#pragma once");
    if (d == "define") b.macros.insert(macro_name(rest));
    if (!comment && d.empty()) {
      if (line.find("extern \"C\"") != std::string::npos)
        refuse(n, "an extern \"C\" declaration (one symbol per variant would clash)");
      if (std::regex_search(line, kLibNamespace)) refuse(n, "a library namespace reopened at global scope");
      if (std::regex_search(line, kLibSpecialization)) refuse(n, "an explicit specialization of a library template");
    }
    b.text += line + "\n";
  }
  return b;
}

// Adds a body's hoisted units to `hoisted` (once each, in first-use order), refusing two bodies (a composite's
// variants, a chain's stages) whose configuration blocks for one macro differ: they cannot share one reading of the
// headers.
void merge_hoisted(std::vector<std::string>& hoisted, const NamespacedBody& b, const std::string& what) {
  for (const auto& unit : b.includes) {
    if (std::find(hoisted.begin(), hoisted.end(), unit) != hoisted.end()) continue;
    for (const auto& m : defined_macros(unit))
      for (const auto& h : hoisted)
        if (defined_macros(h).count(m))
          throw ComposeError(
              fmt::format("{} configures {} before its headers differently from one before it "
                          "(\"{}\" against \"{}\"): one translation unit reads the headers once",
                          what, m, unit, h));
    hoisted.push_back(unit);
  }
}

namespace {

// Positions of the call "khive_run(" (not part of a longer name).
std::vector<std::size_t> run_calls(const std::string& s) {
  std::vector<std::size_t> out;
  const std::string k = "khive_run(";
  for (auto at = s.find(k); at != std::string::npos; at = s.find(k, at + 1))
    if (at == 0 || !is_ident_char(s[at - 1])) out.push_back(at);
  return out;
}

std::vector<std::string> var_axes(const Task& task) {
  std::vector<std::string> out;
  for (const auto& a : task.axes)
    if (a.kind == Axis::Kind::var) out.push_back(a.name);
  return out;
}

std::string point_text(const Variant& v) { return fmt::format("{} {}", v.t->name, describe_point(v.point)); }

// Every variant is a template point of the task's binding (they share its PROLOGUE and ENTRY).
void check_variants(const BoundTask& bt, const std::vector<Variant>& variants) {
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const Template* t = variants[i].t;
    if (!t) throw ComposeError(fmt::format("variant v{} has no template", i));
    if (!template_applies(*t, bt))
      throw ComposeError(
          fmt::format("variant v{} ({}: family {}, {}) does not serve the task's binding {} (family {}, {}, {} {}): "
                      "all variants must "
                      "come from templates of one binding, which share its PROLOGUE and ENTRY",
                      i, t->name, t->family, backend_name(t->backend), bt.key, bt.family, backend_name(bt.backend),
                      bt.dtype, bt.op));
  }
}

// Every route names a variant and a value for each var axis.
void check_routes(const std::vector<std::string>& axes, const std::vector<Route>& routes, std::size_t variants) {
  for (std::size_t r = 0; r < routes.size(); ++r) {
    if (routes[r].variant < 0 || static_cast<std::size_t>(routes[r].variant) >= variants)
      throw ComposeError(fmt::format("route {} names variant v{} of {}", r, routes[r].variant, variants));
    for (const auto& a : axes)
      if (!routes[r].axes.count(a)) throw ComposeError(fmt::format("route {} has no value for the var axis {}", r, a));
  }
  if (axes.empty() && routes.size() > 1)
    throw ComposeError("the task has no var axes: its shapes cannot be told apart at run time");
}

// The variants' bodies, each in its namespace khive_v<i>, and the includes they need (once each, in first-use order).
std::string variant_bodies(const BoundTask& bt, const std::string& prologue, const std::vector<Variant>& variants,
                           std::vector<std::string>& includes) {
  BoundTask marked = bt;
  marked.placeholders["PROLOGUE"] = kPrologueMark;
  marked.placeholders["ENTRY"] = kEntryMark;
  const std::set<std::string> prologue_macros = defined_macros(prologue);
  std::string bodies;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const Variant& v = variants[i];
    const std::string r = render(*v.t, marked, v.point);
    for (const std::string* m : {&kPrologueMark, &kEntryMark}) {
      const auto first = r.find(*m);
      if (first == std::string::npos || r.find(*m, first + 1) != std::string::npos)
        throw ComposeError(fmt::format("variant v{} ({}): its template must contain {{{{{}}}}} exactly once", i,
                                       v.t->name, m == &kPrologueMark ? "PROLOGUE" : "ENTRY"));
    }
    const std::string what = fmt::format("variant v{} ({})", i, v.t->name);
    NamespacedBody b = namespaced_body(r, what);
    merge_hoisted(includes, b, what);
    bodies += fmt::format("\n// ---- variant v{}: {}{}\nnamespace khive_v{} {{\n{}}}  // namespace khive_v{}\n", i,
                          point_text(v), v.candidate.empty() ? "" : " (candidate " + v.candidate + ")", i, b.text, i);
    // A macro of this variant must not leak into the next one (the next defines its own value); the PROLOGUE's
    // macros stay (a body may only re-state a default for them under #ifndef).
    for (const auto& m : b.macros)
      if (!prologue_macros.count(m)) bodies += "#undef " + m + "\n";
  }
  return bodies;
}

// The dispatcher, namespace khive_dispatch: the measured shapes, the variant each runs, pick() (the variant of the
// nearest of them in log space for any call) and run(variant, args...).
std::string dispatcher_text(const std::vector<std::string>& axes, const std::vector<Route>& routes,
                            std::size_t variants) {
  std::string d =
      "\n// ---- dispatch: a call runs the variant of the nearest measured shape in log space of the var axes (exact "
      "for a\n"
      "// measured shape); every variant was accepted on every correctness workload, so any shape is served "
      "correctly.\n"
      "namespace khive_dispatch {\n";
  if (axes.empty()) {
    d += fmt::format("inline int pick() {{ return {}; }}\n", routes.front().variant);
  } else {
    std::string shape_rows, variant_list, params, names;
    for (std::size_t r = 0; r < routes.size(); ++r) {
      std::string row;
      for (const auto& a : axes) row += (row.empty() ? "" : ", ") + fmt::format("{}", routes[r].axes.at(a));
      std::string ws;
      for (const auto& w : routes[r].workloads) ws += (ws.empty() ? "" : " ") + w;
      shape_rows += fmt::format("    {{{}}},   // {} -> v{}\n", row, ws, routes[r].variant);
      variant_list += (r ? ", " : "") + std::to_string(routes[r].variant);
    }
    for (std::size_t a = 0; a < axes.size(); ++a) {
      params += fmt::format("{}int64_t a{}", a ? ", " : "", a);
      names += (a ? ", " : "") + axes[a];
    }
    d += fmt::format("constexpr int kShapes = {}, kAxes = {};   // axes: {}\n", routes.size(), axes.size(), names);
    d += "constexpr int64_t kShape[kShapes][kAxes] = {\n" + shape_rows + "};\n";
    d += "constexpr int kVariant[kShapes] = {" + variant_list + "};\n";
    d += "inline double khive_log_axis(int64_t v) { return std::log(v < 1 ? 1.0 : static_cast<double>(v)); }\n";
    d += "inline int pick(" + params + ") {\n  const int64_t v[kAxes] = {";
    for (std::size_t a = 0; a < axes.size(); ++a) d += fmt::format("{}a{}", a ? ", " : "", a);
    // A measured shape is found by integer compares (a few ns): the guard times the composite on exactly those
    // shapes against a leader without a dispatcher, and the log-space search over every measured shape (~0.7 us of
    // host time on the H200, in front of every launch) made short kernels measurably slower than the leader's own
    // point on the shapes that run it. Other shapes take the search.
    d += "};\n"
         "  for (int s = 0; s < kShapes; ++s) {\n"
         "    bool same = true;\n"
         "    for (int a = 0; a < kAxes; ++a) same = same && v[a] == kShape[s][a];\n"
         "    if (same) return kVariant[s];\n"
         "  }\n"
         "  int best = 0;\n  double best_d = 0;\n"
         "  for (int s = 0; s < kShapes; ++s) {\n"
         "    double dist = 0;\n"
         "    for (int a = 0; a < kAxes; ++a) {\n"
         "      const double e = khive_log_axis(v[a]) - khive_log_axis(kShape[s][a]);\n"
         "      dist += e * e;\n"
         "    }\n"
         "    if (s == 0 || dist < best_d) { best = s; best_d = dist; }\n"
         "  }\n"
         "  return kVariant[best];\n}\n";
  }
  d += "template <class... A>\ninline void run(int variant, A&&... a) {\n  switch (variant) {\n";
  for (std::size_t i = 1; i < variants; ++i)
    d += fmt::format("    case {0}: khive_v{0}::khive_run(static_cast<A&&>(a)...); return;\n", i);
  d += "    default: khive_v0::khive_run(static_cast<A&&>(a)...); return;\n  }\n}\n}  // namespace khive_dispatch\n\n";
  return d;
}

}  // namespace

std::string render_composite(const Task& task, const BoundTask& bt, const std::vector<Variant>& variants,
                             const std::vector<Route>& routes) {
  if (variants.empty()) throw ComposeError("a composite needs at least one variant");
  if (routes.empty()) throw ComposeError("a composite needs at least one measured shape to route");
  check_variants(bt, variants);
  const auto pro = bt.placeholders.find("PROLOGUE"), ent = bt.placeholders.find("ENTRY");
  if (pro == bt.placeholders.end() || ent == bt.placeholders.end())
    throw ComposeError("the binding of " + bt.key + " has no PROLOGUE or ENTRY");
  const std::string& entry = ent->second;
  const auto calls = run_calls(entry);
  if (calls.size() != 1)
    throw ComposeError(fmt::format("the ENTRY of {} calls khive_run {} times; the dispatcher replaces exactly one call",
                                   bt.key, calls.size()));
  const auto axes = var_axes(task);
  check_routes(axes, routes, variants.size());
  std::vector<std::string> includes;
  const std::string bodies = variant_bodies(bt, pro->second, variants, includes);

  std::string out =
      fmt::format("// khive tuner: per-shape dispatch over {} points of one binding for {} ({})\n// task: {}\n",
                  variants.size(), bt.key, backend_name(bt.backend), bt.summary);
  for (std::size_t i = 0; i < variants.size(); ++i) out += fmt::format("// v{}: {}\n", i, point_text(variants[i]));
  out += pro->second;
  if (!pro->second.empty() && pro->second.back() != '\n') out += '\n';
  for (const auto& inc : includes) out += inc + "\n";
  out += bodies;
  out += dispatcher_text(axes, routes, variants.size());

  std::string call = "khive_dispatch::run(khive_dispatch::pick(";
  for (std::size_t a = 0; a < axes.size(); ++a) call += (a ? ", " : "") + axes[a];
  call += "), ";
  std::string e = entry;
  e.replace(calls.front(), std::string("khive_run(").size(), call);
  out += e;
  return out;
}

std::map<std::string, std::string> parse_point_key(const std::string& key) {
  std::map<std::string, std::string> out;
  std::size_t i = 0;
  bool first = true;
  while (i <= key.size()) {
    auto e = key.find('|', i);
    if (e == std::string::npos) e = key.size();
    const std::string part = key.substr(i, e - i);
    if (first) {
      if (part.empty())
        throw std::runtime_error("point key \"" + key + "\": expected a template name before the first |");
      out["template"] = part;
      first = false;
    } else {
      const auto eq = part.find('=');
      if (eq == std::string::npos || eq == 0)
        throw std::runtime_error("point key \"" + key + "\": expected NAME=VALUE, got \"" + part + "\"");
      out[part.substr(0, eq)] = part.substr(eq + 1);
    }
    i = e + 1;
  }
  return out;
}

std::vector<std::map<std::string, std::string>> dispatch_variant_points(
    const std::map<std::string, std::string>& params) {
  std::vector<std::map<std::string, std::string>> out;
  auto it = params.find("template");
  if (it == params.end() || it->second != kDispatchTemplate) return out;
  for (std::size_t i = 0;; ++i) {
    auto v = params.find("v" + std::to_string(i));
    if (v == params.end()) break;
    out.push_back(parse_point_key(v->second));
  }
  return out;
}

std::vector<PerfShape> perf_shapes(const Task& task, const BoundTask& bt) {
  const auto axes = var_axes(task);
  std::vector<PerfShape> shapes;
  for (std::size_t w = 0; w < bt.workload_names.size() && w < task.workloads.size(); ++w) {
    if (!bt.workload_perf[w]) continue;
    std::map<std::string, int64_t> ax;
    for (const auto& a : axes)
      if (auto it = task.workloads[w].axes.find(a); it != task.workloads[w].axes.end()) ax[a] = it->second;
    auto g = std::find_if(shapes.begin(), shapes.end(), [&](const PerfShape& x) { return x.axes == ax; });
    if (g == shapes.end()) g = shapes.insert(shapes.end(), PerfShape{ax, {}, {}});
    g->workloads.push_back(bt.workload_names[w]);
    g->weights.push_back(task.workloads[w].weight);
  }
  return shapes;
}

namespace {

// plan_dispatch's steps. Options are template points with their measured medians; a composite contributes each of
// its variants on the shapes it routed to it. One option per point (the first measurement of a workload wins: the
// leader's, then in rank order). Costs are weighted sums of log medians over a shape's workloads.
class DispatchPlanner {
 public:
  DispatchPlanner(const BoundTask& bt, const Library& lib, const MeasuredKernel& leader, std::vector<PerfShape> groups,
                  const DispatchOptions& o)
      : bt_(bt), lib_(lib), leader_(leader), groups_(std::move(groups)), o_(o) {}

  // Adds the options of one candidate (the leader's also mark which option it runs on each workload).
  void take(const MeasuredKernel& k, bool is_leader);
  // Per shape: the fastest option; the leader's own point unless another is min_gain faster there. False (and
  // plan.reason) when a shape has no measured option.
  bool choose(DispatchPlan& plan);
  // Too many points: drops, one at a time, the one whose shapes lose least by moving to their best remaining point.
  void limit_variants();
  // Whether the choice beats the leader by enough; sets plan.reason when not, plan.expected_time_s when it does.
  bool worth_it(DispatchPlan& plan);
  // The variants (in order of first use, the leader's point first when used), routes and note.
  void fill(DispatchPlan& plan) const;

 private:
  struct Option {
    const Template* t = nullptr;
    Point point;
    std::string key, candidate;
    std::map<std::string, double> time;
  };
  int add(const Template* t, const Point& p, const std::string& cand, const std::map<std::string, double>& time);
  void take_composite(const MeasuredKernel& k, bool is_leader);
  static std::optional<double> log_cost(const std::map<std::string, double>& time, const PerfShape& g);
  std::optional<double> cost(int option, std::size_t g) const { return log_cost(opts_[option].time, groups_[g]); }
  std::optional<double> leader_cost(std::size_t g) const { return log_cost(leader_.workload_median_s, groups_[g]); }
  double wsum(std::size_t g) const;
  double total(const std::vector<int>& ch) const;
  std::optional<int> leader_option(std::size_t g) const;

  const BoundTask& bt_;
  const Library& lib_;
  const MeasuredKernel& leader_;
  const std::vector<PerfShape> groups_;
  const DispatchOptions& o_;
  std::vector<Option> opts_;
  std::vector<std::string> skipped_;
  std::map<std::string, int> leader_option_;  // workload -> the option the leader runs there (none: not a template)
  std::vector<int> choice_;                   // per shape, its option
  double lead_t_ = 0;                         // the leader's weighted time
};

int DispatchPlanner::add(const Template* t, const Point& p, const std::string& cand,
                         const std::map<std::string, double>& time) {
  const std::string key = point_key(t->name, p);
  auto it = std::find_if(opts_.begin(), opts_.end(), [&](const Option& x) { return x.key == key; });
  if (it == opts_.end()) it = opts_.insert(opts_.end(), Option{t, p, key, cand, {}});
  for (const auto& [w, s] : time)
    if (s > 0) it->time.emplace(w, s);
  return static_cast<int>(it - opts_.begin());
}

void DispatchPlanner::take_composite(const MeasuredKernel& k, bool is_leader) {
  std::vector<std::map<std::string, std::string>> pts;
  try {
    pts = dispatch_variant_points(k.params);
  } catch (const std::exception& e) {
    skipped_.push_back(k.id + " (" + e.what() + ")");
    return;
  }
  const auto ids = split_ws(k.params.count("variants") ? k.params.at("variants") : "");
  std::map<std::string, std::size_t> route;
  for (const auto& r : split_ws(k.params.count("route") ? k.params.at("route") : "")) {
    const auto eq = r.rfind("=v");
    if (eq == std::string::npos) continue;
    route[r.substr(0, eq)] = std::stoul(r.substr(eq + 2));
  }
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const Template* t = lib_.find_template(pts[i].at("template"));
    if (!t || !template_applies(*t, bt_)) {
      skipped_.push_back(
          fmt::format("{} v{} ({}: not a template of this task's binding)", k.id, i, pts[i].at("template")));
      continue;
    }
    std::map<std::string, double> time;
    for (const auto& [w, vi] : route)
      if (vi == i)
        if (auto m = k.workload_median_s.find(w); m != k.workload_median_s.end()) time[w] = m->second;
    const int oi = add(t, point_from_params(*t, pts[i]), i < ids.size() ? ids[i] : k.id, time);
    if (is_leader)
      for (const auto& [w, s] : time) leader_option_[w] = oi;
  }
}

void DispatchPlanner::take(const MeasuredKernel& k, bool is_leader) {
  auto tn = k.params.find("template");
  if (tn == k.params.end()) {
    skipped_.push_back(k.id + " (not made from a template)");
    return;
  }
  if (tn->second == kDispatchTemplate) return take_composite(k, is_leader);
  const Template* t = lib_.find_template(tn->second);
  if (!t) {
    skipped_.push_back(k.id + " (template " + tn->second + " is not in the library)");
    return;
  }
  if (!template_applies(*t, bt_)) {
    skipped_.push_back(fmt::format("{} ({}: family {}, {}, not this task's binding {} of family {})", k.id, t->name,
                                   t->family, backend_name(t->backend), bt_.key, bt_.family));
    return;
  }
  const int oi = add(t, point_from_params(*t, k.params), k.id, k.workload_median_s);
  if (is_leader)
    for (const auto& [w, s] : k.workload_median_s) leader_option_[w] = oi;
}

// Weighted sum of log medians over a shape's workloads; none when one of them has no (positive) median.
std::optional<double> DispatchPlanner::log_cost(const std::map<std::string, double>& time, const PerfShape& g) {
  double s = 0;
  for (std::size_t i = 0; i < g.workloads.size(); ++i) {
    auto it = time.find(g.workloads[i]);
    if (it == time.end() || !(it->second > 0)) return std::nullopt;
    s += g.weights[i] * std::log(it->second);
  }
  return s;
}

double DispatchPlanner::wsum(std::size_t g) const {
  double s = 0;
  for (double w : groups_[g].weights) s += w;
  return s > 0 ? s : 1.0;
}

double DispatchPlanner::total(const std::vector<int>& ch) const {
  double s = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g) s += *cost(ch[g], g);
  return s;
}

std::optional<int> DispatchPlanner::leader_option(std::size_t g) const {
  auto lo = leader_option_.find(groups_[g].workloads.front());
  return lo == leader_option_.end() ? std::nullopt : std::optional<int>(lo->second);
}

bool DispatchPlanner::choose(DispatchPlan& plan) {
  choice_.assign(groups_.size(), -1);
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    int best = -1;
    double best_c = 0;
    for (std::size_t i = 0; i < opts_.size(); ++i)
      if (auto c = cost(static_cast<int>(i), g); c && (best < 0 || *c < best_c))
        best = static_cast<int>(i), best_c = *c;
    if (best < 0) {
      plan.reason = fmt::format("no template point among the leader and backups is measured on {}{}",
                                groups_[g].workloads.front(),
                                skipped_.empty() ? "" : "; skipped: " + fmt::format("{}", fmt::join(skipped_, ", ")));
      return false;
    }
    choice_[g] = best;
    const auto lo = leader_option(g);
    const auto lc = leader_cost(g);
    if (lo && lc && cost(*lo, g) && best_c > *lc - std::log1p(o_.min_gain) * wsum(g)) choice_[g] = *lo;
  }
  return true;
}

void DispatchPlanner::limit_variants() {
  for (;;) {
    std::set<int> used(choice_.begin(), choice_.end());
    if (used.size() <= std::max<std::size_t>(o_.max_variants, 1)) break;
    double best_total = std::numeric_limits<double>::infinity();
    std::vector<int> best_choice;
    for (int drop : used) {
      std::vector<int> ch = choice_;
      bool ok = true;
      for (std::size_t g = 0; g < groups_.size() && ok; ++g) {
        if (ch[g] != drop) continue;
        int alt = -1;
        double alt_c = 0;
        for (int i : used)
          if (i != drop)
            if (auto c = cost(i, g); c && (alt < 0 || *c < alt_c)) alt = i, alt_c = *c;
        ok = alt >= 0;
        ch[g] = alt;
      }
      if (ok && total(ch) < best_total) best_total = total(ch), best_choice = ch;
    }
    if (best_choice.empty()) break;  // no point can go: every one is the only measured one somewhere (kept)
    choice_ = best_choice;
  }
}

bool DispatchPlanner::worth_it(DispatchPlan& plan) {
  // Gains over the leader, shape by shape, and the weighted time the composite is expected to take.
  double max_gain = -1, s_comp = 0, s_lead = 0, w_all = 0;
  bool leader_everywhere = true;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const auto lo = leader_option(g);
    if (!lo || *lo != choice_[g]) leader_everywhere = false;
    const double c = *cost(choice_[g], g);
    s_comp += c;
    w_all += wsum(g);
    if (auto lc = leader_cost(g)) {
      s_lead += *lc;
      max_gain = std::max(max_gain, std::exp((*lc - c) / wsum(g)) - 1);
    } else {
      s_lead = std::numeric_limits<double>::quiet_NaN();
    }
  }
  if (leader_everywhere) {
    plan.reason = fmt::format(
        "the leader's own point{} the fastest on every shape (within {:.0f}%)",
        leader_.params.count("template") && leader_.params.at("template") == kDispatchTemplate ? "s are" : " is",
        o_.min_gain * 100);
    return false;
  }
  if (max_gain <= o_.min_gain) {
    plan.reason = fmt::format("no shape gains more than {:.0f}% over the leader (best {:+.1f}%)", o_.min_gain * 100,
                              max_gain * 100);
    return false;
  }
  plan.expected_time_s = std::exp(s_comp / w_all);
  lead_t_ = std::exp(s_lead / w_all);
  if (!(plan.expected_time_s < lead_t_)) {
    plan.reason = fmt::format("the composite would take {:.4g} s, the leader {:.4g} s (weighted): no faster",
                              plan.expected_time_s, lead_t_);
    return false;
  }
  return true;
}

void DispatchPlanner::fill(DispatchPlan& plan) const {
  std::vector<int> order;
  if (const auto lo = leader_option(0); lo && std::find(choice_.begin(), choice_.end(), *lo) != choice_.end())
    order.push_back(*lo);
  for (int c : choice_)
    if (std::find(order.begin(), order.end(), c) == order.end()) order.push_back(c);
  std::string ids, route;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Option& op = opts_[order[i]];
    plan.variants.push_back({op.t, op.point, op.candidate});
    plan.params["v" + std::to_string(i)] = op.key;
    ids += (i ? " " : "") + (op.candidate.empty() ? std::string("?") : op.candidate);
  }
  std::vector<std::string> per_variant(order.size());
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const int vi = static_cast<int>(std::find(order.begin(), order.end(), choice_[g]) - order.begin());
    plan.routes.push_back({groups_[g].workloads, groups_[g].axes, vi});
    for (const auto& w : groups_[g].workloads) route += (route.empty() ? "" : " ") + w + "=v" + std::to_string(vi);
    std::string gain;
    if (auto lc = leader_cost(g))
      gain = fmt::format(" ({:+.0f}%)", (std::exp((*lc - *cost(choice_[g], g)) / wsum(g)) - 1) * 100);
    per_variant[vi] +=
        (per_variant[vi].empty() ? "" : ", ") + fmt::format("{}", fmt::join(groups_[g].workloads, "+")) + gain;
  }
  plan.params["template"] = kDispatchTemplate;
  plan.params["variants"] = ids;
  plan.params["route"] = route;
  std::string note = fmt::format("dispatch over {} points by shape", order.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    note +=
        fmt::format("; v{} {} ({}): {}", i, point_text(plan.variants[i]), plan.variants[i].candidate, per_variant[i]);
  note += fmt::format("; expected {:+.1f}% weighted time vs the leader", (plan.expected_time_s / lead_t_ - 1) * 100);
  plan.note = note;
}

}  // namespace

DispatchPlan plan_dispatch(const Task& task, const BoundTask& bt, const Library& lib,
                           const std::optional<MeasuredKernel>& leader, const std::vector<MeasuredKernel>& backups,
                           const DispatchOptions& o) {
  DispatchPlan plan;
  if (!leader) {
    plan.reason = "no leader yet";
    return plan;
  }
  std::vector<PerfShape> groups = perf_shapes(task, bt);
  if (groups.size() < 2) {
    plan.reason = "fewer than 2 distinct perf shapes: nothing to dispatch on";
    return plan;
  }
  DispatchPlanner planner(bt, lib, *leader, std::move(groups), o);
  planner.take(*leader, true);
  for (const auto& b : backups) planner.take(b, false);
  if (!planner.choose(plan)) return plan;
  planner.limit_variants();
  if (!planner.worth_it(plan)) return plan;
  planner.fill(plan);
  return plan;
}

}  // namespace khive::tuner
