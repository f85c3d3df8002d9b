// gemm.cuda_sm90_rs3xtf32's register plumbing, checked on the host with CuTe's own layout algebra (no GPU):
//   nvcc -std=c++17 --expt-relaxed-constexpr -arch=sm_90a -I.deps/cutlass/include \
//        -o /tmp/rs3x tests/emulation/rs3xtf32_fragments.cu && /tmp/rs3x
// For every consumer thread (256) and every TILE_N the template allows: the s2r tiled copy (make_tiled_copy_A with
// AutoVectorizingCopy, partition_S of A's tile, retile_D of the float fragment) puts into register i of the fragment
// the element of A that register i of the register-A TF32 wgmma's A operand holds (partition_A of the identity),
// which is what lets the template split `af(i)` into `big(i)` and `small(i)`; and the accumulator's registers
// (i, i + 1), i even, are neighbouring columns of one row (the epilogue's pairs). A's tile is K-major without the
// template's 128-byte swizzle: the swizzle moves addresses, not which logical element a register receives.
#include <cstdio>

#include "cute/tensor.hpp"   // first: the atoms below need its algorithms declared
#include "cute/atom/copy_atom.hpp"
#include "cute/atom/mma_atom.hpp"
#include "cute/atom/mma_traits_sm90_gmma.hpp"
#include "cutlass/numeric_types.h"

template <int kTileN>
long check() {
  using namespace cute;
  using TB = cutlass::tfloat32_t;
  using Mma = decltype(make_tiled_mma(GMMA::rs_op_selector<TB, TB, float, Shape<_64, Int<kTileN>, _32>, GMMA::Major::K,
                                                           GMMA::Major::K>(),
                                      Layout<Shape<_2, _1, _1>>{}));
  static float buf[128 * 32];
  auto sA = make_tensor(&buf[0], Layout<Shape<_128, _32, _1>, Stride<_32, _1, _0>>{});
  for (int m = 0; m < 128; ++m)
    for (int k = 0; k < 32; ++k) sA(m, k, 0) = float(m * 32 + k);
  auto cA = make_identity_tensor(Shape<_128, _32>{});
  auto cC = make_identity_tensor(Shape<_128, Int<kTileN>>{});
  Mma mma;
  auto s2r = make_tiled_copy_A(Copy_Atom<AutoVectorizingCopy, float>{}, mma);
  long bad = 0;
  for (int tid = 0; tid < 256; ++tid) {
    auto thr = mma.get_thread_slice(tid);
    auto big = thr.partition_fragment_A(sA(_, _, 0));
    auto f = make_fragment_like<float>(big);
    auto tCcA = thr.partition_A(cA);
    auto ts = s2r.get_thread_slice(tid);
    auto tXsA = ts.partition_S(sA);
    auto tXrA = ts.retile_D(f);
    copy(s2r, tXsA(_, _, _, 0), tXrA);
    for (int i = 0; i < size(f); ++i) {
      const int m = get<0>(tCcA(i)), k = get<1>(tCcA(i));
      if (f(i) != float(m * 32 + k)) {
        if (bad < 5) std::printf("TILE_N %d thread %d register %d: holds %g, the wgmma reads A(%d, %d)\n", kTileN, tid, i, f(i), m, k);
        ++bad;
      }
    }
    auto tCcC = thr.partition_C(cC);
    for (int i = 0; i + 1 < size(tCcC); i += 2)
      if (get<0>(tCcC(i)) != get<0>(tCcC(i + 1)) || get<1>(tCcC(i)) + 1 != get<1>(tCcC(i + 1))) {
        if (bad < 5) std::printf("TILE_N %d thread %d: accumulator registers %d, %d are not neighbours\n", kTileN, tid, i, i + 1);
        ++bad;
      }
  }
  std::printf("TILE_N %d: %ld mismatches\n", kTileN, bad);
  return bad;
}

int main() { return check<64>() + check<128>() + check<192>() + check<256>() ? 1 : 0; }
