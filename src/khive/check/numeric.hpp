// Bit-exact conversions between stored element types and double, identical on host and device, so
// inputs made by the runner on the CPU and on the GPU are the same bits for the same (seed, index).
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

KHIVE_HD uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
KHIVE_HD float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

// float -> bfloat16, round to nearest even; NaN stays a quiet NaN.
KHIVE_HD uint16_t f32_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
KHIVE_HD float bf16_to_f32(uint16_t h) { return bits_f32(static_cast<uint32_t>(h) << 16); }

// float -> IEEE half, round to nearest even, with subnormals, overflow to inf, NaN kept.
KHIVE_HD uint16_t f32_to_f16(float f) {
  uint32_t u = f32_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);   // rounds to >= 65520: inf
  if (a < 0x38800000u) {                       // below the smallest normal half (2^-14): subnormal or 0
    if (a < 0x33000000u) return static_cast<uint16_t>(sign);            // < 2^-25 rounds to 0
    uint32_t e = a >> 23;                      // 102..112
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e;                 // 14..24
    uint32_t q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t r = a - 0x38000000u;                // rebias exponent 127 -> 15
  r += 0xfffu + ((r >> 13) & 1u);
  return static_cast<uint16_t>(sign | (r >> 13));
}
KHIVE_HD float f16_to_f32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1fu) return bits_f32(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    if (m == 0) return bits_f32(sign);
    float v = static_cast<float>(m) * (1.0f / 16777216.0f);   // m * 2^-24
    return sign ? -v : v;
  }
  return bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

// fp8 e4m3 "fn" (no inf; 0x7f/0xff are NaN; max 448) and e5m2 (IEEE-like, max 57344), saturating
// conversions as in the CUDA __nv_cvt_*_satfinite intrinsics.
KHIVE_HD uint8_t f32_to_fp8(float f, int exp_bits, int man_bits, int bias, bool has_inf) {
  uint32_t u = f32_bits(f);
  uint8_t sign = static_cast<uint8_t>((u >> 24) & 0x80u);
  float a = fabsf(f);
  if (a != a) return static_cast<uint8_t>(sign | 0x7f);
  const int max_exp = has_inf ? ((1 << exp_bits) - 2) : ((1 << exp_bits) - 1);
  const int max_man = has_inf ? ((1 << man_bits) - 1) : ((1 << man_bits) - 2);
  const float max_val = ldexpf(1.0f + static_cast<float>(max_man) / static_cast<float>(1 << man_bits), max_exp - bias);
  if (a >= max_val) return static_cast<uint8_t>(sign | (max_exp << man_bits) | max_man);
  int e; float fr = frexpf(a, &e);            // a = fr * 2^e, fr in [0.5, 1)
  int exp_field = e - 1 + bias;
  float scaled;
  if (exp_field <= 0) {                        // subnormal: value = m * 2^(1 - bias - man_bits)
    scaled = ldexpf(a, man_bits - 1 + bias);
    exp_field = 0;
  } else {
    scaled = (fr * 2.0f - 1.0f) * static_cast<float>(1 << man_bits);
  }
  float fl = floorf(scaled);
  float rem = scaled - fl;
  uint32_t m = static_cast<uint32_t>(fl);
  if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
  if (m >= (1u << man_bits)) { m -= (1u << man_bits); if (exp_field == 0) exp_field = 1; else ++exp_field; }
  else if (exp_field == 0 && m == 0) return sign;
  if (exp_field > max_exp || (exp_field == max_exp && static_cast<int>(m) > max_man))
    return static_cast<uint8_t>(sign | (max_exp << man_bits) | max_man);
  return static_cast<uint8_t>(sign | (exp_field << man_bits) | m);
}
KHIVE_HD float fp8_to_f32(uint8_t v, int exp_bits, int man_bits, int bias, bool has_inf) {
  float s = (v & 0x80u) ? -1.0f : 1.0f;
  int e = (v >> man_bits) & ((1 << exp_bits) - 1);
  int m = v & ((1 << man_bits) - 1);
  if (has_inf) {
    if (e == (1 << exp_bits) - 1) return m == 0 ? s * INFINITY : NAN;
  } else if (e == (1 << exp_bits) - 1 && m == (1 << man_bits) - 1) {
    return NAN;
  }
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

}  // namespace khive::num
