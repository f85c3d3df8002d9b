// compare.hpp on the host: classification, the pass rule, and the diagnosis text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "khive/numerics/compare.hpp"
#include "test_key.hpp"

using namespace khive;
using ::testing::HasSubstr;

namespace {

std::vector<float> random_f32(int64_t n, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  fill_input_host(DType::f32, v.data(), n, dist_params(Distribution{}), test_key(seed), 0);
  return v;
}

Tolerance tol(double atol, double rtol, double matched = 1.0) {
  Tolerance t;
  t.atol = atol;
  t.rtol = rtol;
  t.matched_ratio = matched;
  return t;
}

CompareStats cmp(const std::vector<float>& out, const std::vector<float>& ref, int64_t cols, const Tolerance& t) {
  return compare_host(DType::f32, out.data(), ref.data(), static_cast<int64_t>(out.size()), cols, t, Poison::a);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

struct Threads {
  int saved = omp_get_max_threads();
  explicit Threads(int n) { omp_set_num_threads(n); }
  ~Threads() { omp_set_num_threads(saved); }
};

}  // namespace

TEST(Compare, IdenticalPasses) {
  const auto ref = random_f32(64 * 128, 1);
  const CompareStats s = cmp(ref, ref, 128, tol(1e-4, 1e-4));
  EXPECT_EQ(s.n, 64 * 128);
  EXPECT_EQ(s.rows, 64);
  EXPECT_EQ(s.cols, 128);
  EXPECT_EQ(s.bad, 0);
  EXPECT_EQ(s.unwritten, 0);
  EXPECT_EQ(s.nonfinite, 0);
  EXPECT_EQ(s.first_bad, -1);
  EXPECT_EQ(s.max_abs_err, 0.0);
  EXPECT_EQ(s.worst_index, 0);
  EXPECT_EQ(s.matched_ratio(), 1.0);
  EXPECT_TRUE(passes(s, tol(1e-4, 1e-4)));
  // A passing comparison keeps no histograms (a 1-D output's would be n + 1 counters): only a failing one fills them.
  EXPECT_TRUE(s.bad_per_row.empty());
  EXPECT_TRUE(s.bad_per_col.empty());
  EXPECT_EQ(describe_pattern(s), "no element is wrong");
}

TEST(Compare, OneElementOff) {
  const auto ref = random_f32(64 * 128, 2);
  auto out = ref;
  const int64_t i = 3 * 128 + 7;
  out[static_cast<size_t>(i)] += 1.0f;
  const CompareStats s = cmp(out, ref, 128, tol(1e-4, 1e-4));
  EXPECT_EQ(s.bad, 1);
  EXPECT_EQ(s.first_bad, i);
  EXPECT_EQ(s.worst_index, i);
  EXPECT_EQ(s.first_bad_out, static_cast<double>(out[static_cast<size_t>(i)]));
  EXPECT_EQ(s.first_bad_ref, static_cast<double>(ref[static_cast<size_t>(i)]));
  EXPECT_EQ(s.worst_out, s.first_bad_out);
  EXPECT_EQ(s.worst_ref, s.first_bad_ref);
  EXPECT_NEAR(s.max_abs_err, 1.0, 1e-6);
  EXPECT_EQ(s.bad_per_row[3], 1);
  EXPECT_EQ(s.bad_per_col[7], 1);
  EXPECT_FALSE(passes(s, tol(1e-4, 1e-4)));
  EXPECT_EQ(describe_pattern(s), "only 1 element is wrong, at row 3, column 7");
}

TEST(Compare, LastColumnsWrong) {
  const int64_t rows = 64, cols = 4096;
  const auto ref = random_f32(rows * cols, 3);
  auto out = ref;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = cols - 17; c < cols; ++c) out[static_cast<size_t>(r * cols + c)] = 0.0f;
  const CompareStats s = cmp(out, ref, cols, tol(1e-4, 1e-4));
  EXPECT_EQ(s.bad, rows * 17);
  EXPECT_EQ(s.bad_per_col[cols - 1], rows);
  EXPECT_EQ(s.bad_per_col[cols - 18], 0);
  EXPECT_THAT(describe_pattern(s), HasSubstr("only the last 17 of 4096 columns are wrong"));
  EXPECT_THAT(describe_pattern(s), HasSubstr("(rows: all)"));
}

TEST(Compare, FirstRowsWrong) {
  const int64_t rows = 64, cols = 256;
  const auto ref = random_f32(rows * cols, 4);
  auto out = ref;
  for (int64_t i = 0; i < 3 * cols; ++i) out[static_cast<size_t>(i)] += 1.0f;
  EXPECT_THAT(describe_pattern(cmp(out, ref, cols, tol(1e-4, 1e-4))),
              HasSubstr("only the first 3 of 64 rows are wrong"));
}

TEST(Compare, LastRowsOfSomeColumns) {
  // A tail tile: the last 5 rows, the last 17 columns.
  const int64_t rows = 64, cols = 256;
  const auto ref = random_f32(rows * cols, 5);
  auto out = ref;
  for (int64_t r = rows - 5; r < rows; ++r)
    for (int64_t c = cols - 17; c < cols; ++c) out[static_cast<size_t>(r * cols + c)] += 2.0f;
  EXPECT_EQ(describe_pattern(cmp(out, ref, cols, tol(1e-4, 1e-4))),
            "only the last 17 of 256 columns are wrong (rows: the last 5 of 64)");
}

TEST(Compare, EveryOtherColumnWrong) {
  const int64_t rows = 16, cols = 64;
  const auto ref = random_f32(rows * cols, 6);
  auto out = ref;
  for (int64_t i = 0; i < rows * cols; ++i)
    if ((i % cols) % 2 == 1) out[static_cast<size_t>(i)] += 1.0f;
  EXPECT_THAT(describe_pattern(cmp(out, ref, cols, tol(1e-4, 1e-4))), HasSubstr("every other column is wrong"));
}

TEST(Compare, EveryOtherRowWrong) {
  const int64_t rows = 16, cols = 64;
  const auto ref = random_f32(rows * cols, 6);
  auto out = ref;
  for (int64_t i = 0; i < rows * cols; ++i)
    if ((i / cols) % 2 == 0) out[static_cast<size_t>(i)] += 1.0f;
  EXPECT_THAT(describe_pattern(cmp(out, ref, cols, tol(1e-4, 1e-4))), HasSubstr("every other row is wrong"));
}

TEST(Compare, SingleColumnAndSingleRow) {
  const int64_t rows = 32, cols = 32;
  const auto ref = random_f32(rows * cols, 7);
  auto out = ref;
  for (int64_t r = 0; r < rows; ++r) out[static_cast<size_t>(r * cols + 5)] += 1.0f;
  EXPECT_THAT(describe_pattern(cmp(out, ref, cols, tol(1e-4, 1e-4))), HasSubstr("only column 5 is wrong"));
  out = ref;
  for (int64_t c = 0; c < cols; ++c) out[static_cast<size_t>(9 * cols + c)] += 1.0f;
  EXPECT_THAT(describe_pattern(cmp(out, ref, cols, tol(1e-4, 1e-4))), HasSubstr("only row 9 is wrong"));
}

TEST(Compare, ScatteredElements) {
  const int64_t rows = 100, cols = 100;
  const auto ref = random_f32(rows * cols, 8);
  auto out = ref;
  for (int64_t i : {5 * 100 + 3, 77 * 100 + 40, 91 * 100 + 12}) out[static_cast<size_t>(i)] += 1.0f;
  EXPECT_EQ(describe_pattern(cmp(out, ref, cols, tol(1e-4, 1e-4))),
            "3 scattered elements are wrong (first at row 5, column 3)");
}

TEST(Compare, FallbackPattern) {
  // An L shape: the last row and the last column (not a product of a row set and a column set).
  const int64_t rows = 64, cols = 64;
  const auto ref = random_f32(rows * cols, 9);
  auto out = ref;
  for (int64_t i = 0; i < rows * cols; ++i)
    if (i / cols == rows - 1 || i % cols == cols - 1) out[static_cast<size_t>(i)] += 1.0f;
  EXPECT_EQ(describe_pattern(cmp(out, ref, cols, tol(1e-4, 1e-4))),
            "127 of 4096 elements are wrong in 64 of 64 rows and 64 of 64 columns (first at row 0, column 63)");
}

TEST(Compare, OneDimensionalTail) {
  const auto ref = random_f32(1000, 10);
  auto out = ref;
  for (int i = 990; i < 1000; ++i) out[static_cast<size_t>(i)] = 0.0f;
  EXPECT_EQ(describe_pattern(cmp(out, ref, 1000, tol(1e-4, 1e-4))), "only the last 10 of 1000 elements are wrong");
  EXPECT_EQ(describe_pattern(cmp(out, ref, 1, tol(1e-4, 1e-4))), "only the last 10 of 1000 elements are wrong");
}

TEST(Compare, AllWrong) {
  const auto ref = random_f32(4096, 11);
  auto out = ref;
  for (auto& x : out) x += 5.0f;
  const CompareStats s = cmp(out, ref, 64, tol(1e-4, 1e-4));
  EXPECT_EQ(s.bad, 4096);
  EXPECT_EQ(describe_pattern(s), "all 4096 elements are wrong");
}

TEST(Compare, UnwrittenElements) {
  const int64_t rows = 8, cols = 100;
  const auto ref = random_f32(rows * cols, 12);
  std::vector<float> out(ref.size());
  poison_host(DType::f32, out.data(), rows * cols, Poison::a);
  for (int64_t i = 0; i < rows * cols - 5; ++i) out[static_cast<size_t>(i)] = ref[static_cast<size_t>(i)];
  const CompareStats s = cmp(out, ref, cols, tol(1e-4, 1e-4));
  EXPECT_EQ(s.unwritten, 5);
  EXPECT_EQ(s.bad, 5);
  EXPECT_EQ(s.nonfinite, 0) << "sentinels are not counted as computed NaNs";
  EXPECT_EQ(s.first_unwritten, rows * cols - 5);
  EXPECT_EQ(s.first_bad, rows * cols - 5);
  EXPECT_FALSE(passes(s, tol(1e-4, 1e-4, 0.5)));  // unwritten fails whatever the matched ratio
  EXPECT_THAT(describe_pattern(s),
              HasSubstr("5 elements were never written (still hold the sentinel); first at row 7, column 95"));
}

TEST(Compare, NothingWritten) {
  const auto ref = random_f32(1024, 13);
  std::vector<float> out(ref.size());
  poison_host(DType::f32, out.data(), 1024, Poison::a);
  const CompareStats s = cmp(out, ref, 32, tol(1e-4, 1e-4));
  EXPECT_EQ(s.unwritten, 1024);
  EXPECT_THAT(describe_pattern(s), HasSubstr("nothing was written"));
}

TEST(Compare, OtherSentinelIsNotUnwritten) {
  // Poisoned with B but compared as if A was written: NaNs, not "unwritten".
  const auto ref = random_f32(256, 14);
  std::vector<float> out(ref.size());
  poison_host(DType::f32, out.data(), 256, Poison::b);
  const CompareStats s = cmp(out, ref, 16, tol(1e-4, 1e-4));
  EXPECT_EQ(s.unwritten, 0);
  EXPECT_EQ(s.nonfinite, 256);
}

TEST(Compare, NaNOutput) {
  const auto ref = random_f32(1000, 15);
  auto out = ref;
  out[10] = std::numeric_limits<float>::quiet_NaN();
  out[20] = std::numeric_limits<float>::infinity();
  const CompareStats s = cmp(out, ref, 100, tol(1e-2, 1e-2, 0.9));
  EXPECT_EQ(s.nonfinite, 2);
  EXPECT_EQ(s.bad, 2);
  EXPECT_EQ(s.unwritten, 0);
  EXPECT_EQ(s.first_bad, 10);
  EXPECT_EQ(s.max_abs_err, 0.0) << "non-finite pairs are left out of the errors";
  EXPECT_FALSE(passes(s, tol(1e-2, 1e-2, 0.9)));  // NaN fails whatever the matched ratio
}

TEST(Compare, NonFiniteReference) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> ref = {nan, inf, -inf, inf, nan, 1.0f};
  const std::vector<float> out = {nan, inf, -inf, -inf, 2.0f, 1.0f};
  const CompareStats s = cmp(out, ref, 1, tol(1e-4, 1e-4));
  EXPECT_EQ(s.bad, 2);  // -inf for inf, 2 for NaN
  EXPECT_EQ(s.first_bad, 3);
  EXPECT_EQ(s.nonfinite, 0);  // counted only where the reference is finite
}

TEST(Compare, AllZerosOutput) {
  const auto ref = random_f32(512, 16);
  const std::vector<float> out(ref.size(), 0.0f);
  const Tolerance loose = tol(1e9, 0.0);  // every element within tolerance, and still a failure
  const CompareStats s = cmp(out, ref, 64, loose);
  EXPECT_EQ(s.bad, 0);
  EXPECT_EQ(s.out_zeros, 512);
  EXPECT_FALSE(passes(s, loose));
  EXPECT_THAT(describe_pattern(s), HasSubstr("the output is all zeros"));
  // Both all zero: fine.
  EXPECT_TRUE(passes(cmp(out, out, 64, tol(1e-4, 1e-4)), tol(1e-4, 1e-4)));
}

TEST(Compare, ToleranceEdgeIsInclusive) {
  // atol + rtol*|r| = 0.5 + 0.25*2 = 1 exactly; an error of exactly 1 passes, one ulp more fails.
  const std::vector<double> ref = {2.0, 2.0, -2.0};
  const std::vector<double> out = {3.0, std::nextafter(3.0, 4.0), -1.0};
  const Tolerance t = tol(0.5, 0.25);
  const CompareStats s = compare_host(DType::f64, out.data(), ref.data(), 3, 3, t, Poison::a);
  EXPECT_EQ(s.bad, 1);
  EXPECT_EQ(s.first_bad, 1);
  // float: atol 2^-10, rtol 0: 1 + 2^-10 passes, the next float fails.
  const std::vector<float> r32 = {1.0f, 1.0f};
  const std::vector<float> o32 = {1.0f + std::ldexp(1.0f, -10), std::nextafter(1.0f + std::ldexp(1.0f, -10), 2.0f)};
  const CompareStats s32 = cmp(o32, r32, 2, tol(std::ldexp(1.0, -10), 0.0));
  EXPECT_EQ(s32.bad, 1);
  EXPECT_EQ(s32.first_bad, 1);
}

TEST(Compare, MatchedRatioLetsOnePercentFailButTheCapRejects) {
  const int64_t n = 10000;
  const auto ref = random_f32(n, 17);
  auto out = ref;
  for (int64_t i = 0; i < 100; ++i) out[static_cast<size_t>(i * 97)] += 0.5f;
  Tolerance t = tol(1e-4, 1e-4, 0.99);
  CompareStats s = cmp(out, ref, 100, t);
  EXPECT_EQ(s.bad, 100);
  EXPECT_TRUE(passes(s, t));
  out[1] += 0.5f;  // 101 bad: 98.99%
  s = cmp(out, ref, 100, t);
  EXPECT_FALSE(passes(s, t));
  out = ref;
  for (int64_t i = 0; i < 100; ++i) out[static_cast<size_t>(i * 97)] += 0.5f;
  t.max_error_cap = 0.1;
  s = cmp(out, ref, 100, t);
  EXPECT_EQ(s.over_cap, 100);
  EXPECT_FALSE(passes(s, t));
  t.max_error_cap = 1.0;
  s = cmp(out, ref, 100, t);
  EXPECT_EQ(s.over_cap, 0);
  EXPECT_TRUE(passes(s, t));
}

TEST(Compare, BoolValidity) {
  const std::vector<uint8_t> ref = {0, 1, 1, 0, 1, 0};
  const std::vector<uint8_t> ok = {0, 1, 1, 0, 1, 0};
  const Tolerance t = tol(0, 0);
  EXPECT_TRUE(passes(compare_host(DType::boolean, ok.data(), ref.data(), 6, 6, t, Poison::a), t));
  const std::vector<uint8_t> bad = {0, 2, 1, 1, 0xA5, 255};
  const CompareStats s = compare_host(DType::boolean, bad.data(), ref.data(), 6, 6, t, Poison::a);
  EXPECT_EQ(s.bad, 4);  // 2 and 255 are not bools, 1 for 0 is wrong, 0xA5 is the sentinel
  EXPECT_EQ(s.unwritten, 1);
  EXPECT_EQ(s.first_unwritten, 4);
  EXPECT_EQ(s.nonfinite, 0);
  EXPECT_EQ(s.first_bad, 1);
  // Even a tolerance that would accept any number does not accept a byte that is not 0 or 1.
  const Tolerance wide = tol(10, 0);
  const std::vector<uint8_t> two = {0, 2, 1, 0, 1, 0};
  EXPECT_EQ(compare_host(DType::boolean, two.data(), ref.data(), 6, 6, wide, Poison::a).bad, 1);
}

TEST(Compare, IntegerExactness) {
  const Tolerance t = tol(0, 0);
  // Above 2^53 a double cannot tell these apart; the comparison still does.
  const std::vector<int64_t> ref = {int64_t{1} << 53, -5, std::numeric_limits<int64_t>::max()};
  const std::vector<int64_t> out = {(int64_t{1} << 53) + 1, -5, std::numeric_limits<int64_t>::min()};
  const CompareStats s = compare_host(DType::i64, out.data(), ref.data(), 3, 3, t, Poison::a);
  EXPECT_EQ(s.bad, 2);
  EXPECT_EQ(s.first_bad, 0);
  EXPECT_EQ(s.max_abs_err, 18446744073709551615.0);  // |min - max| computed without overflow
  const std::vector<int32_t> r32 = {7, 8, 9}, o32 = {7, 9, 9};
  const CompareStats s32 = compare_host(DType::i32, o32.data(), r32.data(), 3, 3, t, Poison::a);
  EXPECT_EQ(s32.bad, 1);
  EXPECT_EQ(s32.max_abs_err, 1.0);
  // A tolerance that allows an off-by-one is honoured.
  EXPECT_EQ(compare_host(DType::i32, o32.data(), r32.data(), 3, 3, tol(1, 0), Poison::a).bad, 0);
}

TEST(Compare, IntegerResultEqualToTheSentinelIsNotUnwritten) {
  // 0x5A = 90 is a legitimate i8 result; only where the reference differs is it "unwritten".
  const std::vector<int8_t> ref = {90, 90, 3};
  const std::vector<int8_t> out = {90, 90, 90};
  const CompareStats s = compare_host(DType::i8, out.data(), ref.data(), 3, 3, tol(0, 0), Poison::a);
  EXPECT_EQ(s.unwritten, 1);
  EXPECT_EQ(s.first_unwritten, 2);
  EXPECT_EQ(s.bad, 1);
}

TEST(Compare, EveryTypeDetectsOneChangedElement) {
  const DType types[] = {DType::f64,    DType::f32, DType::f16, DType::bf16, DType::f8e4m3,
                         DType::f8e5m2, DType::i64, DType::i32, DType::i16,  DType::i8};
  for (DType t : types) {
    const int64_t n = 2048;
    std::vector<unsigned char> ref(static_cast<size_t>(n * num::size_of(t)));
    Distribution d;
    if (t == DType::i64 || t == DType::i32 || t == DType::i16 || t == DType::i8) {
      d.kind = Distribution::Kind::integers;
      d.low = -50;
      d.high = 50;
    }
    fill_input_host(t, ref.data(), n, dist_params(d), test_key(3), 0);
    auto out = ref;
    num::store(t, out.data(), 1000, num::load(t, ref.data(), 1000) + 64.0);
    const CompareStats s = compare_host(t, out.data(), ref.data(), n, 64, tol(1e-2, 1e-2), Poison::a);
    EXPECT_EQ(s.bad, 1) << static_cast<int>(t);
    EXPECT_EQ(s.first_bad, 1000) << static_cast<int>(t);
    EXPECT_TRUE(passes(compare_host(t, ref.data(), ref.data(), n, 64, tol(0, 0), Poison::a), tol(0, 0)));
  }
}

TEST(Compare, ResultsDoNotDependOnThreadCount) {
  const int64_t rows = 300, cols = 333;  // not a multiple of the tile
  auto ref = random_f32(rows * cols, 18);
  auto out = random_f32(rows * cols, 18);
  for (int64_t i = 0; i < rows * cols; ++i) {
    if (i % 7 == 0) out[static_cast<size_t>(i)] += 1e-3f * static_cast<float>(i % 13);
    if (i % 1001 == 0) out[static_cast<size_t>(i)] = std::numeric_limits<float>::quiet_NaN();
  }
  CompareStats a, b;
  {
    Threads th(1);
    a = cmp(out, ref, cols, tol(1e-3, 1e-3, 0.5));
  }
  {
    Threads th(2);
    b = cmp(out, ref, cols, tol(1e-3, 1e-3, 0.5));
  }
  EXPECT_GT(a.bad, 0);
  EXPECT_EQ(a.bad, b.bad);
  EXPECT_EQ(a.nonfinite, b.nonfinite);
  EXPECT_TRUE(same_bits(a.sum_abs_err, b.sum_abs_err));
  EXPECT_TRUE(same_bits(a.max_abs_err, b.max_abs_err));
  EXPECT_TRUE(same_bits(a.max_rel_err, b.max_rel_err));
  EXPECT_EQ(a.worst_index, b.worst_index);
  EXPECT_EQ(a.first_bad, b.first_bad);
  EXPECT_EQ(a.bad_per_row, b.bad_per_row);
  EXPECT_EQ(a.bad_per_col, b.bad_per_col);
}

TEST(Compare, DescribeMismatchGivesTheNumbers) {
  const int64_t rows = 64, cols = 4096;
  const auto ref = random_f32(rows * cols, 19);
  auto out = ref;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = cols - 17; c < cols; ++c) out[static_cast<size_t>(r * cols + c)] = 0.0f;
  const Tolerance t = tol(1e-4, 1e-4);
  const CompareStats s = cmp(out, ref, cols, t);
  const std::string m = describe_mismatch("C", s, t);
  EXPECT_THAT(m, HasSubstr("output C: 1088 of 262144 elements wrong (matched 99.58"));
  EXPECT_THAT(m, HasSubstr("need 100%"));
  EXPECT_THAT(m, HasSubstr("max abs err"));
  EXPECT_THAT(m, HasSubstr("got 0, expected"));
  EXPECT_THAT(m, HasSubstr("mean abs err"));
  EXPECT_THAT(m, HasSubstr("unwritten 0"));
  EXPECT_THAT(m, HasSubstr("only the last 17 of 4096 columns are wrong"));
  EXPECT_EQ(m, describe_mismatch("C", cmp(out, ref, cols, t), t)) << "deterministic";
}

TEST(Compare, MatchedPercentNeverRoundsUpTo100) {
  const int64_t n = 1000000;
  const auto ref = random_f32(n, 20);
  auto out = ref;
  out[123] += 1.0f;
  const Tolerance t = tol(1e-4, 1e-4);
  EXPECT_THAT(describe_mismatch("y", cmp(out, ref, 1000, t), t), HasSubstr("matched 99.9999%, need 100%"));
}

TEST(Compare, RunsAgainstEachOther) {
  const auto a = random_f32(100, 21);
  auto b = a;
  b[50] += 1.0f;
  const CompareStats s = compare_runs_host(DType::f32, a.data(), b.data(), 100, 10, tol(1e-4, 1e-4), Poison::b);
  EXPECT_EQ(s.bad, 1);
  EXPECT_EQ(s.first_bad_out, static_cast<double>(b[50]));
}

TEST(Compare, RejectsBadShapes) {
  const std::vector<float> v(12, 1.0f);
  EXPECT_THROW(compare_host(DType::f32, v.data(), v.data(), 12, 0, tol(0, 0), Poison::a), std::invalid_argument);
  EXPECT_THROW(compare_host(DType::f32, v.data(), v.data(), 12, 5, tol(0, 0), Poison::a), std::invalid_argument);
  EXPECT_THROW(compare_host(DType::f4e2m1, v.data(), v.data(), 12, 1, tol(0, 0), Poison::a), std::invalid_argument);
  const CompareStats e = compare_host(DType::f32, v.data(), v.data(), 0, 4, tol(0, 0), Poison::a);
  EXPECT_EQ(e.n, 0);
  EXPECT_TRUE(passes(e, tol(0, 0)));
}
