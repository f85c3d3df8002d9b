// Validity, rendering and visiting order of a template's space (space.hpp).
#include "khive/tuner/space.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "khive/support/hash.hpp"
#include "khive/task/expr.hpp"
#include "khive/tuner/chain.hpp"

namespace khive::tuner {

namespace {

// Replace {NAME} in a rule's message by the variable's value; unknown names stay as written.
std::string fill_message(const std::string& msg, const AxisValues& vars) {
  std::string out;
  for (std::size_t i = 0; i < msg.size();) {
    if (msg[i] == '{') {
      const auto end = msg.find('}', i);
      if (end != std::string::npos) {
        const std::string name = msg.substr(i + 1, end - i - 1);
        auto it = vars.find(name);
        if (it != vars.end()) {
          out += std::to_string(it->second);
          i = end + 1;
          continue;
        }
      }
    }
    out += msg[i++];
  }
  return out;
}

uint64_t mix(uint64_t x) {  // splitmix64 finalizer: a cheap, well-spread hash for tie-breaking
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t hash_text(const std::string& s, uint64_t seed) {
  uint64_t h = mix(seed);
  for (unsigned char c : s) h = mix(h ^ c);
  return h;
}

// {{NAME_value}} of an identifier-valued parameter: "1" when the point chose that value, else "0".
std::optional<std::string> flag_value(const Template& t, const Point& p, const std::string& placeholder) {
  for (const auto& param : t.params) {
    if (param.numeric || placeholder.rfind(param.name + "_", 0) != 0) continue;
    const std::string value = placeholder.substr(param.name.size() + 1);
    if (std::find(param.values.begin(), param.values.end(), value) == param.values.end()) continue;
    return std::string(p.at(param.name) == value ? "1" : "0");
  }
  return std::nullopt;
}

Validity invalid(std::string message) {
  Validity v;
  v.ok = false;
  v.message = std::move(message);
  return v;
}

}  // namespace

AxisValues point_variables(const Template& t, const Point& p, const AxisValues& workload_vars) {
  AxisValues v = workload_vars;
  for (const auto& param : t.params) {
    const std::string& val = p.at(param.name);
    if (param.numeric) {
      v[param.name] = std::stoll(val);
    } else {
      for (const auto& option : param.values) v[param.name + "_" + option] = option == val ? 1 : 0;
    }
  }
  for (const auto& [name, expr] : t.derived) v[name] = eval_int_expr(expr, v);
  return v;
}

Validity check_point(const Template& t, const BoundTask& bt, const Point& p) {
  if (!t.stages.empty()) return check_chain_point(t, bt, p);  // each stage by its own rules
  for (const auto& param : t.params) {
    auto it = p.find(param.name);
    if (it == p.end()) return invalid(fmt::format("{} is not set", param.name));
    if (std::find(param.values.begin(), param.values.end(), it->second) == param.values.end())
      return invalid(fmt::format("{}={} is not one of its values", param.name, it->second));
  }
  for (const auto& [name, value] : p)
    if (!t.find_param(name)) return invalid(fmt::format("{} is not a parameter of {}", name, t.name));
  // One pass over the workloads: the rules must hold on every one; the fast_path rules say which ones the fast
  // path takes. A fast_path expression error is reported only once every rule has held (as rule failures come first).
  Validity out;
  std::optional<Validity> fast_path_error;
  std::string first_miss;  // why the fast path misses the first perf workload, for the message when it takes none
  for (std::size_t w = 0; w < bt.workload_vars.size(); ++w) {
    AxisValues vars;
    try {
      vars = point_variables(t, p, bt.workload_vars[w]);
    } catch (const ExprError& e) {
      return invalid(fmt::format("derived value: {} (workload {})", e.what(), bt.workload_names[w]));
    }
    for (const auto& rule : t.rules) {
      bool holds = false;
      try {
        holds = eval_condition(rule.require, vars);
      } catch (const ExprError& e) {
        return invalid(fmt::format("{}: {} (workload {})", rule.require, e.what(), bt.workload_names[w]));
      }
      if (!holds)
        return invalid(fmt::format("{} (workload {})", fill_message(rule.message, vars), bt.workload_names[w]));
    }
    if (t.fast_path.empty() || fast_path_error) continue;
    const bool perf = w < bt.workload_perf.size() && bt.workload_perf[w];
    std::string miss;
    for (const auto& rule : t.fast_path) {
      bool holds = false;
      try {
        holds = eval_condition(rule.require, vars);
      } catch (const ExprError& e) {
        fast_path_error = invalid(fmt::format("{}: {} (workload {})", rule.require, e.what(), bt.workload_names[w]));
        break;
      }
      if (!holds) {
        miss = fill_message(rule.message, vars);
        break;
      }
    }
    if (fast_path_error) continue;
    out.perf_total += perf;
    if (miss.empty()) {
      out.perf_fast += perf;
    } else {
      out.generic.push_back(fmt::format("{} (workload {}{})", miss, bt.workload_names[w], perf ? ", perf" : ""));
      if (perf && first_miss.empty()) first_miss = out.generic.back();
    }
  }
  if (fast_path_error) return *fast_path_error;
  if (out.perf_total > 0 && out.perf_fast == 0) {
    out.ok = false;
    out.message = fmt::format("the fast path takes none of the {} perf workloads: {}", out.perf_total, first_miss);
  }
  return out;
}

std::string fast_path_note(const Validity& v, std::size_t max_listed) {
  if (v.perf_total == 0 && v.generic.empty()) return "";
  std::string s = fmt::format("fast path on {} of {} perf workloads", v.perf_fast, v.perf_total);
  if (v.generic.empty()) return s;
  s += "; generic path: ";
  for (std::size_t i = 0; i < v.generic.size() && i < max_listed; ++i) s += (i ? "; " : "") + v.generic[i];
  if (v.generic.size() > max_listed) s += fmt::format(" (+{} more)", v.generic.size() - max_listed);
  return s;
}

std::string render_header(const Template& t, const BoundTask& bt, const Point& p) {
  return fmt::format("// khive tuner: template {} for {} ({})\n// point: {}\n// task: {}\n", t.name, bt.key,
                     backend_name(bt.backend), describe_point(p), bt.summary);
}

std::string fill_placeholders(const Template& t,
                              const std::function<std::optional<std::string>(const std::string&)>& value,
                              std::string_view known) {
  std::string out;
  const std::string& s = t.source;
  for (std::size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "{{") == 0) {
      const auto end = s.find("}}", i + 2);
      if (end == std::string::npos)
        throw std::runtime_error(fmt::format("{}: unterminated {{{{ at offset {}", t.source_path.string(), i));
      const std::string name = s.substr(i + 2, end - i - 2);
      const std::optional<std::string> v = value(name);
      if (!v)
        throw std::runtime_error(
            fmt::format("{}: unknown placeholder {{{{{}}}}} ({})", t.source_path.string(), name, known));
      out += *v;
      i = end + 2;
    } else {
      out += s[i++];
    }
  }
  return out;
}

std::string render(const Template& t, const BoundTask& bt, const Point& p) {
  if (!t.stages.empty()) return render_chain(t, bt, p);
  return render_header(t, bt, p) + fill_placeholders(
                                       t,
                                       [&](const std::string& name) -> std::optional<std::string> {
                                         if (auto it = p.find(name); it != p.end()) return it->second;
                                         if (auto f = flag_value(t, p, name)) return *f;
                                         if (auto jt = bt.placeholders.find(name); jt != bt.placeholders.end())
                                           return jt->second;
                                         return std::nullopt;
                                       },
                                       "neither a parameter nor a binding value");
}

std::vector<Point> subspace_order(const Template& t, const Point& base, const std::vector<std::string>& free,
                                  uint64_t seed, std::size_t limit) {
  std::vector<const Param*> ps;
  std::vector<std::size_t> base_idx;
  for (const auto& n : free) {
    const Param* p = t.find_param(n);
    if (!p) throw std::invalid_argument(fmt::format("{} is not a parameter of {}", n, t.name));
    ps.push_back(p);
    auto it = std::find(p->values.begin(), p->values.end(), base.at(n));
    base_idx.push_back(it == p->values.end() ? 0 : static_cast<std::size_t>(it - p->values.begin()));
  }
  struct Scored {
    int changed;
    std::size_t steps;
    uint64_t tie;
    Point point;
  };
  std::vector<Scored> all;
  auto add = [&](const std::vector<std::size_t>& idx) {
    Scored s{0, 0, 0, base};
    for (std::size_t i = 0; i < ps.size(); ++i) {
      s.point[ps[i]->name] = ps[i]->values[idx[i]];
      const std::size_t d = idx[i] > base_idx[i] ? idx[i] - base_idx[i] : base_idx[i] - idx[i];
      s.changed += d != 0;
      s.steps += d;
    }
    if (s.changed == 0) return;
    s.tie = hash_text(describe_point(s.point), seed);
    all.push_back(std::move(s));
  };
  std::size_t total = 1;
  for (const auto* p : ps)
    total = total > std::numeric_limits<std::size_t>::max() / p->values.size() ? std::numeric_limits<std::size_t>::max()
                                                                               : total * p->values.size();
  if (total <= limit) {
    std::vector<std::size_t> idx(ps.size(), 0);
    for (std::size_t n = 0; n < total; ++n) {
      add(idx);
      for (std::size_t i = 0; i < idx.size(); ++i) {
        if (++idx[i] < ps[i]->values.size()) break;
        idx[i] = 0;
      }
    }
  } else {
    // Too many to list: every single-parameter change, then a deterministic sample of the rest.
    for (std::size_t i = 0; i < ps.size(); ++i)
      for (std::size_t v = 0; v < ps[i]->values.size(); ++v) {
        auto idx = base_idx;
        idx[i] = v;
        add(idx);
      }
    uint64_t state = mix(seed ^ 0x5eedull);
    while (all.size() < limit) {
      auto idx = base_idx;
      for (std::size_t i = 0; i < ps.size(); ++i) idx[i] = (state = mix(state)) % ps[i]->values.size();
      add(idx);
    }
  }
  std::sort(all.begin(), all.end(), [](const Scored& a, const Scored& b) {
    if (a.changed != b.changed) return a.changed < b.changed;
    if (a.steps != b.steps) return a.steps < b.steps;
    return a.tie < b.tie;
  });
  std::vector<Point> out;
  std::set<std::string> seen;
  for (auto& s : all)
    if (seen.insert(describe_point(s.point)).second) out.push_back(std::move(s.point));
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::string describe_change(const Point& from, const Point& to) {
  std::string s;
  for (const auto& [k, v] : to) {
    auto it = from.find(k);
    if (it != from.end() && it->second == v) continue;
    s += (s.empty() ? "" : ", ") + k + " " + (it == from.end() ? "?" : it->second) + "->" + v;
  }
  return s;
}

std::string describe_point(const Point& p) {
  std::string s;
  for (const auto& [k, v] : p) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

Point point_from_params(const Template& t, const std::map<std::string, std::string>& params) {
  Point p = t.default_point();
  for (auto& [k, v] : p)
    if (auto it = params.find(k); it != params.end()) v = it->second;
  return p;
}

}  // namespace khive::tuner
