// Deterministic inputs and output poisoning, the same bits on host and device.
//
// Element i of input tensor `tensor` for a given seed is a pure function of (seed, tensor, i): a
// counter-based generator (no state), so the reference process and the candidate process make the same
// inputs independently, in parallel, on the CPU or on the GPU.
//
//   fill_input_host(DType::bf16, ptr, n, dist, seed, /*tensor=*/0);
//   poison_host(DType::f32, out, n, Poison::a);   // every element = sentinel A (a NaN payload for floats)
#pragma once
#include <cstdint>

#include "khive/check/numeric.hpp"
#include "khive/task/task.hpp"

namespace khive {

// Plain-data form of Distribution (usable in device code).
struct DistParams {
  int kind = 0;            // 0 normal, 1 uniform, 2 constant, 3 integers
  double a = 0.5, b = 1.0; // normal: mean, stddev; uniform/integers: low, high; constant: value, unused
};
DistParams dist_params(const Distribution& d);

// splitmix64-style hash of (seed, tensor, index): a uniform 64-bit value.
KHIVE_HD uint64_t counter_hash(uint64_t seed, uint64_t tensor, uint64_t index) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + tensor * 0xD1B54A32D192ED03ull + index * 0xA0761D6478BD642Full;
  z ^= z >> 30; z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 27; z *= 0x94D049BB133111EBull;
  z ^= z >> 31;
  z += 0x632BE59BD9B4E019ull;
  z ^= z >> 29; z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 32;
  return z;
}
// Uniform in (0, 1), never 0 (53 random bits).
KHIVE_HD double counter_uniform(uint64_t seed, uint64_t tensor, uint64_t index, uint64_t stream) {
  uint64_t h = counter_hash(seed ^ (stream * 0x2545F4914F6CDD1Dull), tensor, index);
  return (static_cast<double>(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}
// The value of element `index` (before rounding to the dtype).
KHIVE_HD double input_value(const DistParams& d, uint64_t seed, uint64_t tensor, uint64_t index) {
  switch (d.kind) {
    case 0: {  // Box-Muller on two independent uniforms; cos branch only, so each index is independent
      double u1 = counter_uniform(seed, tensor, index, 0), u2 = counter_uniform(seed, tensor, index, 1);
      double r = sqrt(-2.0 * log(u1));
      return d.a + d.b * r * cos(6.283185307179586 * u2);
    }
    case 1: return d.a + (d.b - d.a) * counter_uniform(seed, tensor, index, 0);
    case 2: return d.a;
    case 3: {
      double span = floor(d.b) - floor(d.a) + 1.0;
      double v = floor(d.a) + floor(counter_uniform(seed, tensor, index, 0) * span);
      return v > d.b ? floor(d.b) : v;
    }
    default: return 0.0;
  }
}

// Sentinels written into outputs before each call. Floats: NaN with a payload no arithmetic produces
// (so "unwritten" is told apart from "computed NaN"); integers: a fixed unusual value, and a second
// one (B) used on the next call, so an element that equals A after call 1 and B after call 2 was
// never written; bool: a byte that is neither 0 nor 1.
enum class Poison { a, b };

// Host implementations (OpenMP-parallel over elements).
void fill_input_host(DType t, void* p, int64_t n, const DistParams& d, uint64_t seed, uint64_t tensor);
void poison_host(DType t, void* p, int64_t n, Poison which);
// True when element i holds the sentinel `which` bit for bit.
bool is_poison(DType t, const void* p, int64_t i, Poison which);

#if defined(KHIVE_WITH_CUDA)
// Device implementations (asynchronous on `stream`, a cudaStream_t passed as void*).
void fill_input_device(DType t, void* p, int64_t n, const DistParams& d, uint64_t seed, uint64_t tensor, void* stream);
void poison_device(DType t, void* p, int64_t n, Poison which, void* stream);
#endif

}  // namespace khive
