// LLM agents: any model (OpenAI-compatible chat completions, Anthropic Messages, or a local command) as a
// KernelHive agent that follows the CuTeGen loop (docs/llm.md):
//
//   Generate (whole file, simplest correct version first) -> Build -> Repair (<= R patch-only attempts)
//   -> Verify -> Repair -> Optimize (one optimization per step from the kernel class's menu, within the
//   strategy) -> Profile gate (ncu metrics join the prompt once correct and K optimization steps taken)
//
//   LlmAgentOptions o = load_llm_config("configs/gpt.toml");   // provider, model, key env var, R, K, ...
//   o.run_dir = run / "llm";  o.on_event = [&](const LlmEvent& e) { log(e); };
//   std::unique_ptr<Agent> a = make_llm_agent(o);               // or make_command_agent("scripts/llm-relay.sh")
//   if (auto p = a->propose(ctx)) { Outcome v = evaluate(*p); if (auto b = a->observe(ctx, *p, v)) post(*b); }
//
// The hive (src/khive/hive) owns evaluation; this part only talks to the model and keeps the loop's state.
#pragma once
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/agent/agent.hpp"

namespace khive {

enum class ProviderKind { openai, anthropic, command };
std::string_view provider_kind_name(ProviderKind k);  // "openai" | "anthropic" | "command"

struct ProviderConfig {
  ProviderKind kind = ProviderKind::openai;
  // openai: "https://api.openai.com/v1" (vLLM/SGLang/llama.cpp/Ollama: "http://host:port/v1"); the client
  // posts to <base_url>/chat/completions. anthropic: "https://api.anthropic.com" -> <base_url>/v1/messages.
  std::string base_url;
  std::string model;
  std::string api_key_env;            // name of the environment variable holding the key; "" = none
  std::optional<double> temperature;  // unset = provider default
  int max_tokens = 8192;
  std::string reasoning_effort;    // "" | "low" | "medium" | "high" (OpenAI reasoning_effort;
                                   // Anthropic: extended thinking with a budget derived from it)
  int concurrency = 4;             // requests in flight at once to this provider, all agents together
  double usd_per_input_token = 0;  // cost accounting; 0 = unknown/free
  double usd_per_output_token = 0;
  // command: run through /bin/sh; the prompt goes to stdin, or into a file whose path replaces the
  // placeholder {prompt_file} when the command names it; the reply is the command's stdout.
  std::string command;
  double connect_timeout_s = 10;                     // an unreachable provider fails after this, not a hang
  double request_timeout_s = 600;                    // whole request (the model may think for minutes)
  int max_retries = 4;                               // on timeouts, 429, 5xx, malformed or truncated HTTP bodies
  double backoff_initial_s = 2, backoff_max_s = 60;  // exponential, jittered; 429 Retry-After wins
};

// Token and cost accounting. A Usage is kept per agent; a UsageLedger (shared by every agent of a run
// when the hive passes the same pointer) adds them up for budgets.
struct Usage {
  int64_t requests = 0, failed_requests = 0;
  int64_t input_tokens = 0, output_tokens = 0;
  double usd = 0;
  double model_seconds = 0;  // wall time spent waiting for the provider
  nlohmann::json to_json() const;
  Usage& operator+=(const Usage& u);
};
class UsageLedger {
 public:
  void add(const Usage& u);
  Usage total() const;

 private:
  mutable std::mutex mu_;
  Usage total_;
};

// One thing the agent did or decided. type: "transition" (from -> to, reason), "request" (a model call:
// tokens, seconds, file), "edit" (an edit that did not apply, or a refused rewrite), "profile", "note".
// tool_s: time spent in the tool for this step outside the model, the compiler and the GPU.
struct LlmEvent {
  std::string agent, type, from, to, reason;
  double tool_s = 0;
  nlohmann::json data;
  nlohmann::json to_json() const;
};

// Delayed profiling as a job of its own: the agent asks, the hive schedules it on a device slot when no
// timing holds it (profile_kernel below is the default that runs it in place).
struct ProfileJob {
  std::string tool = "ncu";  // "ncu" (metrics) | "memcheck" (compute-sanitizer on a crashing kernel)
  const Task* task = nullptr;
  Backend backend = Backend::cuda;
  std::string source, ext;        // the correct kernel to profile
  std::string workload;           // uuid of the perf workload to run once ("" = the largest perf one)
  std::filesystem::path out_dir;  // where the driver, ncu's raw output and the report go
  double timeout_s = 300;
};
struct ProfileReport {
  bool ran = false;
  std::string skipped;     // why it did not run ("no ncu in PATH", "CPU backend", ...)
  std::string error;       // it ran and failed
  std::string text;        // the metrics for the prompt: launch, registers, smem, duration,
                           // SM / memory / DRAM throughput, occupancy, ncu's advice
  nlohmann::json metrics;  // kernel -> {metric -> "value unit"}
  double seconds = 0;
};
ProfileReport profile_kernel(const ProfileJob& job);

struct LlmAgentOptions {
  std::string name;  // agent label in events and on the board ("" = from the model)
  ProviderConfig provider;
  int repair_attempts = 5;            // R: patch-only repairs of one broken kernel before giving up on it
  int profile_depth = 3;              // K: optimization steps on a correct kernel before ncu metrics join
                                      // the prompt (CuTeGen: profiling from depth > 3)
  int edit_retries = 2;               // re-asks after an edit that does not apply (not a candidate)
  int generate_attempts = 2;          // fresh whole-file generations before the strategy counts as exhausted
  double max_rewrite_fraction = 0.6;  // a repair that changes more than this share of the lines is refused
  std::vector<Strategy> strategies;   // empty = the default catalogue (llm.* strategies, prompts/strategies)
  std::filesystem::path prompts_dir;  // empty = $KHIVE_PROMPTS, else <source>/prompts
  std::filesystem::path run_dir;      // requests and replies saved here (keys redacted); "" = not saved
  std::function<void(const LlmEvent&)> on_event;
  std::function<ProfileReport(const ProfileJob&)> profiler;  // empty = profile_kernel in the agent's thread
  std::shared_ptr<UsageLedger> run_usage;                    // shared across the run's agents; may be null
};

// CONFIG: a .json or .toml file (docs/llm.md lists the keys). Throws std::runtime_error naming the file,
// the key and what was expected.
LlmAgentOptions load_llm_config(const std::filesystem::path& path);
LlmAgentOptions parse_llm_config(const nlohmann::json& j, const std::string& origin);  // origin: for errors

std::unique_ptr<Agent> make_llm_agent(const LlmAgentOptions& o);
// `cmd:COMMAND`: the same loop with a command provider (COMMAND gets the prompt on stdin or in {prompt_file},
// answers on stdout). `base` carries run_dir, on_event, R, K, ...; its provider is replaced.
std::unique_ptr<Agent> make_command_agent(const std::string& command, LlmAgentOptions base = {});

// An on_event sink that appends each event as one JSON line (plus "t": Unix time, "elapsed_s": since the
// sink was made) to FILE; thread-safe, shared by all agents of a run. Throws when FILE cannot be opened.
std::function<void(const LlmEvent&)> llm_event_log(const std::filesystem::path& file);

// The usage of an agent made by the factories above (nullopt for other agents).
std::optional<Usage> llm_usage(const Agent& a);

}  // namespace khive
