// Derived cost formulas (derive_cost.hpp).
#include "khive/task/derive_cost.hpp"

#include <algorithm>

namespace khive {
namespace {

std::string product(const std::vector<std::string>& dims) {
  if (dims.empty()) return "1";
  std::string s;
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? " * " : "") + dims[i];
  return dims.size() == 1 ? s : "(" + s + ")";
}

struct Recognised {
  std::string flops, note;
  std::optional<ComputeUnit> unit;
};

std::optional<ComputeUnit> tensor_core_unit(DType d) {
  switch (d) {
    case DType::bf16: return ComputeUnit::tc_bf16;
    case DType::f16: return ComputeUnit::tc_fp16;
    case DType::f8e4m3:
    case DType::f8e5m2: return ComputeUnit::tc_fp8;
    case DType::i8: return ComputeUnit::tc_int8;
    case DType::f64: return ComputeUnit::fp64;
    default: return ComputeUnit::fp32;
  }
}

// A[.., M, K] x B[.., K, N] (or B[.., N, K]) -> C[.., M, N], batch dimensions equal.
std::optional<Recognised> matmul(const Task& t) {
  std::vector<const TensorSpec*> ins;
  for (const auto& s : t.inputs)
    if (!s.scalar) ins.push_back(&s);
  if (ins.size() != 2 || t.outputs.size() != 1) return std::nullopt;
  const auto& a = ins[0]->shape;
  const auto& b = ins[1]->shape;
  const auto& c = t.outputs[0].shape;
  if (a.size() < 2 || b.size() != a.size() || c.size() != a.size()) return std::nullopt;
  std::size_t r = a.size();
  std::vector<std::string> batch(a.begin(), a.end() - 2);
  if (!std::equal(batch.begin(), batch.end(), b.begin()) || !std::equal(batch.begin(), batch.end(), c.begin()))
    return std::nullopt;
  const std::string &m = a[r - 2], &k = a[r - 1], &n = c[r - 1];
  if (c[r - 2] != m) return std::nullopt;
  bool kn = b[r - 2] == k && b[r - 1] == n;
  bool nk = b[r - 2] == n && b[r - 1] == k;
  if (!kn && !nk) return std::nullopt;
  std::vector<std::string> all = batch;
  all.insert(all.end(), {m, n, k});
  Recognised rec;
  rec.flops = "2 * " + product(all);
  rec.note =
      "flops = 2*" + product(all) + " (matrix product: " + ins[0]->name + " x " + ins[1]->name + (nk ? "^T" : "") + ")";
  rec.unit = tensor_core_unit(ins[0]->dtype);
  return rec;
}

std::optional<Recognised> shaped_like_input(const Task& t) {
  for (const auto& o : t.outputs)
    for (const auto& i : t.inputs)
      if (!i.scalar && !o.scalar && i.shape == o.shape) {
        Recognised rec;
        std::string n;
        for (const auto& out : t.outputs) n += (n.empty() ? "" : " + ") + product(out.shape);
        rec.flops = n;
        rec.note = "flops = one an output element (" + o.name + " is shaped like " + i.name + ")";
        return rec;
      }
  return std::nullopt;
}

}  // namespace

std::string derived_bytes_formula(const Task& t) {
  std::string f;
  auto add = [&](const TensorSpec& s) {
    if (s.scalar) return;
    f += (f.empty() ? "" : " + ") + std::to_string(dtype_size(s.dtype)) + " * " + product(s.shape);
  };
  for (const auto& s : t.inputs) add(s);
  for (const auto& s : t.outputs) add(s);
  return f.empty() ? "0" : f;
}

void derive_cost(Task& t, bool flops_given, bool bytes_given, bool unit_given) {
  std::vector<std::string> notes;
  if (!bytes_given) {
    t.cost.bytes = derived_bytes_formula(t);
    t.cost.derived_bytes = true;
    notes.push_back("bytes = every input and output once");
  }
  if (!flops_given) {
    std::optional<Recognised> rec = matmul(t);
    if (!rec) rec = shaped_like_input(t);
    t.cost.derived_flops = true;
    if (rec) {
      t.cost.flops = rec->flops;
      notes.push_back(rec->note);
      if (!unit_given && rec->unit) {
        t.cost.unit = *rec->unit;
        t.cost.derived_unit = true;
        notes.push_back("unit " + std::string(compute_unit_name(*rec->unit)));
      }
    } else {
      t.cost.flops = "0";
      notes.push_back("flops unknown (no recognised op): the speed of light rests on bytes alone");
    }
  }
  std::string d;
  for (const auto& n : notes) d += (d.empty() ? "" : "; ") + n;
  t.cost.derivation = d;
}

}  // namespace khive
