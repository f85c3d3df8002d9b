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

#include "khive/tuner/space.hpp"
#include "khive/tuner/tuner.hpp"

namespace khive::tuner {

namespace {

const std::string kPrologueMark = "/*@@khive-compose:PROLOGUE@@*/";
const std::string kEntryMark = "/*@@khive-compose:ENTRY@@*/";

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i <= s.size()) {
    const auto e = s.find('\n', i);
    if (e == std::string::npos) {
      if (i < s.size()) out.push_back(s.substr(i));
      break;
    }
    out.push_back(s.substr(i, e - i));
    i = e + 1;
  }
  return out;
}

std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

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

struct Body {
  std::vector<std::string> includes;   // "#include <...>" lines, in order
  std::string text;                    // everything else, to go inside the variant's namespace
  std::set<std::string> macros;        // macros it defines
};

// Splits a variant's rendered text (PROLOGUE and ENTRY replaced by the marks) into the includes to hoist and the
// body, refusing what cannot live inside a namespace.
Body split_body(const std::string& rendered, const Template& t, std::size_t index) {
  auto refuse = [&](std::size_t line_no, const std::string& why) -> void {
    throw ComposeError(fmt::format("variant v{} ({}): {}, line {} of its rendered source; it cannot be wrapped in a namespace", index, t.name,
                                   why, line_no));
  };
  static const std::regex kLibNamespace(R"(^\s*namespace\s+(std|cute|cutlass|cub|thrust|cooperative_groups|nvcuda)\b[^=]*$)");
  static const std::regex kLibSpecialization(R"(template\s*<\s*>\s*(struct|class)\s+(std|cute|cutlass|cub|thrust)::)");
  Body b;
  int depth = 0;
  bool continued = false;   // the previous line ended in a backslash: this one belongs to its directive
  std::size_t n = 0;
  for (const auto& raw : split_lines(rendered)) {
    ++n;
    std::string line = raw;
    for (const std::string* m : {&kPrologueMark, &kEntryMark})
      if (auto at = line.find(*m); at != std::string::npos) line.erase(at, m->size());
    const bool was_continued = continued;
    continued = !line.empty() && line.back() == '\\';
    if (was_continued) {
      b.text += line + "\n";
      continue;
    }
    const std::string tl = trim(line);
    const bool comment = tl.rfind("//", 0) == 0;
    const auto [d, rest] = directive(line);
    if (d == "if" || d == "ifdef" || d == "ifndef") ++depth;
    else if (d == "endif") --depth;
    if (d == "include") {
      if (depth > 0) refuse(n, "an #include inside #if");
      b.includes.push_back(tl);
      continue;
    }
    if (d == "pragma" && trim(rest) == "once") refuse(n, "#pragma once");
    if (d == "define") b.macros.insert(macro_name(rest));
    if (!comment && d.empty()) {
      if (line.find("extern \"C\"") != std::string::npos) refuse(n, "an extern \"C\" declaration (one symbol per variant would clash)");
      if (std::regex_search(line, kLibNamespace)) refuse(n, "a library namespace reopened at global scope");
      if (std::regex_search(line, kLibSpecialization)) refuse(n, "an explicit specialization of a library template");
    }
    b.text += line + "\n";
  }
  return b;
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Positions of the call "khive_run(" (not part of a longer name).
std::vector<std::size_t> run_calls(const std::string& s) {
  std::vector<std::size_t> out;
  const std::string k = "khive_run(";
  for (auto at = s.find(k); at != std::string::npos; at = s.find(k, at + 1))
    if (at == 0 || !ident_char(s[at - 1])) out.push_back(at);
  return out;
}

std::vector<std::string> var_axes(const Task& task) {
  std::vector<std::string> out;
  for (const auto& a : task.axes)
    if (a.kind == Axis::Kind::var) out.push_back(a.name);
  return out;
}

std::string point_text(const Variant& v) { return fmt::format("{} {}", v.t->name, describe_point(v.point)); }

}  // namespace

std::string render_composite(const Task& task, const BoundTask& bt, const std::vector<Variant>& variants, const std::vector<Route>& routes) {
  if (variants.empty()) throw ComposeError("a composite needs at least one variant");
  if (routes.empty()) throw ComposeError("a composite needs at least one measured shape to route");
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const Template* t = variants[i].t;
    if (!t) throw ComposeError(fmt::format("variant v{} has no template", i));
    if (!template_applies(*t, bt))
      throw ComposeError(fmt::format("variant v{} ({}: family {}, {}) does not serve the task's binding {} (family {}, {}, {} {}): all variants must "
                                     "come from templates of one binding, which share its PROLOGUE and ENTRY",
                                     i, t->name, t->family, backend_name(t->backend), bt.key, bt.family, backend_name(bt.backend), bt.dtype, bt.op));
  }
  const auto pro = bt.placeholders.find("PROLOGUE"), ent = bt.placeholders.find("ENTRY");
  if (pro == bt.placeholders.end() || ent == bt.placeholders.end()) throw ComposeError("the binding of " + bt.key + " has no PROLOGUE or ENTRY");
  const std::string& entry = ent->second;
  const auto calls = run_calls(entry);
  if (calls.size() != 1)
    throw ComposeError(fmt::format("the ENTRY of {} calls khive_run {} times; the dispatcher replaces exactly one call", bt.key, calls.size()));
  const auto axes = var_axes(task);
  for (std::size_t r = 0; r < routes.size(); ++r) {
    if (routes[r].variant < 0 || static_cast<std::size_t>(routes[r].variant) >= variants.size())
      throw ComposeError(fmt::format("route {} names variant v{} of {}", r, routes[r].variant, variants.size()));
    for (const auto& a : axes)
      if (!routes[r].axes.count(a)) throw ComposeError(fmt::format("route {} has no value for the var axis {}", r, a));
  }
  if (axes.empty() && routes.size() > 1) throw ComposeError("the task has no var axes: its shapes cannot be told apart at run time");

  BoundTask marked = bt;
  marked.placeholders["PROLOGUE"] = kPrologueMark;
  marked.placeholders["ENTRY"] = kEntryMark;
  const std::set<std::string> prologue_macros = defined_macros(pro->second);
  std::vector<std::string> includes;
  std::string bodies;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const Variant& v = variants[i];
    const std::string r = render(*v.t, marked, v.point);
    for (const std::string* m : {&kPrologueMark, &kEntryMark}) {
      const auto first = r.find(*m);
      if (first == std::string::npos || r.find(*m, first + 1) != std::string::npos)
        throw ComposeError(fmt::format("variant v{} ({}): its template must contain {{{{{}}}}} exactly once", i, v.t->name,
                                       m == &kPrologueMark ? "PROLOGUE" : "ENTRY"));
    }
    Body b = split_body(r, *v.t, i);
    for (auto& inc : b.includes)
      if (std::find(includes.begin(), includes.end(), inc) == includes.end()) includes.push_back(inc);
    bodies += fmt::format("\n// ---- variant v{}: {}{}\nnamespace khive_v{} {{\n{}}}  // namespace khive_v{}\n", i, point_text(v),
                          v.candidate.empty() ? "" : " (candidate " + v.candidate + ")", i, b.text, i);
    // A macro of this variant must not leak into the next one (the next defines its own value); the PROLOGUE's
    // macros stay (a body may only re-state a default for them under #ifndef).
    for (const auto& m : b.macros)
      if (!prologue_macros.count(m)) bodies += "#undef " + m + "\n";
  }

  std::string out = fmt::format("// khive tuner: per-shape dispatch over {} points of one binding for {} ({})\n// task: {}\n", variants.size(), bt.key,
                                backend_name(bt.backend), bt.summary);
  for (std::size_t i = 0; i < variants.size(); ++i) out += fmt::format("// v{}: {}\n", i, point_text(variants[i]));
  out += pro->second;
  if (!pro->second.empty() && pro->second.back() != '\n') out += '\n';
  for (const auto& inc : includes) out += inc + "\n";
  out += bodies;

  // The dispatcher: the measured shapes, the variant each runs, and the nearest of them in log space for any call.
  std::string d = "\n// ---- dispatch: a call runs the variant of the nearest measured shape in log space of the var axes (exact for a\n"
                  "// measured shape); every variant was accepted on every correctness workload, so any shape is served correctly.\n"
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
  for (std::size_t i = 1; i < variants.size(); ++i)
    d += fmt::format("    case {0}: khive_v{0}::khive_run(static_cast<A&&>(a)...); return;\n", i);
  d += "    default: khive_v0::khive_run(static_cast<A&&>(a)...); return;\n  }\n}\n}  // namespace khive_dispatch\n\n";
  out += d;

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
      if (part.empty()) throw std::runtime_error("point key \"" + key + "\": expected a template name before the first |");
      out["template"] = part;
      first = false;
    } else {
      const auto eq = part.find('=');
      if (eq == std::string::npos || eq == 0) throw std::runtime_error("point key \"" + key + "\": expected NAME=VALUE, got \"" + part + "\"");
      out[part.substr(0, eq)] = part.substr(eq + 1);
    }
    i = e + 1;
  }
  return out;
}

std::vector<std::map<std::string, std::string>> dispatch_variant_points(const std::map<std::string, std::string>& params) {
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

DispatchPlan plan_dispatch(const Task& task, const BoundTask& bt, const Library& lib, const std::optional<MeasuredKernel>& leader,
                           const std::vector<MeasuredKernel>& backups, const DispatchOptions& o) {
  DispatchPlan plan;
  if (!leader) {
    plan.reason = "no leader yet";
    return plan;
  }
  using Group = PerfShape;
  const std::vector<Group> groups = perf_shapes(task, bt);
  if (groups.size() < 2) {
    plan.reason = "fewer than 2 distinct perf shapes: nothing to dispatch on";
    return plan;
  }

  // Options: template points with their measured medians; a composite contributes each of its variants on the shapes
  // it routed to it. One option per point (the first measurement of a workload wins: the leader's, then in rank order).
  struct Option {
    const Template* t = nullptr;
    Point point;
    std::string key, candidate;
    std::map<std::string, double> time;
  };
  std::vector<Option> opts;
  std::vector<std::string> skipped;
  auto add = [&](const Template* t, const Point& p, const std::string& cand, const std::map<std::string, double>& time) -> int {
    const std::string key = point_key(t->name, p);
    auto it = std::find_if(opts.begin(), opts.end(), [&](const Option& x) { return x.key == key; });
    if (it == opts.end()) it = opts.insert(opts.end(), Option{t, p, key, cand, {}});
    for (const auto& [w, s] : time)
      if (s > 0) it->time.emplace(w, s);
    return static_cast<int>(it - opts.begin());
  };
  std::map<std::string, int> leader_option;   // workload -> the option the leader runs there (none: not a template)
  auto take = [&](const MeasuredKernel& k, bool is_leader) {
    auto tn = k.params.find("template");
    if (tn == k.params.end()) {
      skipped.push_back(k.id + " (not made from a template)");
      return;
    }
    if (tn->second == kDispatchTemplate) {
      std::vector<std::map<std::string, std::string>> pts;
      try {
        pts = dispatch_variant_points(k.params);
      } catch (const std::exception& e) {
        skipped.push_back(k.id + " (" + e.what() + ")");
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
        const Template* t = lib.find_template(pts[i].at("template"));
        if (!t || !template_applies(*t, bt)) {
          skipped.push_back(fmt::format("{} v{} ({}: not a template of this task's binding)", k.id, i, pts[i].at("template")));
          continue;
        }
        std::map<std::string, double> time;
        for (const auto& [w, vi] : route)
          if (vi == i)
            if (auto m = k.workload_median_s.find(w); m != k.workload_median_s.end()) time[w] = m->second;
        const int oi = add(t, point_from_params(*t, pts[i]), i < ids.size() ? ids[i] : k.id, time);
        if (is_leader)
          for (const auto& [w, s] : time) leader_option[w] = oi;
      }
      return;
    }
    const Template* t = lib.find_template(tn->second);
    if (!t) {
      skipped.push_back(k.id + " (template " + tn->second + " is not in the library)");
      return;
    }
    if (!template_applies(*t, bt)) {
      skipped.push_back(fmt::format("{} ({}: family {}, {}, not this task's binding {} of family {})", k.id, t->name, t->family,
                                    backend_name(t->backend), bt.key, bt.family));
      return;
    }
    const int oi = add(t, point_from_params(*t, k.params), k.id, k.workload_median_s);
    if (is_leader)
      for (const auto& [w, s] : k.workload_median_s) leader_option[w] = oi;
  };
  take(*leader, true);
  for (const auto& b : backups) take(b, false);

  // Weighted sum of log medians over a shape's workloads; none when one of them has no (positive) median.
  auto log_cost = [](const std::map<std::string, double>& time, const Group& g) -> std::optional<double> {
    double s = 0;
    for (std::size_t i = 0; i < g.workloads.size(); ++i) {
      auto it = time.find(g.workloads[i]);
      if (it == time.end() || !(it->second > 0)) return std::nullopt;
      s += g.weights[i] * std::log(it->second);
    }
    return s;
  };
  auto cost = [&](const Option& op, const Group& g) { return log_cost(op.time, g); };
  auto leader_cost = [&](const Group& g) { return log_cost(leader->workload_median_s, g); };
  auto wsum = [](const Group& g) {
    double s = 0;
    for (double w : g.weights) s += w;
    return s > 0 ? s : 1.0;
  };

  // Per shape: the fastest option; the leader's own point unless another is min_gain faster there.
  std::vector<int> choice(groups.size(), -1);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    int best = -1;
    double best_c = 0;
    for (std::size_t i = 0; i < opts.size(); ++i)
      if (auto c = cost(opts[i], groups[g]); c && (best < 0 || *c < best_c)) best = static_cast<int>(i), best_c = *c;
    if (best < 0) {
      plan.reason = fmt::format("no template point among the leader and backups is measured on {}{}", groups[g].workloads.front(),
                                skipped.empty() ? "" : "; skipped: " + fmt::format("{}", fmt::join(skipped, ", ")));
      return plan;
    }
    choice[g] = best;
    auto lo = leader_option.find(groups[g].workloads.front());
    const auto lc = leader_cost(groups[g]);
    if (lo != leader_option.end() && lc && cost(opts[lo->second], groups[g]) && best_c > *lc - std::log1p(o.min_gain) * wsum(groups[g]))
      choice[g] = lo->second;
  }
  auto total = [&](const std::vector<int>& ch) {
    double s = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) s += *cost(opts[ch[g]], groups[g]);
    return s;
  };
  // Too many points: drop the one whose shapes lose least by moving to their best remaining point.
  for (;;) {
    std::set<int> used(choice.begin(), choice.end());
    if (used.size() <= std::max<std::size_t>(o.max_variants, 1)) break;
    double best_total = std::numeric_limits<double>::infinity();
    std::vector<int> best_choice;
    for (int drop : used) {
      std::vector<int> ch = choice;
      bool ok = true;
      for (std::size_t g = 0; g < groups.size() && ok; ++g) {
        if (ch[g] != drop) continue;
        int alt = -1;
        double alt_c = 0;
        for (int i : used)
          if (i != drop)
            if (auto c = cost(opts[i], groups[g]); c && (alt < 0 || *c < alt_c)) alt = i, alt_c = *c;
        ok = alt >= 0;
        ch[g] = alt;
      }
      if (ok && total(ch) < best_total) best_total = total(ch), best_choice = ch;
    }
    if (best_choice.empty()) break;   // no point can go: every one is the only measured one somewhere (kept)
    choice = best_choice;
  }

  // Gains over the leader, shape by shape, and the weighted time the composite is expected to take.
  double max_gain = -1, s_comp = 0, s_lead = 0, w_all = 0;
  bool leader_everywhere = true;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    auto lo = leader_option.find(groups[g].workloads.front());
    if (lo == leader_option.end() || lo->second != choice[g]) leader_everywhere = false;
    const double c = *cost(opts[choice[g]], groups[g]);
    s_comp += c;
    w_all += wsum(groups[g]);
    if (auto lc = leader_cost(groups[g])) {
      s_lead += *lc;
      max_gain = std::max(max_gain, std::exp((*lc - c) / wsum(groups[g])) - 1);
    } else {
      s_lead = std::numeric_limits<double>::quiet_NaN();
    }
  }
  if (leader_everywhere) {
    plan.reason = fmt::format("the leader's own point{} the fastest on every shape (within {:.0f}%)",
                              leader->params.count("template") && leader->params.at("template") == kDispatchTemplate ? "s are" : " is", o.min_gain * 100);
    return plan;
  }
  if (max_gain <= o.min_gain) {
    plan.reason = fmt::format("no shape gains more than {:.0f}% over the leader (best {:+.1f}%)", o.min_gain * 100, max_gain * 100);
    return plan;
  }
  plan.expected_time_s = std::exp(s_comp / w_all);
  const double lead_t = std::exp(s_lead / w_all);
  if (!(plan.expected_time_s < lead_t)) {
    plan.reason = fmt::format("the composite would take {:.4g} s, the leader {:.4g} s (weighted): no faster", plan.expected_time_s, lead_t);
    return plan;
  }

  // Variants in order of first use (the leader's point first when it is used), routes in workload order.
  std::vector<int> order;
  if (auto lo = leader_option.find(groups.front().workloads.front()); lo != leader_option.end())
    if (std::find(choice.begin(), choice.end(), lo->second) != choice.end()) order.push_back(lo->second);
  for (int c : choice)
    if (std::find(order.begin(), order.end(), c) == order.end()) order.push_back(c);
  std::string ids, route;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Option& op = opts[order[i]];
    plan.variants.push_back({op.t, op.point, op.candidate});
    plan.params["v" + std::to_string(i)] = op.key;
    ids += (i ? " " : "") + (op.candidate.empty() ? std::string("?") : op.candidate);
  }
  std::vector<std::string> per_variant(order.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const int vi = static_cast<int>(std::find(order.begin(), order.end(), choice[g]) - order.begin());
    plan.routes.push_back({groups[g].workloads, groups[g].axes, vi});
    for (const auto& w : groups[g].workloads) route += (route.empty() ? "" : " ") + w + "=v" + std::to_string(vi);
    std::string gain;
    if (auto lc = leader_cost(groups[g])) gain = fmt::format(" ({:+.0f}%)", (std::exp((*lc - *cost(opts[choice[g]], groups[g])) / wsum(groups[g])) - 1) * 100);
    per_variant[vi] += (per_variant[vi].empty() ? "" : ", ") + fmt::format("{}", fmt::join(groups[g].workloads, "+")) + gain;
  }
  plan.params["template"] = kDispatchTemplate;
  plan.params["variants"] = ids;
  plan.params["route"] = route;
  std::string note = fmt::format("dispatch over {} points by shape", order.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    note += fmt::format("; v{} {} ({}): {}", i, point_text(plan.variants[i]), plan.variants[i].candidate, per_variant[i]);
  note += fmt::format("; expected {:+.1f}% weighted time vs the leader", (plan.expected_time_s / lead_t - 1) * 100);
  plan.note = note;
  return plan;
}

}  // namespace khive::tuner
