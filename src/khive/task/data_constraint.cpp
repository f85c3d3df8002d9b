// The safe subset of Python that data constraints may use (data_constraint.hpp).
#include "khive/task/data_constraint.hpp"

#include <cctype>
#include <vector>

#include "khive/support/text.hpp"

namespace khive {
namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }

struct Token {
  enum Kind { name, number, op, open, close } kind;
  std::string text;
  std::size_t pos;
};

std::vector<Token> tokenize(std::string_view s) {
  static const char* ops[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "<", ">", ",", "."};
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (ident_start(c)) {
      std::size_t j = i;
      while (j < s.size() && is_ident_char(s[j])) ++j;
      out.push_back({Token::name, std::string(s.substr(i, j - i)), i});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t j = i;
      while (j < s.size() && (is_ident_char(s[j]) || s[j] == '.' ||
                              ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E'))))
        ++j;
      out.push_back({Token::number, std::string(s.substr(i, j - i)), i});
      i = j;
    } else if (c == '(' || c == '[') {
      out.push_back({Token::open, std::string(1, c), i++});
    } else if (c == ')' || c == ']') {
      out.push_back({Token::close, std::string(1, c), i++});
    } else {
      bool matched = false;
      for (const char* op : ops) {
        std::string_view o(op);
        if (s.substr(i, o.size()) == o) {
          out.push_back({Token::op, std::string(o), i});
          i += o.size();
          matched = true;
          break;
        }
      }
      if (!matched) throw ExprError(std::string("unexpected '") + c + "'", i);
    }
  }
  return out;
}

void check_number(const Token& t) {
  for (char c : t.text)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-')
      throw ExprError("malformed number '" + t.text + "'", t.pos);
}

// After '.', only a known method or attribute; methods must be called with no arguments.
void check_attribute(const std::vector<Token>& toks, std::size_t i) {
  if (i + 1 >= toks.size() || toks[i + 1].kind != Token::name)
    throw ExprError("expected a name after '.'", toks[i].pos);
  const Token& attr = toks[i + 1];
  if (attr.text == "shape") return;
  if (attr.text == "item" || attr.text == "numel") {
    bool call = i + 3 < toks.size() && toks[i + 2].text == "(" && toks[i + 3].text == ")";
    if (!call) throw ExprError("expected ." + attr.text + "()", attr.pos);
    return;
  }
  throw ExprError("attribute '" + attr.text + "' is not allowed (only .item(), .shape, .numel())", attr.pos);
}

}  // namespace

void check_data_constraint(std::string_view text, const std::set<std::string>& axes,
                           const std::set<std::string>& inputs) {
  static const std::set<std::string> functions = {"len", "min", "max", "abs", "int"};
  static const std::set<std::string> words = {"and", "or", "not", "True", "False"};
  std::vector<Token> toks = tokenize(text);
  if (toks.empty()) throw ExprError("empty constraint", 0);
  std::vector<const Token*> stack;
  for (std::size_t i = 0; i < toks.size(); ++i) {
    const Token& t = toks[i];
    switch (t.kind) {
      case Token::number: check_number(t); break;
      case Token::open: stack.push_back(&t); break;
      case Token::close: {
        char want = t.text == ")" ? '(' : '[';
        if (stack.empty() || stack.back()->text[0] != want) throw ExprError("unbalanced '" + t.text + "'", t.pos);
        stack.pop_back();
        break;
      }
      case Token::op:
        if (t.text == ".") {
          check_attribute(toks, i);
          ++i;  // the attribute name is checked
        }
        break;
      case Token::name: {
        bool call = i + 1 < toks.size() && toks[i + 1].text == "(";
        if (functions.count(t.text)) {
          if (!call) throw ExprError("'" + t.text + "' must be called", t.pos);
        } else if (words.count(t.text) || axes.count(t.text) || inputs.count(t.text)) {
          if (call) throw ExprError("'" + t.text + "' is not a function", t.pos);
        } else {
          throw ExprError("unknown name '" + t.text + "'", t.pos);
        }
        break;
      }
    }
  }
  if (!stack.empty()) throw ExprError("unclosed '" + stack.back()->text + "'", stack.back()->pos);
}

bool is_data_constraint(std::string_view text, const std::set<std::string>& inputs) {
  if (text.find('[') != std::string_view::npos || text.find('.') != std::string_view::npos) {
    // a decimal point in a number is not an attribute access
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == '[' || (text[i] == '.' && i + 1 < text.size() && ident_start(text[i + 1]))) return true;
  }
  try {
    for (const auto& t : tokenize(text))
      if (t.kind == Token::name && inputs.count(t.text)) return true;
  } catch (const ExprError&) {
    return false;
  }
  return false;
}

}  // namespace khive
