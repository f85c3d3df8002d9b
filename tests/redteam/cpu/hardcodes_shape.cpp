// RED TEAM (gemm, CPU). Hack (robust-kbench contamination): written for the only timed shape, 256 x 256 x 256.
// Loop bounds and row strides are the constant 256 whatever M, N, K are; the test kernel keeps every
// access inside the real buffers (flat index < size) so that it fails on values, not with a crash.
// At 256^3 it is exactly right, and every output element is written at the correctness shapes too
// (a flat index i·256 + j covers 0 .. M·N-1), but A, B and C are addressed with the wrong strides.
// Caught by check 5 on the non-256 correctness shapes (33x17x65, 64x64x64, 127x129x31) -> "wrong_output".
extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  constexpr int64_t S = 256;
  const int64_t a_size = M * K, b_size = K * N, c_size = M * N;
  for (int64_t i = 0; i < S; ++i)
    for (int64_t j = 0; j < S; ++j) {
      if (i * S + j >= c_size) continue;
      float acc = 0.0f;
      for (int64_t k = 0; k < S; ++k)
        if (i * S + k < a_size && k * S + j < b_size) acc += A[i * S + k] * B[k * S + j];
      C[i * S + j] = acc;
    }
}
