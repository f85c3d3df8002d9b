#include "khive/compile/source_scan.hpp"

namespace khive {

namespace {

// \s in ECMAScript on ASCII: space, tab, LF, VT, FF, CR.
bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
bool word(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

std::size_t skip_space(std::string_view s, std::size_t i) {
  while (i < s.size() && space(s[i])) ++i;
  return i;
}

// s[i..] begins with w.
bool at(std::string_view s, std::size_t i, std::string_view w) { return s.substr(i, w.size()) == w; }

}  // namespace

std::optional<std::string> local_include(std::string_view line) {
  std::size_t i = skip_space(line, 0);
  if (i >= line.size() || line[i] != '#') return std::nullopt;
  i = skip_space(line, i + 1);
  if (!at(line, i, "include")) return std::nullopt;
  i = skip_space(line, i + 7);
  if (i >= line.size() || line[i] != '"') return std::nullopt;
  const std::size_t close = line.find('"', i + 1);
  if (close == std::string_view::npos || close == i + 1) return std::nullopt;
  std::size_t j = skip_space(line, close + 1);
  if (j < line.size() && !at(line, j, "//")) return std::nullopt;
  return std::string(line.substr(i + 1, close - i - 1));
}

bool is_pragma_once(std::string_view line) {
  std::size_t i = skip_space(line, 0);
  if (i >= line.size() || line[i] != '#') return false;
  i = skip_space(line, i + 1);
  if (!at(line, i, "pragma")) return false;
  const std::size_t k = i + 6;
  i = skip_space(line, k);
  if (i == k || !at(line, i, "once")) return false;  // \s+ between the words
  return skip_space(line, i + 4) == line.size();
}

namespace {

// Where the first definition of `fn` starts (the position of its name), as function_params finds it.
std::optional<std::size_t> function_definition(std::string_view src, std::string_view fn) {
  if (fn.empty()) return std::nullopt;
  // The first ')' after the last '(' tried: every later '(' before it shares it, so the scan stays linear.
  std::size_t close = std::string_view::npos;
  bool have_close = false;
  for (std::size_t p = src.find(fn); p != std::string_view::npos; p = src.find(fn, p + 1)) {
    if (p > 0 && word(src[p - 1])) continue;  // \b before fn (an identifier)
    std::size_t i = skip_space(src, p + fn.size());
    if (i >= src.size() || src[i] != '(') continue;
    if (!have_close || i >= close) {
      close = src.find(')', i + 1);
      have_close = true;
    }
    if (close == std::string_view::npos) return std::nullopt;  // no ')' after here: no later match either
    const std::size_t j = skip_space(src, close + 1);
    if (j < src.size() && src[j] == '{') return p;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> function_params(std::string_view src, std::string_view fn) {
  auto p = function_definition(src, fn);
  if (!p) return std::nullopt;
  const std::size_t open = src.find('(', *p + fn.size());
  return std::string(src.substr(open + 1, src.find(')', open + 1) - open - 1));
}

std::optional<std::string> function_return_type(std::string_view src, std::string_view fn) {
  auto p = function_definition(src, fn);
  if (!p) return std::nullopt;
  // Back to the end of the previous declaration, block or preprocessor line.
  std::size_t b = *p;
  while (b > 0 && src[b - 1] != ';' && src[b - 1] != '}' && src[b - 1] != '{') --b;
  std::string out;
  std::size_t i = b;
  while (i < *p) {
    std::size_t eol = src.find('\n', i);
    if (eol == std::string_view::npos || eol > *p) eol = *p;
    std::string_view line = src.substr(i, eol - i);
    const std::size_t k = skip_space(line, 0);
    if (k < line.size() && line[k] == '#') {  // a preprocessor line: not part of the declaration
      i = eol + 1;
      continue;
    }
    if (std::size_t c = line.find("//"); c != std::string_view::npos) line = line.substr(0, c);
    out += std::string(line) + " ";
    i = eol + 1;
  }
  // Drop what qualifies the function rather than its result: linkage, storage, attributes.
  for (std::string_view w : {"extern \"C\"", "extern", "static", "inline", "constexpr", "__host__", "__forceinline__",
                             "__attribute__((visibility(\"default\")))", "[[nodiscard]]"}) {
    for (std::size_t q = out.find(w); q != std::string::npos; q = out.find(w, q)) {
      const bool left = q == 0 || !word(out[q - 1]);
      const bool right = q + w.size() >= out.size() || !word(out[q + w.size()]) || !word(w.back());
      if (left && right)
        out.replace(q, w.size(), " ");
      else
        q += w.size();
    }
  }
  // Collapse white space; none around '*', '&', '<', '>', ','.
  std::string r;
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (space(out[k])) {
      std::size_t n = skip_space(out, k);
      if (!r.empty() && n < out.size() && word(r.back()) && word(out[n])) r += ' ';
      k = n - 1;
      continue;
    }
    r += out[k];
  }
  return r;
}

}  // namespace khive
