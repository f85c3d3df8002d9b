// Solutions in and out (issue 14): the Solution JSON khive writes, importing Solutions as candidates (multi-file
// sources amalgamated; Python and torch-binding entries refused), the torch binding, the KernelBench ModelNew,
// and the builder's handling of a candidate with a local header.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "khive/compile/amalgamate.hpp"
#include "khive/compile/builder.hpp"
#include "khive/interop/binding.hpp"
#include "khive/interop/modelnew.hpp"
#include "khive/interop/solution.hpp"
#include "khive/support/subprocess.hpp"

namespace khive {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

struct Dir {
  fs::path root;
  Dir() {
    std::string tmpl = (fs::temp_directory_path() / "khive-solution-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    root = tmpl;
  }
  ~Dir() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  void write(const fs::path& rel, const std::string& text) const {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel, std::ios::binary) << text;
  }
};

// source written to d/rel and built for t on the CPU, with the test's own cache.
BuildResult build_cpu(const Dir& d, const Task& t, const std::string& rel, const std::string& source) {
  d.write(rel, source);
  BuildOptions o;
  o.cache_dir = d.root / "cache";
  return build_candidate(t, d.root / rel, o);
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// y[B, D] = scale * x[B, D] + b[D]; a KernelBench-style source block names the model parameter behind b.
Task axpy_task(const Dir& d, bool kernelbench = false) {
  json def = json::parse(R"({"name": "axpy", "op_type": "elementwise",
    "axes": {"B": {"type": "var"}, "D": {"type": "const", "value": 8}, "H": {"type": "expr", "expression": "B // 2"}},
    "inputs": {"x": {"shape": ["B", "D"], "dtype": "float32"}, "scale": {"shape": null, "dtype": "float32"},
               "b": {"shape": ["D"], "dtype": "float32"}},
    "outputs": {"y": {"shape": ["B", "D"], "dtype": "float32"}},
    "reference": "def run(x, scale, b):\n    return scale * x + b\n",
    "khive": {}})");
  if (kernelbench) {
    def["khive"]["source"] = {{"kind", "kernelbench"},
                              {"file", "kernelbench.py"},
                              {"forward_inputs", {"x", "scale"}},
                              {"parameters", {{"b", "lin.bias"}}},
                              {"init_inputs", json::array()}};
    d.write("axpy/kernelbench.py", "import torch\nclass Model(torch.nn.Module):\n    pass\n");
  }
  d.write("axpy/definition.json", def.dump(2));
  d.write("axpy/workload.jsonl",
          "{\"uuid\": \"w\", \"axes\": {\"B\": 4}, \"inputs\": {\"scale\": {\"type\": \"scalar\", \"value\": 2}}}\n");
  return load_task(d.root / "axpy");
}

const char* kKernel =
    "extern \"C\" void khive_launch(const float* x, float scale, const float* b, float* y, int64_t B) {\n"
    "  for (int64_t i = 0; i < B; ++i)\n    for (int64_t j = 0; j < 8; ++j) y[i * 8 + j] = scale * x[i * 8 + j] + "
    "b[j];\n}\n";

// import_solution's refusal message for s, or "(imported)" when it is accepted.
std::string refusal(const json& s, const Task& t, Backend b) {
  try {
    import_solution(s, t, b);
  } catch (const SolutionError& e) {
    return e.what();
  }
  return "(imported)";
}

TEST(SolutionOut, SolExecBenchSchema) {
  Dir d;
  Task t = axpy_task(d);
  SolutionMeta m;
  m.name = "axpy_khive_c0001";
  m.description = "leader";
  auto s = solution_json(t, Backend::cuda, kKernel, m, SolutionFormat::sol_execbench);
  EXPECT_EQ(s["name"], "axpy_khive_c0001");
  EXPECT_EQ(s["definition"], "axpy");
  EXPECT_EQ(s["author"], "khive");
  EXPECT_EQ(s["spec"]["languages"], json::array({"cuda_cpp"}));
  EXPECT_EQ(s["spec"]["entry_point"], "binding.cu::run");
  EXPECT_EQ(s["spec"]["binding"], "torch");
  EXPECT_TRUE(s["spec"]["destination_passing_style"].get<bool>());
  EXPECT_TRUE(s["spec"]["compile_options"].contains("cuda_cflags"));
  ASSERT_EQ(s["sources"].size(), 3u);
  EXPECT_EQ(s["sources"][0]["path"], "khive_prelude.h");
  EXPECT_TRUE(has(s["sources"][0]["content"], launch_signature(t, Backend::cuda)));
  EXPECT_EQ(s["sources"][1]["path"], "kernel.cu");
  EXPECT_TRUE(has(s["sources"][1]["content"], "#include \"khive_prelude.h\"\nextern \"C\" void khive_launch"));
  std::string binding = s["sources"][2]["content"];
  EXPECT_TRUE(has(binding, "void run(torch::Tensor x, double scale, torch::Tensor b, torch::Tensor y)")) << binding;
  EXPECT_TRUE(has(binding, "const int64_t B = x.size(0);")) << binding;
  EXPECT_TRUE(has(binding, "TORCH_CHECK(y.scalar_type() == at::kFloat")) << binding;
  EXPECT_TRUE(has(binding, "at::cuda::getCurrentCUDAStream()")) << binding;
  EXPECT_TRUE(has(binding, "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)")) << binding;
  EXPECT_FALSE(has(binding, "x.size(0) == H")) << "an expr axis is not checked (its expression is Python)";
}

TEST(SolutionOut, FlashInferSchema) {
  Dir d;
  Task t = axpy_task(d);
  SolutionMeta m;
  m.name = "n";
  m.target_hardware = "NVIDIA_H200";
  auto s = solution_json(t, Backend::cuda, kKernel, m, SolutionFormat::flashinfer_bench);
  EXPECT_EQ(s["spec"]["language"], "cuda");
  EXPECT_EQ(s["spec"]["target_hardware"], json::array({"NVIDIA_H200"}));
  EXPECT_FALSE(s["spec"].contains("languages"));
}

TEST(SolutionIn, OwnExportRoundTripsAndBuilds) {
  Dir d;
  Task t = axpy_task(d);
  auto s =
      solution_json(t, Backend::cpu, kKernel, SolutionMeta{"x", "khive", "", "LOCAL"}, SolutionFormat::sol_execbench);
  ImportedSolution c = import_solution(s, t, Backend::cpu);
  EXPECT_EQ(c.ext, ".cpp");
  EXPECT_TRUE(has(c.source, "extern \"C\" void khive_launch(const float* x, float scale"));
  EXPECT_FALSE(has(c.source, "torch")) << c.source;
  BuildResult r = build_cpu(d, t, "cand/imported.cpp", c.source);
  EXPECT_TRUE(r.ok) << r.log;
}

TEST(SolutionIn, MultiFileWithAnotherEntryName) {
  Dir d;
  Task t = axpy_task(d);
  json s = {
      {"name", "multi"},
      {"definition", "axpy"},
      {"author", "someone"},
      {"spec", {{"languages", {"cutlass"}}, {"target_hardware", {"LOCAL"}}, {"entry_point", "main.cpp::axpy_entry"}}},
      {"sources",
       {{{"path", "kernel.h"},
         {"content",
          "#pragma once\n#include <cstdint>\nvoid axpy_rows(const float*, float, const float*, float*, int64_t);\n"}},
        {{"path", "kernel.cpp"},
         {"content",
          "#include \"kernel.h\"\nvoid axpy_rows(const float* x, float s, const float* b, float* y, int64_t B) {\n"
          "  for (int64_t i = 0; i < B * 8; ++i) y[i] = s * x[i] + b[i % 8];\n}\n"}},
        {{"path", "main.cpp"},
         {"content",
          "#include \"kernel.h\"\nvoid axpy_entry(const float* x, float s, const float* b, float* y, int64_t B) {\n"
          "  axpy_rows(x, s, b, y, B);\n}\n"}}}}};
  ImportedSolution c = import_solution(s, t, Backend::cpu);
  EXPECT_TRUE(has(c.source, "#line 1 \"kernel.h\"")) << c.source;
  EXPECT_TRUE(has(c.source, "axpy_entry(x, scale, b, y, B);")) << c.source;
  BuildResult r = build_cpu(d, t, "cand/multi.cpp", c.source);
  EXPECT_TRUE(r.ok) << r.log << "\n" << c.source;
}

TEST(SolutionIn, RefusalsNameTheField) {
  Dir d;
  Task t = axpy_task(d);
  auto why = [&](const json& s) { return refusal(s, t, Backend::cuda); };
  json py = {{"name", "p"},
             {"definition", "axpy"},
             {"spec", {{"languages", {"triton"}}, {"entry_point", "k.py::run"}}},
             {"sources", {{{"path", "k.py"}, {"content", "def run(): pass"}}}}};
  EXPECT_TRUE(has(why(py), "spec.languages: expected a C++/CUDA language")) << why(py);
  json torch = {
      {"name", "t"},
      {"definition", "axpy"},
      {"spec", {{"languages", {"cuda_cpp"}}, {"entry_point", "main.cpp::run"}}},
      {"sources",
       {{{"path", "main.cpp"}, {"content", "#include <torch/extension.h>\nvoid run(torch::Tensor x) {}\n"}}}}};
  EXPECT_TRUE(has(why(torch),
                  "sources[0] (main.cpp): expected a kernel whose entry takes raw pointers, got a torch "
                  "extension"))
      << why(torch);
  json other = py;
  other["definition"] = "gemm";
  EXPECT_TRUE(has(why(other), "definition: expected \"axpy\"")) << why(other);
  json escape = torch;
  escape["sources"][0]["path"] = "../x.cu";
  EXPECT_TRUE(has(why(escape), "sources[0].path: expected a relative path without \"..\"")) << why(escape);
  json no_entry = torch;
  no_entry["spec"]["entry_point"] = "main.cpp";
  EXPECT_TRUE(has(why(no_entry), "spec.entry_point: expected \"<file>::<function>\"")) << why(no_entry);
}

// A Solution whose entry returns its output (destination_passing_style false), one source file.
json returning(const std::string& ret, const std::string& body,
               const std::string& params = "const float* x, float scale, const float* b, int64_t B") {
  return {
      {"name", "ret"},
      {"definition", "axpy"},
      {"spec",
       {{"language", "cpp"},
        {"entry_point", "kernel.cpp::run"},
        {"destination_passing_style", false},
        {"binding", "torch"}}},
      {"sources",
       {{{"path", "kernel.cpp"},
         {"content", "#include <cstdint>\n#include <vector>\n" + ret + " run(" + params + ") {\n" + body + "}\n"}}}}};
}

// Calls the built candidate's khive_entry on x[4, 8] = i, scale 2, b[j] = j; returns y.
std::vector<float> call_built(const fs::path& so) {
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw std::runtime_error(dlerror());
  auto entry = reinterpret_cast<void (*)(void* const*, void*)>(dlsym(h, "khive_entry"));
  if (!entry) throw std::runtime_error("no khive_entry");
  std::vector<float> x(32), b(8), y(32, -1.0f);
  for (int i = 0; i < 32; ++i) x[i] = static_cast<float>(i);
  for (int j = 0; j < 8; ++j) b[j] = static_cast<float>(j);
  float scale = 2.0f;
  int64_t B = 4;
  void* args[] = {x.data(), &scale, b.data(), y.data(), &B};
  entry(args, nullptr);
  return y;
}

TEST(SolutionIn, ValueReturningPointerWrappedBuiltAndCopied) {
  Dir d;
  Task t = axpy_task(d);
  json s = returning("const float*",
                     "  static float out[1 << 12];\n  for (int64_t i = 0; i < B * 8; ++i) out[i] = scale * x[i] + "
                     "b[i % 8];\n  return out;\n");
  ImportedSolution c = import_solution(s, t, Backend::cpu);
  EXPECT_TRUE(has(c.source, "auto khive_r = run(x, scale, b, B);")) << c.source;
  EXPECT_TRUE(has(c.source, "const std::size_t khive_n = static_cast<std::size_t>(B) * static_cast<std::size_t>(8);"))
      << c.source;
  EXPECT_TRUE(has(c.source, "std::memcpy(y, khive_p, khive_n * sizeof(float));")) << c.source;
  EXPECT_TRUE(has(c.note, "one extra write and one extra read of each output: y (B x D x sizeof(float))")) << c.note;
  EXPECT_TRUE(has(c.note, "memcpy")) << c.note;
  BuildResult r = build_cpu(d, t, "cand/ret.cpp", c.source);
  ASSERT_TRUE(r.ok) << r.log << "\n" << c.source;
  std::vector<float> y = call_built(r.library);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], 2.0f * i + (i % 8)) << i;
}

// An output sized by an expr axis: its element count is the task's own arithmetic in C++ (`//` floors as in Python);
// an operator C++ is not given is refused naming the output's shape and the axis.
TEST(SolutionIn, ValueReturningOutputSizedByAnExprAxis) {
  Dir d;
  auto half_task = [&](const std::string& expr) {
    json def = json::parse(R"({"name": "half", "op_type": "elementwise",
      "axes": {"B": {"type": "var"}, "D": {"type": "const", "value": 8}},
      "inputs": {"x": {"shape": ["B", "D"], "dtype": "float32"}},
      "outputs": {"y": {"shape": ["H", "D"], "dtype": "float32"}},
      "reference": "def run(x):\n    return x[: x.shape[0] // 2]\n", "khive": {}})");
    def["axes"]["H"] = {{"type", "expr"}, {"expression", expr}};
    d.write("half/definition.json", def.dump(2));
    d.write("half/workload.jsonl", "{\"uuid\": \"w\", \"axes\": {\"B\": 4}}\n");
    return load_task(d.root / "half");
  };
  json s = returning("float*", "  return const_cast<float*>(x);\n", "const float* x, int64_t B");
  s["definition"] = "half";
  ImportedSolution c = import_solution(s, half_task("B // 2"), Backend::cpu);
  EXPECT_TRUE(has(c.source, "const std::size_t khive_n = static_cast<std::size_t>((")) << c.source;
  EXPECT_TRUE(build_cpu(d, half_task("B // 2"), "cand/half.cpp", c.source).ok) << c.source;
  for (const char* bad : {"B ** 2", "B % 3", "B / 2"})
    EXPECT_TRUE(has(refusal(s, half_task(bad), Backend::cpu),
                    "outputs.y.shape: expected a size khive can compute in C++ (+ - * // and parentheses), got the "
                    "axis H = \"" +
                        std::string(bad) + "\""))
        << bad << ": " << refusal(s, half_task(bad), Backend::cpu);
}

TEST(SolutionIn, ValueReturningVectorAndTuple) {
  Dir d;
  Task t = axpy_task(d);
  json v = returning("std::vector<float>",
                     "  std::vector<float> out(B * 8);\n  for (int64_t i = 0; i < B * 8; ++i) out[i] = scale * x[i] + "
                     "b[i % 8];\n  return out;\n");
  ImportedSolution c = import_solution(v, t, Backend::cpu);
  EXPECT_TRUE(has(c.source, "if (khive_v.size() != khive_n)")) << c.source;
  BuildResult r = build_cpu(d, t, "cand/vec.cpp", c.source);
  ASSERT_TRUE(r.ok) << r.log << "\n" << c.source;
  std::vector<float> y = call_built(r.library);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], 2.0f * i + (i % 8)) << i;
  // One output in a std::tuple: taken with std::get<0>.
  json tup = returning("std::tuple<float*>", "  static float out[1 << 12];\n  out[0] = x[0];\n  return {out};\n");
  tup["sources"][0]["content"] = "#include <tuple>\n" + tup["sources"][0]["content"].get<std::string>();
  ImportedSolution ct = import_solution(tup, t, Backend::cpu);
  EXPECT_TRUE(has(ct.source, "const float* khive_p = std::get<0>(khive_r);")) << ct.source;
  // On CUDA the copy is a cudaMemcpyAsync on khive's stream, and the stream is the entry's last argument.
  json dev = returning("float*", "  return nullptr;\n",
                       "const float* x, float scale, const float* b, int64_t B, cudaStream_t stream");
  dev["spec"]["language"] = "cuda";
  dev["spec"]["entry_point"] = "kernel.cu::run";
  dev["sources"][0]["path"] = "kernel.cu";
  ImportedSolution cd = import_solution(dev, t, Backend::cuda);
  EXPECT_TRUE(has(cd.source, "auto khive_r = run(x, scale, b, B, stream);")) << cd.source;
  EXPECT_TRUE(has(cd.source, "cudaMemcpyAsync(y, khive_p, khive_n * sizeof(float), cudaMemcpyDeviceToDevice, stream)"))
      << cd.source;
  EXPECT_TRUE(has(cd.note, "cudaMemcpyAsync on the given stream")) << cd.note;
}

// On CUDA the wrap compiles with nvcc (no GPU needed) and passes the symbol policy: cudaMemcpyAsync on khive's stream.
TEST(SolutionIn, ValueReturningCudaWrapBuilds) {
  if (find_program("nvcc").empty() && !fs::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "nvcc not found";
  Dir d;
  Task t = axpy_task(d);
  json dev = returning("float*",
                       "  static float* out = nullptr;\n  if (!out) cudaMalloc(&out, sizeof(float) * (1 << 20));\n"
                       "  axpy_kernel<<<(B * 8 + 255) / 256, 256, 0, stream>>>(x, scale, b, out, B * 8);\n"
                       "  return out;\n",
                       "const float* x, float scale, const float* b, int64_t B, cudaStream_t stream");
  dev["spec"]["language"] = "cuda";
  dev["spec"]["entry_point"] = "kernel.cu::run";
  dev["sources"][0]["path"] = "kernel.cu";
  dev["sources"][0]["content"] =
      "#include <cuda_runtime.h>\n__global__ void axpy_kernel(const float* x, float s, const float* b, float* y, "
      "int64_t n) {\n  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;\n  if (i < n) y[i] = s * x[i] + "
      "b[i % 8];\n}\n" +
      dev["sources"][0]["content"].get<std::string>();
  ImportedSolution c = import_solution(dev, t, Backend::cuda);
  d.write("cand/dev.cu", c.source);
  BuildOptions o;
  o.cache_dir = d.root / "cache";
  o.backend = Backend::cuda;
  o.cuda_arch = "-gencode arch=compute_90a,code=sm_90a";
  BuildResult r = build_candidate(t, d.root / "cand/dev.cu", o);
  EXPECT_TRUE(r.ok) << r.log << "\n" << c.source;
}

TEST(SolutionInDeathTest, ValueReturningWrongSizeAbortsWithTheReason) {
  Dir d;
  Task t = axpy_task(d);
  json v = returning("std::vector<float>", "  return std::vector<float>(3, x[0]);\n");
  ImportedSolution c = import_solution(v, t, Backend::cpu);
  BuildResult r = build_cpu(d, t, "cand/short.cpp", c.source);
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_DEATH(call_built(r.library),
               "khive: run returned 3 elements for output y, expected 32 \\(shape \\[B, D\\]\\)");
  json n = returning("float*", "  return nullptr;\n");
  ImportedSolution cn = import_solution(n, t, Backend::cpu);
  BuildResult rn = build_cpu(d, t, "cand/null.cpp", cn.source);
  ASSERT_TRUE(rn.ok) << rn.log;
  EXPECT_DEATH(call_built(rn.library), "khive: run returned a null pointer for output y");
}

TEST(SolutionIn, ValueReturningRefusalsNameTheFileAndField) {
  Dir d;
  Task t = axpy_task(d);
  auto why = [&](const json& s, Backend b = Backend::cpu) { return refusal(s, t, b); };
  // A torch extension returning its output (SOL-ExecBench's value-returning C++ form).
  json torch = returning("torch::Tensor", "  return x;\n", "torch::Tensor x, double scale, torch::Tensor b");
  torch["sources"][0]["content"] = "#include <torch/extension.h>\n" + torch["sources"][0]["content"].get<std::string>();
  EXPECT_TRUE(has(why(torch),
                  "sources[0] (kernel.cpp): expected a kernel whose entry takes raw pointers, got a torch "
                  "extension (torch::Tensor; spec.binding \"torch\", destination_passing_style false)"))
      << why(torch);
  // SOL-ExecBench's samples name the built module in the entry point: the source defining run is the entry file.
  torch["spec"]["entry_point"] = "benchmark_kernel::run";
  EXPECT_TRUE(has(why(torch), "sources[0] (kernel.cpp): expected a kernel whose entry takes raw pointers"))
      << why(torch);
  json module = returning("float*", "  return nullptr;\n");
  module["spec"]["entry_point"] = "benchmark_kernel::run";
  EXPECT_EQ(why(module), "(imported)");
  module["spec"]["entry_point"] = "benchmark_kernel::go";
  EXPECT_TRUE(has(why(module), "spec.entry_point: expected a file among sources, got \"benchmark_kernel\""))
      << why(module);
  json dbl = returning("double*", "  return nullptr;\n");
  EXPECT_TRUE(has(why(dbl),
                  "spec.entry_point kernel.cpp::run (kernel.cpp, destination_passing_style false) returns: "
                  "expected float elements (output \"y\" is float32), got \"double*\""))
      << why(dbl);
  json vd = returning("void", "");
  EXPECT_TRUE(has(why(vd), "returns \"void\": expected the outputs returned")) << why(vd);
  json scalar = returning("float", "  return 0;\n");
  EXPECT_TRUE(has(why(scalar), "expected T*, std::vector<T> (CPU) or a std::tuple / std::pair of them, got \"float\""))
      << why(scalar);
  json two = returning("std::pair<float*, float*>", "  return {nullptr, nullptr};\n");
  EXPECT_TRUE(has(why(two), "expected 1 value(s), one per output (1), got 2")) << why(two);
  json host = returning("std::vector<float>", "  return {};\n");
  EXPECT_TRUE(has(why(host, Backend::cuda), "expected a device pointer (T*) for the CUDA backend"))
      << why(host, Backend::cuda);
  json dps_flag = returning("float*", "  return nullptr;\n");
  dps_flag["spec"]["destination_passing_style"] = "no";
  EXPECT_TRUE(has(why(dps_flag), "spec.destination_passing_style: expected true or false, got \"no\""))
      << why(dps_flag);
}

TEST(SolutionIn, TvmFfiRefusedAtImport) {
  Dir d;
  Task t = axpy_task(d);
  auto why = [&](const json& s) { return refusal(s, t, Backend::cuda); };
  // FlashInfer-Bench's TVM-FFI form: the binding named, TensorView parameters.
  json s = {
      {"name", "fi"},
      {"definition", "axpy"},
      {"spec",
       {{"language", "cuda"},
        {"binding", "tvm-ffi"},
        {"entry_point", "kernel.cu::run"},
        {"destination_passing_style", true}}},
      {"sources",
       {{{"path", "kernel.cu"},
         {"content",
          "#include <tvm/ffi/container/tensor.h>\nvoid run(tvm::ffi::TensorView x, tvm::ffi::TensorView y) {}\n"}}}}};
  EXPECT_TRUE(has(why(s),
                  "spec.binding: expected \"torch\" or none, got \"tvm-ffi\": khive brings no TVM-FFI headers "
                  "or runtime"))
      << why(s);
  s["spec"].erase("binding");
  EXPECT_TRUE(has(why(s), "sources[0] (kernel.cu): expected no TVM-FFI (it uses tvm/ffi headers or tvm::ffi types"))
      << why(s);
  s["spec"]["binding"] = "pybind11";
  EXPECT_TRUE(has(why(s), "spec.binding: expected \"torch\" or none, got \"pybind11\"")) << why(s);
}

TEST(Amalgamate, SingleFileUnchangedAndLocalHeaderInlined) {
  Dir d;
  d.write("k/kernel.h", "#pragma once\nconstexpr int kTwo = 2;\n");
  d.write("k/kernel.cu", "#include <cstdio>\n#include \"kernel.h\"\n#include \"kernel.h\"\nint f() { return kTwo; }\n");
  d.write("k/alone.cu", "int g() { return 1; }\n");
  EXPECT_EQ(amalgamate_source(d.root / "k/alone.cu"), "int g() { return 1; }\n");
  std::string a = amalgamate_source(d.root / "k/kernel.cu");
  EXPECT_TRUE(
      has(a, "#include <cstdio>\n#line 1 \"kernel.h\"\n\nconstexpr int kTwo = 2;\n#line 3 \"kernel.cu\"\n\nint f()"))
      << a;
}

TEST(Amalgamate, BuilderBuildsACandidateWithALocalHeader) {
  Dir d;
  Task t = axpy_task(d);
  d.write("k/axpy.h", "#pragma once\ninline float axpy1(float s, float x, float b) { return s * x + b; }\n");
  d.write("k/kernel.cpp",
          "#include \"axpy.h\"\nextern \"C\" void khive_launch(const float* x, float s, const float* b, float* y, "
          "int64_t B) {\n"
          "  for (int64_t i = 0; i < B * 8; ++i) y[i] = axpy1(s, x[i], b[i % 8]);\n}\n");
  BuildOptions o;
  o.cache_dir = d.root / "cache";
  BuildResult r = build_candidate(t, d.root / "k/kernel.cpp", o);
  EXPECT_TRUE(r.ok) << r.log;
  // The header is part of the key: changing it gives another build.
  d.write("k/axpy.h", "#pragma once\ninline float axpy1(float s, float x, float b) { return s * x + b + 0.0f; }\n");
  BuildResult r2 = build_candidate(t, d.root / "k/kernel.cpp", o);
  EXPECT_TRUE(r2.ok) << r2.log;
  EXPECT_NE(r.key, r2.key);
}

TEST(ModelNew, KernelBenchFile) {
  Dir d;
  Task t = axpy_task(d, true);
  std::string py = kernelbench_modelnew(t, kKernel, "c0003");
  EXPECT_TRUE(has(py, "class Model(torch.nn.Module)")) << "the problem verbatim";
  EXPECT_TRUE(has(py, "class ModelNew(Model):"));
  EXPECT_TRUE(has(py, "for x in list(inputs) + [named[\"lin.bias\"], ]")) << py;
  EXPECT_TRUE(has(py, "B = args[0].shape[0]")) << py;
  EXPECT_TRUE(has(py, "H = B // 2")) << py;
  EXPECT_TRUE(has(py, "torch.empty((B, D, ), dtype=torch.float32, device=device)")) << py;
  EXPECT_TRUE(has(py, "load_inline(name=\"khive_")) << py;
  EXPECT_TRUE(has(py, "cuda_sources=_KHIVE_CUDA")) << py;
  // A CPU kernel: everything in the C++ source, built with OpenMP as khive builds it (issue 24: a CPU run writes a
  // ModelNew too; tested end to end with load_inline in docs/results/2026-12-03-cpu).
  std::string cpu = kernelbench_modelnew(t, kKernel, "c0003", Backend::cpu);
  EXPECT_FALSE(has(cpu, "cuda_sources")) << cpu;
  EXPECT_FALSE(has(cpu, "_KHIVE_CUDA")) << cpu;
  EXPECT_TRUE(has(cpu, "extra_cflags=[\"-O3\", \"-march=native\", \"-fopenmp\"]")) << cpu;
  EXPECT_TRUE(has(cpu, "class ModelNew(Model):"));
  Task plain = axpy_task(d);
  EXPECT_THROW(kernelbench_modelnew(plain, kKernel, "c1"), TaskFormatError);
}

}  // namespace
}  // namespace khive
