// The torch binding around a khive kernel: the C++ function a PyTorch extension exposes as `run`, in
// destination-passing style (inputs, then preallocated outputs), which checks every tensor (device, dtype,
// contiguity, shape), reads the var axes from the tensors' sizes and calls khive_launch on PyTorch's current
// stream. SOL-ExecBench and FlashInfer-Bench build it with torch.utils.cpp_extension ("binding": "torch");
// the KernelBench ModelNew loads the same code with load_inline.
//
//   std::string cpp = torch_binding(task, Backend::cuda, "khive_prelude.h", /*with_module=*/true);
#pragma once
#include <string>

#include "khive/task/task.hpp"

namespace khive {

// Throws TaskFormatError (definition.json, axes.X) when a var axis appears in no tensor's shape (the binding
// could not know its value).
std::string torch_binding(const Task& t, Backend b, const std::string& prelude_include, bool with_module);

// "void run(torch::Tensor A, ..., torch::Tensor C)" (the declaration, for load_inline's cpp_sources).
std::string torch_binding_declaration(const Task& t);

}  // namespace khive
