// Was the machine busy with other work while we measured? A calibration taken under load gives ceilings that are
// too low, and every score later computed against them too high, so `khive calibrate` says so.
//
//   LoadWatch w;                       // before the measurement
//   ... run the measuring child ...
//   if (auto warn = w.warning(); !warn.empty()) std::cerr << warn;   // after it
#pragma once
#include <cstdint>
#include <string>

namespace khive {

class LoadWatch {
 public:
  LoadWatch();  // reads the machine's CPU time (/proc/stat) and this process's children's (getrusage)
  // The share of the machine's CPU capacity that other processes used since construction (0..1): busy time of
  // all processes minus that of this process and its waited-for children. nullopt-like -1 when unreadable.
  double others_share() const;
  // One sentence when others used more than `threshold` of the capacity, else "".
  std::string warning(double threshold = 0.15) const;

 private:
  struct Sample {
    uint64_t busy = 0, total = 0;  // jiffies, all CPUs
    double own_s = 0;              // this process + waited-for children, user + system seconds
    bool ok = false;
  };
  static Sample sample();
  Sample start_;
};

// One sentence when nvidia-smi lists compute processes on the visible GPUs (they share the GPU a calibration
// measures), else "" (also when there is no nvidia-smi).
std::string gpu_busy_warning();

}  // namespace khive
