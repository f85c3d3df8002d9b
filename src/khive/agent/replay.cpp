#include "khive/agent/replay.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "khive/support/files.hpp"

namespace khive {

ReplayAgent::ReplayAgent(std::filesystem::path dir, int shard, int shards)
    : dir_(std::move(dir)), shard_(shard), shards_(std::max(1, shards)) {
  if (!std::filesystem::is_directory(dir_))
    throw std::runtime_error("replay agent: " + dir_.string() + ": expected a directory of kernels");
}

std::vector<std::filesystem::path> ReplayAgent::files(Backend backend) const {
  std::vector<std::filesystem::path> all;
  const std::string ext = "." + backend_ext(backend);
  for (auto& e : std::filesystem::directory_iterator(dir_))
    if (e.is_regular_file() && e.path().extension() == ext) all.push_back(e.path());
  std::sort(all.begin(), all.end());
  std::vector<std::filesystem::path> mine;
  for (std::size_t i = static_cast<std::size_t>(shard_); i < all.size(); i += static_cast<std::size_t>(shards_))
    mine.push_back(all[i]);
  return mine;
}

std::vector<Strategy> ReplayAgent::strategies(const Task&, Backend) const {
  return {{"replay.files", "the kernels of " + dir_.string() + ", in name order"}};
}

std::optional<Proposal> ReplayAgent::propose(const AgentContext& ctx) {
  if (ctx.stopping()) return std::nullopt;
  auto fs = files(ctx.backend);
  if (next_ >= fs.size()) return std::nullopt;
  const auto& f = fs[next_++];
  Proposal p;
  p.source = read_file(f);
  p.ext = backend_ext(ctx.backend);
  p.parent = "";  // an independent kernel, not derived from the leader
  p.label = f.stem().string();
  p.params = {{"file", f.filename().string()}};
  p.note = "replayed from " + f.string();
  return p;
}

std::optional<BoardEntry> ReplayAgent::observe(const AgentContext& ctx, const Proposal& p, const Outcome& o) {
  BoardEntry e;
  e.strategy = ctx.strategy.name;
  e.candidate = o.candidate;
  e.delta = o.delta_vs_leader;
  // How it stood against the leader, in the hive's words (its comparison); the own-run median is labelled as such.
  const std::string cmp =
      o.comparison.empty() ? fmt::format("{:+.1f}% vs the leader", o.delta_vs_leader * 100) : o.comparison;
  if (o.standing == Standing::leader) {
    e.kind = "worked";
    e.text = ctx.leader ? fmt::format("{}: new leader, own run {:.3f} ms; {}", p.label, o.time_s * 1e3, cmp)
                        : fmt::format("{}: first correct kernel, own run {:.3f} ms", p.label, o.time_s * 1e3);
  } else if (o.standing == Standing::backup) {
    e.kind = "insight";
    e.text = fmt::format("{}: correct, kept as a backup (own run {:.3f} ms); {}", p.label, o.time_s * 1e3, cmp);
  } else if (o.standing == Standing::rejected) {
    e.kind = "failed";
    e.reason = o.reason;
    e.delta = 0;
    e.text = fmt::format("{}: rejected at {} ({}): {}", p.label, o.check_text(), o.reason, o.message.substr(0, 160));
  } else {
    return std::nullopt;  // a harness error says nothing about the kernel
  }
  return e;
}

}  // namespace khive
