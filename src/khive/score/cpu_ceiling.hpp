// An upper bound on what a CPU can do that no calibration can get wrong: the core's own issue width.
//
//   CpuCore core = cpu_core_from_host();           // {lanes32 16 (AVX-512), ghz 3.1 (cpufreq max) , ...}
//   HardwareProfile c = cpu_core_ceiling(core, 2);  // 2 threads: peak_flops fp32 = 2 x 16 x 2 FMA x 2 x 3.1e9 ...
//
// Check 10 (plausibility) rejects a median below the floor its profile gives. On a CPU that profile is a calibration
// (1.5 x measured copy and FMA rates), and a calibration taken on a busy machine measures far too low (0.2 GB/s was
// seen with a parallel build and tests on two cores): its floor then rejects honest kernels. The floor is instead
// taken from the larger of the calibration and this ceiling: every thread issuing two vector FMAs and moving three
// vector registers to or from L1 per cycle at the highest clock the host reports. No kernel reaches it; a time
// below it is a measurement fault whatever the calibration said.
#pragma once
#include "khive/score/score.hpp"

namespace khive {

struct CpuCore {
  int lanes32 = 16;    // fp32 lanes per vector register: 16 (AVX-512), 8 (AVX2), 4 (SSE / NEON)
  double ghz = 6.0;    // the highest clock the host reports (cpufreq max, else /proc/cpuinfo's MHz x 1.5)
  std::string source;  // how lanes32 and ghz were found, for reports
};

// Reads /proc/cpuinfo (flags, "cpu MHz") and /sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq; unknown
// parts take the generous defaults above (16 lanes, 6 GHz).
CpuCore cpu_core_from_host();

// Per thread per cycle: 2 FMA units x lanes x 2 flops (fp32; fp64 half; bf16/fp16/int8 twice/four times fp32 as
// the widest AVX-512 forms issue), and 3 x lanes x 4 bytes of L1 traffic (two loads and one store).
HardwareProfile cpu_core_ceiling(const CpuCore& core, int threads);

// p with each peak raised to at least the ceiling's (the calibration's measured rates are kept for T_sol).
HardwareProfile with_ceiling_peaks(HardwareProfile p, const HardwareProfile& ceiling);

}  // namespace khive
