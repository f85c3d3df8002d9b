#include <gtest/gtest.h>

#include <string>

#include "khive/task/expr.hpp"

namespace khive {
namespace {

double ev(const std::string& e, const AxisValues& v = {}) { return eval_expr(e, v); }
int64_t iv(const std::string& e, const AxisValues& v = {}) { return eval_int_expr(e, v); }
bool cond(const std::string& e, const AxisValues& v = {}) { return eval_condition(e, v); }

// The ExprError message for e (and its position), or "no error".
std::string err(const std::string& e, const AxisValues& v = {}, std::size_t* pos = nullptr) {
  try {
    eval_expr(e, v);
  } catch (const ExprError& x) {
    if (pos) *pos = x.position;
    return x.what();
  }
  return "no error";
}

TEST(Expr, Precedence) {
  EXPECT_EQ(ev("1 + 2 * 3"), 7);
  EXPECT_EQ(ev("(1 + 2) * 3"), 9);
  EXPECT_EQ(ev("10 - 4 - 3"), 3);      // left-assoc
  EXPECT_EQ(ev("100 // 10 // 3"), 3);  // left-assoc
  EXPECT_EQ(ev("2 * 3 ** 2"), 18);
  EXPECT_EQ(ev("2 ** 3 ** 2"), 512);  // right-assoc
  EXPECT_EQ(ev("-2 ** 2"), -4);       // ** binds tighter than unary minus
  EXPECT_EQ(ev("(-2) ** 2"), 4);
  EXPECT_EQ(ev("2 ** -1"), 0.5);
  EXPECT_EQ(ev("- - 3"), 3);
  EXPECT_EQ(ev("+3 - -3"), 6);
  EXPECT_EQ(ev("1 + 2 * 3 ** 2 // 4 % 5"), 1 + (2 * 9 / 4) % 5);
}

TEST(Expr, PythonFloorDivisionAndModulo) {
  EXPECT_EQ(iv("7 // 2"), 3);
  EXPECT_EQ(iv("-7 // 2"), -4);
  EXPECT_EQ(iv("7 // -2"), -4);
  EXPECT_EQ(iv("-7 // -2"), 3);
  EXPECT_EQ(iv("7 % 3"), 1);
  EXPECT_EQ(iv("-7 % 3"), 2);  // sign of the divisor
  EXPECT_EQ(iv("7 % -3"), -2);
  EXPECT_EQ(iv("-7 % -3"), -1);
  EXPECT_EQ(iv("-6 % 3"), 0);
  EXPECT_EQ(ev("-7.5 // 2"), -4.0);
  EXPECT_EQ(ev("-7.5 % 2"), 0.5);
  EXPECT_EQ(ev("7.5 % -2"), -0.5);
}

TEST(Expr, TrueDivisionAndIntegerResults) {
  EXPECT_EQ(ev("7 / 2"), 3.5);
  EXPECT_EQ(iv("M / 2", {{"M", 8}}), 4);  // an integral real is accepted
  EXPECT_THROW(iv("M / 3", {{"M", 8}}), ExprError);
  try {
    iv("M / 3", {{"M", 4}});
  } catch (const ExprError& e) {
    EXPECT_NE(std::string(e.what()).find("expected an integer result"), std::string::npos) << e.what();
  }
}

TEST(Expr, VariablesAndLiterals) {
  AxisValues v{{"hidden_size", 4096}, {"num_heads", 32}, {"M", 3}, {"N", 5}, {"K", 7}};
  EXPECT_EQ(iv("hidden_size // num_heads", v), 128);
  EXPECT_EQ(ev("2 * M * N * K", v), 210);
  EXPECT_EQ(ev("1e6"), 1e6);
  EXPECT_EQ(ev("1E-3"), 1e-3);
  EXPECT_EQ(ev("0.5"), 0.5);
  EXPECT_EQ(ev(".5"), 0.5);
  EXPECT_EQ(ev("2."), 2.0);
  EXPECT_EQ(ev("  M\t+\nN ", v), 8);
}

TEST(Expr, IntegerArithmeticIsExact) {
  EXPECT_EQ(iv("2 ** 62"), int64_t{1} << 62);
  EXPECT_EQ(iv("9007199254740993 + 0"), 9007199254740993LL);  // 2^53 + 1: not representable as a double
  EXPECT_EQ(iv("3 * 1000000007 * 1000000007 // 1000000007"), 3000000021LL);
  EXPECT_DOUBLE_EQ(ev("2 ** 64"), 18446744073709551616.0);  // overflow falls back to a real
  EXPECT_THROW(iv("2 ** 64"), ExprError);                   // ... which is not an int64
}

TEST(Expr, Comparisons) {
  AxisValues v{{"H_qo", 32}, {"H_kv", 8}, {"H_r", 4}};
  EXPECT_TRUE(cond("H_qo == H_kv * H_r", v));
  EXPECT_FALSE(cond("H_qo != H_kv * H_r", v));
  EXPECT_TRUE(cond("H_kv < H_qo", v));
  EXPECT_TRUE(cond("H_kv <= 8", v));
  EXPECT_FALSE(cond("H_kv > 8", v));
  EXPECT_TRUE(cond("H_kv >= 8", v));
  EXPECT_TRUE(cond("1 < 2 < 3"));  // chained as in Python
  EXPECT_FALSE(cond("3 > 2 > 2"));
  EXPECT_FALSE(cond("1 < 3 < 2"));
  EXPECT_TRUE(cond("0.5 < 1"));
  EXPECT_EQ(ev("(1 < 2) + (2 < 1) + (3 == 3)"), 2);
}

TEST(Expr, LogicalOperators) {
  EXPECT_TRUE(cond("1 < 2 and 2 < 3"));
  EXPECT_FALSE(cond("1 < 2 and 3 < 2"));
  EXPECT_TRUE(cond("1 > 2 or 2 < 3"));
  EXPECT_TRUE(cond("not 1 > 2"));
  EXPECT_TRUE(cond("1 < 2 && 2 < 3"));
  EXPECT_TRUE(cond("1 > 2 || 2 < 3"));
  EXPECT_TRUE(cond("!(1 > 2)"));
  EXPECT_TRUE(cond("not 1 == 2"));    // not binds looser than ==
  EXPECT_TRUE(cond("1 or 0 and 0"));  // and binds tighter than or
  EXPECT_FALSE(cond("(1 or 0) and 0"));
  EXPECT_TRUE(cond("not not 1"));
  EXPECT_TRUE(cond("True and not False"));
}

TEST(Expr, AndOrShortCircuit) {
  AxisValues v{{"M", 0}, {"N", 8}};
  EXPECT_TRUE(cond("M == 0 or N // M > 1", v));
  EXPECT_FALSE(cond("M != 0 and N // M > 1", v));
  EXPECT_THROW(cond("M == 0 and N // M > 1", v), ExprError);
}

TEST(Expr, ErrorsCarryPositions) {
  std::size_t pos = 99;
  EXPECT_EQ(err("H + Hq", {{"H", 1}}, &pos), "unknown axis 'Hq' at 4");
  EXPECT_EQ(pos, 4u);
  EXPECT_EQ(err("MM + 1 / 0", {{"MM", 1}}, &pos), "division by zero at 7");
  EXPECT_EQ(pos, 7u);
  EXPECT_EQ(err("M + N * 2)", {{"M", 1}, {"N", 1}}, &pos), "unexpected ')' at 9");
  EXPECT_EQ(pos, 9u);
  EXPECT_EQ(err("M // 0", {{"M", 1}}), "division by zero at 2");
  EXPECT_EQ(err("M % 0", {{"M", 1}}), "modulo by zero at 2");
  EXPECT_EQ(err("1.5 / 0.0"), "division by zero at 4");
  EXPECT_EQ(err("M +"), "unexpected end of expression at 3");
  EXPECT_EQ(err(""), "empty expression at 0");
  EXPECT_EQ(err("   "), "empty expression at 3");
  EXPECT_EQ(err("M $ N"), "unexpected character '$' at 2");
  EXPECT_EQ(err("M N"), "unexpected 'N' at 2");
  EXPECT_EQ(err("* 2"), "unexpected '*' at 0");
  EXPECT_EQ(err("()"), "unexpected ')' at 1");
  EXPECT_EQ(err("(1 + 2"), "missing ')' (opened at 0) at 6");
  EXPECT_EQ(err("M = N"), "unexpected '=' (comparison is '==') at 2");
  EXPECT_EQ(err("12abc"), "malformed number '12a' at 0");
  EXPECT_EQ(err("0 ** -1"), "division by zero (0 to a negative power) at 2");
  EXPECT_EQ(err("(-8) ** 0.5"), "negative number to a fractional power at 5");
}

TEST(Expr, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '(');
  EXPECT_THROW(ev(deep + "1"), ExprError);
  std::string minus(100000, '-');
  EXPECT_THROW(ev(minus + "1"), ExprError);
  std::string ok = std::string(50, '(') + "1" + std::string(50, ')');
  EXPECT_EQ(ev(ok), 1);
}

TEST(Expr, Identifiers) {
  EXPECT_EQ(expr_identifiers("a * b + a // c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(expr_identifiers("H_qo == H_kv * H_r and not True"), (std::vector<std::string>{"H_qo", "H_kv", "H_r"}));
  EXPECT_TRUE(expr_identifiers("2 * 3").empty());
  EXPECT_THROW(expr_identifiers("a +"), ExprError);
  EXPECT_THROW(expr_identifiers("a $ b"), ExprError);
}

// The C++ spelling keeps the expression's structure and names; what is not integer axis arithmetic is refused.
TEST(Expr, ToCppSpellsIntegerArithmeticAndRefusesTheRest) {
  auto upper = [](const std::string& n) { return "AX_" + n; };
  EXPECT_EQ(expr_to_cpp("H - 2 * W", upper), "(AX_H - (int64_t(2) * AX_W))");
  EXPECT_EQ(expr_to_cpp("-(H)", upper), "(-AX_H)");
  EXPECT_NE(expr_to_cpp("H // 4 + H % 3", upper).find("AX_H"), std::string::npos);
  for (const char* bad : {"H / 2", "H ** 2", "2.5 * H", "H < 2", "H and W", "not H", "H +"})
    EXPECT_THROW(expr_to_cpp(bad, upper), ExprError) << bad;
}

}  // namespace
}  // namespace khive
