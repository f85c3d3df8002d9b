// The shared validating JSON reader (json_fields.hpp).
#include "khive/support/json_fields.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

#include <fmt/format.h>

#include "khive/support/text.hpp"

namespace khive {

namespace {
std::string field_error_text(const std::string& file, const std::string& field, const std::string& expected,
                             const std::string& got) {
  std::string s = file + ": " + field + ": expected " + expected;
  if (!got.empty()) s += ", got " + got;
  return s;
}
}  // namespace

FieldError::FieldError(std::string file_, std::string field_, std::string expected_, std::string got_)
    : std::runtime_error(field_error_text(file_, field_, expected_, got_)), file(std::move(file_)),
      field(std::move(field_)), expected(std::move(expected_)), got(std::move(got_)) {}

template <class Json>
std::string describe_json(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return j.template get<bool>() ? "true" : "false";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return j.dump();
    case Json::value_t::number_float: return real_text(j.template get<double>());
    case Json::value_t::string: {
      std::string s = j.dump();
      if (s.size() > 60) s = s.substr(0, 57) + "...\"";
      return s;
    }
    case Json::value_t::array: return j.empty() ? "an empty array" : "an array";
    case Json::value_t::object: return j.empty() ? "an empty object" : "an object";
    default: return "an unsupported JSON value";
  }
}

template <class Json>
void BasicJsonFields<Json>::fail(const std::string& field, const std::string& expected, const std::string& got) const {
  if (raise_) raise_(file_, prefix_ + field, expected, got);
  throw FieldError(file_, prefix_ + field, expected, got);
}

template <class Json>
const Json* BasicJsonFields<Json>::find(const Json& obj, const std::string& key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

template <class Json>
std::optional<std::string> BasicJsonFields<Json>::unknown_key(const Json& obj,
                                                              const std::vector<std::string>& allowed) {
  for (auto it = obj.begin(); obj.is_object() && it != obj.end(); ++it)
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end()) return it.key();
  return std::nullopt;
}

template <class Json>
const Json& BasicJsonFields<Json>::object(const Json& j, const std::string& field) const {
  if (!j.is_object()) fail(field, "an object", got(j));
  return j;
}

template <class Json>
const Json& BasicJsonFields<Json>::array(const Json& j, const std::string& field) const {
  if (!j.is_array()) fail(field, "an array", got(j));
  return j;
}

template <class Json>
std::string BasicJsonFields<Json>::string(const Json& j, const std::string& field, bool non_empty) const {
  if (!j.is_string()) fail(field, non_empty ? "a non-empty string" : "a string", got(j));
  std::string s = j.template get<std::string>();
  if (non_empty && s.empty()) fail(field, "a non-empty string", "\"\"");
  return s;
}

template <class Json>
bool BasicJsonFields<Json>::boolean(const Json& j, const std::string& field) const {
  if (!j.is_boolean()) fail(field, "true or false", got(j));
  return j.template get<bool>();
}

template <class Json>
double BasicJsonFields<Json>::number(const Json& j, const std::string& field) const {
  if (!j.is_number()) fail(field, "a number", got(j));
  return j.template get<double>();
}

template <class Json>
double BasicJsonFields<Json>::number_in(const Json& j, const std::string& field, double lo, double hi) const {
  const std::string expected = fmt::format("a number in [{}, {}]", lo, hi);
  if (!j.is_number()) fail(field, expected, got(j));
  const double v = j.template get<double>();
  if (!(v >= lo && v <= hi)) fail(field, expected, got(j));
  return v;
}

template <class Json>
int64_t BasicJsonFields<Json>::integer(const Json& j, const std::string& field) const {
  if (j.is_number_integer() && !j.is_number_unsigned()) return j.template get<int64_t>();
  if (j.is_number_unsigned()) {
    const uint64_t u = j.template get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) fail(field, "an integer that fits in int64", got(j));
    return static_cast<int64_t>(u);
  }
  if (j.is_number_float()) {
    const double d = j.template get<double>();
    if (std::floor(d) == d && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
  }
  fail(field, "an integer", got(j));
}

template <class Json>
int64_t BasicJsonFields<Json>::integer_in(const Json& j, const std::string& field, int64_t lo, int64_t hi) const {
  const double d = j.is_number() ? j.template get<double>() : 0.0;
  const bool integral = j.is_number_integer() || (j.is_number_float() && std::floor(d) == d);
  if (!integral || d < static_cast<double>(lo) || d > static_cast<double>(hi))
    fail(field, fmt::format("an integer in [{}, {}]", lo, hi), got(j));
  return integer(j, field);
}

template <class Json>
std::vector<std::string> BasicJsonFields<Json>::strings(const Json& j, const std::string& field) const {
  if (!j.is_array()) fail(field, "an array of strings", got(j));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < j.size(); ++i) out.push_back(string(j[i], field + "[" + std::to_string(i) + "]", false));
  return out;
}

template <class Json>
void BasicJsonFields<Json>::known_keys(const Json& obj, const std::string& field,
                                       const std::vector<std::string>& allowed) const {
  if (const auto k = unknown_key(obj, allowed))
    fail(field.empty() ? *k : field + "." + *k,
         "a known key" + std::string(field.empty() ? "" : " of " + field) + " (" + join(allowed) + ")", quote(*k));
}

template class BasicJsonFields<nlohmann::json>;
template class BasicJsonFields<nlohmann::ordered_json>;
template std::string describe_json(const nlohmann::json&);
template std::string describe_json(const nlohmann::ordered_json&);

}  // namespace khive
