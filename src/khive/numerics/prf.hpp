// The inputs' pseudo-random function: ChaCha20 under a 256-bit key the judge derives from a secret no kernel sees
// (job/input_keys.hpp). Why a cipher and not a fast hash: a kernel sees its inputs, and every earlier input must say
// nothing about the next one. With an invertible hash of a 64-bit seed (the generator before inputs version 7) one
// input tensor gave away its seed, the run's secret and every later input (seen: the seed recovered from one tensor
// in ~0.07 s). With a keyed PRF the key cannot be recovered from any number of outputs, so the next call's inputs
// can neither be predicted nor regenerated in registers instead of being read.
//
// Layout (D. J. Bernstein's original ChaCha, which RFC 8439 and OpenSSL's EVP_chacha20 share word for word):
//   words 0-3 the constant, 4-11 the key, 12-13 a 64-bit block counter, 14-15 a 64-bit nonce.
// The nonce names the stream (an input tensor, or a purpose: perturbation indices, scalars) and the counter the
// block within it; element i of a stream is the 64-bit little-endian word i % 8 of block i / 8.
//
//   InputKey k = ...;                                        // from the judge (never from the kernel's side)
//   uint64_t h = prf_u64(k, /*stream=*/tensor, /*index=*/i); // uniform 64 bits; host and device give the same
#pragma once
#include <cstdint>

#include "khive/numerics/numeric.hpp"  // KHIVE_HD

namespace khive {

struct InputKey {
  uint32_t w[8] = {};  // little-endian words of the 32-byte key
  bool operator==(const InputKey& o) const {
    for (int i = 0; i < 8; ++i)
      if (w[i] != o.w[i]) return false;
    return true;
  }
};

// Streams other than an input tensor's own (its index): the top byte of the nonce says what the stream is for.
inline constexpr uint64_t kStreamPerturbIndex = 1ull << 56;
inline constexpr uint64_t kStreamPerturbSource = 2ull << 56;
inline constexpr uint64_t kStreamScalar = 3ull << 56;

namespace detail {
KHIVE_HD uint32_t rotl32(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }
KHIVE_HD void quarter_round(uint32_t* x, int a, int b, int c, int d) {
  x[a] += x[b], x[d] = rotl32(x[d] ^ x[a], 16);
  x[c] += x[d], x[b] = rotl32(x[b] ^ x[c], 12);
  x[a] += x[b], x[d] = rotl32(x[d] ^ x[a], 8);
  x[c] += x[d], x[b] = rotl32(x[b] ^ x[c], 7);
}
}  // namespace detail

// One 64-byte ChaCha20 block (20 rounds) as 16 little-endian words.
KHIVE_HD void chacha20_block(const InputKey& k, uint64_t counter, uint64_t nonce, uint32_t out[16]) {
  uint32_t s[16] = {0x61707865u,
                    0x3320646eu,
                    0x79622d32u,
                    0x6b206574u,
                    k.w[0],
                    k.w[1],
                    k.w[2],
                    k.w[3],
                    k.w[4],
                    k.w[5],
                    k.w[6],
                    k.w[7],
                    static_cast<uint32_t>(counter),
                    static_cast<uint32_t>(counter >> 32),
                    static_cast<uint32_t>(nonce),
                    static_cast<uint32_t>(nonce >> 32)};
  uint32_t x[16];
  for (int i = 0; i < 16; ++i) x[i] = s[i];
  for (int r = 0; r < 10; ++r) {
    detail::quarter_round(x, 0, 4, 8, 12);
    detail::quarter_round(x, 1, 5, 9, 13);
    detail::quarter_round(x, 2, 6, 10, 14);
    detail::quarter_round(x, 3, 7, 11, 15);
    detail::quarter_round(x, 0, 5, 10, 15);
    detail::quarter_round(x, 1, 6, 11, 12);
    detail::quarter_round(x, 2, 7, 8, 13);
    detail::quarter_round(x, 3, 4, 9, 14);
  }
  for (int i = 0; i < 16; ++i) out[i] = x[i] + s[i];
}

// Element `index` of stream `stream`: word index % 8 of block index / 8.
KHIVE_HD uint64_t prf_u64(const InputKey& k, uint64_t stream, uint64_t index) {
  uint32_t b[16];
  chacha20_block(k, index / 8, stream, b);
  const int w = static_cast<int>(index % 8);
  return static_cast<uint64_t>(b[2 * w]) | (static_cast<uint64_t>(b[2 * w + 1]) << 32);
}

// Host: `blocks` consecutive blocks of stream `stream` from block `first` as 64-bit words (8 per block), through
// OpenSSL's ChaCha20 (vectorised; the same bits as chacha20_block, which the tests check).
void prf_blocks_host(const InputKey& k, uint64_t stream, uint64_t first, uint64_t blocks, uint64_t* out);

}  // namespace khive
