// The tuner agent (tuner.hpp): one strategy = one sub-space of the templates that apply to the task. It starts
// from the leader's point when the leader came from a template with this strategy (else from a template's
// default), visits the sub-space nearest-first, never proposes an invalid point (the rules are checked here,
// before anything is built) nor a point already proposed in the run, and reports each verdict as one line.
#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "khive/tuner/auto_bind.hpp"
#include "khive/tuner/bind.hpp"
#include "khive/tuner/compose.hpp"
#include "khive/tuner/library.hpp"
#include "khive/tuner/space.hpp"
#include "khive/tuner/tuner.hpp"

namespace khive {

bool TunerMemory::try_mark(const std::string& k) {
  std::lock_guard<std::mutex> l(mu_);
  return keys_.insert(k).second;
}
bool TunerMemory::tried(const std::string& k) const {
  std::lock_guard<std::mutex> l(mu_);
  return keys_.count(k) > 0;
}
std::size_t TunerMemory::size() const {
  std::lock_guard<std::mutex> l(mu_);
  return keys_.size();
}

std::string point_key(const std::string& template_name, const std::map<std::string, std::string>& params) {
  std::string k = template_name;
  for (const auto& [n, v] : params)
    if (n != "template") k += "|" + n + "=" + v;
  return k;
}

std::filesystem::path default_kernels_dir() {
  if (const char* e = std::getenv("KHIVE_KERNELS"); e && *e) return e;
  return std::filesystem::path(KHIVE_SOURCE_DIR) / "kernels";
}

namespace {

using tuner::BoundTask;
using tuner::Point;
using tuner::Template;

std::string fmt_time(double s) {
  if (s <= 0) return "?";
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} s", s);
}

// A candidate's file-name label: s with every character other than [A-Za-z0-9_-] made '_'; longer than `max`, its
// first `keep` characters and a hash of `hash_of` (s itself when empty), so that long labels stay distinct.
std::string file_label(std::string s, std::size_t max, std::size_t keep, const std::string& hash_of = "") {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  if (s.size() > max)
    s = s.substr(0, keep) + "-" +
        fmt::format("{:x}", std::hash<std::string>{}(hash_of.empty() ? s : hash_of) & 0xffffffull);
  return s;
}

std::string short_label(const Template& t, const Point& p) {
  std::string s = t.name;
  for (const auto& [k, v] : p) s += "-" + k + v;
  return file_label(std::move(s), 96, 80);
}

class TunerAgent final : public Agent {
 public:
  explicit TunerAgent(const TunerOptions& o)
      : lib_(tuner::load_library(o.kernels_dir.empty() ? default_kernels_dir() : o.kernels_dir)),
        mem_(o.memory ? o.memory : std::make_shared<TunerMemory>()), warm_(o.warm_start), only_(o.templates) {}

  std::string kind() const override { return "tuner"; }

  std::vector<Strategy> strategies(const Task& task, Backend backend) const override {
    std::vector<Strategy> out;
    const State* st = state(task, backend);
    if (!st) return out;
    // Round robin over the templates (each one's first strategy, then each one's second, ...): the hive starts agent
    // i on strategy i, so a few agents begin on different templates instead of all on the first one's sub-spaces
    // (on the H200, three agents with 16 candidates on sol/softmax never reached the ring or cluster templates,
    // 1.7-6x faster than the first template on some shapes).
    std::size_t depth = 0;
    for (const Template* t : st->templates) depth = std::max(depth, t->strategies.size());
    for (std::size_t d = 0; d < depth; ++d)
      for (const Template* t : st->templates)
        if (d < t->strategies.size()) {
          const auto& s = t->strategies[d];
          if (std::none_of(out.begin(), out.end(), [&](const Strategy& x) { return x.name == s.name; }))
            out.push_back({s.name, s.description});
        }
    // Several timed shapes: the fastest accepted point of each can be composed into one kernel (compose.hpp).
    if (std::count(st->bt.workload_perf.begin(), st->bt.workload_perf.end(), true) >= 2)
      out.push_back(
          {tuner::kDispatchTemplate,
           "per-shape dispatch: one kernel calling, per timed shape, the accepted point that measured fastest there"});
    return out;
  }

  std::optional<Proposal> propose(const AgentContext& ctx) override {
    declined_.clear();
    return search(ctx, nullptr, 1);
  }

  // The points propose() would try next, in its order, without marking them tried: what the hive builds ahead.
  // Composites are left out (they are made from measured variants, and their proposal marks state).
  std::vector<Proposal> peek(const AgentContext& ctx, std::size_t n) override {
    std::vector<Proposal> out;
    if (n > 0) search(ctx, &out, n);
    return out;
  }

  // propose()'s search. peeked == nullptr: the first valid untried point, marked tried. Else up to `want` valid
  // untried points are collected into *peeked in the same order and nothing is marked or declined.
  std::optional<Proposal> search(const AgentContext& ctx, std::vector<Proposal>* peeked, std::size_t want) {
    if (ctx.stopping() || !ctx.task) return std::nullopt;
    const State* st = state(*ctx.task, ctx.backend);
    if (!st) {
      if (peeked) return std::nullopt;
      std::lock_guard<std::mutex> l(mu_);
      auto it = no_template_.find(ctx.task->hash + "|" + ctx.task->dir.string() + "|" +
                                  std::string(backend_name(ctx.backend)));
      if (it != no_template_.end()) declined_ = it->second;
      return std::nullopt;
    }
    // Points the hive already measured count as tried (a resumed run, another agent's leader).
    if (ctx.leader) mark_measured(*ctx.leader);
    for (const auto& b : ctx.backups) mark_measured(b);

    // The kernel to derive from: the leader, or the backup the hive restarted this agent from after a hive-wide
    // plateau (ctx.start; deriving from the leader then would search the plateau the restart is meant to leave).
    const std::optional<MeasuredKernel>& from = ctx.start ? ctx.start : ctx.leader;
    const Template* leader_t = nullptr;
    Point leader_point;
    if (from) {
      auto it = from->params.find("template");
      if (it != from->params.end()) {
        leader_t = lib_.find_template(it->second);
        if (leader_t) leader_point = tuner::point_from_params(*leader_t, from->params);
      }
    }
    const uint64_t seed = ctx.seed ^ std::hash<std::string>{}(ctx.strategy.name);
    std::vector<std::string> invalid;
    std::size_t invalid_count = 0;
    std::set<std::string> peeked_keys;

    auto try_point = [&](const Template& t, const Point& p, const Point& base,
                         bool from_leader) -> std::optional<Proposal> {
      const std::string key = point_key(t.name, p);
      if (mem_->tried(key)) return std::nullopt;
      const auto v = tuner::check_point(t, st->bt, p);
      if (!v.ok) {
        ++invalid_count;
        if (invalid.size() < 2) invalid.push_back(tuner::describe_change(base, p) + ": " + v.message);
        return std::nullopt;
      }
      if (peeked ? !peeked_keys.insert(key).second : !mem_->try_mark(key)) return std::nullopt;
      Proposal prop;
      prop.source = tuner::render(t, st->bt, p);
      prop.ext = t.backend == Backend::cuda ? "cu" : "cpp";
      prop.parent = from_leader && from ? from->id : "";
      prop.params = p;
      prop.params["template"] = t.name;
      const std::string change = from_leader ? tuner::describe_change(base, p) : "";
      prop.note = from_leader ? fmt::format("{}: {} ({})", t.name, change.empty() ? "leader's point" : change,
                                            ctx.strategy.name)
                              : fmt::format("{}: {} ({})", t.name,
                                            p == t.default_point() ? "default point " + tuner::describe_point(p)
                                                                   : tuner::describe_point(p),
                                            ctx.strategy.name);
      if (const std::string fp = tuner::fast_path_note(v); !fp.empty()) prop.note += "; " + fp;
      if (invalid_count)
        prop.note += fmt::format("; {} invalid point{} skipped unbuilt: {}", invalid_count,
                                 invalid_count == 1 ? "" : "s", fmt::join(invalid, "; "));
      prop.label = short_label(t, p);
      if (peeked) {
        peeked->push_back(prop);
        if (peeked->size() < want) return std::nullopt;  // go on collecting
      }
      return prop;
    };

    auto explore = [&](const Template& t, const Point& base, bool from_leader) -> std::optional<Proposal> {
      const tuner::StrategySpec* s = find_strategy(t, ctx.strategy.name);
      if (!s) return std::nullopt;
      if (!from_leader)
        if (auto p = try_point(t, base, base, false)) return p;
      for (const Point& p : tuner::subspace_order(t, base, s->params, seed)) {
        if (ctx.stopping()) return std::nullopt;
        if (auto prop = try_point(t, p, base, from_leader)) return prop;
      }
      return std::nullopt;
    };

    // Warm start: earlier runs' best points first, whatever the strategy (each once per run); an earlier run's
    // composite stands for its variants.
    for (const auto& w : warm_points()) {
      if (ctx.stopping()) return std::nullopt;
      auto it = w.find("template");
      const Template* t = it == w.end() ? nullptr : lib_.find_template(it->second);
      if (!t || std::find(st->templates.begin(), st->templates.end(), t) == st->templates.end()) continue;
      const Point p = tuner::point_from_params(*t, w);
      if (auto prop = try_point(*t, p, p, false)) {
        prop->note = "warm start (a point of an earlier run): " + prop->note;
        return prop;
      }
    }
    if (ctx.strategy.name == tuner::kDispatchTemplate) return peeked ? std::nullopt : compose(ctx, *st);
    // A composite the measurements already say is clearly faster (expected weighted time 5% or more below the
    // leader's) is proposed by whichever tuner agent asks first, whatever strategy it holds: waiting for an agent
    // to switch to tuner.dispatch can leave the gain unused for the rest of a short budget (measured on the H200:
    // 24 candidates, three agents, never reached it). Proposed once; the guard judges it like any candidate.
    if (!peeked)
      if (auto p = compose(ctx, *st, kOpportunisticGain)) return p;
    if (leader_t && std::find(st->templates.begin(), st->templates.end(), leader_t) != st->templates.end())
      if (auto p = explore(*leader_t, leader_point, true)) return p;
    std::vector<std::string> dominated;
    for (const Template* t : st->templates) {
      if (t == leader_t || !find_strategy(*t, ctx.strategy.name)) continue;
      if (std::string why = dominated_by_leader(*t, ctx); !why.empty()) {
        dominated.push_back(std::move(why));
        continue;
      }
      if (auto p = explore(*t, start_point(*t, st->bt, seed), false)) return p;
    }
    // This strategy has nothing valid left to try here, or only on templates the leader leaves far behind.
    if (peeked) return std::nullopt;
    declined_ = dominated.empty() ? "" : fmt::format("{}", fmt::join(dominated, "; "));
    return std::nullopt;
  }

  std::string declined_because() const override { return declined_; }

  std::string idle_because(const Task& task, Backend backend) const override {
    if (state(task, backend)) return "";
    {  // an op the tuner tried to bind by itself and could not: say what did not match
      std::lock_guard<std::mutex> l(mu_);
      auto it = no_template_.find(task.hash + "|" + task.dir.string() + "|" + std::string(backend_name(backend)));
      if (it != no_template_.end()) return it->second;
    }
    const std::string key = tuner::task_key(task);
    if (!lib_.binding_for(task))
      return fmt::format(
          "the tuner has nothing to try: its library ({}) has no binding for task {} (op_type '{}'); add one "
          "(kernels/bindings/*.json, docs/tuner.md) or use an LLM agent (--agent llm:CONFIG)",
          lib_.dir.string(), key, task.op_type);
    return fmt::format(
        "the tuner has nothing to try: none of the {} templates of its library ({}) applies to {} on the {} backend",
        lib_.templates.size(), lib_.dir.string(), key, backend_name(backend));
  }

  std::optional<BoardEntry> observe(const AgentContext& ctx, const Proposal& p, const Outcome& o) override {
    if (o.standing == Standing::error) return std::nullopt;  // a harness failure says nothing about the kernel
    BoardEntry e;
    e.agent = kind();
    e.strategy = ctx.strategy.name;
    e.candidate = o.candidate;
    e.delta = o.delta_vs_leader;
    const std::string tname = p.params.count("template") ? p.params.at("template") : "?";
    Point pt = p.params;
    pt.erase("template");
    std::string what;
    if (tname == tuner::kDispatchTemplate) {
      const auto n = tuner::dispatch_variant_points(p.params).size();
      what = fmt::format("dispatch over {} points (candidates {})", n,
                         p.params.count("variants") ? p.params.at("variants") : "?");
    } else if (ctx.leader && ctx.leader->params.count("template") && ctx.leader->params.at("template") == tname) {
      Point lp = ctx.leader->params;
      lp.erase("template");
      what = tuner::describe_change(lp, pt);
      if (what.empty()) what = "same point as the leader";
    } else {
      what = fmt::format("{} {}", tname, tuner::describe_point(pt));
    }
    // How it stood against the leader, in the hive's words (its comparison: check 11's A/B); the own-run median
    // is labelled as such, never set beside the A/B as if it said which is faster.
    const std::string cmp =
        o.comparison.empty() ? fmt::format("{:+.1f}% vs the leader", o.delta_vs_leader * 100) : o.comparison;
    if (o.standing == Standing::leader) {
      e.kind = "worked";
      e.text = ctx.leader ? fmt::format("{}: new leader (own run {}); {}", what, fmt_time(o.time_s), cmp)
                          : fmt::format("{}: first correct kernel, own run {}", what, fmt_time(o.time_s));
    } else if (o.standing == Standing::backup) {
      e.kind = "insight";
      e.text = fmt::format("{}: kept as a backup (own run {}); {}", what, fmt_time(o.time_s), cmp);
    } else {
      e.kind = "failed";
      std::string msg = o.message.size() > 160 ? o.message.substr(0, 157) + "..." : o.message;
      e.text = fmt::format("{}: rejected at {} ({}){}", what, o.check ? o.check_text() : "?", o.reason,
                           msg.empty() ? "" : ": " + msg);
    }
    return e;
  }

 private:
  struct State {
    BoundTask bt;
    std::vector<const Template*> templates;
  };

  // Binding per (task, backend), computed once; a task without a binding gets no strategies.
  const State* state(const Task& task, Backend backend) const {
    std::lock_guard<std::mutex> l(mu_);
    const std::string key = task.hash + "|" + task.dir.string() + "|" + std::string(backend_name(backend));
    auto it = states_.find(key);
    if (it != states_.end()) return it->second ? &*it->second : nullptr;
    const tuner::Binding* b = lib_.binding_for(task);
    // No bindings file names the task: a binding for a recognised op (auto_bind.hpp), else the reason, said plainly.
    std::optional<tuner::Binding> inferred;
    std::string why;
    if (!b && (inferred = tuner::infer_binding(task, &why))) b = &*inferred;
    std::optional<State> st;
    if (b) {
      State s;
      try {
        s.bt = tuner::bind_task(task, backend, *b);
      } catch (const TaskFormatError& e) {
        if (!inferred) throw;  // a bindings file's mistake is an error; an inferred binding that does not fit is not
        why = std::string("the inferred binding does not fit: ") + e.what();
        b = nullptr;
      }
      if (b) {
        s.templates = tuner::applicable_templates(lib_, s.bt);
        if (!only_.empty())  // TunerOptions::templates: the others are left out (a replay's recorded library)
          std::erase_if(s.templates, [&](const Template* t) { return !only_.count(t->name); });
        // A template none of whose points is valid here (gemm.cuda_smallk_3xtf32 on a deep K: its fast path takes no
        // timed shape) would only cost an agent its strategies; chains are left as they are (their spaces are large).
        if (s.bt.stages.empty())
          std::erase_if(s.templates,
                        [&](const Template* t) { return !tuner::check_point(*t, s.bt, start_point(*t, s.bt, 0)).ok; });
        if (!s.templates.empty())
          st = std::move(s);
        else
          why = fmt::format("no {} template for {} on {} (op {}, dtype {})", b->family, task.name,
                            backend_name(backend), s.bt.op, s.bt.dtype);
      }
    }
    if (!st)
      no_template_[key] =
          "the tuner has no template for this task: " + why + "; other agents (LLM: --agents llm:...) can still try it";
    auto [pos, _] = states_.emplace(key, std::move(st));
    return pos->second ? &*pos->second : nullptr;
  }

  // The template's default, or when a rule rules it out for this task, the nearest valid point.
  static Point start_point(const Template& t, const BoundTask& bt, uint64_t seed) {
    Point d = t.default_point();
    if (tuner::check_point(t, bt, d).ok) return d;
    std::vector<std::string> all;
    for (const auto& p : t.params) all.push_back(p.name);
    for (const Point& p : tuner::subspace_order(t, d, all, seed))
      if (tuner::check_point(t, bt, p).ok) return p;
    return d;  // nothing valid: every proposal attempt is then skipped as invalid
  }

  // A template the measurements rule out: at least kDominatedAfter of its points among the backups the agent sees
  // (the leader is another template's), and on every timed shape the leader is at least kDominated times faster
  // than the best of them. Its sub-spaces are then left alone: on the H200, kb17's 24-candidate run spent 13
  // candidates on the hand-written SIMT template's strategies at 1.7-3.9x the CUTLASS leader's time. Per shape, so
  // that a template that wins one shape stays in play for a per-shape composite. "" when the template is still
  // worth exploring, else one phrase with the numbers.
  static constexpr double kDominated = 1.5;
  static constexpr std::size_t kDominatedAfter = 2;

  static std::string dominated_by_leader(const Template& t, const AgentContext& ctx) {
    if (!ctx.leader || ctx.leader->workload_median_s.empty()) return "";
    std::size_t points = 0;
    std::map<std::string, double> best;  // per timed shape, the template's fastest measured median
    for (const MeasuredKernel& k : ctx.backups) {
      auto it = k.params.find("template");
      if (it == k.params.end() || it->second != t.name) continue;
      ++points;
      for (const auto& [w, m] : k.workload_median_s)
        if (m > 0 && (!best.count(w) || m < best[w])) best[w] = m;
    }
    if (points < kDominatedAfter) return "";
    double closest = 0;  // the smallest ratio (template's best / leader) over the shapes
    for (const auto& [w, lm] : ctx.leader->workload_median_s) {
      auto it = best.find(w);
      if (lm <= 0 || it == best.end()) return "";  // a shape the template was not timed on: no verdict
      const double r = it->second / lm;
      if (r < kDominated) return "";
      closest = closest == 0 ? r : std::min(closest, r);
    }
    return fmt::format("{}'s {} measured points are {:.2f}x the leader's time or more on every timed shape", t.name,
                       points, closest);
  }

  static const tuner::StrategySpec* find_strategy(const Template& t, const std::string& name) {
    for (const auto& s : t.strategies)
      if (s.name == name) return &s;
    return nullptr;
  }

  // The least expected weighted gain for which any tuner agent proposes a composite (see propose).
  static constexpr double kOpportunisticGain = 0.05;

  // A composite's key: its points and routes (not the candidate ids, so the same composite of re-measured points is
  // the same composite).
  static std::string dispatch_key(const std::map<std::string, std::string>& params) {
    auto p = params;
    p.erase("variants");
    return point_key(tuner::kDispatchTemplate, p);
  }

  // Per timed shape the fastest accepted point (tuner.dispatch); nothing when the leader's points are the fastest
  // everywhere (within 3%), when this composite was proposed before, or when the variants cannot share one unit.
  // min_weighted_gain > 0: only a plan whose expected weighted time beats the leader's by that much.
  std::optional<Proposal> compose(const AgentContext& ctx, const State& st, double min_weighted_gain = 0) {
    const tuner::DispatchPlan plan = tuner::plan_dispatch(*ctx.task, st.bt, lib_, ctx.leader, ctx.backups);
    if (!plan.ok()) return std::nullopt;
    if (min_weighted_gain > 0 && (!ctx.leader || ctx.leader->time_s <= 0 || plan.expected_time_s <= 0 ||
                                  plan.expected_time_s > ctx.leader->time_s * (1 - min_weighted_gain)))
      return std::nullopt;
    const std::string key = dispatch_key(plan.params);
    if (mem_->tried(key)) return std::nullopt;
    Proposal prop;
    try {
      prop.source = tuner::render_composite(*ctx.task, st.bt, plan.variants, plan.routes);
    } catch (const tuner::ComposeError&) {
      mem_->try_mark(key);  // the same variants would be refused again
      return std::nullopt;
    }
    if (!mem_->try_mark(key)) return std::nullopt;
    prop.ext = st.bt.backend == Backend::cuda ? "cu" : "cpp";
    prop.parent = ctx.leader ? ctx.leader->id : "";
    prop.params = plan.params;
    prop.note = plan.note + " (" +
                (ctx.strategy.name == tuner::kDispatchTemplate
                     ? ctx.strategy.name
                     : "proposed under " + ctx.strategy.name + ": the measurements promise a clear gain") +
                ")";
    std::string ids = plan.params.at("variants");
    std::replace(ids.begin(), ids.end(), ' ', '-');
    prop.label = file_label("dispatch-" + ids, 64, 48, key);
    return prop;
  }

  // The warm-start points with each composite replaced by its variants' points (a malformed one is dropped).
  std::vector<std::map<std::string, std::string>> warm_points() const {
    std::vector<std::map<std::string, std::string>> out;
    for (const auto& w : warm_) {
      auto it = w.find("template");
      if (it == w.end() || it->second != tuner::kDispatchTemplate) {
        out.push_back(w);
        continue;
      }
      try {
        for (auto& p : tuner::dispatch_variant_points(w)) out.push_back(std::move(p));
      } catch (const std::exception&) {
      }
    }
    return out;
  }

  void mark_measured(const MeasuredKernel& k) {
    auto it = k.params.find("template");
    if (it == k.params.end()) return;
    if (it->second == tuner::kDispatchTemplate) {
      mem_->try_mark(dispatch_key(k.params));
      return;
    }
    if (const Template* t = lib_.find_template(it->second))
      mem_->try_mark(point_key(t->name, tuner::point_from_params(*t, k.params)));
  }

  tuner::Library lib_;
  std::shared_ptr<TunerMemory> mem_;
  std::vector<std::map<std::string, std::string>> warm_;
  std::set<std::string> only_;                              // TunerOptions::templates (empty: all)
  std::string declined_;                                    // why the last propose() found nothing (declined_because)
  mutable std::map<std::string, std::string> no_template_;  // per state key: why the task has no template
  mutable std::mutex mu_;
  mutable std::map<std::string, std::optional<State>> states_;
};

}  // namespace

std::unique_ptr<Agent> make_tuner_agent(const TunerOptions& options) { return std::make_unique<TunerAgent>(options); }

}  // namespace khive
