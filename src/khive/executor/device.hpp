// Where the executor keeps the judge's shared regions and calls the kernel: host memory (CPU backend) or one
// GPU. The executor never allocates inputs or outputs itself; it maps what the judge shares and calls.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace khive::exec {

using EntryFn = void (*)(void* const* args, void* stream);

// A failure the executor reports to the judge ("fault"): the reason is a guard reason code.
struct Fault : std::runtime_error {
  std::string reason;  // "cuda_error", "load_error", "device_init", "bad_request"
  Fault(std::string r, const std::string& what) : std::runtime_error(what), reason(std::move(r)) {}
};

struct RegionSpec {
  std::size_t bytes = 0;
  bool writable = false;
};

// The judge's per-workload calibration of the gated clock (docs/guard.md, "The clock"): a built-in call that reads
// every input byte and writes every output byte of one argument set, run behind the gate before any kernel code is
// in the process. What the judge's bracket sees beyond this call's own events is what it sees around a kernel that
// touches that memory (the switch out of a context that touched memory costs microseconds more than out of an empty
// one, and how much depends on the footprint and on the process), so that is what the judge subtracts.
struct TouchSpan {
  char* p = nullptr;
  std::size_t bytes = 0;
  bool write = false;
};
inline constexpr std::size_t kMaxTouchSpans = 16;
struct TouchCall {  // args[0] of the touch entry points to one
  TouchSpan spans[kMaxTouchSpans];
  std::size_t count = 0;
};

class ExecDevice {
 public:
  virtual ~ExecDevice() = default;
  // Maps the judge's regions (one descriptor each, closed here), replacing any mapped before.
  virtual void map(const std::vector<RegionSpec>& specs, const std::vector<int>& fds) = 0;
  virtual char* base(std::size_t region) const = 0;
  virtual std::size_t region_count() const = 0;
  virtual std::size_t region_bytes(std::size_t region) const = 0;
  // Calls f once per argument list, in order, then waits for all of it (every stream of the device). Returns the
  // executor's own time per call (seconds). f == nullptr: the same bracketing around nothing (the judge's
  // calibration of one exchange). Throws Fault on a device error.
  virtual std::vector<double> run(EntryFn f, const std::vector<void* const*>& args) = 0;
  // GPU: the gate region (gate.hpp), kept across map()s. Call j of run_gated waits for ready >= first + j on the
  // device, signals go = first + j once it is enqueued and done = first + j after it (gate.hpp's protocol); f ==
  // nullptr: the gate alone (the judge's calibration). Backends without a gate throw Fault("bad_request").
  virtual void map_gate(std::size_t bytes, int fd) = 0;
  virtual std::vector<double> run_gated(EntryFn f, const std::vector<void* const*>& args, uint32_t first) = 0;
  // The built-in touch call (TouchCall), for run_gated; nullptr where the backend has none (the CPU: its clock is
  // calibrated per exchange).
  virtual EntryFn touch_entry() const { return nullptr; }
};

std::unique_ptr<ExecDevice> make_cpu_exec_device();
#if defined(KHIVE_WITH_CUDA)
// Initialises CUDA (device 0 of CUDA_VISIBLE_DEVICES), a non-blocking stream and its events. Throws
// Fault("device_init").
std::unique_ptr<ExecDevice> make_cuda_exec_device(std::size_t max_calls);
#endif

}  // namespace khive::exec
