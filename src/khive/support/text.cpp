#include "khive/support/text.hpp"

namespace khive {
namespace {

// Length of the well-formed UTF-8 sequence at s[i], 0 when the byte there does not start one (RFC 3629).
std::size_t sequence_length(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;   // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}

}  // namespace

std::size_t make_valid_utf8(std::string& s) {
  std::size_t bad = 0, i = 0;
  for (; i < s.size(); ++i)
    if (static_cast<unsigned char>(s[i]) >= 0x80) break;
  if (i == s.size()) return 0;   // ASCII: the common case, untouched
  std::string out = s.substr(0, i);
  out.reserve(s.size() + 16);
  while (i < s.size()) {
    const std::size_t n = sequence_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++bad;
      ++i;
      continue;
    }
    out.append(s, i, n);
    i += n;
  }
  if (bad) s.swap(out);
  return bad;
}

}  // namespace khive
