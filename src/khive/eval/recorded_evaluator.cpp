#include "khive/eval/recorded_evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "khive/guard/leader.hpp"
#include "khive/support/files.hpp"
#include "khive/support/hash.hpp"

namespace khive {

namespace {

constexpr const char* kSchema = "khive.recording/1";
constexpr const char* kDispatch =
    "tuner.dispatch";  // tuner/compose.hpp's kDispatchTemplate (the hive does not link the tuner)

// Typed access to a recording's fields; every failure names the file and the field.
struct Reader {
  const std::filesystem::path& file;

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw std::runtime_error(fmt::format("{}: {}: {}", file.string(), field, what));
  }
  const nlohmann::json& at(const nlohmann::json& j, const std::string& key, const std::string& field) const {
    if (!j.is_object() || !j.contains(key)) fail(field, "missing");
    return j.at(key);
  }
  std::string str(const nlohmann::json& j, const std::string& key, const std::string& field,
                  bool required = true) const {
    if (!j.contains(key) || j.at(key).is_null()) {
      if (required) fail(field, "missing");
      return "";
    }
    if (!j.at(key).is_string()) fail(field, "expected a string");
    return j.at(key).get<std::string>();
  }
  double num(const nlohmann::json& j, const std::string& key, const std::string& field) const {
    const auto& v = at(j, key, field);
    if (!v.is_number()) fail(field, "expected a number");
    return v.get<double>();
  }
  std::map<std::string, std::string> strings(const nlohmann::json& j, const std::string& key,
                                             const std::string& field) const {
    std::map<std::string, std::string> out;
    if (!j.contains(key)) return out;
    const auto& v = j.at(key);
    if (!v.is_object()) fail(field, "expected an object of strings");
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!it.value().is_string()) fail(field + "." + it.key(), "expected a string");
      out[it.key()] = it.value().get<std::string>();
    }
    return out;
  }

  RecordedCandidate candidate(const nlohmann::json& j, const std::string& field,
                              const std::vector<std::string>& timed) const {
    RecordedCandidate c;
    if (!j.is_object()) fail(field, "expected an object");
    c.id = str(j, "id", field + ".id");
    c.agent = str(j, "agent", field + ".agent", false);
    c.strategy = str(j, "strategy", field + ".strategy", false);
    c.hash = str(j, "hash", field + ".hash", false);
    c.params = strings(j, "params", field + ".params");
    const std::string verdict = str(j, "verdict", field + ".verdict");
    const std::optional<Standing> standing = parse_standing(verdict);
    if (!standing || *standing == Standing::pending)
      fail(field + ".verdict", "'" + verdict + "' is not one of leader, backup, rejected, error");
    c.standing = *standing;
    if (const std::string check = str(j, "check", field + ".check", false); !check.empty()) {
      c.check = parse_check(check);
      if (!c.check) fail(field + ".check", "'" + check + "' is not a check's name (docs/guard.md)");
    }
    c.reason = str(j, "reason", field + ".reason", false);
    c.message = str(j, "message", field + ".message", false);
    if (j.contains("t")) c.t = num(j, "t", field + ".t");
    if (j.contains("eval_s")) c.eval_s = num(j, "eval_s", field + ".eval_s");
    if (!c.accepted()) return c;
    if (j.contains("score") && !j.at("score").is_null()) c.score = num(j, "score", field + ".score");
    c.time_s = num(j, "time_s", field + ".time_s");
    if (j.contains("delta")) c.delta = num(j, "delta", field + ".delta");
    const auto& w = at(j, "workloads", field + ".workloads");
    if (!w.is_object()) fail(field + ".workloads", "expected an object of medians (seconds)");
    for (auto it = w.begin(); it != w.end(); ++it) {
      if (!it.value().is_number() || !(it.value().get<double>() > 0))
        fail(field + ".workloads." + it.key(), "expected a positive number");
      c.workload_median_s[it.key()] = it.value().get<double>();
    }
    for (const auto& u : timed)
      if (!c.workload_median_s.count(u))
        fail(field + ".workloads", "accepted without a median on the timed workload " + u);
    return c;
  }
};

std::string join_point(const std::string& tmpl, const std::map<std::string, std::string>& params) {
  std::string k = tmpl;
  for (const auto& [n, v] : params)
    if (n != "template") k += "|" + n + "=" + v;
  return k;
}

std::string composite_key(const std::map<std::string, std::string>& route) {  // workload uuid -> point key
  if (route.empty()) return "";
  std::string k = std::string(kDispatch) + "{";
  bool first = true;
  for (const auto& [u, p] : route) {
    k += (first ? "" : ";") + u + "=" + p;
    first = false;
  }
  return k + "}";
}

std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

// "T K=V K=V" (describe_point's form after the template name) -> "T|K=V|K=V", parameters sorted.
std::string point_from_text(const std::string& text) {
  auto toks = split_ws(text);
  if (toks.empty()) return "";
  std::map<std::string, std::string> p;
  for (std::size_t i = 1; i < toks.size(); ++i) {
    auto eq = toks[i].find('=');
    if (eq == std::string::npos || eq == 0) return "";
    p[toks[i].substr(0, eq)] = toks[i].substr(eq + 1);
  }
  return join_point(toks[0], p);
}

double wgeomean(const std::map<std::string, double>& t, const std::map<std::string, double>& weight) {
  double s = 0, ws = 0;
  for (const auto& [u, w] : weight) {
    auto it = t.find(u);
    if (it == t.end() || !(it->second > 0) || w <= 0) continue;
    s += w * std::log(it->second);
    ws += w;
  }
  return ws > 0 ? std::exp(s / ws) : 0.0;
}

std::string ext_of(const std::filesystem::path& p) {
  std::string e = p.extension().string();
  return e.empty() ? e : e.substr(1);
}

}  // namespace

std::set<std::string> recorded_templates(const Recording& rec) {
  std::set<std::string> out;
  for (const auto& c : rec.candidates)
    for (const auto& [k, v] : c.params) {
      const bool variant = k.size() > 1 && k[0] == 'v' && k.find_first_not_of("0123456789", 1) == std::string::npos;
      if (k == "template" && v != "tuner.dispatch") out.insert(v);
      if (variant) out.insert(v.substr(0, v.find('|')));  // "T|K=V|...": the point's template
    }
  return out;
}

std::string recorded_point_key(const std::map<std::string, std::string>& params) {
  auto t = params.find("template");
  if (t == params.end() || t->second.empty()) return "";
  if (t->second != kDispatch) return join_point(t->second, params);
  // A composite: "route" = "UUID=vI UUID=vI ...", "vI" = the point's key.
  auto r = params.find("route");
  if (r == params.end()) return "";
  std::map<std::string, std::string> route;
  for (const auto& tok : split_ws(r->second)) {
    auto eq = tok.rfind('=');
    if (eq == std::string::npos) return "";
    auto v = params.find(tok.substr(eq + 1));
    if (v == params.end()) return "";
    route[tok.substr(0, eq)] = v->second;
  }
  return composite_key(route);
}

std::string source_point_key(const std::string& source) {
  static const std::string kHead = "// khive tuner: ";
  if (source.compare(0, kHead.size(), kHead) != 0) return "";
  std::istringstream in(source);
  std::string first;
  std::getline(in, first);
  const std::string what = first.substr(kHead.size());
  if (what.rfind("template ", 0) == 0) {
    // "// khive tuner: template T for KEY (BACKEND)" then "// point: K=V ..." among the next header lines.
    const auto toks = split_ws(what);
    if (toks.size() < 2) return "";
    for (std::string line; std::getline(in, line) && line.rfind("//", 0) == 0;)
      if (line.rfind("// point:", 0) == 0) return point_from_text(toks[1] + " " + line.substr(9));
    return "";
  }
  if (what.rfind("per-shape dispatch", 0) != 0) return "";
  // "// vI: T K=V ..." header lines name the variants; the routing table's rows end "// UUID [UUID...] -> vI".
  static const std::regex variant(R"(^// v(\d+): (.+)$)");
  static const std::regex row(R"(^\s*\{[^}]*\},\s*//\s*(.+?)\s*->\s*v(\d+)\s*$)");
  std::map<std::string, std::string> variants, route;
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("// v", 0) == 0 && std::regex_match(line, m, variant))
      variants["v" + m[1].str()] = point_from_text(m[2].str());
    else if (line.find("->") != std::string::npos && std::regex_match(line, m, row)) {
      auto v = variants.find("v" + m[2].str());
      if (v == variants.end() || v->second.empty()) return "";
      for (const auto& u : split_ws(m[1].str())) route[u] = v->second;
    }
  }
  return composite_key(route);
}

Recording load_recording(const std::filesystem::path& file) {
  Reader r{file};
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(file));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not JSON ({})", file.string(), e.what()));
  }
  Recording rec;
  rec.file = file;
  if (r.str(j, "schema", "schema") != kSchema) r.fail("schema", fmt::format("expected \"{}\"", kSchema));
  rec.what = r.str(j, "what", "what", false);
  if (j.contains("source")) {
    const auto& s = r.at(j, "source", "source");
    rec.source_run = r.str(s, "run", "source.run", false);
    rec.device = r.str(s, "device", "source.device", false);
    rec.score_basis = r.str(s, "score_basis", "source.score_basis", false);
  }
  const auto& t = r.at(j, "task", "task");
  rec.task_dir = r.str(t, "dir", "task.dir");
  rec.task_name = r.str(t, "name", "task.name");
  rec.backend = r.str(t, "backend", "task.backend");
  if (rec.backend != "cpu" && rec.backend != "cuda") r.fail("task.backend", "expected \"cpu\" or \"cuda\"");
  rec.perf_workloads = r.str(t, "perf_workloads", "task.perf_workloads", false);
  const auto& timed = r.at(t, "timed", "task.timed");
  if (!timed.is_array() || timed.empty()) r.fail("task.timed", "expected a non-empty array of workload uuids");
  for (const auto& u : timed) {
    if (!u.is_string()) r.fail("task.timed", "expected workload uuids (strings)");
    rec.timed.push_back(u.get<std::string>());
  }
  if (j.contains("run")) {
    const auto& run = r.at(j, "run", "run");
    if (run.contains("seed")) {
      if (!run.at("seed").is_number_unsigned()) r.fail("run.seed", "expected a non-negative integer");
      rec.seed = run.at("seed").get<uint64_t>();
    }
    if (run.contains("agents") && run.at("agents").is_number_integer()) rec.agents = run.at("agents").get<int>();
    if (run.contains("options") && run.at("options").is_object()) rec.options = run.at("options");
    rec.leader = r.str(run, "leader", "run.leader", false);
  }
  if (j.contains("rule")) {
    const auto& rule = r.at(j, "rule", "rule");
    rec.noise = r.num(rule, "noise", "rule.noise");
    rec.min_gain = r.num(rule, "min_gain", "rule.min_gain");
    if (rec.noise < 0 || rec.min_gain < 0) r.fail("rule", "noise and min_gain must not be negative");
  }
  rec.reference = r.candidate(r.at(j, "reference", "reference"), "reference", rec.timed);
  if (!rec.reference.accepted()) r.fail("reference.verdict", "the reference must have been accepted (leader)");
  const auto& cands = r.at(j, "candidates", "candidates");
  if (!cands.is_array()) r.fail("candidates", "expected an array");
  std::set<std::string> ids = {rec.reference.id};
  for (std::size_t i = 0; i < cands.size(); ++i) {
    auto c = r.candidate(cands[i], fmt::format("candidates[{}]", i), rec.timed);
    if (!ids.insert(c.id).second) r.fail(fmt::format("candidates[{}].id", i), "'" + c.id + "' appears twice");
    rec.candidates.push_back(std::move(c));
  }
  return rec;
}

Task load_recorded_task(const Recording& rec, const std::filesystem::path& repo_root) {
  Task t = load_task(repo_root / rec.task_dir);
  if (!rec.perf_workloads.empty())
    select_perf_workloads(t, rec.perf_workloads, rec.backend == "cuda" ? Backend::cuda : Backend::cpu);
  return t;
}

RecordedEvaluator::RecordedEvaluator(const Task& task, Backend backend, Recording rec, RecordedOptions o)
    : task_(task), backend_(backend), rec_(std::move(rec)), noise_(o.noise.value_or(rec_.noise)),
      min_gain_(o.min_gain.value_or(rec_.min_gain)), model_composites_(o.model_composites) {
  const std::string where = rec_.file.string();
  if (task.name != rec_.task_name)
    throw std::invalid_argument(fmt::format("{}: recorded for task {}, not {}", where, rec_.task_name, task.name));
  if (backend_name(backend) != rec_.backend)
    throw std::invalid_argument(
        fmt::format("{}: recorded on the {} backend, not {}", where, rec_.backend, backend_name(backend)));
  std::set<std::string> recorded(rec_.timed.begin(), rec_.timed.end()), here;
  for (const auto& w : task.workloads)
    if (w.timed_on(backend)) {
      here.insert(w.uuid);
      weight_[w.uuid] = w.weight;
    }
  if (here != recorded) {
    std::string missing, extra;
    for (const auto& u : recorded)
      if (!here.count(u)) missing += " " + u;
    for (const auto& u : here)
      if (!recorded.count(u)) extra += " " + u;
    throw std::invalid_argument(fmt::format(
        "{}: the task's timed workloads are not the recorded ones (recorded, not timed here:{}; timed here, not "
        "recorded:{}){}",
        where, missing.empty() ? " none" : missing, extra.empty() ? " none" : extra,
        rec_.perf_workloads.empty() ? ""
                                    : "; the run timed only '" + rec_.perf_workloads + "' (select_perf_workloads)"));
  }
  for (const auto& c : rec_.candidates) {
    if (!c.hash.empty()) by_hash_.emplace(c.hash, &c);
    if (auto k = recorded_point_key(c.params); !k.empty()) by_key_.emplace(k, &c);  // the first recorded wins
  }
}

const RecordedCandidate* RecordedEvaluator::find(const std::string& ext, const std::string& source) const {
  std::lock_guard<std::mutex> lk(mu_);
  const std::string h = candidate_hash(ext, source);
  if (auto it = answered_.find(h); it != answered_.end()) return it->second;
  if (auto it = by_hash_.find(h); it != by_hash_.end()) return it->second;
  if (auto k = source_point_key(source); !k.empty())
    if (auto it = by_key_.find(k); it != by_key_.end()) return it->second;
  return nullptr;
}

RecordedEvaluator::Match RecordedEvaluator::match(const std::string& ext, const std::string& source) {
  Match m;
  const std::string h = candidate_hash(ext, source);
  if (auto it = by_hash_.find(h); it != by_hash_.end()) {
    m.c = it->second;
    m.how = 1;
    return m;
  }
  m.key = source_point_key(source);
  if (m.key.empty()) {
    m.key = "hash:" + h;
    return m;
  }
  if (auto it = by_key_.find(m.key); it != by_key_.end()) {
    m.c = it->second;
    m.how = 2;
    return m;
  }
  if (!model_composites_ || m.key.rfind(std::string(kDispatch) + "{", 0) != 0) return m;
  // A composite of recorded points: per timed workload, the median of the point it runs there.
  std::map<std::string, std::string> route;  // uuid -> point key
  const std::string body =
      m.key.substr(std::string(kDispatch).size() + 1, m.key.size() - std::string(kDispatch).size() - 2);
  for (std::size_t i = 0; i <= body.size();) {
    std::size_t j = body.find(';', i);
    if (j == std::string::npos) j = body.size();
    const std::string item = body.substr(i, j - i);
    const auto eq = item.find('=');
    if (eq != std::string::npos) route[item.substr(0, eq)] = item.substr(eq + 1);
    i = j + 1;
  }
  RecordedCandidate mc;
  mc.standing = Standing::backup;
  std::string parts;
  std::set<std::string> used;
  for (const auto& [u, w] : weight_) {
    auto r = route.find(u);
    auto p = r == route.end() ? by_key_.end() : by_key_.find(r->second);
    if (p == by_key_.end() || !p->second->accepted()) return m;  // a workload no recorded accepted point covers
    mc.workload_median_s[u] = p->second->workload_median_s.at(u);
    if (used.insert(p->second->id).second) parts += (parts.empty() ? "" : " ") + p->second->id;
  }
  mc.id = "modeled(" + parts + ")";
  mc.time_s = wgeomean(mc.workload_median_s, weight_);
  mc.message = "modeled, not measured: per workload the recorded median of the point it runs there (" + parts + ")";
  modeled_.push_back(std::move(mc));
  m.c = &modeled_.back();
  m.how = 3;
  return m;
}

Evaluation RecordedEvaluator::answer(const RecordedCandidate& c, const RecordedCandidate* leader,
                                     const std::string& how) const {
  Evaluation e;
  const std::string origin =
      c.id.rfind("modeled", 0) == 0
          ? c.message
          : fmt::format("recorded as {} on {} ({} there; matched by {})", c.id,
                        rec_.device.empty() ? "the recording's device" : rec_.device, standing_name(c.standing), how);
  if (c.standing == Standing::error) {
    e.status = EvalStatus::error;
    e.message = origin + (c.message.empty() ? "" : ": " + c.message);
    return e;
  }
  if (c.standing == Standing::rejected) {
    e.status = EvalStatus::rejected;
    e.check = c.check;
    e.reason = c.reason;
    e.message = c.message.empty() ? origin : c.message;  // the recorded words (a recording keeps no diagnosis)
    return e;
  }
  e.status = EvalStatus::accepted;
  e.score = c.score;
  e.time_s = c.time_s;
  e.workload_median_s = c.workload_median_s;
  if (!leader) {
    e.message = origin;
    return e;
  }
  if (!leader->accepted()) {
    e.message = origin + "; the leader given has no recorded medians: check 11 not replayed";
    return e;
  }
  // Check 11 on the recorded medians (guard/leader.hpp).
  const MedianComparison m =
      compare_recorded_medians(leader->workload_median_s, c.workload_median_s, weight_, noise_, min_gain_);
  e.gain_vs_leader = m.gain;
  e.beats_leader = m.beats_leader;
  e.message = fmt::format(
      "{}; check 11 on the recorded medians vs {}: {:+.1f}% weighted, faster beyond {:.1f}% on {} of {} workload(s), "
      "slower on {}{}",
      origin, leader->id, m.gain * 100, noise_ * 100, m.faster, m.workloads, m.slower,
      m.beats_leader   ? ": new leader"
      : m.within_noise ? ": gain within the noise"
                       : "");
  return e;
}

Evaluation RecordedEvaluator::prepare(const std::filesystem::path& reference) {
  const std::string h = candidate_hash(ext_of(reference), read_file(reference));
  std::lock_guard<std::mutex> lk(mu_);
  answered_[h] = &rec_.reference;
  ++evaluations_;
  Evaluation e = answer(rec_.reference, nullptr, "the reference");
  e.score_basis = fmt::format("recorded: {} ({}){}", rec_.file.filename().string(),
                              rec_.source_run.empty() ? "no source named" : rec_.source_run,
                              rec_.score_basis.empty() ? "" : "; there: " + rec_.score_basis);
  return e;
}

Evaluation RecordedEvaluator::evaluate(const std::filesystem::path& source,
                                       const std::optional<std::filesystem::path>& leader) {
  const std::string ext = ext_of(source);
  const std::string text = read_file(source);
  std::optional<std::string> leader_text;
  if (leader) leader_text = read_file(*leader);
  std::lock_guard<std::mutex> lk(mu_);
  ++evaluations_;
  const std::string h = candidate_hash(ext, text);
  Match m;
  if (auto it = answered_.find(h); it != answered_.end())
    m.c = it->second, m.how = 1;
  else
    m = match(ext, text);
  if (!m.c) {
    ++stats_.unrecorded;
    stats_.unrecorded_keys.push_back(m.key);
    Evaluation e;
    e.status = EvalStatus::error;
    e.reason = "not_recorded";
    e.message =
        fmt::format("not in the recording {}: {}; a recorded evaluator answers only what its run measured",
                    rec_.file.filename().string(),
                    m.key.rfind("hash:", 0) == 0 ? "source hash " + m.key.substr(5, 16) : "tuner point " + m.key);
    return e;
  }
  m.how == 1 ? ++stats_.by_hash : m.how == 2 ? ++stats_.by_point : ++stats_.modeled;
  answered_[h] = m.c;
  const RecordedCandidate* lc = nullptr;
  if (leader_text) {
    const std::string lh = candidate_hash(ext_of(*leader), *leader_text);
    if (auto it = answered_.find(lh); it != answered_.end())
      lc = it->second;
    else if (auto lm = match(ext_of(*leader), *leader_text); lm.c)
      lc = lm.c;
  }
  Evaluation e = answer(*m.c, lc, m.how == 1 ? "source hash" : m.how == 2 ? "template point" : "model");
  if (leader && !lc) e.message += "; the leader is not in the recording: check 11 not replayed";
  return e;
}

std::vector<SlotUsage> RecordedEvaluator::slot_usage() const {
  std::lock_guard<std::mutex> lk(mu_);
  return {{"recording", 0, evaluations_}};
}

RecordedEvaluator::Stats RecordedEvaluator::stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  return stats_;
}

}  // namespace khive
