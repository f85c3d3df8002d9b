#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "khive/llm/llm_agent.hpp"

namespace khive {
namespace {

std::vector<nlohmann::json> read_lines(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));  // throws on a torn line
  return out;
}

TEST(LlmEventLog, AppendsOneJsonLinePerEventWithTimes) {
  auto dir = std::filesystem::temp_directory_path() / fmt::format("khive-llmevents-{}", getpid());
  std::filesystem::remove_all(dir);
  auto file = dir / "llm" / "events.jsonl";  // the folder does not exist yet: the sink makes it
  {
    auto sink = llm_event_log(file);
    sink(LlmEvent{"a0", "transition", "generate", "repair", "rejected at build", 0, nlohmann::json::object()});
    sink(LlmEvent{"a0", "step", "observe", "repair", "rejected", 0.0042, {{"check", "build"}}});
  }
  {
    auto sink = llm_event_log(file);  // a resumed run appends, it does not truncate
    sink(LlmEvent{"a1", "request", "optimize", "", "optimize", 0, {{"input_tokens", 1200}}});
  }
  auto lines = read_lines(file);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["type"], "transition");
  EXPECT_EQ(lines[0]["to"], "repair");
  EXPECT_DOUBLE_EQ(lines[1]["tool_s"].get<double>(), 0.0042);
  EXPECT_EQ(lines[1]["data"]["check"], "build");
  EXPECT_EQ(lines[2]["agent"], "a1");
  for (auto& l : lines) {
    EXPECT_GT(l["t"].get<double>(), 1.6e9);  // Unix time
    EXPECT_GE(l["elapsed_s"].get<double>(), 0.0);
  }
  std::filesystem::remove_all(dir);
}

TEST(LlmEventLog, ConcurrentAgentsNeverInterleaveLines) {
  auto dir = std::filesystem::temp_directory_path() / fmt::format("khive-llmevents-mt-{}", getpid());
  std::filesystem::remove_all(dir);
  auto sink = llm_event_log(dir / "events.jsonl");
  std::vector<std::thread> ts;
  for (int a = 0; a < 4; ++a)
    ts.emplace_back([&, a] {
      for (int i = 0; i < 200; ++i)
        sink(LlmEvent{fmt::format("a{}", a), "note", "", "", std::string(300, 'x'), 0, {{"i", i}}});
    });
  for (auto& t : ts) t.join();
  auto lines = read_lines(dir / "events.jsonl");
  EXPECT_EQ(lines.size(), 800u);
  std::filesystem::remove_all(dir);
}

TEST(LlmEventLog, UnopenableFileIsAnErrorNamingIt) {
  auto dir = std::filesystem::temp_directory_path() / fmt::format("khive-llmevents-bad-{}", getpid());
  std::filesystem::create_directories(dir / "events.jsonl");  // a directory where the file should be
  try {
    llm_event_log(dir / "events.jsonl");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("events.jsonl"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace khive
