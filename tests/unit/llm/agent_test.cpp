// The agent's state machine with a scripted model (local server) and scripted guard verdicts: no compiler,
// no runner. Each failure mode must end in the right state, with its events.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "fake_server.hpp"
#include "khive/llm/llm_agent.hpp"

namespace khive {
namespace {

using khive::test::FakeModelServer;
using khive::test::Scripted;

const std::string kBroken =
    "extern \"C\" void khive_launch(const float* a, const float* b, float* c, int64_t N) {\n"
    "  for (int64_t i = 0; i < N; ++i)\n"
    "    c[i] = a[i] + b[i]\n"
    "}\n";

std::string gen_reply(const std::string& code) { return "NOTE: plain loop\n```cpp\n" + code + "```\n"; }
const std::string kFix =
    "NOTE: add the semicolon\n<<<<<<< SEARCH\n    c[i] = a[i] + b[i]\n=======\n    c[i] = a[i] + b[i];\n>>>>>>> "
    "REPLACE\n";
const std::string kBadEdit =
    "<<<<<<< SEARCH\n    c[i] = a[i] - b[i]\n=======\n    c[i] = a[i] + b[i];\n>>>>>>> REPLACE\n";
const std::string kOpt =
    "CLASS: elementwise\nOPTIMIZATION: SIMD pragma\nNOTE: let the compiler vectorize\n"
    "<<<<<<< SEARCH\n  for (int64_t i = 0; i < N; ++i)\n=======\n#pragma omp simd\n  for (int64_t i = 0; i < N; "
    "++i)\n>>>>>>> REPLACE\n";

struct Harness {
  FakeModelServer server;
  Task task = load_task(std::filesystem::path(KHIVE_SOURCE_DIR) / "tasks/demo-cpu/vector_add");
  std::vector<LlmEvent> events;
  std::atomic<bool> stop{false};
  LlmAgentOptions opts;
  Harness() {
    opts.provider.kind = ProviderKind::openai;
    opts.provider.base_url = server.base_url() + "/v1";
    opts.provider.model = "fake";
    opts.provider.backoff_initial_s = 0.01;
    opts.provider.backoff_max_s = 0.02;
    opts.provider.max_retries = 0;
    opts.name = "t";
    opts.on_event = [this](const LlmEvent& e) { events.push_back(e); };
  }
  AgentContext ctx() {
    AgentContext c;
    c.task = &task;
    c.backend = Backend::cpu;
    c.strategy = {"llm.cpu.simd", "simd"};
    c.stop = &stop;
    return c;
  }
  bool saw(const std::string& type, const std::string& to, const std::string& reason_part) const {
    for (auto& e : events)
      if (e.type == type && (to.empty() || e.to == to) && e.reason.find(reason_part) != std::string::npos) return true;
    return false;
  }
  std::string last_prompt() const {
    auto r = server.requests();
    auto j = nlohmann::json::parse(r.back().body);
    return j["messages"].back()["content"].get<std::string>();
  }
};

Outcome rejected(const std::string& check, const std::string& reason, const std::string& diag) {
  Outcome o;
  o.candidate = "c-" + reason;
  o.standing = Standing::rejected;
  o.check = parse_check(check).value();
  o.reason = reason;
  o.message = "the guard says " + reason;
  o.diagnosis = diag;
  return o;
}
Outcome accepted(const std::string& verdict, double t, double delta, const std::string& id) {
  Outcome o;
  o.candidate = id;
  o.standing = parse_standing(verdict).value();
  o.time_s = t;
  o.delta_vs_leader = delta;
  return o;
}

TEST(LlmAgent, GenerateRepairAfterAFailedEditThenOptimize) {
  Harness h;
  auto a = make_llm_agent(h.opts);
  EXPECT_EQ(a->kind(), "llm:t");
  auto ctx = h.ctx();
  h.server.push_text(gen_reply(kBroken));
  auto p1 = a->propose(ctx);
  ASSERT_TRUE(p1);
  EXPECT_EQ(p1->source, kBroken);
  EXPECT_EQ(p1->ext, "cpp");
  EXPECT_NE(h.last_prompt().find("extern \"C\" void khive_launch(const float* a, const float* b, float* c, int64_t N)"),
            std::string::npos);  // the exact signature is in the prompt
  auto b1 = a->observe(
      ctx, *p1,
      rejected("build", "compile_error", "kernel.cpp:3:23: error: expected ';'\n    3 |     c[i] = a[i] + b[i]\n"));
  ASSERT_TRUE(b1);
  EXPECT_EQ(b1->kind, "failed");
  EXPECT_TRUE(h.saw("transition", "repair", "repair (build)"));

  h.server.push_text(kBadEdit);  // does not apply: goes back to the model, no candidate
  h.server.push_text(kFix);
  auto p2 = a->propose(ctx);
  ASSERT_TRUE(p2);
  EXPECT_NE(p2->source.find("b[i];"), std::string::npos);
  EXPECT_EQ(p2->parent, "c-compile_error");
  EXPECT_TRUE(h.saw("edit", "", "does not apply"));
  EXPECT_NE(h.last_prompt().find("could not be applied"), std::string::npos);
  auto reqs = h.server.requests();
  EXPECT_NE(reqs[1].body.find("expected ';'"), std::string::npos);  // the compiler line reached the model

  auto b2 = a->observe(ctx, *p2, accepted("leader", 2e-3, 0, "c2"));
  ASSERT_TRUE(b2);
  EXPECT_EQ(b2->kind, "worked");
  EXPECT_TRUE(h.saw("transition", "optimize", "accepted as leader"));

  ctx.leader = MeasuredKernel{"c2", p2->source, "cpp", "llm:t", "llm.cpu.simd", {}, 0.5, 2e-3, {}};
  h.server.push_text(kOpt);
  auto p3 = a->propose(ctx);
  ASSERT_TRUE(p3);
  EXPECT_NE(p3->source.find("#pragma omp simd"), std::string::npos);
  EXPECT_EQ(p3->parent, "c2");
  EXPECT_EQ(p3->params.at("optimization"), "SIMD pragma");
  EXPECT_NE(h.last_prompt().find("elementwise menu"), std::string::npos);
  auto b3 = a->observe(ctx, *p3, accepted("backup", 2.1e-3, -0.05, "c3"));
  ASSERT_TRUE(b3);
  EXPECT_EQ(b3->kind, "failed");
  EXPECT_NE(b3->text.find("not the new leader; -5.0% vs the leader"), std::string::npos) << b3->text;
  // Tool time per step is measured and logged.
  int steps = 0;
  for (auto& e : h.events)
    if (e.type == "step") {
      ++steps;
      EXPECT_LT(e.tool_s, 1.0);
    }
  EXPECT_EQ(steps, 6);
  auto u = llm_usage(*a);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->requests, 4);
  EXPECT_EQ(u->input_tokens, 400);
  EXPECT_EQ(a->usage().tokens, 600);
}

TEST(LlmAgent, RepairBudgetSpentFallsBackThenExhausts) {
  Harness h;
  h.opts.repair_attempts = 1;
  h.opts.generate_attempts = 2;
  auto a = make_llm_agent(h.opts);
  auto ctx = h.ctx();
  h.server.push_text(gen_reply(kBroken));
  auto p = a->propose(ctx);
  ASSERT_TRUE(p);
  a->observe(ctx, *p, rejected("correctness", "mismatch", "output c, workload n7: max error 3.0 at index 2"));
  EXPECT_TRUE(h.saw("transition", "repair", "repair (verify)"));
  h.server.push_text(kFix);
  p = a->propose(ctx);
  ASSERT_TRUE(p);
  a->observe(ctx, *p, rejected("correctness", "mismatch", "still wrong"));
  EXPECT_TRUE(h.saw("transition", "generate", "1 repair attempts spent"));  // no correct kernel: start over
  h.server.push_text(gen_reply(kBroken));
  p = a->propose(ctx);
  ASSERT_TRUE(p);
  a->observe(ctx, *p, rejected("build", "compile_error", "x"));
  h.server.push_text(kFix);
  p = a->propose(ctx);
  ASSERT_TRUE(p);
  a->observe(ctx, *p, rejected("build", "compile_error", "y"));
  EXPECT_TRUE(h.saw("transition", "exhausted", "2 generations failed"));
  EXPECT_FALSE(a->propose(ctx));
}

TEST(LlmAgent, RewriteIsRefusedAndAskedAgain) {
  Harness h;
  h.opts.edit_retries = 1;
  auto a = make_llm_agent(h.opts);
  auto ctx = h.ctx();
  h.server.push_text(gen_reply(kBroken));
  auto p = a->propose(ctx);
  a->observe(ctx, *p, rejected("build", "compile_error", "x"));
  std::string rewrite =
      "<<<<<<< SEARCH\n" + kBroken + "=======\n" + kBroken.substr(0, kBroken.size() - 2) + ";}\n>>>>>>> REPLACE\n";
  h.server.push_text(rewrite);
  h.server.push_text(kFix);
  auto p2 = a->propose(ctx);
  ASSERT_TRUE(p2);
  EXPECT_TRUE(h.saw("edit", "", "rewrite:100"));
  EXPECT_NE(h.last_prompt().find("rewrites are refused"), std::string::npos);
}

TEST(LlmAgent, TruncatedAndMalformedRepliesAreAskedAgain) {
  Harness h;
  auto a = make_llm_agent(h.opts);
  auto ctx = h.ctx();
  Scripted t;
  t.text = "NOTE: x\n```cpp\nextern \"C\" void khive_launch(";
  t.finish = "length";
  h.server.push(t);
  h.server.push_text(gen_reply(kBroken));
  auto p = a->propose(ctx);
  ASSERT_TRUE(p);
  EXPECT_NE(h.last_prompt().find("token limit"), std::string::npos);
  // An unusable reply for every re-ask: no candidate, and after the generation budget, exhausted.
  Harness h2;
  h2.opts.edit_retries = 0;
  h2.opts.generate_attempts = 1;
  auto b = make_llm_agent(h2.opts);
  auto c2 = h2.ctx();
  h2.server.push_text("I cannot help with that.");
  EXPECT_FALSE(b->propose(c2));
  EXPECT_TRUE(h2.saw("transition", "exhausted", "generation attempts gave no usable file"));
}

TEST(LlmAgent, ProviderDownEndsInExhaustedNotAHang) {
  Harness h;
  for (int i = 0; i < 6; ++i) h.server.push({503});
  auto a = make_llm_agent(h.opts);
  auto ctx = h.ctx();
  EXPECT_FALSE(a->propose(ctx));
  EXPECT_TRUE(h.saw("transition", "exhausted", "the provider failed 3 times"));
  EXPECT_FALSE(a->propose(ctx));
  EXPECT_EQ(llm_usage(*a)->failed_requests, 3);
}

TEST(LlmAgent, StartsFromTheLeaderAndOpensTheProfileGateAfterKSteps) {
  Harness h;
  h.opts.profile_depth = 1;
  int profiled = 0;
  h.opts.profiler = [&](const ProfileJob& j) {
    ++profiled;
    EXPECT_EQ(j.tool, "ncu");
    ProfileReport r;
    r.ran = true;
    r.text = "- kernel 0: vadd: DRAM throughput 91 %";
    return r;
  };
  auto a = make_llm_agent(h.opts);
  auto ctx = h.ctx();
  std::string fixed = kBroken;
  fixed.replace(fixed.find("b[i]\n"), 5, "b[i];\n");
  ctx.leader = MeasuredKernel{"L1", fixed, "cpp", "tuner", "x", {}, 0.5, 1e-3, {{"n4194304", 1e-3}}};
  h.server.push_text(kOpt);
  auto p = a->propose(ctx);
  ASSERT_TRUE(p);
  EXPECT_TRUE(h.saw("transition", "optimize", "a correct leader exists"));
  EXPECT_EQ(h.last_prompt().find("Nsight Compute"), std::string::npos);  // gate closed at step 0
  a->observe(ctx, *p, rejected("correctness", "mismatch", "z"));
  std::string fix2 = "<<<<<<< SEARCH\n#pragma omp simd\n=======\n#pragma omp simd simdlen(8)\n>>>>>>> REPLACE\n";
  h.server.push_text(fix2);
  p = a->propose(ctx);
  ASSERT_TRUE(p);
  a->observe(ctx, *p, accepted("leader", 0.9e-3, 0.1, "L2"));
  ctx.leader = MeasuredKernel{"L2", p->source, "cpp", "llm:t", "llm.cpu.simd", {}, 0.6, 0.9e-3, {}};
  h.server.push_text(
      "CLASS: elementwise\nOPTIMIZATION: x\nNOTE: y\n<<<<<<< SEARCH\n#pragma omp simd simdlen(8)\n=======\n#pragma omp "
      "parallel for simd\n>>>>>>> "
      "REPLACE\n");
  p = a->propose(ctx);
  ASSERT_TRUE(p);
  EXPECT_EQ(profiled, 1);
  EXPECT_NE(h.last_prompt().find("DRAM throughput 91 %"), std::string::npos);
  EXPECT_TRUE(h.saw("profile", "optimize", "profile gate open after 1"));
}

TEST(LlmAgent, ProfileGateWithoutToolIsSkippedWithANote) {
  Harness h;
  h.opts.profile_depth = 0;
  auto a = make_llm_agent(h.opts);
  auto ctx = h.ctx();
  std::string fixed = kBroken;
  fixed.replace(fixed.find("b[i]\n"), 5, "b[i];\n");
  ctx.leader = MeasuredKernel{"L1", fixed, "cpp", "tuner", "x", {}, 0.5, 1e-3, {}};
  h.server.push_text(kOpt);
  ASSERT_TRUE(a->propose(ctx));  // CPU backend: profile_kernel skips
  EXPECT_TRUE(h.saw("transition", "optimize", "profile gate skipped: the CPU backend"));
}

TEST(LlmAgent, StrategiesFromThePack) {
  Harness h;
  auto a = make_llm_agent(h.opts);
  auto cuda = a->strategies(h.task, Backend::cuda);
  auto cpu = a->strategies(h.task, Backend::cpu);
  ASSERT_GE(cuda.size(), 5u);
  EXPECT_EQ(cuda[0].name, "llm.memory");
  EXPECT_EQ(cpu[0].name, "llm.cpu.simd");
  auto c = make_command_agent("scripts/llm-relay.sh --dir x");
  EXPECT_EQ(c->kind(), "cmd:cmd-llm-relay.sh");
}

}  // namespace
}  // namespace khive

namespace khive {
namespace {

// The hive's first leader is the task's reference: the agent writes its own first version instead of
// patching it, and optimizes the leader once its version is in.
TEST(LlmAgent, GeneratesItsOwnFirstVersionWhenTheLeaderIsTheReference) {
  Harness h;
  auto a = make_llm_agent(h.opts);
  auto ctx = h.ctx();
  std::string fixed = kBroken;
  fixed.replace(fixed.find("b[i]\n"), 5, "b[i];\n");
  ctx.leader = MeasuredKernel{"c0000", fixed, "cpp", "hive", "reference", {}, 0.5, 1e-3, {}};
  h.server.push_text(gen_reply(kBroken));
  auto p1 = a->propose(ctx);
  ASSERT_TRUE(p1);
  EXPECT_EQ(p1->source, kBroken);
  EXPECT_EQ(p1->parent, "");
  EXPECT_NE(h.last_prompt().find("Write the whole"), std::string::npos);
  EXPECT_TRUE(h.saw("note", "generate", "the leader is the task's reference (c0000)"));
  EXPECT_FALSE(h.saw("transition", "optimize", "a correct leader exists"));

  // Its version is rejected: the repair patches its own kernel, not the reference.
  a->observe(ctx, *p1, rejected("build", "compile_error", "kernel.cpp:3:23: error: expected ';'"));
  h.server.push_text(kFix);
  auto p2 = a->propose(ctx);
  ASSERT_TRUE(p2);
  EXPECT_EQ(p2->parent, "c-compile_error");
  EXPECT_EQ(p2->source, fixed);

  // Accepted but not faster (a backup): the next step optimizes from the hive's leader.
  a->observe(ctx, *p2, accepted("backup", 1.1e-3, -0.1, "c0002"));
  h.server.push_text(kOpt);
  auto p3 = a->propose(ctx);
  ASSERT_TRUE(p3);
  EXPECT_EQ(p3->parent, "c0000");
  EXPECT_NE(p3->source.find("#pragma omp simd"), std::string::npos);
}

// Any other leader (another agent's kernel) is a base from the start, as before.
TEST(LlmAgent, StartsFromALeaderThatIsNotTheReference) {
  Harness h;
  auto a = make_llm_agent(h.opts);
  auto ctx = h.ctx();
  std::string fixed = kBroken;
  fixed.replace(fixed.find("b[i]\n"), 5, "b[i];\n");
  ctx.leader = MeasuredKernel{"c0003", fixed, "cpp", "tuner", "elementwise.vector_width", {}, 0.5, 1e-3, {}};
  h.server.push_text(kOpt);
  auto p = a->propose(ctx);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->parent, "c0003");
  EXPECT_TRUE(h.saw("transition", "optimize", "a correct leader exists"));
}

}  // namespace
}  // namespace khive
