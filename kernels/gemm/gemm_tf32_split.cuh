// Shared by the 3xTF32 templates written here (`// khive:include gemm_tf32_split.cuh`): an fp32 value as the sum of
// two TF32 values, big = tf32_rn(x) and small = tf32_rn(x - big) (x - big is exact in fp32), as the bits an MMA reads.
// small*big + big*small + big*big then keeps fp32-level accuracy (small*small, < 2^-22 of a product, dropped).
__device__ __forceinline__ uint32_t khive_tf32_rn(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ void khive_tf32_split(float x, uint32_t& big, uint32_t& small) {
  big = khive_tf32_rn(x);
  small = khive_tf32_rn(x - __uint_as_float(big));
}
