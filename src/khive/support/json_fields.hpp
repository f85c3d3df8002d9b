// The one validating reader for khive's JSON inputs (task definitions and workloads, the tuner's library and
// bindings, LLM configs, hardware profiles, PyTorch baselines): typed access to fields whose every error names the
// file, the field and what was expected, as "gemm/definition.json: axes.M.value: expected an integer >= 0, got -1".
//
//   JsonFields r{"gemm/definition.json"};                      // errors: FieldError
//   OrderedJsonFields r{file, "line 3: ", throw_task_error};   // errors: whatever raise throws (TaskFormatError)
//   const auto& axes = r.object(root["axes"], "axes");
//   int64_t v = r.integer(spec["value"], "axes.M.value");     // 4096 and 4096.0 (as pydantic reads it)
//   if (const auto* t = r.find(root, "tags")) tags = r.strings(*t, "tags");
//   r.known_keys(k, "khive", {"cost", "tolerance"});          // a typo in our own blocks is an error
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace khive {

// A bad field: "<file>: <field>: expected <expected>[, got <got>]".
struct FieldError : std::runtime_error {
  std::string file, field, expected, got;
  FieldError(std::string file, std::string field, std::string expected, std::string got = "");
};

// How a JSON value is shown after "got" (the default): numbers and booleans as written (floats in their shortest
// round-trip spelling), strings quoted and cut at 60 characters, containers by kind ("an array", "an empty object").
template <class Json>
std::string describe_json(const Json& j);
// The value's JSON text as it is (j.dump()): for the files whose errors have always shown that.
template <class Json>
std::string literal_json(const Json& j) {
  return j.dump();
}

template <class Json>
class BasicJsonFields {
 public:
  // Called with a failure's parts; it throws (a FieldError is thrown when it does not, or when it is null).
  using Raise = void (*)(const std::string& file, const std::string& field, const std::string& expected,
                         const std::string& got);
  // How a value is shown after "got" (nullptr: describe_json).
  using Describe = std::string (*)(const Json& j);

  // file: how errors name the file; prefix: put before every field ("line 3: " for a line of a .jsonl file).
  explicit BasicJsonFields(std::string file, std::string prefix = "", Raise raise = nullptr,
                           Describe describe = nullptr)
      : file_(std::move(file)), prefix_(std::move(prefix)), raise_(raise), describe_(describe) {}

  const std::string& file() const { return file_; }
  const std::string& prefix() const { return prefix_; }
  [[noreturn]] void fail(const std::string& field, const std::string& expected, const std::string& got = "") const;
  // j as this reader's errors show it after "got".
  std::string got(const Json& j) const { return describe_ ? describe_(j) : describe_json(j); }

  // The member key of obj when obj is an object holding it with a value other than null; nullptr otherwise.
  static const Json* find(const Json& obj, const std::string& key);
  static bool has(const Json& obj, const std::string& key) { return find(obj, key) != nullptr; }
  // The first key of obj that is not in allowed.
  static std::optional<std::string> unknown_key(const Json& obj, const std::vector<std::string>& allowed);

  // Each returns j (or its value) when it is of the kind, and fails on field otherwise.
  const Json& object(const Json& j, const std::string& field) const;
  const Json& array(const Json& j, const std::string& field) const;
  std::string string(const Json& j, const std::string& field, bool non_empty = true) const;
  bool boolean(const Json& j, const std::string& field) const;
  double number(const Json& j, const std::string& field) const;
  // A number in [lo, hi]; "expected a number in [lo, hi]" otherwise.
  double number_in(const Json& j, const std::string& field, double lo, double hi) const;
  // An integer that fits in int64; an integral float (4096.0) counts, as pydantic reads it.
  int64_t integer(const Json& j, const std::string& field) const;
  // An integer in [lo, hi]; "expected an integer in [lo, hi]" otherwise.
  int64_t integer_in(const Json& j, const std::string& field, int64_t lo, int64_t hi) const;
  std::vector<std::string> strings(const Json& j, const std::string& field) const;
  // For our own blocks: every key of obj must be in allowed ("expected a known key of khive.cost (flops, bytes,
  // unit), got \"flop\"").
  void known_keys(const Json& obj, const std::string& field, const std::vector<std::string>& allowed) const;

 private:
  std::string file_, prefix_;
  Raise raise_ = nullptr;
  Describe describe_ = nullptr;
};

using JsonFields = BasicJsonFields<nlohmann::json>;
using OrderedJsonFields = BasicJsonFields<nlohmann::ordered_json>;

extern template class BasicJsonFields<nlohmann::json>;
extern template class BasicJsonFields<nlohmann::ordered_json>;
extern template std::string describe_json(const nlohmann::json&);
extern template std::string describe_json(const nlohmann::ordered_json&);

}  // namespace khive
