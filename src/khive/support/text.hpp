// Text from outside (a model's reply, a command's output) made safe to keep: valid UTF-8.
//
//   std::size_t bad = make_valid_utf8(reply);   // invalid bytes replaced by U+FFFD; 0 when it was valid
#pragma once
#include <cstddef>
#include <string>

namespace khive {

// Replaces every byte that does not start or continue a well-formed UTF-8 sequence (overlong forms, surrogates
// and code points above U+10FFFF included) with U+FFFD; returns how many bytes were replaced.
std::size_t make_valid_utf8(std::string& s);

}  // namespace khive
