// The replay agent (`--agent replay:DIR`): proposes the kernels of a directory, in name order, one per
// call — a fixed list of candidates through the hive (a user's own variants, a task's candidates/, tests).
// Several replay agents over one directory share it out: agent i of n takes files i, i+n, i+2n, ...
#pragma once
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "khive/agent/agent.hpp"

namespace khive {

class ReplayAgent : public Agent {
 public:
  // Throws std::runtime_error naming dir when it is not a directory.
  ReplayAgent(std::filesystem::path dir, int shard = 0, int shards = 1);
  std::string kind() const override { return "replay:" + dir_.string(); }
  std::vector<Strategy> strategies(const Task& task, Backend backend) const override;
  std::optional<Proposal> propose(const AgentContext& ctx) override;
  std::optional<BoardEntry> observe(const AgentContext& ctx, const Proposal& p, const Outcome& o) override;

  // The files this agent would propose for a backend (its share, in order).
  std::vector<std::filesystem::path> files(Backend backend) const;

 private:
  std::filesystem::path dir_;
  int shard_, shards_;
  std::size_t next_ = 0;
};

}  // namespace khive
