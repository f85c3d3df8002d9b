// Arithmetic over axis names, as in SOL-ExecBench "expr" axes, constraints and khive cost formulas.
//
//   eval_expr("hidden_size // num_heads", {{"hidden_size",4096},{"num_heads",32}})  == 128
//   eval_expr("2 * M * N * K", ...)            integer or real arithmetic, see below
//   eval_condition("H_qo == H_kv * H_r", ...)  comparisons (== != < <= > >=), and / or / not, && || !
//
// Grammar: + - * / // % ** (right-assoc, binds tighter than unary minus, as in Python), parentheses,
// integer and real literals (1e6, 0.5), identifiers. '/' is true division; '//' floors; '%' takes the
// sign of the divisor (Python). Results are doubles; integer axes use eval_int_expr, which requires an
// integral result. Errors (unknown name, syntax, division by zero) throw ExprError with the position.
// `and`/`or` short-circuit; `!` is a synonym of `not` (Python precedence: `!a == b` is `not (a == b)`);
// comparisons chain as in Python (`0 < M <= 4096`); True / False are 1 / 0.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace khive {

// what() reads "<message> at <position>", e.g. "unknown axis 'Hq' at 4" (0-based character offset).
struct ExprError : std::runtime_error {
  std::size_t position;
  ExprError(const std::string& msg, std::size_t pos);
};

using AxisValues = std::map<std::string, int64_t>;

double eval_expr(std::string_view expr, const AxisValues& vars);
int64_t eval_int_expr(std::string_view expr, const AxisValues& vars);
bool eval_condition(std::string_view expr, const AxisValues& vars);
// Identifiers an expression mentions, first occurrence first, without duplicates (for dependency order and
// "unknown axis" errors before evaluation). Parses the whole expression: throws ExprError on a syntax error.
std::vector<std::string> expr_identifiers(std::string_view expr);
// An integer axis expression as C++ over int64_t: integer literals, names (each spelled by `name`), unary + -,
// + - * and // % with Python's meaning (floor; the divisor's sign) for any operands. Throws ExprError on a syntax
// error or anything else (real literals, '/', '**', comparisons, and / or / not).
//   expr_to_cpp("(H - 2) // 4", [](const std::string& n) { return n; })
//     -> "(((H - int64_t(2))) / (int64_t(4)) - ...)"   the same number as eval_int_expr for every H
std::string expr_to_cpp(std::string_view expr, const std::function<std::string(const std::string&)>& name);

}  // namespace khive
