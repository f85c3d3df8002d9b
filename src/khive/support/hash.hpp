// Content hashes (identity of tasks, candidates and build products) and keyed MACs (the judge's channel).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace khive {

// Incremental SHA-256; hex() returns 64 lowercase hex digits.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  Sha256& update(std::string_view data);
  Sha256& update(const void* data, std::size_t n);
  // Feeds a length-prefixed field so that ("ab","c") and ("a","bc") hash differently.
  Sha256& field(std::string_view data);
  std::string hex();

 private:
  void* ctx_;
};

std::string sha256_hex(std::string_view data);
std::string sha256_file(const std::filesystem::path& p);  // throws std::runtime_error if unreadable

// HMAC-SHA256(key, data): the 32 raw bytes, or as 64 hex digits.
std::string hmac_sha256(std::string_view key, std::string_view data);
std::string hmac_sha256_hex(std::string_view key, std::string_view data);
// Cryptographically random bytes (OpenSSL RAND_bytes).
std::string random_bytes(std::size_t n);
std::string to_hex(std::string_view bytes);

// A candidate's identity: sha256 over its extension and its source (the same kernel proposed twice is evaluated
// once; recordings match a source by it).
std::string candidate_hash(const std::string& ext, const std::string& source);

// Constant-time comparison of two strings of equal length.
bool equal_constant_time(std::string_view a, std::string_view b);

}  // namespace khive
