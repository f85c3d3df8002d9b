// Providers against a local scripted server: both protocols, retries (429 + Retry-After, 500, malformed
// and cut-off bodies), refusals that must not be retried, an unreachable provider, key redaction, the
// concurrency gate, and the command provider (stdin and {prompt_file}).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "fake_server.hpp"
#include "khive/llm/client.hpp"
#include "khive/support/files.hpp"

namespace khive::llm {
namespace {

using khive::test::FakeModelServer;
using khive::test::Scripted;

ProviderConfig openai(const FakeModelServer& s) {
  ProviderConfig c;
  c.kind = ProviderKind::openai;
  c.base_url = s.base_url() + "/v1";
  c.model = "test-model";
  c.max_retries = 3;
  c.backoff_initial_s = 0.05;
  c.backoff_max_s = 0.2;
  c.connect_timeout_s = 2;
  c.request_timeout_s = 5;
  return c;
}
ChatRequest hello() { return {"be brief", {{"user", "say hi"}}, "test"}; }

std::filesystem::path tmpdir(const char* name) {
  auto d = std::filesystem::temp_directory_path() / fmt::format("khive-llm-{}-{}", name, getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

double secs(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(LlmClient, OpenAiReplyTokensCostAndRedactedTranscript) {
  FakeModelServer s;
  s.push_text("hi there");
  setenv("KHIVE_TEST_KEY", "sk-secret-123456", 1);
  auto c = openai(s);
  c.api_key_env = "KHIVE_TEST_KEY";
  c.usd_per_input_token = 1e-6;
  c.usd_per_output_token = 2e-6;
  c.temperature = 0.2;
  auto dir = tmpdir("openai");
  LlmClient cl(c, dir, "a1");
  auto r = cl.chat(hello());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.text, "hi there");
  EXPECT_EQ(r.input_tokens, 100);
  EXPECT_EQ(r.output_tokens, 50);
  EXPECT_NEAR(r.usd, 100e-6 + 100e-6, 1e-12);
  auto req = s.requests().at(0);
  EXPECT_NE(req.headers.find("Bearer sk-secret-123456"), std::string::npos);  // the key was sent ...
  auto body = nlohmann::json::parse(req.body);
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_EQ(body["messages"][0]["role"], "system");
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.2);
  // ... and appears in no saved file.
  int files = 0;
  for (auto& f : std::filesystem::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(read_file(f.path()).find("sk-secret-123456"), std::string::npos) << f.path();
  }
  EXPECT_GE(files, 3);  // request, reply, meta
  EXPECT_NE(read_file(dir / "0001-test.request.json").find("<redacted:KHIVE_TEST_KEY>"), std::string::npos);
}

TEST(LlmClient, AnthropicMessagesWithThinking) {
  FakeModelServer s;
  s.push_text("bonjour");
  auto c = openai(s);
  c.kind = ProviderKind::anthropic;
  c.base_url = s.base_url();
  c.reasoning_effort = "low";
  c.max_tokens = 8192;
  LlmClient cl(c, "", "a1");
  auto r = cl.chat(hello());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.text, "bonjour");
  EXPECT_EQ(r.input_tokens, 120);
  auto req = s.requests().at(0);
  EXPECT_EQ(req.path, "/v1/messages");
  EXPECT_NE(req.headers.find("anthropic-version"), std::string::npos);
  auto body = nlohmann::json::parse(req.body);
  EXPECT_EQ(body["system"], "be brief");
  EXPECT_EQ(body["messages"].size(), 1u);
  EXPECT_EQ(body["thinking"]["budget_tokens"], 2048);
}

TEST(LlmClient, OpenAiReasoningEffortUsesMaxCompletionTokens) {
  FakeModelServer s;
  auto c = openai(s);
  c.reasoning_effort = "high";
  LlmClient cl(c, "", "a1");
  auto b = cl.request_body(hello());
  EXPECT_EQ(b["reasoning_effort"], "high");
  EXPECT_TRUE(b.contains("max_completion_tokens"));
  EXPECT_FALSE(b.contains("max_tokens"));
}

TEST(LlmClient, RateLimitHonoursRetryAfter) {
  FakeModelServer s;
  Scripted rl;
  rl.status = 429;
  rl.retry_after = "1";
  s.push(rl);
  s.push_text("after the wait");
  LlmClient cl(openai(s), "", "a1");
  auto t0 = std::chrono::steady_clock::now();
  auto r = cl.chat(hello());
  double el = secs(t0);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_GE(el, 0.95);  // waited what the server asked, not the 0.05 s backoff
  EXPECT_LT(el, 3.0);
}

TEST(LlmClient, ServerErrorMalformedAndCutOffBodiesAreRetried) {
  FakeModelServer s;
  s.push({500});
  Scripted bad;
  bad.body = "{\"choices\": [";  // malformed JSON with status 200
  s.push(bad);
  Scripted cut;
  cut.text = "never whole";
  cut.short_body = true;
  s.push(cut);
  s.push_text("finally");
  LlmClient cl(openai(s), "", "a1");
  auto r = cl.chat(hello());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.text, "finally");
  EXPECT_EQ(r.attempts, 4);
}

TEST(LlmClient, GivesUpAfterRetriesWithTheLastReason) {
  FakeModelServer s;
  for (int i = 0; i < 4; ++i) s.push({503});
  LlmClient cl(openai(s), "", "a1");
  auto r = cl.chat(hello());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.attempts, 4);
  EXPECT_NE(r.error.find("HTTP 503"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("after 4 attempts"), std::string::npos) << r.error;
}

TEST(LlmClient, ClientErrorIsNotRetried) {
  FakeModelServer s;
  Scripted e;
  e.status = 401;
  e.body = "{\"error\":{\"message\":\"invalid api key\"}}";
  s.push(e);
  s.push_text("should not be asked");
  LlmClient cl(openai(s), "", "a1");
  auto r = cl.chat(hello());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_NE(r.error.find("HTTP 401: invalid api key"), std::string::npos) << r.error;
  EXPECT_EQ(s.pending(), 1u);
}

TEST(LlmClient, TruncatedReplyIsFlagged) {
  FakeModelServer s;
  Scripted t;
  t.text = "```cuda\nint x";
  t.finish = "length";
  s.push(t);
  LlmClient cl(openai(s), "", "a1");
  auto r = cl.chat(hello());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.truncated);
}

TEST(LlmClient, UnreachableProviderFailsFastWithAClearMessage) {
  int port;
  {
    FakeModelServer s;
    port = s.port();
  }  // bound, then closed: nothing listens there now
  ProviderConfig c;
  c.kind = ProviderKind::openai;
  c.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  c.model = "m";
  c.backoff_initial_s = 1;
  LlmClient cl(c, "", "a1");
  auto t0 = std::chrono::steady_clock::now();
  auto r = cl.chat(hello());
  EXPECT_FALSE(r.ok);
  EXPECT_LT(secs(t0), 2.0);
  EXPECT_NE(r.error.find("cannot be reached"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find(c.base_url), std::string::npos) << r.error;
}

TEST(LlmClient, SilentProviderHitsTheRequestTimeout) {
  FakeModelServer s;
  Scripted slow;
  slow.text = "late";
  slow.delay_ms = 3000;
  s.push(slow);
  auto c = openai(s);
  c.request_timeout_s = 1;
  c.max_retries = 0;
  LlmClient cl(c, "", "a1");
  auto t0 = std::chrono::steady_clock::now();
  auto r = cl.chat(hello());
  EXPECT_FALSE(r.ok);
  EXPECT_LT(secs(t0), 2.5);
  EXPECT_NE(r.error.find("after 1 attempts"), std::string::npos) << r.error;
}

TEST(LlmClient, MissingKeyVariableIsNamed) {
  FakeModelServer s;
  auto c = openai(s);
  c.api_key_env = "KHIVE_TEST_UNSET_KEY_VAR";
  unsetenv("KHIVE_TEST_UNSET_KEY_VAR");
  LlmClient cl(c, "", "a1");
  auto r = cl.chat(hello());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("KHIVE_TEST_UNSET_KEY_VAR"), std::string::npos) << r.error;
  EXPECT_TRUE(s.requests().empty());
}

TEST(LlmClient, ConcurrencyLimitIsPerProviderAcrossClients) {
  FakeModelServer s;
  for (int i = 0; i < 4; ++i) {
    Scripted d;
    d.text = "ok";
    d.delay_ms = 200;
    s.push(d);
  }
  auto c = openai(s);
  c.model = "gated-model";  // its own gate
  c.concurrency = 1;
  std::vector<std::thread> ts;
  std::atomic<int> ok{0};
  std::vector<ChatReply> replies(4);
  for (int i = 0; i < 4; ++i)
    ts.emplace_back([&, i] {
      LlmClient cl(c, "", "a" + std::to_string(i));
      replies[i] = cl.chat(hello());
      ok += replies[i].ok;
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(ok.load(), 4);
  EXPECT_EQ(s.max_in_flight(), 1);
  // The wait at the gate is reported apart from the call: the last of 4 one-at-a-time 200 ms requests
  // queued >= 3 x 200 ms, and every call's own part (seconds - queue_s) is one request.
  double most = 0;
  for (auto& r : replies) {
    most = std::max(most, r.queue_s);
    EXPECT_GE(r.seconds - r.queue_s, 0.19);
    EXPECT_LT(r.seconds - r.queue_s, 1.0);
  }
  EXPECT_GE(most, 0.55);
}

TEST(LlmClient, StopInterruptsTheBackoff) {
  FakeModelServer s;
  Scripted rl;
  rl.status = 429;
  rl.retry_after = "30";
  s.push(rl);
  std::atomic<bool> stop{false};
  LlmClient cl(openai(s), "", "a1");
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  auto t0 = std::chrono::steady_clock::now();
  auto r = cl.chat(hello(), &stop);
  t.join();
  EXPECT_FALSE(r.ok);
  EXPECT_LT(secs(t0), 2.0);
}

TEST(LlmClient, CommandProviderStdinAndPromptFile) {
  auto dir = tmpdir("cmd");
  ProviderConfig c;
  c.kind = ProviderKind::command;
  c.command = "tr a-z A-Z";  // reply = the prompt upper-cased (stdin)
  LlmClient a(c, dir, "a1");
  auto r = a.chat({"", {{"user", "kernel please"}}, "gen"});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.text, "KERNEL PLEASE");
  EXPECT_TRUE(r.tokens_estimated);

  c.command = "echo \"$KHIVE_LLM_PURPOSE\"; cat {prompt_file}";
  LlmClient b(c, dir, "a2");
  auto r2 = b.chat({"sys", {{"user", "from a file"}}, "repair"});
  ASSERT_TRUE(r2.ok) << r2.error;
  EXPECT_EQ(r2.text, "repair\nsys\n\nfrom a file");

  c.command = "echo boom >&2; exit 3";
  LlmClient d(c, dir, "a3");
  auto r3 = d.chat(hello());
  EXPECT_FALSE(r3.ok);
  EXPECT_NE(r3.error.find("exit 3"), std::string::npos) << r3.error;
  EXPECT_NE(r3.error.find("boom"), std::string::npos) << r3.error;
}

TEST(LlmClient, RetryAfterParsing) {
  EXPECT_EQ(parse_retry_after("7"), 7.0);
  EXPECT_EQ(parse_retry_after(" 0.5 "), 0.5);
  EXPECT_FALSE(parse_retry_after("soon"));
  auto d = parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT");  // in the past: no wait
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, 0.0);
}

}  // namespace
}  // namespace khive::llm
