// The LLM agent's loop end to end on the CPU backend, through the real guard (build, runner, checks,
// timing, A/B) on tasks/demo-cpu/vector_add: broken kernel -> repair (after an edit that does not apply)
// -> correct -> optimize -> board post. A small harness stands in for the hive: it evaluates each
// proposal with evaluate_kernel() and turns the report into the Outcome the agent sees.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "fake_server.hpp"
#include "khive/eval/evaluate.hpp"
#include "khive/llm/llm_agent.hpp"
#include "khive/support/files.hpp"

namespace khive {
namespace {

using Clock = std::chrono::steady_clock;

struct MiniHive {
  Task task;
  std::filesystem::path dir;
  EvalOptions eo;
  std::optional<MeasuredKernel> leader;
  std::filesystem::path leader_path;
  std::vector<BoardEntry> board;
  int n = 0;
  double eval_seconds = 0;

  explicit MiniHive(const std::string& name) {
    task = load_task(std::filesystem::path(KHIVE_SOURCE_DIR) / "tasks/demo-cpu/vector_add");
    dir = std::filesystem::temp_directory_path() / fmt::format("khive-llm-int-{}-{}", name, getpid());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    eo.backend = Backend::cpu;
    eo.seeds = 2;
    eo.seed = 7;                  // one seed base per run: goldens computed once
    eo.time_reference = false;
    eo.time_baselines = false;
    eo.timing.time_cap_s = 0.3;
    eo.timing.max_samples = 30;
  }

  Outcome evaluate(const Proposal& p) {
    auto f = dir / fmt::format("{:03d}-{}.{}", ++n, p.label, p.ext);
    write_file_atomic(f, p.source);
    EvalOptions o = eo;
    if (leader) o.leader = leader_path;
    auto t0 = Clock::now();
    EvalReport r = evaluate_kernel(task, f, o);
    eval_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    Outcome out;
    out.candidate = fmt::format("c{}", n);
    if (!r.harness_error.empty()) {
      out.standing = Standing::error;
      out.message = r.harness_error;
      return out;
    }
    const Verdict& v = r.candidate.verdict;
    if (!v.accepted) {
      out.standing = Standing::rejected;
      out.check = v.rejection->check;
      out.reason = reason_name(v.rejection->reason);
      out.message = v.rejection->message;
      out.diagnosis = v.rejection->diagnosis;
      return out;
    }
    double lw = 0, wsum = 0;   // weighted geometric mean of the perf medians
    for (auto& w : r.workloads)
      if (w.kernel && w.kernel->median > 0) {
        lw += w.weight * std::log(w.kernel->median);
        wsum += w.weight;
        out.workload_median_s[w.workload] = w.kernel->median;
      }
    out.time_s = wsum > 0 ? std::exp(lw / wsum) : 0;
    out.delta_vs_leader = leader && out.time_s > 0 ? leader->time_s / out.time_s - 1 : 0;
    bool is_leader = !leader || r.new_leader.value_or(false);
    out.standing = is_leader ? Standing::leader : Standing::backup;
    if (is_leader) {
      leader = MeasuredKernel{out.candidate, p.source, p.ext, "", "", {}, 0, out.time_s, out.workload_median_s};
      leader_path = f;
    }
    return out;
  }

  AgentContext ctx(const std::atomic<bool>* stop) const {
    AgentContext c;
    c.task = &task;
    c.backend = Backend::cpu;
    c.strategy = {"llm.cpu.simd", "SIMD"};
    c.leader = leader;
    c.board = board;
    c.stop = stop;
    return c;
  }

  // propose -> evaluate -> observe, as the hive does; returns the verdict ("" when nothing was proposed).
  std::string step(Agent& a, const std::atomic<bool>* stop) {
    auto c = ctx(stop);
    auto p = a.propose(c);
    if (!p) return "";
    Outcome o = evaluate(*p);
    if (auto b = a.observe(c, *p, o)) board.push_back(*b);
    return standing_name(o.standing) + (o.check ? ":" + o.check_text() : "");
  }
};

const std::string kBroken =
    "// vector_add, first version\n"
    "extern \"C\" void khive_launch(const float* a, const float* b, float* c, int64_t N) {\n"
    "  for (int64_t i = 0; i < N; ++i)\n"
    "    c[i] = a[i] + b[i]\n"
    "}\n";
const std::string kGenerate = "NOTE: plain loop\n```cpp\n" + kBroken + "```\n";
const std::string kEditMiss = "NOTE: fix\n<<<<<<< SEARCH\n    c[i] = a[i] + b[j]\n=======\n    c[i] = a[i] + b[i];\n>>>>>>> REPLACE\n";
const std::string kEditFix = "NOTE: add the missing semicolon\n<<<<<<< SEARCH\n    c[i] = a[i] + b[i]\n=======\n    c[i] = a[i] + b[i];\n>>>>>>> REPLACE\n";
const std::string kOptimize =
    "CLASS: elementwise\nOPTIMIZATION: OpenMP threads + SIMD\nNOTE: split the loop over the cores, vectorized\n"
    "<<<<<<< SEARCH\n  for (int64_t i = 0; i < N; ++i)\n=======\n#pragma omp parallel for simd schedule(static) if (N > 65536)\n"
    "  for (int64_t i = 0; i < N; ++i)\n>>>>>>> REPLACE\n";

void expect_loop_result(MiniHive& h, const std::vector<std::string>& verdicts, const std::vector<LlmEvent>& events) {
  ASSERT_EQ(verdicts.size(), 3u);
  EXPECT_EQ(verdicts[0], "rejected:build");
  EXPECT_EQ(verdicts[1], "leader");
  EXPECT_TRUE(verdicts[2] == "leader" || verdicts[2] == "backup") << verdicts[2];
  ASSERT_EQ(h.board.size(), 3u);
  EXPECT_EQ(h.board[0].kind, "failed");
  EXPECT_NE(h.board[0].text.find("rejected at build"), std::string::npos) << h.board[0].text;
  EXPECT_EQ(h.board[1].kind, "worked");
  EXPECT_NE(h.board[1].text.find("new leader"), std::string::npos) << h.board[1].text;
  EXPECT_NE(h.board[2].text.find("OpenMP threads + SIMD"), std::string::npos) << h.board[2].text;
  auto saw = [&](const std::string& type, const std::string& to, const std::string& part) {
    for (auto& e : events)
      if (e.type == type && (to.empty() || e.to == to) && e.reason.find(part) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(saw("transition", "repair", "repair (build)"));
  EXPECT_TRUE(saw("edit", "", "does not apply"));
  EXPECT_TRUE(saw("transition", "optimize", "accepted as leader"));
  // Time in the tool per step, outside the model, the compiler and the runner: under 1 s.
  double worst = 0;
  int steps = 0;
  for (auto& e : events)
    if (e.type == "step") { worst = std::max(worst, e.tool_s); ++steps; }
  EXPECT_EQ(steps, 6);
  EXPECT_LT(worst, 1.0);
  fmt::print("llm loop: {} steps, worst tool time per step {:.2f} ms, guard time {:.1f} s\n", steps, worst * 1e3, h.eval_seconds);
}

TEST(LlmLoop, HttpProviderBrokenRepairCorrectOptimizeOnTheRealGuard) {
  khive::test::FakeModelServer server;
  server.push_text(kGenerate);
  server.push_text(kEditMiss);
  server.push_text(kEditFix);
  server.push_text(kOptimize);
  MiniHive h("http");
  std::vector<LlmEvent> events;
  LlmAgentOptions o;
  o.name = "scripted";
  o.provider.kind = ProviderKind::anthropic;
  o.provider.base_url = server.base_url();
  o.provider.model = "scripted";
  o.run_dir = h.dir / "llm";
  o.on_event = [&](const LlmEvent& e) { events.push_back(e); };
  auto a = make_llm_agent(o);
  std::atomic<bool> stop{false};
  std::vector<std::string> verdicts;
  for (int i = 0; i < 3; ++i) verdicts.push_back(h.step(*a, &stop));
  expect_loop_result(h, verdicts, events);
  // The compiler's first error and its line reached the model in the repair prompt.
  auto reqs = server.requests();
  ASSERT_GE(reqs.size(), 2u);
  EXPECT_NE(reqs[1].body.find("error"), std::string::npos);
  EXPECT_NE(reqs[1].body.find("c[i] = a[i] + b[i]"), std::string::npos);
  // Every request and reply is in the run directory.
  int saved = 0;
  for (auto& f : std::filesystem::recursive_directory_iterator(h.dir / "llm")) saved += f.is_regular_file();
  EXPECT_GE(saved, 4 * 3);
}

TEST(LlmLoop, CommandProviderEndToEnd) {
  MiniHive h("cmd");
  auto canned = h.dir / "canned";
  std::filesystem::create_directories(canned);
  int i = 0;
  for (auto& r : {kGenerate, kEditMiss, kEditFix, kOptimize}) write_file_atomic(canned / fmt::format("{:02d}.txt", ++i), r);
  setenv("CANNED_DIR", canned.c_str(), 1);
  std::vector<LlmEvent> events;
  LlmAgentOptions base;
  base.run_dir = h.dir / "llm";
  base.on_event = [&](const LlmEvent& e) { events.push_back(e); };
  std::string script = std::string(KHIVE_SOURCE_DIR) + "/tests/integration/llm/canned-model.sh";
  auto a = make_command_agent(script + " {prompt_file}", base);
  std::atomic<bool> stop{false};
  std::vector<std::string> verdicts;
  for (int k = 0; k < 3; ++k) verdicts.push_back(h.step(*a, &stop));
  expect_loop_result(h, verdicts, events);
  // The script saw the prompts: the first asks for the whole file with the exact signature.
  std::string p1 = read_file(canned / "prompt-1.md");
  EXPECT_NE(p1.find("extern \"C\" void khive_launch(const float* a, const float* b, float* c, int64_t N)"), std::string::npos);
  EXPECT_NE(read_file(canned / "prompt-2.md").find("Repair"), std::string::npos);
  EXPECT_NE(read_file(canned / "prompt-4.md").find("Optimize"), std::string::npos);
  EXPECT_EQ(read_file(canned / ".next"), "5\n");
}

}  // namespace
}  // namespace khive
