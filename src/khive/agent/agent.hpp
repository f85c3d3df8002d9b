// What a hive agent is: something that, given the task, its current strategy, the leader, the backups and
// the board, proposes one candidate kernel at a time, and learns from the guard's verdict on it.
// The hive owns everything else (evaluation, leader/backup rules, plateau switches, the database); this part
// (src/khive/agent) is the vocabulary agents and the hive share, so that agents never depend on the hive.
//
//   class Tuner : public Agent { ... };                 // no model: template library (src/khive/tuner)
//   class LlmAgent : public Agent { ... };              // a model through a provider (src/khive/llm)
//
//   AgentContext ctx{task, Backend::cuda, "gemm.tile", leader, backups, board_entries, ...};
//   if (auto p = agent.propose(ctx)) { Outcome o = hive.evaluate(*p); agent.observe(ctx, *p, o); }
//
// Agents run on their own threads; propose() may block for a long time (a model call); it must return
// std::nullopt promptly once ctx.stop is set, and when the strategy has nothing left to try.
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/task/task.hpp"
#include "khive/verdict/verdict.hpp"

namespace khive {

// A strategy: a named direction of search ("gemm.tile_shape", "elementwise.vector_width",
// "llm.tensor_cores", ...). Agents declare the strategies they can hold for a task; the hive assigns one
// at a time and moves the agent on a plateau.
struct Strategy {
  std::string name;         // unique within the agent kind; dotted: family.direction
  std::string description;  // one line, shown in progress and the report
};

// A kernel that is already measured: the leader or a backup.
struct MeasuredKernel {
  std::string id;      // candidate id in the run database
  std::string source;  // full source text
  std::string ext;     // "cpp" | "cu"
  std::string agent, strategy;
  std::map<std::string, std::string> params;        // template parameters, when a template made it
  double score = 0;                                 // task score (higher is better)
  double time_s = 0;                                // weighted geometric mean of the workload medians
  std::map<std::string, double> workload_median_s;  // per perf workload
};

// One conclusion on the shared board.
struct BoardEntry {
  int64_t id = 0;
  std::string agent, strategy;
  std::string kind;       // "worked" | "failed" | "insight"
  std::string text;       // one short line with the numbers ("cluster 2x1, 128x256x64: +4.1% on 8192^3")
  std::string candidate;  // the candidate it refers to ("" when none)
  double delta = 0;       // measured relative gain over the leader at the time (+0.041), negative for slower
  std::string reason;     // filled by the hive for "failed" entries: the guard's reason code (distinct failures
                          // are kept by the board's eviction rule)
};

struct AgentContext {
  const Task* task = nullptr;
  Backend backend = Backend::cpu;
  Strategy strategy;                     // the one the agent holds now
  std::optional<MeasuredKernel> leader;  // none before the first accepted candidate
  // What the next proposal should derive from: the leader, except after a hive-wide plateau, when the hive
  // restarts some agents from a backup (then start is that backup). Agents should mutate ctx.start.
  std::optional<MeasuredKernel> start;
  std::vector<MeasuredKernel> backups;      // ranked, best first
  std::vector<BoardEntry> board;            // entries relevant to this task and strategy (empty with --no-board)
  int attempts_in_strategy = 0;             // candidates this agent evaluated under this strategy
  uint64_t seed = 0;                        // per agent and run: deterministic proposals for replay
  const std::atomic<bool>* stop = nullptr;  // set on Ctrl-C or budget exhausted
  bool stopping() const { return stop && stop->load(); }
};

// The file extension of a kernel for a backend ("cu" | "cpp"): what Proposal::ext holds.
inline std::string backend_ext(Backend b) { return b == Backend::cuda ? "cu" : "cpp"; }

struct Proposal {
  std::string source;                         // the whole kernel file
  std::string ext;                            // "cpp" | "cu"
  std::string parent;                         // candidate id it derives from ("" for a fresh one)
  std::map<std::string, std::string> params;  // template parameters (tuner), for the report and the board
  std::string note;                           // what was changed and why, one line
  std::string label;                          // short name ("simt_128x128x8_s3"), unique-ish, for file names
};

struct Outcome : VerdictRecord {
  std::string candidate;       // its id in the run database
  double score = 0;            // task score when accepted
  double time_s = 0;           // weighted geometric mean of medians when accepted
  double delta_vs_leader = 0;  // relative gain over the previous leader (+0.03 = 3% faster)
  // Accepted: how it stood against that leader, in the hive's words (record/comparison.hpp): one line, and the whole
  // comparison with every workload. Agents word faster/slower from these, never from two medians.
  std::string comparison, comparison_detail;
  std::map<std::string, double> workload_median_s;
};

// What an agent has spent so far (LLM agents: tokens and money); the hive checks its budgets against the sum.
struct AgentUsage {
  int64_t tokens = 0;
  double cost_usd = 0;
};

class Agent {
 public:
  virtual ~Agent() = default;
  virtual std::string kind() const = 0;  // "tuner", "llm:gpt", "cmd:..."
  virtual std::vector<Strategy> strategies(const Task& task, Backend backend) const = 0;
  // One candidate under ctx.strategy, or nullopt when the strategy is exhausted (the hive then switches).
  virtual std::optional<Proposal> propose(const AgentContext& ctx) = 0;
  // Up to n proposals this agent would make next if the verdict on its last one changed nothing (the same leader, the
  // same context): the hive builds them ahead on spare cores while that verdict is awaited (hive/prebuild.hpp) and
  // never judges them from here. Called on the agent's thread after propose(); must not change what propose()
  // returns next (nothing is marked tried). Default: none (an LLM cannot say what it will write).
  virtual std::vector<Proposal> peek(const AgentContext& ctx, std::size_t n) {
    (void)ctx;
    (void)n;
    return {};
  }
  // The guard's verdict on the last proposal; the returned entry (if any) is posted to the board.
  virtual std::optional<BoardEntry> observe(const AgentContext& ctx, const Proposal& p, const Outcome& o) = 0;
  // Why the last propose() returned nullopt, when the agent knows more than "nothing left" (one phrase, for the
  // switch event; "" otherwise).
  virtual std::string declined_because() const { return ""; }
  // Set when the agent cannot go on for a reason outside the task and its strategies: its model provider cannot
  // be reached or keeps failing ("provider http://...: cannot be reached: ..."). The hive then stops the agent
  // (no strategy switch would help), says why on the console and in the summary; a run in which every agent
  // failed so exits 2.
  virtual std::string provider_failure() const { return ""; }
  // Why strategies(task, backend) is empty, when it is: one sentence the hive prints (e.g. the tuner's library
  // has no template that applies to the task), so that an agent with nothing to try is never silent.
  virtual std::string idle_because(const Task& task, Backend backend) const { return ""; }
  // Cumulative usage since construction (thread-safe to call from the hive between proposals).
  virtual AgentUsage usage() const { return {}; }
  // What the agent needs to continue after the process ends (a run paused for GPU evaluation, Ctrl-C):
  // the hive stores it in run.db after every propose() and observe(), and hands it back to a fresh agent
  // of the same kind on --resume before the first call. null = nothing to keep. load_state() throws on a
  // state it cannot read (the hive then starts the agent afresh and says so).
  virtual nlohmann::json save_state() const { return nullptr; }
  virtual void load_state(const nlohmann::json&) {}
};

}  // namespace khive
