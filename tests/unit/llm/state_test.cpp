// The LLM agent's loop state survives the process: an agent that proposed a broken kernel and saw it
// rejected is saved; a fresh agent (a resumed run, e.g. after a pause for GPU evaluation) loaded with that
// state asks for a patch of the same kernel, not a new file, and continues to optimize. A bad state is
// refused with a reason and leaves the agent as it was.
#include <gtest/gtest.h>

#include "fake_server.hpp"
#include "khive/llm/llm_agent.hpp"

namespace khive {
namespace {

using khive::test::FakeModelServer;

const std::string kBroken =
    "extern \"C\" void khive_launch(const float* a, const float* b, float* c, int64_t N) {\n"
    "  for (int64_t i = 0; i < N; ++i)\n"
    "    c[i] = a[i] + b[i]\n"
    "}\n";
const std::string kFix =
    "NOTE: add the semicolon\n<<<<<<< SEARCH\n    c[i] = a[i] + b[i]\n=======\n    c[i] = a[i] + b[i];\n>>>>>>> "
    "REPLACE\n";
const std::string kOpt =
    "CLASS: elementwise\nOPTIMIZATION: SIMD pragma\nNOTE: vectorize\n"
    "<<<<<<< SEARCH\n  for (int64_t i = 0; i < N; ++i)\n=======\n#pragma omp simd\n  for (int64_t i = 0; i < N; "
    "++i)\n>>>>>>> REPLACE\n";

struct StateRig {
  FakeModelServer server;
  Task task = load_task(std::filesystem::path(KHIVE_SOURCE_DIR) / "tasks/demo-cpu/vector_add");
  std::atomic<bool> stop{false};
  LlmAgentOptions opts;
  StateRig() {
    opts.provider.kind = ProviderKind::openai;
    opts.provider.base_url = server.base_url() + "/v1";
    opts.provider.model = "fake";
    opts.provider.max_retries = 0;
    opts.name = "t";
  }
  AgentContext ctx() {
    AgentContext c;
    c.task = &task;
    c.backend = Backend::cpu;
    c.strategy = {"llm.cpu.simd", "simd"};
    c.stop = &stop;
    return c;
  }
  std::string last_prompt() const {
    auto j = nlohmann::json::parse(server.requests().back().body);
    return j["messages"].back()["content"].get<std::string>();
  }
};

TEST(LlmState, ARepairInProgressContinuesInAFreshAgent) {
  StateRig s;
  nlohmann::json saved;
  {
    auto a = make_llm_agent(s.opts);
    s.server.push_text("NOTE: plain loop\n```cpp\n" + kBroken + "```\n");
    auto p = a->propose(s.ctx());
    ASSERT_TRUE(p);
    Outcome o;
    o.candidate = "c0001";
    o.standing = Standing::rejected;
    o.check = Check::build;
    o.reason = "build_error";
    o.message = "expected ';'";
    o.diagnosis = "k.cpp:3:23: error: expected ';' before '}' token";
    a->observe(s.ctx(), *p, o);
    saved = a->save_state();
  }
  ASSERT_TRUE(saved.is_object());
  EXPECT_EQ(saved["state"], "repair");
  EXPECT_EQ(saved["broken_id"], "c0001");
  EXPECT_EQ(saved["usage"]["requests"], 1);

  auto b = make_llm_agent(s.opts);
  b->load_state(saved);
  EXPECT_EQ(b->save_state(), saved);  // nothing lost in the round trip
  EXPECT_EQ(b->usage().tokens, llm_usage(*b)->input_tokens + llm_usage(*b)->output_tokens);
  EXPECT_EQ(llm_usage(*b)->requests, 1);  // earlier sessions still count toward budgets
  s.server.push_text(kFix);
  auto fixed = b->propose(s.ctx());
  ASSERT_TRUE(fixed);
  EXPECT_NE(s.last_prompt().find("expected ';' before '}' token"), std::string::npos)
      << "the repair prompt carries the saved diagnosis";
  EXPECT_NE(fixed->source.find("c[i] = a[i] + b[i];"), std::string::npos);
  EXPECT_EQ(fixed->parent, "c0001");  // a patch of the saved broken kernel
  Outcome ok;
  ok.candidate = "c0002";
  ok.standing = Standing::leader;
  ok.time_s = 1e-3;
  auto entry = b->observe(s.ctx(), *fixed, ok);
  ASSERT_TRUE(entry);
  EXPECT_NE(entry->text.find("repair"), std::string::npos) << entry->text;  // the restored pending kind
  EXPECT_EQ(b->save_state()["state"], "optimize");
  s.server.push_text(kOpt);
  auto opt = b->propose(s.ctx());
  ASSERT_TRUE(opt);
  EXPECT_EQ(opt->parent, "c0002");
  EXPECT_NE(opt->source.find("#pragma omp simd"), std::string::npos);
}

TEST(LlmState, ABadStateIsRefusedAndLeavesTheAgentAsItWas) {
  StateRig s;
  auto a = make_llm_agent(s.opts);
  auto fresh = a->save_state();
  auto bad = fresh;
  bad["state"] = "dreaming";
  try {
    a->load_state(bad);
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("dreaming"), std::string::npos) << e.what();
  }
  EXPECT_EQ(a->save_state(), fresh);
  EXPECT_THROW(a->load_state(nlohmann::json{{"version", 99}}), std::runtime_error);
  auto missing = fresh;
  missing.erase("history");
  EXPECT_ANY_THROW(a->load_state(missing));
  EXPECT_EQ(a->save_state(), fresh);
}

}  // namespace
}  // namespace khive
