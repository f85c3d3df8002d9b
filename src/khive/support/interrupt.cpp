// support/interrupt.hpp: the first signal asks for a clean stop, the second leaves.
#include "khive/support/interrupt.hpp"

#include <cstdlib>

namespace khive {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_interrupts{0};

void on_interrupt(int) {
  // The children die with khive (support/subprocess.hpp); the records are consistent at every write.
  if (g_interrupts.fetch_add(1) >= 1) std::_Exit(130);
  g_stop.store(true);
}

}  // namespace

const std::atomic<bool>& interrupt_requested() { return g_stop; }

InterruptGuard::InterruptGuard() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  for (std::size_t i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &old_[i]);
}

InterruptGuard::~InterruptGuard() {
  for (std::size_t i = 0; i < 3; ++i) sigaction(kSignals[i], &old_[i], nullptr);
}

}  // namespace khive
