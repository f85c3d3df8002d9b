#include "khive/support/hash.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <fstream>
#include <stdexcept>

namespace khive {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("sha256: OpenSSL digest init failed");
}
Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

Sha256& Sha256::update(const void* data, std::size_t n) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data, n);
  return *this;
}
Sha256& Sha256::update(std::string_view data) { return update(data.data(), data.size()); }
Sha256& Sha256::field(std::string_view data) {
  uint64_t n = data.size();
  update(&n, sizeof n);
  return update(data);
}
std::string Sha256::hex() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), md, &len);
  return to_hex(std::string_view(reinterpret_cast<const char*>(md), len));
}

std::string sha256_hex(std::string_view data) { return Sha256().update(data).hex(); }

std::string sha256_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(p.string() + ": cannot read");
  Sha256 h;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    h.update(buf, static_cast<std::size_t>(in.gcount()));
  }
  return h.hex();
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
            data.size(), md, &len))
    throw std::runtime_error("hmac: OpenSSL HMAC failed");
  return std::string(reinterpret_cast<const char*>(md), len);
}

std::string hmac_sha256_hex(std::string_view key, std::string_view data) { return to_hex(hmac_sha256(key, data)); }

std::string random_bytes(std::size_t n) {
  std::string s(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(s.data()), static_cast<int>(n)) != 1)
    throw std::runtime_error("random_bytes: OpenSSL RAND_bytes failed");
  return s;
}

std::string to_hex(std::string_view bytes) {
  static const char* d = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}

bool equal_constant_time(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char acc = 0;
  for (std::size_t i = 0; i < a.size(); ++i) acc |= static_cast<unsigned char>(a[i] ^ b[i]);
  return acc == 0;
}

std::string candidate_hash(const std::string& ext, const std::string& source) {
  Sha256 h;
  h.field(ext).field(source);
  return h.hex();
}

}  // namespace khive
