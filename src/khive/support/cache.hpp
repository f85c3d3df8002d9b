// The size policy of khive's on-disk cache (cache_root()): goldens, saved base inputs and builds together
// are kept under a cap by removing least-recently-used whole units (docs/guard.md, "The cache").
//
// Units, the only things ever removed:
//   golden  goldens/<version>/<task hash 24>/<backend>/   one task's goldens and saved base inputs on one backend
//   build   build/<2 hex>/<key>/, build/uncached/b-XXXXXX/ one build artifact (cand.so, meta.json, build.log)
// The LRU clock is the unit directory's mtime: an evaluation touches its golden unit when it starts, the
// builder touches an artifact on a cache hit. A unit in use is held with a shared flock on <unit>/.khive-lock
// (hold()); removal takes the exclusive lock without waiting, so a held unit is skipped, then renames the unit
// to "<name>.doomed-<pid>-<n>" (atomic: nobody finds half a unit) and deletes that.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "khive/support/text.hpp"

namespace khive::cache {

namespace fs = std::filesystem;

struct Unit {
  enum class Kind { golden, build };
  Kind kind = Kind::golden;
  fs::path path;
  std::string label;  // golden: "<task> <backend> (<version>/<hash 24>)"; build: the key
  uint64_t bytes = 0;
  fs::file_time_type last_used{};
};

struct Usage {
  std::vector<Unit> units;
  uint64_t golden_bytes = 0, build_bytes = 0;  // the capped part: the units
  uint64_t scratch_bytes = 0;                  // runner scratch, builds in progress, doomed leftovers
  uint64_t other_bytes = 0;                    // profiles, profiler output, anything else
  uint64_t capped() const { return golden_bytes + build_bytes; }
  uint64_t total() const { return capped() + scratch_bytes + other_bytes; }
};

// Sizes of everything under root (a missing root is an empty cache).
Usage scan(const fs::path& root);

inline constexpr double kDefaultMaxGb = 20;
inline constexpr double kTargetFraction = 0.8;  // pruning stops at 80 % of the cap, so it is not redone per evaluation

// The cap in bytes from $KHIVE_CACHE_MAX_GB (decimal GB, fractions allowed; unset: 20; 0: no cap -> nullopt).
// Throws std::runtime_error naming the variable and what was expected for anything else.
std::optional<uint64_t> cap_from_env();
std::optional<uint64_t> parse_max_gb(const std::string& value,
                                     const std::string& what);  // same rule, `what` names the source

// The selection rule, kept pure for tests. When the units' total exceeds `cap`, units are offered to `remove`
// least recently used first (ties by path), skipping `protect`ed paths, until the total is at most
// target_fraction * cap; `remove` returns false for a unit it could not remove (in use, gone), which then still
// counts. Returns the indices of the removed units, in removal order. Nothing happens at or under the cap.
std::vector<std::size_t> select_and_remove(const std::vector<Unit>& units, uint64_t cap,
                                           const std::vector<fs::path>& protect,
                                           const std::function<bool(const Unit&)>& remove,
                                           double target_fraction = kTargetFraction);

struct PruneResult {
  uint64_t cap = 0;
  uint64_t before = 0, after = 0;   // capped bytes (goldens + builds)
  int golden_sets = 0, builds = 0;  // units removed
  uint64_t removed_bytes = 0;
  int in_use = 0;                   // units skipped because a live evaluation holds them
  std::vector<std::string> errors;  // "<path>: <what failed>"
  int leftovers = 0;                // folders of processes that ended without cleaning up (tmp-* builds, scratch)
  uint64_t leftover_bytes = 0;
  bool pruned() const { return golden_sets + builds > 0; }
  std::string leftovers_text() const;  // "2 folders left by ended processes removed (1.2 MB)"
  // "cache over 20 GB (23.4 GB): removed 3 golden sets and 1 build, 5.1 GB; now 18.3 GB"
  std::string summary() const;
};

// Applies the policy to root now. `protect`: units never removed (the caller's own goldens). Leftover doomed
// directories of dead processes are deleted too, and so are the temporary folders (build/<shard>/tmp-*,
// scratch/*, goldens/.../eval-*, llm-prompt-*) whose owner (the pid in their name, make_temp_dir) has ended; a folder
// whose name carries no pid goes once it is a day old.
PruneResult prune(const fs::path& root, uint64_t cap, const std::vector<fs::path>& protect = {});

// Removes every unit not held by a live evaluation and the leftovers prune() removes. Builds in progress and
// scratch of live processes, and profiles (calibrations), stay.
PruneResult clear(const fs::path& root);

// Removes one unit (exclusive lock without waiting, rename, delete). False when it is held or already gone;
// a failed delete after the rename is reported in `error` (the unit is gone for everyone either way).
bool remove_unit(const fs::path& unit, std::string* error = nullptr);

// A shared hold on a unit: while it lives, prune() and clear() skip the unit. Move-only.
class Hold {
 public:
  Hold() = default;
  Hold(Hold&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Hold& operator=(Hold&& o) noexcept;
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  ~Hold();
  bool held() const { return fd_ >= 0; }

 private:
  friend std::optional<Hold> hold(const fs::path&);
  explicit Hold(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Holds `unit` (an existing directory). nullopt when the unit is gone (removed before or while taking the hold):
// the caller re-creates what it needs.
std::optional<Hold> hold(const fs::path& unit);

// Marks a unit used now (its mtime: the LRU clock). Errors are ignored: a missed touch only ages a unit.
void touch(const fs::path& unit);

// ---- one task's golden set, bounded (its goldens accumulated across runs: 3.3-3.8 GB per demo task after ~15 runs)
//
// A golden file is named "<set label>-<secret fingerprint>.<output>.bin": every run (a secret of its own) adds a
// generation the next run cannot use. bound_golden_set keeps the set under `cap` by removing whole generations,
// least recently used first, never `keep` (the running evaluation's, which it marks used now: a .used-<fingerprint>
// stamp) nor one used within `min_age` (another run of the task may be using it; a judge makes a vanished golden again
// anyway). So the set stays under the cap plus what runs of the task used in the last `min_age`: a burst of short runs
// within ten minutes goes over it until their goldens age (docs/results/2026-12-03-cpu/cache-growth-bounded.md).
inline constexpr double kDefaultGoldenSetMaxGb = 2;
// $KHIVE_GOLDENS_MAX_GB (the same rule as the cache's; unset: 2; 0: no bound -> nullopt).
std::optional<uint64_t> golden_set_cap_from_env();
struct GoldenBound {
  uint64_t before = 0, after = 0;
  int generations = 0;  // removed
  uint64_t removed_bytes = 0;
  // "goldens of softmax over 2.0 GB (3.4 GB): removed 5 earlier runs' goldens, 1.6 GB; now 1.8 GB"; "" when under
  std::string summary(const std::string& task, uint64_t cap) const;
};
GoldenBound bound_golden_set(const fs::path& set_dir, const std::string& keep, uint64_t cap,
                             std::chrono::seconds min_age = std::chrono::minutes(10));

using khive::human_bytes;  // "1.2 GB", "340 MB", "12 kB", "512 B" (decimal; text.hpp)

}  // namespace khive::cache
