// Where the runner keeps buffers and calls the candidate: host memory (CPU backend) or one GPU.
// Everything here is the runner's own trusted code; the candidate only ever sees buffer pointers.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/check/compare.hpp"
#include "khive/check/inputs.hpp"
#include "khive/run/protocol.hpp"

namespace khive {

using EntryFn = void (*)(void* const* args, void* stream);

// A fault observed while calling the candidate (CUDA error, sticky context error).
struct CallFault : std::runtime_error {
  std::string reason;   // protocol reason code: "cuda_error", ...
  CallFault(std::string reason, const std::string& what) : std::runtime_error(what), reason(std::move(reason)) {}
};

struct TimedCall {
  double seconds = 0;   // device time of the call (events on the stream / steady clock on the CPU)
  double drain_s = 0;   // how long a full device synchronisation still took after the end event
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string backend() const = 0;
  virtual nlohmann::json preflight() = 0;   // device facts, clocks, L2 policy state
  virtual void* alloc(std::size_t bytes) = 0;
  virtual void release(void* p) = 0;
  virtual void to_host(void* host, const void* dev, std::size_t bytes) = 0;
  virtual void from_host(void* dev, const void* host, std::size_t bytes) = 0;
  virtual void fill(DType t, void* p, int64_t n, const DistParams& d, const InputSpec& s, uint64_t tensor) = 0;
  // Only the perturbation of `s` (perturb_host's rule), on data already in p.
  virtual void perturb(DType t, void* p, int64_t n, const DistParams& d, const InputSpec& s, uint64_t tensor) = 0;
  // Undo the perturbation `s` made: copy back from `pristine` exactly the elements it changed (O(k)).
  virtual void restore_perturbed(DType t, void* dst, const void* pristine, int64_t n, const InputSpec& s, uint64_t tensor) = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;   // device to device
  virtual void poison(DType t, void* p, int64_t n, Poison which) = 0;
  virtual uint64_t checksum(const void* p, std::size_t bytes) = 0;
  // The `count` elements sample_index(key, j, count, n) of an output, gathered into host memory.
  virtual void gather_sample(DType t, const void* out, int64_t n, uint64_t key, int64_t count, void* host_dst) = 0;
  virtual CompareStats compare(DType t, const void* out, const void* ref_host, int64_t n, int64_t cols,
                               const Tolerance& tol, Poison poison) = 0;
  // A buffer the next call will touch (its inputs and outputs).
  struct Region { const void* p; std::size_t bytes; };
  // Empties the caches between samples so the call starts cold: the GPU writes 2x its L2 and resets
  // persisting L2; the CPU evicts exactly the call's buffers from every cache level (clflushopt), which
  // is what matters and costs O(buffer) rather than 2x a last-level cache that may be hundreds of MB.
  virtual void flush(const std::vector<Region>& touched) = 0;
  // Calls the entry and waits for it; throws CallFault on a device fault.
  virtual void call(EntryFn f, void* const* args) = 0;
  virtual TimedCall timed_call(EntryFn f, void* const* args) = 0;
  // After a call: did the candidate leave an L2 persistence window or limit behind? Empty if not.
  virtual std::string persisting_l2_state() = 0;
  virtual void synchronize() = 0;
};

std::unique_ptr<Device> make_cpu_device();
#if defined(KHIVE_WITH_CUDA)
std::unique_ptr<Device> make_cuda_device();
#endif

// Replace a sparse set of elements (perturb_count/perturb_index in check/inputs.hpp: about fraction of the
// second half, and always the last element) by values drawn with spec.perturb_seed. Host helpers; the CUDA
// device has its own kernels with the same index rule.
void perturb_host(DType t, void* p, int64_t n, const DistParams& d, const InputSpec& s, uint64_t tensor);
void restore_perturbed_host(DType t, void* dst, const void* pristine, int64_t n, const InputSpec& s, uint64_t tensor);
uint64_t checksum_host(const void* p, std::size_t bytes);

}  // namespace khive
