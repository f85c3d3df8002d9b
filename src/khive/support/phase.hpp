// What the work on this thread is doing now, for a progress display: deep code (an evaluator, an agent) says
// "building", "measuring", "asking the model"; whoever shows progress listens on the thread that does the work.
//
//   PhaseListener listen([&](const std::string& what) { status.phase = what; });   // on the worker thread
//   ... report_phase("building");   // anywhere below it on the same thread
#pragma once
#include <functional>
#include <string>

namespace khive {

// Tells this thread's listener, if any (a no-op without one).
void report_phase(const std::string& what);

// Listens to report_phase() on this thread while it lives; listeners nest (the inner one hears, then the outer
// one is back).
class PhaseListener {
 public:
  explicit PhaseListener(std::function<void(const std::string&)> on_phase);
  ~PhaseListener();
  PhaseListener(const PhaseListener&) = delete;
  PhaseListener& operator=(const PhaseListener&) = delete;

 private:
  friend void report_phase(const std::string& what);
  std::function<void(const std::string&)> on_phase_;
  PhaseListener* outer_;
};

}  // namespace khive
