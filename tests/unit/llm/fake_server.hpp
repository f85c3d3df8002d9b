// A local model server for the tests: speaks OpenAI chat completions (/v1/chat/completions) and Anthropic
// Messages (/v1/messages) with scripted replies, in order. Each scripted reply can be an HTTP error, a
// Retry-After, a malformed or cut-off body, or a normal answer whose text the test chooses.
#pragma once
#include <httplib.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace khive::test {

struct Scripted {
  int status = 200;
  std::string text;             // the answer (wrapped in the protocol's JSON) when body is empty
  std::string body;             // raw body instead (malformed JSON, ...)
  std::string retry_after;      // Retry-After header
  std::string finish = "stop";  // "length" marks a reply cut at max_tokens
  int delay_ms = 0;
  bool short_body = false;  // Content-Length larger than the body sent: a transfer cut off
};

class FakeModelServer {
 public:
  FakeModelServer() {
    auto handle = [this](bool anthropic) {
      return [this, anthropic](const httplib::Request& req, httplib::Response& res) {
        int now = ++in_flight_;
        {
          std::lock_guard lk(mu_);
          max_in_flight_ = std::max(max_in_flight_, now);
          requests_.push_back({req.path, req.body, headers_of(req)});
        }
        Scripted s;
        {
          std::lock_guard lk(mu_);
          if (script_.empty()) {
            s.status = 500;
            s.body = "{\"error\":{\"message\":\"script exhausted\"}}";
          } else {
            s = script_.front();
            script_.pop_front();
          }
        }
        if (s.delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(s.delay_ms));
        --in_flight_;
        res.status = s.status;
        if (!s.retry_after.empty()) res.set_header("Retry-After", s.retry_after);
        std::string body = s.body;
        if (body.empty() && s.status == 200) body = anthropic ? anthropic_body(s) : openai_body(s);
        if (body.empty()) body = "{\"error\":{\"message\":\"scripted error " + std::to_string(s.status) + "\"}}";
        if (s.short_body) {
          // Announce more bytes than are sent, then close: the client sees a transfer cut off.
          res.set_content_provider(body.size() + 100, "application/json",
                                   [body](size_t offset, size_t, httplib::DataSink& sink) {
                                     if (offset == 0) sink.write(body.data(), body.size());
                                     return false;
                                   });
        } else {
          res.set_content(body, "application/json");
        }
      };
    };
    svr_.Post("/v1/chat/completions", handle(false));
    svr_.Post("/v1/messages", handle(true));
    port_ = svr_.bind_to_any_port("127.0.0.1");
    th_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeModelServer() {
    svr_.stop();
    th_.join();
  }

  void push(Scripted s) {
    std::lock_guard lk(mu_);
    script_.push_back(std::move(s));
  }
  void push_text(const std::string& t) {
    Scripted s;
    s.text = t;
    push(s);
  }
  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  struct Seen {
    std::string path, body;
    std::string headers;
  };
  std::vector<Seen> requests() const {
    std::lock_guard lk(mu_);
    return requests_;
  }
  int max_in_flight() const {
    std::lock_guard lk(mu_);
    return max_in_flight_;
  }
  std::size_t pending() const {
    std::lock_guard lk(mu_);
    return script_.size();
  }

 private:
  static std::string headers_of(const httplib::Request& r) {
    std::string h;
    for (auto& [k, v] : r.headers) h += k + ": " + v + "\n";
    return h;
  }
  static std::string openai_body(const Scripted& s) {
    nlohmann::json j = {
        {"id", "x"},
        {"object", "chat.completion"},
        {"choices",
         {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", s.text}}}, {"finish_reason", s.finish}}}},
        {"usage", {{"prompt_tokens", 100}, {"completion_tokens", 50}, {"total_tokens", 150}}}};
    return j.dump();
  }
  static std::string anthropic_body(const Scripted& s) {
    nlohmann::json j = {{"id", "x"},
                        {"type", "message"},
                        {"role", "assistant"},
                        {"content", {{{"type", "text"}, {"text", s.text}}}},
                        {"stop_reason", s.finish == "length" ? "max_tokens" : "end_turn"},
                        {"usage", {{"input_tokens", 120}, {"output_tokens", 60}}}};
    return j.dump();
  }

  httplib::Server svr_;
  std::thread th_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::deque<Scripted> script_;
  std::vector<Seen> requests_;
  std::atomic<int> in_flight_{0};
  int max_in_flight_ = 0;
};

}  // namespace khive::test
