// Power kernel (bench/null_ab.py --mode power): kernel_a.cpp's add, made slower by a calibrated 3.3 %: it times its own
// add with the time-stamp counter (an instruction, no timer call for the symbol policy to refuse) and spins for 3.3 %
// of that time more. Check 11 must call kernel_a a new leader against this kernel.
#include <cstdint>

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  const unsigned long long t0 = __builtin_ia32_rdtsc();
#pragma omp parallel for simd schedule(static) if (N > 65536)
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
  const unsigned long long t1 = __builtin_ia32_rdtsc();
  const unsigned long long until = t1 + (t1 - t0) * 33 / 1000;
  while (__builtin_ia32_rdtsc() < until) {
  }
}
