// LLM agent events as JSON lines: the record of every transition, model request and step (with tool_s) of
// a run's LLM agents. The hive's events.jsonl holds candidates and verdicts; this file holds what the
// agents did between them, so a run can be retold step by step (docs/llm.md, "Events").
#include <chrono>
#include <fstream>
#include <mutex>
#include <stdexcept>

#include "khive/llm/llm_agent.hpp"

namespace khive {

std::function<void(const LlmEvent&)> llm_event_log(const std::filesystem::path& file) {
  std::error_code ec;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
  auto out = std::make_shared<std::ofstream>(file, std::ios::app);
  if (!*out) throw std::runtime_error(file.string() + ": cannot open the LLM event log for appending");
  auto mu = std::make_shared<std::mutex>();  // agents run on their own threads; one line at a time
  auto t0 = std::chrono::system_clock::now();
  return [out, mu, t0](const LlmEvent& e) {
    auto j = e.to_json();
    auto now = std::chrono::system_clock::now();
    j["t"] = std::chrono::duration<double>(now.time_since_epoch()).count();
    j["elapsed_s"] = std::chrono::duration<double>(now - t0).count();
    std::lock_guard lk(*mu);
    *out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    out->flush();  // a stopped run keeps every event written so far
  };
}

}  // namespace khive
