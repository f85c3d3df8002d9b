// Symbol policy: synthetic tables for every rule family, and real libraries built from small candidates.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "khive/compile/builder.hpp"
#include "khive/compile/symbol_policy.hpp"
#include "khive/support/files.hpp"

namespace khive {
namespace {

namespace fs = std::filesystem;

std::vector<SymbolViolation> imports(std::vector<std::string> names, Backend b = Backend::cuda,
                                     std::vector<std::string> libs = {}) {
  SymbolTable t;
  t.imported = std::move(names);
  LibraryPolicy p;
  p.libraries = std::move(libs);
  return check_symbols(t, p, b);
}
std::vector<SymbolViolation> exports(std::vector<std::string> names, Backend b = Backend::cpu) {
  SymbolTable t;
  t.exported = std::move(names);
  return check_symbols(t, LibraryPolicy{}, b);
}
std::string rule_of(const std::string& name, Backend b = Backend::cuda) {
  auto v = imports({name}, b);
  return v.empty() ? "" : v[0].rule;
}

TEST(SymbolPolicy, ProcessAndThreadCreation) {
  for (const char* s : {"fork", "vfork", "clone", "clone3", "execve", "execv", "execvp", "execvpe", "execl", "execlp",
                        "execle", "fexecve", "system", "popen", "posix_spawn", "posix_spawnp"})
    EXPECT_EQ(rule_of(s), "process creation") << s;
  for (const char* s : {"pthread_create", "thrd_create",
                        "_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE"})
    EXPECT_EQ(rule_of(s), "thread creation") << s;
  // Queries and joins are not creation: std::thread::hardware_concurrency() was once refused as if it were.
  for (const char* s : {"_ZNSt6thread20hardware_concurrencyEv", "_ZNSt6thread4joinEv", "_ZNSt6thread6detachEv"})
    EXPECT_EQ(rule_of(s), "") << s;
  auto v = imports({"_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE"});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(
      v[0].symbol,
      "std::thread::_M_start_thread(std::unique_ptr<std::thread::_State, std::default_delete<std::thread::_State> >, "
      "void (*)())");
  EXPECT_TRUE(v[0].imported);
  EXPECT_EQ(v[0].mangled.rfind("_ZNSt6thread", 0), 0u);
}

TEST(SymbolPolicy, LoadingProtectionSignalsTimers) {
  for (const char* s : {"dlopen", "dlmopen", "dlsym", "dlvsym"}) EXPECT_EQ(rule_of(s), "dynamic loading") << s;
  for (const char* s : {"mprotect", "pkey_mprotect"}) EXPECT_EQ(rule_of(s), "memory protection") << s;
  for (const char* s : {"signal", "sigaction", "sigset", "bsd_signal", "sigaltstack"})
    EXPECT_EQ(rule_of(s), "signal handling") << s;
  for (const char* s : {"clock_gettime", "gettimeofday", "time", "clock", "times", "timespec_get", "sleep", "usleep",
                        "nanosleep", "clock_nanosleep", "timer_create", "setitimer", "alarm", "omp_get_wtime",
                        "_ZNSt6chrono3_V212steady_clock3nowEv", "_ZNSt6chrono3_V212system_clock3nowEv"})
    EXPECT_EQ(rule_of(s), "timer or event") << s;
}

TEST(SymbolPolicy, FileAndNetworkIO) {
  for (const char* s : {"open",
                        "open64",
                        "openat",
                        "openat64",
                        "creat",
                        "creat64",
                        "fopen",
                        "fopen64",
                        "freopen",
                        "fdopen",
                        "write",
                        "pwrite",
                        "pwrite64",
                        "writev",
                        "read",
                        "pread",
                        "readv",
                        "printf",
                        "fprintf",
                        "vprintf",
                        "vfprintf",
                        "puts",
                        "fputs",
                        "putchar",
                        "putc",
                        "fputc",
                        "fwrite",
                        "fflush",
                        "perror",
                        "dprintf",
                        "_ZSt4cout",
                        "socket",
                        "socketpair",
                        "connect",
                        "bind",
                        "listen",
                        "accept",
                        "accept4",
                        "send",
                        "sendto",
                        "sendmsg",
                        "recv",
                        "recvfrom",
                        "recvmsg",
                        "getaddrinfo",
                        "gethostbyname",
                        "ioctl",
                        "fcntl",
                        "_ZNSt14basic_ofstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode",
                        "_ZNSt13basic_filebufIcSt11char_traitsIcEE4openEPKcSt13_Ios_Openmode",
                        "_ZNSt10filesystem6removeERKNS_7__cxx114pathE"})
    EXPECT_EQ(rule_of(s), "file or network I/O") << s;
  // Deliberately allowed: std::cerr (CUTLASS's TMA GEMMs import it) and plain ostream members.
  for (const char* s : {"_ZSt4cerr", "_ZSt4clog", "_ZNSo3putEc", "_ZNSo5flushEv", "_ZNSolsEi", "mmap", "munmap"})
    EXPECT_EQ(rule_of(s), "") << s;
}

TEST(SymbolPolicy, SyscallsDebuggingProcessControlEnvironment) {
  EXPECT_EQ(rule_of("syscall"), "raw system call");
  EXPECT_EQ(rule_of("ptrace"), "debugging");
  for (const char* s : {"kill", "_exit", "_Exit", "quick_exit", "atexit", "at_quick_exit"})
    EXPECT_EQ(rule_of(s), "process control") << s;
  for (const char* s : {"prctl", "setrlimit", "sched_setaffinity", "unshare"})
    EXPECT_EQ(rule_of(s), "process control") << s;
  for (const char* s : {"setenv", "putenv", "unsetenv", "chdir"}) EXPECT_EQ(rule_of(s), "environment") << s;
  // Allowed: what compilers emit, and what ends the candidate visibly.
  for (const char* s : {"__cxa_atexit", "__cxa_finalize", "abort", "raise", "exit", "__assert_fail", "malloc", "memcpy",
                        "GOMP_parallel", "omp_get_thread_num", "omp_get_num_threads", "getenv", "__gmon_start__",
                        "_ITM_deregisterTMCloneTable", "_Znwm", "_ZdlPvm", "expf", "__cxa_guard_acquire"})
    EXPECT_EQ(rule_of(s), "") << s;
}

TEST(SymbolPolicy, VersionSuffixesAreIgnored) {
  auto v = imports({"pthread_create@GLIBC_2.34", "clock_gettime@@GLIBC_2.17", "memcpy@GLIBC_2.14"}, Backend::cpu);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].symbol, "pthread_create");
  EXPECT_EQ(v[0].rule, "thread creation");
  EXPECT_EQ(v[1].symbol, "clock_gettime");
}

TEST(SymbolPolicy, CudaRules) {
  for (const char* s : {"cudaStreamCreate", "cudaStreamCreateWithFlags", "cudaStreamCreateWithPriority",
                        "cuStreamCreate", "cuStreamCreateWithPriority"})
    EXPECT_EQ(rule_of(s), "stream creation") << s;
  for (const char* s : {"cudaEventCreate", "cudaEventRecord", "cudaEventElapsedTime", "cudaEventSynchronize",
                        "cuEventCreate", "cuEventElapsedTime"})
    EXPECT_EQ(rule_of(s), "timer or event") << s;
  for (const char* s : {"cudaDeviceSetLimit", "cudaThreadSetLimit", "cuCtxSetLimit", "cudaCtxResetPersistingL2Cache",
                        "cuCtxResetPersistingL2Cache", "cudaStreamSetAttribute", "cuStreamSetAttribute",
                        "cudaGraphKernelNodeSetAttribute", "cuGraphKernelNodeSetAttribute"})
    EXPECT_EQ(rule_of(s), "device limit / L2 persistence") << s;
  for (const char* s :
       {"cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion", "cuGetProcAddress", "cuGetProcAddress_v2"})
    EXPECT_EQ(rule_of(s), "dynamic loading") << s;
  for (const char* s : {"cudaLaunchHostFunc", "cudaStreamAddCallback", "cuLaunchHostFunc"})
    EXPECT_EQ(rule_of(s), "host callback") << s;
  for (const char* s : {"cudaSetDevice", "cudaDeviceReset", "cudaSetDeviceFlags"})
    EXPECT_EQ(rule_of(s), "device selection") << s;
  for (const char* s : {"cudaProfilerStart", "cudaProfilerStop", "cuProfilerStart", "cuProfilerStop"})
    EXPECT_EQ(rule_of(s), "profiling control") << s;
  for (const char* s :
       {"cudaIpcGetMemHandle", "cudaIpcOpenMemHandle", "cuIpcGetMemHandle", "cuMemExportToShareableHandle"})
    EXPECT_EQ(rule_of(s), "inter-process communication") << s;
  // What a CUTLASS sm90 GEMM imports (nm of a real build) passes.
  for (const char* s : {"cudaDeviceSetCacheConfig", "cudaDeviceSetSharedMemConfig", "cudaStreamSynchronize",
                        "cudaStreamWaitEvent", "cudaFuncSetAttribute", "cudaGetDevice", "cudaDeviceGetAttribute",
                        "cudaGetLastError", "cudaLaunchKernelExC", "cuTensorMapEncodeTiled", "__cudaLaunchKernel",
                        "__cudaRegisterFatBinary", "__cudaPushCallConfiguration", "cudaMalloc", "cudaMemsetAsync"})
    EXPECT_EQ(rule_of(s), "") << s;
  // CUDA-only rules do not apply to the CPU backend's imports (such a library cannot link there anyway).
  EXPECT_EQ(rule_of("cudaEventRecord", Backend::cpu), "");
}

TEST(SymbolPolicy, LibraryPolicy) {
  auto v = imports({"cublasSgemm_v2", "cublasLtMatmul", "cublasCreate_v2"});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].rule, "library not allowed by the task: cublas");
  EXPECT_EQ(v[1].rule, "library not allowed by the task: cublasLt");
  EXPECT_EQ(v[2].rule, "library not allowed by the task: cublas");
  v = imports({"cublasSgemm_v2", "cublasLtMatmul"}, Backend::cuda, {"cublas"});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].symbol, "cublasLtMatmul");
  EXPECT_TRUE(imports({"cublasSgemm_v2", "cublasLtMatmul"}, Backend::cuda, {"cublas", "cublasLt"}).empty());
  // Never allowed, whatever the policy lists.
  for (const char* s : {"cudnnCreate", "cufftExecC2C", "curandGenerateUniform", "cusparseCreate", "cusolverDnCreate",
                        "ncclAllReduce"}) {
    auto w = imports({s}, Backend::cuda, {"cublas", "cudnn", "cufft", "curand", "cusparse", "cusolver", "nccl"});
    ASSERT_EQ(w.size(), 1u) << s;
    EXPECT_EQ(w[0].rule.rfind("library not allowed by the task: ", 0), 0u) << s;
  }
  // PyTorch, recognised by its demangled namespaces.
  v = imports({"_ZNK2at10TensorBase4sizeEl", "_ZN3c1019UndefinedTensorImpl10_singletonE", "_ZN5torch3jit4loadERKSs"});
  ASSERT_EQ(v.size(), 3u);
  for (const auto& x : v) EXPECT_EQ(x.rule, "library not allowed by the task: torch") << x.symbol;
  EXPECT_EQ(v[0].symbol, "at::TensorBase::size(long) const");
  // A name that merely contains "at::" inside a word is not PyTorch.
  EXPECT_TRUE(imports({"_ZN6concat3fooEv"}).empty());
}

TEST(SymbolPolicy, ExportsThatRedefineRuntimeSymbols) {
  auto v = exports({"khive_entry", "khive_launch", "khive_abi", "khive_result", "clock_gettime", "cudaEventElapsedTime",
                    "cuLaunchKernel", "pthread_mutex_lock", "dlsym", "write", "_Z6kernelPf", "my_helper", "cute_thing",
                    "cudaxyz", "_ZN4cuda3std3__48in_placeE"});
  std::vector<std::string> names;
  for (const auto& x : v) {
    EXPECT_FALSE(x.imported);
    EXPECT_EQ(x.rule, "redefines a runtime symbol") << x.symbol;
    names.push_back(x.symbol);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"khive_result", "clock_gettime", "cudaEventElapsedTime", "cuLaunchKernel",
                                             "pthread_mutex_lock", "dlsym", "write", "cudaxyz"}));
}

TEST(SymbolPolicy, OneViolationPerSymbol) {
  SymbolTable t;
  t.imported = {"pthread_create", "pthread_create@GLIBC_2.34"};
  t.exported = {"pthread_create"};
  auto v = check_symbols(t, LibraryPolicy{}, Backend::cpu);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(v[0].imported);
  EXPECT_FALSE(v[1].imported);
}

TEST(SymbolPolicy, Demangle) {
  EXPECT_EQ(demangle_symbol("_ZNSt6thread4joinEv"), "std::thread::join()");
  EXPECT_EQ(demangle_symbol("printf"), "printf");
  EXPECT_EQ(demangle_symbol("_Znotmangled!"), "_Znotmangled!");
}

// ---- real libraries ------------------------------------------------------------------------------------

class RealLibraries : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = make_temp_dir(fs::temp_directory_path(), "khive-symbols-test");
    opts_.cache_dir = root_ / "cache";
    task_.name = "copy";
    Axis n;
    n.name = "N";
    task_.axes = {n};
    TensorSpec x;
    x.name = "x";
    x.shape = {"N"};
    TensorSpec y = x;
    y.name = "y";
    task_.inputs = {x};
    task_.outputs = {y};
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  std::vector<SymbolViolation> build_and_scan(const std::string& name, const std::string& body) {
    fs::path p = root_ / name;
    write_file_atomic(p, body);
    BuildResult r = build_candidate(task_, p, opts_);
    EXPECT_TRUE(r.ok) << r.log;
    if (!r.ok) return {{"<build failed>", "", true, ""}};
    return scan_symbols(r.library, task_.policy, Backend::cpu);
  }
  static bool has(const std::vector<SymbolViolation>& v, const std::string& rule, bool imported = true) {
    for (const auto& x : v)
      if (x.rule == rule && x.imported == imported) return true;
    return false;
  }
  fs::path root_;
  BuildOptions opts_;
  Task task_;
};

TEST_F(RealLibraries, CleanOpenMPKernelPasses) {
  auto v = build_and_scan("omp.cpp", R"(#include <cmath>
#include <vector>
extern "C" void khive_launch(const float* x, float* y, int64_t N) {
  std::vector<float> t(N);
  #pragma omp parallel for
  for (int64_t i = 0; i < N; ++i) t[i] = std::exp(x[i]);
  for (int64_t i = 0; i < N; ++i) y[i] = t[i];
}
)");
  for (const auto& x : v) ADD_FAILURE() << x.symbol << ": " << x.rule;
  // And the symbols read back include OpenMP's.
  fs::path lib;
  for (auto& e : fs::recursive_directory_iterator(opts_.cache_dir))
    if (e.path().filename() == "cand.so") lib = e.path();
  SymbolTable t = read_symbols(lib);
  EXPECT_NE(std::find(t.imported.begin(), t.imported.end(), "GOMP_parallel"), t.imported.end());
  EXPECT_NE(std::find(t.exported.begin(), t.exported.end(), "khive_entry"), t.exported.end());
  EXPECT_NE(std::find(t.exported.begin(), t.exported.end(), "khive_launch"), t.exported.end());
  EXPECT_NE(std::find(t.exported.begin(), t.exported.end(), "khive_abi"), t.exported.end());
  for (const auto& s : t.imported) EXPECT_EQ(s.find('@'), std::string::npos) << s;
}

TEST_F(RealLibraries, StdThreadIsThreadCreation) {
  auto v = build_and_scan("thread.cpp", R"(#include <thread>
extern "C" void khive_launch(const float* x, float* y, int64_t N) {
  std::thread t([&] { for (int64_t i = 0; i < N; ++i) y[i] = x[i]; });
  t.detach();
}
)");
  ASSERT_TRUE(has(v, "thread creation")) << v.size();
  bool named = false;
  for (const auto& x : v) named = named || x.symbol.find("std::thread") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST_F(RealLibraries, PrintfIsIO) {
  auto v = build_and_scan("print.cpp", R"(#include <cstdio>
extern "C" void khive_launch(const float* x, float* y, int64_t N) {
  for (int64_t i = 0; i < N; ++i) y[i] = x[i];
  printf("copied %ld values\n", static_cast<long>(N));
}
)");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].rule, "file or network I/O");
  EXPECT_EQ(v[0].symbol, "printf");
}

TEST_F(RealLibraries, DefiningClockGettimeIsARedefinition) {
  auto v = build_and_scan("clock.cpp", R"(struct timespec;
extern "C" int clock_gettime(int, struct timespec*) { return 0; }
extern "C" void khive_launch(const float* x, float* y, int64_t N) {
  for (int64_t i = 0; i < N; ++i) y[i] = x[i];
}
)");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].symbol, "clock_gettime");
  EXPECT_EQ(v[0].rule, "redefines a runtime symbol");
  EXPECT_FALSE(v[0].imported);
}

TEST_F(RealLibraries, UnreadableLibraryThrows) {
  EXPECT_THROW(read_symbols(root_ / "missing.so"), std::runtime_error);
  write_file_atomic(root_ / "junk.so", "not an ELF file");
  EXPECT_THROW(read_symbols(root_ / "junk.so"), std::runtime_error);
}

}  // namespace
}  // namespace khive
