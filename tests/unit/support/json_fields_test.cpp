// The shared JSON reader: each accessor's error names the file, the field (after the prefix) and what was
// expected, with the offending value described; a raise function decides the exception type.
#include "khive/support/json_fields.hpp"

#include <gtest/gtest.h>

#include "khive/support/text.hpp"

using namespace khive;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

// The FieldError r throws for f, or a failed expectation when it throws none.
template <class F>
FieldError error_of(F&& f) {
  try {
    f();
  } catch (const FieldError& e) {
    return e;
  }
  ADD_FAILURE() << "no FieldError thrown";
  return FieldError("", "", "");
}

struct CustomError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void raise_custom(const std::string& file, const std::string& field, const std::string& expected,
                               const std::string& got) {
  throw CustomError(file + "|" + field + "|" + expected + "|" + got);
}

}  // namespace

TEST(JsonFields, ErrorNamesFileFieldExpectationAndValue) {
  const JsonFields r("cfg.json", "line 3: ");
  const FieldError e = error_of([&] { r.string(json(42), "model"); });
  EXPECT_EQ(e.file, "cfg.json");
  EXPECT_EQ(e.field, "line 3: model");
  EXPECT_EQ(e.expected, "a non-empty string");
  EXPECT_EQ(e.got, "42");
  EXPECT_STREQ(e.what(), "cfg.json: line 3: model: expected a non-empty string, got 42");
  // Without a got the message ends at the expectation.
  EXPECT_STREQ(error_of([&] { r.fail("x", "something"); }).what(), "cfg.json: line 3: x: expected something");
}

TEST(JsonFields, TypedAccessors) {
  const OrderedJsonFields r("f.json");
  const ojson j =
      ojson::parse(R"({"s": "a", "e": "", "n": 1.5, "i": 4096, "f": 4096.0, "b": true, "a": ["x", "y"], "o": {}})");
  EXPECT_EQ(r.string(j["s"], "s"), "a");
  EXPECT_EQ(r.string(j["e"], "e", false), "");
  EXPECT_EQ(error_of([&] { r.string(j["e"], "e"); }).got, "\"\"");
  EXPECT_DOUBLE_EQ(r.number(j["n"], "n"), 1.5);
  EXPECT_EQ(r.integer(j["i"], "i"), 4096);
  EXPECT_EQ(r.integer(j["f"], "f"), 4096);  // an integral float counts, as pydantic reads it
  EXPECT_EQ(error_of([&] { r.integer(j["n"], "n"); }).expected, "an integer");
  EXPECT_TRUE(r.boolean(j["b"], "b"));
  EXPECT_EQ(error_of([&] { r.boolean(j["s"], "s"); }).expected, "true or false");
  EXPECT_EQ(r.strings(j["a"], "a"), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(error_of([&] { r.strings(ojson::parse(R"(["x", 3])"), "tags"); }).field, "tags[1]");
  EXPECT_EQ(&r.object(j["o"], "o"), &j["o"]);
  EXPECT_EQ(error_of([&] { r.array(j["o"], "o"); }).got, "an empty object");
}

TEST(JsonFields, RangesSayTheRange) {
  const JsonFields r("c.toml");
  EXPECT_DOUBLE_EQ(r.number_in(json(0.5), "temperature", 0, 2), 0.5);
  const FieldError e = error_of([&] { r.number_in(json(5), "temperature", 0, 2); });
  EXPECT_STREQ(e.what(), "c.toml: temperature: expected a number in [0, 2], got 5");
  EXPECT_EQ(r.integer_in(json(16), "max_tokens", 16, 1 << 21), 16);
  EXPECT_EQ(error_of([&] { r.integer_in(json(8), "max_tokens", 16, 1 << 21); }).expected,
            "an integer in [16, 2097152]");
  EXPECT_EQ(error_of([&] { r.integer_in(json(1.5), "n", 0, 9); }).got, "1.5");
  EXPECT_EQ(error_of([&] { r.integer_in(json("3"), "n", 0, 9); }).got, "\"3\"");
}

TEST(JsonFields, FindSkipsAbsentAndNull) {
  const json j = json::parse(R"({"a": 1, "n": null})");
  EXPECT_NE(JsonFields::find(j, "a"), nullptr);
  EXPECT_EQ(JsonFields::find(j, "n"), nullptr);
  EXPECT_EQ(JsonFields::find(j, "z"), nullptr);
  EXPECT_EQ(JsonFields::find(json(3), "a"), nullptr);  // not an object
  EXPECT_TRUE(JsonFields::has(j, "a"));
  EXPECT_FALSE(JsonFields::has(j, "n"));
}

TEST(JsonFields, KnownKeysNameTheTypoAndTheList) {
  const OrderedJsonFields r("gemm/definition.json");
  const ojson cost = ojson::parse(R"({"flops": "1", "bites": "2"})");
  const FieldError e = error_of([&] { r.known_keys(cost, "khive.cost", {"flops", "bytes", "unit"}); });
  EXPECT_EQ(e.field, "khive.cost.bites");
  EXPECT_EQ(e.expected, "a known key of khive.cost (flops, bytes, unit)");
  EXPECT_EQ(e.got, "\"bites\"");
  EXPECT_EQ(OrderedJsonFields::unknown_key(cost, {"flops", "bites"}), std::nullopt);
  EXPECT_EQ(OrderedJsonFields::unknown_key(cost, {"flops"}), "bites");
}

TEST(JsonFields, DescribeShowsKindAndValue) {
  EXPECT_EQ(describe_json(json(nullptr)), "null");
  EXPECT_EQ(describe_json(json(0.1)), "0.1");
  EXPECT_EQ(describe_json(json::parse("[16, 16]")), "an array");
  EXPECT_EQ(describe_json(json::array()), "an empty array");
  EXPECT_EQ(describe_json(json(std::string(100, 'x'))).size(), 61u);  // cut at 60 characters, quote kept
  const std::string long_obj = describe_json(json::parse(R"({"a_long_key": "a long value", "another": [1, 2, 3, 4]})"));
  EXPECT_EQ(long_obj, "an object");
}

TEST(JsonFields, AReaderMayShowValuesAsTheirJsonText) {
  const JsonFields r("f.json", "", nullptr, literal_json<json>);
  EXPECT_EQ(r.got(json::array()), "[]");
  const FieldError e = error_of([&] { r.object(json::parse("[16, 16]"), "tiles"); });
  EXPECT_EQ(e.got, "[16,16]");
  EXPECT_EQ(JsonFields("f.json").got(json::array()), "an empty array");
}

TEST(JsonFields, RaiseChoosesTheExceptionType) {
  const JsonFields r("f.json", "p: ", raise_custom);
  try {
    r.number(json("x"), "n");
    FAIL() << "no exception";
  } catch (const CustomError& e) {
    EXPECT_STREQ(e.what(), "f.json|p: n|a number|\"x\"");
  }
}
