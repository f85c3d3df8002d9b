// The executor's GPU device: the judge's regions imported from their descriptors (CUDA virtual memory), one
// non-blocking stream handed to the kernel, events around each call (the in-process clock the judge cross-checks),
// then a synchronisation of the whole device, so the answer comes after every stream's work.
#include <cuda_runtime.h>
#include <unistd.h>

#include "khive/executor/device.hpp"
#include "khive/executor/gate.hpp"
#include "khive/executor/vmm.hpp"

namespace khive::exec {
namespace {

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Fault("cuda_error", std::string(what) + ": CUDA error " + std::to_string(static_cast<int>(e)) + " (" + cudaGetErrorName(e) +
                                  "): " + cudaGetErrorString(e));
}

class CudaExecDevice final : public ExecDevice {
 public:
  explicit CudaExecDevice(std::size_t max_calls) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) throw Fault("device_init", std::string("no CUDA device visible (") + cudaGetErrorString(e) + ")");
    auto init = [](cudaError_t r, const char* what) {
      if (r != cudaSuccess) throw Fault("device_init", std::string(what) + ": " + cudaGetErrorString(r));
    };
    init(cudaSetDevice(0), "cudaSetDevice");
    init(cudaFree(nullptr), "context");
    init(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    init(cudaStreamCreateWithFlags(&signal_, cudaStreamNonBlocking), "cudaStreamCreate");
    events_.resize(2 * max_calls);
    for (auto& ev : events_) init(cudaEventCreate(&ev), "cudaEventCreate");
    // No persisting-L2 carve-out in this context (the judge also resets persisting lines before every flush).
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess && prop.persistingL2CacheMaxSize > 0) cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
    init(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  ~CudaExecDevice() override {
    unmap();
    if (gate_.ptr) vmm_release(gate_);
  }
  void map(const std::vector<RegionSpec>& specs, const std::vector<int>& fds) override {
    unmap();
    if (specs.size() != fds.size()) {
      for (int fd : fds) ::close(fd);
      throw Fault("bad_request", "map: region and descriptor counts differ");
    }
    for (std::size_t i = 0; i < specs.size(); ++i) {
      try {
        regions_.push_back(vmm_import(fds[i], specs[i].bytes));
      } catch (const std::exception& ex) {
        for (std::size_t k = i + 1; k < fds.size(); ++k) ::close(fds[k]);
        throw Fault("bad_request", std::string("map: ") + ex.what());
      }
    }
  }
  char* base(std::size_t r) const override { return reinterpret_cast<char*>(regions_.at(r).ptr); }
  std::size_t region_count() const override { return regions_.size(); }
  std::size_t region_bytes(std::size_t r) const override { return regions_.at(r).bytes; }
  std::vector<double> run(EntryFn f, const std::vector<void* const*>& args) override {
    if (2 * args.size() > events_.size()) throw Fault("bad_request", "call: more calls than events");
    for (std::size_t i = 0; i < args.size(); ++i) {
      ck(cudaEventRecord(events_[2 * i], stream_), "cudaEventRecord");
      if (f) f(args[i], stream_);
      ck(cudaEventRecord(events_[2 * i + 1], stream_), "cudaEventRecord");
    }
    return finish(args.size());
  }
  void map_gate(std::size_t bytes, int fd) override {
    if (gate_.ptr) {
      ::close(fd);
      throw Fault("bad_request", "gate: already mapped");
    }
    if (bytes < kGateBytes) {
      ::close(fd);
      throw Fault("bad_request", "gate: region too small");
    }
    try {
      gate_ = vmm_import(fd, bytes);
    } catch (const std::exception& ex) {
      throw Fault("bad_request", std::string("gate: ") + ex.what());
    }
  }
  // gate.hpp: every call is enqueued behind the judge's `ready`, so its inputs (revealed by the judge only then)
  // cannot be read earlier; `go` tells the judge the call is queued (its reveal and clock start after that, so this
  // host's latency never sits inside the judge's bracket), `done` ends the judge's bracket.
  std::vector<double> run_gated(EntryFn f, const std::vector<void* const*>& args, uint32_t first) override {
    if (!gate_.ptr) throw Fault("bad_request", "call: no gate mapped");
    if (2 * args.size() > events_.size()) throw Fault("bad_request", "call: more calls than events");
    char* g = reinterpret_cast<char*>(gate_.ptr);
    try {
      for (std::size_t i = 0; i < args.size(); ++i) {
        const uint32_t v = first + static_cast<uint32_t>(i);
        stream_wait_geq(stream_, g + kGateReady, v);
        ck(cudaEventRecord(events_[2 * i], stream_), "cudaEventRecord");
        stream_write(signal_, g + kGateGo, v);
        if (f) f(args[i], stream_);
        ck(cudaEventRecord(events_[2 * i + 1], stream_), "cudaEventRecord");
        stream_write(stream_, g + kGateDone, v);
      }
    } catch (const Fault&) {
      throw;
    } catch (const std::exception& ex) {
      throw Fault("cuda_error", ex.what());
    }
    return finish(args.size());
  }

 private:
  // After the calls are enqueued: every stream of the device done, then each call's time between its two events.
  std::vector<double> finish(std::size_t calls) {
    ck(cudaGetLastError(), "kernel launch");
    ck(cudaDeviceSynchronize(), "after the kernel's calls");
    std::vector<double> t;
    for (std::size_t i = 0; i < calls; ++i) {
      float ms = 0;
      ck(cudaEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]), "cudaEventElapsedTime");
      t.push_back(ms * 1e-3);
    }
    return t;
  }
  void unmap() {
    cudaDeviceSynchronize();
    for (auto& r : regions_) vmm_release(r);
    regions_.clear();
  }
  cudaStream_t stream_ = nullptr, signal_ = nullptr;
  std::vector<cudaEvent_t> events_;
  VmmRegion gate_;
  std::vector<VmmRegion> regions_;
};

}  // namespace

std::unique_ptr<ExecDevice> make_cuda_exec_device(std::size_t max_calls) { return std::make_unique<CudaExecDevice>(max_calls); }

}  // namespace khive::exec
