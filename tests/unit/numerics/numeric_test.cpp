// numeric.hpp: every code of every 8/16-bit format round-trips, and encoding matches an independent
// nearest-even reference (a table of representable values and a binary search) on all codes, all
// midpoints, one float either side of each midpoint, and a sweep over the float bit patterns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "khive/numerics/numeric.hpp"

using namespace khive;

namespace {

struct Entry {
  double value;
  uint32_t code;
};

// Nearest representable value to x >= 0 (finite), ties to the even code. `tab` ascends from 0.
uint32_t nearest(double x, const std::vector<Entry>& tab) {
  auto it = std::lower_bound(tab.begin(), tab.end(), x, [](const Entry& e, double v) { return e.value < v; });
  if (it == tab.end()) return tab.back().code;
  if (it->value == x || it == tab.begin()) return it->code;
  auto lo = it - 1;
  const double dl = x - lo->value, dh = it->value - x;  // exact: both are close floats, held in double
  if (dl < dh) return lo->code;
  if (dh < dl) return it->code;
  return (lo->code & 1u) ? it->code : lo->code;
}

float f(uint32_t bits) {
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}
uint32_t bits(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return u;
}

// The points to test an encoder at: each table value, each midpoint, one float either side of it,
// both signs, plus every 997th float bit pattern, plus zeros, infinities and NaNs.
std::vector<float> probe_points(const std::vector<Entry>& tab) {
  std::vector<float> p;
  for (size_t i = 0; i < tab.size(); ++i) {
    if (!std::isfinite(tab[i].value)) continue;
    p.push_back(static_cast<float>(tab[i].value));
    if (i + 1 < tab.size() && std::isfinite(tab[i + 1].value)) {
      const double mid = 0.5 * (tab[i].value + tab[i + 1].value);
      const float m = static_cast<float>(mid);
      EXPECT_EQ(static_cast<double>(m), mid) << "midpoint not representable";
      p.push_back(m);
      p.push_back(std::nextafter(m, 0.0f));
      p.push_back(std::nextafter(m, std::numeric_limits<float>::infinity()));
    }
  }
  for (uint64_t b = 0; b < 0x7f800000u; b += 997) p.push_back(f(static_cast<uint32_t>(b)));
  p.push_back(std::numeric_limits<float>::max());
  p.push_back(std::numeric_limits<float>::denorm_min());
  const size_t n = p.size();
  for (size_t i = 0; i < n; ++i) p.push_back(-p[i]);
  return p;
}

// Independent decoders (the formulas of the formats, not the library's code).
double ref_e4m3(uint32_t c) {
  const int e = (c >> 3) & 15, m = c & 7;
  const double v = e == 0 ? std::ldexp(m, -9) : std::ldexp(1.0 + m / 8.0, e - 7);
  return (c & 0x80) ? -v : v;
}
double ref_e5m2(uint32_t c) {
  const int e = (c >> 2) & 31, m = c & 3;
  double v = e == 0 ? std::ldexp(m, -16) : std::ldexp(1.0 + m / 4.0, e - 15);
  if (e == 31) v = m == 0 ? INFINITY : NAN;
  return (c & 0x80) ? -v : v;
}
double ref_f16(uint32_t c) {
  const int e = (c >> 10) & 31, m = c & 1023;
  double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1.0 + m / 1024.0, e - 15);
  if (e == 31) v = m == 0 ? INFINITY : NAN;
  return (c & 0x8000) ? -v : v;
}

}  // namespace

TEST(Numeric, F16AllCodesRoundTrip) {
  for (uint32_t c = 0; c < 65536; ++c)
    ASSERT_EQ(num::f32_to_f16(num::f16_to_f32(static_cast<uint16_t>(c))), c) << std::hex << c;
}

TEST(Numeric, Bf16AllCodesRoundTrip) {
  for (uint32_t c = 0; c < 65536; ++c)
    ASSERT_EQ(num::f32_to_bf16(num::bf16_to_f32(static_cast<uint16_t>(c))), c) << std::hex << c;
}

TEST(Numeric, E4m3AllCodesRoundTrip) {
  for (uint32_t c = 0; c < 256; ++c)
    ASSERT_EQ(num::f32_to_e4m3(num::e4m3_to_f32(static_cast<uint8_t>(c))), c) << std::hex << c;
}

TEST(Numeric, E5m2AllCodesRoundTrip) {
  for (uint32_t c = 0; c < 256; ++c)
    ASSERT_EQ(num::f32_to_e5m2(num::e5m2_to_f32(static_cast<uint8_t>(c))), c) << std::hex << c;
}

TEST(Numeric, DecodersMatchTheFormatFormulas) {
  for (uint32_t c = 0; c < 256; ++c) {
    const double a = ref_e4m3(c), b = ref_e5m2(c);
    if ((c & 0x7f) == 0x7f)
      EXPECT_TRUE(std::isnan(num::e4m3_to_f32(static_cast<uint8_t>(c))));
    else
      EXPECT_EQ(static_cast<double>(num::e4m3_to_f32(static_cast<uint8_t>(c))), a) << c;
    if (std::isnan(b))
      EXPECT_TRUE(std::isnan(num::e5m2_to_f32(static_cast<uint8_t>(c))));
    else
      EXPECT_EQ(static_cast<double>(num::e5m2_to_f32(static_cast<uint8_t>(c))), b) << c;
  }
  for (uint32_t c = 0; c < 65536; ++c) {
    const double h = ref_f16(c);
    if (std::isnan(h))
      EXPECT_TRUE(std::isnan(num::f16_to_f32(static_cast<uint16_t>(c))));
    else
      ASSERT_EQ(static_cast<double>(num::f16_to_f32(static_cast<uint16_t>(c))), h) << c;
    EXPECT_EQ(bits(num::bf16_to_f32(static_cast<uint16_t>(c))), c << 16);
  }
}

TEST(Numeric, F16EncodeIsNearestEven) {
  std::vector<Entry> tab;
  for (uint32_t c = 0; c < 0x7c00; ++c) tab.push_back({ref_f16(c), c});
  tab.push_back({65536.0, 0x7c00});  // the overflow threshold behaves as the next value, coded inf
  for (float x : probe_points(tab)) {
    const double a = std::fabs(static_cast<double>(x));
    const uint32_t want = nearest(a, tab) | (std::signbit(x) ? 0x8000u : 0u);
    ASSERT_EQ(num::f32_to_f16(x), want) << "x=" << x << " bits=" << std::hex << bits(x);
#if defined(__FLT16_MAX__)
    const _Float16 h = static_cast<_Float16>(x);  // the compiler's own conversion, as a second opinion
    uint16_t hb;
    std::memcpy(&hb, &h, 2);
    ASSERT_EQ(num::f32_to_f16(x), hb) << "x=" << x;
#endif
  }
  EXPECT_EQ(num::f32_to_f16(INFINITY), 0x7c00);
  EXPECT_EQ(num::f32_to_f16(-INFINITY), 0xfc00);
  EXPECT_EQ(num::f32_to_f16(65519.99f), 0x7bff);
  EXPECT_EQ(num::f32_to_f16(65520.0f), 0x7c00);               // the tie between 65504 and 65536 goes to even: inf
  EXPECT_EQ(num::f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);  // tie -> 0 (even)
  EXPECT_EQ(num::f32_to_f16(std::ldexp(3.0f, -25)), 0x0002);  // tie -> 2 (even)
  EXPECT_EQ(num::f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie -> even
  EXPECT_EQ(num::f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie -> even
  EXPECT_EQ(num::f32_to_f16(NAN) & 0x7c00, 0x7c00);
  EXPECT_NE(num::f32_to_f16(NAN) & 0x3ff, 0);
  EXPECT_NE(num::f32_to_f16(f(0x7f800001u)) & 0x3ff, 0) << "a NaN with a low payload must stay NaN";
}

TEST(Numeric, Bf16EncodeIsNearestEven) {
  std::vector<Entry> tab;
  for (uint32_t c = 0; c < 0x7f80; ++c)
    tab.push_back({static_cast<double>(num::bf16_to_f32(static_cast<uint16_t>(c))), c});
  tab.push_back({std::ldexp(1.0, 128), 0x7f80});
  for (float x : probe_points(tab)) {
    const double a = std::fabs(static_cast<double>(x));
    const uint32_t want = nearest(a, tab) | (std::signbit(x) ? 0x8000u : 0u);
    ASSERT_EQ(num::f32_to_bf16(x), want) << "x=" << x << " bits=" << std::hex << bits(x);
  }
  EXPECT_EQ(num::f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(num::f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);        // tie -> even
  EXPECT_EQ(num::f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);    // tie -> even
  EXPECT_EQ(num::f32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to inf
  EXPECT_EQ(num::f32_to_bf16(f(0x7f800001u)) & 0x7f, 0x40) << "a NaN with a low payload must stay NaN";
}

TEST(Numeric, Fp8EncodeIsNearestEvenAndSaturates) {
  for (int fmt = 0; fmt < 2; ++fmt) {
    const bool e4 = fmt == 0;
    std::vector<Entry> tab;
    const uint32_t max_code = e4 ? 0x7e : 0x7b;
    for (uint32_t c = 0; c <= max_code; ++c) tab.push_back({e4 ? ref_e4m3(c) : ref_e5m2(c), c});
    const double max_val = tab.back().value;
    EXPECT_EQ(max_val, e4 ? 448.0 : 57344.0);
    for (float x : probe_points(tab)) {
      const double a = std::min(std::fabs(static_cast<double>(x)), max_val);  // satfinite
      const uint32_t want = nearest(a, tab) | (std::signbit(x) ? 0x80u : 0u);
      const uint32_t got = e4 ? num::f32_to_e4m3(x) : num::f32_to_e5m2(x);
      ASSERT_EQ(got, want) << (e4 ? "e4m3" : "e5m2") << " x=" << x << " bits=" << std::hex << bits(x);
    }
  }
  EXPECT_EQ(num::f32_to_e4m3(0.0f), 0x00);
  EXPECT_EQ(num::f32_to_e4m3(-0.0f), 0x80);
  EXPECT_EQ(num::f32_to_e5m2(0.0f), 0x00);
  EXPECT_EQ(num::f32_to_e4m3(1.0625f), 0x38);  // tie between 1.0 (0x38) and 1.125 (0x39) -> even
  EXPECT_EQ(num::f32_to_e4m3(1.1875f), 0x3a);  // tie between 1.125 and 1.25 (0x3a) -> even
  EXPECT_EQ(num::f32_to_e4m3(448.0f), 0x7e);
  EXPECT_EQ(num::f32_to_e4m3(1e6f), 0x7e);  // saturates
  EXPECT_EQ(num::f32_to_e4m3(-1e6f), 0xfe);
  EXPECT_EQ(num::f32_to_e4m3(INFINITY), 0x7e);  // no inf in e4m3fn: saturates
  EXPECT_EQ(num::f32_to_e4m3(NAN), 0x7f);
  EXPECT_EQ(num::f32_to_e5m2(1e6f), 0x7b);      // saturates
  EXPECT_EQ(num::f32_to_e5m2(INFINITY), 0x7c);  // inf stays inf
  EXPECT_EQ(num::f32_to_e5m2(-INFINITY), 0xfc);
  EXPECT_EQ(num::f32_to_e5m2(NAN) & 0x7c, 0x7c);
  EXPECT_NE(num::f32_to_e5m2(NAN) & 0x03, 0);
  EXPECT_EQ(num::f32_to_e4m3(std::ldexp(1.0f, -10)), 0x00);  // half the smallest subnormal: tie -> 0
  EXPECT_EQ(num::f32_to_e4m3(std::ldexp(3.0f, -10)), 0x02);  // 1.5 subnormal steps: tie -> 2
}

TEST(Numeric, LoadStoreEveryType) {
  alignas(8) unsigned char buf[64] = {};
  const DType floats[] = {DType::f64, DType::f32, DType::f16, DType::bf16, DType::f8e4m3, DType::f8e5m2};
  for (DType t : floats) {
    for (double v : {0.0, 1.0, -2.5, 0.375, 3.0}) {
      num::store(t, buf, 3, v);
      EXPECT_EQ(num::load(t, buf, 3), v) << static_cast<int>(t);
    }
  }
  num::store(DType::bf16, buf, 0, 1.00390625);  // 1 + 2^-8: a tie, to even
  EXPECT_EQ(num::load(DType::bf16, buf, 0), 1.0);
  const DType ints[] = {DType::i64, DType::i32, DType::i16, DType::i8};
  for (DType t : ints) {
    num::store(t, buf, 2, -7.0);
    EXPECT_EQ(num::load(t, buf, 2), -7.0);
    num::store(t, buf, 2, 2.5);  // llround: half away from zero
    EXPECT_EQ(num::load(t, buf, 2), 3.0);
    num::store(t, buf, 2, -2.4);
    EXPECT_EQ(num::load(t, buf, 2), -2.0);
  }
  num::store(DType::boolean, buf, 5, 0.25);
  EXPECT_EQ(buf[5], 1);
  num::store(DType::boolean, buf, 5, 0.0);
  EXPECT_EQ(buf[5], 0);
  EXPECT_EQ(num::size_of(DType::f64), 8);
  EXPECT_EQ(num::size_of(DType::bf16), 2);
  EXPECT_EQ(num::size_of(DType::boolean), 1);
  EXPECT_EQ(num::size_of(DType::f4e2m1), 0);
  num::store_bits(DType::i16, buf, 1, 0xBEEF);
  EXPECT_EQ(num::load_bits(DType::i16, buf, 1), 0xBEEFu);
}

TEST(Numeric, DeterministicLogAndCosAreAccurate) {
  std::mt19937_64 g(7);
  for (int i = 0; i < 200000; ++i) {
    double u = (static_cast<double>(g() >> 11) + 0.5) * std::ldexp(1.0, -53);
    if (i % 3 == 0) u = std::ldexp(u, -static_cast<int>(g() % 60));
    EXPECT_NEAR(num::det_log(u), std::log(u), 4e-16 * std::fabs(std::log(u)) + 1e-300) << u;
    const double c = num::det_cos_2pi(u < 1 ? u : 0.5);
    EXPECT_NEAR(c, std::cos(2 * M_PI * (u < 1 ? u : 0.5)), 2e-15);
  }
  EXPECT_EQ(num::det_log(1.0), 0.0);
  EXPECT_EQ(num::det_cos_2pi(0.0), 1.0);
  EXPECT_EQ(num::det_cos_2pi(0.5), -1.0);
}
