#include <gtest/gtest.h>

#include "khive/llm/patch.hpp"

namespace khive::llm {
namespace {

const std::string kSrc =
    "#include <cstdint>\n"
    "extern \"C\" void khive_launch(const float* a, float* c, int64_t N) {\n"
    "  for (int64_t i = 0; i < N; ++i)\n"
    "    c[i] = a[i] * 2.0f\n"
    "}\n";

TEST(Patch, ParsesAndAppliesExactly) {
  auto pe = parse_edits(
      "NOTE: fix\n<<<<<<< SEARCH\n    c[i] = a[i] * 2.0f\n=======\n    c[i] = a[i] * 2.0f;\n>>>>>>> REPLACE\n");
  ASSERT_TRUE(pe.error.empty()) << pe.error;
  ASSERT_EQ(pe.edits.size(), 1u);
  auto r = apply_edits(kSrc, pe.edits);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_NE(r.source.find("a[i] * 2.0f;\n}"), std::string::npos);
  EXPECT_EQ(r.fuzzy, 0);
  EXPECT_NEAR(r.changed_fraction, 1.0 / 5, 1e-9);
}

TEST(Patch, WhitespaceTolerantFallback) {
  // Re-indented SEARCH with collapsed inner blanks still applies, through the fallback.
  std::vector<Edit> e = {{"for (int64_t i = 0;   i < N; ++i)\n  c[i] = a[i] * 2.0f\n",
                          "#pragma omp simd\n  for (int64_t i = 0; i < N; ++i)\n    c[i] = a[i] * 2.0f;\n"}};
  auto r = apply_edits(kSrc, e);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.fuzzy, 1);
  EXPECT_NE(r.source.find("#pragma omp simd\n  for"), std::string::npos);
  EXPECT_NE(r.source.find("2.0f;\n}\n"), std::string::npos);
}

TEST(Patch, EditThatDoesNotApplySaysWhere) {
  std::vector<Edit> e = {{"  for (int64_t i = 0; i < N; ++i)\n    c[i] = b[i] * 2.0f\n", "x"}};
  auto r = apply_edits(kSrc, e);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("edit 1 of 1 does not apply"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("line 3"), std::string::npos) << r.error;              // first line matched at line 3
  EXPECT_NE(r.error.find("c[i] = a[i] * 2.0f"), std::string::npos) << r.error;  // what the source has

  auto r2 = apply_edits(kSrc, {{"nothing like this\n", "x"}});
  EXPECT_FALSE(r2.ok);
  EXPECT_NE(r2.error.find("does not occur"), std::string::npos) << r2.error;
}

TEST(Patch, AmbiguousAndEmptySearchAreRefused) {
  std::string src = "a = 1;\nb = 2;\na = 1;\n";
  auto r = apply_edits(src, {{"a = 1;\n", "a = 3;\n"}});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("occurs 2 times"), std::string::npos) << r.error;
  auto r2 = apply_edits(src, {{"\n", "x"}});
  EXPECT_FALSE(r2.ok);
  EXPECT_NE(r2.error.find("empty"), std::string::npos) << r2.error;
}

TEST(Patch, EditsApplyInSequenceAndCountRewrites) {
  std::vector<Edit> e = {{"b = 2;\n", "b = 20;\n"}, {"b = 20;\nc = 3;\n", "b = 21;\nc = 30;\n"}};
  auto r = apply_edits("a = 1;\nb = 2;\nc = 3;\nd = 4;\n", e);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.source, "a = 1;\nb = 21;\nc = 30;\nd = 4;\n");
  EXPECT_NEAR(r.changed_fraction, 3.0 / 4, 1e-9);
}

TEST(Patch, MalformedBlocks) {
  EXPECT_NE(parse_edits("<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n").error.find("without a ======="), std::string::npos);
  EXPECT_NE(parse_edits("<<<<<<< SEARCH\nx\n=======\ny\n").error.find("not closed"), std::string::npos);
  EXPECT_NE(parse_edits("just prose").error.find("no edit block"), std::string::npos);
}

TEST(Patch, CodeBlockExtraction) {
  auto c = extract_code_block("NOTE: v1\n```cuda\nint a;\n```\ntext\n```\nint longer_block;\n```\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, "int longer_block;\n");
  std::string why;
  EXPECT_FALSE(extract_code_block("```cpp\nint a;\n", &why));
  EXPECT_NE(why.find("cut off"), std::string::npos);
  EXPECT_FALSE(extract_code_block("no code", &why));
  EXPECT_NE(why.find("no fenced code block"), std::string::npos);
}

TEST(Patch, ReplyFields) {
  std::string r = "**CLASS:** Elementwise\nOPTIMIZATION: float4 loads\nNOTE:   wider loads  \n";
  EXPECT_EQ(reply_field(r, "CLASS"), "Elementwise");
  EXPECT_EQ(reply_field(r, "OPTIMIZATION"), "float4 loads");
  EXPECT_EQ(reply_field(r, "NOTE"), "wider loads");
  EXPECT_EQ(reply_field(r, "MISSING"), "");
}

}  // namespace
}  // namespace khive::llm
