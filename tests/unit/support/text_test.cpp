// The shared text helpers (text.hpp): the edge cases their callers rely on.
#include "khive/support/text.hpp"

#include <gtest/gtest.h>

using namespace khive;

TEST(Text, TrimAndCase) {
  EXPECT_EQ(trim("  x y \t\r\n"), "x y");
  EXPECT_EQ(trim(" \t "), "");
  EXPECT_EQ(trim_view("  ab "), "ab");
  EXPECT_EQ(lower("H200 SXM"), "h200 sxm");
  EXPECT_TRUE(starts_with("gemm_bf16", "gemm"));
  EXPECT_FALSE(starts_with("ge", "gemm"));
  EXPECT_TRUE(ends_with("a.json", ".json"));
  EXPECT_FALSE(ends_with("json", "a.json"));
}

TEST(Text, SplitAndJoin) {
  EXPECT_EQ(split_ws("  a \t b\nc "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(split_lines("a\n\nb\n"), (std::vector<std::string>{"a", "", "b"}));  // no empty line after the last '\n'
  EXPECT_EQ(split_lines("a\nb"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(split_lines("").empty());
  EXPECT_EQ(join({"a", "b", "c"}), "a, b, c");
  EXPECT_EQ(join({"a", "b"}, " -> "), "a -> b");
  EXPECT_EQ(join({}), "");
  EXPECT_EQ(first_line("one\ntwo"), "one");
  EXPECT_EQ(tail("abcdef", 3), "...def");
  EXPECT_EQ(tail("abc", 3), "abc");
  EXPECT_EQ(quote("M"), "\"M\"");
}

TEST(Text, Identifiers) {
  EXPECT_TRUE(is_identifier("_x1"));
  EXPECT_FALSE(is_identifier("1x"));
  EXPECT_FALSE(is_identifier(""));
  EXPECT_FALSE(is_identifier("a-b"));
  EXPECT_TRUE(is_ident_char('_'));
  EXPECT_FALSE(is_ident_char('-'));
}

TEST(Text, Numbers) {
  EXPECT_EQ(real_text(0.1), "0.1");
  EXPECT_EQ(real_text(1e-4), "0.0001");
  EXPECT_EQ(real_text(4096), "4096");
  EXPECT_EQ(bytes_text(512), "512 bytes");
  EXPECT_EQ(bytes_text(1536), "1.5 KiB");
  EXPECT_EQ(bytes_text(int64_t(256) << 30), "256 GiB");
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1200000000ull), "1.2 GB");
  EXPECT_EQ(time_text(1.5), "1.500 s");
  EXPECT_EQ(time_text(0.0012), "1.200 ms");
  EXPECT_EQ(time_text(12.5e-6), "12.50 us");
  EXPECT_EQ(utc_now().size(), 20u);  // 2026-11-03T12:00:00Z
  EXPECT_EQ(utc_now("%Y").size(), 4u);
}
