// attention_causal, CPU reference: causal GQA prefill attention, one (batch, query row, head) at a time, in double.
#include <cmath>
#include <vector>

// softmax(q·K^T / sqrt(D))·V over n_keys keys of one KV head (key j at k + j·stride), all in double, two passes.
static void attend_row(const khive_bf16* q, const khive_bf16* k, const khive_bf16* v, int64_t stride, int64_t n_keys,
                       int64_t D, khive_bf16* o, std::vector<double>& s) {
  s.assign(static_cast<size_t>(n_keys), 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  double m = -INFINITY;
  for (int64_t j = 0; j < n_keys; ++j) {
    double dot = 0.0;
    for (int64_t d = 0; d < D; ++d) dot += static_cast<double>(khive_bf16_to_float(q[d])) * khive_bf16_to_float(k[j * stride + d]);
    s[j] = dot * scale;
    m = std::fmax(m, s[j]);
  }
  double l = 0.0;
  for (int64_t j = 0; j < n_keys; ++j) l += (s[j] = std::exp(s[j] - m));
  for (int64_t d = 0; d < D; ++d) {
    double acc = 0.0;
    for (int64_t j = 0; j < n_keys; ++j) acc += s[j] * khive_bf16_to_float(v[j * stride + d]);
    o[d] = khive_float_to_bf16(static_cast<float>(acc / l));
  }
}

extern "C" void khive_launch(const khive_bf16* q, const khive_bf16* k, const khive_bf16* v, khive_bf16* o, int64_t B,
                             int64_t S, int64_t Hq, int64_t Hkv, int64_t D) {
#pragma omp parallel
  {
    std::vector<double> s;
#pragma omp for collapse(2) schedule(dynamic)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < S; ++i)
        for (int64_t h = 0; h < Hq; ++h) {
          const int64_t g = h / (Hq / Hkv);
          const int64_t row = ((b * S + i) * Hq + h) * D, kv = (b * S * Hkv + g) * D;
          attend_row(q + row, k + kv, v + kv, Hkv * D, i + 1, D, o + row, s);
        }
  }
}
