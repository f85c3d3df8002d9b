// gemm candidate: cache-blocked with a packed B panel and a register tile.
//   for each panel of KC rows x NC columns of B: copy it into a contiguous buffer (packed, row stride nc);
//   for each block of MR = 4 rows of A (blocks in parallel) and NR = 32 columns of the panel:
//     acc[4][32] += A[i+r, k]·Bp[k, j..j+31] over the panel's k (i-k-j order, vectorized over j);
//     C block = acc (first K panel) or C block += acc (later K panels).
// Full 4 x 32 tiles take a fixed-size path the compiler keeps in vector registers; the row and column
// tails (M mod 4, N mod 32) and the last K panel (K mod KC) take the same loops with runtime bounds.
#include <vector>

namespace {
constexpr int64_t KC = 256, NC = 512, MR = 4, NR = 32;

// acc[r][j] = sum over k < kc of a[r·lda + k]·b[k·ldb + j], for r < mr, j < nr.
template <bool kFull>
inline void tile_product(const float* __restrict__ a, int64_t lda, const float* __restrict__ b, int64_t ldb,
                         int64_t kc, int64_t mr, int64_t nr, float (&acc)[MR][NR]) {
  for (int64_t k = 0; k < kc; ++k) {
    const float* __restrict__ bk = b + k * ldb;
    if constexpr (kFull) {
      for (int64_t r = 0; r < MR; ++r) {
        const float av = a[r * lda + k];
#pragma omp simd
        for (int64_t j = 0; j < NR; ++j) acc[r][j] += av * bk[j];
      }
    } else {
      for (int64_t r = 0; r < mr; ++r) {
        const float av = a[r * lda + k];
        for (int64_t j = 0; j < nr; ++j) acc[r][j] += av * bk[j];
      }
    }
  }
}
}  // namespace

extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  std::vector<float> packed(static_cast<std::size_t>(KC * NC));
  float* __restrict__ Bp = packed.data();
  for (int64_t jc = 0; jc < N; jc += NC) {
    const int64_t nc = N - jc < NC ? N - jc : NC;
    for (int64_t pc = 0; pc < K; pc += KC) {
      const int64_t kc = K - pc < KC ? K - pc : KC;
#pragma omp parallel for schedule(static)
      for (int64_t k = 0; k < kc; ++k)
        for (int64_t j = 0; j < nc; ++j) Bp[k * nc + j] = B[(pc + k) * N + jc + j];
      const bool first = pc == 0;
#pragma omp parallel for schedule(static)
      for (int64_t ib = 0; ib < (M + MR - 1) / MR; ++ib) {
        const int64_t i0 = ib * MR, mr = M - i0 < MR ? M - i0 : MR;
        for (int64_t j0 = 0; j0 < nc; j0 += NR) {
          const int64_t nr = nc - j0 < NR ? nc - j0 : NR;
          float acc[MR][NR] = {};
          if (mr == MR && nr == NR) tile_product<true>(A + i0 * K + pc, K, Bp + j0, nc, kc, mr, nr, acc);
          else tile_product<false>(A + i0 * K + pc, K, Bp + j0, nc, kc, mr, nr, acc);
          for (int64_t r = 0; r < mr; ++r) {
            float* __restrict__ c = C + (i0 + r) * N + jc + j0;
            if (first)
              for (int64_t j = 0; j < nr; ++j) c[j] = acc[r][j];
            else
              for (int64_t j = 0; j < nr; ++j) c[j] += acc[r][j];
          }
        }
      }
    }
  }
}
