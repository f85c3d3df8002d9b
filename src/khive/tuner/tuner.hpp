// The tuner agent: no model, a library of kernel templates (kernels/) searched one sub-space at a time.
//
//   TunerOptions o;                                   // kernels_dir: $KHIVE_KERNELS or <repo>/kernels
//   o.memory = std::make_shared<TunerMemory>();       // share among the run's tuner agents: no point twice
//   std::unique_ptr<Agent> a = make_tuner_agent(o);
//   a->strategies(task, Backend::cuda);               // {"gemm.tile_shape", "gemm.cluster_and_schedule", ...}
//   a->propose(ctx);                                  // a rendered template instance: source, params, note
//   a->observe(ctx, proposal, outcome);               // board entry: "VEC=8 ITEMS=4: +6.2% vs leader"
//
// A template is a kernel source with {{NAME}} placeholders plus a manifest (docs/tuner.md): its parameter
// space, validity rules over parameters and the task's axes (checked before anything is built), and its
// strategies (sub-spaces). A binding (kernels/bindings/<suite>.json) says what a task computes in a family's
// terms (the elementwise functor, the row op, the GEMM layouts) and so which templates apply to it.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "khive/agent/agent.hpp"

namespace khive {

// Points already proposed in a run (template name + parameters), shared by the tuner agents of one hive so
// that no point is proposed twice; thread-safe. The hive may also mark points of resumed candidates.
class TunerMemory {
 public:
  // true when the point was new (and is now marked), false when it was already tried.
  bool try_mark(const std::string& point_key);
  bool tried(const std::string& point_key) const;
  std::size_t size() const;

 private:
  mutable std::mutex mu_;
  std::set<std::string> keys_;
};

struct TunerOptions {
  std::filesystem::path kernels_dir;    // empty = $KHIVE_KERNELS, else <source dir>/kernels
  std::shared_ptr<TunerMemory> memory;  // null = a private memory per agent
  // Points to propose before anything else, in this order (khive optimize --warm-start: the fastest accepted
  // points of earlier runs): each a template's parameters plus "template". A point whose template does not apply
  // to the task, or that the template's rules rule out for it, is skipped; with a shared memory each is proposed
  // once per run.
  std::vector<std::map<std::string, std::string>> warm_start;
  // When not empty, only these templates of the library serve tasks (by name; a tuner.dispatch composite is made of
  // them). A replay (khive optimize --replay, tests/recordings) gives the templates its recording used, so templates
  // added to kernels/ since do not change the round robin of strategies the recorded run had.
  std::set<std::string> templates;
};

// Throws std::runtime_error naming the file and field when the template library does not load.
std::unique_ptr<Agent> make_tuner_agent(const TunerOptions& options);

// The library the options point at (for `khive tuner` tools and tests).
std::filesystem::path default_kernels_dir();

// The canonical key of a template point: "elementwise.cpu|CHUNK=4096|VEC=8" (parameters sorted by name).
std::string point_key(const std::string& template_name, const std::map<std::string, std::string>& params);

}  // namespace khive
