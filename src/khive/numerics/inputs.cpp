// Host side of inputs.hpp: distribution parameters, deterministic fills and output poisoning.
#include "khive/numerics/inputs.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace khive {
namespace {

void require_supported(DType t, const char* what) {
  if (num::size_of(t) == 0)
    throw std::invalid_argument(std::string(what) + ": element type " + std::to_string(static_cast<int>(t)) +
                                " (packed fp4) is not supported");
}

// The dtype as a compile-time constant, so the per-element switch in num::store folds away.
// Chunks of whole PRF blocks (8 values each): the key stream for a chunk comes from one OpenSSL call.
template <DType T>
void fill_typed(void* p, int64_t n, const DistParams& d, const InputKey& key, uint64_t tensor) {
  constexpr int64_t kChunkBlocks = 1024;
  const int64_t blocks = (n + 7) / 8, chunks = (blocks + kChunkBlocks - 1) / kChunkBlocks;
#pragma omp parallel if (n > 4096)
  {
    std::vector<uint64_t> h(kChunkBlocks * 8);
#pragma omp for schedule(static)
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t b0 = c * kChunkBlocks, nb = std::min(kChunkBlocks, blocks - b0);
      prf_blocks_host(key, tensor, static_cast<uint64_t>(b0), static_cast<uint64_t>(nb), h.data());
      const int64_t i0 = b0 * 8, i1 = std::min(n, (b0 + nb) * 8);
      for (int64_t i = i0; i < i1; ++i) num::store(T, p, i, value_of_bits(d, h[static_cast<std::size_t>(i - i0)]));
    }
  }
}

template <typename U>
void poison_typed(void* p, int64_t n, uint64_t bits) {
  U* q = static_cast<U*>(p);
  const U v = static_cast<U>(bits);
#pragma omp parallel for schedule(static) if (n > (1 << 18))
  for (int64_t i = 0; i < n; ++i) q[i] = v;
}

}  // namespace

DistParams dist_params(const Distribution& d) {
  DistParams p;
  switch (d.kind) {
    case Distribution::Kind::normal:
      if (!(d.stddev >= 0.0) || !std::isfinite(d.mean) || !std::isfinite(d.stddev))
        throw std::invalid_argument("normal distribution: need a finite mean and a finite stddev >= 0");
      p.kind = 0;
      p.a = d.mean;
      p.b = d.stddev;
      break;
    case Distribution::Kind::uniform:
      if (!(d.low <= d.high) || !std::isfinite(d.low) || !std::isfinite(d.high))
        throw std::invalid_argument("uniform distribution: need finite bounds with low <= high");
      p.kind = 1;
      p.a = d.low;
      p.b = d.high;
      break;
    case Distribution::Kind::constant:
      p.kind = 2;
      p.a = d.value;
      p.b = 0.0;
      break;
    case Distribution::Kind::integers:
      if (!std::isfinite(d.low) || !std::isfinite(d.high) || !(std::ceil(d.low) <= std::floor(d.high)))
        throw std::invalid_argument("integer distribution: need finite bounds with an integer in [low, high]");
      p.kind = 3;
      p.a = d.low;
      p.b = d.high;
      break;
  }
  return p;
}

void fill_input_host(DType t, void* p, int64_t n, const DistParams& d, const InputKey& key, uint64_t tensor) {
  require_supported(t, "fill_input_host");
  if (n <= 0) return;
  switch (t) {
    case DType::f64: fill_typed<DType::f64>(p, n, d, key, tensor); break;
    case DType::f32: fill_typed<DType::f32>(p, n, d, key, tensor); break;
    case DType::f16: fill_typed<DType::f16>(p, n, d, key, tensor); break;
    case DType::bf16: fill_typed<DType::bf16>(p, n, d, key, tensor); break;
    case DType::f8e4m3: fill_typed<DType::f8e4m3>(p, n, d, key, tensor); break;
    case DType::f8e5m2: fill_typed<DType::f8e5m2>(p, n, d, key, tensor); break;
    case DType::i64: fill_typed<DType::i64>(p, n, d, key, tensor); break;
    case DType::i32: fill_typed<DType::i32>(p, n, d, key, tensor); break;
    case DType::i16: fill_typed<DType::i16>(p, n, d, key, tensor); break;
    case DType::i8: fill_typed<DType::i8>(p, n, d, key, tensor); break;
    case DType::boolean: fill_typed<DType::boolean>(p, n, d, key, tensor); break;
    default: break;
  }
}

void poison_host(DType t, void* p, int64_t n, Poison which) {
  require_supported(t, "poison_host");
  if (n <= 0) return;
  const uint64_t bits = poison_bits(t, which);
  switch (num::size_of(t)) {
    case 8: poison_typed<uint64_t>(p, n, bits); break;
    case 4: poison_typed<uint32_t>(p, n, bits); break;
    case 2: poison_typed<uint16_t>(p, n, bits); break;
    case 1: poison_typed<uint8_t>(p, n, bits); break;
    default: break;
  }
}

bool is_poison(DType t, const void* p, int64_t i, Poison which) {
  require_supported(t, "is_poison");
  return num::load_bits(t, p, i) == poison_bits(t, which);
}

}  // namespace khive
