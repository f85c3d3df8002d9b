// Cost formulas a task did not give, derived from its tensors (docs/task-format.md, "Derived cost").
//
//   bytes  every input and output tensor read or written once: "4 * (M * K) + 4 * (K * N) + 4 * (M * N)"
//   flops  a recognised op by its signature: a matrix product (A[.., M, K], B[.., K, N] or B[.., N, K] ->
//          C[.., M, N]) is 2 * batch * M * N * K; an output shaped like an input (elementwise, row ops) is one
//          flop an output element; anything else 0 (T_sol then rests on bytes alone), and the derivation says so
//   unit   the matrix product's input dtype (bfloat16 -> bf16 tensor cores, ...), else fp32
//
// Each derived field is flagged in CostModel (derived_flops, derived_bytes, derived_unit) and described in
// CostModel::derivation, so reports can label the speed of light as derived.
#pragma once
#include "khive/task/task.hpp"

namespace khive {

void derive_cost(Task& t, bool flops_given, bool bytes_given, bool unit_given);

// The bytes formula over the task's tensors ("0" when it has none but scalars).
std::string derived_bytes_formula(const Task& t);

}  // namespace khive
