// Speculative builds (issue 23: a search that keeps the GPU busy). A CUTLASS candidate compiles for about a minute
// while the device judges others in seconds, so a search whose agents build one proposal each leaves the device idle
// and most of the machine's cores too. While an agent's proposal waits for its verdict, the hive asks it what it
// would propose next if that verdict changed nothing (Agent::peek) and builds those on spare cores into the build
// cache (keyed by content: compile/builder.hpp), so the agent's later proposal starts on the device at once.
//
//   Prebuilder pb(eval, run_dir / ".prebuild", 6);   // 6 builds at a time; 0 = off
//   pb.offer(hash, "cu", source);                     // queued (newest first), deduplicated, never judged
//   pb.used(build_key);                               // an evaluated candidate's build key: counted when prebuilt
//   pb.stop();                                        // queued ones dropped, running compilers killed
//
// Nothing a speculative build does reaches the verdicts: the guard builds every candidate itself (a cache hit when
// the text is the same), and a failed speculative build is only a cached failure of that same text.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/eval/evaluator.hpp"
#include "khive/task/dtype.hpp"

namespace khive {

struct PrebuildStats {
  int jobs = 0;                    // builds at a time
  int offered = 0;                 // distinct texts offered
  int built = 0;                   // compiled here (ok or failed)
  int cached = 0;                  // already in the cache when their turn came
  int failed = 0;                  // of built: did not compile
  int dropped = 0;                 // left in the queue (pushed out by newer offers, or the run ended)
  int cancelled = 0;               // compilers killed at the end of the run
  int used = 0;                    // later evaluated candidates whose build this made
  double compile_s = 0;            // summed compile time of the builds made here
  nlohmann::json to_json() const;  // run.db's meta "prebuild" (the summary's line: record/report.cpp)
};

class Prebuilder {
 public:
  // jobs <= 0: off (offer() ignores everything). `scratch`: where the texts are written to be built (emptied).
  Prebuilder(Evaluator& eval, std::filesystem::path scratch, int jobs, std::size_t max_queue = 0);
  ~Prebuilder();
  Prebuilder(const Prebuilder&) = delete;
  Prebuilder& operator=(const Prebuilder&) = delete;

  // Queues a text to build (the newest first: it follows the latest leader); a text offered before is ignored. When
  // the queue is full the oldest offer is dropped.
  void offer(const std::string& hash, const std::string& ext, const std::string& source);
  // A candidate was evaluated with this build key: counted as used when a speculative build made that key.
  void used(const std::string& build_key);
  void stop();  // idempotent; joins the workers
  PrebuildStats stats() const;
  bool enabled() const { return jobs_ > 0; }

 private:
  struct Item {
    std::string hash, ext, source;
  };
  void work();

  Evaluator& eval_;
  std::filesystem::path scratch_;
  int jobs_;
  std::size_t max_queue_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  std::set<std::string> offered_, built_keys_, used_keys_;
  PrebuildStats st_;
  bool stopping_ = false;
  std::atomic<bool> cancel_{false};
  std::vector<std::thread> workers_;
};

// Builds at a time when the user gave no number: on the CUDA backend the cores that the agents' own builds and the
// judge leave (at most 8: a CUTLASS compile takes a few GB of memory); on the CPU backend none (a build would take
// the cores the judge times on).
int default_prebuild_jobs(Backend backend, int agents, unsigned cores);

}  // namespace khive
