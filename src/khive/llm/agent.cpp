// The LLM agent: the CuTeGen loop as an explicit state machine inside the Agent interface.
//
//   generate --propose--> [guard: build, verify] --observe--> optimize      (accepted)
//                                                          \-> repair       (rejected: build errors or a
//                                                                            correctness/crash diagnosis)
//   repair   --propose (patch)--> [guard] --observe--> optimize | repair (attempts left) | back to the
//                                                      last correct kernel / generate (R attempts spent)
//   optimize --(profile gate: ncu metrics once correct and K steps taken)--> propose (one edit) --> ...
//
// propose() asks the model; observe() reads the guard's verdict and picks the next state. Every
// transition is an LlmEvent with its reason and the time the tool itself spent on the step.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "khive/llm/client.hpp"
#include "khive/llm/llm_agent.hpp"
#include "khive/llm/patch.hpp"
#include "khive/llm/prompts.hpp"
#include "khive/support/files.hpp"
#include "khive/support/phase.hpp"
#include "khive/support/subprocess.hpp"
#include "khive/support/text.hpp"

namespace khive {

nlohmann::json Usage::to_json() const {
  return {{"requests", requests},
          {"failed_requests", failed_requests},
          {"input_tokens", input_tokens},
          {"output_tokens", output_tokens},
          {"usd", usd},
          {"model_seconds", model_seconds}};
}
Usage& Usage::operator+=(const Usage& u) {
  requests += u.requests;
  failed_requests += u.failed_requests;
  input_tokens += u.input_tokens;
  output_tokens += u.output_tokens;
  usd += u.usd;
  model_seconds += u.model_seconds;
  return *this;
}
void UsageLedger::add(const Usage& u) {
  std::lock_guard lk(mu_);
  total_ += u;
}
Usage UsageLedger::total() const {
  std::lock_guard lk(mu_);
  return total_;
}
nlohmann::json LlmEvent::to_json() const {
  return {{"agent", agent},   {"type", type},     {"from", from}, {"to", to},
          {"reason", reason}, {"tool_s", tool_s}, {"data", data}};
}

namespace llm {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

enum class State { generate, repair, optimize, exhausted };
const char* state_name(State s) {
  switch (s) {
    case State::generate: return "generate";
    case State::repair: return "repair";
    case State::optimize: return "optimize";
    case State::exhausted: return "exhausted";
  }
  return "?";
}

std::string one_line(std::string s, std::size_t n = 200) {
  for (auto& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s.size() > n ? s.substr(0, n) + "..." : s;
}
std::string ms(double s) { return s > 0 ? fmt::format("{:.4g} ms", s * 1e3) : "n/a"; }

std::string numbered(const std::string& src) {
  std::istringstream in(src);
  std::string l, out;
  int n = 0;
  while (std::getline(in, l)) out += fmt::format("{:>4} | {}\n", ++n, l);
  return out;
}

// CuTeGen's classes: the menu of optimizations depends on what the kernel is.
std::string classify(const Task& t) {
  std::string s = lower(t.op_type + " " + t.name);
  for (auto& tag : t.tags) s += " " + lower(tag);
  auto has = [&](std::initializer_list<const char*> ws) {
    for (auto w : ws)
      if (s.find(w) != std::string::npos) return true;
    return false;
  };
  if (has({"attention", "sdpa", "flash", "mha", "gqa"})) return "attention";
  if (has({"gemm", "matmul", "matvec", "gemv", "bmm", "mm_", "linear", "conv"})) return "gemm";
  if (has({"softmax", "norm", "reduce", "reduction", "sum", "mean", "argmax", "topk", "scan"})) return "reduction";
  if (has({"elementwise", "activation", "relu", "gelu", "silu", "swish", "sigmoid", "tanh", "add", "mul", "scale"}))
    return "elementwise";
  return "other";
}
// The prompt pack's backend folder (prompts/cpu, prompts/cuda): CPU prompts speak of cores, SIMD and caches.
std::string backend_variant(Backend b) { return b == Backend::cuda ? "cuda" : "cpu"; }

bool known_class(const std::string& c) {
  return c == "gemm" || c == "elementwise" || c == "reduction" || c == "attention" || c == "other";
}

std::string tensors_text(const Task& t) {
  std::string s;
  for (auto& a : t.axes) {
    if (a.kind == Axis::Kind::constant)
      s += fmt::format("- axis {} = {} (constant)\n", a.name, a.value);
    else if (a.kind == Axis::Kind::var)
      s += fmt::format("- axis {} (varies per workload; an int64_t parameter)\n", a.name);
    else
      s += fmt::format("- axis {} = {}\n", a.name, a.expression);
  }
  auto shape = [](const TensorSpec& ts) {
    if (ts.scalar) return std::string("scalar (by value)");
    std::string r = "[";
    for (std::size_t i = 0; i < ts.shape.size(); ++i) r += (i ? ", " : "") + ts.shape[i];
    return r + "] row-major";
  };
  for (auto& i : t.inputs) s += fmt::format("- input {}: {} {}\n", i.name, dtype_name(i.dtype), shape(i));
  for (auto& o : t.outputs) s += fmt::format("- output {}: {} {}\n", o.name, dtype_name(o.dtype), shape(o));
  for (auto& c : t.constraints) s += fmt::format("- constraint: {}\n", c);
  return s;
}

std::string workloads_text(const Task& t) {
  std::string s;
  int shown = 0;
  for (auto& w : t.workloads) {
    if (++shown > 16) {
      s += fmt::format("- ... and {} more\n", t.workloads.size() - 16);
      break;
    }
    std::string ax;
    for (auto& [k, v] : w.axes) ax += fmt::format("{}{}={}", ax.empty() ? "" : ", ", k, v);
    const char* role = w.role == WorkloadRole::perf          ? "timed"
                       : w.role == WorkloadRole::correctness ? "checked"
                                                             : "checked and timed";
    s += fmt::format("- {}: {} ({})\n", w.uuid, ax.empty() ? "fixed shape" : ax, role);
  }
  return s;
}

std::string tolerances_text(const Task& t) {
  std::string s;
  for (auto& o : t.outputs) {
    Tolerance tol = t.tolerance.count(o.name) ? t.tolerance.at(o.name) : default_tolerance(o.dtype);
    s += fmt::format("{}{}: atol {:g}, rtol {:g}", s.empty() ? "" : "; ", o.name, tol.atol, tol.rtol);
  }
  return s;
}

std::string policy_text(const Task& t, Backend b) {
  if (t.policy.libraries.empty())
    return b == Backend::cuda ? "none allowed (no cuBLAS, cuBLASLt, cuDNN, Thrust/CUB device-wide calls or BLAS)"
                              : "none allowed (no BLAS, LAPACK, MKL or other math library; the C++ standard library "
                                "and intrinsics are fine)";
  std::string s;
  for (auto& l : t.policy.libraries) s += (s.empty() ? "" : ", ") + l;
  return "only " + s + " may be called";
}

std::string measured_text(const MeasuredKernel& k) {
  std::string s =
      fmt::format("Measured by the guard: {} (weighted geometric mean of the workload medians)", ms(k.time_s));
  if (k.score > 0) s += fmt::format(", task score {:.3f}", k.score);
  if (!k.workload_median_s.empty()) {
    s += "; per workload:";
    for (auto& [w, t] : k.workload_median_s) s += fmt::format(" {} {};", w, ms(t));
  }
  return s;
}

struct Step {  // one evaluated proposal, for the history section
  std::string kind, what, verdict;
};

class LlmAgent final : public Agent {
 public:
  explicit LlmAgent(LlmAgentOptions o) : o_(std::move(o)) {
    if (o_.name.empty()) o_.name = o_.provider.kind == ProviderKind::command ? "cmd" : o_.provider.model;
    pack_ = std::make_unique<PromptPack>(find_prompts_dir(o_.prompts_dir));
    std::filesystem::path tdir;
    if (!o_.run_dir.empty()) tdir = o_.run_dir / sanitize(o_.name);
    client_ = std::make_unique<LlmClient>(o_.provider, tdir, o_.name);
  }

  std::string kind() const override {
    return o_.provider.kind == ProviderKind::command ? "cmd:" + o_.name : "llm:" + o_.name;
  }

  std::vector<Strategy> strategies(const Task&, Backend backend) const override {
    pack_->use_variant(backend_variant(backend));
    if (!o_.strategies.empty()) return o_.strategies;
    auto j = nlohmann::json::parse(pack_->raw("strategies.json"), nullptr, false);
    const char* key = backend == Backend::cuda ? "cuda" : "cpu";
    std::vector<Strategy> out;
    if (j.is_discarded() || !j.contains(key) || !j[key].is_array())
      throw std::runtime_error(
          fmt::format("{}: expected {{\"cuda\": [...], \"cpu\": [...]}} lists of {{name, description}}",
                      (pack_->dir() / "strategies.json").string()));
    for (auto& s : j[key]) out.push_back({s.value("name", ""), s.value("description", "")});
    return out;
  }

  std::optional<Proposal> propose(const AgentContext& ctx) override {
    pack_->use_variant(backend_variant(ctx.backend));
    auto t0 = Clock::now();
    double outside = 0;  // model and profiling time: not the tool's
    step_queue_s_ = 0;
    const Task& task = *ctx.task;
    ext_ = ctx.backend == Backend::cuda ? "cu" : "cpp";
    if (ctx.strategy.name != strategy_) {
      if (!strategy_.empty()) history_.clear();  // the history section is per strategy
      std::string prev = strategy_;
      strategy_ = ctx.strategy.name;
      if (state_ == State::exhausted && provider_failures_ < kMaxProviderFailures) {
        set_state(ctx.leader ? State::optimize : State::generate, "new strategy " + strategy_ + " after " + prev);
      } else if (state_ == State::optimize || state_ == State::generate) {
        event("note", "", "", fmt::format("strategy {} (was {})", strategy_, prev.empty() ? "none" : prev));
      }
    }
    // Build on what the hive says (the leader, or a backup after a hive-wide plateau; it may be another
    // agent's kernel); a repair in progress finishes first.
    const std::optional<MeasuredKernel>& start = ctx.start ? ctx.start : ctx.leader;
    // The hive makes the task's reference the first leader (agent "hive", strategy "reference"): a slow
    // baseline, not a kernel to patch. The agent's first step writes its own version (the reference is in
    // the prompt); if that fails, abandon() falls back to optimizing the reference.
    const bool own_first = start && start->agent == "hive" && start->strategy == "reference" &&
                           state_ == State::generate && generations_ == 0;
    if (own_first) {
      event("note", "generate", "generate",
            fmt::format("the leader is the task's reference ({}): generating a first version", start->id));
    } else if (start) {
      if (!base_ || base_->id != start->id) {
        base_ = *start;
        if (state_ == State::optimize) profile_text_.clear();
      }
      if (state_ == State::generate)
        set_state(State::optimize, "a correct leader exists; optimize it instead of generating");
    }
    std::optional<Proposal> p;
    for (int round = 0; round < kRoundsPerStep && !p && !ctx.stopping() && state_ != State::exhausted; ++round) {
      if (state_ == State::generate)
        p = do_generate(ctx, outside);
      else if (state_ == State::repair)
        p = do_repair(ctx, outside);
      else if (state_ == State::optimize)
        p = do_optimize(ctx, outside);
    }
    double tool = since(t0) - outside;
    event("step", state_name(state_), p ? "evaluate" : "none",
          p ? fmt::format("proposed {} ({})", p->label, one_line(p->note, 120)) : "no proposal", tool,
          {{"model_s", outside - step_queue_s_}, {"queue_s", step_queue_s_}, {"task", task.name}});
    if (p) pending_kind_ = state_;
    return p;
  }

  std::optional<BoardEntry> observe(const AgentContext& ctx, const Proposal& p, const Outcome& o) override {
    pack_->use_variant(backend_variant(ctx.backend));
    auto t0 = Clock::now();
    double outside = 0;
    BoardEntry b;
    b.agent = kind();
    b.strategy = ctx.strategy.name;
    b.candidate = o.candidate;
    b.delta = o.delta_vs_leader;
    std::string what = pending_kind_ == State::generate ? "first version"
                       : pending_kind_ == State::repair ? "repair"
                                                        : "optimization";
    std::string subject = fmt::format("{} '{}'", what, one_line(p.note, 100));
    const bool accepted = o.accepted();
    if (pending_kind_ == State::optimize) ++opt_steps_;
    if (o.standing == Standing::error) {
      // The harness failed, not the kernel: nothing to learn; the same state proposes again.
      event("note", state_name(state_), state_name(state_), "harness error: " + one_line(o.message, 300));
      history_.push_back({what, p.note, "harness error"});
      event("step", "observe", state_name(state_), "harness error", since(t0));
      return std::nullopt;
    }
    if (accepted) {
      MeasuredKernel k;
      k.id = o.candidate;
      k.source = p.source;
      k.ext = p.ext;
      k.agent = kind();
      k.strategy = ctx.strategy.name;
      k.score = o.score;
      k.time_s = o.time_s;
      k.workload_median_s = o.workload_median_s;
      // A backup that is slower than the leader is not a base to build on: keep the faster one.
      if (o.standing == Standing::leader || !base_ || (base_->time_s > 0 && o.time_s > 0 && o.time_s < base_->time_s)) {
        base_ = k;
        profile_text_.clear();
      }
      // How it stood against the leader comes from the hive's comparison (check 11's A/B, per workload): the
      // same words the console and the report use, whole in the history (the model acts on which workload held
      // it back), shortened only on the shared board.
      const std::string brief =
          o.comparison.empty() ? fmt::format("{:+.1f}% vs the leader", o.delta_vs_leader * 100) : o.comparison;
      const std::string cmp = o.comparison_detail.empty() ? brief : o.comparison_detail;
      if (o.standing == Standing::leader) {
        b.kind = "worked";
        b.text = fmt::format("{}: new leader, own run {}; {}", subject, ms(o.time_s), brief);
      } else {
        b.kind = "failed";
        b.text = fmt::format("{}: correct (own run {}) but not the new leader; {}", subject, ms(o.time_s), brief);
      }
      history_.push_back({what, p.note,
                          fmt::format("{} (own run {}); {}",
                                      o.standing == Standing::leader ? "new leader" : "correct, kept as a backup",
                                      ms(o.time_s), cmp)});
      set_state(State::optimize, fmt::format("{} accepted as {} ({})", what, standing_name(o.standing), ms(o.time_s)));
    } else {
      b.kind = "failed";
      b.text = fmt::format("{}: rejected at {} ({}): {}", subject, o.check_text(), o.reason, one_line(o.message, 160));
      history_.push_back({what, p.note, fmt::format("rejected at {} ({})", o.check_text(), o.reason)});
      bool was_repairing = pending_kind_ == State::repair;
      broken_ = p.source;
      broken_id_ = o.candidate;
      diag_ = o;
      memcheck_.clear();
      if (o.check == Check::run && ctx.backend == Backend::cuda) outside += run_memcheck(ctx, p);
      if (!was_repairing) repairs_used_ = 0;
      ++repairs_used_;  // this rejection opens (or continues) a repair
      if (repairs_used_ > o_.repair_attempts) {
        abandon(ctx, fmt::format("{} repair attempts spent; last rejection at {} ({})", o_.repair_attempts,
                                 o.check_text(), o.reason));
      } else {
        std::string phase = o.check == Check::build ? "repair (build)" : "repair (verify)";
        set_state(State::repair, fmt::format("{}: {} rejected at {} ({}); repair {} of {}", phase, what, o.check_text(),
                                             o.reason, repairs_used_, o_.repair_attempts));
      }
    }
    event("step", "observe", state_name(state_), standing_name(o.standing), since(t0) - outside,
          {{"check", o.check_text()}, {"reason", o.reason}});
    return b;
  }

  // The loop's position survives the process (a run paused for GPU evaluation and resumed): state,
  // the kernel under repair or the base, counters, history, profile text and usage.
  nlohmann::json save_state() const override {
    auto measured = [](const MeasuredKernel& k) {
      return nlohmann::json{{"id", k.id},       {"source", k.source},     {"ext", k.ext},
                            {"agent", k.agent}, {"strategy", k.strategy}, {"params", k.params},
                            {"score", k.score}, {"time_s", k.time_s},     {"workloads", k.workload_median_s}};
    };
    nlohmann::json hist = nlohmann::json::array();
    for (auto& h : history_) hist.push_back({h.kind, h.what, h.verdict});
    Usage u = full_usage();
    return {{"version", 1},
            {"state", state_name(state_)},
            {"pending_kind", state_name(pending_kind_)},
            {"strategy", strategy_},
            {"ext", ext_},
            {"klass", klass_},
            {"base", base_ ? measured(*base_) : nlohmann::json()},
            {"broken", broken_},
            {"broken_id", broken_id_},
            {"diag",
             {{"candidate", diag_.candidate},
              {"verdict", diag_.standing},
              {"check", diag_.check_text()},
              {"reason", diag_.reason},
              {"message", diag_.message},
              {"diagnosis", diag_.diagnosis}}},
            {"memcheck", memcheck_},
            {"repairs_used", repairs_used_},
            {"generations", generations_},
            {"opt_steps", opt_steps_},
            {"proposals", proposals_},
            {"profiles", profiles_},
            {"provider_failures", provider_failures_},
            {"opt_failures_in_row", opt_failures_in_row_},
            {"profile_text", profile_text_},
            {"profile_skip_noted", profile_skip_noted_},
            {"history", hist},
            {"usage", u.to_json()}};
  }

  void load_state(const nlohmann::json& j) override {
    if (!j.is_object() || j.value("version", 0) != 1)
      throw std::runtime_error("llm agent state: expected an object with \"version\": 1");
    auto state_of = [](const std::string& n) {
      for (State s : {State::generate, State::repair, State::optimize, State::exhausted})
        if (n == state_name(s)) return s;
      throw std::runtime_error("llm agent state: unknown loop state '" + n +
                               "' (expected generate, repair, optimize or exhausted)");
    };
    State st = state_of(j.at("state").get<std::string>());
    State pk = state_of(j.at("pending_kind").get<std::string>());
    std::optional<MeasuredKernel> base;
    if (const auto& b = j.at("base"); !b.is_null()) {
      MeasuredKernel k;
      k.id = b.at("id").get<std::string>();
      k.source = b.at("source").get<std::string>();
      k.ext = b.at("ext").get<std::string>();
      k.agent = b.at("agent").get<std::string>();
      k.strategy = b.at("strategy").get<std::string>();
      k.params = b.at("params").get<std::map<std::string, std::string>>();
      k.score = b.at("score").get<double>();
      k.time_s = b.at("time_s").get<double>();
      k.workload_median_s = b.at("workloads").get<std::map<std::string, double>>();
      base = k;
    }
    const auto& d = j.at("diag");
    Outcome diag;
    diag.candidate = d.at("candidate").get<std::string>();
    // A state saved before any verdict holds no standing ("").
    if (const auto v = d.at("verdict").get<std::string>(); !v.empty()) diag.standing = d.at("verdict").get<Standing>();
    if (const auto c = d.at("check").get<std::string>(); !c.empty()) diag.check = d.at("check").get<Check>();
    diag.reason = d.at("reason").get<std::string>();
    diag.message = d.at("message").get<std::string>();
    diag.diagnosis = d.at("diagnosis").get<std::string>();
    std::vector<Step> hist;
    for (auto& h : j.at("history"))
      hist.push_back({h.at(0).get<std::string>(), h.at(1).get<std::string>(), h.at(2).get<std::string>()});
    const auto& u = j.at("usage");
    Usage us;
    us.requests = u.at("requests").get<int64_t>();
    us.failed_requests = u.at("failed_requests").get<int64_t>();
    us.input_tokens = u.at("input_tokens").get<int64_t>();
    us.output_tokens = u.at("output_tokens").get<int64_t>();
    us.usd = u.at("usd").get<double>();
    us.model_seconds = u.at("model_seconds").get<double>();
    // Everything read: only now replace the fresh agent's state (a bad state leaves it untouched).
    state_ = st;
    pending_kind_ = pk;
    strategy_ = j.at("strategy").get<std::string>();
    ext_ = j.at("ext").get<std::string>();
    klass_ = j.at("klass").get<std::string>();
    base_ = base;
    broken_ = j.at("broken").get<std::string>();
    broken_id_ = j.at("broken_id").get<std::string>();
    diag_ = diag;
    memcheck_ = j.at("memcheck").get<std::string>();
    repairs_used_ = j.at("repairs_used").get<int>();
    generations_ = j.at("generations").get<int>();
    opt_steps_ = j.at("opt_steps").get<int>();
    proposals_ = j.at("proposals").get<int>();
    profiles_ = j.at("profiles").get<int>();
    provider_failures_ = j.at("provider_failures").get<int>();
    opt_failures_in_row_ = j.at("opt_failures_in_row").get<int>();
    profile_text_ = j.at("profile_text").get<std::string>();
    profile_skip_noted_ = j.at("profile_skip_noted").get<bool>();
    history_ = std::move(hist);
    {
      std::lock_guard lk(usage_mu_);
      usage_ = us;
    }
    if (o_.run_usage) o_.run_usage->add(us);  // the run's totals count the earlier sessions too
    if (provider_failures_ >= kMaxProviderFailures) {
      // The provider failed in the earlier session; it may be back (a restarted server, a fixed key): try again.
      provider_failures_ = 0;
      if (state_ == State::exhausted) state_ = base_ ? State::optimize : State::generate;
      event("note", "exhausted", state_name(state_), "the provider failed in the previous session; trying it again");
    }
    event("note", state_name(state_), state_name(state_),
          fmt::format("state restored: {} after {} proposal(s), {} optimization step(s)", state_name(state_),
                      proposals_, opt_steps_));
  }

  std::string provider_failure() const override {
    return provider_failures_ >= kMaxProviderFailures
               ? fmt::format("its model provider failed {} times in a row; last: {}", provider_failures_,
                             provider_error_)
               : "";
  }
  std::string declined_because() const override { return provider_failure(); }

  Usage full_usage() const {
    std::lock_guard lk(usage_mu_);
    return usage_;
  }
  AgentUsage usage() const override {
    std::lock_guard lk(usage_mu_);
    return {usage_.input_tokens + usage_.output_tokens, usage_.usd};
  }

 private:
  // Provider failures in a row before the agent gives up: a retry loop inside the client already rode out short
  // outages, so three failed requests in a row mean the provider is down or the config is wrong.
  static constexpr int kMaxProviderFailures = 3;
  // State changes one step may go through (a repair abandoned -> optimize -> no base, generate): each takes a
  // round, and 4 covers the longest chain while a step can never loop.
  static constexpr int kRoundsPerStep = 4;
  // Optimization requests in a row without an applicable edit before the agent stops: by the third the model has
  // seen its failed edits twice, and more requests only spend tokens.
  static constexpr int kMaxOptimizeFailures = 3;
  // A diagnosis (compiler errors, memcheck) is cut to this many characters: CuTeGen trims logs to ~5-10k, the
  // first errors are the ones that matter, and a whole log would crowd the source out of the prompt.
  static constexpr std::size_t kDiagnosisChars = 8000;
  // The board and history sections show the most recent entries only (older conclusions are stale), each on one
  // clipped line, so that the sections stay a small part of the prompt however long the run.
  static constexpr std::size_t kBoardEntries = 30;
  static constexpr std::size_t kBoardEntryChars = 240;
  static constexpr std::size_t kHistoryEntries = 12;
  static constexpr std::size_t kHistoryWhatChars = 160;
  // A verdict in the history is kept whole up to this: an A/B comparison over many workloads is what the model
  // needs to see which shape held its kernel back.
  static constexpr std::size_t kVerdictChars = 3000;

  static std::string sanitize(std::string s) {
    for (auto& c : s)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    return s.empty() ? "agent" : s;
  }

  void event(const std::string& type, const std::string& from, const std::string& to, const std::string& reason,
             double tool_s = 0, nlohmann::json data = nlohmann::json::object()) {
    if (!o_.on_event) return;
    LlmEvent e{o_.name, type, from, to, reason, tool_s, std::move(data)};
    o_.on_event(e);
  }

  void set_state(State s, const std::string& reason) {
    event("transition", state_name(state_), state_name(s), reason);
    state_ = s;
  }

  // R repairs spent: drop the broken kernel and go back to the last correct one, or start over.
  void abandon(const AgentContext& ctx, const std::string& why) {
    broken_.clear();
    repairs_used_ = 0;
    if (base_ || ctx.leader) {
      set_state(State::optimize, why + "; back to the last correct kernel");
    } else if (generations_ < o_.generate_attempts) {
      set_state(State::generate, why + "; generating a fresh version");
    } else {
      set_state(State::exhausted, why + fmt::format("; {} generations failed: strategy exhausted", generations_));
    }
  }

  // One model call with bookkeeping. nullopt: the provider failed (event given).
  std::optional<ChatReply> ask(const std::vector<ChatMessage>& msgs, const std::string& purpose,
                               const AgentContext& ctx, double& outside) {
    ChatRequest req{system_prompt(), msgs, purpose};
    report_phase("asking the model (" + purpose + ")");
    ChatReply r = client_->chat(req, ctx.stop);
    report_phase("proposing");
    outside += r.seconds;
    step_queue_s_ += r.queue_s;
    Usage u;
    u.requests = 1;
    u.failed_requests = r.ok ? 0 : 1;
    u.input_tokens = r.input_tokens;
    u.output_tokens = r.output_tokens;
    u.usd = r.usd;
    u.model_seconds = r.seconds - r.queue_s;  // the queue at the concurrency gate is not the model's time
    {
      std::lock_guard lk(usage_mu_);
      usage_ += u;
    }
    if (o_.run_usage) o_.run_usage->add(u);
    event("request", state_name(state_), "", r.ok ? purpose : "failed: " + r.error, 0,
          {{"purpose", purpose},
           {"ok", r.ok},
           {"seconds", r.seconds},
           {"queue_s", r.queue_s},
           {"attempts", r.attempts},
           {"input_tokens", r.input_tokens},
           {"output_tokens", r.output_tokens},
           {"usd", r.usd},
           {"truncated", r.truncated},
           {"transcript", r.transcript}});
    if (r.invalid_utf8 > 0)
      event(
          "note", state_name(state_), state_name(state_),
          fmt::format("the reply held {} byte(s) that are not UTF-8; they were replaced with U+FFFD", r.invalid_utf8));
    provider_failed_ = !r.ok;
    if (!r.ok) {
      provider_error_ = r.error;
      if (!ctx.stopping() && ++provider_failures_ >= kMaxProviderFailures)
        set_state(State::exhausted,
                  fmt::format("the provider failed {} times in a row; last: {}", provider_failures_, r.error));
      return std::nullopt;
    }
    provider_failures_ = 0;
    return r;
  }

  std::string system_prompt() const { return pack_->render("system.md", {}); }

  PromptVars common_vars(const AgentContext& ctx) const {
    const Task& t = *ctx.task;
    PromptVars v;
    v["task_name"] = t.name;
    v["task_description"] = t.description.empty() ? "(no description)" : t.description;
    v["op_type"] = t.op_type.empty() ? "unspecified" : t.op_type;
    v["backend"] = ctx.backend == Backend::cuda ? "CUDA" : "CPU";
    v["ext"] = ext_;
    v["fence"] = ctx.backend == Backend::cuda ? "cuda" : "cpp";
    v["signature"] = launch_signature(t, ctx.backend);
    v["tensors"] = tensors_text(t);
    v["workloads"] = workloads_text(t);
    v["library_policy"] = policy_text(t, ctx.backend);
    v["tolerances"] = tolerances_text(t);
    std::string ref;
    if (auto p = t.reference_for(ctx.backend))
      ref = read_file(*p);
    else if (auto q = t.reference_for(ctx.backend == Backend::cuda ? Backend::cpu : Backend::cuda))
      ref = read_file(*q);
    else
      ref = t.pytorch_reference;  // the task's only reference (Python: run(*inputs) returns the outputs)
    v["reference"] = ref;
    PromptVars nv;
    if (ctx.backend == Backend::cuda) nv["example"] = pack_->raw("examples/cute_vector_add.cu");
    v["backend_notes"] = pack_->render(ctx.backend == Backend::cuda ? "cuda_notes.md" : "cpu_notes.md", nv);
    v["strategy_name"] = ctx.strategy.name.empty() ? "(none)" : ctx.strategy.name;
    std::string guide_file = "strategies/" + ctx.strategy.name + ".md";
    v["strategy_guide"] = (!ctx.strategy.name.empty() && pack_->has(guide_file)) ? pack_->raw(guide_file)
                          : ctx.strategy.description.empty()                     ? "Use your judgement."
                                                                                 : ctx.strategy.description;
    v["board_section"] = board_section(ctx);
    v["history_section"] = history_section();
    return v;
  }

  std::string board_section(const AgentContext& ctx) const {
    if (ctx.board.empty()) return "";
    std::string s;
    std::size_t from =
        ctx.board.size() > kBoardEntries ? ctx.board.size() - kBoardEntries : 0;  // the most recent conclusions
    for (std::size_t i = from; i < ctx.board.size(); ++i) {
      const auto& e = ctx.board[i];
      s += fmt::format("- [{} / {}] {}: {}\n", e.agent, e.strategy, e.kind, one_line(e.text, kBoardEntryChars));
    }
    return pack_->render("section_board.md", {{"entries", s}});
  }

  std::string history_section() const {
    if (history_.empty()) return "";
    std::string s;
    std::size_t from = history_.size() > kHistoryEntries ? history_.size() - kHistoryEntries : 0;
    for (std::size_t i = from; i < history_.size(); ++i)
      s += fmt::format("- {}: {} -> {}\n", history_[i].kind, one_line(history_[i].what, kHistoryWhatChars),
                       one_line(history_[i].verdict, kVerdictChars));
    return pack_->render("section_history.md", {{"entries", s}});
  }

  std::string leader_section(const AgentContext& ctx) const {
    if (!ctx.leader) return "";
    return pack_->render("section_leader.md", {{"leader_agent", ctx.leader->agent},
                                               {"leader_strategy", ctx.leader->strategy},
                                               {"leader_measurements", measured_text(*ctx.leader)},
                                               {"fence", ctx.backend == Backend::cuda ? "cuda" : "cpp"},
                                               {"leader_source", ctx.leader->source}});
  }

  Proposal make_proposal(const std::string& source, const std::string& parent, const std::string& note,
                         const char* kind) {
    Proposal p;
    p.source = source;
    p.ext = ext_;
    p.parent = parent;
    p.note = note;
    p.label = fmt::format("{}-{}{}", sanitize(o_.name), kind, ++proposals_);
    return p;
  }

  // Asks, parses; on an unusable reply, says why and asks again (edit_retries times). The parse callback
  // returns "" when the reply was usable.
  template <class Parse>
  bool converse(const std::string& prompt, const std::string& purpose, const AgentContext& ctx, double& outside,
                Parse parse) {
    std::vector<ChatMessage> msgs{{"user", prompt}};
    for (int attempt = 0; attempt <= o_.edit_retries; ++attempt) {
      auto r = ask(msgs, attempt ? purpose + "-retry" : purpose, ctx, outside);
      if (!r) return false;
      std::string why = parse(r->text, r->truncated);
      if (why.empty()) return true;
      event("edit", state_name(state_), state_name(state_), why, 0, {{"attempt", attempt + 1}, {"purpose", purpose}});
      msgs.push_back({"assistant", r->text});
      msgs.push_back({"user", why_message(why, r->truncated)});
      if (ctx.stopping()) return false;
    }
    return false;
  }
  std::string why_message(const std::string& why, bool truncated) const {
    if (why.rfind("edit:", 0) == 0) return pack_->render("edit_failed.md", {{"reason", why.substr(5)}});
    if (why.rfind("rewrite:", 0) == 0) return pack_->render("rewrite_refused.md", {{"percent", why.substr(8)}});
    return pack_->render(
        "reply_unusable.md",
        {{"reason", why}, {"shorter", truncated ? " and shorter (your reply hit the token limit)" : ""}});
  }

  std::optional<Proposal> do_generate(const AgentContext& ctx, double& outside) {
    ++generations_;
    PromptVars v = common_vars(ctx);
    v["leader_section"] = leader_section(ctx);
    std::string prompt = pack_->render("generate.md", v);
    std::string code, note;
    bool ok = converse(prompt, "generate", ctx, outside, [&](const std::string& reply, bool truncated) -> std::string {
      std::string why;
      auto c = extract_code_block(reply, &why, ctx.backend == Backend::cuda ? "cuda" : "cpp");
      if (!c) return truncated ? why + " (stopped at max_tokens)" : why;
      if (c->find("khive_launch") == std::string::npos)
        return "the code block does not define khive_launch; send the whole file with the entry point";
      code = *c;
      note = reply_field(reply, "NOTE");
      return "";
    });
    if (!ok) {
      if (provider_failed_) {
        --generations_;
        return std::nullopt;
      }  // the model was not asked: no attempt spent
      if (state_ != State::exhausted && generations_ >= o_.generate_attempts)
        set_state(State::exhausted, fmt::format("{} generation attempts gave no usable file", generations_));
      return std::nullopt;
    }
    return make_proposal(code, "", note.empty() ? "first version" : note, "gen");
  }

  std::optional<Proposal> do_repair(const AgentContext& ctx, double& outside) {
    PromptVars v = common_vars(ctx);
    v["check"] = diag_.check_text();
    v["reason"] = diag_.reason;
    v["message"] = diag_.message;
    std::string d = diag_.diagnosis;
    if (!memcheck_.empty()) d += (d.empty() ? "" : "\n\n") + memcheck_;
    if (d.size() > kDiagnosisChars) d = d.substr(0, kDiagnosisChars) + "\n(trimmed)";
    v["diagnosis"] = d.empty() ? "(no further detail)" : d;
    v["diagnosis_title"] = diag_.check == Check::build ? "Compiler errors (first errors, with the offending lines):"
                           : diag_.check != Check::run ? "What the guard measured:"
                           : ctx.backend == Backend::cuda
                               ? "What the judge saw (crash, CUDA error, sandbox; memcheck when available):"
                               : "What the judge saw (crash, signal, sandbox, sanitizer message):";
    v["numbered_source"] = numbered(broken_);
    v["attempt"] = std::to_string(repairs_used_);
    v["max_attempts"] = std::to_string(o_.repair_attempts);
    std::string prompt = pack_->render("repair.md", v);
    std::string patched, note;
    bool ok = converse(prompt, "repair", ctx, outside, [&](const std::string& reply, bool truncated) -> std::string {
      auto pe = parse_edits(reply);
      if (!pe.error.empty()) return (truncated ? "(cut off at max_tokens) " : "") + pe.error;
      auto pr = apply_edits(broken_, pe.edits);
      if (!pr.ok) return "edit:" + pr.error;
      if (pr.changed_fraction > o_.max_rewrite_fraction)
        return fmt::format("rewrite:{:.0f}", pr.changed_fraction * 100);
      if (pr.source == broken_) return "edit:the edits leave the source unchanged";
      patched = pr.source;
      note = reply_field(reply, "NOTE");
      return "";
    });
    if (!ok) {
      if (state_ == State::exhausted || provider_failed_) return std::nullopt;
      // No usable patch after the re-asks: this spends a repair attempt (bounded), not a candidate.
      if (++repairs_used_ > o_.repair_attempts) abandon(ctx, "no applicable patch within the repair budget");
      return std::nullopt;
    }
    return make_proposal(patched, broken_id_, note.empty() ? "repair of " + diag_.reason : note, "fix");
  }

  std::optional<Proposal> do_optimize(const AgentContext& ctx, double& outside) {
    if (!base_) {
      set_state(generations_ < o_.generate_attempts ? State::generate : State::exhausted,
                "no correct kernel to optimize");
      return std::nullopt;
    }
    if (opt_failures_in_row_ >= kMaxOptimizeFailures) {
      opt_failures_in_row_ = 0;
      set_state(State::exhausted, "three optimization requests in a row gave no applicable edit");
      return std::nullopt;
    }
    PromptVars v = common_vars(ctx);
    if (klass_.empty()) klass_ = classify(*ctx.task);
    v["kernel_class"] = klass_;
    v["menu"] = pack_->raw("menus/" + klass_ + ".md");
    v["numbered_source"] = numbered(base_->source);
    v["measurements"] = measured_text(*base_);
    v["step"] = std::to_string(opt_steps_ + 1);
    v["profile_section"] = profile_gate(ctx, outside);
    std::string prompt = pack_->render("optimize.md", v);
    std::string patched, note, cls, opt;
    bool ok = converse(prompt, "optimize", ctx, outside, [&](const std::string& reply, bool truncated) -> std::string {
      auto pe = parse_edits(reply);
      if (!pe.error.empty()) return (truncated ? "(cut off at max_tokens) " : "") + pe.error;
      auto pr = apply_edits(base_->source, pe.edits);
      if (!pr.ok) return "edit:" + pr.error;
      if (pr.source == base_->source) return "edit:the edits leave the source unchanged";
      patched = pr.source;
      note = reply_field(reply, "NOTE");
      cls = lower(reply_field(reply, "CLASS"));
      opt = reply_field(reply, "OPTIMIZATION");
      return "";
    });
    if (!ok) {
      if (!provider_failed_) ++opt_failures_in_row_;
      return std::nullopt;
    }
    opt_failures_in_row_ = 0;
    if (!cls.empty() && known_class(cls) && cls != klass_) {
      event("note", "optimize", "optimize",
            fmt::format("the model classifies the kernel as {} (was {}); next menu follows", cls, klass_));
      klass_ = cls;
    }
    std::string n = opt.empty() ? note : (note.empty() ? opt : opt + ": " + note);
    Proposal p = make_proposal(patched, base_->id, n.empty() ? "optimization step" : n, "opt");
    if (!opt.empty()) p.params["optimization"] = opt;
    p.params["class"] = klass_;
    return p;
  }

  // Delayed profiling: metrics only once the kernel is correct and K optimization steps were taken.
  std::string profile_gate(const AgentContext& ctx, double& outside) {
    if (opt_steps_ < o_.profile_depth) return "";
    if (!profile_text_.empty()) return profile_text_;
    if (profile_skip_noted_) return "";
    ProfileJob job;
    job.tool = "ncu";
    job.task = ctx.task;
    job.backend = ctx.backend;
    job.source = base_->source;
    job.ext = base_->ext.empty() ? ext_ : base_->ext;
    if (!o_.run_dir.empty()) job.out_dir = o_.run_dir / sanitize(o_.name) / fmt::format("profile-{}", ++profiles_);
    auto t0 = Clock::now();
    ProfileReport r = o_.profiler ? o_.profiler(job) : profile_kernel(job);
    outside += since(t0);
    if (!r.ran || !r.error.empty()) {
      std::string why = !r.skipped.empty() ? r.skipped : r.error;
      set_state(State::optimize, "profile gate skipped: " + why);  // optimize -> optimize, with the note
      profile_skip_noted_ = !r.skipped.empty();  // a missing tool stays missing; an error may pass next time
      return "";
    }
    event("profile", "optimize", "optimize", fmt::format("profile gate open after {} optimization steps", opt_steps_),
          0, {{"seconds", r.seconds}, {"metrics", r.metrics}});
    profile_text_ = pack_->render(
        "section_profile.md",
        {{"workload", job.workload.empty() ? "the largest timed one" : job.workload}, {"profile", r.text}});
    return profile_text_;
  }

  double run_memcheck(const AgentContext& ctx, const Proposal& p) {
    if (find_program("compute-sanitizer").empty()) {
      event("note", "repair", "repair", "memcheck skipped: compute-sanitizer not in PATH");
      return 0;
    }
    ProfileJob job;
    job.tool = "memcheck";
    job.task = ctx.task;
    job.backend = ctx.backend;
    job.source = p.source;
    job.ext = p.ext;
    if (!o_.run_dir.empty()) job.out_dir = o_.run_dir / sanitize(o_.name) / fmt::format("memcheck-{}", ++profiles_);
    auto t0 = Clock::now();
    ProfileReport r = o_.profiler ? o_.profiler(job) : profile_kernel(job);
    if (r.ran && !r.text.empty()) memcheck_ = "compute-sanitizer memcheck:\n" + r.text;
    event("note", "repair", "repair",
          r.ran ? "memcheck ran" : "memcheck skipped: " + (r.skipped.empty() ? r.error : r.skipped));
    return since(t0);
  }

  LlmAgentOptions o_;
  std::unique_ptr<PromptPack> pack_;
  std::unique_ptr<LlmClient> client_;
  mutable std::mutex usage_mu_;
  Usage usage_;

  State state_ = State::generate;
  State pending_kind_ = State::generate;
  std::string strategy_, ext_ = "cu", klass_;
  std::optional<MeasuredKernel> base_;  // the correct kernel optimizations start from
  std::string broken_, broken_id_;      // the rejected kernel under repair
  Outcome diag_;
  std::string memcheck_;
  int repairs_used_ = 0, generations_ = 0, opt_steps_ = 0, proposals_ = 0, profiles_ = 0;
  int provider_failures_ = 0, opt_failures_in_row_ = 0;
  bool provider_failed_ = false;  // the last model call failed (the provider, not the reply)
  std::string provider_error_;    // what the last failed call said
  double step_queue_s_ = 0;       // this propose()'s wait at the provider's concurrency gate
  std::string profile_text_;
  bool profile_skip_noted_ = false;
  std::vector<Step> history_;
};

}  // namespace
}  // namespace llm

std::unique_ptr<Agent> make_llm_agent(const LlmAgentOptions& o) { return std::make_unique<llm::LlmAgent>(o); }

std::unique_ptr<Agent> make_command_agent(const std::string& command, LlmAgentOptions base) {
  if (command.empty()) throw std::runtime_error("cmd: expected a command after 'cmd:'");
  ProviderConfig p;
  p.kind = ProviderKind::command;
  p.command = command;
  p.concurrency = base.provider.kind == ProviderKind::command ? base.provider.concurrency : 1;
  p.request_timeout_s = base.provider.kind == ProviderKind::command ? base.provider.request_timeout_s : 3600;
  base.provider = p;
  if (base.name.empty()) {
    // "cmd" plus the program's base name: readable in events and on the board.
    std::string prog = command.substr(0, command.find(' '));
    base.name = "cmd-" + std::filesystem::path(prog).filename().string();
  }
  return std::make_unique<llm::LlmAgent>(std::move(base));
}

std::optional<Usage> llm_usage(const Agent& a) {
  if (auto l = dynamic_cast<const llm::LlmAgent*>(&a)) return l->full_usage();
  return std::nullopt;
}

}  // namespace khive
