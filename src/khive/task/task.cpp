// Task model helpers: defaults, lookups, element counts, cost and the entry-point signature.
// Loading and validation live in load.cpp.
#include <regex>
#include <stdexcept>

#include "khive/task/expr.hpp"
#include "khive/task/task.hpp"

namespace khive {

void throw_task_format_error(const std::string& file, const std::string& field, const std::string& expected,
                             const std::string& got) {
  throw TaskFormatError(file, field, expected, got);
}

Tolerance default_tolerance(DType t) {
  Tolerance tol;
  switch (t) {
    case DType::f64:
      tol.atol = 1e-9;
      tol.rtol = 1e-9;
      break;
    case DType::f32:
      tol.atol = 1e-4;
      tol.rtol = 1e-4;
      break;
    case DType::f16:
      tol.atol = 1e-3;
      tol.rtol = 1e-3;
      break;
    case DType::bf16:
      tol.atol = 1e-2;
      tol.rtol = 1e-2;
      break;
    case DType::f8e4m3:
    case DType::f8e5m2:
      tol.atol = 1e-1;
      tol.rtol = 1.25e-1;
      break;
    case DType::f4e2m1:
    case DType::f4e2m1x2:
      tol.atol = 0.5;
      tol.rtol = 0.25;
      break;
    case DType::i64:
    case DType::i32:
    case DType::i16:
    case DType::i8:
    case DType::boolean:
      tol.atol = 0.0;
      tol.rtol = 0.0;
      break;
  }
  tol.matched_ratio = 1.0;
  tol.max_error_cap.reset();
  return tol;
}

Tolerance upstream_default_tolerance() {
  Tolerance tol;
  tol.atol = 1e-2;
  tol.rtol = 1e-2;
  tol.matched_ratio = 0.99;
  return tol;
}

bool Workload::needs_python_inputs() const {
  for (const auto& [name, src] : inputs)
    if (src.kind == InputSource::Kind::safetensors || src.kind == InputSource::Kind::custom) return true;
  return false;
}

std::optional<ComputeUnit> parse_compute_unit(std::string_view s) {
  if (s == "bf16") return ComputeUnit::tc_bf16;
  if (s == "fp16") return ComputeUnit::tc_fp16;
  if (s == "tf32") return ComputeUnit::tc_tf32;
  if (s == "fp8") return ComputeUnit::tc_fp8;
  if (s == "int8") return ComputeUnit::tc_int8;
  if (s == "fp32") return ComputeUnit::fp32;
  if (s == "fp64") return ComputeUnit::fp64;
  return std::nullopt;
}

std::string_view compute_unit_name(ComputeUnit u) {
  switch (u) {
    case ComputeUnit::tc_bf16: return "bf16";
    case ComputeUnit::tc_fp16: return "fp16";
    case ComputeUnit::tc_tf32: return "tf32";
    case ComputeUnit::tc_fp8: return "fp8";
    case ComputeUnit::tc_int8: return "int8";
    case ComputeUnit::fp32: return "fp32";
    case ComputeUnit::fp64: return "fp64";
  }
  return "fp32";
}

bool LibraryPolicy::allows(std::string_view lib) const {
  for (const auto& l : libraries)
    if (l == lib) return true;
  return false;
}

const TensorSpec* Task::find_input(std::string_view n) const {
  for (const auto& s : inputs)
    if (s.name == n) return &s;
  return nullptr;
}

const TensorSpec* Task::find_output(std::string_view n) const {
  for (const auto& s : outputs)
    if (s.name == n) return &s;
  return nullptr;
}

void Task::clear_recognised_op() {
  op_recognized.clear();
  op_family.clear();
  op_expression.clear();
  op_eps.reset();
  op_dim.reset();
  op_dims.clear();
  op_flags.clear();
  op_operands.clear();
  op_vectors.clear();
  op_conv.reset();
  op_pool.reset();
  op_norm.reset();
  op_stages.clear();
  op_views.clear();
  op_shape.clear();
  op_aliases.clear();
  op_select.clear();
  op_unread_scalars.clear();
  op_attention.reset();
  op_why.clear();
}

std::vector<std::string> Task::var_axes() const {
  std::vector<std::string> out;
  for (const auto& a : axes)
    if (a.kind == Axis::Kind::var) out.push_back(a.name);
  return out;
}

Tolerance Task::tolerance_for(const std::string& output, const Workload& w) const {
  // load_task folds the workload's top-level tolerance and its khive per-output overrides (each merged
  // field by field over the task's tolerance) into w.tolerance, so the lookup order is simply:
  // workload -> task -> dtype default.
  if (auto it = w.tolerance.find(output); it != w.tolerance.end()) return it->second;
  if (auto it = tolerance.find(output); it != tolerance.end()) return it->second;
  const TensorSpec* o = find_output(output);
  if (!o) throw std::out_of_range("task '" + name + "' has no output '" + output + "'");
  return upstream ? upstream_default_tolerance() : default_tolerance(o->dtype);
}

Distribution Task::distribution_for(const std::string& input, const Workload& w) const {
  if (auto it = w.distributions.find(input); it != w.distributions.end()) return it->second;
  return distribution_for(input);
}

Distribution Task::distribution_for(const std::string& input) const {
  if (auto it = distributions.find(input); it != distributions.end()) return it->second;
  Distribution d;
  if (const TensorSpec* s = find_input(input); s && dtype_is_integer(s->dtype)) {
    d.kind = Distribution::Kind::integers;
    if (s->dtype == DType::boolean) {
      d.low = 0;
      d.high = 1;
    } else {
      d.low = -8;
      d.high = 8;
    }
  }
  return d;
}

std::optional<std::filesystem::path> Task::reference_for(Backend b) const {
  return b == Backend::cuda ? reference_cuda : reference_cpu;
}

int64_t dim_size(const TensorSpec& s, const std::string& dim, const std::map<std::string, int64_t>& axes) {
  if (!dim.empty() && dim.find_first_not_of("0123456789") == std::string::npos) {
    try {
      return std::stoll(dim);  // a literal size ("4096"), as SOL-ExecBench allows
    } catch (const std::out_of_range&) {
      throw std::invalid_argument("dimension '" + dim + "' of '" + s.name + "' is larger than 2^63");
    }
  }
  auto it = axes.find(dim);
  if (it == axes.end()) throw std::invalid_argument("axis '" + dim + "' of '" + s.name + "' has no value");
  return it->second;
}

int64_t element_count(const TensorSpec& s, const std::map<std::string, int64_t>& axes) {
  if (s.scalar) return 1;
  int64_t n = 1;
  for (const auto& dim : s.shape) {
    int64_t v;
    try {
      v = dim_size(s, dim, axes);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("element_count: ") + e.what());
    }
    if (v < 0) throw std::invalid_argument("element_count: axis '" + dim + "' of '" + s.name + "' is negative");
    if (__builtin_mul_overflow(n, v, &n))
      throw std::overflow_error("element_count: '" + s.name + "' has more than 2^63 elements");
  }
  return n;
}

int64_t tensor_bytes(const TensorSpec& s, const std::map<std::string, int64_t>& axes) {
  int64_t n = element_count(s, axes);
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(dtype_size(s.dtype)), &bytes))
    throw std::overflow_error("tensor_bytes: '" + s.name + "' takes more than 2^63 bytes");
  return bytes;
}

WorkloadCost workload_cost(const Task& t, const std::map<std::string, int64_t>& axes) {
  WorkloadCost c;
  c.flops = eval_expr(t.cost.flops, axes);
  c.bytes = eval_expr(t.cost.bytes, axes);
  return c;
}

std::vector<std::string> select_perf_workloads(Task& t, const std::string& pattern, Backend b) {
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("--perf-workloads '" + pattern + "': not a regular expression (" + e.what() + ")");
  }
  std::vector<std::string> kept, all;
  for (const auto& w : t.workloads) {
    if (!w.timed_on(b)) continue;
    all.push_back(w.uuid);
    if (std::regex_search(w.uuid, re)) kept.push_back(w.uuid);
  }
  if (kept.empty()) {
    std::string list;
    for (const auto& u : all) list += (list.empty() ? "" : ", ") + u;
    throw std::invalid_argument("--perf-workloads '" + pattern + "': no perf workload of task " + t.name + " (" +
                                std::string(backend_name(b)) +
                                ") matches; its perf workloads: " + (list.empty() ? "none" : list));
  }
  std::vector<Workload> out;
  for (auto& w : t.workloads) {
    if (!w.timed_on(b) || std::regex_search(w.uuid, re)) {
      out.push_back(std::move(w));
    } else if (w.checks_correctness()) {
      w.role = WorkloadRole::correctness;
      out.push_back(std::move(w));
    }
  }
  t.workloads = std::move(out);
  t.perf_filter = pattern;
  return kept;
}

std::string launch_signature(const Task& t, Backend b) {
  std::string s = "extern \"C\" void khive_launch(";
  bool first = true;
  auto param = [&](const std::string& p) {
    if (!first) s += ", ";
    s += p;
    first = false;
  };
  for (const auto& in : t.inputs) {
    std::string type(dtype_c_type(in.dtype, b));
    param(in.scalar ? type + " " + in.name : "const " + type + "* " + in.name);
  }
  for (const auto& out : t.outputs) param(std::string(dtype_c_type(out.dtype, b)) + "* " + out.name);
  for (const auto& a : t.axes)
    if (a.kind == Axis::Kind::var) param("int64_t " + a.name);
  if (b == Backend::cuda) param("cudaStream_t stream");
  s += ")";
  return s;
}

}  // namespace khive
