// LLM agent configuration: a JSON or TOML file with one flat table of keys (docs/llm.md). Unknown keys
// are errors, so a misspelt "temprature" never silently falls back to a default.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "khive/llm/llm_agent.hpp"
#include "khive/support/files.hpp"
#include "khive/support/json_fields.hpp"

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

using Fields = JsonFields;  // the shared reader; errors read "<file>: <key>: expected ..., got ..."

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
  return "(date/time)";  // dates and times: no key takes them, the validation rejects this text
}

// An integer of the config in [lo, hi]: a TOML or JSON integer (16.0 is not one, unlike a task file's axes).
int integer(const Fields& r, const nlohmann::json& j, const std::string& key, int lo, int hi) {
  if (!j.is_number_integer()) r.fail(key, fmt::format("an integer in [{}, {}]", lo, hi), r.got(j));
  return int(r.integer_in(j, key, lo, hi));
}

// provider and the keys of the connection: endpoint, model, sampling, prices, timeouts and retries.
void read_provider(const Fields& r, const nlohmann::json& j, ProviderConfig& p) {
  if (!j.contains("provider")) r.fail("provider", "\"openai\", \"anthropic\" or \"command\" (required)");
  std::string kind = r.string(j["provider"], "provider", false);
  if (kind == "openai")
    p.kind = ProviderKind::openai;
  else if (kind == "anthropic")
    p.kind = ProviderKind::anthropic;
  else if (kind == "command")
    p.kind = ProviderKind::command;
  else
    r.fail("provider", "\"openai\", \"anthropic\" or \"command\"", r.got(j["provider"]));

  if (j.contains("base_url")) p.base_url = r.string(j["base_url"], "base_url", false);
  if (j.contains("model")) p.model = r.string(j["model"], "model", false);
  if (j.contains("api_key_env")) p.api_key_env = r.string(j["api_key_env"], "api_key_env", false);
  if (j.contains("temperature")) p.temperature = r.number_in(j["temperature"], "temperature", 0, 2);
  if (j.contains("max_tokens")) p.max_tokens = integer(r, j["max_tokens"], "max_tokens", 16, 1 << 21);
  if (j.contains("reasoning_effort")) {
    p.reasoning_effort = r.string(j["reasoning_effort"], "reasoning_effort", false);
    if (p.reasoning_effort != "" && p.reasoning_effort != "low" && p.reasoning_effort != "medium" &&
        p.reasoning_effort != "high")
      r.fail("reasoning_effort", "\"low\", \"medium\" or \"high\"", r.got(j["reasoning_effort"]));
  }
  if (j.contains("concurrency")) p.concurrency = integer(r, j["concurrency"], "concurrency", 1, 1024);
  if (j.contains("usd_per_input_token"))
    p.usd_per_input_token = r.number_in(j["usd_per_input_token"], "usd_per_input_token", 0, 1);
  if (j.contains("usd_per_output_token"))
    p.usd_per_output_token = r.number_in(j["usd_per_output_token"], "usd_per_output_token", 0, 1);
  if (j.contains("usd_per_mtok")) {  // the way price lists quote it: dollars per million tokens
    const auto& m = j["usd_per_mtok"];
    if (!m.is_object()) r.fail("usd_per_mtok", "a table {input = N, output = N}", r.got(m));
    for (auto& [k, v] : m.items()) {
      if (k == "input")
        p.usd_per_input_token = r.number_in(v, "usd_per_mtok.input", 0, 1e6) / 1e6;
      else if (k == "output")
        p.usd_per_output_token = r.number_in(v, "usd_per_mtok.output", 0, 1e6) / 1e6;
      else
        r.fail("usd_per_mtok." + k, "only the keys input and output");
    }
  }
  if (j.contains("command")) p.command = r.string(j["command"], "command", false);
  if (j.contains("connect_timeout_s"))
    p.connect_timeout_s = r.number_in(j["connect_timeout_s"], "connect_timeout_s", 0.1, 600);
  if (j.contains("request_timeout_s"))
    p.request_timeout_s = r.number_in(j["request_timeout_s"], "request_timeout_s", 1, 86400);
  if (j.contains("max_retries")) p.max_retries = integer(r, j["max_retries"], "max_retries", 0, 100);
  if (j.contains("backoff_initial_s"))
    p.backoff_initial_s = r.number_in(j["backoff_initial_s"], "backoff_initial_s", 0, 3600);
  if (j.contains("backoff_max_s")) p.backoff_max_s = r.number_in(j["backoff_max_s"], "backoff_max_s", 0, 3600);
}

// The agent's own keys: retries, profiling depth, prompts and strategies.
void read_agent_options(const Fields& r, const nlohmann::json& j, LlmAgentOptions& o) {
  if (j.contains("name")) o.name = r.string(j["name"], "name", false);
  if (j.contains("repair_attempts")) o.repair_attempts = integer(r, j["repair_attempts"], "repair_attempts", 0, 100);
  if (j.contains("profile_depth")) o.profile_depth = integer(r, j["profile_depth"], "profile_depth", 0, 1000);
  if (j.contains("edit_retries")) o.edit_retries = integer(r, j["edit_retries"], "edit_retries", 0, 20);
  if (j.contains("generate_attempts"))
    o.generate_attempts = integer(r, j["generate_attempts"], "generate_attempts", 1, 100);
  if (j.contains("max_rewrite_fraction"))
    o.max_rewrite_fraction = r.number_in(j["max_rewrite_fraction"], "max_rewrite_fraction", 0.05, 1);
  if (j.contains("prompts_dir")) o.prompts_dir = r.string(j["prompts_dir"], "prompts_dir", false);
  if (!j.contains("strategies")) return;
  const auto& s = j["strategies"];
  if (!s.is_array()) r.fail("strategies", "a list of strategy names or {name, description} tables", r.got(s));
  for (std::size_t i = 0; i < s.size(); ++i) {
    std::string key = fmt::format("strategies[{}]", i);
    Strategy st;
    if (s[i].is_string())
      st.name = s[i].get<std::string>();
    else if (s[i].is_object() && s[i].contains("name")) {
      st.name = r.string(s[i]["name"], key + ".name", false);
      if (s[i].contains("description")) st.description = r.string(s[i]["description"], key + ".description", false);
    } else
      r.fail(key, "a strategy name or a {name, description} table", r.got(s[i]));
    if (st.name.empty()) r.fail(key, "a non-empty strategy name");
    o.strategies.push_back(st);
  }
}

}  // namespace

LlmAgentOptions parse_llm_config(const nlohmann::json& j, const std::string& origin) {
  const Fields r(origin, "", nullptr, literal_json<nlohmann::json>);  // errors show values as JSON text
  if (!j.is_object()) r.fail("(top level)", "an object/table of settings", r.got(j));
  static const std::vector<std::string> known = {"name",
                                                 "provider",
                                                 "base_url",
                                                 "model",
                                                 "api_key_env",
                                                 "temperature",
                                                 "max_tokens",
                                                 "reasoning_effort",
                                                 "concurrency",
                                                 "usd_per_input_token",
                                                 "usd_per_output_token",
                                                 "usd_per_mtok",
                                                 "command",
                                                 "connect_timeout_s",
                                                 "request_timeout_s",
                                                 "max_retries",
                                                 "backoff_initial_s",
                                                 "backoff_max_s",
                                                 "repair_attempts",
                                                 "profile_depth",
                                                 "edit_retries",
                                                 "generate_attempts",
                                                 "max_rewrite_fraction",
                                                 "strategies",
                                                 "prompts_dir"};
  if (const auto k = Fields::unknown_key(j, known)) r.fail(*k, "one of the documented keys (docs/llm.md); unknown key");

  LlmAgentOptions o;
  ProviderConfig& p = o.provider;
  read_provider(r, j, p);
  read_agent_options(r, j, o);

  // Cross-field requirements, per provider.
  if (p.kind == ProviderKind::command) {
    if (p.command.empty()) r.fail("command", "the command to run (required for provider \"command\")");
  } else {
    if (p.model.empty())
      r.fail("model", fmt::format("a model name (required for provider \"{}\")", provider_kind_name(p.kind)));
    if (p.base_url.empty())
      p.base_url = p.kind == ProviderKind::openai ? "https://api.openai.com/v1" : "https://api.anthropic.com";
    while (!p.base_url.empty() && p.base_url.back() == '/') p.base_url.pop_back();
    if (p.base_url.rfind("http://", 0) != 0 && p.base_url.rfind("https://", 0) != 0)
      r.fail("base_url", "an http:// or https:// URL", r.got(j["base_url"]));
  }
  if (p.backoff_max_s < p.backoff_initial_s) r.fail("backoff_max_s", "a value >= backoff_initial_s");
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
