// A device scratch buffer kept between calls (spliced in with `// khive:include common/workspace.cuh`): it grows on
// demand and the same allocation serves every later call, so a kernel pays cudaMalloc once per process, not per
// call. Growing frees the old buffer first (cudaFree synchronizes: no kernel still uses it). nullptr when
// cudaMalloc fails (the caller falls back). One buffer per slot and process; callers run on one thread. A kernel
// that needs several buffers in one call takes one slot each (slot 0 is the default, and CUTLASS's workspace).
//
//   float* part = static_cast<float*>(khive_workspace(splits * T * E * sizeof(float)));
//   float* copy_of_a = static_cast<float*>(khive_workspace<1>(M * K * sizeof(float)));   // alive next to slot 0
template <int Slot = 0>
void* khive_workspace(size_t bytes) {
  static void* ptr = nullptr;
  static size_t size = 0;
  if (bytes > size) {
    if (ptr) cudaFree(ptr);
    ptr = nullptr;
    size = 0;
    if (cudaMalloc(&ptr, bytes) != cudaSuccess) return nullptr;
    size = bytes;
  }
  return ptr;
}

// Split partials and their counters (the last CTA of a group to finish combines the partials in split order and
// resets its counter): one allocation, `counters` ints (256-byte aligned) then `part_bytes`, grown on demand and kept
// like khive_workspace; the counters are zeroed on the call's stream when it is (re)allocated and stay zero between
// calls because the kernels reset them. False when memory cannot be had (the caller runs unsplit).
inline bool khive_split_workspace(size_t counters, size_t part_bytes, cudaStream_t stream, int** cnt, float** part) {
  static void* ptr = nullptr;
  static size_t counter_bytes = 0, bytes = 0;
  const size_t cb = (counters * sizeof(int) + 255) / 256 * 256;
  if (cb > counter_bytes || cb + part_bytes > bytes) {
    const size_t ncb = cb > counter_bytes ? cb : counter_bytes;
    const size_t npart = part_bytes > bytes - counter_bytes ? part_bytes : bytes - counter_bytes;
    if (ptr) cudaFree(ptr);   // synchronizes: no kernel still uses the old buffer
    ptr = nullptr;
    counter_bytes = bytes = 0;
    void* q = nullptr;
    if (cudaMalloc(&q, ncb + npart) != cudaSuccess) {
      (void)cudaGetLastError();   // not the kernel's error: the caller runs unsplit
      return false;
    }
    if (cudaMemsetAsync(q, 0, ncb, stream) != cudaSuccess) {
      cudaFree(q);
      return false;
    }
    ptr = q;
    counter_bytes = ncb;
    bytes = ncb + npart;
  }
  *cnt = static_cast<int*>(ptr);
  *part = reinterpret_cast<float*>(static_cast<char*>(ptr) + counter_bytes);
  return true;
}
