// `khive cache`: sizes of the on-disk cache and its cap; `prune [--max-gb X]` applies the size policy now;
// `clear` removes every golden set and build not in use (docs/guard.md, "The cache").
#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace khive {

struct CacheCli {
  CLI::App* cmd = nullptr;
  CLI::App* prune = nullptr;
  CLI::App* clear = nullptr;
  std::string max_gb;  // prune --max-gb; empty: $KHIVE_CACHE_MAX_GB (default 20)
  bool json = false;
  bool selected() const { return cmd && *cmd; }
};

void add_cache_command(CLI::App& app, CacheCli& c);
int run_cache_command(const CacheCli& c);

}  // namespace khive
