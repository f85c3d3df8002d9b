// Ctrl-C, SIGTERM and SIGHUP during a long command (khive optimize, khive hive, khive bench): the first asks it to
// stop cleanly (what is in flight finishes and is recorded), the second leaves at once with exit 130. Nothing recorded
// is lost either way: those commands write their records atomically as they go (run.db, events.jsonl, bench.json).
//
//   InterruptGuard guard;                    // handlers installed; the previous ones come back when it ends
//   while (!interrupt_requested().load()) { ... one task ... }
#pragma once
#include <atomic>
#include <csignal>

namespace khive {

// Set by the first signal while a guard lives; never cleared (a command stops once).
const std::atomic<bool>& interrupt_requested();

class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction old_[3]{};
};

}  // namespace khive
