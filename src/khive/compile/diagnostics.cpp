// Compiler output -> Diagnostic records (g++, nvcc's EDG front end, ptxas, nvlink, ld), their text
// form for people and for repair prompts, and ptxas's per-kernel resource report.
//
// Hand-written scanning rather than std::regex: CUTLASS template errors produce lines of tens of
// kilobytes, on which libstdc++'s recursive regex matcher can exhaust the stack.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "khive/compile/builder.hpp"
#include "khive/support/text.hpp"

namespace khive {
namespace {

using Sev = Diagnostic::Severity;

std::string_view ltrim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}
bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
int to_int(std::string_view s) {
  long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') break;
    v = v * 10 + (c - '0');
    if (v > 2000000000L) return 2000000000;
  }
  return static_cast<int>(v);
}

// The lines of text as views into it (split_lines in text.hpp copies them).
std::vector<std::string_view> line_views(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t nl = text.find('\n', start);
    std::string_view l = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    out.push_back(l);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return out;
}

struct Loc {
  std::string file;
  int line = 0, column = 0;
};
// "file:line:col" or "file:line" (file not empty).
std::optional<Loc> parse_colon_loc(std::string_view p) {
  auto c1 = p.rfind(':');
  if (c1 == std::string_view::npos || !all_digits(p.substr(c1 + 1))) return std::nullopt;
  std::string_view rest = p.substr(0, c1);
  Loc l;
  auto c2 = rest.rfind(':');
  if (c2 != std::string_view::npos && c2 > 0 && all_digits(rest.substr(c2 + 1))) {
    l.file = std::string(rest.substr(0, c2));
    l.line = to_int(rest.substr(c2 + 1));
    l.column = to_int(p.substr(c1 + 1));
  } else {
    l.file = std::string(rest);
    l.line = to_int(p.substr(c1 + 1));
  }
  if (l.file.empty()) return std::nullopt;
  return l;
}

// gcc's source excerpt and fix-it lines: "   12 |     x = 1;", "      |     ^", "  +++ |+#include <x>".
bool is_gcc_context(std::string_view line) {
  std::string_view s = ltrim(line);
  if (s.empty()) return false;
  if (s.front() == '|') return true;
  if (s.substr(0, 5) == "+++ |") return true;
  std::size_t k = 0;
  while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
  return k > 0 && s.substr(k, 2) == " |";
}

// "(C7511)" anywhere in s -> "C7511", and s without it.
std::string take_ptxas_code(std::string& msg) {
  for (std::size_t p = msg.find("(C"); p != std::string::npos; p = msg.find("(C", p + 1)) {
    std::size_t q = p + 2;
    while (q < msg.size() && std::isdigit(static_cast<unsigned char>(msg[q]))) ++q;
    if (q > p + 2 && q < msg.size() && msg[q] == ')') {
      std::string code = msg.substr(p + 1, q - p - 1);
      msg.erase(p, q - p + 1);
      msg = std::string(trim_view(msg));
      return code;
    }
  }
  return "";
}

// "<tool> <head> : <message>" where the last word of head is the severity (ptxas, nvlink, nvcc):
//   "ptxas error   : Entry function ...", "ptxas /tmp/x.ptx, line 5; warning : ...", "nvcc fatal   : ..."
// Returns false for lines that are not in this form. Info lines become warnings only when they carry a
// (Cnnnn) advisory code; otherwise they are not diagnostics (`skip` set).
bool parse_tool_line(std::string_view line, std::string_view tool, Diagnostic& d, bool& skip) {
  skip = false;
  std::string_view rest = line.substr(tool.size());
  auto c = rest.find(':');
  if (c == std::string_view::npos) return false;
  std::string_view head = trim_view(rest.substr(0, c));
  auto sp = head.find_last_of(" ;");
  std::string_view sev = sp == std::string_view::npos ? head : head.substr(sp + 1);
  std::string msg(trim_view(rest.substr(c + 1)));
  d = Diagnostic{};
  d.tool = std::string(tool);
  d.code = take_ptxas_code(msg);
  d.message = msg;
  if (sev == "info") {
    if (d.code.empty()) skip = true;
    d.severity = Sev::warning;
  } else if (sev == "warning") {
    d.severity = Sev::warning;
  } else if (sev == "error" || sev == "fatal") {
    d.severity = Sev::error;
  } else {
    return false;
  }
  return true;
}

bool is_ld_program(std::string_view head) {
  auto slash = head.rfind('/');
  std::string_view base = slash == std::string_view::npos ? head : head.substr(slash + 1);
  if (base.find(' ') != std::string_view::npos || base.empty()) return false;
  return base == "ld" || base.substr(0, 3) == "ld." || (base.size() > 3 && base.substr(base.size() - 3) == "-ld") ||
         base.find("-ld.") != std::string_view::npos;
}

bool is_driver_tool(std::string_view p) {
  return p == "g++" || p == "gcc" || p == "c++" || p == "cc1plus" || p == "cc1" || p == "lto-wrapper" ||
         p == "<command-line>" || p == "cc";
}

// Earliest ": <severity>: " in a gcc-form line.
std::optional<std::tuple<std::size_t, std::size_t, Sev>> find_gcc_severity(std::string_view line) {
  static const std::pair<std::string_view, Sev> kinds[] = {{": fatal error: ", Sev::error},
                                                           {": error: ", Sev::error},
                                                           {": warning: ", Sev::warning},
                                                           {": note: ", Sev::note}};
  std::optional<std::tuple<std::size_t, std::size_t, Sev>> best;
  for (const auto& [k, s] : kinds) {
    auto p = line.find(k);
    if (p != std::string_view::npos && (!best || p < std::get<0>(*best))) best = std::make_tuple(p, k.size(), s);
  }
  return best;
}

// EDG (nvcc front end): "file(12): error: msg", "file(3): warning #177-D: msg", "file(1): catastrophic error: msg".
bool parse_edg(std::string_view line, Diagnostic& d) {
  for (std::size_t p = line.find("): "); p != std::string_view::npos; p = line.find("): ", p + 1)) {
    auto q = line.rfind('(', p);
    if (q == std::string_view::npos || q == 0 || !all_digits(line.substr(q + 1, p - q - 1))) continue;
    std::string_view rest = line.substr(p + 3);
    static const std::pair<std::string_view, Sev> kinds[] = {
        {"catastrophic error", Sev::error}, {"internal error", Sev::error},
        {"fatal error", Sev::error},        {"error", Sev::error},
        {"warning", Sev::warning},          {"remark", Sev::note}};
    for (const auto& [k, s] : kinds) {
      if (rest.substr(0, k.size()) != k) continue;
      std::string_view after = rest.substr(k.size());
      std::string code;
      if (after.substr(0, 2) == " #") {
        auto e = after.find(": ");
        if (e == std::string_view::npos) return false;
        code = std::string(after.substr(2, e - 2));
        after = after.substr(e);
      }
      if (after.substr(0, 2) != ": ") return false;
      d = Diagnostic{};
      d.severity = s;
      d.tool = "nvcc";
      d.file = std::string(line.substr(0, q));
      d.line = to_int(line.substr(q + 1, p - q - 1));
      d.code = code;
      d.message = std::string(trim_view(after.substr(2)));
      return true;
    }
    return false;
  }
  return false;
}

std::string normalize_quotes(std::string s) {
  // ld quotes as `sym'; show 'sym'.
  std::replace(s.begin(), s.end(), '`', '\'');
  return s;
}

bool same(const Diagnostic& a, const Diagnostic& b) {
  return a.severity == b.severity && a.tool == b.tool && a.file == b.file && a.line == b.line && a.column == b.column &&
         a.message == b.message && a.code == b.code;
}

}  // namespace

std::string_view severity_name(Diagnostic::Severity s) {
  switch (s) {
    case Sev::error: return "error";
    case Sev::warning: return "warning";
    case Sev::note: return "note";
  }
  return "error";
}

namespace {

// A linker line: what it says (nullopt: context for the next line, or a collect2 summary of errors already
// reported).
struct LinkerLine {
  std::optional<Diagnostic> diag;
};

std::optional<LinkerLine> linker_line(std::string_view line, bool have_ld_error) {
  if (auto u = line.find("undefined reference to `"); u != std::string_view::npos) {
    Diagnostic d;
    d.tool = "ld";
    d.message = normalize_quotes(std::string(trim_view(line.substr(u))));
    std::string_view pre = line.substr(0, u);
    if (pre.size() >= 2 && pre.substr(pre.size() - 2) == ": ") pre.remove_suffix(2);
    if (auto l = parse_colon_loc(pre)) {
      d.file = l->file;
      d.line = l->line;
      d.column = l->column;
    }
    return LinkerLine{d};
  }
  if (line.substr(0, 9) == "collect2:") {
    if (have_ld_error || line.find("ld returned") == std::string_view::npos) return LinkerLine{};
    Diagnostic d;
    d.tool = "ld";
    d.message = std::string(trim_view(line.substr(line.find(':') + 1)));
    if (d.message.substr(0, 7) == "error: ") d.message = d.message.substr(7);
    return LinkerLine{d};
  }
  if (auto c = line.find(": "); c != std::string_view::npos && is_ld_program(line.substr(0, c))) {
    std::string_view rest = trim_view(line.substr(c + 2));
    if (rest.find("in function `") != std::string_view::npos && rest.size() > 2 && rest.substr(rest.size() - 2) == "':")
      return LinkerLine{};  // context for the next line
    Diagnostic d;
    d.tool = "ld";
    if (rest.substr(0, 9) == "warning: ") {
      d.severity = Sev::warning;
      rest.remove_prefix(9);
    }
    d.message = normalize_quotes(std::string(rest));
    return LinkerLine{d};
  }
  return std::nullopt;
}

// gcc: "file:line:col: error: msg [-Wflag]", "g++: error: msg" (not EDG's "file(12): error: ...").
std::optional<Diagnostic> gcc_line(std::string_view line) {
  auto g = find_gcc_severity(line);
  if (!g || (!parse_colon_loc(line.substr(0, std::get<0>(*g))) && line.substr(0, std::get<0>(*g)).ends_with(')')))
    return std::nullopt;
  auto [pos, klen, sev] = *g;
  std::string_view prefix = line.substr(0, pos);
  Diagnostic d;
  d.severity = sev;
  d.tool = "g++";
  std::string msg(trim_view(line.substr(pos + klen)));
  if (!msg.empty() && msg.back() == ']') {
    auto b = msg.rfind(" [-W");
    if (b != std::string::npos) {
      d.code = msg.substr(b + 2, msg.size() - b - 3);
      msg = std::string(trim_view(msg.substr(0, b)));
    }
  }
  d.message = msg;
  if (auto l = parse_colon_loc(prefix)) {
    d.file = l->file;
    d.line = l->line;
    d.column = l->column;
  } else if (!is_driver_tool(prefix)) {
    d.file = std::string(prefix);
  }
  return d;
}

}  // namespace

std::vector<Diagnostic> parse_diagnostics(const std::string& compiler_output, const std::string& candidate_path,
                                          const std::string& candidate_source) {
  const std::vector<std::string_view> lines = line_views(compiler_output);
  const std::vector<std::string_view> src = line_views(candidate_source);
  const std::string cand_name = candidate_path.empty() ? "" : std::filesystem::path(candidate_path).filename().string();
  const std::filesystem::path cand_norm = std::filesystem::path(candidate_path).lexically_normal();

  std::vector<Diagnostic> out;
  bool have_ld_error = false;
  auto add = [&](Diagnostic d) {
    if (!d.file.empty() && !candidate_path.empty() &&
        (d.file == candidate_path || d.file == cand_name ||
         std::filesystem::path(d.file).lexically_normal() == cand_norm)) {
      d.in_candidate = true;
      d.file = cand_name;
      if (d.line >= 1 && static_cast<std::size_t>(d.line) <= src.size()) d.source_line = std::string(src[d.line - 1]);
    }
    if (d.tool == "ld" && d.severity == Sev::error) have_ld_error = true;
    for (const auto& e : out)
      if (same(e, d)) return;  // nvcc runs its front end once per pass: the same warning comes twice
    out.push_back(std::move(d));
  };

  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (trim_view(line).empty()) continue;
    Diagnostic d;
    bool skip = false;

    for (std::string_view tool : {std::string_view("ptxas"), std::string_view("nvlink"), std::string_view("nvcc")}) {
      if (line.substr(0, tool.size()) == tool && line.size() > tool.size() && line[tool.size()] == ' ') {
        if (parse_tool_line(line, tool, d, skip)) {
          if (!skip) add(d);
          skip = true;
        }
        break;
      }
    }
    if (skip) continue;
    if (is_gcc_context(line)) continue;
    std::string_view lt = ltrim(line);
    if (lt.substr(0, 21) == "In file included from" || lt.substr(0, 5) == "from ") continue;

    // The linker: an error or warning to add, or a line of context to skip.
    if (auto ld = linker_line(line, have_ld_error)) {
      if (ld->diag) add(*ld->diag);
      continue;
    }
    if (auto gd = gcc_line(line)) {
      add(*gd);
      continue;
    }

    // nvcc front end (EDG), with its excerpt and caret on the next two lines.
    if (parse_edg(line, d)) {
      if (i + 2 < lines.size()) {
        std::string_view caret = lines[i + 2];
        std::string_view ct = trim_view(caret);
        if (ct == "^") {
          std::size_t idx = caret.find('^');
          if (idx >= 2) d.column = static_cast<int>(idx) - 1;  // EDG indents the excerpt by two spaces
          i += 2;
        }
      }
      add(d);
      continue;
    }
  }
  return out;
}

std::string format_diagnostics(const std::vector<Diagnostic>& ds, std::size_t max_errors) {
  auto one = [](const Diagnostic& d) {
    std::string loc;
    if (d.file.empty()) {
      loc = d.tool.empty() ? "khive" : d.tool;
    } else {
      loc = d.file;
      if (d.line > 0) loc += fmt::format(":{}", d.line);
      if (d.line > 0 && d.column > 0) loc += fmt::format(":{}", d.column);
    }
    std::string s = fmt::format("{}: {}: {}", loc, severity_name(d.severity), d.message);
    if (!d.code.empty()) s += fmt::format(" [{}]", d.code);
    s += "\n";
    if (!d.source_line.empty()) s += fmt::format("{:>5} | {}\n", d.line, d.source_line);
    return s;
  };
  std::string out;
  std::size_t errors = 0, shown = 0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    if (ds[i].severity != Sev::error) continue;
    ++errors;
    if (shown >= max_errors) continue;
    ++shown;
    out += one(ds[i]);
    // The notes that follow an error belong to it ("previous declaration ...", "candidate is ...").
    std::size_t notes = 0;
    for (std::size_t j = i + 1; j < ds.size() && ds[j].severity == Sev::note && notes < 3; ++j, ++notes)
      out += one(ds[j]);
  }
  if (errors > shown) out += fmt::format("(and {} more error{})\n", errors - shown, errors - shown == 1 ? "" : "s");
  return out;
}

std::vector<KernelResources> parse_ptxas_resources(const std::string& log) {
  std::vector<KernelResources> out;
  std::map<std::string, std::vector<std::pair<std::string, bool>>> advisories;  // kernel -> (code, wgmma serialized)
  std::vector<std::string> advisory_order;
  long cur = -1;
  std::string props_for;

  // The integer just before `suffix` in s ("Used 168 registers" with " registers" -> 168), or -1.
  auto number_before = [](std::string_view s, std::string_view suffix) -> long {
    auto p = s.find(suffix);
    if (p == std::string_view::npos) return -1;
    std::size_t e = p;
    std::size_t b = e;
    while (b > 0 && std::isdigit(static_cast<unsigned char>(s[b - 1]))) --b;
    if (b == e) return -1;
    return to_int(s.substr(b, e - b));
  };
  auto quoted = [](std::string_view s, std::size_t from) -> std::string {
    auto a = s.find('\'', from);
    if (a == std::string_view::npos) return "";
    auto b = s.find('\'', a + 1);
    if (b == std::string_view::npos) return "";
    return std::string(s.substr(a + 1, b - a - 1));
  };

  for (std::string_view line : line_views(log)) {
    if (line.substr(0, 6) == "ptxas ") {
      auto c = line.find(':');
      if (c == std::string_view::npos) continue;
      std::string_view msg = trim_view(line.substr(c + 1));
      if (msg.substr(0, 24) == "Compiling entry function") {
        KernelResources r;
        r.kernel = quoted(msg, 0);
        auto f = msg.find(" for '");
        if (f != std::string_view::npos) r.arch = quoted(msg, f);
        out.push_back(r);
        cur = static_cast<long>(out.size()) - 1;
        props_for.clear();
        continue;
      }
      if (msg.substr(0, 24) == "Function properties for ") {
        props_for = std::string(trim_view(msg.substr(24)));
        if (props_for.size() >= 2 && props_for.front() == '\'' && props_for.back() == '\'')
          props_for = props_for.substr(1, props_for.size() - 2);
        continue;
      }
      if (msg.substr(0, 5) == "Used " && cur >= 0) {
        auto& r = out[static_cast<std::size_t>(cur)];
        if (long v = number_before(msg, " registers"); v >= 0) r.registers = static_cast<int>(v);
        if (long v = number_before(msg, " barriers"); v >= 0) r.barriers = static_cast<int>(v);
        if (long v = number_before(msg, " bytes smem"); v >= 0) r.shared_bytes = static_cast<int>(v);
        continue;
      }
      std::string m(msg);
      std::string code = take_ptxas_code(m);
      if (!code.empty()) {
        auto f = m.find("in the function '");
        if (f == std::string::npos) f = m.find("in function '");
        if (f != std::string::npos) {
          std::string k = quoted(m, f);
          bool serialized = m.find("wgmma") != std::string::npos && m.find("serialized") != std::string::npos;
          if (!advisories.count(k)) advisory_order.push_back(k);
          advisories[k].emplace_back(code, serialized);
        }
      }
      continue;
    }
    if (!props_for.empty() && line.find("bytes stack frame") != std::string_view::npos) {
      if (cur >= 0 && out[static_cast<std::size_t>(cur)].kernel == props_for) {
        auto& r = out[static_cast<std::size_t>(cur)];
        if (long v = number_before(line, " bytes stack frame"); v >= 0) r.stack_bytes = static_cast<int>(v);
        if (long v = number_before(line, " bytes spill stores"); v >= 0) r.spill_stores = static_cast<int>(v);
        if (long v = number_before(line, " bytes spill loads"); v >= 0) r.spill_loads = static_cast<int>(v);
      }
      props_for.clear();
    }
  }
  for (const auto& k : advisory_order) {
    bool found = false;
    for (auto& r : out) {
      if (r.kernel != k) continue;
      found = true;
      for (const auto& [code, ser] : advisories[k]) {
        if (std::find(r.advisories.begin(), r.advisories.end(), code) == r.advisories.end())
          r.advisories.push_back(code);
        r.wgmma_serialized = r.wgmma_serialized || ser;
      }
    }
    if (!found) {  // an advisory for a kernel whose resource lines are missing (no -v): keep it anyway
      KernelResources r;
      r.kernel = k;
      for (const auto& [code, ser] : advisories[k]) {
        if (std::find(r.advisories.begin(), r.advisories.end(), code) == r.advisories.end())
          r.advisories.push_back(code);
        r.wgmma_serialized = r.wgmma_serialized || ser;
      }
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace khive
