#include "khive/llm/profile_parse.hpp"

#include <map>
#include <regex>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace khive::llm {

namespace {

// One CSV record (RFC 4180 quoting, as ncu writes it).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> f;
  std::string cur;
  bool q = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (q) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"')
        q = false;
      else
        cur += c;
    } else if (c == '"')
      q = true;
    else if (c == ',') {
      f.push_back(cur);
      cur.clear();
    } else if (c != '\r')
      cur += c;
  }
  f.push_back(cur);
  return f;
}

std::string short_name(std::string k) {
  auto p = k.find('(');
  if (p != std::string::npos && p > 0) k = k.substr(0, p);
  return k.size() > 80 ? k.substr(0, 80) + "..." : k;
}

}  // namespace

NcuParsed parse_ncu_csv(const std::string& out) {
  NcuParsed r;
  r.metrics = nlohmann::json::object();
  std::istringstream in(out);
  std::string line;
  std::vector<std::string> header;
  std::map<std::string, std::size_t> col;
  std::vector<std::string> order;  // kernel labels in launch order
  while (std::getline(in, line)) {
    if (line.rfind("==", 0) == 0 || line.empty()) continue;
    auto f = csv_fields(line);
    if (header.empty()) {
      if (f.size() > 3 && f[0] == "ID") {
        header = f;
        for (std::size_t i = 0; i < f.size(); ++i) col[f[i]] = i;
      }
      continue;
    }
    auto get = [&](const char* name) -> std::string {
      auto it = col.find(name);
      return it != col.end() && it->second < f.size() ? f[it->second] : "";
    };
    std::string label = get("ID") + ": " + short_name(get("Kernel Name"));
    if (!r.metrics.contains(label)) {
      order.push_back(label);
      r.metrics[label] = nlohmann::json::object();
      if (!get("Block Size").empty()) r.metrics[label]["Block Size"] = get("Block Size");
      if (!get("Grid Size").empty()) r.metrics[label]["Grid Size"] = get("Grid Size");
    }
    auto& m = r.metrics[label];
    std::string name = get("Metric Name"), unit = get("Metric Unit"), value = get("Metric Value");
    if (!name.empty()) m[name] = unit.empty() ? value : value + " " + unit;
    // Rule results (ncu's advice): newer versions add these columns; a rule row may carry no metric.
    std::string rule = get("Rule Name"), desc = get("Rule Description");
    if (!desc.empty()) {
      std::string advice = (rule.empty() ? "" : rule + ": ") + desc;
      std::string gain = get("Estimated Speedup");
      if (!gain.empty()) advice += fmt::format(" (estimated speedup {}%)", gain);
      if (!m.contains("advice")) m["advice"] = nlohmann::json::array();
      bool seen = false;
      for (auto& a : m["advice"]) seen = seen || a == advice;
      if (!seen) m["advice"].push_back(advice);
    }
  }
  auto val = [](const nlohmann::json& m, const char* k) -> std::string {
    return m.contains(k) && m[k].is_string() ? m[k].get<std::string>() : "?";
  };
  int shown = 0;
  for (auto& label : order) {
    if (++shown > 4) {
      r.text += fmt::format("(and {} more kernels)\n", order.size() - 4);
      break;
    }
    const auto& m = r.metrics[label];
    r.text +=
        fmt::format("- kernel {}: grid {} x block {}, {} registers/thread, smem static {} + dynamic {} per block\n",
                    label, val(m, "Grid Size"), val(m, "Block Size"), val(m, "Registers Per Thread"),
                    val(m, "Static Shared Memory Per Block"), val(m, "Dynamic Shared Memory Per Block"));
    r.text += fmt::format("  duration {}; SM throughput {} %, memory throughput {} %, DRAM throughput {} %\n",
                          val(m, "Duration"), val(m, "Compute (SM) Throughput"), val(m, "Memory Throughput"),
                          val(m, "DRAM Throughput"));
    r.text += fmt::format("  occupancy achieved {} % of theoretical {} %; waves per SM {}\n",
                          val(m, "Achieved Occupancy"), val(m, "Theoretical Occupancy"), val(m, "Waves Per SM"));
    if (m.contains("advice"))
      for (auto& a : m["advice"]) r.text += "  ncu advice: " + a.get<std::string>() + "\n";
  }
  return r;
}

std::string memcheck_excerpt(const std::string& out, const std::string& source) {
  std::vector<std::string> src;
  {
    std::istringstream s(source);
    std::string l;
    while (std::getline(s, l)) src.push_back(l);
  }
  static const std::regex loc(R"(kernel\.cu:(\d+))");
  std::istringstream in(out);
  std::string line, r;
  int lines = 0;
  bool in_error = false;
  while (std::getline(in, line) && lines < 40) {
    if (line.rfind("=========", 0) != 0 || line.find("ERROR SUMMARY") != std::string::npos) continue;
    std::string body = line.substr(9);
    bool starts_error = body.find("Invalid") != std::string::npos || body.find("Error") != std::string::npos ||
                        body.find("error") != std::string::npos || body.find("Out-of-range") != std::string::npos;
    bool detail = body.rfind("    ", 0) == 0;  // "=========     at ..." lines belong to the error above
    if (starts_error && !detail) in_error = true;
    if (!in_error) continue;
    if (!detail && !starts_error) {
      in_error = false;
      continue;
    }
    r += line + "\n";
    ++lines;
    std::smatch m;
    if (std::regex_search(line, m, loc)) {
      std::size_t n = std::stoul(m[1]);
      if (n >= 1 && n <= src.size()) r += fmt::format("    line {}: {}\n", n, src[n - 1]);
    }
  }
  if (r.empty() && out.find("ERROR SUMMARY: 0 errors") != std::string::npos)
    return "memcheck: no errors found on one call";
  return r;
}

}  // namespace khive::llm
