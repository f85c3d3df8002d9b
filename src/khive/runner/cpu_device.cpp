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
#pragma omp parallel for reduction(+ : acc) schedule(static)
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
#pragma omp parallel for schedule(static)
  for (int64_t i = n / 2; i < n; ++i) {
    if (i == n - 1 || counter_uniform(s.perturb_seed, tensor, static_cast<uint64_t>(i), 7) < s.fraction)
      num::store(t, p, i, input_value(d, s.perturb_seed, tensor, static_cast<uint64_t>(i)));
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
  CpuDevice() : flush_bytes_(2 * last_level_cache_bytes()), flush_buf_(static_cast<char*>(std::malloc(flush_bytes_))) {
    if (!flush_buf_) throw std::runtime_error("cpu: cannot allocate the cache-flush buffer");
    std::memset(flush_buf_, 1, flush_bytes_);
  }
  ~CpuDevice() override { std::free(flush_buf_); }
  std::string backend() const override { return "cpu"; }
  nlohmann::json preflight() override {
    return {{"device", cpu_model()}, {"threads", omp_get_max_threads()},
            {"llc_bytes", flush_bytes_ / 2}, {"flush_bytes", flush_bytes_}};
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
  void copy(void* dst, const void* src, std::size_t bytes) override {
    const std::size_t chunk = 1 << 20;
#pragma omp parallel for schedule(static)
    for (std::size_t off = 0; off < bytes; off += chunk)
      std::memcpy(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off, std::min(chunk, bytes - off));
  }
  void poison(DType t, void* p, int64_t n, Poison which) override { poison_host(t, p, n, which); }
  uint64_t checksum(const void* p, std::size_t bytes) override { return checksum_host(p, bytes); }
  CompareStats compare(DType t, const void* out, const void* ref_host, int64_t n, int64_t cols, const Tolerance& tol,
                       Poison poison) override {
    return compare_host(t, out, ref_host, n, cols, tol, poison);
  }
  void flush() override {
    ++flush_round_;
    char v = static_cast<char>(flush_round_);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < flush_bytes_; i += 64) flush_buf_[i] = static_cast<char>(flush_buf_[i] + v);
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
  std::size_t flush_bytes_;
  char* flush_buf_;
  unsigned flush_round_ = 0;
};

}  // namespace

std::unique_ptr<Device> make_cpu_device() { return std::make_unique<CpuDevice>(); }

}  // namespace khive
