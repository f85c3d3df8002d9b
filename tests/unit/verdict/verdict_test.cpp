// The verdict's vocabulary: every value's name parses back to it, names are unique, unknown names are refused (never
// read as another value), and JSON carries the names.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "khive/verdict/verdict.hpp"

namespace khive {
namespace {

// Every value of an enum whose values are 0..last, with its name and parser: names round-trip and are distinct.
template <typename E, typename Name, typename Parse>
void names_round_trip(E last, Name name, Parse parse) {
  std::set<std::string> seen;
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    const E v = static_cast<E>(i);
    const std::string n = name(v);
    EXPECT_NE(n, "?") << "value " << i << " has no name";
    EXPECT_TRUE(seen.insert(n).second) << "two values named " << n;
    ASSERT_TRUE(parse(n).has_value()) << n;
    EXPECT_EQ(*parse(n), v) << n;
    EXPECT_EQ(nlohmann::json(v), n);  // JSON writes the name, never the number
    EXPECT_EQ(nlohmann::json(n).get<E>(), v);
  }
  EXPECT_FALSE(parse("no such name"));
  EXPECT_FALSE(parse(""));
  EXPECT_FALSE(parse(std::string(name(last)) + " "));  // exact, not a prefix or a trimmed match
}

TEST(Vocabulary, CheckNamesRoundTrip) {
  names_round_trip(Check::acceptance, check_name, parse_check);
  EXPECT_STREQ(check_name(Check::anti_caching), "anti-caching");
  EXPECT_STREQ(check_name(Check::timed_outputs), "timed outputs");
}

TEST(Vocabulary, ReasonNamesRoundTrip) { names_round_trip(Reason::faster_than_sol, reason_name, parse_reason); }

TEST(Vocabulary, EvalStatusNamesRoundTrip) {
  names_round_trip(EvalStatus::unsupported, eval_status_name, parse_eval_status);
  EXPECT_STREQ(eval_status_name(EvalStatus::accepted), "accepted");
}

TEST(Vocabulary, StandingNamesRoundTripAndOnlyLeaderAndBackupAreAccepted) {
  names_round_trip(Standing::pending, standing_name, parse_standing);
  // run.db's and events.jsonl's words, unchanged since they were strings.
  EXPECT_EQ(parse_standing("leader"), Standing::leader);
  EXPECT_EQ(parse_standing("backup"), Standing::backup);
  EXPECT_EQ(parse_standing("rejected"), Standing::rejected);
  EXPECT_EQ(parse_standing("error"), Standing::error);
  EXPECT_EQ(parse_standing("pending"), Standing::pending);
  EXPECT_FALSE(parse_standing("Leader"));
  EXPECT_TRUE(accepted(Standing::leader));
  EXPECT_TRUE(accepted(Standing::backup));
  EXPECT_FALSE(accepted(Standing::rejected));
  EXPECT_FALSE(accepted(Standing::error));
  EXPECT_FALSE(accepted(Standing::pending));
}

TEST(Vocabulary, UnknownNamesInJsonAreErrorsSayingWhatWasExpected) {
  try {
    (void)nlohmann::json("leeder").get<Standing>();
    FAIL() << "an unknown standing was read";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'leeder'"), std::string::npos) << m;
    EXPECT_NE(m.find("leader, backup, rejected, error, pending"), std::string::npos) << m;
  }
  EXPECT_THROW((void)nlohmann::json(3).get<Check>(), std::invalid_argument);  // a number is not a check's name
  EXPECT_THROW((void)nlohmann::json("done").get<EvalStatus>(), std::invalid_argument);
}

TEST(Vocabulary, RejectionJsonRoundTrip) {
  Rejection j{Check::timed_outputs, Reason::timed_output_wrong, "w", "m", "d"};
  Rejection back = Rejection::from_json(j.to_json());
  EXPECT_EQ(back.check, Check::timed_outputs);
  EXPECT_EQ(back.reason, Reason::timed_output_wrong);
  EXPECT_EQ(back.workload, "w");
  EXPECT_EQ(back.diagnosis, "d");
  EXPECT_EQ(j.to_json()["check_name"], "timed outputs");
  EXPECT_EQ(j.to_json()["check"], 9);  // eval.json's numbered check (docs/eval-json.md)
  EXPECT_THROW(Rejection::from_json({{"check", 5}, {"reason", "made_up"}}), std::invalid_argument);
  EXPECT_THROW(Rejection::from_json({{"check", 42}, {"reason", "crash"}}), std::invalid_argument);
}

}  // namespace
}  // namespace khive
