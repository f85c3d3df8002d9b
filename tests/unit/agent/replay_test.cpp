// The replay agent: a directory's kernels for the backend, in name order, shared out among several agents.
#include <gtest/gtest.h>

#include "khive/agent/replay.hpp"
#include "khive/support/files.hpp"

using namespace khive;
namespace fs = std::filesystem;

namespace {

struct Dir {
  fs::path path = make_temp_dir(fs::temp_directory_path(), "khive-replay-test");
  Dir() {
    for (const char* name : {"c_third.cpp", "a_first.cpp", "b_second.cpp", "d_fourth.cpp", "e_cuda.cu", "notes.txt"})
      write_file_atomic(path / name, std::string("// ") + name + "\n");
  }
  ~Dir() { fs::remove_all(path); }
};

std::vector<std::string> names(const std::vector<fs::path>& files) {
  std::vector<std::string> v;
  for (auto& f : files) v.push_back(f.filename().string());
  return v;
}

}  // namespace

TEST(ReplayAgent, ProposesTheBackendsFilesInNameOrderThenNothing) {
  Dir d;
  ReplayAgent agent(d.path);
  Task task;
  AgentContext ctx;
  ctx.task = &task;
  ctx.backend = Backend::cpu;
  ctx.strategy = agent.strategies(task, Backend::cpu).at(0);
  std::vector<std::string> labels;
  while (auto p = agent.propose(ctx)) {
    EXPECT_EQ(p->ext, "cpp");
    EXPECT_EQ(p->parent, "");  // independent kernels, never derived from the leader
    EXPECT_EQ(p->source, "// " + p->params.at("file") + "\n");
    labels.push_back(p->label);
  }
  EXPECT_EQ(labels, (std::vector<std::string>{"a_first", "b_second", "c_third", "d_fourth"}));
  EXPECT_EQ(names(agent.files(Backend::cuda)), std::vector<std::string>{"e_cuda.cu"});
}

TEST(ReplayAgent, SeveralAgentsShareOneDirectory) {
  Dir d;
  EXPECT_EQ(names(ReplayAgent(d.path, 0, 3).files(Backend::cpu)),
            (std::vector<std::string>{"a_first.cpp", "d_fourth.cpp"}));
  EXPECT_EQ(names(ReplayAgent(d.path, 1, 3).files(Backend::cpu)), std::vector<std::string>{"b_second.cpp"});
  EXPECT_EQ(names(ReplayAgent(d.path, 2, 3).files(Backend::cpu)), std::vector<std::string>{"c_third.cpp"});
}

TEST(ReplayAgent, StopsProposingOnceTheRunStops) {
  Dir d;
  ReplayAgent agent(d.path);
  std::atomic<bool> stop{true};
  AgentContext ctx;
  ctx.stop = &stop;
  EXPECT_FALSE(agent.propose(ctx));
}

TEST(ReplayAgent, PostsWhatEachVerdictSaysAndNothingForAHarnessError) {
  Dir d;
  ReplayAgent agent(d.path);
  AgentContext ctx;
  ctx.strategy = {"replay.files", ""};
  Proposal p;
  p.label = "a_first";
  Outcome rejected;
  rejected.candidate = "c0001";
  rejected.standing = Standing::rejected;
  rejected.check = Check::correctness;
  rejected.reason = "mismatch";
  auto e = agent.observe(ctx, p, rejected);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, "failed");
  EXPECT_EQ(e->reason, "mismatch");
  EXPECT_EQ(e->candidate, "c0001");
  EXPECT_EQ(e->strategy, "replay.files");

  Outcome backup;
  backup.standing = Standing::backup;
  backup.comparison = "A/B vs c0000: -1.0% overall";
  e = agent.observe(ctx, p, backup);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, "insight");
  EXPECT_NE(e->text.find("A/B vs c0000"), std::string::npos);

  Outcome error;
  error.standing = Standing::error;
  EXPECT_FALSE(agent.observe(ctx, p, error));
}

TEST(ReplayAgent, RefusesWhatIsNotADirectory) {
  Dir d;
  EXPECT_THROW(ReplayAgent(d.path / "a_first.cpp"), std::runtime_error);
}
