// generate_unit and build_candidate on the CPU backend (g++), including the runner's view: dlopen the
// library and call khive_entry(args, stream).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <fstream>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <thread>

#include "khive/compile/builder.hpp"
#include "khive/support/files.hpp"

namespace khive {
namespace {

namespace fs = std::filesystem;

TensorSpec tensor(std::string name, DType t, std::vector<std::string> shape) {
  TensorSpec s;
  s.name = std::move(name);
  s.dtype = t;
  s.shape = std::move(shape);
  return s;
}
TensorSpec scalar(std::string name, DType t) {
  TensorSpec s;
  s.name = std::move(name);
  s.dtype = t;
  s.scalar = true;
  return s;
}
Axis var(std::string name) {
  Axis a;
  a.name = std::move(name);
  a.kind = Axis::Kind::var;
  return a;
}
Axis constant(std::string name, int64_t v) {
  Axis a;
  a.name = std::move(name);
  a.kind = Axis::Kind::constant;
  a.value = v;
  return a;
}

// y = alpha * x + bias (N var), the simplest task with a scalar.
Task axpb_task() {
  Task t;
  t.name = "axpb";
  t.axes = {var("N")};
  t.inputs = {tensor("x", DType::f32, {"N"}), scalar("alpha", DType::f32), scalar("bias", DType::f64)};
  t.outputs = {tensor("y", DType::f32, {"N"})};
  return t;
}

// Several dtypes, a constant axis between two var axes, an int and a bool scalar.
Task mixed_task() {
  Task t;
  t.name = "mixed";
  t.axes = {var("M"), constant("K", 64), var("N")};
  t.inputs = {tensor("a", DType::bf16, {"M", "K"}), tensor("b", DType::f16, {"K", "N"}),
              tensor("s", DType::f8e4m3, {"N"}), scalar("k", DType::i32), scalar("flag", DType::boolean)};
  t.outputs = {tensor("c", DType::bf16, {"M", "N"}), tensor("amax", DType::f32, {})};
  return t;
}

class Builder : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = make_temp_dir(fs::temp_directory_path(), "khive-build-test");
    opts_.cache_dir = root_ / "cache";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  fs::path write(const std::string& name, const std::string& text) {
    fs::path p = root_ / "src" / name;
    write_file_atomic(p, text);
    return p;
  }
  fs::path root_;
  BuildOptions opts_;
};

const char* kAxpb = R"(#include <cstdint>
extern "C" void khive_launch(const float* x, float alpha, double bias, float* y, int64_t N) {
  #pragma omp parallel for
  for (int64_t i = 0; i < N; ++i) y[i] = alpha * x[i] + static_cast<float>(bias);
}
)";

// ---- generate_unit -------------------------------------------------------------------------------------

TEST(GenerateUnit, CpuScalarsAndOrder) {
  std::string u = generate_unit(axpb_task(), Backend::cpu, "/work/cands/axpb.cpp");
  EXPECT_NE(u.find("#include <cstdint>\n#include <cstddef>\n"), std::string::npos);
  EXPECT_EQ(u.find("cuda_runtime"), std::string::npos);
  EXPECT_EQ(u.find("khive_bf16"), std::string::npos);  // only emitted when used
  EXPECT_NE(u.find("extern \"C\" void khive_launch(const float* x, float alpha, double bias, float* y, int64_t N);\n"),
            std::string::npos)
      << u;
  EXPECT_NE(u.find("#include \"/work/cands/axpb.cpp\"\n"), std::string::npos);
  EXPECT_NE(
      u.find(
          "extern \"C\" __attribute__((visibility(\"default\"))) void khive_entry(void* const* args, void* stream) {"),
      std::string::npos);
  EXPECT_NE(
      u.find("extern \"C\" __attribute__((visibility(\"default\"))) const char khive_abi[] = \"khive-entry-v1\";"),
      std::string::npos);
  // Argument unpacking, in signature order.
  auto at = [&](const std::string& s) {
    auto p = u.find(s);
    EXPECT_NE(p, std::string::npos) << s << "\n" << u;
    return p;
  };
  auto p0 = at("static_cast<const float*>(args[0])");
  auto p1 = at("*static_cast<const float*>(args[1])");
  auto p2 = at("*static_cast<const double*>(args[2])");
  auto p3 = at("static_cast<float*>(args[3])");
  auto p4 = at("*static_cast<const int64_t*>(args[4])");
  EXPECT_LT(p0, p1);
  EXPECT_LT(p1, p2);
  EXPECT_LT(p2, p3);
  EXPECT_LT(p3, p4);
  EXPECT_EQ(u.find("args[5]"), std::string::npos);
  EXPECT_EQ(u.find("cudaStream_t"), std::string::npos);
  // The declaration precedes the candidate, the shim follows it.
  EXPECT_LT(u.find("void khive_launch("), u.find("#include \"/work/cands/axpb.cpp\""));
  EXPECT_LT(u.find("#include \"/work/cands/axpb.cpp\""), u.find("khive_entry"));
}

TEST(GenerateUnit, CpuDtypesPrelude) {
  std::string u = generate_unit(mixed_task(), Backend::cpu, "/x/k.cpp");
  EXPECT_NE(u.find("struct khive_bf16 { uint16_t bits; };"), std::string::npos);
  EXPECT_NE(u.find("struct khive_f16 { uint16_t bits; };"), std::string::npos);
  EXPECT_NE(u.find("struct khive_fp8_e4m3 { uint8_t bits; };"), std::string::npos);
  EXPECT_EQ(u.find("struct khive_fp8_e5m2"), std::string::npos);  // not used by the task
  EXPECT_NE(u.find("inline float khive_bf16_to_float(khive_bf16 v)"), std::string::npos);
  EXPECT_NE(u.find("inline khive_bf16 khive_float_to_bf16(float f)"), std::string::npos);
  EXPECT_NE(u.find("inline khive_f16 khive_float_to_f16(float f)"), std::string::npos);
  EXPECT_NE(u.find("inline float khive_fp8_e4m3_to_float(khive_fp8_e4m3 v)"), std::string::npos);
  EXPECT_NE(u.find("extern \"C\" void khive_launch(const khive_bf16* a, const khive_f16* b, const khive_fp8_e4m3* s, "
                   "int32_t k, bool flag, khive_bf16* c, float* amax, int64_t M, int64_t N);"),
            std::string::npos)
      << u;
  EXPECT_NE(u.find("*static_cast<const int32_t*>(args[3])"), std::string::npos);
  EXPECT_NE(u.find("*static_cast<const bool*>(args[4])"), std::string::npos);
  EXPECT_NE(u.find("static_cast<khive_bf16*>(args[5])"), std::string::npos);
  EXPECT_NE(u.find("static_cast<float*>(args[6])"), std::string::npos);
  EXPECT_NE(u.find("*static_cast<const int64_t*>(args[7])  /* M */"), std::string::npos);
  EXPECT_NE(u.find("*static_cast<const int64_t*>(args[8])  /* N */"), std::string::npos);
}

TEST(GenerateUnit, CudaHeadersTypesAndStream) {
  Task t = mixed_task();
  t.inputs.push_back(tensor("e5", DType::f8e5m2, {"N"}));
  std::string u = generate_unit(t, Backend::cuda, "/x/k.cu");
  EXPECT_NE(u.find("#include <cuda_runtime.h>\n"), std::string::npos);
  EXPECT_NE(u.find("#include <cuda_fp16.h>\n"), std::string::npos);
  EXPECT_NE(u.find("#include <cuda_bf16.h>\n"), std::string::npos);
  EXPECT_NE(u.find("#include <cuda_fp8.h>\n"), std::string::npos);
  EXPECT_EQ(u.find("khive_bf16"), std::string::npos);  // CUDA uses the toolkit's types
  EXPECT_NE(
      u.find("extern \"C\" void khive_launch(const __nv_bfloat16* a, const __half* b, const __nv_fp8_e4m3* s, "
             "int32_t k, bool flag, const __nv_fp8_e5m2* e5, __nv_bfloat16* c, float* amax, int64_t M, int64_t N, "
             "cudaStream_t stream);"),
      std::string::npos)
      << u;
  EXPECT_NE(u.find("static_cast<const __nv_fp8_e5m2*>(args[5])"), std::string::npos);
  EXPECT_NE(u.find("static_cast<cudaStream_t>(stream)"), std::string::npos);
  EXPECT_EQ(u.find("(void)stream"), std::string::npos);

  Task f32 = axpb_task();
  std::string v = generate_unit(f32, Backend::cuda, "/x/k.cu");
  EXPECT_EQ(v.find("cuda_fp16.h"), std::string::npos);
  EXPECT_EQ(v.find("cuda_bf16.h"), std::string::npos);
  EXPECT_EQ(v.find("cuda_fp8.h"), std::string::npos);
}

TEST(GenerateUnit, RelativePathBecomesAbsolute) {
  std::string u = generate_unit(axpb_task(), Backend::cpu, "rel/k.cpp");
  EXPECT_NE(u.find("#include \"" + (fs::current_path() / "rel/k.cpp").string() + "\""), std::string::npos);
  EXPECT_THROW(generate_unit(axpb_task(), Backend::cpu, "/x/bad\"name.cpp"), std::invalid_argument);
}

TEST(BuildCommand, CpuAndCudaFlags) {
  Task t = axpb_task();
  BuildOptions o;
  o.extra_flags = {"-ffast-math"};
  auto c = build_command(t, o);
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(fs::path(c[0]).filename(), "g++");
  for (const char* f :
       {"-std=c++20", "-O3", "-march=native", "-fopenmp", "-fPIC", "-shared", "-fno-gnu-unique", "unit.cpp"})
    EXPECT_NE(std::find(c.begin(), c.end(), f), c.end()) << f;
  EXPECT_EQ(c.back(), "-ffast-math");

  o.backend = Backend::cuda;
  o.extra_flags.clear();
  o.cutlass_include = fs::path(KHIVE_SOURCE_DIR) / ".deps" / "cutlass";
  t.policy.libraries = {"cublasLt"};
  c = build_command(t, o);
  EXPECT_EQ(fs::path(c[0]).filename(), "nvcc");
  for (const char* f :
       {"-std=c++17", "-fPIC,-fno-gnu-unique", "--cudart", "shared", "-Xptxas", "-v", "--expt-relaxed-constexpr",
        "-lcublasLt", "-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1", "-lcuda", "unit.cu"})
    EXPECT_NE(std::find(c.begin(), c.end(), f), c.end()) << f;
  EXPECT_EQ(std::find(c.begin(), c.end(), "-lcublas"), c.end());
  if (!getenv("KHIVE_CUDA_ARCH")) {
    EXPECT_NE(std::find(c.begin(), c.end(), "-gencode=arch=compute_90a,code=sm_90a"), c.end());
  }
  if (fs::exists(o.cutlass_include / "include")) {
    EXPECT_NE(std::find(c.begin(), c.end(), "-I" + (o.cutlass_include / "include").string()), c.end());
  }
  o.cuda_arch = "-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90";
  c = build_command(t, o);
  EXPECT_NE(std::find(c.begin(), c.end(), "-gencode=arch=compute_80,code=sm_80"), c.end());
  EXPECT_NE(std::find(c.begin(), c.end(), "-gencode=arch=compute_90,code=sm_90"), c.end());
  o.cutlass_include = "/nonexistent/cutlass";
  c = build_command(t, o);
  for (const auto& a : c) EXPECT_EQ(a.rfind("-I/nonexistent", 0), std::string::npos);
}

TEST(Toolchain, IdentityIsStableAndDescriptive) {
  std::string a = toolchain_identity(Backend::cpu);
  EXPECT_EQ(a, toolchain_identity(Backend::cpu));
  EXPECT_NE(a.find("g++"), std::string::npos) << a;
  EXPECT_NE(a.find("-march="), std::string::npos) << a;
  EXPECT_EQ(a.find('\n'), std::string::npos);
}

// ---- build_candidate (CPU) --------------------------------------------------------------------------

TEST_F(Builder, BuildsCachesAndRunsThroughKhiveEntry) {
  Task t = axpb_task();
  fs::path src = write("axpb.cpp", kAxpb);
  BuildResult r = build_candidate(t, src, opts_);
  ASSERT_TRUE(r.ok) << r.summary() << "\n" << r.log;
  EXPECT_FALSE(r.cached);
  EXPECT_EQ(r.summary(), "ok");
  EXPECT_EQ(r.key.size(), 64u);
  EXPECT_GT(r.seconds, 0);
  EXPECT_TRUE(fs::is_regular_file(r.library));
  EXPECT_EQ(r.library, opts_.cache_dir / r.key.substr(0, 2) / r.key / "cand.so");
  EXPECT_TRUE(fs::is_regular_file(r.library.parent_path() / "meta.json"));
  EXPECT_TRUE(fs::is_regular_file(r.library.parent_path() / "build.log"));
  // No temp dirs left behind.
  for (auto& e : fs::directory_iterator(opts_.cache_dir / r.key.substr(0, 2)))
    EXPECT_EQ(e.path().filename(), r.key) << e.path();

  BuildResult again = build_candidate(t, src, opts_);
  ASSERT_TRUE(again.ok);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.library, r.library);
  EXPECT_EQ(again.key, r.key);
  EXPECT_EQ(again.seconds, 0);
  EXPECT_EQ(again.command, r.command);
  EXPECT_EQ(again.summary(), "ok (cached)");

  // The same source at another path hits the same entry, under another file name too (a run's c0007-label.cpp, a
  // warm start's or a speculative build's copy); a changed byte does not.
  fs::path elsewhere = root_ / "other" / "axpb.cpp";
  write_file_atomic(elsewhere, kAxpb);
  EXPECT_TRUE(build_candidate(t, elsewhere, opts_).cached);
  fs::path renamed = root_ / "run" / "c0007-simt_4x4.cpp";
  write_file_atomic(renamed, kAxpb);
  BuildResult by_name = build_candidate(t, renamed, opts_);
  EXPECT_TRUE(by_name.cached);
  EXPECT_EQ(by_name.key, r.key);
  write_file_atomic(elsewhere, std::string(kAxpb) + "\n");
  BuildResult changed = build_candidate(t, elsewhere, opts_);
  EXPECT_FALSE(changed.cached);
  EXPECT_NE(changed.key, r.key);
  // Extra flags are part of the key.
  BuildOptions o2 = opts_;
  o2.extra_flags = {"-fno-math-errno"};
  BuildResult flagged = build_candidate(t, src, o2);
  EXPECT_TRUE(flagged.ok);
  EXPECT_NE(flagged.key, r.key);

  // The runner's view.
  void* h = ::dlopen(r.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << ::dlerror();
  auto entry = reinterpret_cast<void (*)(void* const*, void*)>(::dlsym(h, "khive_entry"));
  auto abi = static_cast<const char*>(::dlsym(h, "khive_abi"));
  ASSERT_NE(entry, nullptr);
  ASSERT_NE(abi, nullptr);
  EXPECT_STREQ(abi, "khive-entry-v1");
  std::vector<float> x = {1, 2, 3, 4, 5}, y(5, NAN);
  float alpha = 2.0f;
  double bias = 0.5;
  int64_t n = 5;
  void* args[] = {x.data(), &alpha, &bias, y.data(), &n};
  entry(args, nullptr);
  for (int i = 0; i < 5; ++i) EXPECT_FLOAT_EQ(y[i], 2.0f * x[i] + 0.5f);
  // No dlclose: unloading libgomp while its worker threads idle crashes the process (the runner must not either).
}

// Two candidates in one process keep their own template statics. g++ exports a template's static data member as
// STB_GNU_UNIQUE unless told not to, and the dynamic linker then binds every library that defines it, RTLD_LOCAL or
// not, to the first one loaded: CUTLASS 2.x keeps "this kernel is configured" there, and a second GEMM library in
// one process took its slow fallback (builder.cpp says where). Each library counts its own calls here.
TEST_F(Builder, TwoLibrariesInOneProcessKeepTheirOwnTemplateStatics) {
  Task t = axpb_task();
  auto source = [](const char* tag) {
    return std::string(R"(#include <cstdint>
template <class T> struct Calls { static int n; };
template <class T> int Calls<T>::n = 0;
extern "C" int khive_test_calls() { return ++Calls<float>::n; }  // )") +
           tag + R"(
extern "C" void khive_launch(const float* x, float alpha, double bias, float* y, int64_t N) {
  for (int64_t i = 0; i < N; ++i) y[i] = alpha * x[i] + static_cast<float>(bias);
}
)";
  };
  BuildResult a = build_candidate(t, write("first.cpp", source("first")), opts_);
  BuildResult b = build_candidate(t, write("second.cpp", source("second")), opts_);
  ASSERT_TRUE(a.ok && b.ok) << a.log << b.log;
  ASSERT_NE(a.library, b.library);
  void* ha = ::dlopen(a.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  void* hb = ::dlopen(b.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(ha && hb) << ::dlerror();
  auto calls_a = reinterpret_cast<int (*)()>(::dlsym(ha, "khive_test_calls"));
  auto calls_b = reinterpret_cast<int (*)()>(::dlsym(hb, "khive_test_calls"));
  ASSERT_TRUE(calls_a && calls_b);
  EXPECT_EQ(calls_a(), 1);
  EXPECT_EQ(calls_a(), 2);
  EXPECT_EQ(calls_b(), 1) << "the second library counted on the first one's static";
  EXPECT_EQ(calls_a(), 3);
}

TEST_F(Builder, CompileErrorPointsAtTheCandidatesOwnLine) {
  Task t = axpb_task();
  fs::path src = write("broken.cpp", R"(#include <cstdint>
// a comment line
extern "C" void khive_launch(const float* x, float alpha, double bias, float* y, int64_t N) {
  for (int64_t i = 0; i < N; ++i)
    y[i] = alpha * x[i] + undeclared_thing;
}
)");
  BuildResult r = build_candidate(t, src, opts_);
  ASSERT_FALSE(r.ok);
  EXPECT_FALSE(r.cached);
  EXPECT_TRUE(r.library.empty());
  ASSERT_GE(r.error_count(), 1u) << r.log;
  const Diagnostic& d = r.diagnostics.front();
  EXPECT_EQ(d.severity, Diagnostic::Severity::error);
  EXPECT_EQ(d.tool, "g++");
  EXPECT_TRUE(d.in_candidate);
  EXPECT_EQ(d.file, "broken.cpp");
  EXPECT_EQ(d.line, 5);
  EXPECT_EQ(d.column, 27);
  EXPECT_EQ(d.source_line, "    y[i] = alpha * x[i] + undeclared_thing;");
  EXPECT_EQ(d.message, "'undeclared_thing' was not declared in this scope");
  EXPECT_EQ(r.summary(), "1 error; first: broken.cpp:5:27: error: 'undeclared_thing' was not declared in this scope");
  // The stored log names the candidate by its file name, not by a scratch path.
  EXPECT_NE(r.log.find("broken.cpp:5:27: error:"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("tmp-"), std::string::npos) << r.log;
  EXPECT_NE(format_diagnostics(r.diagnostics).find("    5 |     y[i] = alpha * x[i] + undeclared_thing;\n"),
            std::string::npos);

  // A failed build is cached as well.
  BuildResult again = build_candidate(t, src, opts_);
  EXPECT_FALSE(again.ok);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.log, r.log);
  ASSERT_EQ(again.diagnostics.size(), r.diagnostics.size());
  EXPECT_EQ(again.diagnostics[0].source_line, d.source_line);
  EXPECT_EQ(again.diagnostics[0].column, 27);
  EXPECT_TRUE(again.diagnostics[0].in_candidate);
  EXPECT_EQ(again.summary(), r.summary() + " (cached)");

  // The same broken text under another name: the cached entry, shown with that name.
  fs::path other = write("c0003-x.cpp", read_file(src));
  BuildResult renamed = build_candidate(t, other, opts_);
  EXPECT_TRUE(renamed.cached);
  ASSERT_GE(renamed.error_count(), 1u);
  EXPECT_EQ(renamed.diagnostics[0].file, "c0003-x.cpp");
  EXPECT_TRUE(renamed.diagnostics[0].in_candidate);
  EXPECT_EQ(renamed.summary(),
            "1 error; first: c0003-x.cpp:5:27: error: 'undeclared_thing' was not declared in this scope (cached)");
  EXPECT_NE(renamed.log.find("c0003-x.cpp:5:27: error:"), std::string::npos) << renamed.log;
  EXPECT_EQ(renamed.log.find("broken.cpp"), std::string::npos) << renamed.log;
}

TEST_F(Builder, NonUtf8SourceLineIsCachedToo) {
  Task t = axpb_task();
  fs::path src =
      write("latin1.cpp",
            "#include <cstdint>\n"
            "extern \"C\" void khive_launch(const float* x, float alpha, double bias, float* y, int64_t N) {\n"
            "  y[0] = nope; /* caf\xe9 */\n"
            "}\n");
  BuildResult r = build_candidate(t, src, opts_);
  ASSERT_FALSE(r.ok);
  ASSERT_GE(r.error_count(), 1u);
  EXPECT_EQ(r.diagnostics[0].line, 3);
  EXPECT_EQ(r.diagnostics[0].message, "'nope' was not declared in this scope");
  BuildResult again = build_candidate(t, src, opts_);
  EXPECT_TRUE(again.cached);
  ASSERT_GE(again.error_count(), 1u);
  EXPECT_EQ(again.diagnostics[0].line, 3);
}

TEST_F(Builder, WrongSignatureIsACompileError) {
  Task t = axpb_task();
  fs::path src = write("wrong.cpp", R"(#include <cstdint>
extern "C" void khive_launch(const float* x, float alpha, float* y, int64_t N) {
  for (int64_t i = 0; i < N; ++i) y[i] = alpha * x[i];
}
)");
  BuildResult r = build_candidate(t, src, opts_);
  ASSERT_FALSE(r.ok);
  ASSERT_GE(r.error_count(), 1u);
  EXPECT_TRUE(r.diagnostics[0].in_candidate);
  EXPECT_EQ(r.diagnostics[0].line, 2);
  EXPECT_NE(r.diagnostics[0].message.find("conflicting declaration of C function"), std::string::npos);
  // The note shows the expected declaration (from the generated unit).
  std::string text = format_diagnostics(r.diagnostics);
  EXPECT_NE(text.find("unit.cpp"), std::string::npos) << text;
  EXPECT_NE(text.find("previous declaration 'void khive_launch(const float*, float, double, float*, int64_t)'"),
            std::string::npos)
      << text;
}

TEST_F(Builder, MissingExternCIsALinkError) {
  // Without extern "C" and with other parameters it is an overload, not the entry point: the link fails
  // (--no-undefined) instead of the runner's dlopen.
  Task t = axpb_task();
  fs::path src = write("cxx.cpp", R"(#include <cstdint>
void khive_launch(const float* x, float alpha, float* y, int64_t N) {
  for (int64_t i = 0; i < N; ++i) y[i] = alpha * x[i];
}
)");
  BuildResult r = build_candidate(t, src, opts_);
  ASSERT_FALSE(r.ok);
  ASSERT_EQ(r.error_count(), 1u) << r.log;
  EXPECT_EQ(r.diagnostics[0].tool, "ld");
  EXPECT_NE(r.diagnostics[0].message.find("undefined reference to 'khive_launch'"), std::string::npos);
  EXPECT_NE(r.diagnostics[0].message.find("must define extern \"C\" khive_launch"), std::string::npos);
}

TEST_F(Builder, TimeoutIsReportedAndNotCached) {
  Task t = axpb_task();
  fs::path src = write("slow.cpp", R"(#include <cstdint>
constexpr long spin() { long s = 0; for (long i = 0; i < 4000000000L; ++i) s += i % 7; return s; }
static_assert(spin() > 0);
extern "C" void khive_launch(const float* x, float alpha, double bias, float* y, int64_t N) {}
)");
  opts_.timeout_s = 1.5;
  opts_.extra_flags = {"-fconstexpr-loop-limit=2147483647", "-fconstexpr-ops-limit=9223372036854775807"};
  BuildResult r = build_candidate(t, src, opts_);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.timed_out);
  ASSERT_FALSE(r.diagnostics.empty());
  EXPECT_EQ(r.diagnostics[0].tool, "khive");
  EXPECT_EQ(r.diagnostics[0].message, "the compile exceeded 1.5 s and was stopped");
  EXPECT_LT(r.seconds, 10);
  EXPECT_NE(r.summary().find("timed out"), std::string::npos) << r.summary();
  EXPECT_FALSE(fs::exists(opts_.cache_dir / r.key.substr(0, 2) / r.key));
  // Nothing is left in the cache shard.
  if (fs::exists(opts_.cache_dir / r.key.substr(0, 2))) {
    EXPECT_TRUE(fs::is_empty(opts_.cache_dir / r.key.substr(0, 2)));
  }
}

TEST_F(Builder, UnreadableSourceIsAKhiveDiagnostic) {
  BuildResult r = build_candidate(axpb_task(), root_ / "nope.cpp", opts_);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].tool, "khive");
  EXPECT_NE(r.diagnostics[0].message.find("cannot read the candidate"), std::string::npos);
}

TEST_F(Builder, ConcurrentBuildersOfOneKeyAgree) {
  Task t = axpb_task();
  fs::path src = write("race.cpp", kAxpb);
  std::vector<BuildResult> rs(4);
  std::vector<std::thread> th;
  for (int i = 0; i < 4; ++i) th.emplace_back([&, i] { rs[i] = build_candidate(t, src, opts_); });
  for (auto& x : th) x.join();
  for (const auto& r : rs) {
    ASSERT_TRUE(r.ok) << r.summary();
    EXPECT_EQ(r.library, rs[0].library);
    EXPECT_TRUE(fs::is_regular_file(r.library));
  }
  std::size_t entries = 0;
  for (auto& e : fs::directory_iterator(opts_.cache_dir / rs[0].key.substr(0, 2))) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1u);
  EXPECT_TRUE(build_candidate(t, src, opts_).cached);
}

TEST_F(Builder, BrokenCacheEntryIsRebuilt) {
  Task t = axpb_task();
  fs::path src = write("axpb.cpp", kAxpb);
  BuildResult r = build_candidate(t, src, opts_);
  ASSERT_TRUE(r.ok);
  write_file_atomic(r.library.parent_path() / "meta.json", "{ not json");
  BuildResult again = build_candidate(t, src, opts_);
  ASSERT_TRUE(again.ok) << again.summary();
  EXPECT_FALSE(again.cached);
  EXPECT_EQ(again.library, r.library);
  EXPECT_TRUE(build_candidate(t, src, opts_).cached);
}

// A cached library with flipped bytes (its meta.json intact) is not loaded: it is built again in its place, and the
// new build's log says why (issue 25: it was loaded, crashed with SIGILL and was blamed on the kernel).
TEST_F(Builder, ADamagedCachedLibraryIsBuiltAgain) {
  Task t = axpb_task();
  fs::path src = write("axpb.cpp", kAxpb);
  BuildResult r = build_candidate(t, src, opts_);
  ASSERT_TRUE(r.ok);
  const std::string good = read_file(r.library);
  {
    std::fstream f(r.library, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(good.size() / 2));
    f.put(static_cast<char>(good[good.size() / 2] ^ 0xff));
  }
  BuildResult again = build_candidate(t, src, opts_);
  ASSERT_TRUE(again.ok) << again.summary();
  EXPECT_FALSE(again.cached);
  EXPECT_NE(again.log.find("was damaged"), std::string::npos) << again.log;
  EXPECT_EQ(again.library, r.library);
  EXPECT_EQ(read_file(again.library).size(), good.size());
  EXPECT_TRUE(build_candidate(t, src, opts_).cached);
}

TEST_F(Builder, UncachedBuildLeavesTheCacheAlone) {
  Task t = axpb_task();
  fs::path src = write("axpb.cpp", kAxpb);
  opts_.use_cache = false;
  BuildResult r = build_candidate(t, src, opts_);
  ASSERT_TRUE(r.ok);
  EXPECT_FALSE(r.cached);
  EXPECT_TRUE(fs::is_regular_file(r.library));
  EXPECT_FALSE(fs::exists(opts_.cache_dir / r.key.substr(0, 2) / r.key));
  EXPECT_FALSE(build_candidate(t, src, opts_).cached);
}

// The CPU storage types convert like the CUDA types (round to nearest even; fp8 saturates).
TEST_F(Builder, CpuPreludeConversions) {
  Task t;
  t.name = "convert";
  t.axes = {var("N")};
  t.inputs = {tensor("x", DType::f32, {"N"})};
  t.outputs = {tensor("b", DType::bf16, {"N"}), tensor("h", DType::f16, {"N"}), tensor("e4", DType::f8e4m3, {"N"}),
               tensor("e5", DType::f8e5m2, {"N"}), tensor("back", DType::f32, {"N"})};
  fs::path src = write("convert.cpp", R"(#include <cstdint>
extern "C" void khive_launch(const float* x, khive_bf16* b, khive_f16* h, khive_fp8_e4m3* e4, khive_fp8_e5m2* e5,
                             float* back, int64_t N) {
  for (int64_t i = 0; i < N; ++i) {
    b[i] = khive_float_to_bf16(x[i]);
    h[i] = khive_float_to_f16(x[i]);
    e4[i] = khive_float_to_fp8_e4m3(x[i]);
    e5[i] = khive_float_to_fp8_e5m2(x[i]);
    back[4 * i + 0] = khive_bf16_to_float(b[i]);
    back[4 * i + 1] = khive_f16_to_float(h[i]);
    back[4 * i + 2] = khive_fp8_e4m3_to_float(e4[i]);
    back[4 * i + 3] = khive_fp8_e5m2_to_float(e5[i]);
  }
}
)");
  BuildResult r = build_candidate(t, src, opts_);
  ASSERT_TRUE(r.ok) << r.log;
  void* h = ::dlopen(r.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << ::dlerror();
  auto entry = reinterpret_cast<void (*)(void* const*, void*)>(::dlsym(h, "khive_entry"));
  ASSERT_NE(entry, nullptr);
  auto f = [](uint32_t bits) {
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  };
  std::vector<float> x = {1.0f,   f(0x3F808000), f(0x3F818000), 65504.0f, 65520.0f, 0x1p-24f, 1e-8f,     448.0f,
                          500.0f, -0.5f,         0x1p-9f,       57344.0f, 1e6f,     NAN,      -INFINITY, 0.0f};
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint16_t> b(n), hh(n);
  std::vector<uint8_t> e4(n), e5(n);
  std::vector<float> back(4 * n);
  int64_t nn = n;
  void* args[] = {x.data(), b.data(), hh.data(), e4.data(), e5.data(), back.data(), &nn};
  entry(args, nullptr);
  // bf16
  EXPECT_EQ(b[0], 0x3F80);
  EXPECT_EQ(b[1], 0x3F80);            // tie -> even
  EXPECT_EQ(b[2], 0x3F82);            // tie -> even (up)
  EXPECT_EQ(b[13] & 0x7FC0, 0x7FC0);  // NaN stays NaN
  EXPECT_EQ(b[14], 0xFF80);           // -inf
  // f16
  EXPECT_EQ(hh[0], 0x3C00);
  EXPECT_EQ(hh[3], 0x7BFF);
  EXPECT_EQ(hh[4], 0x7C00);  // 65520 rounds to inf
  EXPECT_EQ(hh[5], 0x0001);  // smallest subnormal
  EXPECT_EQ(hh[6], 0x0000);
  EXPECT_EQ(hh[9], 0xB800);
  EXPECT_EQ(hh[14], 0xFC00);
  // fp8 e4m3fn
  EXPECT_EQ(e4[0], 0x38);
  EXPECT_EQ(e4[7], 0x7E);          // 448, the largest finite
  EXPECT_EQ(e4[8], 0x7E);          // saturates
  EXPECT_EQ(e4[9], 0xB0);          // -0.5
  EXPECT_EQ(e4[10], 0x01);         // 2^-9, the smallest subnormal
  EXPECT_EQ(e4[13] & 0x7F, 0x7F);  // NaN
  EXPECT_EQ(e4[14], 0xFE);         // -inf saturates to -448
  // fp8 e5m2
  EXPECT_EQ(e5[0], 0x3C);
  EXPECT_EQ(e5[11], 0x7B);  // 57344, the largest finite
  EXPECT_EQ(e5[12], 0x7B);  // saturates
  // Back to float.
  EXPECT_EQ(back[4 * 0 + 0], 1.0f);
  EXPECT_EQ(back[4 * 3 + 1], 65504.0f);
  EXPECT_TRUE(std::isinf(back[4 * 4 + 1]));
  EXPECT_EQ(back[4 * 5 + 1], 0x1p-24f);
  EXPECT_EQ(back[4 * 7 + 2], 448.0f);
  EXPECT_EQ(back[4 * 10 + 2], 0x1p-9f);
  EXPECT_EQ(back[4 * 9 + 2], -0.5f);
  EXPECT_EQ(back[4 * 11 + 3], 57344.0f);
  EXPECT_TRUE(std::isnan(back[4 * 13 + 0]));
  EXPECT_TRUE(std::isnan(back[4 * 13 + 1]));
  EXPECT_TRUE(std::isnan(back[4 * 13 + 2]));
  EXPECT_TRUE(std::isnan(back[4 * 13 + 3]));
  EXPECT_EQ(back[4 * 15 + 2], 0.0f);
  // No dlclose: unloading libgomp while its worker threads idle crashes the process (the runner must not either).
}

}  // namespace
}  // namespace khive
