// vector_add candidate: the vector split into 16 KiB blocks (4096 floats) handed to threads
// dynamically, each block summed 8 elements at a time through restrict-qualified pointers; a scalar
// loop finishes the last (N mod 8) elements of the final block.
extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  constexpr int64_t kBlock = 4096;
  const int64_t blocks = (N + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(dynamic, 4)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t lo = blk * kBlock;
    const int64_t hi = lo + kBlock < N ? lo + kBlock : N;
    const float* __restrict__ pa = a + lo;
    const float* __restrict__ pb = b + lo;
    float* __restrict__ pc = c + lo;
    const int64_t len = hi - lo, body = len & ~int64_t{7};
    for (int64_t i = 0; i < body; i += 8) {
#pragma omp simd
      for (int j = 0; j < 8; ++j) pc[i + j] = pa[i + j] + pb[i + j];
    }
    for (int64_t i = body; i < len; ++i) pc[i] = pa[i] + pb[i];   // tail
  }
}
