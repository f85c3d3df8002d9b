#include "khive/support/phase.hpp"

namespace khive {
namespace {
thread_local PhaseListener* t_listener = nullptr;
}

PhaseListener::PhaseListener(std::function<void(const std::string&)> on_phase)
    : on_phase_(std::move(on_phase)), outer_(t_listener) {
  t_listener = this;
}

PhaseListener::~PhaseListener() { t_listener = outer_; }

void report_phase(const std::string& what) {
  if (t_listener && t_listener->on_phase_) t_listener->on_phase_(what);
}

}  // namespace khive
