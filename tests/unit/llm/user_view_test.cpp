// Issue 17, the LLM agent: CPU prompts speak of cores, SIMD and caches (never warps, SMs or cuBLAS); the task's
// operation and the menu's class do not contradict each other; a reply that is not UTF-8 is repaired and kept
// (over HTTP and from a command) instead of killing the agent; a provider that cannot be reached makes the agent
// say so (provider_failure); Ctrl-C ends a pending command answer at once; the whole A/B comparison reaches the
// model.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "fake_server.hpp"
#include "khive/llm/client.hpp"
#include "khive/llm/llm_agent.hpp"
#include "khive/support/files.hpp"

namespace khive {
namespace {

using khive::test::FakeModelServer;
using khive::test::Scripted;

const std::string kKernel =
    "extern \"C\" void khive_launch(const float* x, float* y, int64_t B, int64_t D) {\n"
    "  for (int64_t i = 0; i < B * D; ++i)\n"
    "    y[i] = x[i];\n"
    "}\n";
const std::string kOpt =
    "CLASS: reduction\nOPTIMIZATION: OpenMP rows\nNOTE: rows in parallel\n"
    "<<<<<<< SEARCH\n  for (int64_t i = 0; i < B * D; ++i)\n=======\n#pragma omp parallel for\n  for (int64_t i = 0; i "
    "< B * D; ++i)\n"
    ">>>>>>> REPLACE\n";

struct Harness {
  FakeModelServer server;
  Task task = load_task(std::filesystem::path(KHIVE_SOURCE_DIR) / "tasks/demo-cpu/softmax");
  std::atomic<bool> stop{false};
  LlmAgentOptions opts;
  Harness() {
    opts.provider.kind = ProviderKind::openai;
    opts.provider.base_url = server.base_url() + "/v1";
    opts.provider.model = "fake";
    opts.provider.max_retries = 0;
    opts.name = "t";
  }
  AgentContext ctx(Backend b = Backend::cpu) {
    AgentContext c;
    c.task = &task;
    c.backend = b;
    c.strategy = b == Backend::cpu ? Strategy{"llm.cpu.threads", "threads"} : Strategy{"llm.reduction", "reduction"};
    c.leader =
        MeasuredKernel{"c0003", kKernel, b == Backend::cpu ? "cpp" : "cu", "llm:t", c.strategy.name, {}, 0.5, 2e-3, {}};
    c.stop = &stop;
    return c;
  }
  std::string request_text(std::size_t i) const {
    auto j = nlohmann::json::parse(server.requests().at(i).body);
    std::string all;
    for (auto& m : j["messages"]) all += m["content"].get<std::string>() + "\n";
    return all;
  }
};

TEST(LlmUserView, CpuPromptsSpeakOfCoresSimdAndCachesNotOfGpus) {
  Harness h;
  h.task.description = "Row softmax.";  // the task's own text (the demo's mentions its CUDA kernels) is not the pack's
  auto a = make_llm_agent(h.opts);
  h.server.push_text(kOpt);
  auto p = a->propose(h.ctx(Backend::cpu));
  ASSERT_TRUE(p);
  const std::string prompt = h.request_text(0);
  for (const char* gpu : {"warp", "Warp", " SM", "cuBLAS", "__shfl", "shared memory", "GPU", "HBM", "CUDA"})
    EXPECT_EQ(prompt.find(gpu), std::string::npos) << "'" << gpu << "' in a CPU prompt:\n" << prompt;
  for (const char* cpu : {"OpenMP", "SIMD", "L1/L2", "core"}) EXPECT_NE(prompt.find(cpu), std::string::npos) << cpu;
  // The CUDA prompt of the same agent keeps its GPU menu.
  h.server.push_text(kOpt);
  auto a2 = make_llm_agent(h.opts);
  ASSERT_TRUE(a2->propose(h.ctx(Backend::cuda)));
  EXPECT_NE(h.request_text(1).find("__shfl_xor_sync"), std::string::npos);
}

TEST(LlmUserView, TheOperationAndTheMenuClassDoNotContradictEachOther) {
  Harness h;
  h.task.op_type = "scan";
  h.task.name = "prefix_scan";
  auto a = make_llm_agent(h.opts);
  h.server.push_text(kOpt);
  ASSERT_TRUE(a->propose(h.ctx()));
  const std::string prompt = h.request_text(0);
  EXPECT_EQ(prompt.find("looks reduction"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("The operation is scan; its optimization menu is the reduction one"), std::string::npos)
      << prompt;
}

TEST(LlmUserView, AReplyThatIsNotUtf8IsRepairedAndKept) {
  Harness h;
  Scripted bad;
  // Raw bytes that are not UTF-8 inside the JSON string (a proxy's mangling): the body is repaired, then parsed.
  bad.body = std::string("{\"choices\":[{\"message\":{\"content\":\"NOTE: caf\xe9 version\\n```cpp\\n") +
             "extern \\\"C\\\" void khive_launch(const float* x, float* y, int64_t B, int64_t D) { /* \xff\xfe */ "
             "}\\n```\\n\"},"
             "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":5}}";
  h.server.push(bad);
  llm::LlmClient cl(h.opts.provider, "", "t");
  auto r = cl.chat({"sys", {{"user", "hi"}}, "generate"});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.invalid_utf8, 3u);
  EXPECT_NE(r.text.find("caf\xEF\xBF\xBD version"), std::string::npos) << r.text;
  // A command provider's stdout too.
  ProviderConfig cmd;
  cmd.kind = ProviderKind::command;
  cmd.command = "printf 'NOTE: x\\377\\n'";
  llm::LlmClient cc(cmd, "", "t");
  auto rc = cc.chat({"sys", {{"user", "hi"}}, "generate"});
  ASSERT_TRUE(rc.ok) << rc.error;
  EXPECT_EQ(rc.invalid_utf8, 1u);
  EXPECT_NO_THROW((void)nlohmann::json(rc.text).dump()) << "the kept text is valid UTF-8";
}

TEST(LlmUserView, TheAgentSurvivesANonUtf8ReplyAndItsStateSaves) {
  Harness h;
  h.opts.provider = ProviderConfig{};
  h.opts.provider.kind = ProviderKind::command;
  const auto dir = make_temp_dir(std::filesystem::temp_directory_path(), "khive-utf8");
  write_file_atomic(dir / "reply.txt",
                    std::string("NOTE: first version \xff\xfe\n```cpp\n") + kKernel + "// caf\xe9\n```\n");
  h.opts.provider.command = "cat '" + (dir / "reply.txt").string() + "'";
  auto a = make_llm_agent(h.opts);
  auto ctx = h.ctx();
  ctx.leader.reset();
  auto p = a->propose(ctx);
  ASSERT_TRUE(p) << "the agent proposes from the repaired reply";
  EXPECT_NO_THROW((void)a->save_state().dump()) << "its state (history with the reply's text) serializes";
  std::filesystem::remove_all(dir);
}

TEST(LlmUserView, AnUnreachableProviderIsTheAgentsFailure) {
  int port;
  {
    FakeModelServer s;
    port = s.port();
  }
  LlmAgentOptions o;
  o.provider.kind = ProviderKind::openai;
  o.provider.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  o.provider.model = "m";
  o.name = "down";
  auto a = make_llm_agent(o);
  Harness h;
  auto ctx = h.ctx();
  EXPECT_FALSE(a->propose(ctx));
  const std::string why = a->provider_failure();
  EXPECT_NE(
      why.find("its model provider failed 3 times in a row; last: provider http://127.0.0.1:" + std::to_string(port)),
      std::string::npos)
      << why;
  EXPECT_NE(why.find("cannot be reached"), std::string::npos) << why;
}

TEST(LlmUserView, CtrlCEndsAPendingCommandAnswerAtOnce) {
  ProviderConfig cmd;
  cmd.kind = ProviderKind::command;
  cmd.command = "sleep 600";
  cmd.request_timeout_s = 3600;
  llm::LlmClient cl(cmd, "", "t");
  std::atomic<bool> stop{false};
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  auto t0 = std::chrono::steady_clock::now();
  auto r = cl.chat({"sys", {{"user", "hi"}}, "generate"}, &stop);
  t.join();
  EXPECT_FALSE(r.ok);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

TEST(LlmUserView, TheWholeComparisonReachesTheModel) {
  Harness h;
  auto a = make_llm_agent(h.opts);
  auto ctx = h.ctx();
  h.server.push_text(kOpt);
  auto p = a->propose(ctx);
  ASSERT_TRUE(p);
  Outcome o;
  o.candidate = "c0004";
  o.standing = Standing::backup;
  o.time_s = 2.1e-3;
  o.delta_vs_leader = 0.02;
  std::string many;
  for (int i = 0; i < 12; ++i)
    many += (i ? ", " : "") + std::string("softmax-w") + std::to_string(i) + " level +2.0% (noise ±4.0%, 14 pairs)";
  o.comparison = "A/B vs c0003: +2.0% overall; faster beyond the noise on no workload; per workload: " + many +
                 ", softmax-last slower -6.0%";
  auto b = a->observe(ctx, *p, o);
  ASSERT_TRUE(b);
  h.server.push_text(kOpt);
  ASSERT_TRUE(a->propose(ctx));
  EXPECT_NE(h.request_text(1).find("softmax-last slower -6.0%"), std::string::npos)
      << "the end of a long comparison is in the prompt";
}

}  // namespace
}  // namespace khive
