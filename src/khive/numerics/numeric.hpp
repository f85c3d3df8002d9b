// Bit-exact conversions between stored element types and double, identical on host and device, so
// inputs made by the judge on the CPU and on the GPU are the same bits for the same (seed, index).
//
//   uint16_t b = khive::num::f32_to_bf16(1.0f);    // 0x3F80 (round to nearest even)
//   double   x = khive::num::load(DType::bf16, ptr, i);
//
// Header-only; compiles as CUDA (__host__ __device__) or plain C++.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "khive/task/dtype.hpp"

#if defined(__CUDACC__)
#define KHIVE_HD __host__ __device__ inline
#else
#define KHIVE_HD inline
#endif

namespace khive::num {

KHIVE_HD uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
KHIVE_HD float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// float -> bfloat16, round to nearest even. NaN stays NaN with the sign and the top 7 payload bits kept
// (a payload that would vanish gets the quiet bit), so every bf16 code, NaNs included, survives
// bf16 -> f32 -> bf16 bit for bit.
KHIVE_HD uint16_t f32_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    uint16_t h = static_cast<uint16_t>(u >> 16);
    return (h & 0x7fu) ? h : static_cast<uint16_t>(h | 0x40u);
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
KHIVE_HD float bf16_to_f32(uint16_t h) { return bits_f32(static_cast<uint32_t>(h) << 16); }

// float -> IEEE half, round to nearest even, with subnormals, overflow to inf. NaN stays NaN with the
// sign and the top 10 payload bits kept (a payload that would vanish gets the quiet bit), so every
// half code, NaNs included, survives f16 -> f32 -> f16 bit for bit.
KHIVE_HD uint16_t f32_to_f16(float f) {
  uint32_t u = f32_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) {
    uint32_t m = (a >> 13) & 0x3ffu;
    return static_cast<uint16_t>(sign | 0x7c00u | (m ? m : 0x200u));
  }
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (a < 0x38800000u) {                                      // below the smallest normal half (2^-14): subnormal or 0
    if (a < 0x33000000u) return static_cast<uint16_t>(sign);  // < 2^-25 rounds to 0
    uint32_t e = a >> 23;                                     // 102..112
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e;  // 14..24
    uint32_t q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t r = a - 0x38000000u;  // rebias exponent 127 -> 15
  r += 0xfffu + ((r >> 13) & 1u);
  return static_cast<uint16_t>(sign | (r >> 13));
}
KHIVE_HD float f16_to_f32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1fu) return bits_f32(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    if (m == 0) return bits_f32(sign);
    float v = static_cast<float>(m) * (1.0f / 16777216.0f);  // m * 2^-24
    return sign ? -v : v;
  }
  return bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

// fp8 e4m3 "fn" (no inf; 0x7f/0xff are NaN; max 448) and e5m2 (IEEE-like, max 57344). Finite values
// round to nearest even and saturate to the largest finite value, as the CUDA __nv_cvt_*_satfinite
// intrinsics do. Unlike those intrinsics, +-inf stays +-inf where the format has one (e5m2; e4m3
// saturates it), and NaN keeps its sign (and for e5m2 the top 2 payload bits), so every one of the 256
// codes of each format survives fp8 -> f32 -> fp8 bit for bit.
KHIVE_HD uint8_t f32_to_fp8(float f, int exp_bits, int man_bits, int bias, bool has_inf) {
  const uint32_t u = f32_bits(f);
  const uint8_t sign = static_cast<uint8_t>((u >> 24) & 0x80u);
  const uint32_t abits = u & 0x7fffffffu;
  const uint32_t exp_ones = (1u << exp_bits) - 1u, man_mask = (1u << man_bits) - 1u;
  if (abits > 0x7f800000u) {  // NaN
    if (!has_inf) return static_cast<uint8_t>(sign | (exp_ones << man_bits) | man_mask);
    uint32_t m = (abits >> (23 - man_bits)) & man_mask;
    if (!m) m = 1u << (man_bits - 1);
    return static_cast<uint8_t>(sign | (exp_ones << man_bits) | m);
  }
  if (abits == 0x7f800000u && has_inf) return static_cast<uint8_t>(sign | (exp_ones << man_bits));
  if (abits == 0) return sign;  // +-0 (frexpf below needs a non-zero value)
  const int max_exp = has_inf ? ((1 << exp_bits) - 2) : ((1 << exp_bits) - 1);
  const int max_man = has_inf ? ((1 << man_bits) - 1) : ((1 << man_bits) - 2);
  const float max_val = ldexpf(1.0f + static_cast<float>(max_man) / static_cast<float>(1 << man_bits), max_exp - bias);
  const float a = bits_f32(abits);
  if (a >= max_val) return static_cast<uint8_t>(sign | (max_exp << man_bits) | max_man);
  int e;
  float fr = frexpf(a, &e);  // a = fr * 2^e, fr in [0.5, 1)
  int exp_field = e - 1 + bias;
  float scaled;
  if (exp_field <= 0) {  // subnormal: value = m * 2^(1 - bias - man_bits)
    scaled = ldexpf(a, man_bits - 1 + bias);
    exp_field = 0;
  } else {
    scaled = (fr * 2.0f - 1.0f) * static_cast<float>(1 << man_bits);
  }
  float fl = floorf(scaled);
  float rem = scaled - fl;
  uint32_t m = static_cast<uint32_t>(fl);
  if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
  if (m >= (1u << man_bits)) {
    m -= (1u << man_bits);
    if (exp_field == 0)
      exp_field = 1;
    else
      ++exp_field;
  } else if (exp_field == 0 && m == 0)
    return sign;
  if (exp_field > max_exp || (exp_field == max_exp && static_cast<int>(m) > max_man))
    return static_cast<uint8_t>(sign | (max_exp << man_bits) | max_man);
  return static_cast<uint8_t>(sign | (exp_field << man_bits) | m);
}
KHIVE_HD float fp8_to_f32(uint8_t v, int exp_bits, int man_bits, int bias, bool has_inf) {
  float s = (v & 0x80u) ? -1.0f : 1.0f;
  int e = (v >> man_bits) & ((1 << exp_bits) - 1);
  int m = v & ((1 << man_bits) - 1);
  const bool nan =
      has_inf ? (e == (1 << exp_bits) - 1 && m != 0) : (e == (1 << exp_bits) - 1 && m == (1 << man_bits) - 1);
  if (nan)  // sign and payload kept (e4m3's only NaN gives a quiet NaN)
    return bits_f32((static_cast<uint32_t>(v & 0x80u) << 24) | 0x7f800000u |
                    (static_cast<uint32_t>(m) << (23 - man_bits)));
  if (has_inf && e == (1 << exp_bits) - 1) return s * INFINITY;
  if (e == 0) return s * ldexpf(static_cast<float>(m), 1 - bias - man_bits);
  return s * ldexpf(1.0f + static_cast<float>(m) / static_cast<float>(1 << man_bits), e - bias);
}
KHIVE_HD uint8_t f32_to_e4m3(float f) { return f32_to_fp8(f, 4, 3, 7, false); }
KHIVE_HD float e4m3_to_f32(uint8_t v) { return fp8_to_f32(v, 4, 3, 7, false); }
KHIVE_HD uint8_t f32_to_e5m2(float f) { return f32_to_fp8(f, 5, 2, 15, true); }
KHIVE_HD float e5m2_to_f32(uint8_t v) { return fp8_to_f32(v, 5, 2, 15, true); }

// Reads element i of a buffer of type t as a double.
KHIVE_HD double load(DType t, const void* p, int64_t i) {
  switch (t) {
    case DType::f64: return static_cast<const double*>(p)[i];
    case DType::f32: return static_cast<const float*>(p)[i];
    case DType::f16: return f16_to_f32(static_cast<const uint16_t*>(p)[i]);
    case DType::bf16: return bf16_to_f32(static_cast<const uint16_t*>(p)[i]);
    case DType::f8e4m3: return e4m3_to_f32(static_cast<const uint8_t*>(p)[i]);
    case DType::f8e5m2: return e5m2_to_f32(static_cast<const uint8_t*>(p)[i]);
    case DType::i64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DType::i32: return static_cast<const int32_t*>(p)[i];
    case DType::i16: return static_cast<const int16_t*>(p)[i];
    case DType::i8: return static_cast<const int8_t*>(p)[i];
    case DType::boolean: return static_cast<const uint8_t*>(p)[i];
    default: return NAN;
  }
}

// Stores a double as element i of a buffer of type t (rounding as the conversions above; integers
// truncate toward zero after rounding to nearest; bool stores 0/1).
KHIVE_HD void store(DType t, void* p, int64_t i, double v) {
  switch (t) {
    case DType::f64: static_cast<double*>(p)[i] = v; break;
    case DType::f32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case DType::f16: static_cast<uint16_t*>(p)[i] = f32_to_f16(static_cast<float>(v)); break;
    case DType::bf16: static_cast<uint16_t*>(p)[i] = f32_to_bf16(static_cast<float>(v)); break;
    case DType::f8e4m3: static_cast<uint8_t*>(p)[i] = f32_to_e4m3(static_cast<float>(v)); break;
    case DType::f8e5m2: static_cast<uint8_t*>(p)[i] = f32_to_e5m2(static_cast<float>(v)); break;
    case DType::i64: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(llround(v)); break;
    case DType::i32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(llround(v)); break;
    case DType::i16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(llround(v)); break;
    case DType::i8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(llround(v)); break;
    case DType::boolean: static_cast<uint8_t*>(p)[i] = v != 0.0 ? 1 : 0; break;
    default: break;
  }
}

// Bytes per stored element, usable in device code (0 for the packed fp4 types, which are not handled here).
KHIVE_HD int size_of(DType t) {
  switch (t) {
    case DType::f64:
    case DType::i64: return 8;
    case DType::f32:
    case DType::i32: return 4;
    case DType::f16:
    case DType::bf16:
    case DType::i16: return 2;
    case DType::f8e4m3:
    case DType::f8e5m2:
    case DType::i8:
    case DType::boolean: return 1;
    default: return 0;
  }
}

// The stored bits of element i, zero-extended (for bit-exact tests such as "still holds the sentinel").
KHIVE_HD uint64_t load_bits(DType t, const void* p, int64_t i) {
  switch (size_of(t)) {
    case 8: return static_cast<const uint64_t*>(p)[i];
    case 4: return static_cast<const uint32_t*>(p)[i];
    case 2: return static_cast<const uint16_t*>(p)[i];
    case 1: return static_cast<const uint8_t*>(p)[i];
    default: return 0;
  }
}
KHIVE_HD void store_bits(DType t, void* p, int64_t i, uint64_t bits) {
  switch (size_of(t)) {
    case 8: static_cast<uint64_t*>(p)[i] = bits; break;
    case 4: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(bits); break;
    case 2: static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(bits); break;
    case 1: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(bits); break;
    default: break;
  }
}

// Double-precision product and sum rounded on their own, never fused into an FMA, so arithmetic that
// must give the same bits on host and device (input generation, tolerance thresholds) does. nvcc fuses
// a*b+c by default (__dmul_rn/__dadd_rn are never fused); on the host the empty asm keeps GCC from
// fusing where the target has FMA (-march=haswell and later).
KHIVE_HD double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  double r = a * b;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __asm__("" : "+x"(r));
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(r));
#endif
  return r;
#endif
}
KHIVE_HD double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

// Natural log for positive normal x, from +, *, / alone (each rounded), so host and device give the same
// bits (libm's log and CUDA's log differ in the last bit for some arguments). Error < 4 ulp.
KHIVE_HD double det_log(double x) {
  uint64_t b;
  memcpy(&b, &x, 8);
  int k = static_cast<int>((b >> 52) & 0x7ffu) - 1022;  // x = m * 2^k, m in [0.5, 1)
  b = (b & 0x000fffffffffffffull) | 0x3fe0000000000000ull;
  double m;
  memcpy(&m, &b, 8);
  if (m < 0.70710678118654752) {
    m = m * 2.0;
    --k;
  }                                        // m in [sqrt(1/2), sqrt(2)); exact
  const double s = (m - 1.0) / (m + 1.0);  // |s| <= 0.1716; m - 1 exact
  const double s2 = mul_rn(s, s);
  // log(m) = 2 atanh(s) = 2 s (1 + s^2/3 + s^4/5 + ...); s^26/27 < 2^-60
  double p = 1.0 / 27.0;
  p = add_rn(1.0 / 25.0, mul_rn(s2, p));
  p = add_rn(1.0 / 23.0, mul_rn(s2, p));
  p = add_rn(1.0 / 21.0, mul_rn(s2, p));
  p = add_rn(1.0 / 19.0, mul_rn(s2, p));
  p = add_rn(1.0 / 17.0, mul_rn(s2, p));
  p = add_rn(1.0 / 15.0, mul_rn(s2, p));
  p = add_rn(1.0 / 13.0, mul_rn(s2, p));
  p = add_rn(1.0 / 11.0, mul_rn(s2, p));
  p = add_rn(1.0 / 9.0, mul_rn(s2, p));
  p = add_rn(1.0 / 7.0, mul_rn(s2, p));
  p = add_rn(1.0 / 5.0, mul_rn(s2, p));
  p = add_rn(1.0 / 3.0, mul_rn(s2, p));
  const double lm = mul_rn(2.0 * s, add_rn(1.0, mul_rn(s2, p)));
  constexpr double ln2_hi = 0.693147180369123816490;  // 0x3FE62E42FEE00000: k*ln2_hi exact
  constexpr double ln2_lo = 1.90821492927058770002e-10;
  const double kd = static_cast<double>(k);
  return add_rn(mul_rn(kd, ln2_hi), add_rn(mul_rn(kd, ln2_lo), lm));
}

// cos(2 pi u) for u in [0, 1), from +, *, / alone (see det_log). Absolute error < 1e-15.
KHIVE_HD double det_cos_2pi(double u) {
  const double x = u * 4.0;  // quadrant q and fraction g, exact
  const int q = static_cast<int>(floor(x)) & 3;
  double g = x - floor(x);
  // cos(pi/2 (q + g)) = cos(pi/2 g), -sin(pi/2 g), -cos(pi/2 g), sin(pi/2 g) for q = 0..3
  bool use_sin = (q & 1) != 0;
  const bool neg = q == 1 || q == 2;
  if (g > 0.5) {
    g = 1.0 - g;
    use_sin = !use_sin;
  }                                                    // cos(pi/2 g) = sin(pi/2 (1 - g))
  const double y = mul_rn(g, 1.57079632679489661923);  // y in [0, pi/4]
  const double y2 = mul_rn(y, y);
  double r;
  if (use_sin) {  // y - y^3/3! + ... - y^19/19!
    double p = -1.0 / 121645100408832000.0;
    p = add_rn(1.0 / 355687428096000.0, mul_rn(y2, p));
    p = add_rn(-1.0 / 1307674368000.0, mul_rn(y2, p));
    p = add_rn(1.0 / 6227020800.0, mul_rn(y2, p));
    p = add_rn(-1.0 / 39916800.0, mul_rn(y2, p));
    p = add_rn(1.0 / 362880.0, mul_rn(y2, p));
    p = add_rn(-1.0 / 5040.0, mul_rn(y2, p));
    p = add_rn(1.0 / 120.0, mul_rn(y2, p));
    p = add_rn(-1.0 / 6.0, mul_rn(y2, p));
    r = add_rn(y, mul_rn(mul_rn(y, y2), p));
  } else {  // 1 - y^2/2! + ... + y^20/20!
    double p = 1.0 / 2432902008176640000.0;
    p = add_rn(-1.0 / 6402373705728000.0, mul_rn(y2, p));
    p = add_rn(1.0 / 20922789888000.0, mul_rn(y2, p));
    p = add_rn(-1.0 / 87178291200.0, mul_rn(y2, p));
    p = add_rn(1.0 / 479001600.0, mul_rn(y2, p));
    p = add_rn(-1.0 / 3628800.0, mul_rn(y2, p));
    p = add_rn(1.0 / 40320.0, mul_rn(y2, p));
    p = add_rn(-1.0 / 720.0, mul_rn(y2, p));
    p = add_rn(1.0 / 24.0, mul_rn(y2, p));
    p = add_rn(-0.5, mul_rn(y2, p));
    r = add_rn(1.0, mul_rn(y2, p));
  }
  return neg ? -r : r;
}

}  // namespace khive::num
