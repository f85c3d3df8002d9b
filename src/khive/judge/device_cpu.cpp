// The judge's CPU device: shared regions are memfds mapped here read-write (inputs sealed against writable
// mappings before any executor sees them), caches flushed by evicting the batch's own buffers.
#include <fcntl.h>
#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "khive/judge/device.hpp"
#include "khive/support/subprocess.hpp"

namespace khive {

uint64_t checksum_host(const void* p, std::size_t bytes) {
  // Position-weighted sum of 64-bit words, mixed: order-sensitive, fast, parallel, and computed the same way on
  // the device. Not a cryptographic hash: it detects a kernel writing into its inputs.
  const auto* w = static_cast<const uint64_t*>(p);
  std::size_t n = bytes / 8;
  uint64_t acc = 0;
#pragma omp parallel for reduction(+ : acc) schedule(static) if (n > (1 << 17))
  for (std::size_t i = 0; i < n; ++i) {
    uint64_t x = w[i] ^ (i * 0x9E3779B97F4A7C15ull);
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    acc += x ^ (x >> 29);
  }
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = n * 8; i < bytes; ++i) acc += (static_cast<uint64_t>(b[i]) + 1) * (i + 0x632BE59BD9B4E019ull);
  return acc;
}

void perturb_host(DType t, void* p, int64_t n, const DistParams& d, const InputDraw& s, uint64_t tensor) {
  if (!s.perturbed || n <= 0) return;
  int64_t count = perturb_count(n, s.fraction);
  std::size_t sz = dtype_size(t);
  // Two picks of one index write the same bytes (the value depends on the index alone), and sources lie in the
  // first half, never written here.
#pragma omp parallel for schedule(static) if (count > 8192)
  for (int64_t j = 0; j < count; ++j) {
    int64_t i = perturb_index(s.perturb, tensor, j, n, count);
    int64_t src = perturb_source(s.perturb, tensor, i, n);
    if (src >= 0)
      std::memcpy(static_cast<char*>(p) + i * sz, static_cast<const char*>(p) + src * sz, sz);
    else
      num::store(t, p, i, input_value(d, s.perturb, tensor, static_cast<uint64_t>(i)));
  }
}

namespace {

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto c = line.find(':');
      return c == std::string::npos ? line : line.substr(c + 2);
    }
  return "unknown CPU";
}

class MemfdRegion final : public SharedRegion {
 public:
  explicit MemfdRegion(std::size_t bytes) {
    bytes_ = (std::max<std::size_t>(bytes, 1) + 4095) / 4096 * 4096;
    fd_ = ::memfd_create("khive-region", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd_ < 0) throw std::runtime_error(std::string("memfd_create: ") + std::strerror(errno));
    if (::ftruncate(fd_, static_cast<off_t>(bytes_)) != 0) {
      ::close(fd_);
      throw std::runtime_error("cpu: cannot size a shared region of " + std::to_string(bytes_) +
                               " bytes: " + std::strerror(errno));
    }
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) {
      ::close(fd_);
      throw std::runtime_error("cpu: cannot map a shared region of " + std::to_string(bytes_) +
                               " bytes: " + std::strerror(errno));
    }
    ptr_ = static_cast<char*>(p);
    ::madvise(ptr_, bytes_, MADV_HUGEPAGE);
  }
  ~MemfdRegion() override {
    ::munmap(ptr_, bytes_);
    ::close(fd_);
  }
  int share() override {
    int fd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) throw std::runtime_error(std::string("cpu: cannot share a region: ") + std::strerror(errno));
    return fd;
  }
  bool seal_against_writes() override {
#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif
    return ::fcntl(fd_, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0;
  }

 private:
  int fd_ = -1;
};

class CpuJudgeDevice final : public JudgeDevice {
 public:
  CpuJudgeDevice() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    unsigned a = 0, b = 0, c = 0, d = 0;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
    has_clflushopt_ = (b >> 23) & 1u;
#endif
  }
  std::string backend() const override { return "cpu"; }
  nlohmann::json preflight() override {
    return {{"device", cpu_model()}, {"threads", omp_get_max_threads()}, {"flush", "clflush of the batch's buffers"}};
  }
  std::unique_ptr<SharedRegion> region(std::size_t bytes) override { return std::make_unique<MemfdRegion>(bytes); }
  std::size_t memory_budget() override {
    const int64_t known = physical_memory_bytes();
    const std::size_t phys = known > 0 ? static_cast<std::size_t>(known) : (std::size_t{8} << 30);
    return std::min<std::size_t>(phys / 8, std::size_t{4} << 30);
  }
  void* alloc(std::size_t bytes) override {
    void* p = std::aligned_alloc(256, (std::max<std::size_t>(bytes, 1) + 255) / 256 * 256);
    if (!p) throw std::runtime_error("cpu: out of memory allocating " + std::to_string(bytes) + " bytes");
    return p;
  }
  void release(void* p) override { std::free(p); }
  void to_host(void* host, const void* dev, std::size_t bytes) override { copy(host, dev, bytes); }
  void from_host(void* dev, const void* host, std::size_t bytes) override { copy(dev, host, bytes); }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    const std::size_t chunk = 1 << 20;
#pragma omp parallel for schedule(static) if (bytes > 8 * chunk)
    for (std::size_t off = 0; off < bytes; off += chunk)
      std::memcpy(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off, std::min(chunk, bytes - off));
  }
  void fill(DType t, void* p, int64_t n, const DistParams& d, const InputDraw& s, uint64_t tensor) override {
    fill_input_host(t, p, n, d, s.data, tensor);
    perturb_host(t, p, n, d, s, tensor);
  }
  void poison(DType t, void* p, int64_t n, Poison which) override { poison_host(t, p, n, which); }
  uint64_t checksum(const void* p, std::size_t bytes) override { return checksum_host(p, bytes); }
  void gather_sample(DType t, const void* out, int64_t n, uint64_t key, int64_t count, void* host_dst) override {
    std::size_t sz = dtype_size(t);
#pragma omp parallel for schedule(static) if (count > (1 << 16))
    for (int64_t j = 0; j < count; ++j)
      std::memcpy(static_cast<char*>(host_dst) + j * sz,
                  static_cast<const char*>(out) + sample_index(key, j, count, n) * sz, sz);
  }
  CompareStats compare(DType t, const void* out, const void* ref, bool, int64_t n, int64_t cols, const Tolerance& tol,
                       Poison poison) override {
    return compare_host(t, out, ref, n, cols, tol, poison);
  }
  void flush(const std::vector<Region>& touched) override {
#if defined(__x86_64__) || defined(__i386__)
    // clflush on every line of the batch's buffers: evicted from all levels, written back if dirty.
    for (const Region& r : touched) {
      auto b = reinterpret_cast<std::uintptr_t>(r.p) & ~std::uintptr_t{63};
      auto e = reinterpret_cast<std::uintptr_t>(r.p) + r.bytes;
      std::int64_t lines = static_cast<std::int64_t>((e - b + 63) / 64);
#pragma omp parallel for schedule(static) if (lines > (1 << 16))
      for (std::int64_t l = 0; l < lines; ++l) {
        const void* line = reinterpret_cast<const void*>(b + static_cast<std::uintptr_t>(l) * 64);
        if (has_clflushopt_)
          flushopt(line);
        else
          __builtin_ia32_clflush(line);
      }
    }
    asm volatile("mfence" ::: "memory");
#else
    (void)touched;
#endif
  }
#if defined(__x86_64__) || defined(__i386__)
  __attribute__((target("clflushopt"))) static void flushopt(const void* p) {
    __builtin_ia32_clflushopt(const_cast<void*>(p));
  }
#endif
  double drain(double) override { return 0.0; }
  void synchronize() override {}

 private:
  bool has_clflushopt_ = false;
};

}  // namespace

std::unique_ptr<JudgeDevice> make_cpu_judge_device() { return std::make_unique<CpuJudgeDevice>(); }

}  // namespace khive
