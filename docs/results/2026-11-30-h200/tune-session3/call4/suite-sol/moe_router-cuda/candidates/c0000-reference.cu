// moe_router, CUDA reference: one 256-thread block per token. Each warp computes logits of experts
// e = warp, warp + 8, ... (lanes stride over H, coalesced, fp32 sums combined by shuffles; exact for this
// task's inputs) into shared memory; then thread 0 does the softmax in double and the top-8 selection
// (largest remaining logit, lowest index on ties), E·8 comparisons per token.
namespace {
constexpr int kThreads = 256, kTopk = 8, kMaxExperts = 1024;

__global__ void ref_router(const __nv_bfloat16* x, const __nv_bfloat16* w, float* topk_weights, int32_t* topk_ids,
                           int64_t H, int64_t E) {
  __shared__ float logit[kMaxExperts];
  __shared__ unsigned char taken[kMaxExperts];
  const int64_t t = blockIdx.x;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int64_t e = warp; e < E; e += kThreads / 32) {
    float acc = 0.0f;
    for (int64_t i = lane; i < H; i += 32) acc += __bfloat162float(x[t * H + i]) * __bfloat162float(w[e * H + i]);
    for (int off = 16; off > 0; off /= 2) acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (lane == 0) {
      logit[e] = acc;
      taken[e] = 0;
    }
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  double m = -INFINITY;
  for (int64_t e = 0; e < E; ++e) m = fmax(m, static_cast<double>(logit[e]));
  double sum = 0.0;
  for (int64_t e = 0; e < E; ++e) sum += exp(static_cast<double>(logit[e]) - m);
  for (int j = 0; j < kTopk; ++j) {
    int64_t best = -1;
    for (int64_t e = 0; e < E; ++e)
      if (!taken[e] && (best < 0 || logit[e] > logit[best])) best = e;   // strict >: the lower index wins ties
    taken[best] = 1;
    topk_ids[t * kTopk + j] = static_cast<int32_t>(best);
    topk_weights[t * kTopk + j] = static_cast<float>(exp(static_cast<double>(logit[best]) - m) / sum);
  }
}
}  // namespace

extern "C" void khive_launch(const __nv_bfloat16* x, const __nv_bfloat16* w, float* topk_weights, int32_t* topk_ids,
                             int64_t T, int64_t H, int64_t E, cudaStream_t stream) {
  if (T <= 0 || E <= 0) return;
  ref_router<<<static_cast<unsigned>(T), kThreads, 0, stream>>>(x, w, topk_weights, topk_ids, H, E);
}
