// The project's small text helpers, one definition each: trimming, case, splitting and joining, quoting, and
// human-readable numbers, sizes and times. Also text from outside (a model's reply, a command's output) made safe
// to keep: valid UTF-8.
//
//   trim("  x \r\n") == "x";          lower("H200") == "h200";     join({"a", "b"}) == "a, b"
//   split_ws(" a  b ") == {"a", "b"};   split_lines("a\nb\n") == {"a", "b"}
//   quote("M") == "\"M\"";             real_text(0.1) == "0.1"       tail("abcdef", 3) == "...def"
//   bytes_text(1536) == "1.5 KiB";     human_bytes(1536) == "1.5 kB"  time_text(0.0012) == "1.200 ms"
//   std::size_t bad = make_valid_utf8(reply);   // invalid bytes replaced by U+FFFD; 0 when it was valid
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace khive {

// s without leading and trailing white space (space, tab, CR, LF, FF, VT).
std::string trim(std::string_view s);
// The same as a view into s (for parsers that keep views of a buffer that outlives them).
std::string_view trim_view(std::string_view s);
// s in ASCII lower case.
std::string lower(std::string s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);

// The words of s (split at runs of white space).
std::vector<std::string> split_ws(const std::string& s);
// The lines of s without their '\n'; a final '\n' ends the last line rather than starting an empty one.
std::vector<std::string> split_lines(std::string_view s);
// s up to its first '\n'.
std::string first_line(const std::string& s);
// The last n characters of s after "...", or s when it is no longer.
std::string tail(const std::string& s, std::size_t n);
std::string join(const std::vector<std::string>& v, const char* sep = ", ");
// s in double quotes, as error messages show a name: "\"M\"".
std::string quote(const std::string& s);
// [A-Za-z_][A-Za-z0-9_]*: a C (and Python) identifier.
bool is_identifier(std::string_view s);
// A character of an identifier: [A-Za-z0-9_].
bool is_ident_char(char c);

// The shortest spelling of v that reads back as v ("0.1", not "0.10000000000000001").
std::string real_text(double v);
// Bytes in binary units, one decimal: "512 bytes", "1.5 KiB", "256 GiB".
std::string bytes_text(int64_t bytes);
// Bytes in decimal units: "1.2 GB", "340.0 MB", "12.0 kB", "512 B".
std::string human_bytes(uint64_t bytes);
// Seconds in the unit that suits them: "1.500 s", "1.200 ms", "12.50 us".
std::string time_text(double s);
// The current UTC time by strftime format (ISO 8601 by default: "2026-11-03T12:00:00Z").
std::string utc_now(const char* format = "%Y-%m-%dT%H:%M:%SZ");

// Replaces every byte that does not start or continue a well-formed UTF-8 sequence (overlong forms, surrogates
// and code points above U+10FFFF included) with U+FFFD; returns how many bytes were replaced.
std::size_t make_valid_utf8(std::string& s);

}  // namespace khive
