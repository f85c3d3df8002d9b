// The hive's public face. Its inside, Hive::Impl, is declared in hive_impl.hpp and defined one concern per file
// (records, slots, verdicts, agent_loop, deferred, setup, loop): hive_impl.hpp lists them.
#include "khive/hive/hive.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "khive/hive/hive_impl.hpp"

namespace khive {

Hive::Hive(const Task& task, Backend backend, std::vector<std::unique_ptr<Agent>> agents, Evaluator& eval,
           HiveOptions o)
    : impl_(std::make_unique<Impl>(task, backend, eval, std::move(o))) {
  int i = 0;
  for (auto& a : agents) {
    AgentSlot s;
    s.index = i;
    s.st.name = fmt::format("a{}", i);
    s.agent = std::move(a);
    impl_->agents.push_back(std::move(s));
    ++i;
  }
}

Hive::~Hive() = default;

bool HiveStatus::all_agents_failed() const {
  return !agents.empty() &&
         std::all_of(agents.begin(), agents.end(), [](const AgentStatus& a) { return !a.failure.empty(); });
}

HiveResult Hive::run() { return impl_->run(); }

PendingSummary Hive::evaluate_pending() { return impl_->evaluate_pending(); }

}  // namespace khive
