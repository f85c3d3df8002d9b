// khive-tune: look at the tuner's template library for one task, without the hive.
//   khive-tune show TASK [--backend B]                 binding, applicable templates, strategies, space sizes
//   khive-tune render TASK --out DIR [--per-strategy N] [--backend B] [--seed S] [--build]
//       writes the first N proposals of every strategy (as the agent makes them, no leader) to DIR and a
//       list.tsv (file, template, point); --build also compiles each with the real builder (check 1).
//   khive-tune point TASK --template NAME [--set PARAM=VALUE ...] --out FILE [--backend B] [--build]
//       writes exactly one point (the template's defaults, with each --set applied), after the same validity
//       rules the agent checks, so a hand-picked point can be benchmarked (khive bench --kernels) or kept.
//   khive-tune compose TASK --point TEMPLATE[:P=V,...] --point ... --out FILE [--route WORKLOAD=I ...] [--backend B]
//   [--build]
//       writes a per-shape dispatch composite (strategy tuner.dispatch) of the given points: timed shapes go to
//       the variants round robin unless --route says otherwise; --build compiles it with the real builder.
// Exit status: 0 fine, 1 a rendered point failed to build, 2 bad input.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "khive/compile/builder.hpp"
#include "khive/support/files.hpp"
#include "khive/tuner/auto_bind.hpp"
#include "khive/tuner/bind.hpp"
#include "khive/tuner/compose.hpp"
#include "khive/tuner/library.hpp"
#include "khive/tuner/space.hpp"
#include "khive/tuner/tuner.hpp"

namespace fs = std::filesystem;
namespace tuner = khive::tuner;

namespace {

// The command line: one subcommand and its options.
struct Args {
  std::string task_dir, backend_s = "cpu", out_dir, kernels;
  int per_strategy = 3;
  uint64_t seed = 1;
  bool build = false;
  std::string template_name, out_file;
  std::vector<std::string> sets, compose_points, compose_routes;
  CLI::App *show = nullptr, *render = nullptr, *point = nullptr, *compose = nullptr;
};

void add_options(CLI::App& app, Args& a) {
  app.require_subcommand(1);
  app.add_option("--kernels", a.kernels, "template library (default: $KHIVE_KERNELS or <repo>/kernels)");
  // Every subcommand works on one task on one backend.
  auto task_cmd = [&](const char* name, const char* what) {
    CLI::App* c = app.add_subcommand(name, what);
    c->add_option("task", a.task_dir)->required();
    c->add_option("--backend", a.backend_s, "cpu or cuda");
    return c;
  };
  a.show = task_cmd("show", "binding, templates, strategies and valid points");
  a.render = task_cmd("render", "write the agent's first proposals per strategy");
  a.render->add_option("--out", a.out_dir)->required();
  a.render->add_option("--per-strategy", a.per_strategy)->check(CLI::Range(1, 1000));
  a.render->add_option("--seed", a.seed);
  a.render->add_flag("--build", a.build, "compile every rendered point with the real builder");
  a.point = task_cmd("point", "write one point of one template (defaults, then each --set)");
  a.point->add_option("--template", a.template_name, "template name, e.g. rowop.cuda_softmax")->required();
  a.point->add_option("--set", a.sets, "PARAM=VALUE (repeatable); parameters not set keep the template's default");
  a.point->add_option("--out", a.out_file, "the source file to write")->required();
  a.point->add_flag("--build", a.build, "compile it with the real builder");
  a.compose = task_cmd("compose", "write a per-shape dispatch composite of several points (tuner.dispatch)");
  a.compose
      ->add_option("--point", a.compose_points,
                   "TEMPLATE[:PARAM=VALUE,...]: variant v0, v1, ... in order (parameters not set keep the default)")
      ->required();
  a.compose->add_option("--route", a.compose_routes,
                        "WORKLOAD=INDEX: that timed workload's shape runs variant INDEX (default: round robin)");
  a.compose->add_option("--out", a.out_file, "the source file to write")->required();
  a.compose->add_flag("--build", a.build, "compile it with the real builder");
}

// What every subcommand works on: the task, the library and the task bound on the backend.
struct Session {
  const Args& a;
  khive::Backend backend;
  khive::Task task;
  fs::path kdir;
  tuner::Library lib;
  tuner::BoundTask bt;
};

// "N of M points valid[, K with the fast path on every perf workload]", counted exactly when the space is small
// enough to list.
std::string valid_points_text(const tuner::Template& t, const tuner::BoundTask& bt) {
  if (t.space_size() > 200000) return "? points valid";
  std::size_t n = 0, total = 0, all_perf = 0;  // all_perf: valid, and the fast path takes every perf workload
  std::vector<std::size_t> idx(t.params.size(), 0);
  for (;;) {
    tuner::Point p;
    for (std::size_t i = 0; i < idx.size(); ++i) p[t.params[i].name] = t.params[i].values[idx[i]];
    ++total;
    const auto pv = tuner::check_point(t, bt, p);
    n += pv.ok;
    all_perf += pv.ok && pv.perf_fast == pv.perf_total;
    std::size_t i = 0;
    for (; i < idx.size(); ++i) {
      if (++idx[i] < t.params[i].values.size()) break;
      idx[i] = 0;
    }
    if (i == idx.size()) break;
  }
  return t.fast_path.empty()
             ? fmt::format("{} of {} points valid", n, total)
             : fmt::format("{} of {} points valid, {} with the fast path on every perf workload", n, total, all_perf);
}

int run_show(const Session& s) {
  std::cout << fmt::format("{}: {}\n", s.bt.key, s.bt.summary);
  for (const tuner::Template* tp : tuner::applicable_templates(s.lib, s.bt)) {
    const tuner::Template& t = *tp;
    const std::string valid = valid_points_text(t, s.bt);
    const auto v = tuner::check_point(t, s.bt, t.default_point());
    std::cout << fmt::format("  template {} ({}); default {}{}\n", t.name, valid,
                             tuner::describe_point(t.default_point()), v.ok ? "" : " INVALID: " + v.message);
    if (const std::string fp = tuner::fast_path_note(v, 3); v.ok && !fp.empty())
      std::cout << "    default: " << fp << "\n";
    for (const auto& st : t.strategies)
      std::cout << fmt::format("    {}: {} [{}]\n", st.name, st.description, fmt::join(st.params, ", "));
  }
  return 0;
}

// Compiles file with the real builder: whether it built, and a status text (resources, or the first diagnostics).
std::pair<bool, std::string> build_status(const Session& s, const fs::path& file) {
  khive::BuildOptions bo;
  bo.backend = s.backend;
  const auto r = khive::build_candidate(s.task, file, bo);
  std::string status = fmt::format("  build {} {:.1f}s", r.ok ? "ok" : "FAILED", r.seconds);
  for (const auto& k : r.resources)
    status += fmt::format(" [{} regs, {} B smem{}{}]", k.registers, k.shared_bytes, k.spill_stores ? ", spills" : "",
                          k.wgmma_serialized ? ", WGMMA SERIALIZED" : "");
  if (!r.ok) {
    status += "\n" + khive::format_diagnostics(r.diagnostics, 3);
    if (r.diagnostics.empty()) status += "\n" + r.log.substr(0, 2000);
  }
  return std::make_pair(r.ok, status);
}

// A valid point of a template that applies here: its defaults with each PARAM=VALUE of `kvs` applied.
std::tuple<const tuner::Template*, tuner::Point, tuner::Validity> make_point(const Session& s, const std::string& opt,
                                                                             const std::string& tname,
                                                                             const std::vector<std::string>& kvs,
                                                                             const std::string& kv_opt) {
  const tuner::Template* t = s.lib.find_template(tname);
  if (!t) throw std::runtime_error(fmt::format("{}: no template named \"{}\" in {}", opt, tname, s.kdir.string()));
  if (!tuner::template_applies(*t, s.bt))
    throw std::runtime_error(fmt::format("{}: {} does not apply to {} ({})", opt, t->name, s.bt.key, s.bt.summary));
  tuner::Point p = t->default_point();
  for (const auto& kv : kvs) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::runtime_error(fmt::format("{}: expected PARAM=VALUE, got \"{}\"", kv_opt, kv));
    const std::string name = kv.substr(0, eq), value = kv.substr(eq + 1);
    const auto* prm = t->find_param(name);
    if (!prm) {
      std::vector<std::string> names;
      for (const auto& x : t->params) names.push_back(x.name);
      throw std::runtime_error(
          fmt::format("{} {}: {} has no parameter {} (it has {})", kv_opt, kv, t->name, name, fmt::join(names, ", ")));
    }
    if (std::find(prm->values.begin(), prm->values.end(), value) == prm->values.end())
      throw std::runtime_error(
          fmt::format("{} {}: {} of {} takes one of {}", kv_opt, kv, name, t->name, fmt::join(prm->values, ", ")));
    p[name] = value;
  }
  const auto v = tuner::check_point(*t, s.bt, p);
  if (!v.ok)
    throw std::runtime_error(fmt::format("{} {}: invalid point: {}", t->name, tuner::describe_point(p), v.message));
  return std::make_tuple(t, p, v);
}

// Timed shapes (workloads with equal var axes share one), round robin over the variants unless --route says otherwise.
std::vector<tuner::Route> compose_routes(const Session& s, std::size_t variants) {
  std::vector<tuner::Route> routes;
  for (auto& shape : tuner::perf_shapes(s.task, s.bt))
    routes.push_back({std::move(shape.workloads), std::move(shape.axes), static_cast<int>(routes.size() % variants)});
  for (const auto& r : s.a.compose_routes) {
    const auto eq = r.rfind('=');
    if (eq == std::string::npos || eq == 0)
      throw std::runtime_error(fmt::format("--route: expected WORKLOAD=INDEX, got \"{}\"", r));
    const std::string w = r.substr(0, eq);
    auto it = std::find_if(routes.begin(), routes.end(), [&](const tuner::Route& x) {
      return std::find(x.workloads.begin(), x.workloads.end(), w) != x.workloads.end();
    });
    if (it == routes.end())
      throw std::runtime_error(fmt::format("--route {}: {} is not a workload timed on {}", r, w, s.a.backend_s));
    try {
      it->variant = std::stoi(r.substr(eq + 1));
    } catch (const std::exception&) {
      throw std::runtime_error(fmt::format("--route {}: expected a variant index after =", r));
    }
    if (it->variant < 0 || it->variant >= static_cast<int>(variants))
      throw std::runtime_error(
          fmt::format("--route {}: expected a variant index 0..{} (one per --point)", r, variants - 1));
  }
  return routes;
}

int run_compose(const Session& s) {
  std::vector<tuner::Variant> variants;
  for (const auto& spec : s.a.compose_points) {
    const auto colon = spec.find(':');
    std::vector<std::string> kvs;
    if (colon != std::string::npos) {
      std::string rest = spec.substr(colon + 1);
      for (std::size_t i = 0; i <= rest.size();) {
        auto e = rest.find(',', i);
        if (e == std::string::npos) e = rest.size();
        if (e > i) kvs.push_back(rest.substr(i, e - i));
        i = e + 1;
      }
    }
    auto [t, p, v] = make_point(s, "--point " + spec, spec.substr(0, colon), kvs, "--point " + spec.substr(0, colon));
    variants.push_back({t, p, ""});
  }
  const std::vector<tuner::Route> routes = compose_routes(s, variants.size());
  khive::write_file_atomic(s.a.out_file, tuner::render_composite(s.task, s.bt, variants, routes));
  std::string status;
  bool ok = true;
  if (s.a.build) std::tie(ok, status) = build_status(s, s.a.out_file);
  std::cout << fmt::format("{} variants -> {}{}\n", variants.size(), s.a.out_file, status);
  for (const auto& r : routes) std::cout << fmt::format("  {} -> v{}\n", fmt::join(r.workloads, " "), r.variant);
  return ok ? 0 : 1;
}

int run_point(const Session& s) {
  auto [t, p, v] = make_point(s, "--template", s.a.template_name, s.a.sets, "--set");
  khive::write_file_atomic(s.a.out_file, tuner::render(*t, s.bt, p));
  std::string status;
  bool ok = true;
  if (s.a.build) std::tie(ok, status) = build_status(s, s.a.out_file);
  std::cout << fmt::format("{} {} -> {}{}\n", t->name, tuner::describe_point(p), s.a.out_file, status);
  if (const std::string fp = tuner::fast_path_note(v, 3); !fp.empty()) std::cout << "  " << fp << "\n";
  return ok ? 0 : 1;
}

// The agent's first per_strategy proposals of every strategy, with list.tsv (file, strategy, point).
int run_render(const Session& s) {
  fs::create_directories(s.a.out_dir);
  khive::TunerOptions o;
  o.kernels_dir = s.kdir;
  o.memory = std::make_shared<khive::TunerMemory>();
  auto agent = khive::make_tuner_agent(o);
  std::ofstream list(fs::path(s.a.out_dir) / "list.tsv");
  int failures = 0, count = 0;
  for (const auto& st : agent->strategies(s.task, s.backend)) {
    khive::AgentContext ctx;
    ctx.task = &s.task;
    ctx.backend = s.backend;
    ctx.strategy = st;
    ctx.seed = s.a.seed;
    for (int i = 0; i < s.a.per_strategy; ++i) {
      auto p = agent->propose(ctx);
      if (!p) break;
      const fs::path file = fs::path(s.a.out_dir) / (p->label + "." + p->ext);
      khive::write_file_atomic(file, p->source);
      std::string point;
      for (const auto& [k, v] : p->params) point += (point.empty() ? "" : " ") + k + "=" + v;
      list << file.filename().string() << '\t' << st.name << '\t' << point << '\n';
      ++count;
      std::string status;
      if (s.a.build) {
        bool ok = true;
        std::tie(ok, status) = build_status(s, file);
        failures += !ok;
      }
      std::cout << fmt::format("{:<28} {}{}\n", st.name, p->label, status) << std::flush;
    }
  }
  std::cout << fmt::format("{} points rendered to {}{}\n", count, s.a.out_dir,
                           s.a.build ? fmt::format(", {} failed to build", failures) : "");
  return failures ? 1 : 0;
}

// The task's binding: from the bindings files, or the one the tuner infers itself (said on stdout); none: exit 2.
std::optional<tuner::Binding> find_binding(const khive::Task& task, const tuner::Library& lib, const fs::path& kdir) {
  if (const auto* b = lib.binding_for(task)) return *b;
  std::string why;
  if (auto inferred = tuner::infer_binding(task, &why)) {
    std::cout << fmt::format("binding inferred from op_type and signature: {} {}\n", inferred->family,
                             inferred->spec.dump());
    return inferred;
  }
  std::cerr << fmt::format("no binding for {} in {}/bindings, and none inferred: {}\n", tuner::task_key(task),
                           kdir.string(), why);
  return std::nullopt;
}

int run(const Args& a) {
  const auto backend = khive::parse_backend(a.backend_s);
  if (!backend) throw std::runtime_error("--backend: expected cpu or cuda, got " + a.backend_s);
  khive::Task task = khive::load_task(a.task_dir);
  const fs::path kdir = a.kernels.empty() ? khive::default_kernels_dir() : fs::path(a.kernels);
  tuner::Library lib = tuner::load_library(kdir);
  const auto b = find_binding(task, lib, kdir);
  if (!b) return 2;
  tuner::BoundTask bt = tuner::bind_task(task, *backend, *b);
  const Session s{a, *backend, std::move(task), kdir, std::move(lib), std::move(bt)};
  if (*a.show) return run_show(s);
  if (s.a.out_file.empty() && (*a.point || *a.compose)) throw std::runtime_error("--out: expected a file path");
  if ((*a.point || *a.compose) && fs::path(a.out_file).has_parent_path())
    fs::create_directories(fs::path(a.out_file).parent_path());
  if (*a.compose) return run_compose(s);
  if (*a.point) return run_point(s);
  return run_render(s);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"khive-tune: the tuner's template library for one task"};
  Args a;
  add_options(app, a);
  CLI11_PARSE(app, argc, argv);
  try {
    return run(a);
  } catch (const std::exception& e) {
    std::cerr << "khive-tune: " << e.what() << "\n";
    return 2;
  }
}
