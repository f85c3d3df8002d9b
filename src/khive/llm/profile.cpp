// Delayed profiling and memcheck as jobs of their own: build the kernel, build (once) a small driver that
// loads it and calls it once on one workload, and run the driver under `ncu --set basic` or
// `compute-sanitizer --tool memcheck`. The hive decides when the job runs on a device slot (never while
// another candidate is being timed there); this function only does the work.
#include <algorithm>
#include <chrono>
#include <sstream>

#include <fmt/format.h>

#include "khive/compile/builder.hpp"
#include "khive/llm/llm_agent.hpp"
#include "khive/llm/profile_parse.hpp"
#include "khive/support/files.hpp"
#include "khive/support/hash.hpp"
#include "khive/support/subprocess.hpp"

namespace khive {

namespace {

// The driver: loads the candidate's library, makes one buffer per tensor (inputs filled with a
// deterministic non-zero pattern, outputs zeroed), calls khive_entry once, and reports a CUDA error.
// Arguments after the library, in signature order: in:BYTES:KIND | out:BYTES | scalar:KIND:VALUE | axis:VALUE.
const char* kDriver = R"(#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <dlfcn.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
static double val(size_t i) { return 0.5 + 0.25 * std::sin(double(i) * 0.37); }
static void fill(std::vector<unsigned char>& h, const std::string& kind) {
  size_t n;
  if (kind == "f32") { n = h.size() / 4; for (size_t i = 0; i < n; ++i) { float v = float(val(i)); std::memcpy(&h[4 * i], &v, 4); } }
  else if (kind == "f64") { n = h.size() / 8; for (size_t i = 0; i < n; ++i) { double v = val(i); std::memcpy(&h[8 * i], &v, 8); } }
  else if (kind == "f16") { n = h.size() / 2; for (size_t i = 0; i < n; ++i) { __half v = __float2half(float(val(i))); std::memcpy(&h[2 * i], &v, 2); } }
  else if (kind == "bf16") { n = h.size() / 2; for (size_t i = 0; i < n; ++i) { __nv_bfloat16 v = __float2bfloat16(float(val(i))); std::memcpy(&h[2 * i], &v, 2); } }
  else if (kind == "i64") { n = h.size() / 8; for (size_t i = 0; i < n; ++i) { int64_t v = int64_t(i % 7); std::memcpy(&h[8 * i], &v, 8); } }
  else if (kind == "i32") { n = h.size() / 4; for (size_t i = 0; i < n; ++i) { int32_t v = int32_t(i % 7); std::memcpy(&h[4 * i], &v, 4); } }
  else if (kind == "i16") { n = h.size() / 2; for (size_t i = 0; i < n; ++i) { int16_t v = int16_t(i % 7); std::memcpy(&h[2 * i], &v, 2); } }
  else if (kind == "bool") { for (size_t i = 0; i < h.size(); ++i) h[i] = (unsigned char)(i & 1); }
  else if (kind == "fp8") { for (size_t i = 0; i < h.size(); ++i) h[i] = 0x38; }   // about 1.0 in e4m3
  else { for (size_t i = 0; i < h.size(); ++i) h[i] = (unsigned char)(i % 7); }
}
int main(int argc, char** argv) {
  if (argc < 2) { std::fprintf(stderr, "usage: driver LIB ARGS...\n"); return 2; }
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) { std::fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
  auto entry = reinterpret_cast<void (*)(void* const*, void*)>(dlsym(lib, "khive_entry"));
  if (!entry) { std::fprintf(stderr, "no khive_entry in %s\n", argv[1]); return 2; }
  std::vector<void*> args;
  std::vector<std::vector<unsigned char>> host;
  host.reserve(argc);
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto p1 = a.find(':'), p2 = a.find(':', p1 + 1);
    std::string k = a.substr(0, p1);
    if (k == "in" || k == "out") {
      size_t bytes = std::strtoull(a.substr(p1 + 1, p2 == std::string::npos ? std::string::npos : p2 - p1 - 1).c_str(), nullptr, 10);
      void* d = nullptr;
      if (cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess) { std::fprintf(stderr, "cudaMalloc %zu failed\n", bytes); return 3; }
      if (k == "in") {
        std::vector<unsigned char> h(bytes);
        fill(h, a.substr(p2 + 1));
        cudaMemcpy(d, h.data(), bytes, cudaMemcpyHostToDevice);
      } else {
        cudaMemset(d, 0, bytes ? bytes : 1);
      }
      args.push_back(d);
    } else if (k == "scalar") {
      std::string kind = a.substr(p1 + 1, p2 - p1 - 1);
      double v = std::strtod(a.substr(p2 + 1).c_str(), nullptr);
      host.emplace_back(16);
      auto& h = host.back();
      if (kind == "f32") { float f = float(v); std::memcpy(h.data(), &f, 4); }
      else if (kind == "f64") std::memcpy(h.data(), &v, 8);
      else if (kind == "f16") { __half f = __float2half(float(v)); std::memcpy(h.data(), &f, 2); }
      else if (kind == "bf16") { __nv_bfloat16 f = __float2bfloat16(float(v)); std::memcpy(h.data(), &f, 2); }
      else { int64_t x = int64_t(v); std::memcpy(h.data(), &x, 8); }   // little-endian: narrower ints read the low bytes
      args.push_back(h.data());
    } else if (k == "axis") {
      host.emplace_back(8);
      int64_t x = std::strtoll(a.substr(p1 + 1).c_str(), nullptr, 10);
      std::memcpy(host.back().data(), &x, 8);
      args.push_back(host.back().data());
    } else { std::fprintf(stderr, "bad argument %s\n", argv[i]); return 2; }
  }
  cudaStream_t s;
  cudaStreamCreate(&s);
  entry(args.data(), s);
  cudaError_t e = cudaStreamSynchronize(s);
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) { std::fprintf(stderr, "CUDA error: %s (%s)\n", cudaGetErrorName(e), cudaGetErrorString(e)); return 4; }
  std::printf("driver: one call done\n");
  return 0;
}
)";

std::string kind_of(DType t) {
  std::string n(dtype_name(t));
  if (n == "float32") return "f32";
  if (n == "float64") return "f64";
  if (n == "float16") return "f16";
  if (n == "bfloat16") return "bf16";
  if (n == "int64") return "i64";
  if (n == "int32") return "i32";
  if (n == "int16") return "i16";
  if (n == "bool") return "bool";
  if (n.rfind("float8", 0) == 0) return "fp8";
  return "i8";
}

// The workload to profile: the named one, else the perf workload with the most elements.
const Workload* pick_workload(const Task& t, const std::string& uuid) {
  const Workload* best = nullptr;
  double best_n = -1;
  for (auto& w : t.workloads) {
    if (!uuid.empty()) {
      if (w.uuid == uuid) return &w;
      continue;
    }
    if (!w.is_perf()) continue;
    auto ax = resolve_axes(t, w);
    double n = 0;
    for (auto& o : t.outputs) n += double(element_count(o, ax));
    for (auto& i : t.inputs) n += double(element_count(i, ax));
    if (n > best_n) {
      best_n = n;
      best = &w;
    }
  }
  return best;
}

}  // namespace

ProfileReport profile_kernel(const ProfileJob& job) {
  auto t0 = std::chrono::steady_clock::now();
  ProfileReport r;
  auto done = [&]() -> ProfileReport {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!job.out_dir.empty()) {
      std::filesystem::create_directories(job.out_dir);
      write_file_atomic(job.out_dir / "report.json", nlohmann::json{{"tool", job.tool},
                                                                    {"ran", r.ran},
                                                                    {"skipped", r.skipped},
                                                                    {"error", r.error},
                                                                    {"text", r.text},
                                                                    {"metrics", r.metrics},
                                                                    {"seconds", r.seconds}}
                                                         .dump(2));
    }
    return r;
  };
  if (!job.task) {
    r.error = "no task given";
    return done();
  }
  if (job.backend != Backend::cuda) {
    r.skipped = "the CPU backend has no Nsight Compute / compute-sanitizer";
    return done();
  }
  const std::string tool = job.tool == "memcheck" ? "compute-sanitizer" : "ncu";
  if (job.tool != "ncu" && job.tool != "memcheck") {
    r.error = "unknown profile tool '" + job.tool + "'";
    return done();
  }
  if (find_program(tool).empty()) {
    r.skipped = tool + " not found in PATH";
    return done();
  }
  if (find_program("nvcc").empty()) {
    r.skipped = "nvcc not found in PATH (needed for the profiling driver)";
    return done();
  }
  const Workload* w = pick_workload(*job.task, job.workload);
  if (!w) {
    r.error = job.workload.empty() ? "the task has no perf workload" : "no workload " + job.workload;
    return done();
  }

  std::filesystem::path dir = job.out_dir.empty() ? make_temp_dir(cache_root(), "profile") : job.out_dir;
  std::filesystem::create_directories(dir);
  auto src = dir / ("kernel." + (job.ext.empty() ? std::string("cu") : job.ext));
  write_file_atomic(src, job.source);
  BuildOptions bo;
  bo.backend = Backend::cuda;
  BuildResult b = build_candidate(*job.task, src, bo);
  if (!b.ok) {
    r.error = "the kernel does not build: " + b.summary();
    return done();
  }

  // The driver depends only on the toolchain: build it once per cache.
  std::filesystem::path ddir = cache_root() / "profile-driver" / sha256_hex(kDriver).substr(0, 16);
  std::filesystem::path driver = ddir / "driver";
  if (!std::filesystem::exists(driver)) {
    std::filesystem::create_directories(ddir);
    write_file_atomic(ddir / "driver.cu", kDriver);
    ProcessSpec ps;
    ps.argv = {"nvcc", "-O2", "-std=c++17", "-o", (ddir / "driver.tmp").string(), (ddir / "driver.cu").string(),
               "-ldl"};
    ps.timeout_s = 300;
    ProcessResult pr = run_process(ps);
    if (!pr.ok()) {
      r.error = "the profiling driver does not build: " + pr.describe() + " " + pr.err.substr(0, 600);
      return done();
    }
    std::filesystem::rename(ddir / "driver.tmp", driver);
  }

  std::vector<std::string> dargs = {driver.string(), b.library.string()};
  auto ax = resolve_axes(*job.task, *w);
  for (auto& i : job.task->inputs) {
    if (i.scalar) {
      double v = w->inputs.count(i.name) && w->inputs.at(i.name).kind == InputSource::Kind::scalar
                     ? w->inputs.at(i.name).value
                     : 1.0;
      dargs.push_back(fmt::format("scalar:{}:{}", kind_of(i.dtype), v));
    } else {
      dargs.push_back(
          fmt::format("in:{}:{}", int64_t(double(element_count(i, ax)) * dtype_size(i.dtype)), kind_of(i.dtype)));
    }
  }
  for (auto& o : job.task->outputs)
    dargs.push_back(fmt::format("out:{}", int64_t(double(element_count(o, ax)) * dtype_size(o.dtype))));
  for (auto& v : job.task->var_axes()) dargs.push_back(fmt::format("axis:{}", ax.at(v)));

  ProcessSpec ps;
  ps.timeout_s = job.timeout_s;
  if (job.tool == "ncu") {
    ps.argv = {"ncu", "--clock-control", "none", "--set", "basic", "--csv", "--page", "details", "--launch-count", "8"};
  } else {
    ps.argv = {"compute-sanitizer", "--tool", "memcheck", "--show-backtrace", "device", "--print-limit", "10"};
  }
  ps.argv.insert(ps.argv.end(), dargs.begin(), dargs.end());
  ProcessResult pr = run_process(ps);
  write_file_atomic(dir / (job.tool + ".out.txt"), pr.out + "\n--- stderr ---\n" + pr.err);
  if (pr.timed_out) {
    r.error = fmt::format("{} timed out after {:.0f} s", tool, job.timeout_s);
    return done();
  }
  r.ran = true;
  if (job.tool == "ncu") {
    auto parsed = llm::parse_ncu_csv(pr.out);
    r.metrics = parsed.metrics;
    r.text = parsed.text;
    if (parsed.text.empty()) {
      r.ran = false;
      r.error =
          fmt::format("ncu gave no metrics ({}): {}", pr.describe(), pr.err.substr(0, 600) + pr.out.substr(0, 400));
    }
  } else {
    r.text = llm::memcheck_excerpt(pr.out + pr.err, job.source);
  }
  return done();
}

}  // namespace khive
