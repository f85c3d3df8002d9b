// Constraints that read input data, as FlashInfer-Bench writes them ("num_kv_indices == kv_indptr[-1].item()").
//
// Their value depends on the inputs, so khive cannot check them when a task loads; python/khive_torch
// (constraints.py) evaluates them on the inputs. At load, check_data_constraint verifies that one is within
// the safe subset both sides accept, and names what is not:
//   names       axes, inputs, and the functions len, min, max, abs, int
//   after '.'   item, shape, numel (".item()", ".shape[0]", ".numel()")
//   operators   + - * / // % ** == != < <= > >= and or not, ( ) [ ] , and unary minus; numbers
// Anything else (strings, lambdas, attribute chains such as __class__, other calls) is refused.
//
//   check_data_constraint("total_q == qo_indptr[-1].item()", axes, inputs);   // ok
//   check_data_constraint("open('x')", axes, inputs);   // throws ExprError "unknown name 'open' at 0"
#pragma once
#include <set>
#include <string>
#include <string_view>

#include "khive/task/expr.hpp"

namespace khive {

// Throws ExprError (message and 0-based position) when the text is outside the subset or names an unknown
// identifier; brackets must balance.
void check_data_constraint(std::string_view text, const std::set<std::string>& axes,
                           const std::set<std::string>& inputs);

// Whether a constraint needs input data: it mentions an input name or uses [ ] or '.'.
bool is_data_constraint(std::string_view text, const std::set<std::string>& inputs);

}  // namespace khive
