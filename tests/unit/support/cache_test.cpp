// The cache size policy on synthetic cache trees with set mtimes: what is a unit, LRU order, the protected
// unit, stopping under 80 % of the cap, held units skipped, doomed leftovers, the cap's environment variable.
#include "khive/support/cache.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "khive/support/files.hpp"

namespace fs = std::filesystem;
using namespace khive;
using namespace std::chrono_literals;

namespace {

struct TempCache {
  fs::path root;
  TempCache() { root = make_temp_dir(fs::temp_directory_path(), "khive-cache-test"); }
  ~TempCache() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  // A unit directory holding one file of `bytes`, last used `age` ago.
  fs::path unit(const fs::path& rel, std::size_t bytes, std::chrono::seconds age,
                const std::string& file = "data.bin") {
    fs::path d = root / rel;
    fs::create_directories((d / file).parent_path());
    std::ofstream(d / file, std::ios::binary) << std::string(bytes, 'x');
    fs::last_write_time(d, fs::file_time_type::clock::now() - age);
    return d;
  }
  fs::path golden(const std::string& hash, const std::string& backend, std::size_t bytes, std::chrono::seconds age) {
    return unit(fs::path("goldens/v5") / hash / backend, bytes, age, "wl/s1.y.bin");
  }
  fs::path build(const std::string& key_char, std::size_t bytes, std::chrono::seconds age) {
    std::string key(64, key_char[0]);
    return unit(fs::path("build") / key.substr(0, 2) / key, bytes, age, "cand.so");
  }
};

cache::Unit u(const std::string& path, uint64_t bytes, int age_s) {
  cache::Unit x;
  x.path = path;
  x.bytes = bytes;
  x.last_used = fs::file_time_type::clock::now() - std::chrono::seconds(age_s);
  return x;
}

std::vector<std::string> removed_paths(const std::vector<cache::Unit>& units, const std::vector<std::size_t>& idx) {
  std::vector<std::string> out;
  for (auto i : idx) out.push_back(units[i].path.string());
  return out;
}

}  // namespace

TEST(CacheSelect, NothingAtOrUnderTheCap) {
  std::vector<cache::Unit> units{u("/c/a", 50, 100), u("/c/b", 50, 10)};
  int calls = 0;
  auto r = cache::select_and_remove(units, 100, {}, [&](const cache::Unit&) { return ++calls, true; });
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(calls, 0);
}

TEST(CacheSelect, LeastRecentlyUsedFirstAndStopsUnderEightyPercent) {
  // 400 bytes against a cap of 300: the target is 240, so the two oldest go (400 -> 300 -> 200) and no more.
  std::vector<cache::Unit> units{u("/c/new", 100, 1), u("/c/oldest", 100, 300), u("/c/mid", 100, 100),
                                 u("/c/old", 100, 200)};
  auto r = cache::select_and_remove(units, 300, {}, [](const cache::Unit&) { return true; });
  EXPECT_EQ(removed_paths(units, r), (std::vector<std::string>{"/c/oldest", "/c/old"}));
}

TEST(CacheSelect, ProtectedUnitIsNeverRemovedEvenWhenOldest) {
  std::vector<cache::Unit> units{u("/c/current", 200, 1000), u("/c/a", 100, 50), u("/c/b", 100, 10)};
  auto r = cache::select_and_remove(units, 250, {fs::path("/c/./current")}, [](const cache::Unit&) { return true; });
  // 400 > 250, target 200: /c/current is skipped, then a and b go (400 -> 300 -> 200).
  EXPECT_EQ(removed_paths(units, r), (std::vector<std::string>{"/c/a", "/c/b"}));
}

TEST(CacheSelect, UnitThatCannotBeRemovedStillCounts) {
  std::vector<cache::Unit> units{u("/c/held", 100, 300), u("/c/a", 100, 200), u("/c/b", 100, 100)};
  auto r = cache::select_and_remove(units, 250, {}, [](const cache::Unit& x) { return x.path != "/c/held"; });
  // target 200: held stays (300), a goes (200) and that is enough.
  EXPECT_EQ(removed_paths(units, r), (std::vector<std::string>{"/c/a"}));
}

TEST(CacheEnv, ParsesGigabytesZeroIsNoCapAndRejectsGarbage) {
  EXPECT_EQ(cache::parse_max_gb("20", "X"), std::optional<uint64_t>(20'000'000'000ull));
  EXPECT_EQ(cache::parse_max_gb("0.000001", "X"), std::optional<uint64_t>(1000));
  EXPECT_EQ(cache::parse_max_gb("0", "X"), std::nullopt);
  for (const char* bad : {"", "-1", "20GB", "abc", "nan", "inf"}) {
    try {
      cache::parse_max_gb(bad, "$KHIVE_CACHE_MAX_GB");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("$KHIVE_CACHE_MAX_GB"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("expected a size in GB"), std::string::npos) << e.what();
    }
  }
}

TEST(CacheScan, FindsGoldenAndBuildUnitsAndSortsTheRest) {
  TempCache c;
  auto g = c.golden("aaaaaaaaaaaaaaaaaaaaaaaa", "cpu", 1000, 10s);
  std::ofstream(g.parent_path() / ".task") << "softmax\n";
  c.build("b", 500, 10s);
  c.unit("build/bb/tmp-bbbbbbbbbbbb-XYZ", 70, 1s, "unit.cpp");  // a build in progress
  c.unit("scratch/run-1", 30, 1s);
  c.unit("profiles", 5, 1s, "cpu.json");
  auto us = cache::scan(c.root);
  ASSERT_EQ(us.units.size(), 2u);
  EXPECT_EQ(us.golden_bytes, 1000u);
  EXPECT_EQ(us.build_bytes, 500u);
  EXPECT_EQ(us.scratch_bytes, 100u);
  EXPECT_EQ(us.other_bytes, 5u);
  EXPECT_EQ(us.capped(), 1500u);
  for (auto& x : us.units) {
    if (x.kind == cache::Unit::Kind::golden) {
      EXPECT_EQ(x.label, "softmax cpu (v5/aaaaaaaaaaaaaaaaaaaaaaaa)");
    }
  }
}

TEST(CachePrune, RemovesOldestWholeUnitsKeepsTheCurrentOne) {
  TempCache c;
  auto cur = c.golden("cccccccccccccccccccccccc", "cpu", 400, 5000s);  // oldest, but the evaluation's own
  auto old_g = c.golden("oooooooooooooooooooooooo", "cpu", 400, 3000s);
  auto old_b = c.build("a", 400, 2000s);
  auto new_b = c.build("e", 400, 10s);
  auto r = cache::prune(c.root, 1200, {cur});  // 1600 > 1200, target 960: two units go
  EXPECT_EQ(r.golden_sets, 1);
  EXPECT_EQ(r.builds, 1);
  EXPECT_EQ(r.removed_bytes, 800u);
  EXPECT_EQ(r.before, 1600u);
  EXPECT_EQ(r.after, 800u);
  EXPECT_TRUE(fs::exists(cur / "wl/s1.y.bin"));
  EXPECT_FALSE(fs::exists(old_g));
  EXPECT_FALSE(fs::exists(old_b));
  EXPECT_TRUE(fs::exists(new_b / "cand.so"));
  EXPECT_EQ(r.summary(), "cache over 1.2 kB (1.6 kB): removed 1 golden set and 1 build, 800 B; now 800 B");
  // Nothing doomed is left behind.
  for (auto& p : fs::recursive_directory_iterator(c.root)) {
    EXPECT_EQ(p.path().string().find(".doomed-"), std::string::npos) << p.path();
  }
}

TEST(CachePrune, HeldUnitIsSkippedAndReported) {
  TempCache c;
  auto held_dir = c.golden("hhhhhhhhhhhhhhhhhhhhhhhh", "cpu", 400, 5000s);
  auto other = c.golden("oooooooooooooooooooooooo", "cpu", 400, 10s);
  auto h = cache::hold(held_dir);
  ASSERT_TRUE(h && h->held());
  fs::last_write_time(held_dir, fs::file_time_type::clock::now() - 5000s);  // creating the lock file touched it
  auto r = cache::prune(c.root, 500, {});
  EXPECT_TRUE(fs::exists(held_dir / "wl/s1.y.bin"));
  EXPECT_FALSE(fs::exists(other));
  EXPECT_EQ(r.in_use, 1);
  EXPECT_EQ(r.golden_sets, 1);
  h.reset();  // released: now it can go
  EXPECT_TRUE(cache::remove_unit(held_dir));
  EXPECT_FALSE(fs::exists(held_dir));
}

TEST(CacheHold, GoneUnitGivesNoHold) {
  TempCache c;
  auto d = c.golden("gggggggggggggggggggggggg", "cpu", 10, 1s);
  ASSERT_TRUE(cache::remove_unit(d));
  EXPECT_FALSE(cache::hold(d).has_value());
  EXPECT_FALSE(cache::remove_unit(d));  // already gone: not counted twice
}

TEST(CachePrune, DeletesDoomedLeftoversOfDeadProcessesOnly) {
  TempCache c;
  // pid 2^22+7 is above the default pid_max range used here; a live pid (ours' parent) must be left alone.
  auto dead = c.unit("goldens/v5/dddddddddddddddddddddddd/cpu.doomed-4194311-0", 100, 1s);
  auto live = c.unit("goldens/v5/dddddddddddddddddddddddd/cuda.doomed-" + std::to_string(::getppid()) + "-0", 100, 1s);
  auto us = cache::scan(c.root);
  EXPECT_TRUE(us.units.empty());
  EXPECT_EQ(us.scratch_bytes, 200u);
  cache::prune(c.root, 1'000'000);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live));
}

TEST(CacheClear, RemovesEveryUnitButHeldOnesAndProfiles) {
  TempCache c;
  auto g = c.golden("aaaaaaaaaaaaaaaaaaaaaaaa", "cpu", 100, 10s);
  auto held_dir = c.golden("bbbbbbbbbbbbbbbbbbbbbbbb", "cpu", 100, 10s);
  auto b = c.build("c", 100, 10s);
  c.unit("profiles", 5, 1s, "cpu.json");
  auto h = cache::hold(held_dir);
  auto r = cache::clear(c.root);
  EXPECT_FALSE(fs::exists(g));
  EXPECT_FALSE(fs::exists(b));
  EXPECT_TRUE(fs::exists(held_dir));
  EXPECT_TRUE(fs::exists(c.root / "profiles/cpu.json"));
  EXPECT_EQ(r.golden_sets + r.builds, 2);
  EXPECT_EQ(r.in_use, 1);
}

TEST(CacheTouch, MovesTheLruClock) {
  TempCache c;
  auto d = c.golden("tttttttttttttttttttttttt", "cpu", 10, 3600s);
  auto before = fs::last_write_time(d);
  cache::touch(d);
  EXPECT_GT(fs::last_write_time(d), before + 3000s);
}

TEST(CacheText, HumanBytes) {
  EXPECT_EQ(cache::human_bytes(512), "512 B");
  EXPECT_EQ(cache::human_bytes(1'200'000'000ull), "1.2 GB");
  EXPECT_EQ(cache::human_bytes(340'000'000ull), "340.0 MB");
}

namespace {
// A golden file of `bytes` bytes at set/rel, last written `age` ago.
fs::path write_golden(const fs::path& set, const fs::path& rel, std::size_t bytes, fs::file_time_type::duration age) {
  const fs::path p = set / rel;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << std::string(bytes, 'g');
  fs::last_write_time(p, fs::file_time_type::clock::now() - age);
  return p;
}
}  // namespace

// One task's golden set is bounded across runs (issue 25: 3.3-3.8 GB per demo task after ~15 runs): whole earlier
// generations (other secrets' fingerprints) go, least recently written first, down to 80 % of the cap; the running
// evaluation's generation, a young one (another run may be using it) and the eval-* folders stay.
TEST(GoldenSetBound, OldestOtherGenerationsGoFirst) {
  TempCache c;
  const fs::path set = c.root / "goldens/v7/abc/cpu";
  auto file = [&](const std::string& wl, const std::string& fp, const std::string& label, std::size_t bytes,
                  std::chrono::seconds age) {
    return write_golden(set, fs::path(wl) / (label + "-" + fp + ".c.bin"), bytes, age);
  };
  // Four earlier runs of 300 bytes each (two workloads), oldest first, then the running one and a young one.
  for (int r = 0; r < 4; ++r) {
    const std::string fp = "old" + std::to_string(r);
    file("w1", fp, "s1", 150, std::chrono::hours(10 - r));
    file("w2", fp, "t9", 150, std::chrono::hours(10 - r));
  }
  const fs::path mine = file("w1", "mine", "s1", 300, std::chrono::hours(20));  // old file, but the running secret's
  const fs::path young = file("w1", "young", "s1", 300, 1min);
  fs::create_directories(set / "eval-123-abc" / "w1");
  std::ofstream(set / "eval-123-abc" / "w1" / "s1-zzz.c.bin") << std::string(5000, 'e');  // not counted, not touched

  // 1800 bytes under a cap of 1000: down to 800 by removing old0, old1, old2, old3 in turn (the young and mine stay).
  cache::GoldenBound b = cache::bound_golden_set(set, "mine", 1000);
  EXPECT_EQ(b.before, 1800u);
  EXPECT_EQ(b.generations, 4);
  EXPECT_EQ(b.removed_bytes, 1200u);
  EXPECT_EQ(b.after, 600u);
  EXPECT_TRUE(fs::exists(mine));
  ASSERT_TRUE(fs::exists(set / ".used-mine")) << "the running evaluation's generation is marked used";
  EXPECT_GT(fs::last_write_time(set / ".used-mine"), fs::file_time_type::clock::now() - std::chrono::minutes(1));
  EXPECT_LT(fs::last_write_time(mine), fs::file_time_type::clock::now() - std::chrono::hours(1))
      << "a golden's mtime says when it was made";
  EXPECT_TRUE(fs::exists(young));
  EXPECT_TRUE(fs::exists(set / "eval-123-abc" / "w1" / "s1-zzz.c.bin"));
  EXPECT_FALSE(fs::exists(set / "w2" / "t9-old3.c.bin"));
  EXPECT_NE(b.summary("softmax", 1000).find("removed 4 earlier runs' goldens"), std::string::npos)
      << b.summary("softmax", 1000);

  // Under the cap: nothing happens, and the summary is empty.
  cache::GoldenBound again = cache::bound_golden_set(set, "mine", 1000);
  EXPECT_EQ(again.generations, 0);
  EXPECT_EQ(again.summary("softmax", 1000), "");
}

// A generation another run used lately (its .used-<fingerprint> stamp is young) stays, however old its goldens.
TEST(GoldenSetBound, AGenerationUsedLatelyStays) {
  TempCache c;
  const fs::path set = c.root / "g";
  for (int r = 0; r < 3; ++r)
    write_golden(set, fs::path("w") / ("s1-f" + std::to_string(r) + ".y.bin"), 100, std::chrono::hours(10 - r));
  std::ofstream(set / ".used-f0") << "\n";  // f0, the oldest, is in use by a long run
  cache::GoldenBound b = cache::bound_golden_set(set, "none", 150);
  EXPECT_TRUE(fs::exists(set / "w" / "s1-f0.y.bin"));
  EXPECT_FALSE(fs::exists(set / "w" / "s1-f1.y.bin"));
  EXPECT_FALSE(fs::exists(set / "w" / "s1-f2.y.bin"));
  EXPECT_EQ(b.generations, 2);
  // Once it ages, it goes, stamp and all.
  fs::last_write_time(set / ".used-f0", fs::file_time_type::clock::now() - std::chrono::hours(1));
  write_golden(set, "w/s1-f3.y.bin", 100, std::chrono::hours(1) - std::chrono::minutes(1));
  b = cache::bound_golden_set(set, "none", 150);
  EXPECT_FALSE(fs::exists(set / "w" / "s1-f0.y.bin"));
  EXPECT_FALSE(fs::exists(set / ".used-f0"));
}

TEST(GoldenSetBound, StopsAtEightyPercentOfTheCap) {
  TempCache c;
  const fs::path set = c.root / "g";
  for (int r = 0; r < 5; ++r)
    write_golden(set, fs::path("w") / ("s1-f" + std::to_string(r) + ".y.bin"), 100, std::chrono::hours(10 - r));
  // 500 bytes, cap 450: the target is 360, so two generations go (f0, f1), not more.
  cache::GoldenBound b = cache::bound_golden_set(set, "none", 450);
  EXPECT_EQ(b.generations, 2);
  EXPECT_EQ(b.after, 300u);
  EXPECT_FALSE(fs::exists(set / "w" / "s1-f1.y.bin"));
  EXPECT_TRUE(fs::exists(set / "w" / "s1-f2.y.bin"));
}
