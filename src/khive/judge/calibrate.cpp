// CPU calibration (calibrate.hpp): copy bandwidth and fp32/fp64 FMA rates, measured with OpenMP.
#include "khive/judge/calibrate.hpp"
#include "khive/support/text.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#if defined(_OPENMP)
#include <omp.h>
#define KHIVE_OMP(directive) _Pragma(directive)
#else  // built without OpenMP (the judge should link OpenMP::OpenMP_CXX): one thread, no warnings
#define KHIVE_OMP(directive)
#endif

namespace khive {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

int thread_count() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

int thread_index() {
#if defined(_OPENMP)
  return omp_get_thread_num();
#else
  return 0;
#endif
}

int team_size() {
#if defined(_OPENMP)
  return omp_get_num_threads();
#else
  return 1;
#endif
}

// "model name" (x86) or "Model"/"Hardware"/"CPU part" (Arm) from /proc/cpuinfo.
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, fallback;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (value.empty()) continue;
    if (key == "model name") return value;
    if (fallback.empty() && (key == "Model" || key == "Hardware" || key == "CPU part")) fallback = value;
  }
  return fallback.empty() ? "unknown CPU" : fallback;
}

std::string fmt_double(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// ---------------------------------------------------------------------------------------------- bandwidth

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

struct BandwidthResult {
  double bytes_per_s = 0;
  std::size_t buffer = 0;
  int reps = 0;
};

// Best of several parallel copies src -> dst; each thread copies (and first touched) the same slice.
// At least 2 timed copies; more while the next one fits before the deadline (at most 20).
BandwidthResult measure_copy(Clock::time_point deadline) {
  BandwidthResult r;
  std::unique_ptr<char, FreeDeleter> src, dst;
  std::size_t bytes = std::size_t{256} << 20;
  for (; bytes >= (std::size_t{16} << 20); bytes /= 2) {
    src.reset(static_cast<char*>(std::aligned_alloc(4096, bytes)));
    dst.reset(static_cast<char*>(std::aligned_alloc(4096, bytes)));
    if (src && dst) break;
    src.reset();
    dst.reset();
  }
  if (!src || !dst) throw std::runtime_error("calibrate_cpu: cannot allocate two 16 MiB buffers");
  char* s = src.get();
  char* d = dst.get();

  auto slice = [bytes](int t, int n, std::size_t& begin, std::size_t& end) {
    const std::size_t per = (bytes / static_cast<std::size_t>(n)) & ~std::size_t{4095};
    begin = per * static_cast<std::size_t>(t);
    end = t == n - 1 ? bytes : begin + per;
  };
  KHIVE_OMP(
      "omp parallel") {  // first touch by the thread that will copy the slice (NUMA placement), non-zero source bytes
    std::size_t b, e;
    slice(thread_index(), team_size(), b, e);
    std::memset(s + b, 0x5a, e - b);
    std::memset(d + b, 0, e - b);
  }
  auto copy_once = [&] {
    const auto c0 = Clock::now();
    KHIVE_OMP("omp parallel") {
      std::size_t b, e;
      slice(thread_index(), team_size(), b, e);
      std::memcpy(d + b, s + b, e - b);
    }
    return seconds_since(c0);
  };
  copy_once();  // warm-up
  double best = 1e30;
  do {
    best = std::min(best, copy_once());
    ++r.reps;
  } while (r.reps < 2 || (r.reps < 20 && Clock::now() + seconds(best) < deadline));
  // Keep the copy observable (the destination is read back).
  volatile char sink = d[bytes / 2];
  (void)sink;
  r.bytes_per_s = 2.0 * static_cast<double>(bytes) / best;  // read + write
  r.buffer = bytes;
  return r;
}

// -------------------------------------------------------------------------------------------- FMA chains

inline __attribute__((always_inline)) float fused(float a, float x, float y) { return __builtin_fmaf(a, x, y); }
inline __attribute__((always_inline)) double fused(double a, double x, double y) { return __builtin_fma(a, x, y); }

// CHAINS independent recurrences acc = acc * x + y, each LANES wide (one vector register per chain on the
// target the caller is compiled for), so the FMA units never wait on a latency. 2 FLOP per lane per step
// (one FMA, or a multiply and an add where FMA is false). The recurrence converges to y / (1 - x) = 1: no
// overflow, no denormals. Inlined into callers compiled for a wider target, so it is vectorized for that one.
template <class T, int LANES, int CHAINS, bool FMA>
inline __attribute__((always_inline)) T fma_chains(long steps, T seed) {
  T acc[CHAINS][LANES], x[LANES], y[LANES];
  for (int l = 0; l < LANES; ++l) {
    x[l] = T(0.9999) - T(1e-7) * T(l);
    y[l] = T(1) - x[l];
  }
  for (int c = 0; c < CHAINS; ++c)
    for (int l = 0; l < LANES; ++l) acc[c][l] = seed + T(0.001) * T(c * LANES + l);
  for (long i = 0; i < steps; ++i) {
#pragma GCC unroll 32  // every chain in its own register: no load/store per FMA
    for (int c = 0; c < CHAINS; ++c) {
      KHIVE_OMP("omp simd")
      for (int l = 0; l < LANES; ++l) {
        if constexpr (FMA)
          acc[c][l] = fused(acc[c][l], x[l], y[l]);
        else
          acc[c][l] = acc[c][l] * x[l] + y[l];
      }
    }
  }
  T sum = 0;
  for (int c = 0; c < CHAINS; ++c)
    for (int l = 0; l < LANES; ++l) sum += acc[c][l];
  return sum;
}

struct FmaKernel {
  double (*run)(long steps, double seed);
  int lanes, chains;  // 2 * lanes * chains FLOP per step
  const char* isa;
};

#define KHIVE_DEFINE_KERNEL(NAME, TARGET, EXPR) \
  TARGET double NAME(long steps, double seed) { return static_cast<double>(EXPR); }

#if defined(__x86_64__) && defined(__GNUC__)
#define KHIVE_T512 __attribute__((target("avx512f")))
#define KHIVE_T256 __attribute__((target("avx2,fma")))
// AVX-512: 32 zmm registers -> 16 chains of one zmm each. AVX2: 16 ymm -> 12 chains. Baseline SSE2: 12 xmm.
KHIVE_DEFINE_KERNEL(f32_avx512, KHIVE_T512, (fma_chains<float, 16, 16, true>(steps, static_cast<float>(seed))))
KHIVE_DEFINE_KERNEL(f64_avx512, KHIVE_T512, (fma_chains<double, 8, 16, true>(steps, seed)))
KHIVE_DEFINE_KERNEL(f32_avx2, KHIVE_T256, (fma_chains<float, 8, 12, true>(steps, static_cast<float>(seed))))
KHIVE_DEFINE_KERNEL(f64_avx2, KHIVE_T256, (fma_chains<double, 4, 12, true>(steps, seed)))
#endif
KHIVE_DEFINE_KERNEL(f32_base, , (fma_chains<float, 4, 12, false>(steps, static_cast<float>(seed))))
KHIVE_DEFINE_KERNEL(f64_base, , (fma_chains<double, 2, 12, false>(steps, seed)))

FmaKernel pick_kernel(bool fp64) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return fp64 ? FmaKernel{f64_avx512, 8, 16, "avx512f"} : FmaKernel{f32_avx512, 16, 16, "avx512f"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return fp64 ? FmaKernel{f64_avx2, 4, 12, "avx2+fma"} : FmaKernel{f32_avx2, 8, 12, "avx2+fma"};
  return fp64 ? FmaKernel{f64_base, 2, 12, "sse2"} : FmaKernel{f32_base, 4, 12, "sse2"};
#else
  return fp64 ? FmaKernel{f64_base, 2, 12, "baseline"} : FmaKernel{f32_base, 4, 12, "baseline"};
#endif
}

struct FlopsResult {
  double flops_per_s = 0;
  int reps = 0;
  const char* isa = "";
};

FlopsResult measure_fma(bool fp64, Clock::time_point deadline) {
  const FmaKernel k = pick_kernel(fp64);
  volatile double sink = 0;
  // Size one run from one thread's own time, best of 3 per size: a parallel region's wall time would also
  // hold fork/join and any descheduling on a busy machine, and stop the growth at a run too short to time.
  constexpr double kRunSeconds = 0.01;
  long steps = 256;
  for (;;) {
    double s = 1e30;
    for (int i = 0; i < 3; ++i) {
      const auto c0 = Clock::now();
      sink = sink + k.run(steps, 1.0);
      s = std::min(s, seconds_since(c0));
    }
    if (s >= kRunSeconds / 8 || steps >= (1L << 40)) {
      steps = std::max(steps, static_cast<long>(static_cast<double>(steps) * kRunSeconds / s));
      break;
    }
    steps *= 4;
  }
  // Then all threads at once (SMT siblings share their FMA units, so they must run together): best of at
  // least 2 runs, more while the next one fits before the deadline (at most 50).
  auto run_parallel = [&] {  // FLOP/s of one parallel run
    double total = 0;
    int threads = 1;
    const auto c0 = Clock::now();
    KHIVE_OMP("omp parallel reduction(+ : total)") {
      total += k.run(steps, 1.0 + 0.01 * thread_index());
      KHIVE_OMP("omp single")
      threads = team_size();
    }
    const double s = seconds_since(c0);
    sink = sink + total;
    return 2.0 * k.lanes * k.chains * static_cast<double>(steps) * threads / s;
  };
  FlopsResult r;
  r.isa = k.isa;
  do {
    r.flops_per_s = std::max(r.flops_per_s, run_parallel());
    ++r.reps;
  } while (r.reps < 2 || (r.reps < 50 && Clock::now() + seconds(2 * kRunSeconds) < deadline));
  return r;
}

}  // namespace

HardwareProfile calibrate_cpu(double seconds_budget) {
  const double budget = seconds_budget > 0 ? seconds_budget : 2.0;
  const int threads = thread_count();
  // Half the budget for the copies (the buffers' first touch included), a quarter for each FMA rate.
  const auto t0 = Clock::now();
  const BandwidthResult bw = measure_copy(t0 + seconds(0.5 * budget));
  const FlopsResult f32 = measure_fma(false, t0 + seconds(0.75 * budget));
  const FlopsResult f64 = measure_fma(true, t0 + seconds(budget));

  HardwareProfile p;
  p.name = "cpu:" + cpu_model() + " (" + std::to_string(threads) + (threads == 1 ? " thread)" : " threads)");
  p.measured_bandwidth = bw.bytes_per_s;
  p.measured_flops = {{ComputeUnit::fp32, f32.flops_per_s}, {ComputeUnit::fp64, f64.flops_per_s}};
  // No datasheet for a CPU: 1.5 x measured is a plausibility ceiling, not a peak.
  p.peak_bandwidth = 1.5 * bw.bytes_per_s;
  p.peak_flops = {{ComputeUnit::fp32, 1.5 * f32.flops_per_s}, {ComputeUnit::fp64, 1.5 * f64.flops_per_s}};
  p.source = "khive calibrate_cpu " + utc_now() + ": copy " + std::to_string(bw.buffer >> 20) + " MiB (OpenMP, " +
             std::to_string(threads) + " threads, read + write) best of " + std::to_string(bw.reps) + ": " +
             fmt_double("%.1f", bw.bytes_per_s / 1e9) + " GB/s; FMA chains (" + f32.isa + ") best of " +
             std::to_string(f32.reps) + "/" + std::to_string(f64.reps) + ": fp32 " +
             fmt_double("%.1f", f32.flops_per_s / 1e9) + ", fp64 " + fmt_double("%.1f", f64.flops_per_s / 1e9) +
             " GFLOP/s; peaks = 1.5 x measured (no datasheet: a plausibility ceiling only)";
  return p;
}

}  // namespace khive
