// The CPU backend: buffers in host memory, steady-clock timing, caches flushed by writing a buffer
// twice the size of the last-level cache.
#include <omp.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "khive/runner/device.hpp"

namespace khive {

uint64_t checksum_host(const void* p, std::size_t bytes) {
  // Position-weighted sum of 64-bit words, mixed: order-sensitive, fast, parallel, and computed the
  // same way on the device. Not a cryptographic hash: it detects a kernel writing into its inputs.
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

void perturb_host(DType t, void* p, int64_t n, const DistParams& d, const InputSpec& s, uint64_t tensor) {
  if (!s.perturb_seed || n <= 0) return;
  int64_t count = perturb_count(n, s.fraction);
  std::size_t sz = dtype_size(t);
  // Random accesses, bound by memory latency: in parallel once there are many. Two picks of one index write the
  // same bytes (the value depends on the index alone), and sources lie in the first half, never written here.
#pragma omp parallel for schedule(static) if (count > 8192)
  for (int64_t j = 0; j < count; ++j) {
    int64_t i = perturb_index(s.perturb_seed, tensor, j, n, count);
    int64_t src = perturb_source(s.perturb_seed, tensor, i, n);
    if (src >= 0) std::memcpy(static_cast<char*>(p) + i * sz, static_cast<const char*>(p) + src * sz, sz);
    else num::store(t, p, i, input_value(d, s.perturb_seed, tensor, static_cast<uint64_t>(i)));
  }
}

void restore_perturbed_host(DType t, void* dst, const void* pristine, int64_t n, const InputSpec& s, uint64_t tensor) {
  if (!s.perturb_seed || n <= 0) return;
  std::size_t sz = dtype_size(t);
  int64_t count = perturb_count(n, s.fraction);
#pragma omp parallel for schedule(static) if (count > 8192)
  for (int64_t j = 0; j < count; ++j) {
    int64_t i = perturb_index(s.perturb_seed, tensor, j, n, count);
    std::memcpy(static_cast<char*>(dst) + i * sz, static_cast<const char*>(pristine) + i * sz, sz);
  }
}

namespace {

std::size_t last_level_cache_bytes() {
  std::size_t best = 0;
  for (int idx = 0; idx < 8; ++idx) {
    std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(idx) + "/size");
    std::string s;
    if (!(f >> s) || s.empty()) continue;
    std::size_t v = std::strtoull(s.c_str(), nullptr, 10);
    char unit = s.back();
    if (unit == 'K') v <<= 10;
    else if (unit == 'M') v <<= 20;
    best = std::max(best, v);
  }
  return best ? best : (32u << 20);
}

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

class CpuDevice final : public Device {
 public:
  CpuDevice() : llc_bytes_(last_level_cache_bytes()) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    unsigned a = 0, b = 0, c = 0, d = 0;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
    has_clflushopt_ = (b >> 23) & 1u;
#endif
  }
  ~CpuDevice() override { std::free(flush_buf_); }
  std::string backend() const override { return "cpu"; }
  nlohmann::json preflight() override {
    return {{"device", cpu_model()}, {"threads", omp_get_max_threads()},
            {"llc_bytes", llc_bytes_}, {"flush", flush_method()}};
  }
  void* alloc(std::size_t bytes) override {
    // 64-byte alignment like cudaMalloc's (256) for vector loads; never zero-initialised on purpose.
    void* p = std::aligned_alloc(256, (std::max<std::size_t>(bytes, 1) + 255) / 256 * 256);
    if (!p) throw std::runtime_error("cpu: out of memory allocating " + std::to_string(bytes) + " bytes");
    return p;
  }
  void release(void* p) override { std::free(p); }
  void to_host(void* host, const void* dev, std::size_t bytes) override { std::memcpy(host, dev, bytes); }
  void from_host(void* dev, const void* host, std::size_t bytes) override { std::memcpy(dev, host, bytes); }
  void fill(DType t, void* p, int64_t n, const DistParams& d, const InputSpec& s, uint64_t tensor) override {
    fill_input_host(t, p, n, d, s.seed, tensor);
    perturb_host(t, p, n, d, s, tensor);
  }
  void perturb(DType t, void* p, int64_t n, const DistParams& d, const InputSpec& s, uint64_t tensor) override {
    perturb_host(t, p, n, d, s, tensor);
  }
  void restore_perturbed(DType t, void* dst, const void* pristine, int64_t n, const InputSpec& s, uint64_t tensor) override {
    restore_perturbed_host(t, dst, pristine, n, s, tensor);
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    const std::size_t chunk = 1 << 20;
#pragma omp parallel for schedule(static) if (bytes > 8 * chunk)
    for (std::size_t off = 0; off < bytes; off += chunk)
      std::memcpy(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off, std::min(chunk, bytes - off));
  }
  void poison(DType t, void* p, int64_t n, Poison which) override { poison_host(t, p, n, which); }
  uint64_t checksum(const void* p, std::size_t bytes) override { return checksum_host(p, bytes); }
  void gather_sample(DType t, const void* out, int64_t n, uint64_t key, int64_t count, void* host_dst) override {
    std::size_t sz = dtype_size(t);
#pragma omp parallel for schedule(static) if (count > (1 << 16))
    for (int64_t j = 0; j < count; ++j)
      std::memcpy(static_cast<char*>(host_dst) + j * sz, static_cast<const char*>(out) + sample_index(key, j, count, n) * sz, sz);
  }
  CompareStats compare(DType t, const void* out, const void* ref_host, int64_t n, int64_t cols, const Tolerance& tol,
                       Poison poison) override {
    return compare_host(t, out, ref_host, n, cols, tol, poison);
  }
  void flush(const std::vector<Region>& touched) override {
#if defined(__x86_64__) || defined(__i386__)
    // clflush on every line of the call's buffers: evicted from all levels, written back if dirty.
    for (const Region& r : touched) {
      auto b = reinterpret_cast<std::uintptr_t>(r.p) & ~std::uintptr_t{63};
      auto e = reinterpret_cast<std::uintptr_t>(r.p) + r.bytes;
      std::int64_t lines = static_cast<std::int64_t>((e - b + 63) / 64);
#pragma omp parallel for schedule(static) if (lines > (1 << 16))
      for (std::int64_t l = 0; l < lines; ++l) {
        const void* line = reinterpret_cast<const void*>(b + static_cast<std::uintptr_t>(l) * 64);
        if (has_clflushopt_) flushopt(line);   // weakly ordered: many lines in flight
        else __builtin_ia32_clflush(line);
      }
    }
    asm volatile("mfence" ::: "memory");
#else
    // Elsewhere: write a buffer twice the last-level cache (capped at 512 MB).
    if (!flush_buf_) {
      flush_bytes_ = std::min<std::size_t>(2 * llc_bytes_, std::size_t{512} << 20);
      flush_buf_ = static_cast<char*>(std::calloc(flush_bytes_, 1));
      if (!flush_buf_) throw std::runtime_error("cpu: cannot allocate the cache-flush buffer");
    }
    ++flush_round_;
    char v = static_cast<char>(flush_round_);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < flush_bytes_; i += 64) flush_buf_[i] = static_cast<char>(flush_buf_[i] + v);
#endif
  }
#if defined(__x86_64__) || defined(__i386__)
  __attribute__((target("clflushopt"))) static void flushopt(const void* p) { __builtin_ia32_clflushopt(const_cast<void*>(p)); }
#endif
  static const char* flush_method() {
#if defined(__x86_64__) || defined(__i386__)
    return "clflush of the call's buffers";
#else
    return "write 2x last-level cache";
#endif
  }
  void call(EntryFn f, void* const* args) override { f(args, nullptr); }
  TimedCall timed_call(EntryFn f, void* const* args) override {
    auto t0 = std::chrono::steady_clock::now();
    f(args, nullptr);
    auto t1 = std::chrono::steady_clock::now();
    return {std::chrono::duration<double>(t1 - t0).count(), 0.0};
  }
  std::string persisting_l2_state() override { return ""; }
  void synchronize() override {}

 private:
  std::size_t llc_bytes_;
  bool has_clflushopt_ = false;
  std::size_t flush_bytes_ = 0;
  char* flush_buf_ = nullptr;
  unsigned flush_round_ = 0;
};

}  // namespace

std::unique_ptr<Device> make_cpu_device() { return std::make_unique<CpuDevice>(); }

}  // namespace khive
