// CUDA virtual memory shared between the judge and its executors as POSIX file descriptors (cuMemCreate with
// CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR): a descriptor is a capability, passed with SCM_RIGHTS, so an executor
// reaches exactly the regions it was handed (legacy cudaIpc handles can be guessed and opened by any process;
// these cannot), and it works across namespaces. The driver API is reached through the runtime's entry-point
// query, so nothing links libcuda directly (a CPU-only machine still starts these binaries).
#pragma once
#if defined(KHIVE_WITH_CUDA)
#include <cstddef>
#include <cstdint>
#include <string>

namespace khive::exec {

struct VmmRegion {
  uint64_t handle = 0;    // CUmemGenericAllocationHandle
  uint64_t ptr = 0;       // CUdeviceptr in this process
  std::size_t bytes = 0;  // rounded up to the allocation granularity
};

std::size_t vmm_granularity();
// Judge side: a new device allocation of at least `bytes`, mapped read-write in this process.
VmmRegion vmm_create(std::size_t bytes);
// A new descriptor for the region (the caller sends it, then closes it).
int vmm_export(const VmmRegion& r);
// Executor side: maps the region behind `fd` (closed here).
VmmRegion vmm_import(int fd, std::size_t bytes);
void vmm_release(VmmRegion& r);  // unmap, free the address range, release the handle (idempotent)

}  // namespace khive::exec
#endif
