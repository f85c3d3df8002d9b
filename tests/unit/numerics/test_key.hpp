// A fixed ChaCha20 key per number, for tests (the judge's keys come from job/input_keys.hpp).
#pragma once
#include <cstdint>

#include "khive/numerics/prf.hpp"

inline khive::InputKey test_key(uint64_t n) {
  khive::InputKey k;
  k.w[0] = static_cast<uint32_t>(n);
  k.w[1] = static_cast<uint32_t>(n >> 32);
  k.w[7] = 0x7E57u;
  return k;
}
