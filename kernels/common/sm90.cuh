// sm_90 PTX the row templates share (spliced in with `// khive:include common/sm90.cuh`):
//
//   float r = khive_ex2(v);                                // 2^v by ex2.approx.ftz; -inf -> 0
//   uint32_t a = khive_smem_addr(&stage[0]);               // a shared-memory pointer as the address PTX takes
//   khive_bulk_copy(bar, dst, src, bytes, evict_first);    // one thread: expect `bytes` more on the mbarrier and start
//                                                          // a TMA bulk copy global -> shared that completes on it
//   khive_mbar_wait(bar, parity);                          // every reader: spin until that phase of the barrier ends
//
// A bulk copy needs 16-byte aligned addresses and a byte count that is a multiple of 16 (below 2^20 per barrier
// phase: the tx-count limit). Callers put `fence.proxy.async.shared::cta` before a copy into memory that this CTA
// has read through ordinary loads, so those reads come before the async proxy's writes.
__device__ __forceinline__ float khive_ex2(float v) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}

__device__ __forceinline__ uint32_t khive_smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

// evict_first: an L2 evict-first policy for the source (data touched once).
__device__ __forceinline__ void khive_bulk_copy(uint64_t* bar, void* dst, const void* src, uint32_t bytes, bool evict_first) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(khive_smem_addr(bar)), "r"(bytes) : "memory");
  if (evict_first) {
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(
                     khive_smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(khive_smem_addr(bar)), "l"(policy)
                 : "memory");
  } else {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(khive_smem_addr(dst)), "l"(src),
                 "r"(bytes), "r"(khive_smem_addr(bar))
                 : "memory");
  }
}

__device__ __forceinline__ void khive_mbar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n\t.reg .pred P1;\n\tKHIVE_MBAR_WAIT:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n\t"
      "@P1 bra KHIVE_MBAR_DONE;\n\tbra KHIVE_MBAR_WAIT;\n\tKHIVE_MBAR_DONE:\n\t}" ::"r"(khive_smem_addr(bar)),
      "r"(parity)
      : "memory");
}
