#include "khive/llm/patch.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include <fmt/format.h>

namespace khive::llm {

namespace {

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b <= s.size()) {
    auto e = s.find('\n', b);
    if (e == std::string::npos) {
      if (b < s.size()) out.push_back(s.substr(b));
      break;
    }
    out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  for (auto& l : out)
    if (!l.empty() && l.back() == '\r') l.pop_back();
  return out;
}

std::string join_lines(const std::vector<std::string>& ls, bool trailing_newline) {
  std::string s;
  for (std::size_t i = 0; i < ls.size(); ++i) {
    s += ls[i];
    if (i + 1 < ls.size() || trailing_newline) s += '\n';
  }
  return s;
}

// Whitespace-insensitive form of a line: trimmed, inner runs of blanks collapsed to one space.
std::string norm(const std::string& l) {
  std::string o;
  bool space = false;
  for (char c : l) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !o.empty();
      continue;
    }
    if (space) o += ' ';
    space = false;
    o += c;
  }
  return o;
}

bool starts(const std::string& l, const char* marker) {
  std::string t = norm(l);
  return t.rfind(marker, 0) == 0;
}

std::size_t count_occurrences(const std::string& hay, const std::string& needle, std::size_t* first) {
  std::size_t n = 0, p = 0;
  *first = std::string::npos;
  while ((p = hay.find(needle, p)) != std::string::npos) {
    if (*first == std::string::npos) *first = p;
    ++n;
    p += 1;
  }
  return n;
}

std::string shorten(const std::string& s, std::size_t n = 120) { return s.size() > n ? s.substr(0, n) + "..." : s; }

}  // namespace

ParsedEdits parse_edits(const std::string& reply) {
  ParsedEdits r;
  auto lines = split_lines(reply);
  enum { out, in_search, in_replace } st = out;
  Edit cur;
  std::vector<std::string> buf;
  int block = 0;
  for (auto& l : lines) {
    if (st == out) {
      if (starts(l, "<<<<<<< SEARCH") || starts(l, "<<<<<<<SEARCH")) {
        st = in_search;
        buf.clear();
        ++block;
      }
    } else if (st == in_search) {
      if (starts(l, "=======") && norm(l).find_first_not_of('=') == std::string::npos) {
        cur.search = join_lines(buf, !buf.empty());
        buf.clear();
        st = in_replace;
      } else if (starts(l, ">>>>>>> REPLACE")) {
        r.error = fmt::format("edit {}: SEARCH block closed by >>>>>>> REPLACE without a ======= line", block);
        return r;
      } else {
        buf.push_back(l);
      }
    } else {
      if (starts(l, ">>>>>>> REPLACE") || starts(l, ">>>>>>>REPLACE")) {
        cur.replace = join_lines(buf, !buf.empty());
        r.edits.push_back(cur);
        cur = {};
        st = out;
      } else {
        buf.push_back(l);
      }
    }
  }
  if (st != out)
    r.error = fmt::format("edit {} is not closed (no >>>>>>> REPLACE line): the reply may have been cut off", block);
  else if (r.edits.empty())
    r.error = "the reply holds no edit block (<<<<<<< SEARCH ... ======= ... >>>>>>> REPLACE)";
  return r;
}

PatchResult apply_edits(const std::string& source, const std::vector<Edit>& edits) {
  PatchResult r;
  std::string cur = source;
  const double total_lines = std::max<std::size_t>(1, split_lines(source).size());
  double replaced = 0;
  for (std::size_t i = 0; i < edits.size(); ++i) {
    const Edit& e = edits[i];
    std::string label = fmt::format("edit {} of {}", i + 1, edits.size());
    if (norm(e.search).empty()) {
      r.error = label + ": the SEARCH part is empty; quote the exact lines to replace";
      return r;
    }
    auto search_lines = split_lines(e.search);
    std::size_t first = 0;
    std::size_t n = count_occurrences(cur, e.search, &first);
    if (n == 1) {
      cur.replace(first, e.search.size(), e.replace);
      replaced += double(search_lines.size());
      continue;
    }
    if (n > 1) {
      r.error = fmt::format(
          "{}: the SEARCH text occurs {} times in the current source; add surrounding lines so it "
          "matches exactly one place",
          label, n);
      return r;
    }
    // Fallback: compare lines ignoring indentation and runs of blanks (models often re-indent).
    std::vector<std::string> want;
    for (auto& l : search_lines) want.push_back(norm(l));
    while (!want.empty() && want.front().empty()) want.erase(want.begin());
    while (!want.empty() && want.back().empty()) want.pop_back();
    auto have_lines = split_lines(cur);
    std::vector<std::string> have;
    for (auto& l : have_lines) have.push_back(norm(l));
    std::vector<std::size_t> hits;
    std::size_t best_len = 0, best_at = 0;
    for (std::size_t s = 0; s + want.size() <= have.size(); ++s) {
      std::size_t k = 0;
      while (k < want.size() && have[s + k] == want[k]) ++k;
      if (k == want.size())
        hits.push_back(s);
      else if (k > best_len) {
        best_len = k;
        best_at = s;
      }
    }
    if (hits.size() == 1) {
      std::vector<std::string> out(have_lines.begin(), have_lines.begin() + long(hits[0]));
      auto rep = split_lines(e.replace);
      out.insert(out.end(), rep.begin(), rep.end());
      out.insert(out.end(), have_lines.begin() + long(hits[0] + want.size()), have_lines.end());
      bool nl = !cur.empty() && cur.back() == '\n';
      cur = join_lines(out, nl);
      replaced += double(want.size());
      ++r.fuzzy;
      continue;
    }
    if (hits.size() > 1) {
      r.error = fmt::format(
          "{}: the SEARCH lines occur {} times (ignoring whitespace); add surrounding lines so they "
          "match exactly one place",
          label, hits.size());
      return r;
    }
    if (best_len > 0)
      r.error = fmt::format(
          "{} does not apply: its first {} line(s) match at line {} of the current source, but SEARCH "
          "line {} `{}` differs from the source's `{}`; copy the lines exactly as they are now",
          label, best_len, best_at + 1, best_len + 1, shorten(want[best_len]),
          shorten(best_at + best_len < have_lines.size() ? have_lines[best_at + best_len] : "(end of file)"));
    else
      r.error = fmt::format(
          "{} does not apply: its first SEARCH line `{}` does not occur in the current source; copy "
          "the lines exactly as they are now",
          label, shorten(want.empty() ? "" : want[0]));
    return r;
  }
  r.ok = true;
  r.source = cur;
  r.changed_fraction = std::min(1.0, replaced / total_lines);
  return r;
}

std::optional<std::string> extract_code_block(const std::string& reply, std::string* why, const std::string& lang) {
  auto lines = split_lines(reply);
  std::optional<std::string> best;
  bool open = false;
  std::vector<std::string> buf;
  for (auto& l : lines) {
    std::string t = norm(l);
    if (t.rfind("```", 0) == 0) {
      if (!open) {
        open = true;
        buf.clear();
      } else if (t == "```") {
        open = false;
        std::string code = join_lines(buf, true);
        if (!best || code.size() > best->size()) best = code;
      } else {
        buf.push_back(l);  // a fence with a language tag inside a block: keep as text
      }
      continue;
    }
    if (open) buf.push_back(l);
  }
  if (open) {
    if (why)
      *why =
          "the last code block is not closed (no ``` line): the reply was cut off; send the whole file again, shorter";
    return std::nullopt;
  }
  if (!best) {
    if (why) *why = "the reply holds no fenced code block (```" + lang + " ... ```) with the kernel file";
    return std::nullopt;
  }
  return best;
}

std::string reply_field(const std::string& reply, const std::string& key) {
  std::istringstream in(reply);
  std::string l;
  std::string prefix = key + ":";
  while (std::getline(in, l)) {
    std::string t = norm(l);
    // Tolerate markdown emphasis around the key ("**CLASS:** elementwise").
    std::string u;
    for (char c : t)
      if (c != '*' && c != '`') u += c;
    u = norm(u);
    if (u.size() > prefix.size() && u.compare(0, prefix.size(), prefix) == 0) return norm(u.substr(prefix.size()));
  }
  return "";
}

}  // namespace khive::llm
