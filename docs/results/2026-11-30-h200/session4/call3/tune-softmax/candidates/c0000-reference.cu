// softmax, CUDA reference: one 256-thread block per row; the max, then sum exp(x - max) in double, then each
// exp divided by the sum in double, rounded once to bf16.
namespace {
constexpr int kThreads = 256;

__global__ void ref_softmax(const __nv_bfloat16* x, __nv_bfloat16* y, int64_t C) {
  __shared__ double part[kThreads];
  const __nv_bfloat16* xr = x + static_cast<int64_t>(blockIdx.x) * C;
  __nv_bfloat16* yr = y + static_cast<int64_t>(blockIdx.x) * C;
  double m = -INFINITY;
  for (int64_t j = threadIdx.x; j < C; j += kThreads) m = fmax(m, static_cast<double>(__bfloat162float(xr[j])));
  part[threadIdx.x] = m;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] = fmax(part[threadIdx.x], part[threadIdx.x + w]);
    __syncthreads();
  }
  m = part[0];
  __syncthreads();
  double s = 0.0;
  for (int64_t j = threadIdx.x; j < C; j += kThreads) s += exp(static_cast<double>(__bfloat162float(xr[j])) - m);
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  const double inv = 1.0 / part[0];
  for (int64_t j = threadIdx.x; j < C; j += kThreads)
    yr[j] = __float2bfloat16(static_cast<float>(exp(static_cast<double>(__bfloat162float(xr[j])) - m) * inv));
}
}  // namespace

extern "C" void khive_launch(const __nv_bfloat16* x, __nv_bfloat16* y, int64_t R, int64_t C, cudaStream_t stream) {
  if (R <= 0 || C <= 0) return;
  ref_softmax<<<static_cast<unsigned>(R), kThreads, 0, stream>>>(x, y, C);
}
