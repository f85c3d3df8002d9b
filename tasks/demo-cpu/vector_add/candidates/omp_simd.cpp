// vector_add candidate: OpenMP work-sharing over all cores, each thread's static chunk vectorized
// with `omp simd`. The plain loop has no tail to handle: the compiler's vector loop peels it.
extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
}
