// moe_router, CPU reference: per token, the E logits summed in double (exact here, see the definition),
// softmax in double, then topk rounds of "largest remaining logit, lowest index on ties" (selection by logit
// equals selection by probability: exp is increasing). Tokens in parallel.
#include <cmath>
#include <vector>

extern "C" void khive_launch(const khive_bf16* x, const khive_bf16* w, float* topk_weights, int32_t* topk_ids, int64_t T,
                             int64_t H, int64_t E) {
  constexpr int64_t kTopk = 8;
#pragma omp parallel
  {
    std::vector<double> logit;
    std::vector<char> taken;
#pragma omp for schedule(static)
    for (int64_t t = 0; t < T; ++t) {
      logit.assign(static_cast<size_t>(E), 0.0);
      taken.assign(static_cast<size_t>(E), 0);
      double m = -INFINITY;
      for (int64_t e = 0; e < E; ++e) {
        double acc = 0.0;
        for (int64_t i = 0; i < H; ++i) acc += static_cast<double>(khive_bf16_to_float(x[t * H + i])) * khive_bf16_to_float(w[e * H + i]);
        logit[e] = acc;
        m = std::fmax(m, acc);
      }
      double sum = 0.0;
      for (int64_t e = 0; e < E; ++e) sum += std::exp(logit[e] - m);
      for (int64_t j = 0; j < kTopk; ++j) {
        int64_t best = -1;
        for (int64_t e = 0; e < E; ++e)
          if (!taken[e] && (best < 0 || logit[e] > logit[best])) best = e;   // strict >: the lower index wins ties
        taken[best] = 1;
        topk_ids[t * kTopk + j] = static_cast<int32_t>(best);
        topk_weights[t * kTopk + j] = static_cast<float>(std::exp(logit[best] - m) / sum);
      }
    }
  }
}
