#include "khive/score/cpu_ceiling.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

namespace khive {

CpuCore cpu_core_from_host() {
  CpuCore c;
  std::ifstream in("/proc/cpuinfo");
  std::string line, flags;
  double mhz = 0;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    const std::string value = line.substr(colon + 1);
    if (key == "flags" && flags.empty()) flags = " " + value + " ";
    if (key == "cpu MHz") {
      try {
        mhz = std::max(mhz, std::stod(value));
      } catch (const std::exception&) {
      }
    }
  }
  std::string lanes_from = "no flags read: 16 lanes assumed";
  if (!flags.empty()) {
    if (flags.find(" avx512f ") != std::string::npos)
      c.lanes32 = 16, lanes_from = "avx512f";
    else if (flags.find(" avx2 ") != std::string::npos || flags.find(" avx ") != std::string::npos)
      c.lanes32 = 8, lanes_from = "avx/avx2";
    else
      c.lanes32 = 4, lanes_from = "no AVX";
  }
  std::string ghz_from = "no clock read: 6 GHz assumed";
  std::ifstream fmax("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (fmax >> khz && khz > 0) {
    c.ghz = khz / 1e6;
    ghz_from = "cpufreq max";
  } else if (mhz > 0) {
    c.ghz = mhz * 1.5 / 1e3;  // the reported clock may be the base clock: 1.5x leaves room for any turbo
    ghz_from = "1.5 x /proc/cpuinfo MHz";
  }
  c.source = fmt::format("{} fp32 lanes ({}), {:.2f} GHz ({})", c.lanes32, lanes_from, c.ghz, ghz_from);
  return c;
}

HardwareProfile cpu_core_ceiling(const CpuCore& core, int threads) {
  HardwareProfile h;
  const double per_cycle = std::max(1, threads) * core.ghz * 1e9;
  const double fp32 = per_cycle * 2 /*FMA units*/ * core.lanes32 * 2 /*flops per FMA*/;
  h.name = "cpu core ceiling";
  h.source = fmt::format("issue-width ceiling: {} thread(s) x {}", std::max(1, threads), core.source);
  h.peak_flops = {{ComputeUnit::fp64, fp32 / 2},    {ComputeUnit::fp32, fp32},        {ComputeUnit::tc_tf32, fp32},
                  {ComputeUnit::tc_bf16, fp32 * 2}, {ComputeUnit::tc_fp16, fp32 * 2}, {ComputeUnit::tc_fp8, fp32 * 4},
                  {ComputeUnit::tc_int8, fp32 * 4}};
  h.peak_bandwidth = per_cycle * 3 /*two loads, one store*/ * core.lanes32 * 4.0;
  return h;
}

HardwareProfile with_ceiling_peaks(HardwareProfile p, const HardwareProfile& ceiling) {
  for (const auto& [u, v] : ceiling.peak_flops) p.peak_flops[u] = std::max(p.peak_flops[u], v);
  p.peak_bandwidth = std::max(p.peak_bandwidth, ceiling.peak_bandwidth);
  return p;
}

}  // namespace khive
