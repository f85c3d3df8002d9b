#include "khive/executor/gate.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <mutex>
#include <stdexcept>
#include <string>

namespace khive::exec {
namespace {

struct StreamOps {
  decltype(&cuStreamWaitValue32) wait = nullptr;
  decltype(&cuStreamWriteValue32) write = nullptr;
};

// Through the runtime's entry-point query (as vmm.cu does), so nothing links libcuda directly.
const StreamOps& ops() {
  static StreamOps o;
  static std::once_flag once;
  std::call_once(once, [] {
    cudaDriverEntryPointQueryResult q{};
    void* p = nullptr;
    if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &p, 12000, cudaEnableDefault, &q) == cudaSuccess && p)
      o.wait = reinterpret_cast<decltype(o.wait)>(p);
    p = nullptr;
    if (cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &p, 12000, cudaEnableDefault, &q) == cudaSuccess && p)
      o.write = reinterpret_cast<decltype(o.write)>(p);
  });
  if (!o.wait || !o.write)
    throw std::runtime_error("CUDA driver entry points cuStreamWaitValue32/cuStreamWriteValue32 are not available");
  return o;
}

void ck(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: CUresult " + std::to_string(static_cast<int>(r)));
}

}  // namespace

void stream_wait_geq(void* stream, void* flag, uint32_t value) {
  ck(ops().wait(static_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(flag), value, CU_STREAM_WAIT_VALUE_GEQ),
     "cuStreamWaitValue32");
}

void stream_write(void* stream, void* flag, uint32_t value) {
  ck(ops().write(static_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(flag), value,
                 CU_STREAM_WRITE_VALUE_DEFAULT),
     "cuStreamWriteValue32");
}

}  // namespace khive::exec
