// kb07_matmul_small_k, vendor baseline: cublasSgemm, fp32 inputs, fp32 compute, fp32 output.
// fp32 all the way: CUBLAS_DEFAULT_MATH never uses TF32 (that needs CUBLAS_TF32_TENSOR_OP_MATH or a
// *_FAST_TF32 compute type), and the task's tolerance would reject TF32 results anyway. Row-major operands
// are passed as their column-major transposes: C = A.B row-major is C^T = B^T.A^T column-major.
#include <cstdlib>
#include <cublas_v2.h>

namespace {
// A failed cuBLAS call ends the baseline with abort(), which the runner reports as a crash of this kernel
// (file I/O is off limits inside a kernel library, so there is no message of our own).
void check(cublasStatus_t s, const char*) {
  if (s != CUBLAS_STATUS_SUCCESS) std::abort();
}
cublasHandle_t handle() {   // one handle per process, created on the first call (a warm-up call)
  static cublasHandle_t h = [] {
    cublasHandle_t x = nullptr;
    check(cublasCreate(&x), "cublasCreate");
    check(cublasSetMathMode(x, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    check(cublasSetPointerMode(x, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
    return x;
  }();
  return h;
}
}  // namespace

extern "C" void khive_launch(const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N, cudaStream_t stream) {
  if (M <= 0 || N <= 0) return;
  cublasHandle_t h = handle();
  check(cublasSetStream(h, stream), "cublasSetStream");   // the entry's stream, every call
  const float one = 1.0f, zero = 0.0f;
  check(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, C, N), "cublasSgemm");
}
