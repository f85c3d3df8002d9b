// Inlining a candidate's local includes (amalgamate.hpp).
#include "khive/compile/amalgamate.hpp"

#include "khive/compile/source_scan.hpp"

#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace khive {
namespace fs = std::filesystem;

namespace {

// Reads a file by its (normalized, relative or absolute) key; nullopt-like empty optional when absent.
using Reader = std::function<bool(const std::string& key, std::string& out)>;

std::string join_key(const std::string& dir, const std::string& rel) {
  fs::path p = dir.empty() ? fs::path(rel) : fs::path(dir) / rel;
  return p.lexically_normal().generic_string();
}

std::string parent_of(const std::string& key) { return fs::path(key).parent_path().generic_string(); }

std::string escape_line_name(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

// Appends `key`'s text to out with its local includes inlined; returns whether anything was inlined.
bool inline_file(const std::string& key, const std::string& shown, const Reader& read, std::set<std::string>& done,
                 std::string& out, bool top) {
  std::string text;
  if (!read(key, text)) throw std::runtime_error("cannot read " + key);
  std::istringstream in(text);
  std::string line;
  bool changed = false;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (const std::optional<std::string> name = local_include(line)) {
      std::string inc = join_key(parent_of(key), *name);
      std::string probe;
      if (read(inc, probe)) {
        changed = true;
        if (!done.count(inc)) {
          done.insert(inc);
          out += "#line 1 \"" + escape_line_name(*name) + "\"\n";
          inline_file(inc, *name, read, done, out, false);
          out += "#line " + std::to_string(n + 1) + " \"" + escape_line_name(shown) + "\"\n";
        } else {
          out += "\n";  // already inlined (#pragma once semantics); keeps the line count
        }
        continue;
      }
    }
    if (!top && is_pragma_once(line)) {  // an inlined header: once is already guaranteed
      out += "\n";
      continue;
    }
    out += line + "\n";
  }
  return changed;
}

}  // namespace

std::string amalgamate_source(const fs::path& source) {
  const fs::path dir = fs::absolute(source).parent_path();
  std::error_code dir_ec;
  const fs::path real_dir = fs::weakly_canonical(dir, dir_ec);
  // Only files in the candidate's own folder or below are inlined: khive reads them with the user's rights, so
  // `#include "../../etc/hostname"` or an absolute path, or a link pointing out, is left to the compiler, which runs
  // in khive-jail and cannot read it (builder.cpp).
  Reader read = [&](const std::string& key, std::string& out) {
    const fs::path k(key);
    if (k.is_absolute() || k.empty() || *k.begin() == "..") return false;
    fs::path p = dir / k;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) return false;
    const fs::path real = fs::weakly_canonical(p, ec);
    if (ec || dir_ec) return false;
    const auto rel = real.lexically_relative(real_dir);
    if (rel.empty() || *rel.begin() == "..") return false;
    std::ifstream f(p, std::ios::binary);
    if (!f) return false;
    std::ostringstream ss;
    ss << f.rdbuf();
    out = ss.str();
    return true;
  };
  const std::string name = source.filename().string();
  std::string original;
  if (!read(name, original)) throw std::runtime_error("cannot read " + source.string());
  std::set<std::string> done = {name};
  std::string out;
  if (!inline_file(name, name, read, done, out, true)) return original;
  return out;
}

std::string amalgamate_files(const std::vector<SourceFile>& files, const std::string& entry,
                             const std::vector<std::string>& extra_units) {
  std::map<std::string, std::string> by_key;
  for (const auto& f : files) by_key[fs::path(f.path).lexically_normal().generic_string()] = f.content;
  Reader read = [&](const std::string& key, std::string& out) {
    auto it = by_key.find(key);
    if (it == by_key.end()) return false;
    out = it->second;
    return true;
  };
  std::set<std::string> done;
  std::string out;
  std::vector<std::string> units = {entry};
  units.insert(units.end(), extra_units.begin(), extra_units.end());
  for (const auto& u : units) {
    std::string key = fs::path(u).lexically_normal().generic_string();
    if (done.count(key)) continue;
    done.insert(key);
    out += "#line 1 \"" + escape_line_name(u) + "\"\n";
    inline_file(key, u, read, done, out, true);
  }
  return out;
}

}  // namespace khive
