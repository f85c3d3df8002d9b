// The executor's CPU device: the judge's memfd regions mapped shared (inputs read-only: the judge sealed them
// against writable mappings, so no mprotect can make them writable), the steady clock around each call.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "khive/executor/device.hpp"

namespace khive::exec {
namespace {

class CpuExecDevice final : public ExecDevice {
 public:
  ~CpuExecDevice() override { unmap(); }
  void map(const std::vector<RegionSpec>& specs, const std::vector<int>& fds) override {
    unmap();
    if (specs.size() != fds.size()) {
      for (int fd : fds) ::close(fd);
      throw Fault("bad_request", "map: " + std::to_string(specs.size()) + " regions but " + std::to_string(fds.size()) +
                                     " descriptors");
    }
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const int prot = PROT_READ | (specs[i].writable ? PROT_WRITE : 0);
      void* p = specs[i].bytes ? ::mmap(nullptr, specs[i].bytes, prot, MAP_SHARED, fds[i], 0) : nullptr;
      const int err = errno;
      ::close(fds[i]);
      if (p == MAP_FAILED) {
        for (std::size_t k = i + 1; k < fds.size(); ++k) ::close(fds[k]);
        throw Fault("bad_request",
                    std::string("map: mmap of region ") + std::to_string(i) + " failed: " + std::strerror(err));
      }
      regions_.push_back({static_cast<char*>(p), specs[i].bytes});
    }
  }
  char* base(std::size_t r) const override { return regions_.at(r).p; }
  std::size_t region_count() const override { return regions_.size(); }
  std::size_t region_bytes(std::size_t r) const override { return regions_.at(r).bytes; }
  std::vector<double> run(EntryFn f, const std::vector<void* const*>& args) override {
    std::vector<double> t;
    t.reserve(args.size());
    for (void* const* a : args) {
      auto t0 = std::chrono::steady_clock::now();
      if (f) f(a, nullptr);
      auto t1 = std::chrono::steady_clock::now();
      t.push_back(std::chrono::duration<double>(t1 - t0).count());
    }
    return t;
  }
  // The CPU's calls are one exchange each (the judge reveals a call's inputs before its message): no gate.
  void map_gate(std::size_t, int fd) override {
    ::close(fd);
    throw Fault("bad_request", "gate: the CPU backend has no gate");
  }
  std::vector<double> run_gated(EntryFn, const std::vector<void* const*>&, uint32_t) override {
    throw Fault("bad_request", "call: the CPU backend has no gate");
  }

 private:
  struct Region {
    char* p;
    std::size_t bytes;
  };
  void unmap() {
    for (auto& r : regions_)
      if (r.p) ::munmap(r.p, r.bytes);
    regions_.clear();
  }
  std::vector<Region> regions_;
};

}  // namespace

std::unique_ptr<ExecDevice> make_cpu_exec_device() { return std::make_unique<CpuExecDevice>(); }

}  // namespace khive::exec
