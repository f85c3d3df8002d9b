// khive-tune: look at the tuner's template library for one task, without the hive.
//   khive-tune show TASK [--backend B]                 binding, applicable templates, strategies, space sizes
//   khive-tune render TASK --out DIR [--per-strategy N] [--backend B] [--seed S] [--build]
//       writes the first N proposals of every strategy (as the agent makes them, no leader) to DIR and a
//       list.tsv (file, template, point); --build also compiles each with the real builder (check 1).
//   khive-tune point TASK --template NAME [--set PARAM=VALUE ...] --out FILE [--backend B] [--build]
//       writes exactly one point (the template's defaults, with each --set applied), after the same validity
//       rules the agent checks, so a hand-picked point can be benchmarked (khive bench --kernels) or kept.
//   khive-tune compose TASK --point TEMPLATE[:P=V,...] --point ... --out FILE [--route WORKLOAD=I ...] [--backend B] [--build]
//       writes a per-shape dispatch composite (strategy tuner.dispatch) of the given points: timed shapes go to
//       the variants round robin unless --route says otherwise; --build compiles it with the real builder.
// Exit status: 0 fine, 1 a rendered point failed to build, 2 bad input.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "khive/build/builder.hpp"
#include "khive/support/files.hpp"
#include "khive/tuner/auto_bind.hpp"
#include "khive/tuner/bind.hpp"
#include "khive/tuner/compose.hpp"
#include "khive/tuner/library.hpp"
#include "khive/tuner/space.hpp"
#include "khive/tuner/tuner.hpp"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  CLI::App app{"khive-tune: the tuner's template library for one task"};
  app.require_subcommand(1);
  std::string task_dir, backend_s = "cpu", out_dir, kernels;
  int per_strategy = 3;
  uint64_t seed = 1;
  bool build = false;
  app.add_option("--kernels", kernels, "template library (default: $KHIVE_KERNELS or <repo>/kernels)");
  auto* show = app.add_subcommand("show", "binding, templates, strategies and valid points");
  show->add_option("task", task_dir)->required();
  show->add_option("--backend", backend_s, "cpu or cuda");
  auto* ren = app.add_subcommand("render", "write the agent's first proposals per strategy");
  ren->add_option("task", task_dir)->required();
  ren->add_option("--backend", backend_s, "cpu or cuda");
  ren->add_option("--out", out_dir)->required();
  ren->add_option("--per-strategy", per_strategy)->check(CLI::Range(1, 1000));
  ren->add_option("--seed", seed);
  ren->add_flag("--build", build, "compile every rendered point with the real builder");
  std::string template_name, out_file;
  std::vector<std::string> sets;
  auto* pt = app.add_subcommand("point", "write one point of one template (defaults, then each --set)");
  pt->add_option("task", task_dir)->required();
  pt->add_option("--backend", backend_s, "cpu or cuda");
  pt->add_option("--template", template_name, "template name, e.g. rowop.cuda_softmax")->required();
  pt->add_option("--set", sets, "PARAM=VALUE (repeatable); parameters not set keep the template's default");
  pt->add_option("--out", out_file, "the source file to write")->required();
  pt->add_flag("--build", build, "compile it with the real builder");
  std::vector<std::string> compose_points, compose_routes;
  auto* cmp = app.add_subcommand("compose", "write a per-shape dispatch composite of several points (tuner.dispatch)");
  cmp->add_option("task", task_dir)->required();
  cmp->add_option("--backend", backend_s, "cpu or cuda");
  cmp->add_option("--point", compose_points, "TEMPLATE[:PARAM=VALUE,...]: variant v0, v1, ... in order (parameters not set keep the default)")->required();
  cmp->add_option("--route", compose_routes, "WORKLOAD=INDEX: that timed workload's shape runs variant INDEX (default: round robin)");
  cmp->add_option("--out", out_file, "the source file to write")->required();
  cmp->add_flag("--build", build, "compile it with the real builder");
  CLI11_PARSE(app, argc, argv);

  try {
    const auto backend = khive::parse_backend(backend_s);
    if (!backend) throw std::runtime_error("--backend: expected cpu or cuda, got " + backend_s);
    const khive::Task task = khive::load_task(task_dir);
    const fs::path kdir = kernels.empty() ? khive::default_kernels_dir() : fs::path(kernels);
    const auto lib = khive::tuner::load_library(kdir);
    const auto* b = lib.binding_for(task);
    std::optional<khive::tuner::Binding> inferred;   // none in the bindings files: the one the tuner finds itself
    std::string why;
    if (!b && (inferred = khive::tuner::infer_binding(task, &why))) b = &*inferred;
    if (!b) {
      std::cerr << fmt::format("no binding for {} in {}/bindings, and none inferred: {}\n", khive::tuner::task_key(task), kdir.string(), why);
      return 2;
    }
    if (inferred) std::cout << fmt::format("binding inferred from op_type and signature: {} {}\n", inferred->family, inferred->spec.dump());
    const auto bt = khive::tuner::bind_task(task, *backend, *b);

    if (*show) {
      std::cout << fmt::format("{}: {}\n", bt.key, bt.summary);
      for (const auto& t : lib.templates) {
        if (!khive::tuner::template_applies(t, bt)) continue;
        // Count valid points exactly when the space is small enough to list.
        std::string valid = "? points valid";
        if (t.space_size() <= 200000) {
          std::size_t n = 0, total = 0, all_perf = 0;   // all_perf: valid, and the fast path takes every perf workload
          std::vector<std::size_t> idx(t.params.size(), 0);
          for (;;) {
            khive::tuner::Point p;
            for (std::size_t i = 0; i < idx.size(); ++i) p[t.params[i].name] = t.params[i].values[idx[i]];
            ++total;
            const auto pv = khive::tuner::check_point(t, bt, p);
            n += pv.ok;
            all_perf += pv.ok && pv.perf_fast == pv.perf_total;
            std::size_t i = 0;
            for (; i < idx.size(); ++i) {
              if (++idx[i] < t.params[i].values.size()) break;
              idx[i] = 0;
            }
            if (i == idx.size()) break;
          }
          valid = t.fast_path.empty() ? fmt::format("{} of {} points valid", n, total)
                                      : fmt::format("{} of {} points valid, {} with the fast path on every perf workload", n, total, all_perf);
        }
        const auto v = khive::tuner::check_point(t, bt, t.default_point());
        std::cout << fmt::format("  template {} ({}); default {}{}\n", t.name, valid, khive::tuner::describe_point(t.default_point()),
                                 v.ok ? "" : " INVALID: " + v.message);
        if (const std::string fp = khive::tuner::fast_path_note(v, 3); v.ok && !fp.empty()) std::cout << "    default: " << fp << "\n";
        for (const auto& s : t.strategies) std::cout << fmt::format("    {}: {} [{}]\n", s.name, s.description, fmt::join(s.params, ", "));
      }
      return 0;
    }

    auto build_status = [&](const fs::path& file) {
      khive::BuildOptions bo;
      bo.backend = *backend;
      const auto r = khive::build_candidate(task, file, bo);
      std::string status = fmt::format("  build {} {:.1f}s", r.ok ? "ok" : "FAILED", r.seconds);
      for (const auto& k : r.resources)
        status += fmt::format(" [{} regs, {} B smem{}{}]", k.registers, k.shared_bytes, k.spill_stores ? ", spills" : "", k.wgmma_serialized ? ", WGMMA SERIALIZED" : "");
      if (!r.ok) {
        status += "\n" + khive::format_diagnostics(r.diagnostics, 3);
        if (r.diagnostics.empty()) status += "\n" + r.log.substr(0, 2000);
      }
      return std::make_pair(r.ok, status);
    };

    // A valid point of a template that applies here: its defaults with each PARAM=VALUE of `kvs` applied.
    auto make_point = [&](const std::string& opt, const std::string& tname, const std::vector<std::string>& kvs, const std::string& kv_opt) {
      const khive::tuner::Template* t = lib.find_template(tname);
      if (!t) throw std::runtime_error(fmt::format("{}: no template named \"{}\" in {}", opt, tname, kdir.string()));
      if (!khive::tuner::template_applies(*t, bt))
        throw std::runtime_error(fmt::format("{}: {} does not apply to {} ({})", opt, t->name, bt.key, bt.summary));
      khive::tuner::Point p = t->default_point();
      for (const auto& kv : kvs) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) throw std::runtime_error(fmt::format("{}: expected PARAM=VALUE, got \"{}\"", kv_opt, kv));
        const std::string name = kv.substr(0, eq), value = kv.substr(eq + 1);
        const auto* prm = t->find_param(name);
        if (!prm) {
          std::vector<std::string> names;
          for (const auto& x : t->params) names.push_back(x.name);
          throw std::runtime_error(fmt::format("{} {}: {} has no parameter {} (it has {})", kv_opt, kv, t->name, name, fmt::join(names, ", ")));
        }
        if (std::find(prm->values.begin(), prm->values.end(), value) == prm->values.end())
          throw std::runtime_error(fmt::format("{} {}: {} of {} takes one of {}", kv_opt, kv, name, t->name, fmt::join(prm->values, ", ")));
        p[name] = value;
      }
      const auto v = khive::tuner::check_point(*t, bt, p);
      if (!v.ok) throw std::runtime_error(fmt::format("{} {}: invalid point: {}", t->name, khive::tuner::describe_point(p), v.message));
      return std::make_tuple(t, p, v);
    };
    if (out_file.empty() && (*pt || *cmp)) throw std::runtime_error("--out: expected a file path");
    if ((*pt || *cmp) && fs::path(out_file).has_parent_path()) fs::create_directories(fs::path(out_file).parent_path());

    if (*cmp) {
      std::vector<khive::tuner::Variant> variants;
      for (const auto& spec : compose_points) {
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
        auto [t, p, v] = make_point("--point " + spec, spec.substr(0, colon), kvs, "--point " + spec.substr(0, colon));
        variants.push_back({t, p, ""});
      }
      // Timed shapes (workloads with equal var axes share one), round robin over the variants unless routed.
      std::vector<khive::tuner::Route> routes;
      for (auto& shape : khive::tuner::perf_shapes(task, bt))
        routes.push_back({std::move(shape.workloads), std::move(shape.axes), static_cast<int>(routes.size() % variants.size())});
      for (const auto& r : compose_routes) {
        const auto eq = r.rfind('=');
        if (eq == std::string::npos || eq == 0) throw std::runtime_error(fmt::format("--route: expected WORKLOAD=INDEX, got \"{}\"", r));
        const std::string w = r.substr(0, eq);
        auto it = std::find_if(routes.begin(), routes.end(), [&](const khive::tuner::Route& x) {
          return std::find(x.workloads.begin(), x.workloads.end(), w) != x.workloads.end();
        });
        if (it == routes.end()) throw std::runtime_error(fmt::format("--route {}: {} is not a workload timed on {}", r, w, backend_s));
        try {
          it->variant = std::stoi(r.substr(eq + 1));
        } catch (const std::exception&) {
          throw std::runtime_error(fmt::format("--route {}: expected a variant index after =", r));
        }
        if (it->variant < 0 || it->variant >= static_cast<int>(variants.size()))
          throw std::runtime_error(fmt::format("--route {}: expected a variant index 0..{} (one per --point)", r, variants.size() - 1));
      }
      khive::write_file_atomic(out_file, khive::tuner::render_composite(task, bt, variants, routes));
      std::string status;
      bool ok = true;
      if (build) std::tie(ok, status) = build_status(out_file);
      std::cout << fmt::format("{} variants -> {}{}\n", variants.size(), out_file, status);
      for (const auto& r : routes) std::cout << fmt::format("  {} -> v{}\n", fmt::join(r.workloads, " "), r.variant);
      return ok ? 0 : 1;
    }

    if (*pt) {
      auto [t, p, v] = make_point("--template", template_name, sets, "--set");
      khive::write_file_atomic(out_file, khive::tuner::render(*t, bt, p));
      std::string status;
      bool ok = true;
      if (build) std::tie(ok, status) = build_status(out_file);
      std::cout << fmt::format("{} {} -> {}{}\n", t->name, khive::tuner::describe_point(p), out_file, status);
      if (const std::string fp = khive::tuner::fast_path_note(v, 3); !fp.empty()) std::cout << "  " << fp << "\n";
      return ok ? 0 : 1;
    }

    fs::create_directories(out_dir);
    khive::TunerOptions o;
    o.kernels_dir = kdir;
    o.memory = std::make_shared<khive::TunerMemory>();
    auto agent = khive::make_tuner_agent(o);
    std::ofstream list(fs::path(out_dir) / "list.tsv");
    int failures = 0, count = 0;
    for (const auto& s : agent->strategies(task, *backend)) {
      khive::AgentContext ctx;
      ctx.task = &task;
      ctx.backend = *backend;
      ctx.strategy = s;
      ctx.seed = seed;
      for (int i = 0; i < per_strategy; ++i) {
        auto p = agent->propose(ctx);
        if (!p) break;
        const fs::path file = fs::path(out_dir) / (p->label + "." + p->ext);
        khive::write_file_atomic(file, p->source);
        std::string point;
        for (const auto& [k, v] : p->params) point += (point.empty() ? "" : " ") + k + "=" + v;
        list << file.filename().string() << '\t' << s.name << '\t' << point << '\n';
        ++count;
        std::string status;
        if (build) {
          bool ok = true;
          std::tie(ok, status) = build_status(file);
          failures += !ok;
        }
        std::cout << fmt::format("{:<28} {}{}\n", s.name, p->label, status) << std::flush;
      }
    }
    std::cout << fmt::format("{} points rendered to {}{}\n", count, out_dir, build ? fmt::format(", {} failed to build", failures) : "");
    return failures ? 1 : 0;
  } catch (const std::exception& e) {
    std::cerr << "khive-tune: " << e.what() << "\n";
    return 2;
  }
}
