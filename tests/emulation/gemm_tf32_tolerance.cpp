// Would a TF32 tensor-core GEMM pass the cutegen26 fp32 GEMM tasks? And 3xTF32 (gemm.cuda_sm80_3xtf32)? A CPU
// emulation on each task's own workloads (sizes and per-workload tolerance from workload.jsonl) and input
// distributions (A ~ N(0.5, 1), B ~ N(0, 1)): sampled output elements, each a dot product of K fresh fp32 inputs,
// against an fp64 reference, under the guard's rule |got - ref| <= atol + rtol * |ref| (every element must pass).
//
//   fp32      one sequential fma chain over K (the worst honest fp32 order; tools/probe.cpp's)
//   tf32      1xTF32: inputs rounded to TF32 (10 explicit mantissa bits, to nearest), an MMA per 8 k: the 8 products
//             (exact) and the accumulator summed, then rounded to fp32 once (the most favourable model of the MMA)
//   tf32_rz   the same with the inputs truncated (what tensor cores do to fp32 bits fed to them unconverted)
//   3xtf32    CUTLASS's OpMultiplyAddFastF32: big = tf32_rz(a), small = tf32_rhu(a - big) (round half up), per 8 k
//             three MMAs into the accumulator in its order (small*big, big*small, big*big), each rounded as above
//   3xtf32_rz the same, each MMA's result truncated toward zero instead (a pessimistic model of the tensor core's
//             internal alignment and truncation, after Fasi et al., "Numerical behavior of NVIDIA tensor cores")
//   3xtf32_rz_split  3xtf32_rz in partitions of at most 1024 k (serial split-K, SPLIT_K = ceil(K / 1024)), whose
//             sums the epilogue adds to C in fp32 round-to-nearest: the truncation's drift grows with the chain only
//
//   g++ -O2 -fopenmp -std=c++17 -o /tmp/tf32_tol tests/emulation/gemm_tf32_tolerance.cpp && /tmp/tf32_tol tasks/cutegen26
// One line per (task, workload, variant): max |err|, the worst err / (atol + rtol |ref|) ("tol use"; > 1 fails), the
// fraction of sampled elements that fail, and the failing elements expected over the whole output (fraction x
// outputs), and the same expectation from a normal fit of the signed err / bound over the samples (the rare tail a
// few hundred samples miss: K = 524288): a variant that fails a sample or expects >= 1 bad output is rejected.
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <vector>

namespace {

float bits_round(float x, int keep, bool nearest) {  // keep `keep` explicit mantissa bits: to nearest even / toward 0
  uint32_t u;
  std::memcpy(&u, &x, 4);
  const int drop = 23 - keep;
  const uint32_t mask = (1u << drop) - 1;
  if (nearest) u += (1u << (drop - 1)) - 1 + ((u >> drop) & 1u);
  u &= ~mask;
  std::memcpy(&x, &u, 4);
  return x;
}
float tf32_rn(float x) { return bits_round(x, 10, true); }
float tf32_rz(float x) { return bits_round(x, 10, false); }
float tf32_rhu(float x) {  // CUTLASS's round_half_ulp_truncate: add half an ulp, truncate (ties away from zero)
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + (1u << 12)) & ~((1u << 13) - 1);
  std::memcpy(&x, &u, 4);
  return x;
}
float to_f32(double v, bool rz) {  // one rounding of an exact (double) sum to fp32
  if (!rz) return static_cast<float>(v);
  float f = static_cast<float>(v);
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  return f;
}

enum Variant { kFp32, kTf32, kTf32Rz, k3x, k3xRz, k3xRzSplit, kVariants };
const char* kNames[kVariants] = {"fp32", "tf32", "tf32_rz", "3xtf32", "3xtf32_rz", "3xtf32_rz_split"};

// The dot product of a and b under each variant (exact products of TF32 values fit a double).
void dot(const std::vector<float>& a, const std::vector<float>& b, double& ref, float (&out)[kVariants]) {
  const int64_t K = static_cast<int64_t>(a.size());
  ref = 0;
  for (int64_t k = 0; k < K; ++k) ref += static_cast<double>(a[k]) * b[k];
  float f = 0;
  for (int64_t k = 0; k < K; ++k) f = std::fma(a[k], b[k], f);
  out[kFp32] = f;
  float t = 0, tz = 0, x = 0, xz = 0, part = 0, total = 0;
  for (int64_t k0 = 0; k0 < K; k0 += 8) {
    if (k0 % 1024 == 0 && k0 > 0) {  // a split-K partition ends: the epilogue adds its sum (round to nearest)
      total = to_f32(static_cast<double>(total) + part, false);
      part = 0;
    }
    double s = 0, sz = 0, p_sb = 0, p_bs = 0, p_bb = 0;
    for (int64_t k = k0; k < K && k < k0 + 8; ++k) {
      s += static_cast<double>(tf32_rn(a[k])) * tf32_rn(b[k]);
      sz += static_cast<double>(tf32_rz(a[k])) * tf32_rz(b[k]);
      const float ab = tf32_rz(a[k]), bb = tf32_rz(b[k]);
      const float as = tf32_rhu(a[k] - ab), bs = tf32_rhu(b[k] - bb);
      p_sb += static_cast<double>(as) * bb;
      p_bs += static_cast<double>(ab) * bs;
      p_bb += static_cast<double>(ab) * bb;
    }
    t = to_f32(t + s, false);
    tz = to_f32(tz + sz, false);
    x = to_f32(x + p_sb, false);
    x = to_f32(x + p_bs, false);
    x = to_f32(x + p_bb, false);
    xz = to_f32(xz + p_sb, true);
    xz = to_f32(xz + p_bs, true);
    xz = to_f32(xz + p_bb, true);
    part = to_f32(part + p_sb, true);
    part = to_f32(part + p_bs, true);
    part = to_f32(part + p_bb, true);
  }
  out[k3xRzSplit] = to_f32(static_cast<double>(total) + part, false);
  out[kTf32] = t;
  out[kTf32Rz] = tz;
  out[k3x] = x;
  out[k3xRz] = xz;
}

int64_t field(const std::string& line, const std::string& name, int64_t fallback) {
  std::smatch m;
  if (std::regex_search(line, m, std::regex("\"" + name + "\": *([0-9]+)"))) return std::stoll(m[1]);
  return fallback;
}
double number(const std::string& line, const std::string& name) {
  std::smatch m;
  if (std::regex_search(line, m, std::regex("\"" + name + "\": *([0-9.eE+-]+)"))) return std::stod(m[1]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gemm_tf32_tolerance tasks/cutegen26 [max samples per workload, default 1000]\n");
    return 2;
  }
  const std::filesystem::path suite = argv[1];
  const int max_samples = argc > 2 ? std::atoi(argv[2]) : 1000;
  const char* tasks[] = {"kb01_matmul_square",   "kb02_matmul_standard",  "kb03_matmul_batched",
                         "kb06_matmul_large_k",  "kb07_matmul_small_k",   "kb08_matmul_irregular",
                         "kb09_matmul_tall_skinny", "kb13_matmul_symmetric", "kb17_matmul_transposed_b"};
  std::printf("| task | workload | K | outputs | samples | variant | max abs err | tol use | failing samples | expected bad outputs | normal-fit bad outputs | verdict |\n");
  std::printf("|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|\n");
  int rejected_tf32 = 0, rejected_3x = 0, rejected_3x_rz = 0, rejected_3x_split = 0, workloads = 0;
  for (const char* task : tasks) {
    std::ifstream in(suite / task / "workload.jsonl");
    std::string line;
    while (std::getline(in, line)) {
      if (line.find("\"cpu\"]") != std::string::npos && line.find("\"perf\"") != std::string::npos) continue;  // CPU-only
      std::smatch m;
      std::regex_search(line, m, std::regex("\"uuid\": *\"([^\"]+)\""));
      const std::string uuid = m[1];
      const bool square = std::string(task).find("square") != std::string::npos ||
                          std::string(task).find("symmetric") != std::string::npos;
      const bool tall = std::string(task).find("tall_skinny") != std::string::npos;
      const int64_t n_ax = field(line, "N", 1), M = square ? n_ax : field(line, "M", 1);
      const int64_t K = square ? n_ax : field(line, "K", 1), N = tall ? M : n_ax, batch = field(line, "batch", 1);
      const double atol = number(line, "atol"), rtol = number(line, "rtol");
      const int64_t outputs = batch * M * N;
      const int samples = static_cast<int>(std::min<int64_t>(outputs, K >= 65536 ? max_samples / 4 : max_samples));
      std::vector<double> worst(kVariants, 0), use(kVariants, 0), sq(kVariants, 0);
      std::vector<int> fails(kVariants, 0);
#pragma omp parallel for schedule(dynamic)
      for (int s = 0; s < samples; ++s) {
        std::mt19937_64 rng(0x5eed + 7919 * s + 104729 * K);
        std::normal_distribution<float> da(0.5f, 1.0f), db(0.0f, 1.0f);
        std::vector<float> a(K), b(K);
        for (int64_t k = 0; k < K; ++k) a[k] = da(rng), b[k] = db(rng);
        double ref;
        float got[kVariants];
        dot(a, b, ref, got);
#pragma omp critical
        for (int v = 0; v < kVariants; ++v) {
          const double err = std::fabs(static_cast<double>(got[v]) - ref), bound = atol + rtol * std::fabs(ref);
          worst[v] = std::max(worst[v], err);
          use[v] = std::max(use[v], err / bound);
          fails[v] += err > bound;
          sq[v] += (err / bound) * (err / bound);
        }
      }
      ++workloads;
      for (int v = 0; v < kVariants; ++v) {
        const double frac = static_cast<double>(fails[v]) / samples, expected = frac * static_cast<double>(outputs);
        const double sigma = std::sqrt(sq[v] / samples);  // the normalized error's spread (mean ~0 for RN variants)
        const double tail = sigma > 0 ? static_cast<double>(outputs) * std::erfc(1.0 / (sigma * std::sqrt(2.0))) : 0;
        const bool rejected = fails[v] > 0 || expected >= 1 || tail >= 1;
        if (rejected && (v == kTf32 || v == kTf32Rz)) ++rejected_tf32;
        if (rejected && v == k3x) ++rejected_3x;
        if (rejected && v == k3xRz) ++rejected_3x_rz;
        if (rejected && v == k3xRzSplit) ++rejected_3x_split;
        std::printf("| %s | %s | %lld | %lld | %d | %s | %.3g | %.3g | %.3g%% | %.3g | %.3g | %s |\n", task, uuid.c_str(),
                    static_cast<long long>(K), static_cast<long long>(outputs), samples, kNames[v], worst[v], use[v],
                    100 * frac, expected, tail, rejected ? "REJECTED" : "passes");
      }
      std::fflush(stdout);
    }
  }
  std::printf("\n%d workloads. Rejected: (workload, tf32 or tf32_rz) %d of %d; 3xtf32 on %d; 3xtf32_rz on %d; "
              "3xtf32_rz_split on %d\n",
              workloads, rejected_tf32, 2 * workloads, rejected_3x, rejected_3x_rz, rejected_3x_split);
  return 0;
}
