// The prompt pack (prompts/): files with {{name}} placeholders and {{> file}} includes. A backend variant
// (prompts/cpu/, prompts/cuda/) holds the files whose text differs per backend — the system prompt, the
// optimization menus — and wins over the shared file of the same name.
//
//   PromptPack pack(find_prompts_dir(opts.prompts_dir));
//   pack.use_variant("cpu");   // prompts/cpu/<file> first, then prompts/<file>
//   std::string text = pack.render("repair.md", {{"task_name", t.name}, ...});   // throws on an unknown placeholder
#pragma once
#include <filesystem>
#include <map>
#include <mutex>
#include <string>

namespace khive::llm {

using PromptVars = std::map<std::string, std::string>;

class PromptPack {
 public:
  explicit PromptPack(std::filesystem::path dir);
  const std::filesystem::path& dir() const { return dir_; }
  // The backend's subfolder ("cpu", "cuda"; "" = none). Set before rendering, from the thread that renders.
  void use_variant(const std::string& variant);
  bool has(const std::string& file) const;
  std::string raw(const std::string& file) const;  // throws std::runtime_error naming the file
  // Values are inserted as they are (never scanned again), so a kernel containing "{{" is harmless.
  std::string render(const std::string& file, const PromptVars& vars) const;

 private:
  std::string render_text(const std::string& file, const std::string& text, const PromptVars& vars, int depth) const;
  std::filesystem::path path_of(const std::string& file) const;  // the variant's file when it has one
  std::filesystem::path dir_;
  std::string variant_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::string> cache_;  // files are read once per pack
};

// explicit (when set), else $KHIVE_PROMPTS, else prompts/ beside the build (<exe>/../../prompts), else the
// source tree's. Throws naming every place looked at when none holds system.md.
std::filesystem::path find_prompts_dir(const std::filesystem::path& explicit_dir);

}  // namespace khive::llm
