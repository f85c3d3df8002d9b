// Chains of stages (chain.hpp): the intermediates' shapes, the chain templates and their rendering.
#include "khive/tuner/chain.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "khive/task/expr.hpp"
#include "khive/tuner/bind/common.hpp"
#include "khive/tuner/compose.hpp"

namespace khive::tuner {

using ojson = nlohmann::ordered_json;

StageTensorFields stage_tensor_fields(const std::string& family) {
  if (family == "conv") return {{"x", "weight", "bias", "vector"}, {"vectors"}, "y"};
  if (family == "gemm") return {{"A", "B", "bias", "residual"}, {"vectors"}, "C"};
  if (family == "pool" || family == "reduce") return {{"x"}, {}, "y"};
  if (family == "norm") return {{"x", "weight", "bias"}, {}, "y"};
  if (family == "rowop") return {{"x", "weight", "bias", "residual"}, {}, "y"};
  if (family == "elementwise") return {{}, {"inputs", "scalars"}, "output"};
  if (family == "gated") return {{"input"}, {}, "output"};
  return {};
}

std::string stage_families_text() { return "conv, gemm, pool, norm, reduce, rowop, gated or elementwise"; }

namespace {

bool is_literal(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::string family_of(const ojson& spec) {
  if (!spec.is_object() || !spec.contains("family") || !spec["family"].is_string())
    throw std::runtime_error("family: expected a stage family (" + stage_families_text() + ")");
  const std::string f = spec["family"].get<std::string>();
  if (stage_tensor_fields(f).output.empty())
    throw std::runtime_error("family: expected a stage family (" + stage_families_text() + "), got \"" + f + "\"");
  return f;
}

// The spec's list field k: `n` integers (absent: n x dflt).
std::vector<int64_t> ints(const ojson& spec, const char* k, std::size_t n, int64_t dflt) {
  if (!spec.contains(k) || spec[k].is_null()) return std::vector<int64_t>(n, dflt);
  const ojson& a = spec[k];
  if (!a.is_array() || a.size() != n)
    throw std::runtime_error(fmt::format("{}: expected a list of {} integers, got {}", k, n, a.dump()));
  std::vector<int64_t> v;
  for (const auto& e : a) {
    if (!e.is_number_integer()) throw std::runtime_error(fmt::format("{}: expected integers, got {}", k, a.dump()));
    v.push_back(e.get<int64_t>());
  }
  return v;
}

int64_t int_field(const ojson& spec, const char* k, int64_t dflt) {
  if (!spec.contains(k) || spec[k].is_null()) return dflt;
  if (!spec[k].is_number_integer()) throw std::runtime_error(fmt::format("{}: expected an integer", k));
  return spec[k].get<int64_t>();
}

bool bool_field(const ojson& spec, const char* k) {
  if (!spec.contains(k) || spec[k].is_null()) return false;
  if (!spec[k].is_boolean()) throw std::runtime_error(fmt::format("{}: expected true or false", k));
  return spec[k].get<bool>();
}

std::string str_field(const ojson& spec, const std::string& k) {
  if (!spec.contains(k) || !spec[k].is_string()) throw std::runtime_error(fmt::format("{}: expected a tensor name", k));
  return spec[k].get<std::string>();
}

}  // namespace

ChainLayout::ChainLayout(const Task& task) : task_(task) {
  for (const auto& w : task.workloads) values_.push_back(resolve_axes(task, w));
}

std::vector<std::string> ChainLayout::stage_inputs(const ojson& spec) {
  const StageTensorFields f = stage_tensor_fields(family_of(spec));
  std::vector<std::string> out;
  for (const auto& k : f.inputs)
    if (spec.contains(k) && !spec[k].is_null()) out.push_back(str_field(spec, k));
  for (const auto& k : f.lists) {
    if (!spec.contains(k) || spec[k].is_null()) continue;
    if (!spec[k].is_array()) throw std::runtime_error(k + ": expected a list of tensor names");
    for (const auto& e : spec[k]) {
      if (!e.is_string()) throw std::runtime_error(k + ": expected a list of tensor names");
      out.push_back(e.get<std::string>());
    }
  }
  if (out.empty()) throw std::runtime_error("the stage reads no tensor");
  // A row op's or a normalisation's eps may name a scalar input (bind/rowop.cpp, bind/norm.cpp): the stage reads
  // that too.
  if ((family_of(spec) == "rowop" || family_of(spec) == "norm") && spec.contains("eps") && spec["eps"].is_string())
    out.push_back(spec["eps"].get<std::string>());
  return out;
}

std::string ChainLayout::stage_output(const ojson& spec) {
  return str_field(spec, stage_tensor_fields(family_of(spec)).output);
}

bool ChainLayout::is_intermediate(const std::string& name) const {
  return std::any_of(mids_.begin(), mids_.end(), [&](const TensorSpec& t) { return t.name == name; });
}

const TensorSpec& ChainLayout::tensor(const std::string& name) const {
  for (const auto& t : mids_)
    if (t.name == name) return t;
  if (const TensorSpec* t = task_.find_input(name)) return *t;
  if (const TensorSpec* t = task_.find_output(name)) return *t;
  throw std::runtime_error("\"" + name + "\" is neither a tensor of the task nor an intermediate written before");
}

std::string ChainLayout::cpp(const std::string& axis) const {
  for (const auto& [n, c] : fresh_cpp_)
    if (n == axis) return c;
  return bind_detail::axis_cpp(task_, axis);
}

ChainLayout::Dim ChainLayout::dim_of(const std::string& name) const {
  Dim d{name, {}, cpp(name)};
  for (const auto& v : values_) d.value.push_back(is_literal(name) ? std::stoll(name) : v.at(name));
  return d;
}

std::vector<ChainLayout::Dim> ChainLayout::dims_of(const TensorSpec& t) const {
  std::vector<Dim> out;
  for (const auto& a : t.shape) out.push_back(dim_of(a));
  return out;
}

// A computed size's name in the stage tasks: the task output's axis at that position when the intermediate has the
// output's rank and the sizes agree on every workload (a normalisation's or softmax's x then has its y's axis names,
// which their binders compare), else any axis of the task with those sizes, else a new var axis.
std::string ChainLayout::name_dim(const Dim& d, std::size_t pos, std::size_t rank, std::size_t stage,
                                  const std::vector<std::string>& taken) {
  if (!d.name.empty()) return d.name;
  auto same = [&](const std::string& n) {
    for (std::size_t w = 0; w < values_.size(); ++w) {
      const int64_t v = is_literal(n) ? std::stoll(n) : values_[w].count(n) ? values_[w].at(n) : -1;
      if (v != d.value[w]) return false;
    }
    return true;
  };
  if (task_.outputs.size() == 1 && task_.outputs[0].shape.size() == rank && same(task_.outputs[0].shape[pos]))
    return task_.outputs[0].shape[pos];
  for (const bool reuse : {false, true})
    for (const auto kind : {Axis::Kind::var, Axis::Kind::expr, Axis::Kind::constant})
      for (const auto& a : task_.axes)
        if (a.kind == kind && same(a.name) && (reuse || std::find(taken.begin(), taken.end(), a.name) == taken.end()))
          return a.name;
  const std::string n = fmt::format("khive_m{}_{}", stage + 1, pos);
  for (std::size_t w = 0; w < values_.size(); ++w) values_[w][n] = d.value[w];
  fresh_cpp_.emplace_back(n, d.cpp);
  return n;
}

std::optional<DType> ChainLayout::stored_dtype(const ojson& spec) {
  if (!spec.contains("dtype")) return std::nullopt;
  const auto d = spec["dtype"].is_string() ? parse_dtype(spec["dtype"].get<std::string>()) : std::nullopt;
  if (!d || !bind_detail::is_float_storage(*d))
    throw std::runtime_error("dtype: expected the intermediate's storage type, float32, bfloat16 or float16, got " +
                             spec["dtype"].dump());
  return d;
}

void ChainLayout::shape_output(const std::string& family, const ojson& spec, const std::string& output,
                               std::size_t stage) {
  std::vector<Dim> out;
  const std::size_t nw = values_.size();
  DType dtype = DType::f32;
  if (family == "conv") {
    const TensorSpec &x = tensor(str_field(spec, "x")), &w = tensor(str_field(spec, "weight"));
    dtype = x.dtype;
    if (x.shape.size() < 3 || x.shape.size() > 5 || w.shape.size() != x.shape.size())
      throw std::runtime_error("x: expected [N, C, *spatial] with 1-3 spatial axes and a weight of its rank");
    const std::size_t dims = x.shape.size() - 2;
    const auto xd = dims_of(x), wd = dims_of(w);
    const bool tr = bool_field(spec, "transposed");
    const int64_t groups = int_field(spec, "groups", 1);
    const auto stride = ints(spec, "stride", dims, 1), pad = ints(spec, "padding", dims, 0),
               dil = ints(spec, "dilation", dims, 1), opad = ints(spec, "output_padding", dims, 0);
    out.push_back(xd[0]);
    if (!tr) {
      out.push_back(wd[0]);
    } else {
      std::vector<int64_t> v;
      for (auto c : wd[1].value) v.push_back(c * groups);
      out.push_back(groups == 1 ? wd[1] : computed(v, fmt::format("({} * {})", wd[1].cpp, groups)));
    }
    for (std::size_t a = 0; a < dims; ++a) {
      const Dim &in = xd[2 + a], &k = wd[2 + a];
      std::vector<int64_t> v;
      for (std::size_t i = 0; i < nw; ++i) {
        v.push_back(bind_detail::conv_out(in.value[i], k.value[i], stride[a], pad[a], dil[a], opad[a], tr));
        if (v.back() < 1)
          throw std::runtime_error(
              fmt::format("the convolution's spatial axis {} has no output (workload {})", a, task_.workloads[i].uuid));
      }
      out.push_back(computed(v, tr ? fmt::format("(({} - 1) * {} - {} + {} * ({} - 1) + {} + 1)", in.cpp, stride[a],
                                                 2 * pad[a], dil[a], k.cpp, opad[a])
                                   : fmt::format("(({} + {} - {} * ({} - 1) - 1) / {} + 1)", in.cpp, 2 * pad[a], dil[a],
                                                 k.cpp, stride[a])));
    }
  } else if (family == "gemm") {
    const TensorSpec &a = tensor(str_field(spec, "A")), &b = tensor(str_field(spec, "B"));
    dtype = a.dtype;
    const bool arow = !spec.contains("layout_a") || spec["layout_a"] == "row",
               brow = !spec.contains("layout_b") || spec["layout_b"] == "row";
    // [*rows, K] @ B (M the list of A's leading axes): the product is [*rows, N], as torch.matmul returns it.
    const bool rows = spec.contains("M") && spec["M"].is_array() && arow && a.shape.size() >= 3;
    // A batch (one axis or a list of them, the product's leading axes): [*batch, M, N].
    std::vector<std::string> batch;
    if (spec.contains("batch") && spec["batch"].is_string()) batch.push_back(spec["batch"].get<std::string>());
    if (spec.contains("batch") && spec["batch"].is_array())
      for (const auto& e : spec["batch"])
        if (e.is_string()) batch.push_back(e.get<std::string>());
    if (spec.contains("batch") && (batch.empty() || rows || a.shape.size() < 2 || b.shape.size() < 2))
      throw std::runtime_error(
          "batch: expected C's leading axes (a name or a list of names) of a product of [*batch, "
          "M, K] and [*batch, K, N] operands, got " +
          spec["batch"].dump());
    // K a list of axes (A [*K, M] or [M, *K], B [*K, N] or [N, *K]: a weight's gradient summed over a batch of
    // rows): the product is [M, N].
    const bool klist = spec.contains("K") && spec["K"].is_array();
    if (klist) {
      const std::size_t nk = spec["K"].size();
      if (!batch.empty() || rows || nk < 1 || a.shape.size() != nk + 1 || b.shape.size() != nk + 1)
        throw std::runtime_error("K: a list of axes that A and B hold besides M and N, got " + spec["K"].dump() +
                                 " for A " + bind_detail::shape_text(a.shape) + " and B " +
                                 bind_detail::shape_text(b.shape));
      out = {dim_of(arow ? a.shape.front() : a.shape.back()), dim_of(brow ? b.shape.back() : b.shape.front())};
    } else if (!batch.empty()) {
      for (const auto& n : batch) out.push_back(dim_of(n));
      out.push_back(dim_of(a.shape[a.shape.size() - (arow ? 2 : 1)]));
      out.push_back(dim_of(b.shape[b.shape.size() - (brow ? 1 : 2)]));
    } else if ((spec.contains("M") && spec["M"].is_array() && !rows) || (a.shape.size() != 2 && !rows) ||
               b.shape.size() != 2) {
      throw std::runtime_error(
          "A, B: a chain's GEMM stage takes 2-D operands, [*rows, K] rows times a matrix, or a batch of products");
    } else if (rows) {
      const auto ad = dims_of(a);
      out.assign(ad.begin(), ad.end() - 1);
      out.push_back(dim_of(b.shape[brow ? 1 : 0]));
    } else {
      out = {dim_of(a.shape[arow ? 0 : 1]), dim_of(b.shape[brow ? 1 : 0])};
    }
  } else if (family == "pool") {
    const TensorSpec& x = tensor(str_field(spec, "x"));
    dtype = x.dtype;
    if (!spec.contains("kernel") || !spec["kernel"].is_array() || spec["kernel"].empty() ||
        spec["kernel"].size() >= x.shape.size())
      throw std::runtime_error("kernel: expected 1-3 window sizes, fewer than x's axes");
    const std::size_t dims = spec["kernel"].size();
    const auto k = ints(spec, "kernel", dims, 1);
    const auto s = spec.contains("stride") ? ints(spec, "stride", dims, 1) : k;
    const auto p = ints(spec, "padding", dims, 0), d = ints(spec, "dilation", dims, 1);
    const bool ceil = bool_field(spec, "ceil_mode");
    const auto xd = dims_of(x);
    out.assign(xd.begin(), xd.end() - static_cast<std::ptrdiff_t>(dims));
    for (std::size_t a = 0; a < dims; ++a) {
      const Dim& in = xd[xd.size() - dims + a];
      std::vector<int64_t> v;
      for (std::size_t i = 0; i < nw; ++i) {
        const int64_t o = bind_detail::pool_out(in.value[i], k[a], s[a], p[a], d[a], ceil);
        if (o < 1)
          throw std::runtime_error(
              fmt::format("the pooling's axis {} has no output (workload {})", a, task_.workloads[i].uuid));
        v.push_back(o);
      }
      const std::string o =
          fmt::format("(({} + {}) / {} + 1)", in.cpp, 2 * p[a] - d[a] * (k[a] - 1) - 1 + (ceil ? s[a] - 1 : 0), s[a]);
      out.push_back(
          computed(v, ceil ? fmt::format("({0} - (({0} - 1) * {1} >= {2} + {3} ? 1 : 0))", o, s[a], in.cpp, p[a]) : o));
    }
  } else if (family == "reduce") {
    const TensorSpec& x = tensor(str_field(spec, "x"));
    dtype = x.dtype;
    const std::string op = spec.contains("op") && spec["op"].is_string() ? spec["op"].get<std::string>() : "";
    if (op == "argmax" || op == "argmin")
      throw std::runtime_error("op: a reduction whose result feeds another stage (sum, mean, max, min, prod), got " +
                               op);
    // One axis or a list of neighbouring ones (the binder checks them; here only what the output keeps).
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    std::vector<int64_t> dims;
    if (spec.contains("dim") && spec["dim"].is_array()) {
      for (const auto& d : spec["dim"])
        if (d.is_number_integer()) dims.push_back(d.get<int64_t>());
      if (dims.size() != spec["dim"].size() || dims.empty())
        throw std::runtime_error("dim: expected an axis of x or a list of axes, got " + spec["dim"].dump());
    } else {
      dims.push_back(int_field(spec, "dim", 0));
    }
    std::vector<bool> reduced(static_cast<std::size_t>(rank), false);
    for (int64_t d : dims) {
      if (d < -rank || d >= rank) throw std::runtime_error(fmt::format("dim: expected an axis of x, got {}", d));
      reduced[static_cast<std::size_t>(d < 0 ? d + rank : d)] = true;
    }
    const auto xd = dims_of(x);
    const bool keep = bool_field(spec, "keepdim");  // the reduced axes stay as 1s
    for (std::size_t a = 0; a < xd.size(); ++a)
      if (!reduced[a])
        out.push_back(xd[a]);
      else if (keep)
        out.push_back(dim_of("1"));
  } else if (family == "norm" || family == "rowop") {
    const TensorSpec& x = tensor(str_field(spec, "x"));
    dtype = x.dtype;
    out = dims_of(x);
  } else if (family == "gated") {  // op(gate, up) of the two halves of x's last axis: [*rows, last / 2]
    const TensorSpec& x = tensor(str_field(spec, "input"));
    dtype = x.dtype;
    if (x.shape.empty()) throw std::runtime_error("input: expected a tensor whose last axis holds gate and up");
    const auto xd = dims_of(x);
    std::vector<int64_t> v;
    for (std::size_t i = 0; i < nw; ++i) {
      if (xd.back().value[i] % 2 != 0)
        throw std::runtime_error(
            fmt::format("input: a last axis of even size (gate and up halves), got {} (workload {})",
                        xd.back().value[i], task_.workloads[i].uuid));
      v.push_back(xd.back().value[i] / 2);
    }
    out.assign(xd.begin(), xd.end() - 1);
    // Half of a literal size is a literal, as a later stage's operand writes it ([6, 4] after an [.., 8]).
    out.push_back(is_literal(xd.back().name) ? dim_of(std::to_string(std::stoll(xd.back().name) / 2))
                                             : computed(v, fmt::format("({} / 2)", xd.back().cpp)));
  } else if (family == "elementwise" && spec.contains("shape")) {  // a copy stage: its sizes as written
    const auto ins = stage_inputs(spec);
    if (!spec["shape"].is_array())
      throw std::runtime_error("shape: expected a list of axis expressions of in0.. (the first input's axes)");
    std::vector<std::string> exprs;
    for (const auto& e : spec["shape"]) exprs.push_back(e.is_string() ? e.get<std::string>() : e.dump());
    shape_as(output, ins[0], exprs, stage, stored_dtype(spec));
    return;
  } else if (family == "elementwise") {
    // The inputs broadcast as torch does (aligned at their last axes): each axis the first input's that is not 1 on
    // every workload there ([B, S, 1] and [B, S, H] give [B, S, H], whichever is listed first); the dtype of the
    // first input of the most elements.
    const TensorSpec* widest = nullptr;
    int64_t most = -1;
    std::vector<std::vector<Dim>> ins;
    for (const auto& n : stage_inputs(spec)) {
      const TensorSpec& t = tensor(n);
      if (t.scalar) continue;
      ins.push_back(dims_of(t));
      int64_t count = 1;
      for (const auto& d : ins.back()) count *= d.value.empty() ? 1 : d.value[0];
      if (count > most) most = count, widest = &t;
      if (ins.back().size() > out.size()) out.resize(ins.back().size(), dim_of("1"));
    }
    if (!widest) throw std::runtime_error("inputs: expected a tensor input");
    // "dtype": the storage type the reference holds the value in (a float32 product of bf16 inputs), else the
    // dtype of the first input of the most elements.
    dtype = stored_dtype(spec).value_or(widest->dtype);
    auto one = [](const Dim& d) {
      return std::all_of(d.value.begin(), d.value.end(), [](int64_t v) { return v == 1; });
    };
    for (std::size_t p = 0; p < out.size(); ++p)
      for (const auto& d : ins) {
        if (d.size() + p < out.size()) continue;  // the input has no axis here
        out[p] = d[d.size() - (out.size() - p)];
        if (!one(out[p])) break;  // else a later input's may be wider
      }
  } else {
    throw std::runtime_error("family: expected a stage family (" + stage_families_text() + "), got \"" + family + "\"");
  }
  TensorSpec mid;
  mid.name = output;
  mid.dtype = dtype;
  for (std::size_t p = 0; p < out.size(); ++p) mid.shape.push_back(name_dim(out[p], p, out.size(), stage, mid.shape));
  mids_.erase(std::remove_if(mids_.begin(), mids_.end(), [&](const TensorSpec& t) { return t.name == output; }),
              mids_.end());
  mids_.push_back(std::move(mid));
  shaped_[output] = true;
}

void ChainLayout::shape_as(const std::string& output, const std::string& input, const std::vector<std::string>& exprs,
                           std::size_t stage, std::optional<DType> dtype) {
  const TensorSpec& in = tensor(input);
  const auto ind = dims_of(in);
  std::vector<Dim> out;
  for (std::size_t p = 0; p < exprs.size(); ++p) {
    const std::string& e = exprs[p];
    std::optional<std::size_t> alone;  // the expression is one of the input's axes
    for (std::size_t k = 0; k < ind.size(); ++k)
      if (e == fmt::format("in{}", k)) alone = k;
    if (alone) {
      out.push_back(ind[*alone]);
      continue;
    }
    std::vector<int64_t> v;
    for (std::size_t w = 0; w < values_.size(); ++w) {
      AxisValues sym;
      for (std::size_t k = 0; k < ind.size(); ++k) sym[fmt::format("in{}", k)] = ind[k].value[w];
      try {
        v.push_back(eval_int_expr(e, sym));
      } catch (const std::exception& ex) {
        throw std::runtime_error(fmt::format(
            "shape[{}]: expected an axis expression of in0.. ({}'s axes), got \"{}\" ({})", p, input, e, ex.what()));
      }
      if (v.back() < 1)
        throw std::runtime_error(
            fmt::format("shape[{}]: \"{}\" is {} on workload {}", p, e, v.back(), task_.workloads[w].uuid));
    }
    out.push_back(computed(v, expr_to_cpp(e, [&](const std::string& n) -> std::string {
                             for (std::size_t k = 0; k < ind.size(); ++k)
                               if (n == fmt::format("in{}", k)) return "(" + ind[k].cpp + ")";
                             throw std::runtime_error("shape: unknown name " + n);
                           })));
  }
  TensorSpec mid;
  mid.name = output;
  mid.dtype = dtype.value_or(in.dtype);
  for (std::size_t p = 0; p < out.size(); ++p) mid.shape.push_back(name_dim(out[p], p, out.size(), stage, mid.shape));
  mids_.erase(std::remove_if(mids_.begin(), mids_.end(), [&](const TensorSpec& t) { return t.name == output; }),
              mids_.end());
  mids_.push_back(std::move(mid));
  shaped_[output] = true;
}

Task ChainLayout::stage_task(const std::vector<std::string>& inputs, const std::string& output,
                             std::size_t stage) const {
  Task st = task_;
  st.name = fmt::format("{} (stage {})", task_.name, stage + 1);
  st.op_type.clear();  // the stage is what its own op says (auto_bind.hpp), not the whole task
  st.clear_recognised_op();
  st.inputs.clear();
  st.outputs.clear();
  for (const auto& n : inputs) {
    if (std::any_of(st.inputs.begin(), st.inputs.end(), [&](const TensorSpec& t) { return t.name == n; })) continue;
    if (task_.find_output(n) && !written_.count(n))
      throw std::runtime_error("\"" + n + "\" is a task output no earlier stage wrote, not something to read");
    st.inputs.push_back(tensor(n));
  }
  if (const TensorSpec* o = task_.find_output(output)) {
    st.outputs.push_back(*o);
  } else if (shaped_.count(output)) {
    st.outputs.push_back(tensor(output));
  } else {
    TensorSpec guess = st.inputs.empty() ? TensorSpec{} : st.inputs.front();
    guess.name = output;
    st.outputs.push_back(guess);
  }
  for (const auto& [n, c] : fresh_cpp_) {
    Axis a;
    a.name = n;
    a.kind = Axis::Kind::var;
    st.axes.push_back(a);
    for (std::size_t w = 0; w < st.workloads.size(); ++w) st.workloads[w].axes[n] = values_[w].at(n);
  }
  return st;
}

std::string chain_template_name(const std::vector<const Template*>& stages) {
  std::string name = kChainPrefix;
  for (std::size_t i = 0; i < stages.size(); ++i) name += (i ? "+" : "") + stages[i]->name;
  return name;
}

Template make_chain_template(const std::vector<const Template*>& stages, const std::string& glue,
                             const std::filesystem::path& glue_path) {
  Template t;
  t.family = kChainFamily;
  t.name = chain_template_name(stages);
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (stages[i]->backend != stages[0]->backend)
      throw std::runtime_error(fmt::format("chain: stage {} ({}) is for {}, stage 1 ({}) for {}", i + 1,
                                           stages[i]->name, backend_name(stages[i]->backend), stages[0]->name,
                                           backend_name(stages[0]->backend)));
    if (!stages[i]->stages.empty()) throw std::runtime_error("chain: a stage cannot be a chain");
    t.stages.push_back(*stages[i]);
  }
  t.backend = stages.at(0)->backend;
  t.description = "stages computed one after another through kept intermediate buffers";
  t.manifest = t.source_path = glue_path;
  t.source = glue;
  t.dtypes = stages[0]->dtypes;
  std::size_t depth = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const std::string pre = fmt::format("S{}_", i + 1);
    for (Param p : stages[i]->params) {
      p.name = pre + p.name;
      t.params.push_back(std::move(p));
    }
    depth = std::max(depth, stages[i]->strategies.size());
  }
  // Stage by stage at each depth (stage 1's first strategy, stage 2's first, ...): a hive of a few agents starts
  // them on different stages.
  for (std::size_t d = 0; d < depth; ++d)
    for (std::size_t i = 0; i < stages.size(); ++i) {
      if (d >= stages[i]->strategies.size()) continue;
      StrategySpec s = stages[i]->strategies[d];
      s.name = fmt::format("stage{}.{}", i + 1, s.name);
      s.description += fmt::format(" (stage {}, {})", i + 1, stages[i]->name);
      for (auto& p : s.params) p = fmt::format("S{}_{}", i + 1, p);
      t.strategies.push_back(std::move(s));
    }
  return t;
}

Point stage_point(const Template& chain, const Point& p, std::size_t i) {
  Point out;
  const std::string pre = fmt::format("S{}_", i + 1);
  for (const auto& prm : chain.stages.at(i).params)
    if (auto it = p.find(pre + prm.name); it != p.end()) out[prm.name] = it->second;
  return out;
}

Validity check_chain_point(const Template& t, const BoundTask& bt, const Point& p) {
  auto invalid = [](std::string m) {
    Validity v;
    v.ok = false;
    v.message = std::move(m);
    return v;
  };
  if (bt.stages.size() != t.stages.size())
    return invalid(fmt::format("{} has {} stages, the task's chain {}", t.name, t.stages.size(), bt.stages.size()));
  for (const auto& [k, v] : p)
    if (!t.find_param(k)) return invalid(fmt::format("{} is not a parameter of {}", k, t.name));
  Validity out;
  bool timed = false;
  for (std::size_t i = 0; i < t.stages.size(); ++i) {
    const Validity v = check_point(t.stages[i], bt.stages[i], stage_point(t, p, i));
    if (!v.ok) return invalid(fmt::format("stage {} ({}): {}", i + 1, t.stages[i].name, v.message));
    if (v.perf_total) {
      out.perf_fast = timed ? std::min(out.perf_fast, v.perf_fast) : v.perf_fast;
      out.perf_total = v.perf_total;
      timed = true;
    }
    for (const auto& g : v.generic) out.generic.push_back(fmt::format("stage {}: {}", i + 1, g));
  }
  return out;
}

std::string render_chain(const Template& t, const BoundTask& bt, const Point& p) {
  if (bt.stages.size() != t.stages.size())
    throw std::runtime_error(
        fmt::format("{} has {} stages, the task {} {}", t.name, t.stages.size(), bt.key, bt.stages.size()));
  std::vector<std::string> includes;
  std::string stages;
  for (std::size_t i = 0; i < t.stages.size(); ++i) {
    const Template& st = t.stages[i];
    const Point sp = stage_point(t, p, i);
    const std::string what = fmt::format("stage {} ({})", i + 1, st.name);
    const NamespacedBody b = namespaced_body(render(st, bt.stages[i], sp), what);
    merge_hoisted(includes, b, what);
    stages += fmt::format("\n// ---- stage {}: {} {}\nnamespace khive_s{} {{\n{}}}  // namespace khive_s{}\n", i + 1,
                          st.name, describe_point(sp), i + 1, b.text, i + 1);
    // The next stage defines its own (its PROLOGUE's KHIVE_HD, its template's switches).
    for (const auto& m : b.macros) stages += "#undef " + m + "\n";
  }
  std::string out = render_header(t, bt, p);
  for (const auto& inc : includes) out += inc + "\n";
  return out + fill_placeholders(
                   t,
                   [&](const std::string& name) -> std::optional<std::string> {
                     if (name == "STAGES") return stages;
                     if (auto it = bt.placeholders.find(name); it != bt.placeholders.end()) return it->second;
                     return std::nullopt;
                   },
                   "the chain glue has STAGES, PROLOGUE, RUN, ENTRY");
}

}  // namespace khive::tuner
