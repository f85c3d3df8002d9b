// A khive kernel as a KernelBench ModelNew file (for tasks imported with `khive import kernelbench`).
//
//   std::string py = kernelbench_modelnew(task, kernel_source, "c0012");
//
// The file holds the problem verbatim (Model, get_inputs, get_init_inputs: the task's kernelbench.py), then
// `class ModelNew(Model)`: the same constructor, so KernelBench's seeded construction gives both models the same
// weights, and a forward that passes the inputs and the model's parameters (in the task's input order) with
// preallocated outputs to the kernel, built once with torch.utils.cpp_extension.load_inline (the kernel, the
// prelude and the torch binding in one CUDA source; for a CPU kernel, in one C++ source built with OpenMP). Throws
// TaskFormatError when the task has no khive.source of kind kernelbench or its kernelbench.py is missing.
#pragma once
#include <string>

#include "khive/task/task.hpp"

namespace khive {

std::string kernelbench_modelnew(const Task& t, const std::string& kernel_source, const std::string& label,
                                 Backend backend = Backend::cuda);

}  // namespace khive
