#include "khive/executor/vmm.hpp"

#include <cuda.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <mutex>
#include <stdexcept>

namespace khive::exec {
namespace {

struct Driver {
  decltype(&cuMemCreate) create = nullptr;
  decltype(&cuMemRelease) release = nullptr;
  decltype(&cuMemAddressReserve) reserve = nullptr;
  decltype(&cuMemAddressFree) free_va = nullptr;
  decltype(&cuMemMap) map = nullptr;
  decltype(&cuMemUnmap) unmap = nullptr;
  decltype(&cuMemSetAccess) set_access = nullptr;
  decltype(&cuMemExportToShareableHandle) export_handle = nullptr;
  decltype(&cuMemImportFromShareableHandle) import_handle = nullptr;
  decltype(&cuMemGetAllocationGranularity) granularity = nullptr;
};

template <typename F>
void load(F& f, const char* name) {
  cudaDriverEntryPointQueryResult q{};
  void* p = nullptr;
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess || !p)
    throw std::runtime_error(std::string("CUDA driver entry point ") + name + " is not available");
  f = reinterpret_cast<F>(p);
}

const Driver& driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] {
    cudaFree(nullptr);  // the primary context, current on this thread
    load(d.create, "cuMemCreate");
    load(d.release, "cuMemRelease");
    load(d.reserve, "cuMemAddressReserve");
    load(d.free_va, "cuMemAddressFree");
    load(d.map, "cuMemMap");
    load(d.unmap, "cuMemUnmap");
    load(d.set_access, "cuMemSetAccess");
    load(d.export_handle, "cuMemExportToShareableHandle");
    load(d.import_handle, "cuMemImportFromShareableHandle");
    load(d.granularity, "cuMemGetAllocationGranularity");
  });
  return d;
}

void ck(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: CUresult " + std::to_string(static_cast<int>(r)));
}

CUmemAllocationProp prop() {
  int dev = 0;
  cudaGetDevice(&dev);
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = dev;
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return p;
}

void map_rw(VmmRegion& r) {
  const Driver& d = driver();
  CUdeviceptr ptr = 0;
  ck(d.reserve(&ptr, r.bytes, 0, 0, 0), "cuMemAddressReserve");
  r.ptr = ptr;
  ck(d.map(ptr, r.bytes, 0, static_cast<CUmemGenericAllocationHandle>(r.handle), 0), "cuMemMap");
  CUmemAccessDesc a{};
  a.location = prop().location;
  a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  ck(d.set_access(ptr, r.bytes, &a, 1), "cuMemSetAccess");
}

}  // namespace

std::size_t vmm_granularity() {
  std::size_t g = 0;
  CUmemAllocationProp p = prop();
  ck(driver().granularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "cuMemGetAllocationGranularity");
  return g ? g : (2u << 20);
}

// r mapped read-write, or released and the error rethrown: a region comes back mapped or not at all.
VmmRegion mapped(VmmRegion r) {
  try {
    map_rw(r);
  } catch (...) {
    vmm_release(r);
    throw;
  }
  return r;
}

VmmRegion vmm_create(std::size_t bytes) {
  const std::size_t g = vmm_granularity();
  VmmRegion r;
  r.bytes = (std::max<std::size_t>(bytes, 1) + g - 1) / g * g;
  CUmemGenericAllocationHandle h = 0;
  CUmemAllocationProp p = prop();
  ck(driver().create(&h, r.bytes, &p, 0), "cuMemCreate");
  r.handle = h;
  return mapped(r);
}

int vmm_export(const VmmRegion& r) {
  int fd = -1;
  ck(driver().export_handle(&fd, static_cast<CUmemGenericAllocationHandle>(r.handle),
                            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
     "cuMemExportToShareableHandle");
  return fd;
}

VmmRegion vmm_import(int fd, std::size_t bytes) {
  VmmRegion r;
  r.bytes = bytes;
  CUmemGenericAllocationHandle h = 0;
  CUresult res = driver().import_handle(&h, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)),
                                        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  ::close(fd);
  ck(res, "cuMemImportFromShareableHandle");
  r.handle = h;
  return mapped(r);
}

void vmm_release(VmmRegion& r) {
  const Driver& d = driver();
  if (r.ptr) {
    d.unmap(static_cast<CUdeviceptr>(r.ptr), r.bytes);
    d.free_va(static_cast<CUdeviceptr>(r.ptr), r.bytes);
    r.ptr = 0;
  }
  if (r.handle) {
    d.release(static_cast<CUmemGenericAllocationHandle>(r.handle));
    r.handle = 0;
  }
}

}  // namespace khive::exec
