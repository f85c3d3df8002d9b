// Statistics over timing samples: medians, spread, the stopping rule, and A/B acceptance.
// Pure functions over synthetic or measured samples, tested without a GPU (nvbench-style criteria).
#pragma once
#include <cstddef>
#include <vector>

namespace khive {

struct SampleSummary {
  std::size_t n = 0;
  double median = 0, mean = 0, min = 0, max = 0, p10 = 0, p90 = 0;
  double stddev = 0;
  double rel_spread = 0;   // robust relative noise: 1.4826 * MAD / median
};
SampleSummary summarize(std::vector<double> samples);

// Stop timing when at least min_samples were taken and the robust relative noise is under
// target_noise, or when max_samples / the time cap is reached.
struct StoppingRule {
  std::size_t min_samples = 10, max_samples = 200;
  double target_noise = 0.005;   // 0.5 %
  double time_cap_s = 2.0;       // summed sample time (plus overhead) per workload
};
bool should_stop(const std::vector<double>& samples, double elapsed_s, const StoppingRule& r);

// Interleaved A/B comparison (guard check 11). Samples come in pairs (a_i, b_i) taken back to back.
// ratio_i = a_i / b_i  (>1: B faster). Faster means the median ratio exceeds 1 by more than the noise:
// median_ratio - 1 > max(min_gain, k * noise), noise = robust spread of the log-ratios.
struct AbResult {
  std::size_t pairs = 0;
  double median_ratio = 1;   // median(a_i / b_i)
  double noise = 0;          // robust relative spread of the ratios
  double threshold = 0;      // what median_ratio - 1 had to exceed
  bool b_faster = false;
};
AbResult compare_ab(const std::vector<double>& a, const std::vector<double>& b, double min_gain = 0.005,
                    double k = 2.0);

}  // namespace khive
