#include "khive/llm/prompts.hpp"

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "khive/support/files.hpp"

namespace khive::llm {

PromptPack::PromptPack(std::filesystem::path dir) : dir_(std::move(dir)) {}

void PromptPack::use_variant(const std::string& variant) {
  std::lock_guard lk(mu_);
  variant_ = variant;
}

std::filesystem::path PromptPack::path_of(const std::string& file) const {
  if (!variant_.empty())
    if (auto v = dir_ / variant_ / file; std::filesystem::is_regular_file(v)) return v;
  return dir_ / file;
}

bool PromptPack::has(const std::string& file) const {
  std::lock_guard lk(mu_);
  return std::filesystem::is_regular_file(path_of(file));
}

std::string PromptPack::raw(const std::string& file) const {
  std::lock_guard lk(mu_);
  const std::string key = variant_ + "|" + file;
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  auto p = path_of(file);
  if (!std::filesystem::is_regular_file(p))
    throw std::runtime_error(fmt::format("{}: expected a prompt file of the pack; not found", p.string()));
  return cache_[key] = read_file(p);
}

std::string PromptPack::render(const std::string& file, const PromptVars& vars) const {
  return render_text(file, raw(file), vars, 0);
}

std::string PromptPack::render_text(const std::string& file, const std::string& text, const PromptVars& vars,
                                    int depth) const {
  if (depth > 8)
    throw std::runtime_error(fmt::format("{}: includes nested more than 8 deep (a cycle?)", (dir_ / file).string()));
  std::string out;
  out.reserve(text.size() * 2);
  std::size_t i = 0;
  while (i < text.size()) {
    auto open = text.find("{{", i);
    if (open == std::string::npos) {
      out.append(text, i);
      break;
    }
    out.append(text, i, open - i);
    auto close = text.find("}}", open + 2);
    if (close == std::string::npos)
      throw std::runtime_error(fmt::format("{}: placeholder opened with {{{{ and not closed", (dir_ / file).string()));
    std::string name = text.substr(open + 2, close - open - 2);
    while (!name.empty() && name.front() == ' ') name.erase(name.begin());
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (!name.empty() && name[0] == '>') {
      std::string inc = name.substr(1);
      while (!inc.empty() && inc.front() == ' ') inc.erase(inc.begin());
      out += render_text(inc, raw(inc), vars, depth + 1);
    } else {
      auto v = vars.find(name);
      if (v == vars.end())
        throw std::runtime_error(fmt::format("{}: placeholder {{{{{}}}}}: expected a value the agent provides; unknown",
                                             (dir_ / file).string(), name));
      out += v->second;
    }
    i = close + 2;
  }
  return out;
}

std::filesystem::path find_prompts_dir(const std::filesystem::path& explicit_dir) {
  std::vector<std::filesystem::path> tried;
  auto ok = [&](const std::filesystem::path& d) {
    tried.push_back(d);
    return !d.empty() && std::filesystem::is_regular_file(d / "system.md");
  };
  if (!explicit_dir.empty()) {
    if (ok(explicit_dir)) return explicit_dir;
    throw std::runtime_error(
        fmt::format("{}: expected a prompt pack (a folder with system.md); not found", explicit_dir.string()));
  }
  if (const char* e = std::getenv("KHIVE_PROMPTS"); e && *e) {
    if (ok(e)) return e;
    throw std::runtime_error(fmt::format("$KHIVE_PROMPTS={}: expected a prompt pack (a folder with system.md)", e));
  }
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    std::filesystem::path exe(std::string(buf, std::size_t(n)));
    // build-X/bin/khive and build-X/tests/unit_llm both sit two levels under the repository root.
    if (auto d = exe.parent_path().parent_path().parent_path() / "prompts"; ok(d)) return d;
  }
#ifdef KHIVE_SOURCE_DIR
  if (auto d = std::filesystem::path(KHIVE_SOURCE_DIR) / "prompts"; ok(d)) return d;
#endif
  std::string list;
  for (auto& t : tried) list += (list.empty() ? "" : ", ") + t.string();
  throw std::runtime_error(
      fmt::format("no prompt pack found (looked in: {}); set prompts_dir or $KHIVE_PROMPTS", list));
}

}  // namespace khive::llm
