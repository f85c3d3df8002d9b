// Hardware calibration (`khive calibrate`): measures the ceilings a HardwareProfile carries (score.hpp).
// Runs inside khive-judge (no kernel code involved), on the machine being measured.
//
//   HardwareProfile cpu = calibrate_cpu();            // ~2 s
//   HardwareProfile gpu = calibrate_cuda(0);          // ~a few s on an H200; 20 s budget
//   save_profile(gpu, "profiles/h200.json");
//
// CPU (calibrate.cpp): copy bandwidth = best of several OpenMP-parallel memcpy's of a 256 MiB buffer, counting
// read + write bytes; fp32 and fp64 FLOP/s = best of several OpenMP runs of independent FMA chains, dispatched
// at run time to AVX-512F / AVX2+FMA / baseline code. There is no datasheet for a CPU: peaks = 1.5 x measured,
// a plausibility ceiling only (said in `source`).
//
// CUDA (calibrate_cuda.cu): copy bandwidth = best of 10 event-timed D2D cudaMemcpyAsync of a 2 GiB buffer
// (bytes = 2 x size); matrix rates = cuBLAS cublasGemmEx (TN) on random non-zero data, median of 10 after 3
// warm-ups, best of 8192^3 and 4096^3, for bf16 (compute 32F), fp16 (compute 32F), tf32 (32F_FAST_TF32 on fp32
// data) and fp32 (compute 32F, default math: no TF32, what PyTorch runs with allow_tf32 off). Peaks come from
// builtin_profile(device name) when it matches (a peak under a measurement is raised to it and `source` says
// so), else 1.1 x measured. Units not measured (fp8, int8, fp64) carry only the builtin peak, if any.
// Needs CUDA::cublas on the executable that compiles this file.
#pragma once

#include "khive/score/score.hpp"

namespace khive {

// Throws std::runtime_error if no measurement could be made (e.g. out of memory for the smallest buffer).
HardwareProfile calibrate_cpu(double seconds_budget = 2.0);

#if defined(KHIVE_WITH_CUDA)
// Throws std::runtime_error naming the CUDA/cuBLAS call that failed. Measurements that do not fit in the
// budget are skipped (left unmeasured, so the score falls back to the peak) and `source` lists them.
HardwareProfile calibrate_cuda(int device, double seconds_budget = 20.0);
#endif

}  // namespace khive
