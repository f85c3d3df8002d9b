// What every family binder shares (bind.hpp is the public side): the binding being read (Ctx: its fields, typed,
// with errors naming the bindings file and field), the C++ spelling of a task's axes, and the PROLOGUE parts all
// families start with. One binder per family lives next to this file (bind/<family>.cpp, the families of kernels/).
//
//   BoundTask bind_rowop(const Ctx& c) {
//     const TensorSpec& x = c.input("x");            // fails "tasks.softmax.x: expected an input tensor of ..."
//     std::string p = typed_prologue(c, x.dtype);     // khive_t, khive_to_float_t, khive_from_float_t
//     ... axis_cpp(c.task, x.shape.back()) ...        // "D", "int64_t(128)" or "(H * 2)"
//   }
#pragma once
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "khive/tuner/bind.hpp"

namespace khive::tuner::bind_detail {

using json = nlohmann::ordered_json;

// One binding being applied to one task on one backend.
struct Ctx {
  const Task& task;
  Backend backend;
  const Binding& b;
  std::string field(const std::string& f) const;  // "tasks.softmax.weight"
  std::string file() const;                       // "kernels/bindings/demo.json"
  [[noreturn]] void fail(const std::string& f, const std::string& expected, const std::string& got) const;
  // Fails on a key of the binding other than "family" and `allowed`.
  void check_keys(std::initializer_list<const char*> allowed) const;
  bool has(const char* k) const;  // present and not null
  std::string str(const char* k, bool required) const;
  bool flag(const char* k, bool dflt = false) const;  // true or false when present, else dflt
  const TensorSpec& input(const char* k) const;       // the task's (non-scalar) input the field names
  const TensorSpec& output(const char* k) const;      // the task's output the field names
};

bool is_float_storage(DType d);

// C++ for an axis: its launch parameter (var), its value (const), or its expression (expr; + - * only).
std::string axis_cpp(const Task& t, const std::string& name, int depth = 0);
// "int64_t(1) * M * K": the product of dims in C++.
std::string shape_product_cpp(const Task& t, const std::vector<std::string>& dims);
std::string storage_type(DType d, Backend b);
// khive_to_float_<tag> / khive_from_float_<tag> for one storage type.
std::string conversions(const std::string& tag, DType d, Backend b);
// The banner, includes and KHIVE_HD every PROLOGUE starts with.
std::string common_prologue(const Ctx& c);
// The common prologue plus the storage type khive_t of dtype d and its float conversions.
std::string typed_prologue(const Ctx& c, DType d);
// What khive_run takes after its own arguments: ", stream" on CUDA.
std::string launch_args_tail(Backend b);
// A shape as error messages print it: "[T, Hq, D]".
std::string shape_text(const std::vector<std::string>& s);
// One axis of a workload's resolved axes: an axis name, a literal size ("128"), or "" (an absent axis: 1).
int64_t axis_value(const AxisValues& ax, const std::string& n);
// Records workload w's family variables, its uuid and whether it is timed on the binding's backend.
void add_workload(BoundTask& bt, const Ctx& c, std::size_t w, AxisValues vars);
// Per workload: all resolved axes (for the family's variables).
std::vector<std::map<std::string, int64_t>> resolved(const Task& t);
// The vectors of a conv's or gemm's epilogue: `first` (the conv's "vector", the gemm's "bias": b in the epilogue, or
// nullptr) and the binding's "vectors" list (b1, b2, ... after it; the list needs `first`), each of `dtype`. A vector
// is read per output channel / column, or (every axis 1 on every workload, a 0-d tensor included) as one value for
// every element. `per_index` checks a vector's shape on one workload (throwing through c.fail with the field).
// With `scalars`, a field may also name a float32 scalar input (one value, passed by value: SOL's `scaling: float`).
struct EpilogueVector {
  const TensorSpec* t = nullptr;
  std::string field;    // "vector", "bias", "vectors[0]", ...
  bool one = false;     // one value for every element (read at [0])
  bool scalar = false;  // a scalar input (one value, by value)
};
std::vector<EpilogueVector> epilogue_vectors(const Ctx& c, const char* first_field, DType dtype, bool scalars = false);
// The epilogue's C++: `struct khive_epi_vals { float b[n]; }` of the values at index `index` (an int64_t expression)
// read from the pointers `ptrs[k]`, and the lines "const float b = v.b[0]; const float b1 = v.b[1]; ..." an
// epilogue of them starts with. Empty vecs: b = 0.
std::string epilogue_vals_cpp(const std::vector<EpilogueVector>& vecs);
std::string epilogue_names_cpp(std::size_t n_vecs, const std::string& vals);
// " with b = s, b1 = t" for a summary ("" without vectors).
std::string vectors_text(const std::vector<EpilogueVector>& vecs);
// torch's output size of one spatial axis: a convolution's (aten.convolution; transposed with its output padding)
// and a pooling's (pooling_output_shape, ceil_mode's last window included); 0 when no window fits.
int64_t conv_out(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil, int64_t out_pad, bool transposed);
int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil);
// x viewed as [OUTER, R, INNER] around one of its axes (the reduce and scan families): the binding's "dim" field read
// and checked (an index into x's shape, negative from the end), the axes before and after it, and C++ for the three.
// With `run` (the reduce family), "dim" may also be a list of neighbouring axes ([2, 3]: a global average pool's
// mean over H and W; any order, negative from the end), taken together as R.
struct AxisSplit {
  int dim = 0;                              // 0 .. rank - 1 (the first of a run)
  int last = 0;                             // the last axis of the run (dim for one axis)
  std::vector<std::string> before, after;   // x's axes before and after it
  std::string axis;                         // x's axis at dim
  std::vector<std::string> axes;            // x's axes dim .. last
  std::string outer_cpp, r_cpp, inner_cpp;  // "int64_t(1) * B", "N", "int64_t(1) * D"
};
AxisSplit split_at_axis(const Ctx& c, const TensorSpec& x, const char* what, bool run = false);
// Records every workload's OUTER, R, INNER and ELEM_BYTES (x's element size).
void add_split_workloads(BoundTask& bt, const Ctx& c, const AxisSplit& s, const TensorSpec& x);
// The binding's list field k of `dims` integers >= lo, one per `axis` ("spatial axis"); absent: dims x dflt.
std::vector<int64_t> axis_ints(const Ctx& c, const char* k, std::size_t dims, int64_t lo, int64_t dflt,
                               const char* axis);
// A KHIVE_HD constexpr function `name(int a)` of the 3-D view's axis a (0 = D, 1 = H, 2 = W) for the values of the
// last v.size() axes, the leading ones `fill`: usable in device code and in constant expressions alike.
std::string per_axis_cpp(const char* name, const std::vector<int64_t>& v, int64_t fill);
// The op of a binding: one C++ expression, or one per backend ({"cpu": ..., "cuda": ...}).
std::string op_text(const Ctx& c, const char* key);

// An elementwise input read through a strided view (bind/elementwise.cpp, "views"): the output's flat index i as
// coordinates c of `shape` (row-major), the input's element offset + sum c_d * strides[d]. The binding writes each
// as an axis expression of in0.. (the input's axes), out0.. (the output's) and the task's axes; eval_view evaluates
// them on one workload and fails (through c, naming `field`) when a size or stride is negative, the shape's product
// is not the output's element count, or the view reads outside the input.
constexpr int kMaxViewRank = 8;
struct ViewOnWorkload {
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
};
AxisValues view_symbols(const TensorSpec& in, const TensorSpec& out, const AxisValues& ax);
ViewOnWorkload eval_view(const Ctx& c, const std::string& field, const TensorSpec& in, const TensorSpec& out,
                         const std::vector<std::string>& shape, const std::vector<std::string>& strides,
                         const std::string& offset, const AxisValues& ax, const std::string& workload);

// The family binders (bind/<family>.cpp): each checks the binding's fields against the task and fills op, dtype,
// summary, PROLOGUE, ENTRY and the workloads' family variables.
BoundTask bind_elementwise(const Ctx& c);
BoundTask bind_gated(const Ctx& c);
BoundTask bind_rope(const Ctx& c);
BoundTask bind_rowop(const Ctx& c);
BoundTask bind_router(const Ctx& c);
BoundTask bind_gemm(const Ctx& c);
BoundTask bind_attention(const Ctx& c);
BoundTask bind_reduce(const Ctx& c);
BoundTask bind_scan(const Ctx& c);
BoundTask bind_conv(const Ctx& c);
BoundTask bind_pool(const Ctx& c);
BoundTask bind_norm(const Ctx& c);
BoundTask bind_chain(const Ctx& c);  // stages of the other families (chain.hpp)

}  // namespace khive::tuner::bind_detail
