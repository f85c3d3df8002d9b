#include "khive/record/report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "khive/record/store.hpp"
#include "khive/support/files.hpp"

namespace khive {
namespace {

std::unique_ptr<RunStore> open_run(const std::filesystem::path& run_dir) {
  auto db = run_dir / "run.db";
  if (!std::filesystem::exists(db))
    throw std::runtime_error(run_dir.string() + ": not a khive run directory (no run.db)");
  // A damaged database is never read as an empty run (whose report would replace the good one).
  if (auto why = run_db_problem(db))
    throw std::runtime_error(
        db.string() + " " + *why +
        "; nothing was read from it or written (report.html is left as it was); the run's event log, " +
        (run_dir / "events.jsonl").string() + ", still holds its candidates: `khive export` reads it");
  return std::make_unique<RunStore>(db, RunStore::Access::read_only);
}

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string ms(double s) { return s > 0 ? fmt::format("{:.3f} ms", s * 1e3) : std::string("-"); }

struct RunView {
  std::map<std::string, std::string> meta;
  std::vector<CandidateRecord> cands;
  std::vector<StoredBoardEntry> board;
  std::vector<SwitchRecord> switches;
  std::vector<AgentRecord> agents;
  const CandidateRecord* find(const std::string& id) const {
    for (auto& c : cands)
      if (c.id == id) return &c;
    return nullptr;
  }
  const CandidateRecord* leader() const { return find(meta.count("leader") ? meta.at("leader") : ""); }
  const CandidateRecord* reference() const { return find(meta.count("reference") ? meta.at("reference") : ""); }
  std::vector<const CandidateRecord*> lineage() const {
    std::vector<const CandidateRecord*> v;
    std::set<std::string> seen;
    for (auto* c = leader(); c && !seen.count(c->id); c = find(c->parent)) {
      seen.insert(c->id);
      v.push_back(c);
    }
    std::reverse(v.begin(), v.end());
    return v;
  }
};

RunView load(const std::filesystem::path& run_dir) {
  auto db = open_run(run_dir);
  RunView v;
  for (auto k : {"task", "task_dir", "backend", "seed", "leader", "reference", "stop_reason", "slots", "prebuild",
                 "wall_s", "options", "score_basis", "agent_failures"})
    if (auto m = db->meta(k)) v.meta[k] = *m;
  for (auto k : {"task", "backend", "reference"}) v.meta.try_emplace(k, "");
  v.cands = db->candidates();
  v.board = db->board(true);
  v.switches = db->switches();
  v.agents = db->agents();
  return v;
}

// ---- SVG helpers
struct Plot {
  double w = 760, h = 300, ml = 60, mr = 150, mt = 20, mb = 40;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  bool logy = false;
  double px(double x) const { return ml + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (w - ml - mr); }
  double py(double y) const {
    double a = logy ? std::log10(y) : y, lo = logy ? std::log10(y0) : y0, hi = logy ? std::log10(y1) : y1;
    return mt + (1 - (hi > lo ? (a - lo) / (hi - lo) : 0.5)) * (h - mt - mb);
  }
  std::string frame(const std::string& xlabel, const std::string& ylabel, const std::string& yfmt_unit,
                    double yscale) const {
    std::string s = fmt::format(
        "<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' font-family='sans-serif' font-size='11'>", w,
        h);
    s += fmt::format("<rect x='{}' y='{}' width='{}' height='{}' fill='#fafafa' stroke='#ccc'/>", ml, mt, w - ml - mr,
                     h - mt - mb);
    for (int i = 0; i <= 4; ++i) {
      double fy;
      if (logy)
        fy = std::pow(10.0, std::log10(y0) + (std::log10(y1) - std::log10(y0)) * i / 4.0);
      else
        fy = y0 + (y1 - y0) * i / 4.0;
      double yy = py(fy);
      s += fmt::format("<line x1='{}' x2='{}' y1='{:.1f}' y2='{:.1f}' stroke='#e4e4e4'/>", ml, w - mr, yy, yy);
      s += fmt::format("<text x='{}' y='{:.1f}' text-anchor='end'>{:.3g}{}</text>", ml - 4, yy + 4, fy * yscale,
                       yfmt_unit);
      double fx = x0 + (x1 - x0) * i / 4.0;
      s += fmt::format("<text x='{:.1f}' y='{}' text-anchor='middle'>{:.3g}</text>", px(fx), h - mb + 14, fx);
    }
    s += fmt::format("<text x='{}' y='{}' text-anchor='middle'>{}</text>", ml + (w - ml - mr) / 2, h - 6, esc(xlabel));
    s += fmt::format("<text x='12' y='{}' transform='rotate(-90 12 {})' text-anchor='middle'>{}</text>",
                     mt + (h - mt - mb) / 2, mt + (h - mt - mb) / 2, esc(ylabel));
    return s;
  }
};

const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                         "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};

// The chart says what the summary says: dots are each accepted kernel's value (by agent), and the black steps are
// the leader's value over time — the leader chosen by check 11, not the best score seen — so the last black point
// is the leader the summary names, with its score.
std::string progress_svg(const RunView& v) {
  const CandidateRecord* ref = v.reference();
  bool use_score = true;
  for (auto& c : v.cands)
    if (c.accepted() && !c.score) use_score = false;
  auto value = [&](const CandidateRecord& c) {
    if (use_score) return *c.score;
    return ref && c.time_s > 0 ? ref->time_s / c.time_s : 0.0;
  };
  std::vector<const CandidateRecord*> order;
  for (auto& c : v.cands)
    if (c.accepted()) order.push_back(&c);
  if (order.empty()) return "<p>No accepted kernel.</p>";
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->t < b->t; });
  std::map<std::string, std::vector<std::pair<double, double>>> dots;
  std::vector<std::pair<double, double>> leader;
  double tmax = 1e-9, vmax = 0, vmin = 1e300;
  for (auto* c : order) {
    const double val = value(*c);
    dots[c->agent].push_back({c->t, val});
    if (c->standing == Standing::leader) leader.push_back({c->t, val});
    tmax = std::max(tmax, c->t);
    vmax = std::max(vmax, val);
    vmin = std::min(vmin, val);
  }
  Plot p;
  p.x0 = 0;
  p.x1 = std::max(tmax, 1.0) * 1.02;
  p.y0 = use_score ? 0 : std::min(vmin, 1.0) * 0.9;
  p.y1 = use_score ? std::max(vmax * 1.05, 0.6) : vmax * 1.1;
  std::string s = p.frame("seconds since the start",
                          use_score ? "task score (own run)" : "speedup over the reference (own-run medians)",
                          use_score ? "" : "x", 1);
  int slot = 0;
  auto legend = [&](const char* col, const std::string& name) {
    s += fmt::format("<rect x='{}' y='{}' width='10' height='10' fill='{}'/><text x='{}' y='{}'>{}</text>",
                     p.w - p.mr + 10, p.mt + 14 * slot, col, p.w - p.mr + 24, p.mt + 14 * slot + 9, esc(name));
    ++slot;
  };
  for (auto& [agent, pts] : dots) {
    const char* col = kColors[slot % 10];
    for (auto& [x, y] : pts)
      s += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='3' fill='{}'/>", p.px(x), p.py(y), col);
    legend(col, agent);
  }
  std::string d;
  for (std::size_t k = 0; k < leader.size(); ++k) {
    if (k) d += fmt::format(" L{:.1f},{:.1f}", p.px(leader[k].first), p.py(leader[k - 1].second));
    d += fmt::format(" {}{:.1f},{:.1f}", k ? "L" : "M", p.px(leader[k].first), p.py(leader[k].second));
  }
  if (!leader.empty()) {
    d += fmt::format(" L{:.1f},{:.1f}", p.px(p.x1), p.py(leader.back().second));
    s += fmt::format("<path d='{}' fill='none' stroke='#000' stroke-width='2.5'/>", d);
  }
  legend("#000", "leader (check 11)");
  return s + "</svg>";
}

std::string times_svg(const RunView& v) {
  double tmin = 1e300, tmax = 0;
  for (auto& c : v.cands)
    if (c.time_s > 0) tmin = std::min(tmin, c.time_s), tmax = std::max(tmax, c.time_s);
  if (tmax <= 0) return "<p>No timed kernel.</p>";
  Plot p;
  p.logy = true;
  p.x0 = 0;
  p.x1 = std::max<double>(1, static_cast<double>(v.cands.size()));
  p.y0 = tmin / 1.3;
  p.y1 = tmax * 1.3;
  std::string s = p.frame("candidate (order of evaluation)", "time (weighted geo-mean of medians)", " ms", 1e3);
  std::map<Standing, const char*> col = {{Standing::leader, "#2ca02c"},
                                         {Standing::backup, "#1f77b4"},
                                         {Standing::rejected, "#d62728"},
                                         {Standing::error, "#7f7f7f"}};
  for (std::size_t i = 0; i < v.cands.size(); ++i) {
    auto& c = v.cands[i];
    double x = p.px(static_cast<double>(i));
    std::string tip = fmt::format("{} {} {} {}: {}", c.id, c.agent, c.strategy, c.label,
                                  c.time_s > 0 ? ms(c.time_s) : c.check_text() + " " + c.reason);
    if (c.time_s > 0)
      s += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='4' fill='{}'><title>{}</title></circle>", x, p.py(c.time_s),
                       col.count(c.standing) ? col[c.standing] : "#000", esc(tip));
    else
      s += fmt::format("<text x='{:.1f}' y='{:.1f}' fill='{}' text-anchor='middle'>×<title>{}</title></text>", x,
                       p.h - p.mb - 4, col.count(c.standing) ? col[c.standing] : "#000", esc(tip));
  }
  int k = 0;
  for (auto& [standing, c] : col) {
    const std::string name = standing_name(standing);
    s += fmt::format("<circle cx='{}' cy='{}' r='4' fill='{}'/><text x='{}' y='{}'>{}</text>", p.w - p.mr + 15,
                     p.mt + 14 * k + 5, c, p.w - p.mr + 24, p.mt + 14 * k + 9,
                     accepted(standing) ? name : name + " (× at the bottom)");
    ++k;
  }
  return s + "</svg>";
}

std::string lineage_svg(const RunView& v) {
  auto chain = v.lineage();
  if (chain.empty()) return "<p>No leader.</p>";
  double bw = 170, bh = 64, gap = 30;
  double w = 20 + static_cast<double>(chain.size()) * (bw + gap);
  std::string s = fmt::format(
      "<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' font-family='sans-serif' font-size='11'>", w,
      bh + 20);
  for (std::size_t i = 0; i < chain.size(); ++i) {
    auto& c = *chain[i];
    double x = 10 + static_cast<double>(i) * (bw + gap);
    s += fmt::format("<rect x='{}' y='10' width='{}' height='{}' rx='6' fill='{}' stroke='#555'/>", x, bw, bh,
                     i + 1 == chain.size() ? "#d8f5d0" : "#eef");
    s += fmt::format("<text x='{}' y='26' font-weight='bold'>{} {}</text>", x + 6, c.id, esc(c.label.substr(0, 18)));
    s += fmt::format("<text x='{}' y='41'>{} · {}</text>", x + 6, esc(c.agent), esc(c.strategy.substr(0, 20)));
    s += fmt::format("<text x='{}' y='56'>{}{}</text>", x + 6, ms(c.time_s),
                     c.comparison ? "  " + comparison_cell(*c.comparison) : "");
    s += fmt::format("<text x='{}' y='70'>{}</text>", x + 6, c.score ? fmt::format("score {:.3f}", *c.score) : "");
    if (i + 1 < chain.size())
      s += fmt::format("<path d='M{},{} L{},{}' stroke='#555' marker-end='url(#a)'/>", x + bw, 10 + bh / 2,
                       x + bw + gap - 2, 10 + bh / 2);
  }
  s += "<defs><marker id='a' markerWidth='8' markerHeight='8' refX='7' refY='4' orient='auto'><path d='M0,0 L8,4 L0,8 "
       "z' "
       "fill='#555'/></marker></defs>";
  return s + "</svg>";
}

}  // namespace

std::string board_text(const std::filesystem::path& run_dir, bool include_evicted) {
  auto db = open_run(run_dir);
  std::string out;
  auto b = db->board(include_evicted);
  out += fmt::format("board of {} ({} entries{})\n", run_dir.string(), b.size(),
                     include_evicted ? ", evicted ones marked" : "");
  for (auto& s : b) {
    auto& e = s.entry;
    out += fmt::format("#{:<4} {:>7.1f}s {:<4} {:<24} {:<8} {:>+7.1f}%  {}{}{}\n", e.id, s.t, e.agent,
                       e.strategy.substr(0, 24), e.kind, e.delta * 100, e.text,
                       e.candidate.empty() ? "" : "  [" + e.candidate + "]", s.evicted ? "  (evicted)" : "");
  }
  return out;
}

namespace {

// "12 candidates evaluated (leader 2, backup 3, rejected 6, error 1)"; pending ones are not evaluated, and the
// reference is counted apart (it is measured, not a candidate).
std::string counts_text(const RunView& v, const std::filesystem::path& run_dir) {
  std::map<Standing, int> by;
  for (auto& c : v.cands)
    if (c.id != v.meta.at("reference")) ++by[c.standing];
  const int evaluated = by[Standing::leader] + by[Standing::backup] + by[Standing::rejected] + by[Standing::error];
  std::string out =
      fmt::format("run {}: task {} on {}, {} candidate{} evaluated (leader {}, backup {}, rejected {}, error {})\n",
                  run_dir.string(), v.meta.at("task"), v.meta.at("backend"), evaluated, evaluated == 1 ? "" : "s",
                  by[Standing::leader], by[Standing::backup], by[Standing::rejected], by[Standing::error]);
  const auto* ref = v.reference();
  const bool ref_pending = ref && ref->standing == Standing::pending;
  if (by[Standing::pending] > 0 || ref_pending)
    out += fmt::format("pending: {} candidate{}{} built here, awaiting evaluation on a GPU (khive evaluate-pending)\n",
                       by[Standing::pending], by[Standing::pending] == 1 ? "" : "s",
                       ref_pending ? " and the reference" : "");
  return out;
}

// The leader, how it took the lead, and what it gained over the reference by the own-run medians (labelled so).
std::string leader_text(const RunView& v) {
  const auto* ref = v.reference();
  const auto* l = v.leader();
  if (!l) return "";
  std::string out =
      fmt::format("leader {} ({}, {} by {}): own run {}", l->id, l->label, l->strategy, l->agent, ms(l->time_s));
  if (l->score)
    out += fmt::format(", task score {:.3f}", *l->score);
  else if (l->time_s > 0 && !ref)
    // A task whose only reference is PyTorch: T_b is that reference timed by the judge (docs/interop.md); no score
    // means that run gave none (torch missing, its run rejected, or its times at or under T_sol).
    out +=
        ", no task score (no reference kernel: the task's PyTorch reference, timed by the judge, gave no T_b above "
        "T_sol; "
        "the run's notes say why)";
  else if (l->time_s > 0)
    out += ", no task score (T_b at or under T_sol on every workload: a stale profile? khive calibrate)";
  if (ref && ref != l && ref->time_s > 0 && l->time_s > 0)
    out += fmt::format("; {:.2f}x the reference by the own-run medians ({})", ref->time_s / l->time_s, ms(ref->time_s));
  out += "\n";
  if (l->comparison) out += "it took the lead by " + comparison_full(*l->comparison) + "\n";
  return out;
}

// Scores come from each kernel's own run; the leader from A/B comparisons. When an accepted kernel scores above
// the leader, say so and why, rather than leave two numbers that seem to disagree.
std::string score_note(const RunView& v) {
  const auto* l = v.leader();
  if (!l || !l->score) return "";
  const CandidateRecord* top = nullptr;
  for (auto& c : v.cands)
    if (c.accepted() && c.id != l->id && c.score && *c.score > *l->score && (!top || *c.score > *top->score)) top = &c;
  if (!top) return "";
  std::string how = top->comparison ? "its own comparison: " + comparison_brief(*top->comparison)
                    : top->id == v.meta.at("reference")
                        ? "it was the first leader, and was replaced by a kernel that beat it in the A/B"
                        : "it never won an A/B against the leader of its time";
  return fmt::format(
      "note: {} ({}) has a higher task score than the leader ({:.3f} vs {:.3f}): task scores come from each kernel's "
      "own "
      "timing run, while the leader is chosen by interleaved A/B runs against the leader of the time (check 11), "
      "which are what decides on a noisy machine; {}\n",
      top->id, top->label, *top->score, *l->score, how);
}

// Agents that stopped because they could not work (their model provider failed).
std::string failures_text(const RunView& v) {
  auto j = nlohmann::json::parse(v.meta.count("agent_failures") ? v.meta.at("agent_failures") : "{}", nullptr, false);
  if (!j.is_object() || j.empty()) return "";
  std::string out;
  for (auto& [name, f] : j.items())
    if (f.is_object())
      out += fmt::format("agent {} ({}) failed: {}\n", name, f.value("kind", "?"), f.value("reason", "?"));
  return out;
}

}  // namespace

std::string summary_text(const std::filesystem::path& run_dir) {
  auto v = load(run_dir);
  std::string out = counts_text(v, run_dir);
  if (!v.meta["stop_reason"].empty()) out += "stopped: " + v.meta["stop_reason"] + "\n";
  out += failures_text(v);
  if (v.leader()) {
    out += leader_text(v);
    out += score_note(v);
    if (!v.meta["score_basis"].empty()) out += "scores: " + v.meta["score_basis"] + "\n";
    std::string chain;
    for (auto* c : v.lineage()) chain += (chain.empty() ? "" : " -> ") + c->id;
    out += "lineage: " + chain + "\n";
  }
  auto slots = nlohmann::json::parse(v.meta.count("slots") ? v.meta["slots"] : "[]", nullptr, false);
  double wall = v.meta.count("wall_s") ? std::atof(v.meta["wall_s"].c_str()) : 0;
  if (slots.is_array())
    for (auto& s : slots)
      out += fmt::format("device slot {}: busy {:.1f} s of {:.1f} s ({:.0f}%), {} runs ({:.1f} per minute)\n",
                         s.value("name", "?"), s.value("busy_s", 0.0), wall,
                         wall > 0 ? 100 * s.value("busy_s", 0.0) / wall : 0.0, s.value("evaluations", 0),
                         wall > 0 ? 60 * s.value("evaluations", 0) / wall : 0.0);
  if (v.meta.count("prebuild")) {
    auto pb = nlohmann::json::parse(v.meta["prebuild"], nullptr, false);
    if (pb.is_object() && pb.value("jobs", 0) > 0)
      out += fmt::format(
          "speculative builds ({} at a time): {} built ahead ({} failed), {} of them evaluated later; {} already "
          "cached, {} dropped, {} cancelled at the end; {:.1f} s of compiling ahead\n",
          pb.value("jobs", 0), pb.value("built", 0), pb.value("failed", 0), pb.value("used", 0), pb.value("cached", 0),
          pb.value("dropped", 0), pb.value("cancelled", 0), pb.value("compile_s", 0.0));
  }
  out +=
      fmt::format("strategy switches: {}; board entries: {}\n", v.switches.size(),
                  std::count_if(v.board.begin(), v.board.end(), [](const StoredBoardEntry& b) { return !b.evicted; }));
  return out;
}

std::string report_html(const std::filesystem::path& run_dir) {
  auto v = load(run_dir);
  std::string h =
      "<!doctype html><html><head><meta charset='utf-8'><title>khive run " + esc(v.meta["task"]) +
      "</title><style>"
      "body{font-family:sans-serif;margin:24px;max-width:1100px}table{border-collapse:collapse;font-size:12px}"
      "td,th{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}th{background:#f0f0f0}"
      ".leader{background:#e6f7e1}.rejected{color:#a00}.error{color:#777}.evicted{color:#aaa}pre{background:#f6f6f6;"
      "padding:8px}"
      "</style></head><body>";
  h += "<h1>khive optimize: " + esc(v.meta["task"]) + "</h1>";
  h += "<pre>" + esc(summary_text(run_dir)) + "</pre>";
  h += "<h2>Accepted kernels over time, and the leader</h2>" + progress_svg(v);
  h += "<h2>Every candidate's time</h2>" + times_svg(v);
  h += "<h2>Lineage of the leader</h2><div style='overflow-x:auto'>" + lineage_svg(v) + "</div>";
  h += "<h2>Board</h2><table><tr><th>#</th><th>t</th><th>agent</th><th>strategy</th><th>kind</th><th>delta</"
       "th><th>conclusion</th><th>candidate</"
       "th></tr>";
  for (auto& s : v.board)
    h += fmt::format(
        "<tr "
        "class='{}'><td>{}</td><td>{:.1f}s</td><td>{}</td><td>{}</td><td>{}</td><td>{:+.1f}%</td><td>{}</td><td>{}</"
        "td></tr>",
        s.evicted ? "evicted" : "", s.entry.id, s.t, esc(s.entry.agent), esc(s.entry.strategy), esc(s.entry.kind),
        s.entry.delta * 100, esc(s.entry.text) + (s.evicted ? " (evicted)" : ""), esc(s.entry.candidate));
  h += "</table>";
  h += "<h2>Strategy switches</h2><table><tr><th>t</th><th>agent</th><th>from</th><th>to</th><th>reason</th></tr>";
  for (auto& s : v.switches)
    h += fmt::format("<tr><td>{:.1f}s</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", s.t, esc(s.agent),
                     esc(s.from), esc(s.to), esc(s.reason));
  h += "</table>";
  h += "<h2>Candidates</h2><table><tr><th>id</th><th>t</th><th>agent</th><th>strategy</th><th>label</th><th>parent</"
       "th><th>verdict</th>"
       "<th>own run</th><th>vs leader of its time</th><th>score</th><th>why</th></tr>";
  for (auto& c : v.cands) {
    std::string params;
    for (auto& [k, val] : c.params) params += (params.empty() ? "" : " ") + k + "=" + val;
    h += fmt::format(
        "<tr class='{}'><td><a "
        "href='{}'>{}</a></td><td>{:.1f}s</td><td>{}</td><td>{}</td><td>{}<br><small>{}</small></td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        standing_name(c.standing), esc(c.file), c.id, c.t, esc(c.agent), esc(c.strategy), esc(c.label), esc(params),
        esc(c.parent), standing_name(c.standing), ms(c.time_s), c.comparison ? comparison_cell(*c.comparison) : "",
        c.score ? fmt::format("{:.3f}", *c.score) : "",
        esc(c.comparison ? comparison_full(*c.comparison)
            : !c.check   ? c.note
                         : c.check_text() + " / " + c.reason + ": " + c.message));
  }
  h += "</table>";
  if (auto* l = v.leader()) h += "<h2>The leader's source (" + esc(l->id) + ")</h2><pre>" + esc(l->source) + "</pre>";
  h += "</body></html>\n";
  return h;
}

std::filesystem::path write_report(const std::filesystem::path& run_dir) {
  auto p = run_dir / "report.html";
  write_file_atomic(p, report_html(run_dir));
  return p;
}

}  // namespace khive
