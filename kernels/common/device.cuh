// Device queries shared by the CUDA templates (spliced in with `// khive:include common/device.cuh`).
//
//   int sms = khive_sm_count();                                   // 132 on an H100/H200 SXM
//   int64_t n = khive_resident_blocks(my_kernel, 256, smem_bytes); // blocks of my_kernel resident at once, GPU-wide
//
// The SM count is the current device's, queried once per process; 132 (the H100/H200 SXM count) when the runtime
// cannot say, so a grid sized from it is still a sensible size.
static int khive_sm_count() {
  static const int n = [] {
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms <= 0)
      return 132;
    return sms;
  }();
  return n;
}

// Blocks of `kernel` (threads per block, dynamic shared memory) that fit on the whole GPU at once: occupancy per SM
// times the SM count; 0 when the runtime cannot say (callers then size their grid without it). Not cached: callers
// keep the figure per kernel instantiation.
template <class Kernel>
int64_t khive_resident_blocks(Kernel kernel, int threads, size_t smem) {
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem) != cudaSuccess) return 0;
  return int64_t(khive_sm_count()) * per_sm;
}
