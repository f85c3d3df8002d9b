// inputs.hpp: deterministic fills (key, tensor, index -> bits), distributions, sentinels.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>
#include <vector>

#include "khive/numerics/inputs.hpp"
#include "test_key.hpp"

using namespace khive;

namespace {

const DType kTypes[] = {DType::f64, DType::f32, DType::f16, DType::bf16, DType::f8e4m3, DType::f8e5m2,
                        DType::i64, DType::i32, DType::i16, DType::i8,   DType::boolean};

std::vector<unsigned char> filled(DType t, int64_t n, const DistParams& d, uint64_t seed, uint64_t tensor) {
  std::vector<unsigned char> b(static_cast<size_t>(n * num::size_of(t)) + 8, 0xCC);
  fill_input_host(t, b.data(), n, d, test_key(seed), tensor);
  return b;
}

DistParams params_for(DType t) {
  Distribution d;  // normal(0.5, 1)
  if (t == DType::boolean) {
    d.kind = Distribution::Kind::integers;
    d.low = 0;
    d.high = 1;
  } else if (t == DType::i8 || t == DType::i16 || t == DType::i32 || t == DType::i64) {
    d.kind = Distribution::Kind::integers;
    d.low = -100;
    d.high = 100;
  }
  return dist_params(d);
}

uint64_t fnv1a(const unsigned char* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

// Restores the OpenMP thread count when a test ends.
struct Threads {
  int saved = omp_get_max_threads();
  explicit Threads(int n) { omp_set_num_threads(n); }
  ~Threads() { omp_set_num_threads(saved); }
};

}  // namespace

TEST(Inputs, SameSeedSameBits) {
  for (DType t : kTypes) {
    const auto a = filled(t, 10007, params_for(t), 42, 0);
    const auto b = filled(t, 10007, params_for(t), 42, 0);
    EXPECT_EQ(a, b) << static_cast<int>(t);
    EXPECT_NE(a, filled(t, 10007, params_for(t), 43, 0)) << "another seed, other data";
    EXPECT_NE(a, filled(t, 10007, params_for(t), 42, 1)) << "another tensor, other data";
    // The bytes past the end are left alone.
    for (size_t i = static_cast<size_t>(10007 * num::size_of(t)); i < a.size(); ++i) EXPECT_EQ(a[i], 0xCC);
  }
}

TEST(Inputs, FillDoesNotDependOnThreadCount) {
  for (DType t : kTypes) {
    std::vector<unsigned char> one, two;
    {
      Threads th(1);
      one = filled(t, 100003, params_for(t), 7, 3);
    }
    {
      Threads th(2);
      two = filled(t, 100003, params_for(t), 7, 3);
    }
    EXPECT_EQ(one, two) << static_cast<int>(t);
  }
}

TEST(Inputs, ElementDependsOnlyOnSeedTensorIndex) {
  // A prefix of a longer fill equals a shorter fill, and element i equals input_value rounded.
  const DistParams d = params_for(DType::f32);
  const auto a = filled(DType::f64, 1000, d, 9, 2), b = filled(DType::f64, 300, d, 9, 2);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), 300 * 8), 0);
  const auto* v = reinterpret_cast<const double*>(a.data());
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(v[i], input_value(d, test_key(9), 2, static_cast<uint64_t>(i)));
}

TEST(Inputs, GeneratorBitsAreFrozen) {
  // Recorded once (inputs version 7, ChaCha20): a change of the generator (or the compiler fusing its arithmetic)
  // changes the bits that references and candidates see, so it must be deliberate.
  const auto a = filled(DType::f64, 4096, params_for(DType::f64), 1234, 5);
  Distribution u;
  u.kind = Distribution::Kind::uniform;
  u.low = -2;
  u.high = 3;
  const auto b = filled(DType::f64, 4096, dist_params(u), 1234, 5);
  EXPECT_EQ(fnv1a(a.data(), 4096 * 8), 0x5466019310f8db2eull);
  EXPECT_EQ(fnv1a(b.data(), 4096 * 8), 0x7277384d47774b36ull);
}

TEST(Inputs, NormalValuesFollowTheInverseCdf) {
  // Inside the 4094 inner bins a value is the linear interpolation of the normal quantiles at its bin's edges: it
  // lies between them, and the bin is the hash's top 12 bits.
  for (uint64_t i = 0; i < 20000; ++i) {
    const uint64_t h = counter_hash(11, 0, i);
    const int bin = static_cast<int>(h >> 52);
    const double v = standard_normal(h);
    if (bin > 0 && bin < 4095) {
      EXPECT_GE(v, detail::normal_quantile(bin));
      EXPECT_LE(v, detail::normal_quantile(bin + 1));
    } else {  // the tails: beyond the outermost quantile, on the bin's side
      EXPECT_TRUE(bin == 0 ? v <= detail::normal_quantile(1) + 5e-4 : v >= detail::normal_quantile(4095) - 5e-4) << v;
    }
  }
  // The quantile table is Phi^-1 (spot checks against known values).
  EXPECT_NEAR(detail::normal_quantile(2048), 0.0, 1e-15);
  EXPECT_NEAR(detail::normal_quantile(3446), 1.0, 2e-3);  // Phi(1) = 0.8413 ~ 3446 / 4096
  EXPECT_NEAR(detail::normal_quantile(4095), 3.4871, 1e-3);
}

TEST(Inputs, NormalTailsReachBeyondThreeSigma) {
  // 1/2048 of the values come from the tail bins: in a million, ~490 beyond |3.49| and dozens beyond 4.
  const int64_t n = 1000000;
  const auto b = filled(DType::f64, n, params_for(DType::f64), 77, 0);
  const auto* v = reinterpret_cast<const double*>(b.data());
  int64_t beyond3 = 0, beyond4 = 0;
  for (int64_t i = 0; i < n; ++i) {
    beyond3 += std::fabs(v[i] - 0.5) > 3.0;
    beyond4 += std::fabs(v[i] - 0.5) > 4.0;
  }
  EXPECT_NEAR(static_cast<double>(beyond3) / n, 0.0027, 0.0004);  // 2 (1 - Phi(3))
  EXPECT_GT(beyond4, 20);                                         // 2 (1 - Phi(4)) ~ 6.3e-5
}

TEST(Inputs, NormalMeanAndStd) {
  const int64_t n = 1000000;
  const auto b = filled(DType::f64, n, params_for(DType::f64), 2024, 0);
  const auto* v = reinterpret_cast<const double*>(b.data());
  double s = 0, s2 = 0;
  int64_t within1 = 0;
  for (int64_t i = 0; i < n; ++i) {
    s += v[i];
    s2 += (v[i] - 0.5) * (v[i] - 0.5);
    within1 += std::fabs(v[i] - 0.5) <= 1.0;
  }
  const double mean = s / n, sd = std::sqrt(s2 / n);
  EXPECT_NEAR(mean, 0.5, 0.005);  // standard error 0.001
  EXPECT_NEAR(sd, 1.0, 0.005);
  EXPECT_NEAR(static_cast<double>(within1) / n, 0.6827, 0.003);
}

TEST(Inputs, UniformWithinBounds) {
  Distribution u;
  u.kind = Distribution::Kind::uniform;
  u.low = -2;
  u.high = 3;
  const DistParams d = dist_params(u);
  const int64_t n = 200000;
  for (DType t : {DType::f64, DType::f32, DType::bf16, DType::f16}) {
    const auto b = filled(t, n, d, 5, 0);
    double s = 0, lo = 1e9, hi = -1e9;
    for (int64_t i = 0; i < n; ++i) {
      const double x = num::load(t, b.data(), i);
      s += x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    EXPECT_GE(lo, -2.0);
    EXPECT_LE(hi, 3.0);
    EXPECT_LT(lo, -1.99);
    EXPECT_GT(hi, 2.99);
    EXPECT_NEAR(s / n, 0.5, 0.02) << static_cast<int>(t);
  }
}

TEST(Inputs, IntegersWithinInclusiveBounds) {
  Distribution di;
  di.kind = Distribution::Kind::integers;
  di.low = -3;
  di.high = 4;
  const int64_t n = 80000;
  for (DType t : {DType::i32, DType::i8, DType::i64, DType::i16, DType::f32, DType::bf16}) {
    const auto b = filled(t, n, dist_params(di), 77, 1);
    std::map<double, int64_t> hist;
    for (int64_t i = 0; i < n; ++i) ++hist[num::load(t, b.data(), i)];
    ASSERT_EQ(hist.size(), 8u) << static_cast<int>(t);
    EXPECT_EQ(hist.begin()->first, -3.0);
    EXPECT_EQ(hist.rbegin()->first, 4.0);
    for (const auto& [v, c] : hist) EXPECT_NEAR(static_cast<double>(c) / n, 0.125, 0.01) << v;
  }
  // Bounds that are not integers: only the integers inside.
  di.low = -1.5;
  di.high = 2.5;
  const auto b = filled(DType::i32, 10000, dist_params(di), 1, 0);
  std::map<double, int64_t> hist;
  for (int64_t i = 0; i < 10000; ++i) ++hist[num::load(DType::i32, b.data(), i)];
  ASSERT_EQ(hist.size(), 4u);
  EXPECT_EQ(hist.begin()->first, -1.0);
  EXPECT_EQ(hist.rbegin()->first, 2.0);
  // bool from integers {0, 1}
  di.low = 0;
  di.high = 1;
  const auto bb = filled(DType::boolean, 1000, dist_params(di), 1, 0);
  int ones = 0;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_LE(bb[static_cast<size_t>(i)], 1);
    ones += bb[static_cast<size_t>(i)];
  }
  EXPECT_GT(ones, 400);
  EXPECT_LT(ones, 600);
}

TEST(Inputs, ConstantFill) {
  Distribution c;
  c.kind = Distribution::Kind::constant;
  c.value = 2.5;
  const auto b = filled(DType::bf16, 1000, dist_params(c), 1, 0);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(num::load(DType::bf16, b.data(), i), 2.5);
}

TEST(Inputs, DistParamsMapping) {
  Distribution d;
  DistParams p = dist_params(d);
  EXPECT_EQ(p.kind, 0);
  EXPECT_EQ(p.a, 0.5);
  EXPECT_EQ(p.b, 1.0);
  d.kind = Distribution::Kind::uniform;
  d.low = -1;
  d.high = 2;
  p = dist_params(d);
  EXPECT_EQ(p.kind, 1);
  EXPECT_EQ(p.a, -1.0);
  EXPECT_EQ(p.b, 2.0);
  d.kind = Distribution::Kind::constant;
  d.value = 3;
  p = dist_params(d);
  EXPECT_EQ(p.kind, 2);
  EXPECT_EQ(p.a, 3.0);
  d.kind = Distribution::Kind::integers;
  d.low = 0;
  d.high = 9;
  p = dist_params(d);
  EXPECT_EQ(p.kind, 3);
  EXPECT_EQ(p.a, 0.0);
  EXPECT_EQ(p.b, 9.0);
  d.low = 0.2;
  d.high = 0.8;  // no integer inside
  EXPECT_THROW(dist_params(d), std::invalid_argument);
  d.kind = Distribution::Kind::uniform;
  d.low = 2;
  d.high = 1;
  EXPECT_THROW(dist_params(d), std::invalid_argument);
  d.kind = Distribution::Kind::normal;
  d.stddev = -1;
  EXPECT_THROW(dist_params(d), std::invalid_argument);
}

TEST(Inputs, PoisonSentinelsPerType) {
  struct Want {
    DType t;
    uint64_t a, b;
    bool is_float;
  };
  const Want wants[] = {
      {DType::f32, 0x7FC0DEADull, 0x7FC0BEEFull, true},
      {DType::f64, 0x7FF8DEADBEEFDEADull, 0x7FF8BEEFDEADBEEFull, true},
      {DType::f16, 0x7E5D, 0x7E5E, true},
      {DType::bf16, 0x7FDE, 0x7FDF, true},
      {DType::f8e4m3, 0x7F, 0xFF, true},
      {DType::f8e5m2, 0x7E, 0x7D, true},
      {DType::i64, 0x5A5A5A5A5A5A5A5Aull, 0xA5A5A5A5A5A5A5A5ull, false},
      {DType::i32, 0x5A5A5A5A, 0xA5A5A5A5, false},
      {DType::i16, 0x5A5A, 0xA5A5, false},
      {DType::i8, 0x5A, 0xA5, false},
      {DType::boolean, 0xA5, 0x5A, false},
  };
  for (const Want& w : wants) {
    const int64_t n = 1001;
    std::vector<unsigned char> buf(static_cast<size_t>(n * num::size_of(w.t)));
    for (Poison which : {Poison::a, Poison::b}) {
      const uint64_t want = which == Poison::a ? w.a : w.b;
      EXPECT_EQ(poison_bits(w.t, which), want);
      poison_host(w.t, buf.data(), n, which);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(num::load_bits(w.t, buf.data(), i), want) << static_cast<int>(w.t);
        ASSERT_TRUE(is_poison(w.t, buf.data(), i, which));
        ASSERT_FALSE(is_poison(w.t, buf.data(), i, which == Poison::a ? Poison::b : Poison::a));
      }
      if (w.is_float) {
        EXPECT_TRUE(std::isnan(num::load(w.t, buf.data(), 0))) << static_cast<int>(w.t);
      }
      if (w.t == DType::boolean) {
        EXPECT_GT(buf[0], 1);  // neither false nor true
      }
    }
    EXPECT_NE(w.a, w.b);
  }
  // A computed NaN (default payload) is not a sentinel.
  float nan = std::nanf("");
  EXPECT_FALSE(is_poison(DType::f32, &nan, 0, Poison::a));
  uint16_t h = num::f32_to_f16(nan), bh = num::f32_to_bf16(nan);
  EXPECT_FALSE(is_poison(DType::f16, &h, 0, Poison::a));
  EXPECT_FALSE(is_poison(DType::bf16, &bh, 0, Poison::a));
}

TEST(Inputs, PackedFp4IsRefused) {
  unsigned char b[4] = {};
  EXPECT_THROW(fill_input_host(DType::f4e2m1, b, 4, DistParams{}, test_key(1), 0), std::invalid_argument);
  EXPECT_THROW(poison_host(DType::f4e2m1x2, b, 4, Poison::a), std::invalid_argument);
  EXPECT_THROW(is_poison(DType::f4e2m1, b, 0, Poison::a), std::invalid_argument);
}

// The sparse perturbation: about `fraction` of the second half, always the last element, O(count).
TEST(Perturbation, CountAndIndicesStayInTheSecondHalfAndHitTheLastElement) {
  for (int64_t n : {1, 2, 3, 7, 1000, 65537, 16777216}) {
    int64_t c = khive::perturb_count(n, 0.02);
    int64_t half = n - n / 2;
    EXPECT_GE(c, 2) << n;
    EXPECT_LE(c, static_cast<int64_t>(0.02 * static_cast<double>(half)) + 2) << n;
    EXPECT_EQ(khive::perturb_index(test_key(99), 0, c - 1, n, c), n - 1) << n;
    for (int64_t j = 0; j < c; ++j) {
      int64_t i = khive::perturb_index(test_key(99), 0, j, n, c);
      ASSERT_GE(i, n / 2) << n;
      ASSERT_LT(i, n) << n;
    }
  }
  EXPECT_EQ(khive::perturb_count(0, 0.02), 0);
}

TEST(Perturbation, DifferentSeedsPickDifferentElements) {
  const int64_t n = 1 << 20, c = khive::perturb_count(n, 0.02);
  int64_t same = 0;
  for (int64_t j = 0; j + 1 < c; ++j)
    same += khive::perturb_index(test_key(5), 0, j, n, c) == khive::perturb_index(test_key(6), 0, j, n, c);
  EXPECT_LT(same, c / 100);
  // and they spread over the whole second half (no clumping in one corner)
  int64_t lo = n, hi = 0;
  for (int64_t j = 0; j + 1 < c; ++j) {
    lo = std::min(lo, khive::perturb_index(test_key(5), 1, j, n, c));
    hi = std::max(hi, khive::perturb_index(test_key(5), 1, j, n, c));
  }
  EXPECT_LT(lo, n / 2 + n / 100);
  EXPECT_GT(hi, n - n / 100);
}

// Sampled goldens: the last kSampleTail elements always, the rest anywhere, all in range, key-dependent.
TEST(SampledGolden, IndicesCoverTheTailAndDependOnTheKey) {
  const int64_t n = int64_t{1} << 30, count = 1 << 16;
  for (int64_t j = count - khive::kSampleTail; j < count; ++j)
    EXPECT_EQ(khive::sample_index(7, j, count, n), n - (count - j));
  int64_t differ = 0, first_half = 0;
  for (int64_t j = 0; j < count - khive::kSampleTail; ++j) {
    int64_t a = khive::sample_index(7, j, count, n), b = khive::sample_index(8, j, count, n);
    ASSERT_GE(a, 0);
    ASSERT_LT(a, n);
    differ += a != b;
    first_half += a < n / 2;
  }
  EXPECT_GT(differ, (count - khive::kSampleTail) * 99 / 100);
  EXPECT_NEAR(static_cast<double>(first_half) / (count - khive::kSampleTail), 0.5, 0.02);
  // tiny counts keep half of them for the tail, never more than the output has
  EXPECT_EQ(khive::sample_index(7, 3, 4, 10), 9);
  EXPECT_EQ(khive::sample_index(7, 2, 4, 10), 8);
}
