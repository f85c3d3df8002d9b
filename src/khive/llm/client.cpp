#include "khive/llm/client.hpp"
#include <algorithm>

#include <curl/curl.h>
#include <dlfcn.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "khive/support/files.hpp"
#include "khive/support/subprocess.hpp"
#include "khive/support/text.hpp"

namespace khive::llm {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// libcurl, opened at first use: khive then starts on machines without libcurl (the GPU machine's image),
// where only the command provider and the tuner are used.
struct CurlApi {
  CURLcode (*global_init)(long) = nullptr;
  CURL* (*easy_init)() = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_perform)(CURL*) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
  std::string error;  // why it could not be loaded
};

const CurlApi& curl_api() {
  static CurlApi api = [] {
    CurlApi a;
    void* h = nullptr;
    for (const char* name : {"libcurl.so.4", "libcurl.so", "libcurl-gnutls.so.4"})
      if ((h = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!h) {
      a.error =
          "libcurl is not installed (libcurl.so.4 not found; Debian: apt-get install libcurl4); "
          "HTTP providers need it, the command provider does not";
      return a;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      if (!fn && a.error.empty()) a.error = fmt::format("libcurl lacks the symbol {}", name);
    };
    sym(a.global_init, "curl_global_init");
    sym(a.easy_init, "curl_easy_init");
    sym(a.easy_setopt, "curl_easy_setopt");
    sym(a.easy_perform, "curl_easy_perform");
    sym(a.easy_getinfo, "curl_easy_getinfo");
    sym(a.easy_cleanup, "curl_easy_cleanup");
    sym(a.easy_strerror, "curl_easy_strerror");
    sym(a.slist_append, "curl_slist_append");
    sym(a.slist_free_all, "curl_slist_free_all");
    if (a.error.empty()) a.global_init(CURL_GLOBAL_DEFAULT);  // once, before any thread uses curl
    return a;
  }();
  return api;
}

// Per-provider limit on requests in flight, shared by every agent of the process.
class Gate {
 public:
  explicit Gate(int limit) : limit_(limit) {}
  bool acquire(const std::atomic<bool>* stop) {
    std::unique_lock lk(mu_);
    while (busy_ >= limit_) {
      if (stop && stop->load()) return false;
      cv_.wait_for(lk, std::chrono::milliseconds(100));
    }
    ++busy_;
    return true;
  }
  void release() {
    {
      std::lock_guard lk(mu_);
      --busy_;
    }
    cv_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int limit_, busy_ = 0;
};
Gate& gate_for(const ProviderConfig& c) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Gate>> gates;
  std::string key = c.kind == ProviderKind::command ? "command:" + c.command : c.base_url + "|" + c.model;
  std::lock_guard lk(mu);
  auto& g = gates[key];
  if (!g) g = std::make_unique<Gate>(std::max(1, c.concurrency));
  return *g;
}
struct GateHold {
  Gate& g;
  bool held;
  GateHold(Gate& g, const std::atomic<bool>* stop) : g(g), held(g.acquire(stop)) {}
  ~GateHold() {
    if (held) g.release();
  }
};

bool stopped(const std::atomic<bool>* s) { return s && s->load(); }

// Sleeps up to `s` seconds, waking early on stop.
void nap(double s, const std::atomic<bool>* stop) {
  auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  while (Clock::now() < end && !stopped(stop)) {
    Clock::duration left = end - Clock::now();
    std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(50), left));
  }
}

struct HttpResult {
  CURLcode code = CURLE_OK;
  std::string curl_error;
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
};

size_t on_body(char* p, size_t sz, size_t n, void* ud) {
  static_cast<std::string*>(ud)->append(p, sz * n);
  return sz * n;
}
size_t on_header(char* p, size_t sz, size_t n, void* ud) {
  std::string line(p, sz * n);
  auto colon = line.find(':');
  if (colon != std::string::npos)
    (*static_cast<std::map<std::string, std::string>*>(ud))[lower(trim(line.substr(0, colon)))] =
        trim(line.substr(colon + 1));
  return sz * n;
}
int on_progress(void* ud, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return stopped(static_cast<const std::atomic<bool>*>(ud)) ? 1 : 0;  // non-zero aborts the transfer
}

HttpResult http_post(const std::string& url, const std::vector<std::string>& headers, const std::string& body,
                     const ProviderConfig& c, const std::atomic<bool>* stop) {
  const CurlApi& api = curl_api();
  HttpResult r;
  CURL* h = api.easy_init();
  if (!h) {
    r.code = CURLE_FAILED_INIT;
    r.curl_error = "curl_easy_init failed";
    return r;
  }
  curl_slist* hl = nullptr;
  for (auto& s : headers) hl = api.slist_append(hl, s.c_str());
  char err[CURL_ERROR_SIZE] = {0};
  api.easy_setopt(h, CURLOPT_URL, url.c_str());
  api.easy_setopt(h, CURLOPT_HTTPHEADER, hl);
  api.easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
  api.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.size()));
  api.easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_body);
  api.easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
  api.easy_setopt(h, CURLOPT_HEADERFUNCTION, &on_header);
  api.easy_setopt(h, CURLOPT_HEADERDATA, &r.headers);
  api.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, long(c.connect_timeout_s * 1000));
  api.easy_setopt(h, CURLOPT_TIMEOUT_MS, long(c.request_timeout_s * 1000));
  api.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM-based DNS timeouts
  api.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  api.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &on_progress);
  api.easy_setopt(h, CURLOPT_XFERINFODATA, stop);
  api.easy_setopt(h, CURLOPT_ERRORBUFFER, err);
  api.easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  r.code = api.easy_perform(h);
  api.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
  if (r.code != CURLE_OK) r.curl_error = err[0] ? err : api.easy_strerror(r.code);
  api.slist_free_all(hl);
  api.easy_cleanup(h);
  return r;
}

std::string excerpt(const std::string& s, std::size_t n = 300) {
  std::string t = s.size() > n ? s.substr(0, n) + "..." : s;
  for (auto& ch : t)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return t;
}

// The provider's own error text, when its body says one ({"error": {"message": ...}} in both protocols).
std::string provider_error(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("error")) {
    const auto& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
    if (e.is_string()) return e.get<std::string>();
  }
  return excerpt(body);
}

}  // namespace

std::optional<double> parse_retry_after(const std::string& value) {
  std::string v = trim(value);
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  double s = std::strtod(v.c_str(), &end);
  if (end && *end == 0 && s >= 0) return s;
  std::tm tm{};  // HTTP date: "Wed, 21 Oct 2015 07:28:00 GMT"
  if (strptime(v.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm)) {
    double d = std::difftime(timegm(&tm), std::time(nullptr));
    return std::max(0.0, d);
  }
  return std::nullopt;
}

LlmClient::LlmClient(ProviderConfig cfg, std::filesystem::path transcript_dir, std::string agent)
    : cfg_(std::move(cfg)), dir_(std::move(transcript_dir)), agent_(std::move(agent)) {
  if (!cfg_.api_key_env.empty())
    if (const char* k = std::getenv(cfg_.api_key_env.c_str())) key_ = k;
  if (!dir_.empty()) std::filesystem::create_directories(dir_);
  // A resumed run (e.g. after a pause for GPU evaluation) continues the numbering: earlier transcripts
  // are kept, not overwritten.
  if (!dir_.empty())
    for (auto& e : std::filesystem::directory_iterator(dir_)) {
      const std::string n = e.path().filename().string();
      if (n.size() > 5 && n[4] == '-' &&
          std::all_of(n.begin(), n.begin() + 4, [](char c) { return c >= '0' && c <= '9'; }))
        seq_ = std::max(seq_.load(), std::stoi(n.substr(0, 4)));
    }
}

std::string LlmClient::redact(std::string s) const {
  if (key_.size() >= 4)
    for (std::size_t p; (p = s.find(key_)) != std::string::npos;)
      s.replace(p, key_.size(), "<redacted:" + cfg_.api_key_env + ">");
  return s;
}

void LlmClient::save(int seq, const std::string& purpose, const std::string& what, const std::string& text) const {
  if (dir_.empty()) return;
  write_file_atomic(dir_ / fmt::format("{:04d}-{}.{}", seq, purpose.empty() ? "chat" : purpose, what), redact(text));
}

nlohmann::json LlmClient::request_body(const ChatRequest& req) const {
  nlohmann::json msgs = nlohmann::json::array();
  if (cfg_.kind == ProviderKind::openai && !req.system.empty())
    msgs.push_back({{"role", "system"}, {"content", req.system}});
  for (auto& m : req.messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
  nlohmann::json b = {{"model", cfg_.model}, {"messages", msgs}};
  if (cfg_.kind == ProviderKind::openai) {
    if (!cfg_.reasoning_effort.empty()) {
      // Reasoning models take max_completion_tokens (reasoning included) and refuse max_tokens.
      b["reasoning_effort"] = cfg_.reasoning_effort;
      b["max_completion_tokens"] = cfg_.max_tokens;
    } else {
      b["max_tokens"] = cfg_.max_tokens;
    }
    if (cfg_.temperature) b["temperature"] = *cfg_.temperature;
  } else {
    b["max_tokens"] = cfg_.max_tokens;
    if (!req.system.empty()) b["system"] = req.system;
    if (!cfg_.reasoning_effort.empty()) {
      // Extended thinking: the budget must stay below max_tokens; temperature may not be set with it.
      int budget = cfg_.reasoning_effort == "low" ? 2048 : cfg_.reasoning_effort == "medium" ? 8192 : 24576;
      budget = std::min(budget, cfg_.max_tokens - 1024);
      if (budget >= 1024)
        b["thinking"] = {{"type", "enabled"}, {"budget_tokens", budget}};
      else if (cfg_.temperature)
        b["temperature"] = *cfg_.temperature;
    } else if (cfg_.temperature) {
      b["temperature"] = *cfg_.temperature;
    }
  }
  return b;
}

std::string LlmClient::parse_reply(const std::string& body, ChatReply& r) const {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded())
    return fmt::format("the reply is not valid JSON ({} bytes: {})", body.size(), excerpt(body, 120));
  if (!j.is_object()) return "the reply is not a JSON object";
  try {
    if (cfg_.kind == ProviderKind::openai) {
      if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty())
        return "the reply has no choices[0] (expected an OpenAI chat completion)";
      const auto& c = j["choices"][0];
      if (!c.contains("message") || !c["message"].is_object()) return "choices[0] has no message";
      const auto& m = c["message"];
      r.text = m.contains("content") && m["content"].is_string() ? m["content"].get<std::string>() : "";
      r.finish_reason = c.value("finish_reason", nlohmann::json("")).is_string() ? c.value("finish_reason", "") : "";
      if (j.contains("usage") && j["usage"].is_object()) {
        r.input_tokens = j["usage"].value("prompt_tokens", int64_t(0));
        r.output_tokens = j["usage"].value("completion_tokens", int64_t(0));
      }
      r.truncated = r.finish_reason == "length";
    } else {
      if (!j.contains("content") || !j["content"].is_array())
        return "the reply has no content[] (expected an Anthropic message)";
      r.text.clear();
      for (auto& blk : j["content"])  // thinking blocks are skipped: only text is the answer
        if (blk.is_object() && blk.value("type", "") == "text" && blk.contains("text") && blk["text"].is_string())
          r.text += blk["text"].get<std::string>();
      r.finish_reason =
          j.contains("stop_reason") && j["stop_reason"].is_string() ? j["stop_reason"].get<std::string>() : "";
      if (j.contains("usage") && j["usage"].is_object()) {
        r.input_tokens = j["usage"].value("input_tokens", int64_t(0));
        r.output_tokens = j["usage"].value("output_tokens", int64_t(0));
      }
      r.truncated = r.finish_reason == "max_tokens";
    }
  } catch (const nlohmann::json::exception& e) {
    return fmt::format("unexpected field types in the reply: {}", e.what());
  }
  return "";
}

std::string LlmClient::command_prompt(const ChatRequest& req) const {
  // One text: the system part first, then the turns. A single user turn is passed as it is.
  std::string s;
  if (!req.system.empty()) s += req.system + "\n\n";
  if (req.messages.size() == 1) return s + req.messages[0].content;
  for (auto& m : req.messages) s += fmt::format("=== {} ===\n{}\n\n", m.role, m.content);
  return s;
}

ChatReply LlmClient::chat(const ChatRequest& req, const std::atomic<bool>* stop) {
  int seq = ++seq_;
  auto t0 = Clock::now();
  ChatReply r;
  double queued = 0;
  {
    GateHold hold(gate_for(cfg_), stop);
    queued = since(t0);  // behind other agents' requests: not the model's time
    if (!hold.held) {
      r.error = "stopped while waiting for a free provider slot";
    } else {
      r = cfg_.kind == ProviderKind::command ? chat_command(req, stop, seq) : chat_http(req, stop, seq);
    }
  }
  r.seconds = since(t0);
  r.queue_s = queued;
  r.usd = double(r.input_tokens) * cfg_.usd_per_input_token + double(r.output_tokens) * cfg_.usd_per_output_token;
  nlohmann::json meta = {{"ok", r.ok},
                         {"error", r.error},
                         {"attempts", r.attempts},
                         {"seconds", r.seconds},
                         {"queue_s", r.queue_s},
                         {"input_tokens", r.input_tokens},
                         {"output_tokens", r.output_tokens},
                         {"tokens_estimated", r.tokens_estimated},
                         {"usd", r.usd},
                         {"finish_reason", r.finish_reason},
                         {"truncated", r.truncated},
                         {"invalid_utf8_bytes", r.invalid_utf8}};
  save(seq, req.purpose, "meta.json", meta.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  if (!dir_.empty())
    r.transcript =
        (dir_ / fmt::format("{:04d}-{}.reply.txt", seq, req.purpose.empty() ? "chat" : req.purpose)).string();
  save(seq, req.purpose, "reply.txt", r.text);
  return r;
}

ChatReply LlmClient::chat_http(const ChatRequest& req, const std::atomic<bool>* stop, int seq) {
  ChatReply r;
  const CurlApi& api = curl_api();
  std::string url =
      cfg_.kind == ProviderKind::openai ? cfg_.base_url + "/chat/completions" : cfg_.base_url + "/v1/messages";
  if (!api.error.empty()) {
    r.error = fmt::format("provider {}: {}", url, api.error);
    return r;
  }
  if (!cfg_.api_key_env.empty() && key_.empty()) {
    r.error = fmt::format("provider {}: the environment variable {} (api_key_env) is not set", url, cfg_.api_key_env);
    return r;
  }
  std::vector<std::string> headers = {"Content-Type: application/json"};
  if (cfg_.kind == ProviderKind::openai) {
    if (!key_.empty()) headers.push_back("Authorization: Bearer " + key_);
  } else {
    if (!key_.empty()) headers.push_back("x-api-key: " + key_);
    headers.push_back("anthropic-version: 2023-06-01");
  }
  // A prompt may carry bytes that are not UTF-8 (a kernel source with Latin-1 comments): sent repaired, never thrown
  // on.
  std::string body = request_body(req).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  nlohmann::json saved = {{"url", url}, {"body", nlohmann::json::parse(body)}, {"headers", nlohmann::json::array()}};
  for (auto& h : headers) saved["headers"].push_back(redact(h));
  save(seq, req.purpose, "request.json", saved.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));

  std::mt19937_64 rng(std::hash<std::string>{}(agent_) ^ uint64_t(seq));
  double backoff = cfg_.backoff_initial_s;
  std::string last;
  for (int attempt = 0; attempt <= cfg_.max_retries; ++attempt) {
    if (stopped(stop)) {
      r.error = "stopped";
      return r;
    }
    r.attempts = attempt + 1;
    HttpResult h = http_post(url, headers, body, cfg_, stop);
    // A body that is not UTF-8 (a proxy's mangling, a model's raw bytes) is repaired here, so that neither the
    // JSON parser nor any record downstream meets invalid text; the reply itself is kept.
    r.invalid_utf8 = make_valid_utf8(h.body);
    std::optional<double> wait;  // set = retryable
    if (h.code != CURLE_OK) {
      if (stopped(stop)) {
        r.error = "stopped";
        return r;
      }
      // Refused or unknown host: nothing listens there; waiting will not help and must not hang the run.
      if (h.code == CURLE_COULDNT_CONNECT || h.code == CURLE_COULDNT_RESOLVE_HOST ||
          h.code == CURLE_COULDNT_RESOLVE_PROXY || h.code == CURLE_UNSUPPORTED_PROTOCOL ||
          h.code == CURLE_URL_MALFORMAT) {
        r.error = fmt::format("provider {} cannot be reached: {} (is the server running and base_url right?)", url,
                              h.curl_error);
        return r;
      }
      last = fmt::format("{} (curl {})", h.curl_error, int(h.code));  // timeout, reset, cut-off body: retry
      wait = backoff;
    } else if (h.status == 429) {
      auto ra = h.headers.count("retry-after") ? parse_retry_after(h.headers["retry-after"]) : std::nullopt;
      last = fmt::format("HTTP 429 rate limited: {}", provider_error(h.body));
      wait = ra ? std::min(*ra, 600.0) : backoff;
    } else if (h.status == 408 || h.status >= 500) {
      last = fmt::format("HTTP {}: {}", h.status, provider_error(h.body));
      wait = backoff;
    } else if (h.status < 200 || h.status >= 300) {
      r.error = fmt::format("provider {} refused the request: HTTP {}: {}", url, h.status, provider_error(h.body));
      save(seq, req.purpose, fmt::format("reply-{}.raw", attempt + 1), h.body);
      return r;
    } else {
      save(seq, req.purpose, "reply.json", h.body);
      std::string perr = parse_reply(h.body, r);
      if (perr.empty()) {
        r.ok = true;
        return r;
      }
      last = perr;  // a body cut off in transit or garbled by a proxy: ask again
      wait = backoff;
    }
    if (attempt == cfg_.max_retries) break;
    double jitter = std::uniform_real_distribution<double>(0.8, 1.2)(rng);
    double w = h.status == 429 && wait != backoff ? *wait : *wait * jitter;  // Retry-After exactly as asked
    nap(w, stop);
    backoff = std::min(cfg_.backoff_max_s, backoff * 2);
  }
  r.ok = false;
  r.error = fmt::format("provider {} failed after {} attempts; last: {}", url, r.attempts, last);
  return r;
}

ChatReply LlmClient::chat_command(const ChatRequest& req, const std::atomic<bool>* stop, int seq) {
  ChatReply r;
  r.attempts = 1;
  std::string prompt = command_prompt(req);
  std::string cmd = cfg_.command;
  ProcessSpec ps;
  ps.timeout_s = cfg_.request_timeout_s;
  std::filesystem::path pf;
  const std::string ph = "{prompt_file}";
  if (cmd.find(ph) != std::string::npos) {
    std::filesystem::path d = dir_.empty() ? make_temp_dir(cache_root(), "llm-prompt") : dir_;
    pf = d / fmt::format("{:04d}-{}.prompt.md", seq, req.purpose.empty() ? "chat" : req.purpose);
    write_file_atomic(pf, prompt);
    for (std::size_t p; (p = cmd.find(ph)) != std::string::npos;) cmd.replace(p, ph.size(), "'" + pf.string() + "'");
  } else {
    ps.stdin_data = prompt;
    save(seq, req.purpose, "prompt.md", prompt);
  }
  ps.argv = {"/bin/sh", "-c", cmd};
  std::map<std::string, std::string> env = inherited_env();
  env["KHIVE_LLM_AGENT"] = agent_;  // lets a relay script keep agents apart
  env["KHIVE_LLM_PURPOSE"] = req.purpose;
  env["KHIVE_LLM_SEQ"] = std::to_string(seq);
  ps.env = env;
  ps.cancel = stop;  // Ctrl-C ends a pending answer (a relay may wait for an hour) at once
  ProcessResult p = run_process(ps);
  if (stopped(stop)) {
    r.error = "stopped";
    return r;
  }
  r.input_tokens = int64_t(prompt.size() / 4);
  r.tokens_estimated = true;
  if (!p.ok()) {
    std::string tail = p.err.size() > 800 ? p.err.substr(p.err.size() - 800) : p.err;
    make_valid_utf8(tail);
    r.error = fmt::format("command provider `{}` failed: {}{}", cfg_.command, p.describe(),
                          tail.empty() ? "" : "; stderr: " + trim(tail));
    return r;
  }
  if (trim(p.out).empty()) {
    r.error = fmt::format("command provider `{}` printed nothing on stdout", cfg_.command);
    return r;
  }
  r.text = p.out;
  r.invalid_utf8 = make_valid_utf8(r.text);  // a command may print anything; the reply is kept, repaired
  r.output_tokens = int64_t(p.out.size() / 4);
  r.finish_reason = "stop";
  r.ok = true;
  return r;
}

}  // namespace khive::llm
