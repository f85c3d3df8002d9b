// Bindings found by the tuner itself (issue 14: tasks that need no hand-work): for a task that no bindings file
// names, the op is recognised from its op_type (or, for imported tasks, its name) and checked against its signature.
//
//   std::string why;
//   std::optional<Binding> b = infer_binding(task, &why);   // nullopt: why says what did not match, plainly
//
// Recognised: a matrix product (op_type or name says gemm / matmul / mm / linear; A[M,K] or A[K,M], B[K,N] or B[N,K],
// C[M,N], axis names, no other input) -> gemm; the float32 activations of KernelBench level 1 (relu, sigmoid, tanh,
// swish/silu, gelu, selu, hardsigmoid, softplus, softsign, elu, hardtanh; one input, the output shaped like it)
// -> elementwise with the same expressions as kernels/bindings/cutegen26.json; softmax and log_softmax over the last
// axis of a 2-D float32 tensor -> rowop; rmsnorm (x[T, H], weight[H] -> y[T, H], eps read from the reference's
// `eps = 1e-6`) -> rowop rmsnorm (the templates decide the dtypes they serve). Anything else is left to the other
// agents (LLM), and `why` says so.
#pragma once
#include <optional>
#include <string>

#include "khive/task/task.hpp"
#include "khive/tuner/library.hpp"

namespace khive::tuner {

std::optional<Binding> infer_binding(const Task& t, std::string* why);

// The op name the recognition uses: op_type, or for an imported task (op_type "kernelbench" or empty) the task's
// name without its "kb<level>_<number>_" prefix.
std::string recognised_op_name(const Task& t);

}  // namespace khive::tuner
