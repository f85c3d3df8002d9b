// The judge's side of the device: memory it owns and shares with executors, and everything it does to that
// memory itself (fresh inputs, sentinels, flushes, hashes, comparisons). All of it is trusted code in the judge's
// own process; executors only ever see the regions handed to them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "khive/job/input_keys.hpp"
#include "khive/job/protocol.hpp"
#include "khive/numerics/compare.hpp"
#include "khive/numerics/inputs.hpp"

namespace khive {

// A block of memory the judge owns and can hand to executors: a memfd (CPU) or CUDA virtual memory exported as
// a POSIX descriptor (GPU). Its address here is `ptr`; an executor maps it at its own address.
class SharedRegion {
 public:
  virtual ~SharedRegion() = default;
  char* ptr() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  // A new descriptor for an executor (the caller sends and closes it).
  virtual int share() = 0;
  // From now on no one but the judge can write it (CPU: F_SEAL_FUTURE_WRITE; executors map it read-only and
  // cannot mprotect it writable). False where the kernel cannot seal (the judge then hashes it after every call).
  virtual bool seal_against_writes() = 0;

 protected:
  char* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class JudgeDevice {
 public:
  virtual ~JudgeDevice() = default;
  virtual std::string backend() const = 0;
  virtual nlohmann::json preflight() = 0;  // device facts, clocks, L2 policy state
  virtual std::unique_ptr<SharedRegion> region(std::size_t bytes) = 0;
  // How much memory one workload's arena may take (CPU: 1/8 of memory, at most 4 GiB; GPU: 1/4 of what is
  // free, at most 16 GiB): it bounds how many calls a timed batch can hold.
  virtual std::size_t memory_budget() = 0;
  // Scratch memory only the judge sees (device memory on the GPU).
  virtual void* alloc(std::size_t bytes) = 0;
  virtual void release(void* p) = 0;
  virtual void to_host(void* host, const void* dev, std::size_t bytes) = 0;
  virtual void from_host(void* dev, const void* host, std::size_t bytes) = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  // Input tensor `tensor` of the set drawn with `s` (asynchronous on the GPU).
  virtual void fill(DType t, void* p, int64_t n, const DistParams& d, const InputDraw& s, uint64_t tensor) = 0;
  virtual void poison(DType t, void* p, int64_t n, Poison which) = 0;
  virtual uint64_t checksum(const void* p, std::size_t bytes) = 0;
  // The `count` elements sample_index(key, j, count, n) of an output, gathered into host memory.
  virtual void gather_sample(DType t, const void* out, int64_t n, uint64_t key, int64_t count, void* host_dst) = 0;
  // Output against a golden; `ref_on_device`: the golden is device memory the judge owns (else host memory).
  virtual CompareStats compare(DType t, const void* out, const void* ref, bool ref_on_device, int64_t n, int64_t cols,
                               const Tolerance& tol, Poison poison) = 0;
  struct Region {
    const void* p;
    std::size_t bytes;
  };
  // Empties the caches before a timed batch: the GPU resets persisting L2 lines (device-wide) and writes 2x its
  // L2; the CPU evicts exactly the batch's buffers from every cache level.
  virtual void flush(const std::vector<Region>& touched) = 0;
  // GPU: waits until no other context has work on the device (probe kernels, on a stream of their own, until one
  // runs at idle speed) and returns how long that took; throws std::runtime_error after timeout_s. CPU: 0 (stopped
  // executors cannot run).
  virtual double drain(double timeout_s) = 0;
  virtual void synchronize() = 0;

  // ---- the gated clock (GPU; executor/gate.hpp): everything below is enqueued on the judge's stream, in order ----
  // False on the CPU, whose calls are one exchange each; the functions below then throw std::logic_error.
  virtual bool gated() const { return false; }
  virtual void wait_geq(void* flag, uint32_t value);
  virtual void write_value(void* flag, uint32_t value);
  // Writes `value` to `flag` from outside the judge's stream (a stream of its own), so that waits of the judge's
  // stream on it pass: an executor that died mid-batch never writes its counters.
  virtual void release(void* flag, uint32_t value);
  // Records timing mark i (0 <= i < marks()) on the stream; elapsed_s(a, b) after a synchronize().
  virtual int marks() const { return 0; }
  virtual void mark(int i);
  virtual double elapsed_s(int a, int b);
  // The L2 flush of flush(), asynchronous.
  virtual void flush_async();
  // checksum() of [p, p + bytes) into accumulator slot i (0 <= i < checksum_slots()), asynchronous; read after a
  // synchronize() with checksum_slot(i).
  virtual int checksum_slots() const { return 0; }
  virtual void checksum_async(const void* p, std::size_t bytes, int slot);
  virtual std::vector<uint64_t> read_checksums(int first, int count);
  // Polls the judge's stream until its work is done or timeout_s passed (false: still busy).
  virtual bool wait_idle(double timeout_s);
};

std::unique_ptr<JudgeDevice> make_cpu_judge_device();
#if defined(KHIVE_WITH_CUDA)
std::unique_ptr<JudgeDevice> make_cuda_judge_device();
#endif

// Host helpers shared with tests.
void perturb_host(DType t, void* p, int64_t n, const DistParams& d, const InputDraw& s, uint64_t tensor);
uint64_t checksum_host(const void* p, std::size_t bytes);

}  // namespace khive
