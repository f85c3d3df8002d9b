// moe_router: per token, E logits accumulated in fp32 (exact for this task's inputs), softmax in fp32,
// then 8 rounds of "largest remaining logit, lowest index on ties". Tokens in parallel.
#include <cmath>
#include <cstdint>
#include <vector>

extern "C" void khive_launch(const khive_bf16* x, const khive_bf16* w, float* topk_weights, int32_t* topk_ids, int64_t T,
                             int64_t H, int64_t E) {
  constexpr int64_t kTopk = 8;
#pragma omp parallel
  {
    std::vector<float> logit(static_cast<size_t>(E));
    std::vector<char> taken(static_cast<size_t>(E));
#pragma omp for schedule(static)
    for (int64_t t = 0; t < T; ++t) {
      const khive_bf16* xt = x + t * H;
      float m = -INFINITY;
      for (int64_t e = 0; e < E; ++e) {
        const khive_bf16* we = w + e * H;
        float acc = 0.0f;
        for (int64_t i = 0; i < H; ++i) acc += khive_bf16_to_float(xt[i]) * khive_bf16_to_float(we[i]);
        logit[e] = acc;
        m = std::fmax(m, acc);
      }
      float sum = 0.0f;
      for (int64_t e = 0; e < E; ++e) sum += std::exp(logit[e] - m);
      for (int64_t e = 0; e < E; ++e) taken[e] = 0;
      for (int64_t j = 0; j < kTopk; ++j) {
        int64_t best = -1;
        for (int64_t e = 0; e < E; ++e)
          if (!taken[e] && (best < 0 || logit[e] > logit[best])) best = e;  // strict >: lower index wins ties
        taken[best] = 1;
        topk_ids[t * kTopk + j] = static_cast<int32_t>(best);
        topk_weights[t * kTopk + j] = std::exp(logit[best] - m) / sum;
      }
    }
  }
}
