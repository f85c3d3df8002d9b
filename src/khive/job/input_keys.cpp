#include "khive/job/input_keys.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "khive/support/hash.hpp"

namespace khive {
namespace {

// Domain-separated HMAC-SHA256 of the secret: the purpose's name and a NUL, then the fields (fixed widths, lengths
// written first where a field varies), so no two purposes or field lists can give the same message.
std::string mac(const InputSecret& s, const std::string& purpose, const std::string& fields) {
  return hmac_sha256(std::string_view(reinterpret_cast<const char*>(s.bytes.data()), s.bytes.size()),
                     purpose + '\0' + fields);
}

void put64(std::string& v, uint64_t x) {
  for (int i = 0; i < 8; ++i) v.push_back(static_cast<char>(x >> (8 * i)));
}

// Little-endian words of the first bytes of a digest.
uint32_t le32_at(const std::string& m, int i) {
  const auto* p = reinterpret_cast<const unsigned char*>(m.data()) + i;
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

InputKey key_of(const std::string& m) {
  InputKey k;
  for (int i = 0; i < 8; ++i) k.w[i] = le32_at(m, 4 * i);
  return k;
}

uint64_t u64_of(const std::string& m) {
  return static_cast<uint64_t>(le32_at(m, 0)) | static_cast<uint64_t>(le32_at(m, 4)) << 32;
}

// A secret that is a public function of a number (reproducible or legacy ones): SHA-256 of the purpose and the number.
InputSecret derived_secret(const char* purpose, uint64_t v) {
  Sha256 h;
  h.field(purpose).field(std::to_string(v));
  return InputSecret::from_hex(h.hex());
}

}  // namespace

InputSecret InputSecret::random() {
  InputSecret s;
  const std::string r = random_bytes(s.bytes.size());
  std::memcpy(s.bytes.data(), r.data(), s.bytes.size());
  return s;
}

InputSecret InputSecret::reproducible(uint64_t seed) {
  return derived_secret("khive/reproducible-input-secret/v7", seed);
}

InputSecret InputSecret::from_legacy(uint64_t v) { return derived_secret("khive/legacy-input-secret/v7", v); }

InputSecret InputSecret::from_hex(const std::string& hex) {
  if (hex.size() != 64)
    throw std::invalid_argument("input_secret: expected 64 hex digits, got " + std::to_string(hex.size()) +
                                " characters");
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

std::string InputSecret::hex() const {
  return to_hex(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

std::string InputSecret::fingerprint() const {
  Sha256 h;
  h.field("khive/input-secret-fingerprint").update(bytes.data(), bytes.size());
  return h.hex().substr(0, 16);
}

InputDraw InputKeys::draw(const InputSpec& spec) const {
  InputDraw d;
  std::string f;
  put64(f, spec.seed);
  d.data = key_of(mac(secret_, "khive/v7/input-data", f));
  if (spec.perturb_seed) {
    std::string p;
    put64(p, spec.seed);
    put64(p, spec.perturb_seed);
    d.perturb = key_of(mac(secret_, "khive/v7/input-perturbation", p));
    d.perturbed = true;
    d.fraction = spec.fraction;
  }
  return d;
}

uint64_t InputKeys::sample_key(const InputSpec& spec) const {
  std::string f;
  put64(f, spec.seed);
  put64(f, spec.perturb_seed);
  uint64_t bits = 0;
  std::memcpy(&bits, &spec.fraction, sizeof bits);
  put64(f, bits);
  return u64_of(mac(secret_, "khive/v7/golden-sample", f));
}

uint64_t InputKeys::call_label(CallKind kind, uint64_t seed_base, const std::string& uuid, uint64_t k) const {
  std::string f;
  put64(f, seed_base);
  put64(f, k);
  put64(f, uuid.size());
  f += uuid;
  const uint64_t x = u64_of(mac(secret_, kind == CallKind::timed ? "khive/v7/timed-call" : "khive/v7/warmup-call", f));
  return x | (1ull << 63);  // never 0, never a correctness label (seed_base + small)
}

}  // namespace khive
