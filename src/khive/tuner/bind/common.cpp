// The helpers every family binder shares (common.hpp).
#include "khive/tuner/bind/common.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace khive::tuner::bind_detail {

std::string Ctx::field(const std::string& f) const { return "tasks." + b.key.substr(b.key.find('/') + 1) + "." + f; }

std::string Ctx::file() const {
  return (b.file.parent_path().parent_path().filename() / b.file.parent_path().filename() / b.file.filename()).string();
}

void Ctx::fail(const std::string& f, const std::string& expected, const std::string& got) const {
  throw TaskFormatError(file(), field(f), expected, got);
}

void Ctx::check_keys(std::initializer_list<const char*> allowed) const {
  for (auto it = b.spec.begin(); it != b.spec.end(); ++it) {
    bool ok = it.key() == "family";
    for (const char* a : allowed) ok = ok || it.key() == a;
    if (!ok) {
      std::string list = "family";
      for (const char* a : allowed) list += std::string(", ") + a;
      fail(it.key(), "one of the keys " + list, "an unknown key");
    }
  }
}

bool Ctx::has(const char* k) const { return b.spec.contains(k) && !b.spec[k].is_null(); }

std::string Ctx::str(const char* k, bool required) const {
  if (!has(k)) {
    if (required) fail(k, "a string", "nothing");
    return "";
  }
  if (!b.spec[k].is_string()) fail(k, "a string", b.spec[k].dump());
  return b.spec[k].get<std::string>();
}

bool Ctx::flag(const char* k, bool dflt) const {
  if (!has(k)) return dflt;
  if (!b.spec[k].is_boolean()) fail(k, "true or false", b.spec[k].dump());
  return b.spec[k].get<bool>();
}

const TensorSpec& Ctx::input(const char* k) const {
  const std::string n = str(k, true);
  const TensorSpec* t = task.find_input(n);
  if (!t || t->scalar) fail(k, "an input tensor of task '" + task.name + "'", "\"" + n + "\"");
  return *t;
}

const TensorSpec& Ctx::output(const char* k) const {
  const std::string n = str(k, true);
  const TensorSpec* t = task.find_output(n);
  if (!t) fail(k, "an output of task '" + task.name + "'", "\"" + n + "\"");
  return *t;
}

bool is_float_storage(DType d) { return d == DType::f32 || d == DType::bf16 || d == DType::f16; }

namespace {

// An axis expression as C++ (recursive descent over + - * // % and parentheses): `//` and `%` keep Python's
// meaning (floor, the divisor's sign) for any operands, so an import's "(depth - 2) // 4" is the same number in the
// kernel as in the task's own arithmetic. True division and powers are refused (not integer axis arithmetic here).
class AxisCpp {
 public:
  AxisCpp(const Task& t, const std::string& axis, const std::string& e, int depth)
      : t_(t), axis_(axis), e_(e), depth_(depth) {}
  std::string run() {
    std::string out = sum();
    skip();
    if (i_ != e_.size()) refuse();
    return "(" + out + ")";
  }

 private:
  [[noreturn]] void refuse() const {
    throw std::runtime_error("axis '" + axis_ + "' = \"" + e_ +
                             "\" uses an operator other than + - * // % (not supported by the tuner)");
  }
  void skip() {
    while (i_ < e_.size() && e_[i_] == ' ') ++i_;
  }
  bool eat(const char* op) {
    skip();
    const std::size_t n = std::char_traits<char>::length(op);
    if (e_.compare(i_, n, op) != 0) return false;
    // '*' is not the start of '**', '/' only as '//'
    if (n == 1 && op[0] == '*' && i_ + 1 < e_.size() && e_[i_ + 1] == '*') refuse();
    i_ += n;
    return true;
  }
  std::string sum() {
    std::string a = product();
    for (;;) {
      if (eat("+"))
        a = a + " + " + product();
      else if (eat("-"))
        a = a + " - " + product();
      else
        return a;
    }
  }
  std::string product() {
    std::string a = unary();
    for (;;) {
      if (eat("//")) {
        const std::string b = unary();
        // floor division: C++ truncates, so step down when the signs differ and it is inexact
        a = fmt::format("(({0}) / ({1}) - ((({0}) % ({1}) != 0) && ((({0}) < 0) != (({1}) < 0))))", a, b);
      } else if (eat("%")) {
        const std::string b = unary();
        a = fmt::format("(((({0}) % ({1})) + ({1})) % ({1}))", a, b);
      } else if (eat("*")) {
        a = a + " * " + unary();
      } else {
        skip();
        if (i_ < e_.size() && e_[i_] == '/') refuse();
        return a;
      }
    }
  }
  std::string unary() {
    if (eat("-")) return "(-" + unary() + ")";
    if (eat("+")) return unary();
    if (eat("(")) {
      std::string a = sum();
      if (!eat(")")) refuse();
      return "(" + a + ")";
    }
    skip();
    std::size_t j = i_;
    if (j < e_.size() && std::isdigit(static_cast<unsigned char>(e_[j]))) {
      while (j < e_.size() && std::isdigit(static_cast<unsigned char>(e_[j]))) ++j;
      const std::string lit = e_.substr(i_, j - i_);
      i_ = j;
      return "int64_t(" + lit + ")";
    }
    if (j < e_.size() && (std::isalpha(static_cast<unsigned char>(e_[j])) || e_[j] == '_')) {
      while (j < e_.size() && (std::isalnum(static_cast<unsigned char>(e_[j])) || e_[j] == '_')) ++j;
      const std::string id = e_.substr(i_, j - i_);
      i_ = j;
      return axis_cpp(t_, id, depth_ + 1);
    }
    refuse();
  }

  const Task& t_;
  const std::string& axis_;
  const std::string& e_;
  int depth_;
  std::size_t i_ = 0;
};

}  // namespace

// C++ for an axis: its launch parameter (var), its value (const), or its expression (expr: + - * // %, with
// Python's meaning, so the C++ integer arithmetic gives the task's own sizes).
std::string axis_cpp(const Task& t, const std::string& name, int depth) {
  if (depth > 32) throw std::runtime_error("axis expression nesting too deep at " + name);
  for (const auto& a : t.axes) {
    if (a.name != name) continue;
    if (a.kind == Axis::Kind::var) return name;
    if (a.kind == Axis::Kind::constant) return fmt::format("int64_t({})", a.value);
    return AxisCpp(t, name, a.expression, depth).run();
  }
  // A decimal literal in a shape is a fixed size.
  if (!name.empty() &&
      std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return "int64_t(" + name + ")";
  throw std::runtime_error("unknown axis '" + name + "'");
}

std::string shape_product_cpp(const Task& t, const std::vector<std::string>& dims) {
  std::string s = "int64_t(1)";
  for (const auto& d : dims) s += " * " + axis_cpp(t, d);
  return s;
}

std::string storage_type(DType d, Backend b) { return std::string(dtype_c_type(d, b)); }

// khive_to_float_<tag> / khive_from_float_<tag> for one storage type.
std::string conversions(const std::string& tag, DType d, Backend b) {
  const std::string T = storage_type(d, b);
  std::string to, from;
  if (d == DType::f32) {
    to = "v";
    from = "v";
  } else if (b == Backend::cuda) {
    to = d == DType::bf16 ? "__bfloat162float(v)" : "__half2float(v)";
    from = d == DType::bf16 ? "__float2bfloat16_rn(v)" : "__float2half_rn(v)";
  } else {
    to = d == DType::bf16 ? "khive_bf16_to_float(v)" : "khive_f16_to_float(v)";
    from = d == DType::bf16 ? "khive_float_to_bf16(v)" : "khive_float_to_f16(v)";
  }
  return fmt::format(
      "KHIVE_HD float khive_to_float_{0}({1} v) {{ return {2}; }}\nKHIVE_HD {1} khive_from_float_{0}(float v) {{ "
      "return {3}; }}\n",
      tag, T, to, from);
}

std::string common_prologue(const Ctx& c) {
  std::string p =
      fmt::format("// binding {} ({}): generated by the khive tuner from kernels/bindings\n", c.b.key, c.b.family);
  p += "#include <cmath>\n#include <cstdint>\n";
  if (c.backend == Backend::cuda)
    p += "#define KHIVE_HD static __host__ __device__ __forceinline__\n";
  else
    p += "#define KHIVE_HD static inline\n";
  return p;
}

// The common prologue plus the storage type khive_t of dtype d and its float conversions (khive_to_float_t,
// khive_from_float_t): what every family's PROLOGUE starts with.
std::string typed_prologue(const Ctx& c, DType d) {
  return common_prologue(c) + fmt::format("using khive_t = {};\n", storage_type(d, c.backend)) +
         conversions("t", d, c.backend);
}

std::string launch_args_tail(Backend b) { return b == Backend::cuda ? ", stream" : ""; }

// A shape as error messages print it: "[T, Hq, D]".
std::string shape_text(const std::vector<std::string>& s) {
  std::string o;
  for (const auto& d : s) o += (o.empty() ? "" : ", ") + d;
  return "[" + o + "]";
}

// One axis of a workload's resolved axes: an axis name, a literal size ("128"), or "" (an absent axis: 1).
int64_t axis_value(const AxisValues& ax, const std::string& n) {
  if (n.empty()) return 1;
  auto it = ax.find(n);
  return it != ax.end() ? it->second : std::stoll(n);
}

// Records workload w's family variables, its uuid and whether it is timed on the binding's backend.
void add_workload(BoundTask& bt, const Ctx& c, std::size_t w, AxisValues vars) {
  bt.workload_vars.push_back(std::move(vars));
  bt.workload_names.push_back(c.task.workloads[w].uuid);
  bt.workload_perf.push_back(c.task.workloads[w].timed_on(c.backend));
}

// Per workload: all resolved axes (for the family's variables).
std::vector<std::map<std::string, int64_t>> resolved(const Task& t) {
  std::vector<std::map<std::string, int64_t>> out;
  for (const auto& w : t.workloads) out.push_back(resolve_axes(t, w));
  return out;
}

AxisSplit split_at_axis(const Ctx& c, const TensorSpec& x, const char* what, bool run) {
  const int rank = static_cast<int>(x.shape.size());
  if (rank == 0) c.fail("x", "a tensor with at least one dimension", "a 0-D tensor");
  const std::string expected =
      run ? fmt::format(
                "the index of the {} axis in x's shape (negative counts from the end), or a list of "
                "neighbouring axes' indices",
                what)
          : fmt::format("the index of the {} axis in x's shape (negative counts from the end)", what);
  if (!c.has("dim")) c.fail("dim", expected, "nothing");
  const json& d = c.b.spec["dim"];
  std::vector<int> dims;
  if (d.is_number_integer()) {
    dims.push_back(d.get<int>());
  } else if (run && d.is_array() && !d.empty()) {
    for (const auto& e : d) {
      if (!e.is_number_integer()) c.fail("dim", expected, d.dump());
      dims.push_back(e.get<int>());
    }
  } else {
    c.fail("dim", expected, d.dump());
  }
  for (int& a : dims) {
    if (a < -rank || a >= rank)
      c.fail("dim",
             fmt::format("{} of x {} (-{} to {})", dims.size() == 1 ? "an axis index" : "axis indices",
                         shape_text(x.shape), rank, rank - 1),
             d.dump());
    if (a < 0) a += rank;
  }
  std::sort(dims.begin(), dims.end());
  for (std::size_t i = 1; i < dims.size(); ++i)
    if (dims[i] != dims[i - 1] + 1)
      c.fail("dim",
             fmt::format("neighbouring axes of x {}, each once (the reduce templates view x as [OUTER, R, INNER])",
                         shape_text(x.shape)),
             d.dump());
  AxisSplit s;
  s.dim = dims.front();
  s.last = dims.back();
  s.before.assign(x.shape.begin(), x.shape.begin() + s.dim);
  s.after.assign(x.shape.begin() + s.last + 1, x.shape.end());
  s.axis = x.shape[static_cast<std::size_t>(s.dim)];
  s.axes.assign(x.shape.begin() + s.dim, x.shape.begin() + s.last + 1);
  s.outer_cpp = shape_product_cpp(c.task, s.before);
  s.r_cpp = s.axes.size() == 1 ? axis_cpp(c.task, s.axis) : shape_product_cpp(c.task, s.axes);
  s.inner_cpp = shape_product_cpp(c.task, s.after);
  return s;
}

void add_split_workloads(BoundTask& bt, const Ctx& c, const AxisSplit& s, const TensorSpec& x) {
  for (std::size_t i = 0; i < c.task.workloads.size(); ++i) {
    const auto ax = resolve_axes(c.task, c.task.workloads[i]);
    int64_t outer = 1, r = 1, inner = 1;
    for (const auto& d : s.before) outer *= axis_value(ax, d);
    for (const auto& d : s.axes) r *= axis_value(ax, d);
    for (const auto& d : s.after) inner *= axis_value(ax, d);
    add_workload(
        bt, c, i,
        {{"OUTER", outer}, {"R", r}, {"INNER", inner}, {"ELEM_BYTES", static_cast<int64_t>(dtype_size(x.dtype))}});
  }
}

std::vector<int64_t> axis_ints(const Ctx& c, const char* k, std::size_t dims, int64_t lo, int64_t dflt,
                               const char* axis) {
  if (!c.has(k)) return std::vector<int64_t>(dims, dflt);
  const std::string expected = fmt::format("a list of {} integers >= {}, one per {}", dims, lo, axis);
  const json& a = c.b.spec[k];
  if (!a.is_array() || a.size() != dims) c.fail(k, expected, a.dump());
  std::vector<int64_t> v;
  for (const auto& e : a) {
    if (!e.is_number_integer() || e.get<int64_t>() < lo) c.fail(k, expected, a.dump());
    v.push_back(e.get<int64_t>());
  }
  return v;
}

std::string per_axis_cpp(const char* name, const std::vector<int64_t>& v, int64_t fill) {
  std::vector<int64_t> t(3 - v.size(), fill);
  t.insert(t.end(), v.begin(), v.end());
  return fmt::format("KHIVE_HD constexpr int64_t {}(int a) {{ return a == 0 ? {} : a == 1 ? {} : {}; }}\n", name, t[0],
                     t[1], t[2]);
}

std::string op_text(const Ctx& c, const char* key) {
  if (!c.has(key)) c.fail(key, "a C++ expression, or {\"cpu\": ..., \"cuda\": ...}", "nothing");
  const json& o = c.b.spec[key];
  if (o.is_string()) return o.get<std::string>();
  if (o.is_object()) {
    const char* be = c.backend == Backend::cuda ? "cuda" : "cpu";
    if (!o.contains(be) || !o[be].is_string())
      c.fail(std::string(key) + "." + be, "a C++ expression for this backend",
             o.contains(be) ? o[be].dump() : "nothing");
    return o[be].get<std::string>();
  }
  c.fail(key, "a C++ expression, or {\"cpu\": ..., \"cuda\": ...}", o.dump());
}

}  // namespace khive::tuner::bind_detail
