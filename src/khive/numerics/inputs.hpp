// Deterministic inputs and output poisoning, the same bits on host and device.
//
// Element i of input tensor `tensor` is a pure function of (key, tensor, i): a keyed pseudo-random function
// (prf.hpp: ChaCha20; no state), so the judge makes the same inputs in parallel, on the CPU or on the GPU, and
// makes them again bit for bit when a call is due. The key comes from a secret only the judge holds
// (job/input_keys.hpp): no kernel can predict, recognise or regenerate an input.
//
//   fill_input_host(DType::bf16, ptr, n, dist, key, /*tensor=*/0);
//   poison_host(DType::f32, out, n, Poison::a);   // every element = sentinel A (a NaN payload for floats)
#pragma once
#include <cstdint>

#include "khive/numerics/normal_table.hpp"
#include "khive/numerics/numeric.hpp"
#include "khive/numerics/prf.hpp"
#include "khive/task/task.hpp"

namespace khive {

// Plain-data form of Distribution (usable in device code).
struct DistParams {
  int kind = 0;             // 0 normal, 1 uniform, 2 constant, 3 integers
  double a = 0.5, b = 1.0;  // normal: mean, stddev; uniform/integers: low, high; constant: value, unused
};
DistParams dist_params(const Distribution& d);

// splitmix64-style hash of (seed, tensor, index): a uniform 64-bit value. Not a secret-keyed function: it picks
// positions from keys that are secret already (sample_index), never input values (prf.hpp does those).
KHIVE_HD uint64_t counter_hash(uint64_t seed, uint64_t tensor, uint64_t index) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + tensor * 0xD1B54A32D192ED03ull + index * 0xA0761D6478BD642Full;
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBull;
  z ^= z >> 31;
  z += 0x632BE59BD9B4E019ull;
  z ^= z >> 29;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 32;
  return z;
}
// Uniform in (0, 1), never 0, from 53 of the 64 random bits.
KHIVE_HD double uniform_of_bits(uint64_t h) {
  return (static_cast<double>(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}
// A standard normal value by inverse transform sampling from one 64-bit hash: the top 12 bits pick one of 4096
// equally likely bins, the next 40 a position inside it, linear between the bin's quantiles (normal_table.hpp).
// The two outer bins (probability 1/2048) use Abramowitz-Stegun 26.2.23 on the tail probability (error < 5e-4).
// Only +, *, /, sqrt and det_log (never-fused products), so host and device give the same bits; ~10x faster
// than Box-Muller on the host, which matters now that every timed call gets fresh inputs.
KHIVE_HD double standard_normal(uint64_t h) {
  const int bin = static_cast<int>(h >> 52);                                                               // 0 .. 4095
  const double u = (static_cast<double>((h >> 12) & ((1ull << 40) - 1)) + 0.5) * (1.0 / 1099511627776.0);  // (0, 1)
  if (bin > 0 && bin < detail::kNormalBins - 1) {
    const double lo = detail::normal_quantile(bin), hi = detail::normal_quantile(bin + 1);
    return num::add_rn(lo, num::mul_rn(hi - lo, u));
  }
  // Tail: p = u / 4096 in the lower bin (mirrored for the upper one).
  const double p = num::mul_rn(u, 1.0 / detail::kNormalBins);
  const double t = sqrt(-2.0 * num::det_log(p));
  const double num_ = num::add_rn(2.515517, num::mul_rn(t, num::add_rn(0.802853, num::mul_rn(0.010328, t))));
  const double den = num::add_rn(
      1.0, num::mul_rn(t, num::add_rn(1.432788, num::mul_rn(t, num::add_rn(0.189269, num::mul_rn(0.001308, t))))));
  const double x = t - num_ / den;  // the upper-tail quantile for probability p
  return bin == 0 ? -x : x;
}
// The value drawn from 64 uniform random bits `h` (before rounding to the dtype). Built from +, *, /, sqrt and floor
// alone (num::det_log, never-fused products), so host and device give the same bits.
KHIVE_HD double value_of_bits(const DistParams& d, uint64_t h) {
  switch (d.kind) {
    case 0: return num::add_rn(d.a, num::mul_rn(d.b, standard_normal(h)));
    case 1: return num::add_rn(d.a, num::mul_rn(d.b - d.a, uniform_of_bits(h)));
    case 2: return d.a;
    case 3: {  // uniform over the integers in [a, b], both ends included
      double lo = ceil(d.a), hi = floor(d.b);
      double v = lo + floor(uniform_of_bits(h) * (hi - lo + 1.0));
      return v > hi ? hi : v;
    }
    default: return 0.0;
  }
}
// The value of element `index` of input tensor `tensor` under `key`.
KHIVE_HD double input_value(const DistParams& d, const InputKey& key, uint64_t tensor, uint64_t index) {
  return value_of_bits(d, prf_u64(key, tensor, index));
}

// The sparse perturbation of an input (InputSpec::perturb_seed, fraction; drawn under its own key `kp`):
// `perturb_count` draws j in [0, count) each pick index perturb_index(...) in the second half [n/2, n)
// (collisions are harmless: the value depends on the index only), and the last pick (j == count - 1) is always
// the last element, so a kernel that ignores the tail is caught. O(count) work, not O(n).
KHIVE_HD int64_t perturb_count(int64_t n, double fraction) {
  if (n <= 0) return 0;
  int64_t half = n - n / 2;
  double k = fraction * static_cast<double>(half);
  int64_t c = static_cast<int64_t>(k);
  if (static_cast<double>(c) < k) ++c;
  return (c < 1 ? 1 : c) + 1;
}
// The new value of a perturbed element: a copy of an element of the first half (never perturbed), drawn
// by index: the same distribution as the data, whatever it is, for one hash and one load instead of a
// fresh draw (~40x cheaper on the host). -1 when there is no first half (n == 1): draw a fresh value.
KHIVE_HD int64_t perturb_source(const InputKey& kp, uint64_t tensor, int64_t i, int64_t n) {
  if (n / 2 == 0) return -1;
  return static_cast<int64_t>(prf_u64(kp, kStreamPerturbSource | tensor, static_cast<uint64_t>(i)) %
                              static_cast<uint64_t>(n / 2));
}
KHIVE_HD int64_t perturb_index(const InputKey& kp, uint64_t tensor, int64_t j, int64_t n, int64_t count) {
  if (j == count - 1) return n - 1;
  int64_t half = n - n / 2;
  int64_t off = static_cast<int64_t>(
      uniform_of_bits(prf_u64(kp, kStreamPerturbIndex | tensor, static_cast<uint64_t>(j))) * static_cast<double>(half));
  return n / 2 + (off < half ? off : half - 1);
}

// Sampled goldens (outputs too large to keep whole): `count` positions of an n-element output, the last
// kSampleTail elements always (tails are where kernels go wrong) and the rest drawn by a hash of `key`
// (a secret of the judge's, job/input_keys.hpp: a kernel cannot know which elements will be looked at).
constexpr int64_t kSampleTail = 4096;
KHIVE_HD int64_t sample_index(uint64_t key, int64_t j, int64_t count, int64_t n) {
  int64_t tail = count / 2 < kSampleTail ? count / 2 : kSampleTail;
  if (j >= count - tail) return n - (count - j);
  return static_cast<int64_t>(counter_hash(key, 0x5A4D504C45ull, static_cast<uint64_t>(j)) % static_cast<uint64_t>(n));
}

// Sentinels written into outputs before each call. Floats: NaN with a payload no arithmetic produces
// (so "unwritten" is told apart from "computed NaN"); integers: a fixed unusual value, and a second
// one (B) used on the next call, so an element that equals A after call 1 and B after call 2 was
// never written; bool: a byte that is neither 0 nor 1.
enum class Poison { a, b };

// The sentinel's stored bits (zero-extended), usable in device code:
//   f32 A 0x7FC0DEAD B 0x7FC0BEEF; f64 A 0x7FF8DEADBEEFDEAD B 0x7FF8BEEFDEADBEEF; f16 A 0x7E5D B 0x7E5E;
//   bf16 A 0x7FDE B 0x7FDF; e4m3 A 0x7F B 0xFF (its two NaNs); e5m2 A 0x7E B 0x7D (NaNs);
//   i64/i32/i16/i8 A 0x5A..5A B 0xA5..A5; bool A 0xA5 B 0x5A. Packed fp4 types: 0 (not supported).
// The float sentinels are NaNs whose payloads survive every conversion in numeric.hpp but that no
// arithmetic produces (default NaNs have an all-zero payload below the quiet bit).
KHIVE_HD uint64_t poison_bits(DType t, Poison which) {
  const bool a = which == Poison::a;
  switch (t) {
    case DType::f64: return a ? 0x7FF8DEADBEEFDEADull : 0x7FF8BEEFDEADBEEFull;
    case DType::f32: return a ? 0x7FC0DEADu : 0x7FC0BEEFu;
    case DType::f16: return a ? 0x7E5Du : 0x7E5Eu;
    case DType::bf16: return a ? 0x7FDEu : 0x7FDFu;
    case DType::f8e4m3: return a ? 0x7Fu : 0xFFu;
    case DType::f8e5m2: return a ? 0x7Eu : 0x7Du;
    case DType::i64: return a ? 0x5A5A5A5A5A5A5A5Aull : 0xA5A5A5A5A5A5A5A5ull;
    case DType::i32: return a ? 0x5A5A5A5Au : 0xA5A5A5A5u;
    case DType::i16: return a ? 0x5A5Au : 0xA5A5u;
    case DType::i8: return a ? 0x5Au : 0xA5u;
    case DType::boolean: return a ? 0xA5u : 0x5Au;
    default: return 0;
  }
}

// Host implementations (OpenMP-parallel over elements).
void fill_input_host(DType t, void* p, int64_t n, const DistParams& d, const InputKey& key, uint64_t tensor);
void poison_host(DType t, void* p, int64_t n, Poison which);
// True when element i holds the sentinel `which` bit for bit.
bool is_poison(DType t, const void* p, int64_t i, Poison which);
// The host functions throw std::invalid_argument for the packed fp4 types (not supported yet), and
// dist_params for a distribution that makes no sense (stddev < 0, high < low, no integer in [low, high]).

#if defined(KHIVE_WITH_CUDA)
// Device implementations (asynchronous on `stream`, a cudaStream_t passed as void*); the same bits as the
// host ones. CUDA errors (launch, or an earlier asynchronous fault seen at launch) throw
// std::runtime_error with CUDA's error text; fp4 types throw std::invalid_argument.
void fill_input_device(DType t, void* p, int64_t n, const DistParams& d, const InputKey& key, uint64_t tensor,
                       void* stream);
void poison_device(DType t, void* p, int64_t n, Poison which, void* stream);
#endif

}  // namespace khive
