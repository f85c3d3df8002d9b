// Device side of inputs.hpp: the same bits as fill_input_host / poison_host, made on the GPU.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "khive/numerics/inputs.hpp"

namespace khive {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

// Blocks for a grid-stride loop over n elements: enough to fill the device, never more than needed.
unsigned grid_for(int64_t n, int threads) {
  int dev = 0, sms = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
  const int64_t need = (n + threads - 1) / threads;
  const int64_t cap = static_cast<int64_t>(sms > 0 ? sms : 1) * 32;
  return static_cast<unsigned>(need < cap ? need : cap);
}

// One ChaCha20 block per thread and step: the block's 8 words are 8 consecutive elements.
template <DType T>
__global__ void fill_kernel(void* p, int64_t n, DistParams d, InputKey key, uint64_t tensor) {
  const int64_t blocks = (n + 7) / 8, stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks; b += stride) {
    uint32_t w[16];
    chacha20_block(key, static_cast<uint64_t>(b), tensor, w);
    const int64_t i0 = b * 8;
#pragma unroll
    for (int k = 0; k < 8; ++k)
      if (i0 + k < n)
        num::store(T, p, i0 + k,
                   value_of_bits(d, static_cast<uint64_t>(w[2 * k]) | (static_cast<uint64_t>(w[2 * k + 1]) << 32)));
  }
}

template <typename U>
__global__ void poison_kernel(U* p, int64_t n, U v) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) p[i] = v;
}

template <DType T>
void launch_fill(void* p, int64_t n, const DistParams& d, const InputKey& key, uint64_t tensor, cudaStream_t s) {
  constexpr int threads = 256;
  fill_kernel<T><<<grid_for((n + 7) / 8, threads), threads, 0, s>>>(p, n, d, key, tensor);
  check(cudaGetLastError(), "fill_input_device: kernel launch");
}

template <typename U>
void launch_poison(void* p, int64_t n, uint64_t bits, cudaStream_t s) {
  constexpr int threads = 256;
  poison_kernel<U><<<grid_for(n, threads), threads, 0, s>>>(static_cast<U*>(p), n, static_cast<U>(bits));
  check(cudaGetLastError(), "poison_device: kernel launch");
}

}  // namespace

void fill_input_device(DType t, void* p, int64_t n, const DistParams& d, const InputKey& key, uint64_t tensor,
                       void* stream) {
  if (num::size_of(t) == 0) throw std::invalid_argument("fill_input_device: packed fp4 types are not supported");
  if (n <= 0) return;
  (void)cudaGetLastError();  // a stale error from someone else's call must not be blamed on this launch
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (t) {
    case DType::f64: launch_fill<DType::f64>(p, n, d, key, tensor, s); break;
    case DType::f32: launch_fill<DType::f32>(p, n, d, key, tensor, s); break;
    case DType::f16: launch_fill<DType::f16>(p, n, d, key, tensor, s); break;
    case DType::bf16: launch_fill<DType::bf16>(p, n, d, key, tensor, s); break;
    case DType::f8e4m3: launch_fill<DType::f8e4m3>(p, n, d, key, tensor, s); break;
    case DType::f8e5m2: launch_fill<DType::f8e5m2>(p, n, d, key, tensor, s); break;
    case DType::i64: launch_fill<DType::i64>(p, n, d, key, tensor, s); break;
    case DType::i32: launch_fill<DType::i32>(p, n, d, key, tensor, s); break;
    case DType::i16: launch_fill<DType::i16>(p, n, d, key, tensor, s); break;
    case DType::i8: launch_fill<DType::i8>(p, n, d, key, tensor, s); break;
    case DType::boolean: launch_fill<DType::boolean>(p, n, d, key, tensor, s); break;
    default: break;
  }
}

void poison_device(DType t, void* p, int64_t n, Poison which, void* stream) {
  if (num::size_of(t) == 0) throw std::invalid_argument("poison_device: packed fp4 types are not supported");
  if (n <= 0) return;
  (void)cudaGetLastError();
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  const uint64_t bits = poison_bits(t, which);
  switch (num::size_of(t)) {
    case 8: launch_poison<unsigned long long>(p, n, bits, s); break;
    case 4: launch_poison<uint32_t>(p, n, bits, s); break;
    case 2: launch_poison<uint16_t>(p, n, bits, s); break;
    case 1: launch_poison<uint8_t>(p, n, bits, s); break;
    default: break;
  }
}

}  // namespace khive
