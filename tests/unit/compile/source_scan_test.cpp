// compile/source_scan: the same answers as the regular expressions it replaced, on ordinary and odd inputs, and no
// crash on the hostile ones that overflowed std::regex's recursion (issue 25).
#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>

#include "khive/compile/source_scan.hpp"

namespace khive {
namespace {

std::optional<std::string> include_by_regex(const std::string& line) {
  static const std::regex re(R"re(^\s*#\s*include\s*"([^"]+)"\s*(//.*)?$)re");
  std::smatch m;
  if (std::regex_match(line, m, re)) return m[1].str();
  return std::nullopt;
}
bool pragma_by_regex(const std::string& line) {
  return std::regex_match(line, std::regex(R"(^\s*#\s*pragma\s+once\s*$)"));
}
std::optional<std::string> params_by_regex(const std::string& src, const std::string& fn) {
  std::smatch m;
  if (std::regex_search(src, m, std::regex("\\b" + fn + "\\s*\\(([^)]*)\\)\\s*\\{"))) return m[1].str();
  return std::nullopt;
}

TEST(SourceScan, LocalIncludes) {
  EXPECT_EQ(local_include("#include \"a.h\""), "a.h");
  EXPECT_EQ(local_include("  #  include\t\"dir/b.cuh\"  // why"), "dir/b.cuh");
  EXPECT_EQ(local_include("#include\"c.h\""), "c.h");
  EXPECT_FALSE(local_include("#include <vector>"));
  EXPECT_FALSE(local_include("#include \"\""));
  EXPECT_FALSE(local_include("#include \"a.h\" x"));
  EXPECT_FALSE(local_include("// #include \"a.h\""));
  EXPECT_FALSE(local_include("#include \"unterminated"));
}

TEST(SourceScan, PragmaOnce) {
  EXPECT_TRUE(is_pragma_once("#pragma once"));
  EXPECT_TRUE(is_pragma_once("  # pragma\tonce  "));
  EXPECT_FALSE(is_pragma_once("#pragmaonce"));
  EXPECT_FALSE(is_pragma_once("#pragma once // x"));
  EXPECT_FALSE(is_pragma_once("#pragma unroll"));
}

TEST(SourceScan, FunctionParams) {
  EXPECT_EQ(function_params("extern \"C\" void khive_launch(const float* a, float* c, int64_t N) {}", "khive_launch"),
            "const float* a, float* c, int64_t N");
  EXPECT_EQ(function_params("void f (int a)\n{", "f"), "int a");
  EXPECT_FALSE(function_params("void f(int a);", "f"));     // a declaration
  EXPECT_FALSE(function_params("void gf(int a) {}", "f"));  // another name ending in f
  EXPECT_EQ(function_params("void f(int); void f(int b) {}", "f"), "int b");
  EXPECT_FALSE(function_params("void f(int (*p)(int)) {}", "f"));  // [^)]* stops at the first ')': as before
}

// Random short texts over the characters that matter: the scans answer as the regular expressions did.
TEST(SourceScan, AgreeWithTheRegularExpressionsOnRandomText) {
  std::mt19937 rng(7);
  const std::string alphabet = " \t#\"/<>(){};fgxincludeprgmaoq_1";
  for (int t = 0; t < 20000; ++t) {
    std::string s;
    const int n = static_cast<int>(rng() % 24);
    for (int i = 0; i < n; ++i) s += alphabet[rng() % alphabet.size()];
    if (t % 3 == 0) s = "#include \"" + s;
    if (t % 5 == 0) s = "f(" + s;
    ASSERT_EQ(local_include(s), include_by_regex(s)) << "[" << s << "]";
    ASSERT_EQ(is_pragma_once(s), pragma_by_regex(s)) << "[" << s << "]";
    ASSERT_EQ(function_params(s, "f"), params_by_regex(s, "f")) << "[" << s << "]";
  }
}

// What killed khive: one line of 100 kB (and 1 MB) after `#include "`, a parameter list that never closes, many
// openings before one distant ')'. Each answers, and quickly (the scans are linear).
TEST(SourceScan, HostileLongInputs) {
  const std::string big(1 << 20, 'a');
  EXPECT_FALSE(local_include("#include \"" + big));
  EXPECT_EQ(local_include("#include \"" + big + "\""), big);
  EXPECT_FALSE(is_pragma_once("#pragma" + std::string(1 << 20, ' ') + "once x"));
  EXPECT_FALSE(function_params("void khive_launch(" + big, "khive_launch"));
  std::string many;
  for (int i = 0; i < 100000; ++i) many += "f(";
  EXPECT_FALSE(function_params(many + ")", "f"));
  EXPECT_EQ(function_params(many + ") {", "f"), many.substr(2));
}

TEST(SourceScan, FunctionReturnType) {
  EXPECT_EQ(function_return_type("#include <v>\nextern \"C\" const float *f(int a) {", "f"), "const float*");
  EXPECT_EQ(function_return_type("int g();\nstatic std::vector< float > f() {", "f"), "std::vector<float>");
  EXPECT_EQ(function_return_type("} // done\n// returns the sum\ninline std::tuple<float*, int *>\nf(int) {", "f"),
            "std::tuple<float*,int*>");
  EXPECT_EQ(function_return_type("void f(int a) {}", "f"), "void");
  EXPECT_EQ(function_return_type("f(int a) {}", "f"), "");
  EXPECT_EQ(function_return_type("float* f(int a);", "f"), std::nullopt);  // a declaration: no body
}

}  // namespace
}  // namespace khive
