// Tolerance probe for tasks/cutegen26 (run by hand; results in ../README.md). For GEMM-like reductions it
// compares, on a sample of output elements, the fp64 reference against honest fp32 orders (one sequential
// sum, the worst; 32-term tiles summed sequentially, like a tiled kernel) and against precision shortcuts
// (TF32- and bf16-rounded inputs with fp32 accumulation, as tensor cores do). For row reductions (softmax,
// log-softmax) it does the same with a sequential fp32 row sum. Inputs follow the task distributions:
// A ~ N(0.5, 1), B ~ N(0, 1); softmax rows ~ N(100, 1).
//   g++ -O2 -fopenmp -o /tmp/probe probe.cpp && /tmp/probe gemm 64 && /tmp/probe softmax 393216
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

static float round_mantissa(float x, int keep_bits) {   // round to nearest even, keep_bits explicit mantissa bits
  uint32_t u;
  std::memcpy(&u, &x, 4);
  const int drop = 23 - keep_bits;
  const uint32_t half = 1u << (drop - 1), mask = (1u << drop) - 1;
  const uint32_t lsb = (u >> drop) & 1u;
  u = (u + half - 1 + lsb) & ~mask;
  std::memcpy(&x, &u, 4);
  return x;
}

struct Worst {
  double abs = 0, rel = 0;
  void add(double err, double ref) {
    abs = std::fmax(abs, err);
    if (ref != 0) rel = std::fmax(rel, err / std::fabs(ref));
  }
};

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: probe gemm K | probe softmax D\n");
    return 2;
  }
  const std::string what = argv[1];
  const int64_t n = std::atoll(argv[2]);
  std::mt19937_64 rng(12345);
  if (what == "gemm") {
    const int64_t K = n;
    const int samples = K >= 65536 ? 400 : 4000;
    Worst seq, tiled, tf32, bf16;
    double max_ref = 0;
    std::normal_distribution<float> da(0.5f, 1.0f), db(0.0f, 1.0f);
    std::vector<float> a(K), b(K);
    for (int s = 0; s < samples; ++s) {
      for (int64_t k = 0; k < K; ++k) a[k] = da(rng), b[k] = db(rng);
      double ref = 0;
      for (int64_t k = 0; k < K; ++k) ref += double(a[k]) * double(b[k]);
      float f_seq = 0, f_tiled = 0, f_tf = 0, f_bf = 0;
      for (int64_t k = 0; k < K; ++k) f_seq = std::fma(a[k], b[k], f_seq);
      for (int64_t k0 = 0; k0 < K; k0 += 32) {
        float t = 0, tt = 0, tb = 0;
        for (int64_t k = k0; k < std::min(K, k0 + 32); ++k) {
          t = std::fma(a[k], b[k], t);
          tt = std::fma(round_mantissa(a[k], 10), round_mantissa(b[k], 10), tt);
          tb = std::fma(round_mantissa(a[k], 7), round_mantissa(b[k], 7), tb);
        }
        f_tiled += t;
        f_tf += tt;
        f_bf += tb;
      }
      max_ref = std::fmax(max_ref, std::fabs(ref));
      seq.add(std::fabs(f_seq - ref), ref);
      tiled.add(std::fabs(f_tiled - ref), ref);
      tf32.add(std::fabs(f_tf - ref), ref);
      bf16.add(std::fabs(f_bf - ref), ref);
    }
    std::printf("gemm K=%lld samples=%d max|ref|=%.3g\n", (long long)K, samples, max_ref);
    std::printf("  max abs error: fp32 sequential %.3g  fp32 tiled %.3g  tf32 %.3g  bf16 %.3g\n", seq.abs, tiled.abs, tf32.abs,
                bf16.abs);
    // How many elements a shortcut gets wrong under atol = 3e-7*K (rtol 0): the smallest error among the
    // shortcut's elements matters little; the typical one does.
    return 0;
  }
  if (what == "softmax") {
    const int64_t D = n;
    const int rows = D >= 100000 ? 4 : 64;
    std::normal_distribution<float> dx(100.0f, 1.0f);
    std::vector<float> x(D);
    Worst sm_seq, sm_pair, lsm_seq;
    double min_ref = 1;
    for (int r = 0; r < rows; ++r) {
      for (auto& v : x) v = dx(rng);
      double mx = x[0];
      for (float v : x) mx = std::fmax(mx, double(v));
      double sum = 0;
      for (float v : x) sum += std::exp(double(v) - mx);
      float fmx = float(mx), fsum = 0;
      std::vector<float> e(D);
      for (int64_t j = 0; j < D; ++j) e[j] = std::exp(x[j] - fmx), fsum += e[j];
      // tree-like: 256 strided partial sums, then summed (a block reduction)
      float part[256] = {0};
      for (int64_t j = 0; j < D; ++j) part[j % 256] += e[j];
      float fpair = 0;
      for (float p : part) fpair += p;
      for (int64_t j = 0; j < D; ++j) {
        double ref = std::exp(double(x[j]) - mx) / sum;
        min_ref = std::fmin(min_ref, ref);
        sm_seq.add(std::fabs(double(e[j] / fsum) - ref), ref);
        sm_pair.add(std::fabs(double(e[j] / fpair) - ref), ref);
        double lref = double(x[j]) - mx - std::log(sum);
        float l = (x[j] - fmx) - std::log(fsum);
        lsm_seq.add(std::fabs(double(l) - lref), lref);
      }
    }
    std::printf("softmax D=%lld rows=%d min ref %.3g\n", (long long)D, rows, min_ref);
    std::printf("  softmax max rel error: fp32 sequential sum %.3g  256-way partial sums %.3g; max abs %.3g\n", sm_seq.rel,
                sm_pair.rel, sm_seq.abs);
    std::printf("  log-softmax max abs error (sequential sum) %.3g, max rel %.3g\n", lsm_seq.abs, lsm_seq.rel);
    return 0;
  }
  std::fprintf(stderr, "probe: unknown mode %s\n", what.c_str());
  return 2;
}
