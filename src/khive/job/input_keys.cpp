#include "khive/job/input_keys.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "khive/support/hash.hpp"

namespace khive {
namespace {

// Domain-separated HMAC-SHA256 of the secret: the purpose's name, then the fields (length-prefixed by the caller's
// fixed widths), so no two purposes or field lists can give the same message.
std::array<unsigned char, 32> mac(const InputSecret& s, const std::string& purpose, const std::vector<unsigned char>& fields) {
  std::vector<unsigned char> msg(purpose.begin(), purpose.end());
  msg.push_back(0);
  msg.insert(msg.end(), fields.begin(), fields.end());
  std::array<unsigned char, 32> out{};
  unsigned len = 0;
  if (!HMAC(EVP_sha256(), s.bytes.data(), static_cast<int>(s.bytes.size()), msg.data(), msg.size(), out.data(), &len) || len != out.size())
    throw std::runtime_error("input keys: HMAC-SHA256 failed");
  return out;
}

void put64(std::vector<unsigned char>& v, uint64_t x) {
  for (int i = 0; i < 8; ++i) v.push_back(static_cast<unsigned char>(x >> (8 * i)));
}

InputKey key_of(const std::array<unsigned char, 32>& m) {
  InputKey k;
  for (int i = 0; i < 8; ++i)
    k.w[i] = static_cast<uint32_t>(m[4 * i]) | static_cast<uint32_t>(m[4 * i + 1]) << 8 | static_cast<uint32_t>(m[4 * i + 2]) << 16 |
             static_cast<uint32_t>(m[4 * i + 3]) << 24;
  return k;
}

uint64_t u64_of(const std::array<unsigned char, 32>& m) {
  uint64_t x = 0;
  for (int i = 0; i < 8; ++i) x |= static_cast<uint64_t>(m[i]) << (8 * i);
  return x;
}

InputSecret of_digest(const std::string& hex) { return InputSecret::from_hex(hex); }

}  // namespace

InputSecret InputSecret::random() {
  InputSecret s;
  if (RAND_bytes(s.bytes.data(), static_cast<int>(s.bytes.size())) != 1) throw std::runtime_error("input secret: RAND_bytes failed");
  return s;
}

InputSecret InputSecret::reproducible(uint64_t seed) {
  Sha256 h;
  h.field("khive/reproducible-input-secret/v7").field(std::to_string(seed));
  return of_digest(h.hex());
}

InputSecret InputSecret::from_legacy(uint64_t v) {
  Sha256 h;
  h.field("khive/legacy-input-secret/v7").field(std::to_string(v));
  return of_digest(h.hex());
}

InputSecret InputSecret::from_hex(const std::string& hex) {
  if (hex.size() != 64) throw std::invalid_argument("input_secret: expected 64 hex digits, got " + std::to_string(hex.size()) + " characters");
  InputSecret s;
  for (std::size_t i = 0; i < 32; ++i) {
    auto nib = [&](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      throw std::invalid_argument(std::string("input_secret: '") + c + "' is not a hex digit");
    };
    s.bytes[i] = static_cast<unsigned char>(nib(hex[2 * i]) << 4 | nib(hex[2 * i + 1]));
  }
  return s;
}

std::string InputSecret::hex() const { return to_hex(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())); }

std::string InputSecret::fingerprint() const {
  Sha256 h;
  h.field("khive/input-secret-fingerprint").update(bytes.data(), bytes.size());
  return h.hex().substr(0, 16);
}

InputDraw InputKeys::draw(const InputSpec& spec) const {
  InputDraw d;
  std::vector<unsigned char> f;
  put64(f, spec.seed);
  d.data = key_of(mac(secret_, "khive/v7/input-data", f));
  if (spec.perturb_seed) {
    std::vector<unsigned char> p;
    put64(p, spec.seed);
    put64(p, spec.perturb_seed);
    d.perturb = key_of(mac(secret_, "khive/v7/input-perturbation", p));
    d.perturbed = true;
    d.fraction = spec.fraction;
  }
  return d;
}

uint64_t InputKeys::sample_key(const InputSpec& spec) const {
  std::vector<unsigned char> f;
  put64(f, spec.seed);
  put64(f, spec.perturb_seed);
  uint64_t bits = 0;
  std::memcpy(&bits, &spec.fraction, sizeof bits);
  put64(f, bits);
  return u64_of(mac(secret_, "khive/v7/golden-sample", f));
}

uint64_t InputKeys::call_label(CallKind kind, uint64_t seed_base, const std::string& uuid, uint64_t k) const {
  std::vector<unsigned char> f;
  put64(f, seed_base);
  put64(f, k);
  put64(f, uuid.size());
  f.insert(f.end(), uuid.begin(), uuid.end());
  const uint64_t x = u64_of(mac(secret_, kind == CallKind::timed ? "khive/v7/timed-call" : "khive/v7/warmup-call", f));
  return x | (1ull << 63);  // never 0, never a correctness label (seed_base + small)
}

}  // namespace khive
