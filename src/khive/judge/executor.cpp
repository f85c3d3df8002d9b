#include "khive/judge/executor.hpp"

#include <algorithm>
#include <cmath>

namespace khive {

Overhead Overhead::of(std::vector<double> t) {
  Overhead o;
  if (t.empty()) return o;
  std::sort(t.begin(), t.end());
  o.median_s = t[t.size() / 2];
  std::vector<double> dev;
  for (double v : t) dev.push_back(std::fabs(v - o.median_s));
  std::sort(dev.begin(), dev.end());
  o.jitter_s = 1.4826 * dev[dev.size() / 2];
  return o;
}

}  // namespace khive
