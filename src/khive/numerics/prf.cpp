// Host side of prf.hpp: ChaCha20 blocks through OpenSSL (its EVP_chacha20 is vectorised: ~4x the scalar block
// function here, which matters because every timed call of the CPU backend gets fresh inputs).
#include "khive/numerics/prf.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace khive {
namespace {

struct CtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};

void le32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

// One run of blocks whose 32-bit low counter word does not wrap: OpenSSL's IV is words 12-15 (counter low, counter
// high, nonce low, nonce high), and it counts in the low word.
void run(EVP_CIPHER_CTX* ctx, const unsigned char* key, uint64_t stream, uint64_t first, uint64_t blocks,
         uint64_t* out) {
  unsigned char iv[16];
  le32(iv, static_cast<uint32_t>(first));
  le32(iv + 4, static_cast<uint32_t>(first >> 32));
  le32(iv + 8, static_cast<uint32_t>(stream));
  le32(iv + 12, static_cast<uint32_t>(stream >> 32));
  if (EVP_EncryptInit_ex(ctx, EVP_chacha20(), nullptr, key, iv) != 1)
    throw std::runtime_error("prf: EVP_chacha20 init failed");
  unsigned char* bytes = reinterpret_cast<unsigned char*>(out);
  const std::size_t total = static_cast<std::size_t>(blocks) * 64;
  std::memset(bytes, 0, total);  // the key stream is the encryption of zeros
  std::size_t done = 0;
  while (done < total) {
    const int chunk = static_cast<int>(std::min<std::size_t>(total - done, std::size_t{1} << 30));
    int len = 0;
    if (EVP_EncryptUpdate(ctx, bytes + done, &len, bytes + done, chunk) != 1 || len != chunk)
      throw std::runtime_error("prf: EVP_chacha20 failed");
    done += static_cast<std::size_t>(chunk);
  }
}

}  // namespace

void prf_blocks_host(const InputKey& k, uint64_t stream, uint64_t first, uint64_t blocks, uint64_t* out) {
  static_assert(sizeof(uint64_t) == 8, "64-bit words");
  unsigned char key[32];
  for (int i = 0; i < 8; ++i) le32(key + 4 * i, k.w[i]);
  thread_local std::unique_ptr<EVP_CIPHER_CTX, CtxFree> ctx(EVP_CIPHER_CTX_new());
  if (!ctx) throw std::runtime_error("prf: EVP_CIPHER_CTX_new failed");
  while (blocks > 0) {
    // Up to the next wrap of the low counter word.
    const uint64_t to_wrap = (uint64_t{1} << 32) - (first & 0xffffffffull);
    const uint64_t n = blocks < to_wrap ? blocks : to_wrap;
    run(ctx.get(), key, stream, first, n, out);
    out += n * 8;
    first += n;
    blocks -= n;
  }
  // The words are little-endian bytes of the key stream; on a big-endian host they would need swapping.
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the PRF's words are little-endian");
}

}  // namespace khive
