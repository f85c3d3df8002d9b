// khive-tune: look at the tuner's template library for one task, without the hive.
//   khive-tune show TASK [--backend B]                 binding, applicable templates, strategies, space sizes
//   khive-tune render TASK --out DIR [--per-strategy N] [--backend B] [--seed S] [--build]
//       writes the first N proposals of every strategy (as the agent makes them, no leader) to DIR and a
//       list.tsv (file, template, point); --build also compiles each with the real builder (check 1).
//   khive-tune point TASK --template NAME [--set PARAM=VALUE ...] --out FILE [--backend B] [--build]
//       writes exactly one point (the template's defaults, with each --set applied), after the same validity
//       rules the agent checks, so a hand-picked point can be benchmarked (khive bench --kernels) or kept.
// Exit status: 0 fine, 1 a rendered point failed to build, 2 bad input.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "khive/build/builder.hpp"
#include "khive/support/files.hpp"
#include "khive/tuner/bind.hpp"
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
  CLI11_PARSE(app, argc, argv);

  try {
    const auto backend = khive::parse_backend(backend_s);
    if (!backend) throw std::runtime_error("--backend: expected cpu or cuda, got " + backend_s);
    const khive::Task task = khive::load_task(task_dir);
    const fs::path kdir = kernels.empty() ? khive::default_kernels_dir() : fs::path(kernels);
    const auto lib = khive::tuner::load_library(kdir);
    const auto* b = lib.binding_for(task);
    if (!b) {
      std::cerr << fmt::format("no binding for {} in {}/bindings\n", khive::tuner::task_key(task), kdir.string());
      return 2;
    }
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

    if (*pt) {
      const khive::tuner::Template* t = nullptr;
      for (const auto& x : lib.templates)
        if (x.name == template_name) t = &x;
      if (!t) throw std::runtime_error(fmt::format("--template: no template named \"{}\" in {}", template_name, kdir.string()));
      if (!khive::tuner::template_applies(*t, bt))
        throw std::runtime_error(fmt::format("--template: {} does not apply to {} ({})", t->name, bt.key, bt.summary));
      khive::tuner::Point p = t->default_point();
      for (const auto& kv : sets) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) throw std::runtime_error(fmt::format("--set: expected PARAM=VALUE, got \"{}\"", kv));
        const std::string name = kv.substr(0, eq), value = kv.substr(eq + 1);
        const auto* prm = t->find_param(name);
        if (!prm) {
          std::vector<std::string> names;
          for (const auto& x : t->params) names.push_back(x.name);
          throw std::runtime_error(fmt::format("--set {}: {} has no parameter {} (it has {})", kv, t->name, name, fmt::join(names, ", ")));
        }
        if (std::find(prm->values.begin(), prm->values.end(), value) == prm->values.end())
          throw std::runtime_error(fmt::format("--set {}: {} of {} takes one of {}", kv, name, t->name, fmt::join(prm->values, ", ")));
        p[name] = value;
      }
      const auto v = khive::tuner::check_point(*t, bt, p);
      if (!v.ok) throw std::runtime_error(fmt::format("{} {}: invalid point: {}", t->name, khive::tuner::describe_point(p), v.message));
      if (out_file.empty() || fs::path(out_file).filename().empty()) throw std::runtime_error("--out: expected a file path");
      if (fs::path(out_file).has_parent_path()) fs::create_directories(fs::path(out_file).parent_path());
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
