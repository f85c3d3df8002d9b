// gate.hpp's counter arithmetic: CUDA's cyclic comparison, and the value that releases a failed batch's waits.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "khive/executor/gate.hpp"

using namespace khive::exec;

TEST(Gate, WaitsCompareCyclically) {
  EXPECT_TRUE(gate_passes(5, 5));
  EXPECT_TRUE(gate_passes(6, 5));
  EXPECT_FALSE(gate_passes(4, 5));
  EXPECT_FALSE(gate_passes(0, 1)) << "a fresh region holds 0: the first call (1) waits";
  EXPECT_TRUE(gate_passes(2u, 0xfffffff0u)) << "past the wrap is after";
  EXPECT_FALSE(gate_passes(0xffffffffu, 3)) << "all ones reads as before a small value";
}

TEST(Gate, TheReleaseValuePassesEveryWaitHandedOut) {
  // Values handed out so far: [first, next). The release must pass all of them, wherever the counter is in its cycle.
  for (uint32_t first : {1u, 1000u, 0x7ffffff0u, 0xfffffff0u}) {
    const uint32_t next = first + 600;
    const uint32_t r = gate_release_value(next);
    for (uint32_t v = first; v != next; ++v) ASSERT_TRUE(gate_passes(r, v)) << first << " " << v;
  }
}

TEST(Gate, PrimerCountParsesStrictly) {
  EXPECT_EQ(primer_blocks_per_sm(nullptr), kPrimerBlocksPerSm) << "unset: the default";
  EXPECT_EQ(primer_blocks_per_sm(""), kPrimerBlocksPerSm);
  EXPECT_EQ(primer_blocks_per_sm("0"), 0) << "0 turns it off";
  EXPECT_EQ(primer_blocks_per_sm("4"), 4);
  EXPECT_EQ(primer_blocks_per_sm("32"), kPrimerMaxBlocksPerSm);
  for (const char* bad : {"33", "-1", "2x", " 2", "1.5", "off", "99999999999999999999"})
    EXPECT_FALSE(primer_blocks_per_sm(bad).has_value()) << bad;
  static_assert(primer_blocks_per_sm("3") == 3, "usable at compile time");
}

TEST(Gate, TrialSwitchesAreKnownWordsOnly) {
  EXPECT_FALSE(unknown_exec_trial(nullptr)) << "unset";
  EXPECT_FALSE(unknown_exec_trial(""));
  EXPECT_FALSE(unknown_exec_trial("no_sandbox"));
  EXPECT_FALSE(unknown_exec_trial("keep_l2_limit,go_after_launch,lazy_modules,no_sandbox"));
  EXPECT_EQ(unknown_exec_trial("no_sandbx"), "no_sandbx") << "a misspelt switch is named";
  EXPECT_EQ(unknown_exec_trial("no_sandbox,lazy"), "lazy") << "the first unknown word, wherever it is";
  EXPECT_EQ(unknown_exec_trial(",no_sandbox"), "") << "an empty word is not a switch";
  EXPECT_EQ(unknown_exec_trial("NO_SANDBOX"), "NO_SANDBOX") << "case matters";
}

TEST(Gate, ProfilerCommandLineSplitsOnSpaces) {
  EXPECT_TRUE(profiler_argv(nullptr).words.empty()) << "unset: no profiler";
  EXPECT_TRUE(profiler_argv("   ").words.empty()) << "blank: no profiler";
  const auto p = profiler_argv("  /usr/local/cuda/bin/ncu  --cache-control none -k regex:ref_attention --csv ");
  EXPECT_TRUE(p.error.empty()) << p.error;
  const std::vector<std::string> want = {
      "/usr/local/cuda/bin/ncu", "--cache-control", "none", "-k", "regex:ref_attention", "--csv"};
  EXPECT_EQ(p.words, want);
}

TEST(Gate, ProfilerMustBeAnAbsolutePath) {
  const auto p = profiler_argv("ncu --csv");
  ASSERT_FALSE(p.error.empty()) << "the executor's PATH would not find it";
  EXPECT_NE(p.error.find("'ncu'"), std::string::npos) << p.error;
  EXPECT_NE(p.error.find("absolute path"), std::string::npos) << p.error;
}
