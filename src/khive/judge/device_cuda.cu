// The judge's GPU device: shared regions are CUDA virtual memory exported as POSIX descriptors (vmm.hpp), the
// judge's own stream does fills, sentinels, hashes and comparisons, the L2 is flushed (persisting lines reset,
// then 2x its size written) before every timed batch, and drain() is the judge's witness that no executor's work
// is still on the device: probe kernels from this context until one runs at idle speed (contexts share the GPU by
// time-slicing, so a probe waits behind any other context's pending work).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "khive/executor/gate.hpp"
#include "khive/executor/vmm.hpp"
#include "khive/judge/device.hpp"

namespace khive {
namespace {

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": CUDA error " + std::to_string(static_cast<int>(e)) + " (" +
                             cudaGetErrorName(e) + "): " + cudaGetErrorString(e));
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

__global__ void perturb_kernel(DType t, int sz, void* p, int64_t n, DistParams d, InputKey pseed, int64_t count,
                               uint64_t tensor) {
  for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < count; j += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = perturb_index(pseed, tensor, j, n, count);
    int64_t src = perturb_source(pseed, tensor, i, n);
    if (src >= 0) {
      for (int b = 0; b < sz; ++b) static_cast<char*>(p)[i * sz + b] = static_cast<const char*>(p)[src * sz + b];
    } else {
      num::store(t, p, i, input_value(d, pseed, tensor, static_cast<uint64_t>(i)));
    }
  }
}

__global__ void gather_sample_kernel(int sz, const char* out, int64_t n, uint64_t key, int64_t count, char* dst) {
  for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < count; j += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = sample_index(key, j, count, n);
    for (int b = 0; b < sz; ++b) dst[j * sz + b] = out[i * sz + b];
  }
}

// checksum_host's function (device.hpp): the 8-byte words mixed by index and summed, the tail bytes by their own rule,
// into one accumulator (zeroed before).
__global__ void checksum_bytes_kernel(const unsigned char* p, std::size_t bytes, unsigned long long* out) {
  const std::size_t n = bytes / 8;
  const uint64_t* w = reinterpret_cast<const uint64_t*>(p);
  unsigned long long acc = 0;
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < n;
       i += (std::size_t)gridDim.x * blockDim.x) {
    uint64_t x = w[i] ^ (i * 0x9E3779B97F4A7C15ull);
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    acc += x ^ (x >> 29);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (std::size_t i = n * 8; i < bytes; ++i) acc += (static_cast<uint64_t>(p[i]) + 1) * (i + 0x632BE59BD9B4E019ull);
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}

__global__ void probe_kernel(unsigned* p) {
  if (threadIdx.x == 0) *p += 1;
}

class VmmSharedRegion final : public SharedRegion {
 public:
  explicit VmmSharedRegion(std::size_t bytes) : r_(exec::vmm_create(bytes)) {
    ptr_ = reinterpret_cast<char*>(r_.ptr);
    bytes_ = r_.bytes;
  }
  ~VmmSharedRegion() override {
    // Nothing the judge shared may outlive it readable by the next context that gets these pages.
    cudaMemset(ptr_, 0, bytes_);
    cudaDeviceSynchronize();
    exec::vmm_release(r_);
  }
  int share() override { return exec::vmm_export(r_); }
  bool seal_against_writes() override { return false; }  // an importer may always map it read-write: hash instead

 private:
  exec::VmmRegion r_;
};

class CudaJudgeDevice final : public JudgeDevice {
 public:
  CudaJudgeDevice() {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0)
      throw std::runtime_error(std::string("no CUDA device visible (") + cudaGetErrorString(e) + ")");
    // Spin while waiting (the probes' latency is part of the judge's clock); set before the context exists, and
    // not fatal where a driver refuses it (the probes are then only slower, which the calibration sees).
    (void)cudaSetDeviceFlags(cudaDeviceScheduleSpin);
    (void)cudaGetLastError();
    ck(cudaSetDevice(0), "cudaSetDevice");
    ck(cudaGetDeviceProperties(&prop_, 0), "cudaGetDeviceProperties");
    // Under MPS the judge's and the executors' work share one hardware context: on the H200 the gated clock then read
    // small kernels 7-8 us below their own time (the calibrated bracket no longer matches a timed call's;
    // docs/results/2026-12-03-h200/session5). The judge refuses unless told otherwise (samples are then floored at
    // the kernels' own events, Session::gated_batch).
    int mps = 0;
    if (cudaDeviceGetAttribute(&mps, cudaDevAttrMpsEnabled, 0) != cudaSuccess) (void)cudaGetLastError(), mps = 0;
    mps_ = mps != 0;
    const char* allow = std::getenv("KHIVE_ALLOW_MPS");
    if (mps_ && !(allow && std::string(allow) == "1"))
      throw std::runtime_error(
          "an MPS server shares this GPU (cudaDevAttrMpsEnabled = 1), and under MPS the judge's clock misreads small "
          "kernels "
          "(7-8 us below their own time on the H200): stop it (echo quit | nvidia-cuda-mps-control) or use a GPU "
          "without it; "
          "KHIVE_ALLOW_MPS=1 runs anyway, each sample floored at the kernel's own events");
    if (const char* p = std::getenv("KHIVE_EXEC_PRIMER"); !exec::primer_blocks_per_sm(p))
      throw std::runtime_error("KHIVE_EXEC_PRIMER is '" + std::string(p) +
                               "': expected the primer's blocks per SM, an integer from 0 (off) to " +
                               std::to_string(exec::kPrimerMaxBlocksPerSm) +
                               " (unset: " + std::to_string(exec::kPrimerBlocksPerSm) + ")");
    ck(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    ck(cudaStreamCreateWithFlags(&probe_stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    ck(cudaStreamCreateWithFlags(&side_stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    marks_.resize(kMarks);
    for (auto& e : marks_) ck(cudaEventCreate(&e), "cudaEventCreate");
    ck(cudaMalloc(&slots_, sizeof(unsigned long long) * kSlots), "cudaMalloc(checksum slots)");
    flush_bytes_ = 2 * static_cast<std::size_t>(prop_.l2CacheSize);
    ck(cudaMalloc(&flush_buf_, flush_bytes_), "cudaMalloc(flush)");
    ck(cudaMalloc(&sum_, sizeof(unsigned long long)), "cudaMalloc(checksum)");
    ck(cudaMalloc(&probe_, sizeof(unsigned)), "cudaMalloc(probe)");
    if (prop_.persistingL2CacheMaxSize > 0)
      ck(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0), "cudaDeviceSetLimit");
    ck(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
    // The idle probe latency: the bar drain() compares against.
    std::vector<double> p;
    for (int i = 0; i < 50; ++i) p.push_back(probe());
    std::sort(p.begin(), p.end());
    idle_probe_s_ = p[p.size() / 2];
  }
  ~CudaJudgeDevice() override {
    for (auto& e : marks_) cudaEventDestroy(e);
    cudaFree(slots_);
    cudaStreamDestroy(probe_stream_);
    cudaStreamDestroy(side_stream_);
    cudaFree(flush_buf_);
    cudaFree(sum_);
    cudaFree(probe_);
    if (ref_dev_) cudaFree(ref_dev_);
    cudaStreamDestroy(stream_);
  }
  std::string backend() const override { return "cuda"; }
  nlohmann::json preflight() override {
    size_t limit = 0;
    cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize);
    int clock_khz = 0, mem_khz = 0, drv = 0, rt = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
    cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0);
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    return {{"device", prop_.name},
            {"sm_count", prop_.multiProcessorCount},
            {"cc", std::to_string(prop_.major) + "." + std::to_string(prop_.minor)},
            {"l2_bytes", prop_.l2CacheSize},
            {"flush_bytes", flush_bytes_},
            {"persisting_l2_limit", limit},
            {"max_sm_clock_mhz", clock_khz / 1000},
            {"max_mem_clock_mhz", mem_khz / 1000},
            {"global_mem_bytes", prop_.totalGlobalMem},
            {"driver", drv},
            {"runtime", rt},
            {"idle_probe_s", idle_probe_s_},
            {"mps", mps_}};
  }
  std::unique_ptr<SharedRegion> region(std::size_t bytes) override {
    auto r = std::make_unique<VmmSharedRegion>(bytes);
    ck(cudaMemsetAsync(r->ptr(), 0, r->bytes(), stream_), "cudaMemset(region)");
    return r;
  }
  std::size_t memory_budget() override {
    std::size_t free_b = 0, total = 0;
    cudaMemGetInfo(&free_b, &total);
    return std::min<std::size_t>(free_b / 4, std::size_t{16} << 30);
  }
  void* alloc(std::size_t bytes) override {
    void* p = nullptr;
    ck(cudaMalloc(&p, std::max<std::size_t>(bytes, 1)), "cudaMalloc");
    return p;
  }
  void release(void* p) override { cudaFree(p); }
  void to_host(void* host, const void* dev, std::size_t bytes) override {
    ck(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpy D2H");
    synchronize();
  }
  void from_host(void* dev, const void* host, std::size_t bytes) override {
    ck(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpy H2D");
    synchronize();
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    ck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_), "cudaMemcpy D2D");
  }
  void fill(DType t, void* p, int64_t n, const DistParams& d, const InputDraw& s, uint64_t tensor) override {
    fill_input_device(t, p, n, d, s.data, tensor, stream_);
    if (s.perturbed && n > 0) {
      int64_t count = perturb_count(n, s.fraction);
      perturb_kernel<<<std::min<int64_t>((count + 255) / 256, 4096), 256, 0, stream_>>>(
          t, static_cast<int>(dtype_size(t)), p, n, d, s.perturb, count, tensor);
      ck(cudaGetLastError(), "perturb");
    }
  }
  void poison(DType t, void* p, int64_t n, Poison which) override { poison_device(t, p, n, which, stream_); }
  uint64_t checksum(const void* p, std::size_t bytes) override {
    ck(cudaMemsetAsync(sum_, 0, sizeof(unsigned long long), stream_), "memset");
    launch_checksum(p, bytes, sum_);
    unsigned long long acc = 0;
    to_host(&acc, sum_, sizeof acc);
    return acc;
  }
  void gather_sample(DType t, const void* out, int64_t n, uint64_t key, int64_t count, void* host_dst) override {
    std::size_t bytes = static_cast<std::size_t>(count) * dtype_size(t);
    void* tmp = alloc(bytes);
    gather_sample_kernel<<<static_cast<unsigned>(std::min<int64_t>((count + 255) / 256, 4096)), 256, 0, stream_>>>(
        static_cast<int>(dtype_size(t)), static_cast<const char*>(out), n, key, count, static_cast<char*>(tmp));
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) to_host(host_dst, tmp, bytes);
    cudaFree(tmp);
    ck(e, "gather_sample");
  }
  CompareStats compare(DType t, const void* out, const void* ref, bool ref_on_device, int64_t n, int64_t cols,
                       const Tolerance& tol, Poison poison) override {
    const void* r = ref;
    if (!ref_on_device) {
      std::size_t bytes = static_cast<std::size_t>(n) * dtype_size(t);
      if (ref_cap_ < bytes) {
        if (ref_dev_) cudaFree(ref_dev_);
        ref_dev_ = nullptr;
        ck(cudaMalloc(&ref_dev_, bytes), "cudaMalloc(golden)");
        ref_cap_ = bytes;
      }
      from_host(ref_dev_, ref, bytes);
      r = ref_dev_;
    }
    return compare_device(t, out, r, n, cols, tol, poison, stream_);
  }
  void flush(const std::vector<Region>& = {}) override {
    // Persisting lines are a device-wide state: reset from this context they are normal lines again, and the
    // write below evicts them with everything else (an executor's access-policy window buys it nothing).
    ck(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
    ck(cudaMemsetAsync(flush_buf_, static_cast<int>(++flush_round_ & 0xff), flush_bytes_, stream_), "L2 flush");
    synchronize();
  }
  double drain(double timeout_s) override {
    // The judge's own work queued behind the batch's last call first (its checksums: ~1 ms for a 5 GB output), which
    // is not the executor's: the H200's null A/B of a 5 ms add (three 5.4 GB tensors) was rejected for 869 us of
    // "work after return" that was the judge's checksum (2026-12-03). An executor that answered has written every
    // `done`, so this stream finishes; one that did not is bounded by the same limit.
    if (!wait_idle(timeout_s))
      throw std::runtime_error("the judge's stream did not finish after the executor answered");
    const double t0 = now_s();
    const double idle = std::max(3 * idle_probe_s_, idle_probe_s_ + 30e-6);
    // Two fast probes in a row: one could slip into a time slice the other context left between kernels.
    int fast = 0;
    for (;;) {
      fast = probe() <= idle ? fast + 1 : 0;
      if (fast == 2) return now_s() - t0;
      if (now_s() - t0 > timeout_s) throw std::runtime_error("the device stayed busy with another context's work");
    }
  }
  void synchronize() override { ck(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

  bool gated() const override { return true; }
  void wait_geq(void* flag, uint32_t value) override { exec::stream_wait_geq(stream_, flag, value); }
  void write_value(void* flag, uint32_t value) override { exec::stream_write(stream_, flag, value); }
  void release(void* flag, uint32_t value) override { exec::stream_write(side_stream_, flag, value); }
  int marks() const override { return kMarks; }
  void mark(int i) override { ck(cudaEventRecord(marks_.at(static_cast<std::size_t>(i)), stream_), "cudaEventRecord"); }
  double elapsed_s(int a, int b) override {
    float ms = 0;
    ck(cudaEventElapsedTime(&ms, marks_.at(static_cast<std::size_t>(a)), marks_.at(static_cast<std::size_t>(b))),
       "cudaEventElapsedTime");
    return ms * 1e-3;
  }
  void flush_async() override {
    ck(cudaMemsetAsync(flush_buf_, static_cast<int>(++flush_round_ & 0xff), flush_bytes_, stream_), "L2 flush");
  }
  int checksum_slots() const override { return kSlots; }
  void checksum_async(const void* p, std::size_t bytes, int slot) override {
    unsigned long long* out = slots_ + slot;
    if (slot < 0 || slot >= kSlots) throw std::out_of_range("checksum slot");
    ck(cudaMemsetAsync(out, 0, sizeof *out, stream_), "memset");
    launch_checksum(p, bytes, out);
  }
  std::vector<uint64_t> read_checksums(int first, int count) override {
    std::vector<uint64_t> v(static_cast<std::size_t>(count));
    if (count > 0) to_host(v.data(), slots_ + first, sizeof(uint64_t) * v.size());
    return v;
  }
  bool wait_idle(double timeout_s) override {
    const double until = now_s() + timeout_s;
    for (;;) {
      cudaError_t e = cudaStreamQuery(stream_);
      if (e == cudaSuccess) return true;
      if (e != cudaErrorNotReady) ck(e, "cudaStreamQuery");
      if (now_s() > until) return false;
    }
  }

 private:
  static constexpr int kMarks = 2 * 256 + 8;  // J0 and J1 of the largest batch
  static constexpr int kSlots = 4 * 256 * 8;  // per call: inputs and outputs (up to 8 tensors each), twice
  void launch_checksum(const void* p, std::size_t bytes, unsigned long long* out) {
    const std::size_t n = std::max<std::size_t>(bytes / 8, 1);
    checksum_bytes_kernel<<<static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 4096)), 256, 0, stream_>>>(
        static_cast<const unsigned char*>(p), bytes, out);
    ck(cudaGetLastError(), "checksum");
  }
  // On a stream of its own: the judge's main stream may still be finishing the batch's last checksums.
  double probe() {
    const double t0 = now_s();
    probe_kernel<<<1, 32, 0, probe_stream_>>>(probe_);
    ck(cudaStreamSynchronize(probe_stream_), "probe");
    return now_s() - t0;
  }
  cudaDeviceProp prop_{};
  cudaStream_t stream_ = nullptr, probe_stream_ = nullptr, side_stream_ = nullptr;
  std::vector<cudaEvent_t> marks_;
  unsigned long long* slots_ = nullptr;
  void* flush_buf_ = nullptr;
  std::size_t flush_bytes_ = 0;
  unsigned flush_round_ = 0;
  unsigned long long* sum_ = nullptr;
  unsigned* probe_ = nullptr;
  void* ref_dev_ = nullptr;
  std::size_t ref_cap_ = 0;
  double idle_probe_s_ = 10e-6;
  bool mps_ = false;  // an MPS server shares the GPU (allowed only with KHIVE_ALLOW_MPS=1)
};

}  // namespace

std::unique_ptr<JudgeDevice> make_cuda_judge_device() { return std::make_unique<CudaJudgeDevice>(); }

}  // namespace khive
