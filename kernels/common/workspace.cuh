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
