#include "khive/cli/cache_cmd.hpp"

#include <algorithm>
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "khive/support/cache.hpp"
#include "khive/support/files.hpp"

namespace khive {

void add_cache_command(CLI::App& app, CacheCli& c) {
  c.cmd = app.add_subcommand(
      "cache", "Sizes of khive's on-disk cache (goldens, builds, scratch) and its cap; prune or clear it");
  c.cmd->add_flag("--json", c.json, "machine-readable output");
  c.prune =
      c.cmd->add_subcommand("prune",
                            "Apply the cache size policy now: remove least-recently-used golden sets and builds "
                            "until under 80% of the cap, and the folders of processes that ended without cleaning up");
  c.prune->add_option("--max-gb", c.max_gb, "the cap in GB for this pruning (default $KHIVE_CACHE_MAX_GB, else 20)");
  c.clear = c.cmd->add_subcommand(
      "clear", "Remove every golden set and build not in use by a running evaluation (asks nothing)");
}

namespace {

std::string cap_text(const std::optional<uint64_t>& cap) {
  return cap ? cache::human_bytes(*cap) : std::string("none");
}

nlohmann::json result_json(const cache::PruneResult& r) {
  return {{"before_bytes", r.before},   {"after_bytes", r.after},           {"removed_golden_sets", r.golden_sets},
          {"removed_builds", r.builds}, {"removed_bytes", r.removed_bytes}, {"in_use", r.in_use},
          {"errors", r.errors},         {"removed_leftovers", r.leftovers}, {"leftover_bytes", r.leftover_bytes}};
}

int show(const std::filesystem::path& root, const std::optional<uint64_t>& cap, bool json) {
  cache::Usage u = cache::scan(root);
  // Golden sets per task/backend, most recently used first; builds as one line (there are thousands).
  std::vector<const cache::Unit*> goldens;
  std::size_t builds = 0;
  for (const auto& x : u.units) {
    if (x.kind == cache::Unit::Kind::golden)
      goldens.push_back(&x);
    else
      ++builds;
  }
  std::sort(goldens.begin(), goldens.end(), [](auto* a, auto* b) { return a->last_used > b->last_used; });
  if (json) {
    nlohmann::json g = nlohmann::json::array();
    for (auto* x : goldens) g.push_back({{"label", x->label}, {"path", x->path.string()}, {"bytes", x->bytes}});
    std::cout << nlohmann::json{{"root", root.string()},
                                {"cap_bytes", cap ? nlohmann::json(*cap) : nlohmann::json(nullptr)},
                                {"goldens", g},
                                {"golden_bytes", u.golden_bytes},
                                {"builds", builds},
                                {"build_bytes", u.build_bytes},
                                {"scratch_bytes", u.scratch_bytes},
                                {"other_bytes", u.other_bytes},
                                {"capped_bytes", u.capped()},
                                {"total_bytes", u.total()}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << fmt::format("cache {}\n", root.string());
  std::cout << fmt::format("goldens  {:>10}  {} golden set{} (task, backend)\n", cache::human_bytes(u.golden_bytes),
                           goldens.size(), goldens.size() == 1 ? "" : "s");
  for (auto* x : goldens) std::cout << fmt::format("  {:>10}  {}\n", cache::human_bytes(x->bytes), x->label);
  std::cout << fmt::format("builds   {:>10}  {} artifact{}\n", cache::human_bytes(u.build_bytes), builds,
                           builds == 1 ? "" : "s");
  std::cout << fmt::format("scratch  {:>10}  (runner scratch, builds in progress, removals in progress)\n",
                           cache::human_bytes(u.scratch_bytes));
  std::cout << fmt::format("other    {:>10}  (profiles, profiler output)\n", cache::human_bytes(u.other_bytes));
  std::cout << fmt::format("total    {:>10}\n", cache::human_bytes(u.total()));
  std::cout << fmt::format(
      "cap      {:>10}  on goldens + builds ({} now){}\n", cap_text(cap), cache::human_bytes(u.capped()),
      cap && u.capped() > *cap ? ": over, the next evaluation prunes (or: khive cache prune)" : "");
  return 0;
}

}  // namespace

int run_cache_command(const CacheCli& c) {
  const std::filesystem::path root = cache_root();
  try {
    if (*c.prune) {
      std::optional<uint64_t> cap =
          c.max_gb.empty() ? cache::cap_from_env() : cache::parse_max_gb(c.max_gb, "--max-gb");
      if (!cap) {
        std::cout << "khive cache prune: no cap (0 GB): nothing to do\n";
        return 0;
      }
      cache::PruneResult r = cache::prune(root, *cap);
      if (c.json) {
        auto j = result_json(r);
        j["cap_bytes"] = *cap;
        std::cout << j.dump(2) << "\n";
      } else if (r.before > *cap) {
        std::cout << r.summary() << "\n";
      } else {
        std::cout << fmt::format("cache {} is under its cap of {}: no golden set or build removed{}\n",
                                 cache::human_bytes(r.before), cache::human_bytes(*cap),
                                 r.leftovers ? "; " + r.leftovers_text() : std::string());
      }
      for (const auto& e : r.errors) std::cerr << "khive cache prune: " << e << "\n";
      return r.errors.empty() ? 0 : 2;
    }
    if (*c.clear) {
      cache::PruneResult r = cache::clear(root);
      if (c.json) {
        std::cout << result_json(r).dump(2) << "\n";
      } else {
        std::cout << fmt::format("khive cache clear: removed {} golden set{} and {} build{}, {}", r.golden_sets,
                                 r.golden_sets == 1 ? "" : "s", r.builds, r.builds == 1 ? "" : "s",
                                 cache::human_bytes(r.removed_bytes));
        if (r.in_use) std::cout << fmt::format("; kept {} in use by running evaluations", r.in_use);
        if (r.leftovers) std::cout << "; " << r.leftovers_text();
        std::cout << "\n";
      }
      for (const auto& e : r.errors) std::cerr << "khive cache clear: " << e << "\n";
      return r.errors.empty() ? 0 : 2;
    }
    return show(root, cache::cap_from_env(), c.json);
  } catch (const std::exception& e) {
    std::cerr << "khive cache: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace khive
