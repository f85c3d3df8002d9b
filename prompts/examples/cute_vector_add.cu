// Worked example for the CuTe primer (prompts/cute_primer.md): c = a + b on fp32 vectors, written with
// CuTe tensors. It is a complete KernelHive candidate for tasks/demo-cpu/vector_add on the CUDA backend:
//   khive eval tasks/demo-cpu/vector_add prompts/examples/cute_vector_add.cu --backend cuda
//
// Shape of the computation: the vector is cut into CTA tiles of kThreads * kVec elements; inside a tile
// each thread owns kVec contiguous elements (one 16-byte access when kVec = 4 and the data is aligned).
// Full tiles take the vectorized path; the last, partial tile is predicated element by element with an
// identity (coordinate) tensor, so any N works, including N not a multiple of the tile.
#include <cute/tensor.hpp>

// A named namespace: nvcc's generated stubs cannot tell an anonymous namespace of ours from CuTe's own
// anonymous namespaces once `using namespace cute` is in scope ("reference to _GLOBAL__N_... is ambiguous").
namespace vadd_example {
using namespace cute;

template <int kThreads, int kVec>
__global__ void __launch_bounds__(kThreads)
vector_add_cute(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int64_t n) {
  constexpr int kTile = kThreads * kVec;
  // Global tensors: pointer + layout. A 1-D layout of n elements, stride 1.
  Tensor gA = make_tensor(make_gmem_ptr(a), make_shape(n));
  Tensor gB = make_tensor(make_gmem_ptr(b), make_shape(n));
  Tensor gC = make_tensor(make_gmem_ptr(c), make_shape(n));
  // The same shape filled with coordinates: used to predicate the partial tile.
  Tensor cC = make_identity_tensor(make_shape(n));

  // This CTA's tile: (kTile) elements starting at blockIdx.x * kTile.
  auto tile = make_shape(Int<kTile>{});
  Tensor tA = local_tile(gA, tile, make_coord(blockIdx.x));
  Tensor tB = local_tile(gB, tile, make_coord(blockIdx.x));
  Tensor tC = local_tile(gC, tile, make_coord(blockIdx.x));
  Tensor tP = local_tile(cC, tile, make_coord(blockIdx.x));

  // Split the tile into (kVec, kThreads): mode 0 is one thread's contiguous chunk, mode 1 picks the thread.
  auto chunk = make_shape(Int<kVec>{});
  Tensor myA = zipped_divide(tA, chunk)(make_coord(_, threadIdx.x));   // (kVec)
  Tensor myB = zipped_divide(tB, chunk)(make_coord(_, threadIdx.x));
  Tensor myC = zipped_divide(tC, chunk)(make_coord(_, threadIdx.x));
  Tensor myP = zipped_divide(tP, chunk)(make_coord(_, threadIdx.x));

  // Registers for the thread's chunk, with the same (static) layout as the chunk.
  Tensor rA = make_tensor_like(myA);
  Tensor rB = make_tensor_like(myB);
  Tensor rC = make_tensor_like(myC);

  const int64_t tile_end = (int64_t(blockIdx.x) + 1) * kTile;
  const bool aligned = ((reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b) |
                         reinterpret_cast<uintptr_t>(c)) % (sizeof(float) * kVec)) == 0;
  if (tile_end <= n && aligned) {
    // Full tile: copy() with a static, contiguous layout compiles to vector loads and stores.
    copy(AutoVectorizingCopy{}, myA, rA);
    copy(AutoVectorizingCopy{}, myB, rB);
    CUTE_UNROLL
    for (int i = 0; i < size(rC); ++i) rC(i) = rA(i) + rB(i);
    copy(AutoVectorizingCopy{}, rC, myC);
  } else {
    // Partial tile (or unaligned buffers): element by element, only coordinates inside [0, n).
    CUTE_UNROLL
    for (int i = 0; i < size(myC); ++i)
      if (elem_less(myP(i), make_coord(n))) myC(i) = myA(i) + myB(i);
  }
}
}  // namespace vadd_example

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  if (N <= 0) return;
  constexpr int kThreads = 256, kVec = 4, kTile = kThreads * kVec;
  const int64_t blocks = (N + kTile - 1) / kTile;   // one tile per CTA; gridDim.x allows 2^31 - 1
  vadd_example::vector_add_cute<kThreads, kVec><<<dim3(unsigned(blocks)), dim3(kThreads), 0, stream>>>(a, b, c, N);
}
