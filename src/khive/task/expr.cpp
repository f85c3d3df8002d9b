// Recursive-descent parser and evaluator for axis expressions (see expr.hpp for the grammar).
//
// The expression is parsed into a small tree first (so that `and` / `or` short-circuit as in Python and
// expr_identifiers can report names without evaluating), then evaluated. Values keep Python's int/float
// distinction: integer arithmetic is exact (falling back to double only on int64 overflow), '/' always
// yields a real.
#include "khive/task/expr.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>

namespace khive {

ExprError::ExprError(const std::string& msg, std::size_t pos)
    : std::runtime_error(msg + " at " + std::to_string(pos)), position(pos) {}

namespace {

// ---------------------------------------------------------------------------------------------- lexer

enum class Tok { number, ident, op, lparen, rparen, end };

struct Token {
  Tok kind = Tok::end;
  std::string text;     // the source text of the token
  std::size_t pos = 0;  // 0-based offset in the expression
  bool is_int = false;  // Tok::number
  int64_t ival = 0;
  double dval = 0.0;
};

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    Token t;
    t.pos = i;
    if (is_digit(c) || (c == '.' && i + 1 < s.size() && is_digit(s[i + 1]))) {
      std::size_t j = i;
      bool real = false;
      while (j < s.size() && is_digit(s[j])) ++j;
      if (j < s.size() && s[j] == '.') {
        real = true;
        ++j;
        while (j < s.size() && is_digit(s[j])) ++j;
      }
      if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
        std::size_t k = j + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
        if (k < s.size() && is_digit(s[k])) {
          real = true;
          j = k;
          while (j < s.size() && is_digit(s[j])) ++j;
        } else {
          throw ExprError("malformed number '" + std::string(s.substr(i, k - i)) + "'", i);
        }
      }
      if (j < s.size() && is_ident_start(s[j]))
        throw ExprError("malformed number '" + std::string(s.substr(i, j + 1 - i)) + "'", i);
      t.kind = Tok::number;
      t.text = std::string(s.substr(i, j - i));
      t.dval = std::strtod(t.text.c_str(), nullptr);
      if (!real) {
        // An integer literal; one too large for int64 stays a real.
        errno = 0;
        char* end = nullptr;
        long long v = std::strtoll(t.text.c_str(), &end, 10);
        if (errno == 0) {
          t.is_int = true;
          t.ival = v;
        }
      }
      i = j;
    } else if (is_ident_start(c)) {
      std::size_t j = i;
      while (j < s.size() && is_ident_char(s[j])) ++j;
      t.text = std::string(s.substr(i, j - i));
      t.kind = (t.text == "and" || t.text == "or" || t.text == "not") ? Tok::op : Tok::ident;
      i = j;
    } else if (c == '(' || c == ')') {
      t.kind = c == '(' ? Tok::lparen : Tok::rparen;
      t.text = std::string(1, c);
      ++i;
    } else {
      static constexpr std::string_view two[] = {"**", "//", "==", "!=", "<=", ">=", "&&", "||"};
      static constexpr std::string_view one = "+-*/%<>!";
      std::string_view rest = s.substr(i);
      t.kind = Tok::op;
      for (auto op : two)
        if (rest.substr(0, 2) == op) t.text = std::string(op);
      if (t.text.empty() && one.find(c) != std::string_view::npos) t.text = std::string(1, c);
      if (t.text.empty()) {
        if (c == '=') throw ExprError("unexpected '=' (comparison is '==')", i);
        std::string shown = (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
                                ? "byte " + std::to_string(static_cast<unsigned char>(c))
                                : "'" + std::string(1, c) + "'";
        throw ExprError("unexpected character " + shown, i);
      }
      i += t.text.size();
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.kind = Tok::end;
  end.pos = s.size();
  out.push_back(end);
  return out;
}

// ----------------------------------------------------------------------------------------------- tree

enum class NodeKind { number, name, neg, pos, lnot, land, lor, binary, compare };

struct Node {
  NodeKind kind;
  std::size_t pos = 0;  // where errors about this node point (operator or operand start)
  std::string op;       // binary / compare operator, or the name
  bool is_int = false;  // number
  int64_t ival = 0;
  double dval = 0.0;
  std::vector<std::unique_ptr<Node>> kids;
  std::vector<std::string> cmp_ops;  // compare: one op between consecutive kids
  std::vector<std::size_t> cmp_pos;
};
using NodeP = std::unique_ptr<Node>;

NodeP make(NodeKind k, std::size_t pos) {
  auto n = std::make_unique<Node>();
  n->kind = k;
  n->pos = pos;
  return n;
}

class Parser {
 public:
  explicit Parser(std::string_view src) : toks_(tokenize(src)) {}

  NodeP parse() {
    if (peek().kind == Tok::end) throw ExprError("empty expression", peek().pos);
    NodeP n = parse_or();
    if (peek().kind != Tok::end) unexpected(peek());
    return n;
  }

 private:
  static constexpr int kMaxDepth = 256;
  std::vector<Token> toks_;
  std::size_t at_ = 0;
  int depth_ = 0;

  const Token& peek() const { return toks_[at_]; }
  const Token& next() { return toks_[at_++]; }
  bool is_op(const char* a, const char* b = nullptr) const {
    const Token& t = peek();
    return t.kind == Tok::op && (t.text == a || (b && t.text == b));
  }

  [[noreturn]] static void unexpected(const Token& t) {
    if (t.kind == Tok::end) throw ExprError("unexpected end of expression", t.pos);
    throw ExprError("unexpected '" + t.text + "'", t.pos);
  }

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& p_) : p(p_) {
      if (++p.depth_ > kMaxDepth) throw ExprError("expression nested too deeply", p.peek().pos);
    }
    ~DepthGuard() { --p.depth_; }
  };

  NodeP parse_or() {
    NodeP lhs = parse_and();
    while (is_op("or", "||")) {
      auto n = make(NodeKind::lor, next().pos);
      n->kids.push_back(std::move(lhs));
      n->kids.push_back(parse_and());
      lhs = std::move(n);
    }
    return lhs;
  }

  NodeP parse_and() {
    NodeP lhs = parse_not();
    while (is_op("and", "&&")) {
      auto n = make(NodeKind::land, next().pos);
      n->kids.push_back(std::move(lhs));
      n->kids.push_back(parse_not());
      lhs = std::move(n);
    }
    return lhs;
  }

  NodeP parse_not() {
    if (is_op("not", "!")) {
      DepthGuard g(*this);
      auto n = make(NodeKind::lnot, next().pos);
      n->kids.push_back(parse_not());
      return n;
    }
    return parse_compare();
  }

  // Python chaining: a < b <= c means (a < b) and (b <= c), b evaluated once.
  NodeP parse_compare() {
    NodeP first = parse_arith();
    if (!is_compare()) return first;
    auto n = make(NodeKind::compare, peek().pos);
    n->kids.push_back(std::move(first));
    while (is_compare()) {
      const Token& t = next();
      n->cmp_ops.push_back(t.text);
      n->cmp_pos.push_back(t.pos);
      n->kids.push_back(parse_arith());
    }
    return n;
  }
  bool is_compare() const {
    const Token& t = peek();
    return t.kind == Tok::op &&
           (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">=");
  }

  NodeP parse_arith() {
    NodeP lhs = parse_term();
    while (is_op("+", "-")) {
      const Token& t = next();
      auto n = make(NodeKind::binary, t.pos);
      n->op = t.text;
      n->kids.push_back(std::move(lhs));
      n->kids.push_back(parse_term());
      lhs = std::move(n);
    }
    return lhs;
  }

  NodeP parse_term() {
    NodeP lhs = parse_unary();
    while (is_op("*", "/") || is_op("//", "%")) {
      const Token& t = next();
      auto n = make(NodeKind::binary, t.pos);
      n->op = t.text;
      n->kids.push_back(std::move(lhs));
      n->kids.push_back(parse_unary());
      lhs = std::move(n);
    }
    return lhs;
  }

  // Unary minus binds looser than '**': -2 ** 2 == -4, 2 ** -1 == 0.5.
  NodeP parse_unary() {
    if (is_op("-", "+")) {
      DepthGuard g(*this);
      const Token& t = next();
      auto n = make(t.text == "-" ? NodeKind::neg : NodeKind::pos, t.pos);
      n->kids.push_back(parse_unary());
      return n;
    }
    return parse_power();
  }

  NodeP parse_power() {
    NodeP base = parse_atom();
    if (is_op("**")) {
      DepthGuard g(*this);
      const Token& t = next();
      auto n = make(NodeKind::binary, t.pos);
      n->op = "**";
      n->kids.push_back(std::move(base));
      n->kids.push_back(parse_unary());  // right-associative: 2 ** 3 ** 2 == 2 ** 9
      return n;
    }
    return base;
  }

  NodeP parse_atom() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::number: {
        next();
        auto n = make(NodeKind::number, t.pos);
        n->is_int = t.is_int;
        n->ival = t.ival;
        n->dval = t.dval;
        return n;
      }
      case Tok::ident: {
        next();
        if (t.text == "True" || t.text == "False") {
          auto n = make(NodeKind::number, t.pos);
          n->is_int = true;
          n->ival = t.text == "True" ? 1 : 0;
          n->dval = static_cast<double>(n->ival);
          return n;
        }
        auto n = make(NodeKind::name, t.pos);
        n->op = t.text;
        return n;
      }
      case Tok::lparen: {
        DepthGuard g(*this);
        std::size_t open = next().pos;
        NodeP inner = parse_or();
        if (peek().kind == Tok::end)
          throw ExprError("missing ')' (opened at " + std::to_string(open) + ")", peek().pos);
        if (peek().kind != Tok::rparen) unexpected(peek());
        next();
        return inner;
      }
      default: unexpected(t);
    }
  }
};

// ------------------------------------------------------------------------------------------ evaluator

struct Value {
  bool is_int = true;
  int64_t i = 0;
  double d = 0.0;
  static Value of_int(int64_t v) { return {true, v, static_cast<double>(v)}; }
  static Value of_real(double v) { return {false, 0, v}; }
  static Value of_bool(bool b) { return of_int(b ? 1 : 0); }
  double real() const { return is_int ? static_cast<double>(i) : d; }
  bool truthy() const { return is_int ? i != 0 : d != 0.0; }
};

std::string format_real(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

Value int_pow(int64_t base, int64_t exp) {
  // exp >= 0. Exact by squaring; on overflow fall back to a real.
  int64_t result = 1, b = base;
  int64_t e = exp;
  bool overflow = false;
  while (e > 0 && !overflow) {
    if (e & 1) overflow |= __builtin_mul_overflow(result, b, &result);
    e >>= 1;
    if (e > 0) overflow |= __builtin_mul_overflow(b, b, &b);
  }
  if (overflow) return Value::of_real(std::pow(static_cast<double>(base), static_cast<double>(exp)));
  return Value::of_int(result);
}

Value binary(const std::string& op, const Value& a, const Value& b, std::size_t pos) {
  if (a.is_int && b.is_int) {
    int64_t x = a.i, y = b.i, r = 0;
    if (op == "+") {
      if (!__builtin_add_overflow(x, y, &r)) return Value::of_int(r);
      return Value::of_real(static_cast<double>(x) + static_cast<double>(y));
    }
    if (op == "-") {
      if (!__builtin_sub_overflow(x, y, &r)) return Value::of_int(r);
      return Value::of_real(static_cast<double>(x) - static_cast<double>(y));
    }
    if (op == "*") {
      if (!__builtin_mul_overflow(x, y, &r)) return Value::of_int(r);
      return Value::of_real(static_cast<double>(x) * static_cast<double>(y));
    }
    if (op == "//" || op == "%") {
      if (y == 0) throw ExprError(op == "//" ? "division by zero" : "modulo by zero", pos);
      if (x == std::numeric_limits<int64_t>::min() && y == -1)
        return op == "%" ? Value::of_int(0) : Value::of_real(-static_cast<double>(x));
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        q -= 1;
        m += y;
      }
      return Value::of_int(op == "//" ? q : m);
    }
    if (op == "**") {
      if (y >= 0) return int_pow(x, y);
      if (x == 0) throw ExprError("division by zero (0 to a negative power)", pos);
      return Value::of_real(std::pow(static_cast<double>(x), static_cast<double>(y)));
    }
    // "/" falls through to real division.
  }
  double x = a.real(), y = b.real();
  if (op == "+") return Value::of_real(x + y);
  if (op == "-") return Value::of_real(x - y);
  if (op == "*") return Value::of_real(x * y);
  if (op == "/") {
    if (y == 0.0) throw ExprError("division by zero", pos);
    return Value::of_real(x / y);
  }
  if (op == "//") {
    if (y == 0.0) throw ExprError("division by zero", pos);
    return Value::of_real(std::floor(x / y));
  }
  if (op == "%") {
    if (y == 0.0) throw ExprError("modulo by zero", pos);
    double m = std::fmod(x, y);
    if (m != 0.0 && ((m < 0) != (y < 0))) m += y;
    return Value::of_real(m);
  }
  if (op == "**") {
    if (x == 0.0 && y < 0) throw ExprError("division by zero (0 to a negative power)", pos);
    if (x < 0 && std::floor(y) != y) throw ExprError("negative number to a fractional power", pos);
    return Value::of_real(std::pow(x, y));
  }
  throw ExprError("unknown operator '" + op + "'", pos);  // not reachable from the parser
}

bool compare(const std::string& op, const Value& a, const Value& b) {
  int c;
  if (a.is_int && b.is_int) {
    c = a.i < b.i ? -1 : (a.i > b.i ? 1 : 0);
  } else {
    double x = a.real(), y = b.real();
    if (std::isnan(x) || std::isnan(y)) return op == "!=";
    c = x < y ? -1 : (x > y ? 1 : 0);
  }
  if (op == "==") return c == 0;
  if (op == "!=") return c != 0;
  if (op == "<") return c < 0;
  if (op == "<=") return c <= 0;
  if (op == ">") return c > 0;
  return c >= 0;  // ">="
}

Value eval(const Node& n, const AxisValues& vars) {
  switch (n.kind) {
    case NodeKind::number: return n.is_int ? Value::of_int(n.ival) : Value::of_real(n.dval);
    case NodeKind::name: {
      auto it = vars.find(n.op);
      if (it == vars.end()) throw ExprError("unknown axis '" + n.op + "'", n.pos);
      return Value::of_int(it->second);
    }
    case NodeKind::neg: {
      Value v = eval(*n.kids[0], vars);
      if (v.is_int) {
        if (v.i == std::numeric_limits<int64_t>::min()) return Value::of_real(-static_cast<double>(v.i));
        return Value::of_int(-v.i);
      }
      return Value::of_real(-v.d);
    }
    case NodeKind::pos: return eval(*n.kids[0], vars);
    case NodeKind::lnot: return Value::of_bool(!eval(*n.kids[0], vars).truthy());
    case NodeKind::land:
      if (!eval(*n.kids[0], vars).truthy()) return Value::of_bool(false);
      return Value::of_bool(eval(*n.kids[1], vars).truthy());
    case NodeKind::lor:
      if (eval(*n.kids[0], vars).truthy()) return Value::of_bool(true);
      return Value::of_bool(eval(*n.kids[1], vars).truthy());
    case NodeKind::binary: {
      Value a = eval(*n.kids[0], vars);
      Value b = eval(*n.kids[1], vars);
      return binary(n.op, a, b, n.pos);
    }
    case NodeKind::compare: {
      Value lhs = eval(*n.kids[0], vars);
      for (std::size_t k = 0; k < n.cmp_ops.size(); ++k) {
        Value rhs = eval(*n.kids[k + 1], vars);
        if (!compare(n.cmp_ops[k], lhs, rhs)) return Value::of_bool(false);
        lhs = rhs;
      }
      return Value::of_bool(true);
    }
  }
  return Value::of_int(0);
}

void collect_names(const Node& n, std::vector<std::string>& out) {
  if (n.kind == NodeKind::name) {
    for (const auto& s : out)
      if (s == n.op) return;
    out.push_back(n.op);
    return;
  }
  for (const auto& k : n.kids) collect_names(*k, out);
}

std::string to_cpp(const Node& n, const std::function<std::string(const std::string&)>& name) {
  switch (n.kind) {
    case NodeKind::number:
      if (!n.is_int) break;
      return "int64_t(" + std::to_string(n.ival) + ")";
    case NodeKind::name: return name(n.op);
    case NodeKind::neg: return "(-" + to_cpp(*n.kids[0], name) + ")";
    case NodeKind::pos: return to_cpp(*n.kids[0], name);
    case NodeKind::binary: {
      const std::string a = to_cpp(*n.kids[0], name), b = to_cpp(*n.kids[1], name);
      if (n.op == "+" || n.op == "-" || n.op == "*") return "(" + a + " " + n.op + " " + b + ")";
      // floor division: C++ truncates, so step down when the signs differ and it is inexact
      if (n.op == "//")
        return "((" + a + ") / (" + b + ") - (((" + a + ") % (" + b + ") != 0) && (((" + a + ") < 0) != ((" + b +
               ") < 0))))";
      if (n.op == "%") return "((((" + a + ") % (" + b + ")) + (" + b + ")) % (" + b + "))";
      break;
    }
    default: break;
  }
  throw ExprError("not integer axis arithmetic (+ - * // %)", n.pos);
}

Value evaluate(std::string_view expr, const AxisValues& vars) {
  NodeP tree = Parser(expr).parse();
  return eval(*tree, vars);
}

}  // namespace

double eval_expr(std::string_view expr, const AxisValues& vars) { return evaluate(expr, vars).real(); }

int64_t eval_int_expr(std::string_view expr, const AxisValues& vars) {
  Value v = evaluate(expr, vars);
  if (v.is_int) return v.i;
  // A real result is accepted when it is integral and fits (e.g. "M / 2" with an even M).
  constexpr double lo = -9223372036854775808.0;  // -2^63, exact
  if (std::isfinite(v.d) && std::floor(v.d) == v.d && v.d >= lo && v.d < -lo) return static_cast<int64_t>(v.d);
  throw ExprError("expected an integer result, got " + format_real(v.d), 0);
}

bool eval_condition(std::string_view expr, const AxisValues& vars) { return evaluate(expr, vars).truthy(); }

std::vector<std::string> expr_identifiers(std::string_view expr) {
  NodeP tree = Parser(expr).parse();
  std::vector<std::string> names;
  collect_names(*tree, names);
  return names;
}

std::string expr_to_cpp(std::string_view expr, const std::function<std::string(const std::string&)>& name) {
  NodeP tree = Parser(expr).parse();
  return to_cpp(*tree, name);
}

}  // namespace khive
