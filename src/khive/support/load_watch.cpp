#include "khive/support/load_watch.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "khive/support/subprocess.hpp"

namespace khive {
namespace {

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; }

}  // namespace

LoadWatch::Sample LoadWatch::sample() {
  Sample s;
  std::ifstream f("/proc/stat");
  std::string line;
  if (!std::getline(f, line) || line.rfind("cpu ", 0) != 0) return s;
  std::istringstream in(line.substr(4));
  uint64_t v[10] = {0};
  for (int i = 0; i < 10 && in >> v[i]; ++i) {
  }
  // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user.
  const uint64_t idle = v[3] + v[4];
  s.total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
  s.busy = s.total - idle;
  rusage self{}, kids{};
  ::getrusage(RUSAGE_SELF, &self);
  ::getrusage(RUSAGE_CHILDREN, &kids);
  s.own_s = seconds(self.ru_utime) + seconds(self.ru_stime) + seconds(kids.ru_utime) + seconds(kids.ru_stime);
  s.ok = true;
  return s;
}

LoadWatch::LoadWatch() : start_(sample()) {}

double LoadWatch::others_share() const {
  const Sample end = sample();
  if (!start_.ok || !end.ok || end.total <= start_.total) return -1;
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double total_s = static_cast<double>(end.total - start_.total) / hz;
  const double busy_s = static_cast<double>(end.busy - start_.busy) / hz;
  const double others = busy_s - (end.own_s - start_.own_s);
  return others > 0 ? others / total_s : 0.0;
}

std::string LoadWatch::warning(double threshold) const {
  const double share = others_share();
  if (share < threshold) return "";
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  return fmt::format(
      "the machine was busy while it was measured: other processes used {:.0f}% of its {} core{}, so the ceilings "
      "may be too low (and scores against them too high); calibrate again on a quiet machine",
      share * 100, cpus, cpus == 1 ? "" : "s");
}

std::string gpu_busy_warning() {
  if (find_program("nvidia-smi").empty()) return "";
  ProcessSpec p;
  p.argv = {"nvidia-smi", "--query-compute-apps=pid,process_name", "--format=csv,noheader"};
  p.timeout_s = 15;
  const ProcessResult r = run_process(p);
  if (!r.ok()) return "";
  std::string apps;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) apps += (apps.empty() ? "" : "; ") + line;
  if (apps.empty()) return "";
  return "other processes use the GPU while it is measured (" + apps +
         "): the ceilings may be too low; calibrate again when it is free";
}

}  // namespace khive
