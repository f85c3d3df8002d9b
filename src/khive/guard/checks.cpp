#include "khive/guard/checks.hpp"

namespace khive {

const WorkloadTiming* Verdict::timing_for(const std::string& uuid) const {
  for (auto& t : timings)
    if (t.workload == uuid) return &t;
  return nullptr;
}

Verdict reject(Check c, Reason r, std::string message, std::string diagnosis, std::string workload) {
  Verdict v;
  v.rejection = Rejection{c, r, std::move(workload), std::move(message), std::move(diagnosis)};
  return v;
}

}  // namespace khive
