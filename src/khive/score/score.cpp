// Speed of light, hardware profiles and the SOL-ExecBench score (docs/architecture.md, glossary: T_sol, score).
#include "khive/score/score.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "khive/support/json_fields.hpp"
#include "khive/support/text.hpp"

namespace khive {

namespace {

constexpr ComputeUnit kAllUnits[] = {ComputeUnit::tc_bf16, ComputeUnit::tc_fp16, ComputeUnit::tc_tf32,
                                     ComputeUnit::tc_fp8,  ComputeUnit::tc_int8, ComputeUnit::fp32,
                                     ComputeUnit::fp64};

bool positive(double x) { return std::isfinite(x) && x > 0; }

// Dense datasheet peaks shared by the H100 SXM and the H200 SXM (same GH100 die and clocks).
std::map<ComputeUnit, double> hopper_sxm_peaks() {
  return {
      {ComputeUnit::tc_bf16, 989.4e12},  {ComputeUnit::tc_fp16, 989.4e12},
      {ComputeUnit::tc_tf32, 494.7e12},  {ComputeUnit::tc_fp8, 1978.9e12},
      {ComputeUnit::tc_int8, 1978.9e12}, {ComputeUnit::fp32, 66.9e12},  // non-tensor (CUDA cores)
      {ComputeUnit::fp64, 66.9e12},                                     // tensor-core FP64
  };
}

std::string units_list() {
  std::string s;
  for (ComputeUnit u : kAllUnits) {
    if (!s.empty()) s += ", ";
    s += compute_unit_name(u);
  }
  return s;
}

using Fields = JsonFields;

double read_rate(const Fields& r, const nlohmann::json& j, const std::string& field) {
  if (!j.is_number() || !positive(j.get<double>())) r.fail(field, "a positive number", r.got(j));
  return j.get<double>();
}

std::map<ComputeUnit, double> read_rates(const Fields& r, const nlohmann::json& root, const char* key) {
  std::map<ComputeUnit, double> out;
  auto it = root.find(key);
  if (it == root.end()) return out;
  if (!it->is_object()) r.fail(key, "an object of unit -> FLOP/s", r.got(*it));
  for (const auto& [name, value] : it->items()) {
    std::string field = std::string(key) + "." + name;
    std::optional<ComputeUnit> u = parse_compute_unit(name);
    if (!u) r.fail(field, "a compute unit (" + units_list() + ")");
    out[*u] = read_rate(r, value, field);
  }
  return out;
}

nlohmann::json rates_to_json(const std::map<ComputeUnit, double>& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [u, v] : m) j[std::string(compute_unit_name(u))] = v;
  return j;
}

}  // namespace

double HardwareProfile::flops_for(ComputeUnit u, bool measured) const {
  if (measured) {
    auto it = measured_flops.find(u);
    if (it != measured_flops.end() && positive(it->second)) return it->second;
  }
  auto it = peak_flops.find(u);
  return it != peak_flops.end() && positive(it->second) ? it->second : 0.0;
}

double HardwareProfile::bandwidth(bool measured) const {
  if (measured && positive(measured_bandwidth)) return measured_bandwidth;
  return positive(peak_bandwidth) ? peak_bandwidth : 0.0;
}

std::optional<HardwareProfile> builtin_profile(const std::string& device_name) {
  const std::string n = lower(device_name);
  HardwareProfile h;
  h.name = device_name;
  h.peak_flops = hopper_sxm_peaks();
  if (n.find("h200") != std::string::npos) {
    h.peak_bandwidth = 4.8e12;
    // Measured on the lent H200 (2026-11, docs/results/2026-11-30-h200): D2D copy counting read + write, and the best
    // library rate measured per unit. Only units with a library ceiling: bf16 (cuBLAS/CUTLASS ~790), fp32 (cuBLAS SIMT
    // ~51), tf32 (357). fp16's 655 TFLOP/s was PyTorch's, not a ceiling, so fp16 (like fp8, int8, fp64) falls back to
    // the datasheet.
    h.measured_bandwidth = 4.25e12;
    h.measured_flops = {{ComputeUnit::tc_bf16, 790e12}, {ComputeUnit::fp32, 51e12}, {ComputeUnit::tc_tf32, 357e12}};
    h.source =
        "builtin: NVIDIA H200 SXM datasheet (dense peaks, 4.8 TB/s) + measurements on the lent "
        "H200, 2026-11 (copy 4.25 TB/s; cuBLAS/CUTLASS bf16 790, tf32 357, fp32 SIMT 51 TFLOP/s)";
    return h;
  }
  if (n.find("h100") != std::string::npos) {
    h.peak_bandwidth = 3.35e12;
    h.source = "builtin: NVIDIA H100 SXM datasheet (dense peaks, 3.35 TB/s); no measurements";
    return h;
  }
  return std::nullopt;
}

std::string profile_to_json(const HardwareProfile& p) {
  nlohmann::json j;
  j["name"] = p.name;
  j["source"] = p.source;
  j["peak_flops"] = rates_to_json(p.peak_flops);
  j["peak_bandwidth"] = p.peak_bandwidth;
  j["measured_flops"] = rates_to_json(p.measured_flops);
  j["measured_bandwidth"] = p.measured_bandwidth;
  return j.dump(2) + "\n";
}

HardwareProfile load_profile(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TaskFormatError(file, "(file)", "a readable hardware profile");
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw TaskFormatError(file, "(file)", "valid JSON", e.what());
  }
  const Fields r(file, "", throw_task_format_error, literal_json<nlohmann::json>);  // errors show values as JSON text
  if (!root.is_object()) r.fail("(root)", "an object");

  HardwareProfile p;
  const auto* name = Fields::find(root, "name");
  if (!name || !name->is_string() || name->get<std::string>().empty()) r.fail("name", "a non-empty string");
  p.name = name->get<std::string>();
  if (auto s = root.find("source"); s != root.end()) p.source = r.string(*s, "source", false);
  p.peak_flops = read_rates(r, root, "peak_flops");
  auto pb = root.find("peak_bandwidth");
  if (pb == root.end()) r.fail("peak_bandwidth", "a positive number (bytes/s)");
  p.peak_bandwidth = read_rate(r, *pb, "peak_bandwidth");
  p.measured_flops = read_rates(r, root, "measured_flops");
  if (auto mb = root.find("measured_bandwidth"); mb != root.end()) {
    // 0 = not measured (what profile_to_json writes for a profile without a measurement).
    if (!mb->is_number() || !std::isfinite(mb->get<double>()) || mb->get<double>() < 0)
      r.fail("measured_bandwidth", "a non-negative number (bytes/s; 0 = not measured)", r.got(*mb));
    p.measured_bandwidth = mb->get<double>();
  }
  return p;
}

void save_profile(const HardwareProfile& p, const std::filesystem::path& path) {
  // Write a sibling temporary and rename it over the target, so a reader never sees half a profile.
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(tmp.string() + ": cannot open for writing");
    out << profile_to_json(p);
    out.flush();
    if (!out) throw std::runtime_error(tmp.string() + ": write failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error(path.string() + ": cannot write hardware profile");
  }
}

double sol_rate(const HardwareProfile& h, ComputeUnit unit, bool measured) {
  double rate = h.flops_for(unit, measured);
  if (unit == ComputeUnit::fp32) rate = std::max(rate, h.flops_for(ComputeUnit::tc_tf32, measured) / 3.0);
  return rate;
}

namespace {
double roofline_seconds(const WorkloadCost& c, double rate, double bw) {
  const double flops = std::isfinite(c.flops) && c.flops > 0 ? c.flops : 0.0;
  const double bytes = std::isfinite(c.bytes) && c.bytes > 0 ? c.bytes : 0.0;
  if (flops > 0 && rate <= 0) return 0;
  if (bytes > 0 && bw <= 0) return 0;
  const double t_compute = flops > 0 ? flops / rate : 0.0;
  const double t_memory = bytes > 0 ? bytes / bw : 0.0;
  return std::max(t_compute, t_memory);
}
}  // namespace

double sol_seconds(const WorkloadCost& c, ComputeUnit unit, const HardwareProfile& h, bool measured) {
  return roofline_seconds(c, sol_rate(h, unit, measured), h.bandwidth(measured));
}

double floor_seconds(const WorkloadCost& c, const HardwareProfile& h) {
  double rate = 0;
  for (const auto& [unit, r] : h.peak_flops) rate = std::max(rate, h.flops_for(unit, false));
  return roofline_seconds(c, rate, h.bandwidth(false));
}

double sol_seconds(const WorkloadCost& c, const HardwareProfile& h, bool measured) {
  return sol_seconds(c, CostModel{}.unit, h, measured);
}

double sol_seconds(const Task& t, const std::map<std::string, int64_t>& axes, const HardwareProfile& h, bool measured) {
  return sol_seconds(workload_cost(t, axes), t.cost.unit, h, measured);
}

double score_t_sol(const WorkloadCost& c, ComputeUnit unit, const HardwareProfile& h) {
  return sol_seconds(c, unit, h, false);
}

double score_t_sol(const Task& t, const std::map<std::string, int64_t>& axes, const HardwareProfile& h) {
  return sol_seconds(t, axes, h, false);
}

std::optional<double> calibrated_fraction(double t_kernel, const WorkloadCost& c, ComputeUnit unit,
                                          const HardwareProfile& h) {
  const double t = sol_seconds(c, unit, h, true);
  if (!positive(t_kernel) || !positive(t)) return std::nullopt;
  return t / t_kernel;
}

std::optional<double> sol_score(double t_kernel, double t_baseline, double t_sol) {
  if (!positive(t_kernel) || !positive(t_baseline) || !positive(t_sol)) return std::nullopt;
  if (t_baseline <= t_sol) return std::nullopt;
  const double dk = std::max(0.0, t_kernel - t_sol);  // a kernel under T_sol counts as at SOL
  const double db = t_baseline - t_sol;
  return std::clamp(db / (dk + db), 0.0, 1.0);
}

std::optional<double> task_score(const std::vector<WorkloadScoreInput>& ws) {
  for (const auto& w : ws)
    if (!w.passed) return 0.0;
  double sum = 0, wsum = 0;
  for (const auto& w : ws) {
    if (!positive(w.weight) || !w.t_baseline) continue;
    std::optional<double> s = sol_score(w.t_kernel, *w.t_baseline, w.t_sol);
    if (!s) continue;
    sum += w.weight * *s;
    wsum += w.weight;
  }
  if (wsum <= 0) return std::nullopt;
  return sum / wsum;
}

}  // namespace khive
