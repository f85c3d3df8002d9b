// Model providers behind one call: OpenAI-compatible chat completions, Anthropic Messages, or a command.
//
//   LlmClient c(cfg, run_dir / "transcripts", "gpt-1");
//   ChatReply r = c.chat({.system = sys, .messages = {{"user", prompt}}, .purpose = "generate"}, &stop);
//   if (!r.ok) fail(r.error);  else use(r.text);  // r.truncated: the model hit max_tokens
//
// Retries with jittered exponential backoff on timeouts, 429 (Retry-After honoured), 408/5xx, and HTTP
// bodies that are cut off or not JSON. A provider that cannot be reached (refused, unknown host) fails at
// once with a message naming the URL. At most `concurrency` requests per provider are in flight in the
// whole process. Every request and reply is written to the transcript folder with the key redacted.
#pragma once
#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "khive/llm/llm_agent.hpp"

namespace khive::llm {

struct ChatMessage {
  std::string role;  // "user" | "assistant"
  std::string content;
};

struct ChatRequest {
  std::string system;
  std::vector<ChatMessage> messages;
  std::string purpose;  // "generate", "repair", "optimize", ...: transcript file names and the command's env
};

struct ChatReply {
  bool ok = false;
  std::string text;
  std::string error;       // when !ok: what failed, naming the provider
  bool truncated = false;  // stopped at max_tokens (finish_reason "length" / stop_reason "max_tokens")
  std::string finish_reason;
  int64_t input_tokens = 0, output_tokens = 0;
  bool tokens_estimated = false;  // the command provider: characters / 4
  double usd = 0;
  double seconds = 0;  // wall time of the whole call, retries and waits included
  double queue_s = 0;  // part of `seconds` spent waiting for a free slot at the provider's concurrency gate
  int attempts = 0;
  std::string transcript;        // path of the saved reply ("" when not saved)
  std::size_t invalid_utf8 = 0;  // bytes of the reply that were not UTF-8, replaced by U+FFFD (the reply is kept)
};

class LlmClient {
 public:
  LlmClient(ProviderConfig cfg, std::filesystem::path transcript_dir, std::string agent);
  ChatReply chat(const ChatRequest& req, const std::atomic<bool>* stop = nullptr);
  const ProviderConfig& config() const { return cfg_; }

  // Exposed for tests: the HTTP bodies and the parsing of replies.
  nlohmann::json request_body(const ChatRequest& req) const;
  // Fills text/tokens/finish_reason; returns "" on success, else what is wrong with the body.
  std::string parse_reply(const std::string& body, ChatReply& r) const;
  std::string command_prompt(const ChatRequest& req) const;  // the text handed to a command provider

 private:
  ChatReply chat_http(const ChatRequest& req, const std::atomic<bool>* stop, int seq);
  ChatReply chat_command(const ChatRequest& req, const std::atomic<bool>* stop, int seq);
  void save(int seq, const std::string& purpose, const std::string& what, const std::string& text) const;
  std::string redact(std::string s) const;

  ProviderConfig cfg_;
  std::filesystem::path dir_;
  std::string agent_;
  std::string key_;  // read once from cfg_.api_key_env
  std::atomic<int> seq_{0};
};

// Parses an HTTP Retry-After value (delta seconds or an HTTP date); nullopt when unusable.
std::optional<double> parse_retry_after(const std::string& value);

}  // namespace khive::llm
