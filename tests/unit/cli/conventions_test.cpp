// The command line's conventions (cli/conventions.hpp): the validators' messages, --arch, did-you-mean, and what
// parse_cli and run_help return and print on a small command tree shaped like khive's.
#include "khive/cli/conventions.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace khive {
namespace {

// The validator's message for v ("" when v is accepted).
std::string check(CLI::Validator v, std::string s) { return v(s); }

TEST(CliValidators, IntRangeNamesTheRangeAndTheValue) {
  auto v = int_range(1, 100);
  EXPECT_EQ(check(v, "1"), "");
  EXPECT_EQ(check(v, "100"), "");
  EXPECT_EQ(check(v, "0"), "expected an integer from 1 to 100, got '0'");
  EXPECT_EQ(check(v, "101"), "expected an integer from 1 to 100, got '101'");
  for (const char* bad : {"", "abc", "3x", "1e2", "99999999999999999999"}) EXPECT_NE(check(v, bad), "") << bad;
}

TEST(CliValidators, NonNegativeRefusesNegativesAndNan) {
  auto v = non_negative();
  for (const char* ok : {"0", "1.5", "1e3"}) EXPECT_EQ(check(v, ok), "") << ok;
  for (const char* bad : {"-1", "nan", "", "2s", "1e999"})
    EXPECT_EQ(check(v, bad), fmt::format("expected a number >= 0, got '{}'", bad)) << bad;
}

TEST(CliValidators, SeedIsAWholeNumberUpTo2To64) {
  auto v = seed_value();
  for (const char* ok : {"0", "11", "18446744073709551615"}) EXPECT_EQ(check(v, ok), "") << ok;
  // CLI11 alone reads "-1" and 10^23 as 2^64 - 1: each must be refused, not wrapped.
  for (const char* bad : {"-1", "18446744073709551616", "100000000000000000000000", "1e3", " 1", "+1", ""})
    EXPECT_NE(check(v, bad), "") << bad;
}

TEST(CliValidators, BackendIsCpuOrCuda) {
  auto v = backend_value();
  EXPECT_EQ(check(v, "cpu"), "");
  EXPECT_EQ(check(v, "cuda"), "");
  EXPECT_EQ(check(v, "gpu"), "expected cpu or cuda, got 'gpu'");
}

TEST(CliArch, ShortNamesBecomeGencodeFlags) {
  EXPECT_EQ(cuda_arch_flags("sm_90a"), "-gencode=arch=compute_90a,code=sm_90a");
  EXPECT_EQ(cuda_arch_flags("90a"), "-gencode=arch=compute_90a,code=sm_90a");
  EXPECT_EQ(cuda_arch_flags("sm_80"), "-gencode=arch=compute_80,code=sm_80");
  EXPECT_EQ(cuda_arch_flags("sm_100a"), "-gencode=arch=compute_100a,code=sm_100a");
  // nvcc flags pass as they are.
  EXPECT_EQ(cuda_arch_flags("-gencode=arch=compute_89,code=sm_89"), "-gencode=arch=compute_89,code=sm_89");
  for (const char* bad : {"", "sm_9", "hopper", "sm_90a;rm", "sm_9000"})
    EXPECT_THROW(cuda_arch_flags(bad), CLI::ValidationError) << bad;
}

TEST(CliDidYouMean, ClosestNameWithinAThirdOfItsLength) {
  const std::vector<std::string> cmds = {"optimize", "eval", "bench", "tasks", "evaluate-pending"};
  EXPECT_EQ(did_you_mean("optimze", cmds), "optimize");
  EXPECT_EQ(did_you_mean("evl", cmds), "eval");
  EXPECT_EQ(did_you_mean("opt", cmds), "optimize");  // a prefix of three or more letters
  EXPECT_EQ(did_you_mean("xyzzy", cmds), "");
  EXPECT_EQ(did_you_mean("--seds", {"--seeds", "--samples"}), "--seeds");
  EXPECT_EQ(did_you_mean("anything", {}), "");
}

// A command tree like khive's: `eval` with --seeds (1 to 100) and a positional task, `cache prune`.
struct Cli {
  CLI::App app{"khive test"};
  int seeds = 3;
  std::string task;
  HelpCli help;
  Cli() {
    auto* eval = app.add_subcommand("eval", "Evaluate a kernel");
    eval->add_option("--seeds", seeds, "correctness seeds")->check(int_range(1, 100));
    eval->add_option("task", task, "the task directory");
    app.add_subcommand("cache", "The cache")->add_subcommand("prune", "Remove old entries");
    app.require_subcommand(0, 1);
    help = finish_cli(app);
  }
  int parse(std::vector<std::string> words) {
    words.insert(words.begin(), "khive");
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    return parse_cli(app, static_cast<int>(argv.size()), argv.data());
  }
  // parse(), with what it printed on stderr kept in `err`.
  int parse_err(std::vector<std::string> words) {
    testing::internal::CaptureStderr();
    const int rc = parse(std::move(words));
    err = testing::internal::GetCapturedStderr();
    return rc;
  }
  std::string err;
};

TEST(CliParse, AGoodLineGoesOn) {
  Cli c;
  EXPECT_EQ(c.parse({"eval", "--seeds", "5", "tasks/x"}), -1);
  EXPECT_EQ(c.seeds, 5);
  EXPECT_EQ(c.task, "tasks/x");
}

TEST(CliParse, HelpExitsZero) {
  Cli c;
  testing::internal::CaptureStdout();
  EXPECT_EQ(c.parse({"eval", "--help"}), exit_code::ok);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("--seeds"), std::string::npos) << out;
  EXPECT_NE(out.find("1 to 100"), std::string::npos) << out;  // the range, as the validator describes it
}

TEST(CliParse, AMisspeltOptionIsAUsageErrorWithASuggestion) {
  Cli c;
  EXPECT_EQ(c.parse_err({"eval", "--seds", "5"}), exit_code::usage);
  EXPECT_NE(c.err.find("did you mean '--seeds'"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("khive eval --help"), std::string::npos) << c.err;
}

TEST(CliParse, AMisspeltCommandIsAUsageErrorWithASuggestion) {
  Cli c;
  EXPECT_EQ(c.parse_err({"evl", "tasks/x"}), exit_code::usage);
  EXPECT_NE(c.err.find("did you mean 'eval'"), std::string::npos) << c.err;
}

TEST(CliParse, AValueOutOfRangeNamesTheRange) {
  Cli c;
  EXPECT_EQ(c.parse_err({"eval", "--seeds", "0"}), exit_code::usage);
  EXPECT_NE(c.err.find("expected an integer from 1 to 100, got '0'"), std::string::npos) << c.err;
}

TEST(CliFinish, BuildingCommandsTakeArchAndTheFooterListsExitCodes) {
  Cli c;
  const CLI::App* eval = c.app.get_subcommand("eval");
  EXPECT_NO_THROW(eval->get_option("--arch"));                                             // eval builds CUDA code
  EXPECT_THROW(c.app.get_subcommand("cache")->get_option("--arch"), CLI::OptionNotFound);  // cache does not
  EXPECT_NE(c.app.get_footer().find("Exit codes"), std::string::npos);
  EXPECT_NE(c.app.get_footer().find("KHIVE_CACHE"), std::string::npos);
}

TEST(CliHelp, HelpOfACommandAndOfAnUnknownOne) {
  Cli c;
  ASSERT_EQ(c.parse({"help", "cache", "prune"}), -1);
  ASSERT_TRUE(c.help.selected());
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_help(c.app, c.help), exit_code::ok);
  EXPECT_NE(testing::internal::GetCapturedStdout().find("Remove old entries"), std::string::npos);

  // A bare `khive help` lists the commands (App::help() alone would show the help of `help`, the selected one).
  Cli top;
  ASSERT_EQ(top.parse({"help"}), -1);
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_help(top.app, top.help), exit_code::ok);
  const std::string list = testing::internal::GetCapturedStdout();
  EXPECT_NE(list.find("Evaluate a kernel"), std::string::npos) << list;
  EXPECT_NE(list.find("Exit codes"), std::string::npos) << list;

  Cli d;
  ASSERT_EQ(d.parse({"help", "evl"}), -1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_help(d.app, d.help), exit_code::usage);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("no command 'evl'"), std::string::npos) << err;
  EXPECT_NE(err.find("did you mean 'eval'"), std::string::npos) << err;
}

}  // namespace
}  // namespace khive
