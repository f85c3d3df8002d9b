// The template library (kernels/): templates with their parameter spaces, validity rules and strategies, and
// the bindings that say what each task computes in a family's terms. Formats: docs/tuner.md.
//
//   Library lib = load_library("kernels");               // every kernels/<family>/*.json + kernels/bindings/*.json
//   const Binding* b = lib.binding_for(task);           // "demo-cpu/softmax" -> {family rowop, op softmax, ...}
//   for (const Template& t : lib.templates) if (t.family == b->family && t.backend == Backend::cpu) ...
//
// Errors are khive::TaskFormatError: "<file>: <field>: expected <what>, got <value>".
#pragma once
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/task/task.hpp"

namespace khive::tuner {

// A point of a template's space: parameter name -> value as written in the manifest ("8", "cooperative").
using Point = std::map<std::string, std::string>;

struct Param {
  std::string name;                 // upper-case identifier, used as {{NAME}} in the source
  std::vector<std::string> values;  // in order: neighbours in this list are one step apart
  bool numeric = true;              // every value is an integer (else: identifiers, seen as NAME_value flags)
  std::string default_value;
  std::string description;
};

struct Rule {
  std::string require;  // condition over parameters, derived values and the family's task variables
  std::string message;  // shown when it fails; {NAME} is replaced by that variable's value
};

struct StrategySpec {
  std::string name;  // "gemm.tile_shape"
  std::string description;
  std::vector<std::string> params;  // the sub-space this strategy mutates
};

struct Template {
  std::string name;    // "gemm.cuda_sm90" (unique in the library)
  std::string family;  // "elementwise" | "gated" | "rowop" | "gemm" | "rope"
  Backend backend = Backend::cpu;
  std::string description;
  std::filesystem::path manifest;  // kernels/<family>/<name>.json
  std::filesystem::path source_path;
  std::string source;            // the template text with {{NAME}} placeholders
  std::set<std::string> dtypes;  // element types it handles (definition.json spelling)
  std::set<std::string> ops;     // binding ops it handles; empty = every op of the family
  std::vector<Param> params;
  std::vector<std::pair<std::string, std::string>> derived;  // name -> integer expression, in file order
  std::vector<Rule> rules;  // the fast path compiles and runs at all (resources, tile shapes): every workload
  // When the fast path takes a shape: the rendered kernel checks the same conditions at run time and sends the
  // other calls to its generic path. Evaluated per workload; a point must take at least one perf workload.
  std::vector<Rule> fast_path;
  std::vector<StrategySpec> strategies;
  // A chain template (chain.hpp): its stage templates, in order (copies); its params are theirs as S<i>_<NAME>.
  std::vector<Template> stages;

  const Param* find_param(std::string_view n) const;
  Point default_point() const;
  std::size_t space_size() const;  // product of the value counts (saturates at SIZE_MAX)
};

// What a task computes, in a family's terms: one entry of kernels/bindings/<suite>.json.
struct Binding {
  std::string key;  // "<suite>/<task>": the task directory's parent and own name
  std::string family;
  nlohmann::ordered_json spec;  // the family-specific fields, checked by bind_task (bind.hpp)
  std::filesystem::path file;   // the bindings file
};

struct Library {
  std::filesystem::path dir;
  std::vector<Template> templates;          // sorted by name
  std::map<std::string, Binding> bindings;  // by key
  // The glue of chain templates per backend (kernels/chain/cpu.cpp.in, cuda.cu.in; chain.hpp), includes expanded.
  std::map<Backend, std::pair<std::filesystem::path, std::string>> chain_glue;
  const Binding* binding_for(const Task& t) const;  // by the task directory's "<parent>/<name>"
  // A template by name; "chain:a+b" is the chain of templates a and b, made on first use and kept (nullptr when a
  // stage is unknown or the chain cannot be made).
  const Template* find_template(std::string_view name) const;
  // The chain of these stage templates (made on first use; thread-safe). Throws std::runtime_error (no glue for the
  // backend, mixed backends).
  const Template& chain_template(const std::vector<const Template*>& stages) const;

  struct ChainCache {
    std::mutex mu;
    std::deque<Template> made;  // stable addresses
  };
  std::shared_ptr<ChainCache> chains = std::make_shared<ChainCache>();
};

// The task variables a family's rules may use, besides parameters and derived values (bind.hpp fills them).
const std::vector<std::string>& family_variables(const std::string& family);
const std::set<std::string>& known_families();
std::string known_families_text();  // "elementwise, gated, rowop, gemm or rope", for error messages

Template load_template(const std::filesystem::path& manifest);
std::map<std::string, Binding> load_bindings(const std::filesystem::path& file);
Library load_library(const std::filesystem::path& dir);

// "<suite>/<task>" for a task directory.
std::string task_key(const Task& t);

}  // namespace khive::tuner
