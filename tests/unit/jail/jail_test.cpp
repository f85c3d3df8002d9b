// khive-jail's command line: what callers build (jailed) is what the binary reads (parse_jail_args), and a bad one is
// named. The confinement itself is shown end to end by tests/integration/jail_cpu.py.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "khive/jail/jail.hpp"

using namespace khive;

TEST(Jail, WhatCallersBuildIsWhatTheJailReads) {
  ::unsetenv("KHIVE_JAIL");
  JailPolicy p;
  p.read = {"/work/task", "/opt/py"};
  p.write = {"/tmp/scratch"};
  p.cuda = true;
  p.memory_bytes = 8ll << 30;
  p.file_bytes = 1ll << 30;
  p.best_effort = true;
  const std::vector<std::string> argv = jailed(p, {"python3", "-m", "khive_torch", "--", "x"});
  ASSERT_GE(argv.size(), 6u);
  EXPECT_EQ(argv[0], jail_path().string());
  const JailArgs a = parse_jail_args(std::vector<std::string>(argv.begin() + 1, argv.end()));
  EXPECT_EQ(a.policy.read, p.read);
  EXPECT_EQ(a.policy.write, p.write);
  EXPECT_TRUE(a.policy.cuda);
  EXPECT_EQ(a.policy.memory_bytes, p.memory_bytes);
  EXPECT_EQ(a.policy.file_bytes, p.file_bytes);
  EXPECT_TRUE(a.policy.best_effort);
  // The command keeps its own "--".
  EXPECT_EQ(a.command, (std::vector<std::string>{"python3", "-m", "khive_torch", "--", "x"}));
  // A prefix alone (the judge appends the interpreter and its arguments).
  const std::vector<std::string> prefix = jailed(JailPolicy{}, {});
  EXPECT_EQ(prefix.back(), "--");
}

TEST(Jail, OffMeansTheCommandUnchanged) {
  ::setenv("KHIVE_JAIL", "off", 1);
  EXPECT_TRUE(jail_disabled());
  EXPECT_EQ(jailed(JailPolicy{}, {"g++", "a.cpp"}), (std::vector<std::string>{"g++", "a.cpp"}));
  EXPECT_TRUE(jailed(JailPolicy{}, {}).empty());
  ::setenv("KHIVE_JAIL", "on", 1);
  EXPECT_FALSE(jail_disabled());
  ::unsetenv("KHIVE_JAIL");
}

TEST(Jail, ABadCommandLineIsNamed) {
  auto error = [](std::vector<std::string> argv) {
    try {
      parse_jail_args(argv);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error({"--memory", "lots", "--", "true"}).find("--memory: expected a number of bytes >= 0, got 'lots'"),
            std::string::npos);
  EXPECT_NE(error({"--memory", "-5", "--", "true"}).find("--memory"), std::string::npos);
  EXPECT_NE(error({"--read"}).find("--read: expected a value"), std::string::npos);
  EXPECT_NE(error({"--read", "/usr"}).find("expected -- and the command"), std::string::npos);
  EXPECT_NE(error({
                      "--",
                  })
                .find("expected -- and the command"),
            std::string::npos);
  EXPECT_NE(error({"--write", "scratch", "--", "true"}).find("--write: expected an absolute folder"),
            std::string::npos);
  EXPECT_NE(error({"--net", "--", "true"}).find("unknown flag '--net'"), std::string::npos);
}
