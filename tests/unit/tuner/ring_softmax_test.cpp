// rowop.cuda_softmax_ring (kernels/rowop/cuda_softmax_ring.json + cuda_rowop_ring.cu.in): which tasks it serves,
// its shared-memory rule, its fast path on sol softmax's shapes (whole 16-byte rows that fit a
// stage), that the source's limits are the manifest's, what a point renders to, and that the tuner proposes it.
#include <regex>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "tuner_support.hpp"

namespace {

const fs::path kRepo = KHIVE_SOURCE_DIR;
constexpr const char* kName = "rowop.cuda_softmax_ring";

BoundTask bound(const Library& lib, const char* dir, Backend be = Backend::cuda) {
  const Task t = load_task(kRepo / dir);
  return bind_task(t, be, *lib.binding_for(t));
}

Point with(Point p, std::initializer_list<std::pair<const char*, const char*>> changes) {
  for (const auto& [k, v] : changes) p[k] = v;
  return p;
}

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace

TEST(TunerRingSoftmax, AppliesToSoftmaxAndLogSoftmaxOnlyOnCuda) {
  const Library lib = load_library(kRepo / "kernels");
  const Template* t = lib.find_template(kName);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->source_path.filename(), "cuda_rowop_ring.cu.in");
  for (const char* dir : {"tasks/cutegen26/kb23_softmax", "tasks/cutegen26/kb24_log_softmax", "tasks/sol/softmax"})
    EXPECT_TRUE(template_applies(*t, bound(lib, dir))) << dir;
  EXPECT_FALSE(template_applies(*t, bound(lib, "tasks/sol/rmsnorm")));
  EXPECT_FALSE(template_applies(*t, bound(lib, "tasks/sol/softmax", Backend::cpu)));
}

TEST(TunerRingSoftmax, RingMustFitSharedMemory) {
  const Library lib = load_library(kRepo / "kernels");
  const Template& t = *lib.find_template(kName);
  const BoundTask bs = bound(lib, "tasks/sol/softmax");
  ASSERT_TRUE(check_point(t, bs, t.default_point()).ok) << check_point(t, bs, t.default_point()).message;
  // 8 x 256 x 4 x 16 B = 131072 B fits; 8 x 1024 x 2 x 16 B = 262144 B does not, whatever the shape.
  EXPECT_TRUE(check_point(t, bs, with(t.default_point(), {{"STAGES", "8"}, {"CHUNKS", "4"}})).ok);
  const Validity big = check_point(t, bs, with(t.default_point(), {{"STAGES", "8"}, {"THREADS", "1024"}}));
  EXPECT_FALSE(big.ok);
  EXPECT_TRUE(has(big.message, "a ring of 8 tiles x 1024 threads x 2 x 16 B = 262144 B")) << big.message;
  // The ring bounds the register cache too: the largest valid caches (1024 x 4 and 512 x 8 chunks of bf16: 32 or 64
  // floats a thread) compile without spills (ptxas: 58 and 114 registers); fp32 caches half as many floats.
  EXPECT_TRUE(check_point(t, bs, with(t.default_point(), {{"STAGES", "2"}, {"THREADS", "512"}, {"CHUNKS", "8"}})).ok);
  EXPECT_TRUE(check_point(t, bs, with(t.default_point(), {{"STAGES", "3"}, {"THREADS", "1024"}, {"CHUNKS", "4"}}))
                  .ok);                                             // 196608 B
  const BoundTask kb = bound(lib, "tasks/cutegen26/kb23_softmax");  // the rule holds whatever the dtype and shape
  const Validity f32 =
      check_point(t, kb, with(t.default_point(), {{"STAGES", "2"}, {"THREADS", "1024"}, {"CHUNKS", "8"}}));
  EXPECT_FALSE(f32.ok);
  EXPECT_TRUE(has(f32.message, "a ring of 2 tiles x 1024 threads x 8 x 16 B = 262144 B")) << f32.message;
}

TEST(TunerRingSoftmax, FastPathTakesWhole16ByteRowsThatFitAStage) {
  const Library lib = load_library(kRepo / "kernels");
  const Template& t = *lib.find_template(kName);
  const BoundTask bs = bound(lib, "tasks/sol/softmax");
  const Validity v = check_point(t, bs, t.default_point());
  ASSERT_TRUE(v.ok) << v.message;
  // CUDA perf shapes: 4 vocabulary shapes (256512 B rows: more than a stage) go generic; C = 512, 1024, 4096 and
  // 16384 take the ring.
  EXPECT_EQ(v.perf_total, 10u);
  EXPECT_EQ(v.perf_fast, 6u);
  std::string generic;
  for (const auto& g : v.generic) generic += g + "\n";
  EXPECT_TRUE(has(generic, "a row of 256512 B does not fit one stage")) << generic;
  EXPECT_TRUE(has(generic, "rows of 10 B are not whole 16-byte chunks")) << generic;    // R3-C5
  EXPECT_TRUE(has(generic, "rows of 8194 B are not whole 16-byte chunks")) << generic;  // R2-C4097
  EXPECT_TRUE(has(generic, "rows of 1026 B")) << generic;                               // R64-C513
  EXPECT_FALSE(has(generic, "2000 B")) << generic;                                      // R17-C1000: 125 chunks
  // kb23 / kb24: fp32 rows of 393216 (1.5 MB) never fit: no perf workload takes the fast path.
  const Validity kb = check_point(t, bound(lib, "tasks/cutegen26/kb24_log_softmax"), t.default_point());
  EXPECT_FALSE(kb.ok);
  EXPECT_TRUE(has(kb.message, "the fast path takes none of the")) << kb.message;
}

TEST(TunerRingSoftmax, RenderedSourceKeepsTheManifestsLimitsAndIssuesBulkCopies) {
  const Library lib = load_library(kRepo / "kernels");
  const Template& t = *lib.find_template(kName);
  // The kernel's run-time shared-memory limit is the one the manifest's rules use.
  std::smatch src;
  ASSERT_TRUE(std::regex_search(t.source, src, std::regex(R"(kSmemLimit = (\d+) - (\d+);)")));
  const long long limit = std::stoll(src[1]) - std::stoll(src[2]);
  ASSERT_EQ(t.rules.size(), 1u);
  ASSERT_EQ(t.fast_path.size(), 2u);
  EXPECT_TRUE(has(t.rules[0].require, "RING_BYTES <= " + std::to_string(limit))) << t.rules[0].require;
  EXPECT_TRUE(has(t.fast_path[1].require, "ROW_BYTES <= " + std::to_string(limit))) << t.fast_path[1].require;

  const BoundTask bs = bound(lib, "tasks/sol/softmax");
  const std::string s = render(t, bs, with(t.default_point(), {{"STAGES", "6"}, {"THREADS", "128"}, {"CHUNKS", "4"}}));
  for (const char* want :
       {"constexpr int kThreads = 128, kStages = 6, kChunks = 4;", "constexpr bool kCacheRegs = 1, kStreamHint = 0;",
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [", "mbarrier.arrive.expect_tx",
        "mbarrier.try_wait.parity", "fence.proxy.async.shared::cta", "khive_ring_generic_k<<<", "void khive_run("})
    EXPECT_TRUE(has(s, want)) << want;
  EXPECT_FALSE(has(s, "{{")) << "a placeholder was left";
  const std::string h = render(t, bs, with(t.default_point(), {{"CACHE", "smem"}, {"HINT", "stream"}}));
  for (const char* want : {"constexpr bool kCacheRegs = 0, kStreamHint = 1;", "createpolicy.fractional.L2::evict_first",
                           ".L2::cache_hint"})
    EXPECT_TRUE(has(h, want)) << want;
}

TEST(TunerRingSoftmax, TunerProposesItUnderItsOwnStrategies) {
  const Task task = load_task(kRepo / "tasks/sol/softmax");
  auto [agent, ctx] = fixtures::tuner_under(task, Backend::cuda, "rowop.ring", {"rowop.ring", "rowop.ring_access"});
  ASSERT_EQ(ctx.strategy.name, "rowop.ring");
  auto p = agent->propose(ctx);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->params.at("template"), kName);
  EXPECT_EQ(p->ext, "cu");
  EXPECT_TRUE(has(p->note, "fast path on 6 of 10 perf workloads")) << p->note;
  // Later proposals stay valid: never a ring over the shared memory.
  for (int i = 0; i < 8; ++i) {
    auto q = agent->propose(ctx);
    if (!q) break;
    const long long ring_bytes = std::stoll(q->params.at("STAGES")) * std::stoll(q->params.at("THREADS")) *
                                 std::stoll(q->params.at("CHUNKS")) * 16;
    EXPECT_LE(ring_bytes, 231424) << q->note;
  }
}

// The tuner lists strategies round robin over the templates that apply, so the hive's first agents (agent i starts
// on strategy i) begin on different templates: sol/softmax on CUDA has three.
TEST(TunerRingSoftmax, FirstStrategiesSpanTheTemplates) {
  const Library lib = load_library(kRepo / "kernels");
  const Task task = load_task(kRepo / "tasks/sol/softmax");
  TunerOptions o;
  o.kernels_dir = kRepo / "kernels";
  const auto strategies = make_tuner_agent(o)->strategies(task, Backend::cuda);
  ASSERT_GE(strategies.size(), 3u);
  std::set<const Template*> owners;
  for (std::size_t i = 0; i < 3; ++i)
    for (const auto& t : lib.templates)
      for (const auto& s : t.strategies)
        if (s.name == strategies[i].name && template_applies(t, bound(lib, "tasks/sol/softmax"))) owners.insert(&t);
  EXPECT_EQ(owners.size(), 3u) << strategies[0].name << ", " << strategies[1].name << ", " << strategies[2].name;
  EXPECT_EQ(strategies.back().name, "tuner.dispatch");
}
