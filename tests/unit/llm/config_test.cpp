#include <gtest/gtest.h>

#include <unistd.h>

#include <fmt/format.h>

#include "khive/llm/llm_agent.hpp"
#include "khive/support/files.hpp"

namespace khive {
namespace {

std::filesystem::path write_tmp(const std::string& name, const std::string& text) {
  auto d = std::filesystem::temp_directory_path() / fmt::format("khive-llmcfg-{}", getpid());
  std::filesystem::create_directories(d);
  write_file_atomic(d / name, text);
  return d / name;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(LlmConfig, TomlWithEveryGroupOfKeys) {
  auto p = write_tmp("a.toml", R"(
provider = "openai"
base_url = "http://localhost:8000/v1/"
model = "qwen2.5-coder"
api_key_env = "VLLM_KEY"
temperature = 0.3
max_tokens = 4096
reasoning_effort = "medium"
concurrency = 2
usd_per_mtok = { input = 2.5, output = 10.0 }
repair_attempts = 4
profile_depth = 7
strategies = ["llm.memory", { name = "llm.launch", description = "launch shape" }]
prompts_dir = "pack"
)");
  auto o = load_llm_config(p);
  EXPECT_EQ(o.provider.kind, ProviderKind::openai);
  EXPECT_EQ(o.provider.base_url, "http://localhost:8000/v1");  // trailing slash dropped
  EXPECT_EQ(o.provider.model, "qwen2.5-coder");
  EXPECT_EQ(o.name, "qwen2.5-coder");
  EXPECT_DOUBLE_EQ(*o.provider.temperature, 0.3);
  EXPECT_EQ(o.provider.concurrency, 2);
  EXPECT_DOUBLE_EQ(o.provider.usd_per_input_token, 2.5e-6);
  EXPECT_DOUBLE_EQ(o.provider.usd_per_output_token, 1e-5);
  EXPECT_EQ(o.repair_attempts, 4);
  EXPECT_EQ(o.profile_depth, 7);
  ASSERT_EQ(o.strategies.size(), 2u);
  EXPECT_EQ(o.strategies[1].description, "launch shape");
  EXPECT_EQ(o.prompts_dir, p.parent_path() / "pack");  // relative to the config file
}

TEST(LlmConfig, JsonAnthropicDefaultsAndCommand) {
  auto a = load_llm_config(
      write_tmp("b.json", R"({"provider": "anthropic", "model": "claude-x", "api_key_env": "ANTHROPIC_API_KEY"})"));
  EXPECT_EQ(a.provider.base_url, "https://api.anthropic.com");
  EXPECT_EQ(a.profile_depth, 3);
  EXPECT_EQ(a.repair_attempts, 5);
  auto c = load_llm_config(write_tmp("c.json", R"({"provider": "command", "command": "scripts/llm-relay.sh"})"));
  EXPECT_EQ(c.provider.kind, ProviderKind::command);
  EXPECT_EQ(c.name, "cmd");
}

TEST(LlmConfig, ErrorsNameFileKeyAndExpectation) {
  auto e1 = error_of(
      [] { load_llm_config(write_tmp("d.json", R"({"provider": "openai", "model": "m", "temprature": 1})")); });
  EXPECT_NE(e1.find("d.json: temprature: expected one of the documented keys"), std::string::npos) << e1;
  auto e2 = error_of([] { load_llm_config(write_tmp("e.json", R"({"provider": "openai"})")); });
  EXPECT_NE(e2.find("e.json: model: expected a model name"), std::string::npos) << e2;
  auto e3 = error_of([] { load_llm_config(write_tmp("f.toml", "provider = \"gemini\"\n")); });
  EXPECT_NE(e3.find("f.toml: provider: expected \"openai\", \"anthropic\" or \"command\", got \"gemini\""),
            std::string::npos)
      << e3;
  auto e4 = error_of([] { load_llm_config(write_tmp("g.toml", "provider = \"openai\"\nmodel = 3\n")); });
  EXPECT_NE(e4.find("g.toml: model: expected a string, got 3"), std::string::npos) << e4;
  auto e5 = error_of([] { load_llm_config(write_tmp("h.toml", "provider = [\n")); });
  EXPECT_NE(e5.find("h.toml:"), std::string::npos) << e5;
  EXPECT_NE(e5.find("expected valid TOML"), std::string::npos) << e5;
  auto e6 = error_of(
      [] { load_llm_config(write_tmp("i.json", R"({"provider": "openai", "model": "m", "temperature": 5})")); });
  EXPECT_NE(e6.find("temperature: expected a number in [0, 2], got 5"), std::string::npos) << e6;
  auto e7 = error_of([] { load_llm_config("/nonexistent/x.toml"); });
  EXPECT_NE(e7.find("/nonexistent/x.toml"), std::string::npos) << e7;
  auto e8 = error_of([] { load_llm_config(write_tmp("j.yaml", "provider: openai")); });
  EXPECT_NE(e8.find("expected a .json or .toml extension"), std::string::npos) << e8;
}

}  // namespace
}  // namespace khive
