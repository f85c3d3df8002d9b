// rowop.cuda_softmax_cluster (kernels/rowop/cuda_softmax_cluster.json + cuda_rowop_cluster.cu.in): which tasks it
// serves, its shared-memory fast-path rule on the long-row tasks (cutegen26 kb23/kb24, sol softmax), that the
// source's run-time limit is the manifest's, and that the tuner proposes it under its own strategies.
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "tuner_support.hpp"

namespace {

const fs::path kRepo = KHIVE_SOURCE_DIR;
constexpr const char* kName = "rowop.cuda_softmax_cluster";

BoundTask bound(const Library& lib, const char* dir) {
  const Task t = load_task(kRepo / dir);
  return bind_task(t, Backend::cuda, *lib.binding_for(t));
}

Point with(Point p, std::initializer_list<std::pair<const char*, const char*>> changes) {
  for (const auto& [k, v] : changes) p[k] = v;
  return p;
}

}  // namespace

TEST(TunerClusterSoftmax, AppliesToSoftmaxAndLogSoftmaxOnlyOnCuda) {
  const Library lib = load_library(kRepo / "kernels");
  const Template* t = lib.find_template(kName);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->source_path.filename(), "cuda_rowop_cluster.cu.in");
  for (const char* dir : {"tasks/cutegen26/kb23_softmax", "tasks/cutegen26/kb24_log_softmax", "tasks/sol/softmax"})
    EXPECT_TRUE(template_applies(*t, bound(lib, dir))) << dir;
  EXPECT_FALSE(template_applies(*t, bound(lib, "tasks/sol/rmsnorm")));
  const Task sm = load_task(kRepo / "tasks/sol/softmax");
  EXPECT_FALSE(template_applies(*t, bind_task(sm, Backend::cpu, *lib.binding_for(sm))));
}

TEST(TunerClusterSoftmax, SliceMustFitSharedMemoryOnThePerfRow) {
  const Library lib = load_library(kRepo / "kernels");
  const Template& t = *lib.find_template(kName);
  for (const char* dir : {"tasks/cutegen26/kb23_softmax", "tasks/cutegen26/kb24_log_softmax"}) {
    const BoundTask bt = bound(lib, dir);
    // fp32 rows of 393216: 8 CTAs x 196608 B fit (226 KB per CTA), 4 x 393216 B do not.
    const Validity v = check_point(t, bt, t.default_point());
    ASSERT_TRUE(v.ok) << dir << ": " << v.message;
    EXPECT_EQ(v.perf_fast, 1u);
    EXPECT_EQ(v.perf_total, 1u);
    EXPECT_TRUE(check_point(t, bt, with(t.default_point(), {{"CLUSTER", "16"}, {"THREADS", "1024"}})).ok);
    for (const char* c : {"2", "4"}) {
      const Validity small = check_point(t, bt, with(t.default_point(), {{"CLUSTER", c}}));
      EXPECT_FALSE(small.ok) << c;
      EXPECT_NE(small.message.find("the fast path takes none of the 1 perf workloads"), std::string::npos)
          << small.message;
      EXPECT_NE(small.message.find("a row of 393216 over " + std::string(c) + " CTAs"), std::string::npos)
          << small.message;
    }
    // 8 fp32 elements = a 32-byte access: a compile rule, whatever the shape.
    const Validity wide = check_point(t, bt, with(t.default_point(), {{"VEC", "8"}}));
    EXPECT_FALSE(wide.ok);
    EXPECT_NE(wide.message.find("VEC 8 x 4 B"), std::string::npos) << wide.message;
  }
  // sol softmax (bf16): 128256 / 2 x 2 B = 128256 B per CTA fits, so even 2 CTAs take every perf shape; VEC 8 is
  // a 16-byte access of bf16.
  const BoundTask bs = bound(lib, "tasks/sol/softmax");
  for (const char* c : {"2", "4", "8", "16"}) {
    const Validity v = check_point(t, bs, with(t.default_point(), {{"CLUSTER", c}, {"VEC", "8"}}));
    ASSERT_TRUE(v.ok) << c << ": " << v.message;
    EXPECT_EQ(v.perf_fast, v.perf_total) << c;
    EXPECT_GT(v.perf_total, 5u);
  }
}

TEST(TunerClusterSoftmax, RenderedSourceKeepsTheManifestsLimitAndLaunchesClusters) {
  const Library lib = load_library(kRepo / "kernels");
  const Template& t = *lib.find_template(kName);
  // The kernel decides at run time what the manifest's fast_path rule decides for the tuner: the same limit.
  ASSERT_EQ(t.fast_path.size(), 1u);
  std::smatch rule, src;
  ASSERT_TRUE(std::regex_search(t.fast_path[0].require, rule, std::regex(R"(SLICE_BYTES <= (\d+))")));
  ASSERT_TRUE(std::regex_search(t.source, src, std::regex(R"(kSmemLimit = (\d+) - (\d+);)")));
  EXPECT_EQ(std::stoll(rule[1]), std::stoll(src[1]) - std::stoll(src[2]));

  const BoundTask bt = bound(lib, "tasks/cutegen26/kb24_log_softmax");
  const std::string s =
      render(t, bt, with(t.default_point(), {{"CLUSTER", "16"}, {"SPLIT", "fixed"}, {"HINT", "stream"}}));
  for (const char* want : {"constexpr int kThreads = 1024, kVec = 4, kUnroll = 4, kMaxCluster = 16;",
                           "constexpr bool kSplitFit = 0, kStreamHint = 1, kBulk = 0;", "constexpr int KHIVE_OP = 1;",
                           "cudaLaunchAttributeClusterDimension", "cudaFuncAttributeNonPortableClusterSizeAllowed",
                           "cudaOccupancyMaxActiveClusters", "map_shared_rank", "void khive_launch("})
    EXPECT_NE(s.find(want), std::string::npos) << want;
  EXPECT_EQ(s.find("{{"), std::string::npos) << "a placeholder was left";
  const std::string b = render(t, bt, with(t.default_point(), {{"LOAD", "bulk"}}));
  for (const char* want :
       {"kBulk = 1;", "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes", "mbarrier.try_wait.parity"})
    EXPECT_NE(b.find(want), std::string::npos) << want;
}

TEST(TunerClusterSoftmax, TunerProposesItUnderItsOwnStrategies) {
  const Task task = load_task(kRepo / "tasks/cutegen26/kb23_softmax");
  auto [agent, ctx] =
      fixtures::tuner_under(task, Backend::cuda, "rowop.cluster", {"rowop.cluster", "rowop.cluster_access"});
  ASSERT_EQ(ctx.strategy.name, "rowop.cluster");
  auto p = agent->propose(ctx);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->params.at("template"), kName);
  EXPECT_EQ(p->params.at("CLUSTER"), "8");  // the default, valid for kb23
  EXPECT_EQ(p->ext, "cu");
  EXPECT_NE(p->note.find("fast path on 1 of 1 perf workloads"), std::string::npos) << p->note;
  // The next proposals stay valid: never a cluster too small for the row.
  for (int i = 0; i < 6; ++i) {
    auto q = agent->propose(ctx);
    if (!q) break;
    EXPECT_NE(q->params.at("CLUSTER"), "2");
    EXPECT_NE(q->params.at("CLUSTER"), "4");
  }
}
