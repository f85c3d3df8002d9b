// What the task parsers share (load.cpp's definition and workload parsers): the reader they use (the shared
// JSON reader, raising TaskFormatError), the names the format reserves, tolerances, input distributions and the
// check of a formula over axes. Internal to khive_task.
//
//   Ctx c = task_fields("gemm/definition.json");     // or ("gemm/workload.jsonl", "line 3: ")
//   apply_tolerance(c, spec, "khive.tolerance.C", tol, false);
#pragma once
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/support/json_fields.hpp"
#include "khive/support/text.hpp"
#include "khive/task/task.hpp"

namespace khive::task_parse {

using json = nlohmann::ordered_json;
using Ctx = OrderedJsonFields;

// A reader whose errors are TaskFormatErrors naming file and (after prefix) the field.
inline Ctx task_fields(std::string file, std::string prefix = "") {
  return Ctx(std::move(file), std::move(prefix), throw_task_format_error);
}

// A size written into a shape ("128"), not an axis name.
bool is_literal_size(const std::string& s);
// Names that cannot be parameters of khive_launch or names in an expression.
bool is_reserved_name(const std::string& s);
// What a dtype field may say.
extern const char* const kDTypeList;

// The whole file; throws std::runtime_error naming it.
std::string read_text(const std::filesystem::path& p);
// dir absolute and normal, without a trailing separator.
std::filesystem::path normalize_dir(const std::filesystem::path& dir);
// "gemm/definition.json": the file relative to the task's parent directory.
std::string file_label(const std::filesystem::path& task_dir, const char* file);
// The parser's message without its "[json.exception.parse_error.101] " tag, with the byte offset.
std::string json_error_text(const json::parse_error& e);
// "the name of an input (A, B)" / "... (the task has none)": what a field naming an input should have said.
std::string input_name_expected(const Task& t);
// "the name of an output (C)".
std::string output_name_expected(const Task& t);

// Applies the tolerance fields present in obj onto tol; sol: the SOL-ExecBench spelling (tolerant of its other keys).
void apply_tolerance(const Ctx& c, const json& obj, const std::string& field, Tolerance& tol, bool sol);
// Whether a workload's top-level "tolerance" is in the SOL-ExecBench spelling (fails when it mixes both).
bool sol_spelling(const Ctx& c, const json& obj, const std::string& field);
// An input's distribution (khive.inputs.<name>) for input `in`.
Distribution parse_distribution(const Ctx& c, const json& obj, const std::string& field, const TensorSpec& in);
// Parses expr and checks that every identifier is an axis; fails on field with the ExprError text.
std::vector<std::string> check_formula(const Ctx& c, const std::string& expr, const std::string& field,
                                       const std::set<std::string>& axis_names, const char* what);

// definition.json (parse_definition.cpp) and workload.jsonl (parse_workload.cpp) into t.
void parse_definition(const Ctx& c, const json& root, Task& t);
void load_workloads(const std::filesystem::path& dir, Task& t);

}  // namespace khive::task_parse
