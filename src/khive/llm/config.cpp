// LLM agent configuration: a JSON or TOML file with one flat table of keys (docs/llm.md). Unknown keys
// are errors, so a misspelt "temprature" never silently falls back to a default.
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "khive/llm/llm_agent.hpp"
#include "khive/support/files.hpp"

namespace khive {

std::string_view provider_kind_name(ProviderKind k) {
  switch (k) {
    case ProviderKind::openai: return "openai";
    case ProviderKind::anthropic: return "anthropic";
    case ProviderKind::command: return "command";
  }
  return "?";
}

namespace {

[[noreturn]] void bad(const std::string& origin, const std::string& key, const std::string& expected,
                      const nlohmann::json* got = nullptr) {
  std::string g = got ? fmt::format(", got {}", got->dump()) : "";
  throw std::runtime_error(fmt::format("{}: {}: expected {}{}", origin, key, expected, g));
}

double num(const nlohmann::json& j, const std::string& origin, const std::string& key, double lo, double hi) {
  if (!j.is_number()) bad(origin, key, fmt::format("a number in [{}, {}]", lo, hi), &j);
  double v = j.get<double>();
  if (v < lo || v > hi) bad(origin, key, fmt::format("a number in [{}, {}]", lo, hi), &j);
  return v;
}
int integer(const nlohmann::json& j, const std::string& origin, const std::string& key, int lo, int hi) {
  if (!j.is_number_integer()) bad(origin, key, fmt::format("an integer in [{}, {}]", lo, hi), &j);
  int64_t v = j.get<int64_t>();
  if (v < lo || v > hi) bad(origin, key, fmt::format("an integer in [{}, {}]", lo, hi), &j);
  return int(v);
}
std::string str(const nlohmann::json& j, const std::string& origin, const std::string& key) {
  if (!j.is_string()) bad(origin, key, "a string", &j);
  return j.get<std::string>();
}

// toml++ table -> JSON (the TOML form is a convenience; one validation path for both).
nlohmann::json toml_to_json(const toml::node& n) {
  if (auto t = n.as_table()) {
    nlohmann::json o = nlohmann::json::object();
    for (auto&& [k, v] : *t) o[std::string(k.str())] = toml_to_json(v);
    return o;
  }
  if (auto a = n.as_array()) {
    nlohmann::json o = nlohmann::json::array();
    for (auto&& v : *a) o.push_back(toml_to_json(v));
    return o;
  }
  if (auto s = n.as_string()) return s->get();
  if (auto i = n.as_integer()) return i->get();
  if (auto f = n.as_floating_point()) return f->get();
  if (auto b = n.as_boolean()) return b->get();
  return "(date/time)";   // dates and times: no key takes them, the validation rejects this text
}

}  // namespace

LlmAgentOptions parse_llm_config(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) bad(origin, "(top level)", "an object/table of settings", &j);
  static const std::set<std::string> known = {
      "name", "provider", "base_url", "model", "api_key_env", "temperature", "max_tokens", "reasoning_effort",
      "concurrency", "usd_per_input_token", "usd_per_output_token", "usd_per_mtok", "command",
      "connect_timeout_s", "request_timeout_s", "max_retries", "backoff_initial_s", "backoff_max_s",
      "repair_attempts", "profile_depth", "edit_retries", "generate_attempts", "max_rewrite_fraction",
      "strategies", "prompts_dir"};
  for (auto& [k, v] : j.items())
    if (!known.count(k)) bad(origin, k, "one of the documented keys (docs/llm.md); unknown key");

  LlmAgentOptions o;
  ProviderConfig& p = o.provider;
  if (!j.contains("provider")) bad(origin, "provider", "\"openai\", \"anthropic\" or \"command\" (required)");
  std::string kind = str(j["provider"], origin, "provider");
  if (kind == "openai") p.kind = ProviderKind::openai;
  else if (kind == "anthropic") p.kind = ProviderKind::anthropic;
  else if (kind == "command") p.kind = ProviderKind::command;
  else bad(origin, "provider", "\"openai\", \"anthropic\" or \"command\"", &j["provider"]);

  if (j.contains("name")) o.name = str(j["name"], origin, "name");
  if (j.contains("base_url")) p.base_url = str(j["base_url"], origin, "base_url");
  if (j.contains("model")) p.model = str(j["model"], origin, "model");
  if (j.contains("api_key_env")) p.api_key_env = str(j["api_key_env"], origin, "api_key_env");
  if (j.contains("temperature")) p.temperature = num(j["temperature"], origin, "temperature", 0, 2);
  if (j.contains("max_tokens")) p.max_tokens = integer(j["max_tokens"], origin, "max_tokens", 16, 1 << 21);
  if (j.contains("reasoning_effort")) {
    p.reasoning_effort = str(j["reasoning_effort"], origin, "reasoning_effort");
    if (p.reasoning_effort != "" && p.reasoning_effort != "low" && p.reasoning_effort != "medium" &&
        p.reasoning_effort != "high")
      bad(origin, "reasoning_effort", "\"low\", \"medium\" or \"high\"", &j["reasoning_effort"]);
  }
  if (j.contains("concurrency")) p.concurrency = integer(j["concurrency"], origin, "concurrency", 1, 1024);
  if (j.contains("usd_per_input_token"))
    p.usd_per_input_token = num(j["usd_per_input_token"], origin, "usd_per_input_token", 0, 1);
  if (j.contains("usd_per_output_token"))
    p.usd_per_output_token = num(j["usd_per_output_token"], origin, "usd_per_output_token", 0, 1);
  if (j.contains("usd_per_mtok")) {   // the way price lists quote it: dollars per million tokens
    const auto& m = j["usd_per_mtok"];
    if (!m.is_object()) bad(origin, "usd_per_mtok", "a table {input = N, output = N}", &m);
    for (auto& [k, v] : m.items()) {
      if (k == "input") p.usd_per_input_token = num(v, origin, "usd_per_mtok.input", 0, 1e6) / 1e6;
      else if (k == "output") p.usd_per_output_token = num(v, origin, "usd_per_mtok.output", 0, 1e6) / 1e6;
      else bad(origin, "usd_per_mtok." + k, "only the keys input and output");
    }
  }
  if (j.contains("command")) p.command = str(j["command"], origin, "command");
  if (j.contains("connect_timeout_s")) p.connect_timeout_s = num(j["connect_timeout_s"], origin, "connect_timeout_s", 0.1, 600);
  if (j.contains("request_timeout_s")) p.request_timeout_s = num(j["request_timeout_s"], origin, "request_timeout_s", 1, 86400);
  if (j.contains("max_retries")) p.max_retries = integer(j["max_retries"], origin, "max_retries", 0, 100);
  if (j.contains("backoff_initial_s")) p.backoff_initial_s = num(j["backoff_initial_s"], origin, "backoff_initial_s", 0, 3600);
  if (j.contains("backoff_max_s")) p.backoff_max_s = num(j["backoff_max_s"], origin, "backoff_max_s", 0, 3600);

  if (j.contains("repair_attempts")) o.repair_attempts = integer(j["repair_attempts"], origin, "repair_attempts", 0, 100);
  if (j.contains("profile_depth")) o.profile_depth = integer(j["profile_depth"], origin, "profile_depth", 0, 1000);
  if (j.contains("edit_retries")) o.edit_retries = integer(j["edit_retries"], origin, "edit_retries", 0, 20);
  if (j.contains("generate_attempts")) o.generate_attempts = integer(j["generate_attempts"], origin, "generate_attempts", 1, 100);
  if (j.contains("max_rewrite_fraction"))
    o.max_rewrite_fraction = num(j["max_rewrite_fraction"], origin, "max_rewrite_fraction", 0.05, 1);
  if (j.contains("prompts_dir")) o.prompts_dir = str(j["prompts_dir"], origin, "prompts_dir");
  if (j.contains("strategies")) {
    const auto& s = j["strategies"];
    if (!s.is_array()) bad(origin, "strategies", "a list of strategy names or {name, description} tables", &s);
    for (std::size_t i = 0; i < s.size(); ++i) {
      std::string key = fmt::format("strategies[{}]", i);
      Strategy st;
      if (s[i].is_string()) st.name = s[i].get<std::string>();
      else if (s[i].is_object() && s[i].contains("name")) {
        st.name = str(s[i]["name"], origin, key + ".name");
        if (s[i].contains("description")) st.description = str(s[i]["description"], origin, key + ".description");
      } else bad(origin, key, "a strategy name or a {name, description} table", &s[i]);
      if (st.name.empty()) bad(origin, key, "a non-empty strategy name");
      o.strategies.push_back(st);
    }
  }

  // Cross-field requirements, per provider.
  if (p.kind == ProviderKind::command) {
    if (p.command.empty()) bad(origin, "command", "the command to run (required for provider \"command\")");
  } else {
    if (p.model.empty()) bad(origin, "model", fmt::format("a model name (required for provider \"{}\")", kind));
    if (p.base_url.empty())
      p.base_url = p.kind == ProviderKind::openai ? "https://api.openai.com/v1" : "https://api.anthropic.com";
    while (!p.base_url.empty() && p.base_url.back() == '/') p.base_url.pop_back();
    if (p.base_url.rfind("http://", 0) != 0 && p.base_url.rfind("https://", 0) != 0)
      bad(origin, "base_url", "an http:// or https:// URL", &j["base_url"]);
  }
  if (p.backoff_max_s < p.backoff_initial_s) bad(origin, "backoff_max_s", "a value >= backoff_initial_s");
  if (o.name.empty()) o.name = p.kind == ProviderKind::command ? "cmd" : p.model;
  return o;
}

LlmAgentOptions load_llm_config(const std::filesystem::path& path) {
  std::string origin = path.string();
  if (!std::filesystem::is_regular_file(path))
    throw std::runtime_error(fmt::format("{}: expected an LLM agent config file (.json or .toml); not found", origin));
  std::string text = read_file(path);
  nlohmann::json j;
  std::string ext = path.extension().string();
  if (ext == ".toml") {
    try {
      toml::table t = toml::parse(text, origin);
      j = toml_to_json(t);
    } catch (const toml::parse_error& e) {
      throw std::runtime_error(fmt::format("{}:{}:{}: expected valid TOML: {}", origin, e.source().begin.line,
                                           e.source().begin.column, e.description()));
    }
  } else if (ext == ".json") {
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw std::runtime_error(fmt::format("{}: expected valid JSON: {}", origin, e.what()));
    }
  } else {
    throw std::runtime_error(fmt::format("{}: expected a .json or .toml extension", origin));
  }
  LlmAgentOptions o = parse_llm_config(j, origin);
  // A relative prompts_dir is relative to the config file, like the task format's paths.
  if (!o.prompts_dir.empty() && o.prompts_dir.is_relative())
    o.prompts_dir = std::filesystem::absolute(path).parent_path() / o.prompts_dir;
  return o;
}

}  // namespace khive
