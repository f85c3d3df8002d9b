// Guard check 1, second half: what a built candidate imports and exports.
//
// The rules are data: tables of {pattern, rule}. A pattern is either an fnmatch(3) glob on the raw
// symbol name with its "@VERSION" suffix removed ("fork", "cudaEvent*", "cu[A-Z]*"), or "~text": the
// demangled name contains `text` as a whole word (not preceded, and if text ends in an identifier
// character not followed, by [A-Za-z0-9_]), e.g. "~std::thread".
#include <cxxabi.h>
#include <fnmatch.h>

#include <cstdlib>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "khive/compile/symbol_policy.hpp"
#include "khive/support/subprocess.hpp"

namespace khive {
namespace {

struct SymbolRule {
  std::string_view pattern;
  std::string_view rule;
};

constexpr std::string_view kProcess = "process creation";
constexpr std::string_view kThread = "thread creation";
constexpr std::string_view kDynload = "dynamic loading";
constexpr std::string_view kMprotect = "memory protection";
constexpr std::string_view kSignal = "signal handling";
constexpr std::string_view kTimer = "timer or event";
constexpr std::string_view kIO = "file or network I/O";
constexpr std::string_view kSyscall = "raw system call";
constexpr std::string_view kDebug = "debugging";
constexpr std::string_view kProcCtl = "process control";
constexpr std::string_view kEnv = "environment";
constexpr std::string_view kStream = "stream creation";
constexpr std::string_view kLimit = "device limit / L2 persistence";
constexpr std::string_view kCallback = "host callback";
constexpr std::string_view kDevice = "device selection";
constexpr std::string_view kProfiler = "profiling control";
constexpr std::string_view kIpc = "inter-process communication";
constexpr std::string_view kRedefines = "redefines a runtime symbol";

// Imports forbidden on every backend.
constexpr SymbolRule kImportRules[] = {
    // process creation
    {"fork", kProcess},
    {"vfork", kProcess},
    {"_Fork", kProcess},
    {"clone", kProcess},
    {"clone3", kProcess},
    {"execve", kProcess},
    {"execveat", kProcess},
    {"execv", kProcess},
    {"execvp", kProcess},
    {"execvpe", kProcess},
    {"execl", kProcess},
    {"execlp", kProcess},
    {"execle", kProcess},
    {"fexecve", kProcess},
    {"system", kProcess},
    {"popen", kProcess},
    {"posix_spawn", kProcess},
    {"posix_spawnp", kProcess},
    {"daemon", kProcess},
    // thread creation (OpenMP's GOMP_* is allowed: the CPU backend is built with -fopenmp). Only starting a thread:
    // std::thread::hardware_concurrency() and std::this_thread are queries, not creation. (The sandbox does not need
    // this rule: a thread's work after the call returns is frozen with the executor and fails validation.)
    {"pthread_create", kThread},
    {"thrd_create", kThread},
    {"_ZNSt6thread15_M_start_thread*", kThread},
    // dynamic loading
    {"dlopen", kDynload},
    {"dlmopen", kDynload},
    {"dlsym", kDynload},
    {"dlvsym", kDynload},
    {"__libc_dlopen_mode", kDynload},
    {"__libc_dlsym", kDynload},
    // memory protection (no kernel needs it; page protections guard nothing of the judge's, which is another process)
    {"mprotect", kMprotect},
    {"pkey_mprotect", kMprotect},
    {"pkey_alloc", kMprotect},
    {"pkey_set", kMprotect},
    // signal handling
    {"signal", kSignal},
    {"sigaction", kSignal},
    {"sigset", kSignal},
    {"bsd_signal", kSignal},
    {"sysv_signal", kSignal},
    {"__sysv_signal", kSignal},
    {"sigaltstack", kSignal},
    {"sigprocmask", kSignal},
    {"pthread_sigmask", kSignal},
    // timers and clocks
    {"clock_gettime", kTimer},
    {"__clock_gettime", kTimer},
    {"clock_gettime64", kTimer},
    {"__clock_gettime64", kTimer},
    {"gettimeofday", kTimer},
    {"time", kTimer},
    {"clock", kTimer},
    {"times", kTimer},
    {"ftime", kTimer},
    {"timespec_get", kTimer},
    {"sleep", kTimer},
    {"usleep", kTimer},
    {"nanosleep", kTimer},
    {"clock_nanosleep", kTimer},
    {"timer_create", kTimer},
    {"timer_settime", kTimer},
    {"timerfd_create", kTimer},
    {"timerfd_settime", kTimer},
    {"setitimer", kTimer},
    {"getitimer", kTimer},
    {"alarm", kTimer},
    {"ualarm", kTimer},
    {"omp_get_wtime", kTimer},
    {"omp_get_wtick", kTimer},
    {"_ZNSt6chrono*", kTimer},  // std::chrono::{system,steady}_clock::now() and the C++20 zone functions
    // file and network I/O
    {"open", kIO},
    {"open64", kIO},
    {"__open_2", kIO},
    {"__open64_2", kIO},
    {"openat", kIO},
    {"openat64", kIO},
    {"creat", kIO},
    {"creat64", kIO},
    {"fopen", kIO},
    {"fopen64", kIO},
    {"freopen", kIO},
    {"freopen64", kIO},
    {"fdopen", kIO},
    {"tmpfile", kIO},
    {"tmpfile64", kIO},
    {"mkstemp", kIO},
    {"mkstemp64", kIO},
    {"mkostemp", kIO},
    {"mkdtemp", kIO},
    {"opendir", kIO},
    {"fdopendir", kIO},
    {"remove", kIO},
    {"unlink", kIO},
    {"unlinkat", kIO},
    {"rename", kIO},
    {"renameat", kIO},
    {"mkdir", kIO},
    {"shm_open", kIO},
    {"memfd_create", kIO},
    {"mkfifo", kIO},
    {"write", kIO},
    {"pwrite", kIO},
    {"pwrite64", kIO},
    {"writev", kIO},
    {"pwritev", kIO},
    {"read", kIO},
    {"__read_chk", kIO},
    {"pread", kIO},
    {"pread64", kIO},
    {"__pread_chk", kIO},
    {"__pread64_chk", kIO},
    {"readv", kIO},
    {"preadv", kIO},
    {"fread", kIO},
    {"fgets", kIO},
    {"sendfile", kIO},
    {"splice", kIO},
    {"printf", kIO},
    {"__printf_chk", kIO},
    {"fprintf", kIO},
    {"__fprintf_chk", kIO},
    {"vprintf", kIO},
    {"__vprintf_chk", kIO},
    {"vfprintf", kIO},
    {"__vfprintf_chk", kIO},
    {"puts", kIO},
    {"fputs", kIO},
    {"fputs_unlocked", kIO},
    {"putchar", kIO},
    {"putc", kIO},
    {"fputc", kIO},
    {"fwrite", kIO},
    {"fwrite_unlocked", kIO},
    {"fflush", kIO},
    {"perror", kIO},
    {"dprintf", kIO},
    {"__dprintf_chk", kIO},
    {"_ZSt4cout", kIO},
    {"_ZSt5wcout", kIO},
    {"_ZSt3cin", kIO},
    {"_ZSt4wcin", kIO},
    {"~std::basic_filebuf", kIO},
    {"~std::basic_ofstream", kIO},
    {"~std::basic_ifstream", kIO},
    {"~std::basic_fstream", kIO},
    {"~std::__basic_file", kIO},
    {"~__gnu_cxx::stdio_filebuf", kIO},
    {"~__gnu_cxx::stdio_sync_filebuf", kIO},
    {"~std::filesystem", kIO},
    {"socket", kIO},
    {"socketpair", kIO},
    {"connect", kIO},
    {"bind", kIO},
    {"listen", kIO},
    {"accept", kIO},
    {"accept4", kIO},
    {"send", kIO},
    {"sendto", kIO},
    {"sendmsg", kIO},
    {"recv", kIO},
    {"recvfrom", kIO},
    {"recvmsg", kIO},
    {"getaddrinfo", kIO},
    {"getnameinfo", kIO},
    {"gethostbyname", kIO},
    {"gethostbyname2", kIO},
    {"gethostbyname_r", kIO},
    {"ioctl", kIO},
    {"fcntl", kIO},
    {"fcntl64", kIO},
    {"pipe", kIO},
    {"pipe2", kIO},
    {"dup", kIO},
    {"dup2", kIO},
    {"dup3", kIO},
    // raw system calls, debugging
    {"syscall", kSyscall},
    {"ptrace", kDebug},
    {"process_vm_readv", kDebug},
    {"process_vm_writev", kDebug},
    // process control (abort, raise and exit are allowed: they end the candidate, which the judge reports
    // as a crash with no signed result; nvcc's host stubs for out-of-line __device__ functions import exit)
    {"kill", kProcCtl},
    {"tgkill", kProcCtl},
    {"pthread_kill", kProcCtl},
    {"_exit", kProcCtl},
    {"_Exit", kProcCtl},
    {"quick_exit", kProcCtl},
    {"atexit", kProcCtl},
    {"at_quick_exit", kProcCtl},
    // environment
    {"prctl", kProcCtl},
    {"setrlimit", kProcCtl},
    {"prlimit", kProcCtl},
    {"prlimit64", kProcCtl},
    {"sched_setaffinity", kProcCtl},
    {"sched_setscheduler", kProcCtl},
    {"pthread_setaffinity_np", kProcCtl},
    {"setpriority", kProcCtl},
    {"nice", kProcCtl},
    {"unshare", kProcCtl},
    {"setns", kProcCtl},
    {"setsid", kProcCtl},
    {"setpgid", kProcCtl},
    {"setuid", kProcCtl},
    {"setgid", kProcCtl},
    // environment and working directory
    {"setenv", kEnv},
    {"putenv", kEnv},
    {"unsetenv", kEnv},
    {"clearenv", kEnv},
    {"chdir", kEnv},
    {"fchdir", kEnv},
    {"chroot", kEnv},
};

// Imports forbidden on the CUDA backend (all work must be enqueued on the given stream, and only the
// harness may time it or touch device-wide settings).
constexpr SymbolRule kCudaImportRules[] = {
    {"cudaStreamCreate*", kStream},
    {"cuStreamCreate*", kStream},
    {"cuGreenCtx*", kStream},
    {"cudaEvent*", kTimer},
    {"cuEvent*", kTimer},
    {"cudaDeviceSetLimit", kLimit},
    {"cudaThreadSetLimit", kLimit},
    {"cuCtxSetLimit", kLimit},
    {"cudaCtxResetPersistingL2Cache", kLimit},
    {"cuCtxResetPersistingL2Cache", kLimit},
    {"cudaStreamSetAttribute", kLimit},
    {"cuStreamSetAttribute", kLimit},
    {"cudaGraphKernelNodeSetAttribute", kLimit},
    {"cuGraphKernelNodeSetAttribute", kLimit},
    {"cudaGetDriverEntryPoint", kDynload},
    {"cudaGetDriverEntryPointByVersion", kDynload},
    {"cuGetProcAddress", kDynload},
    {"cuGetProcAddress_v2", kDynload},
    {"cuModuleLoad", kIO},
    {"cuLibraryLoadFromFile", kIO},
    {"cudaLibraryLoadFromFile", kIO},
    {"cudaLaunchHostFunc", kCallback},
    {"cudaStreamAddCallback", kCallback},
    {"cuLaunchHostFunc", kCallback},
    {"cuStreamAddCallback", kCallback},
    {"cudaGraphAddHostNode", kCallback},
    {"cuGraphAddHostNode", kCallback},
    {"cudaSetDevice", kDevice},
    {"cudaDeviceReset", kDevice},
    {"cudaSetDeviceFlags", kDevice},
    {"cudaSetValidDevices", kDevice},
    {"cudaInitDevice", kDevice},
    {"cuCtxCreate*", kDevice},
    {"cuCtxSetCurrent", kDevice},
    {"cuCtxPushCurrent*", kDevice},
    {"cuDevicePrimaryCtxReset*", kDevice},
    {"cuDevicePrimaryCtxSetFlags*", kDevice},
    {"cudaDeviceEnablePeerAccess", kDevice},
    {"cuCtxEnablePeerAccess", kDevice},
    {"cudaProfilerStart", kProfiler},
    {"cudaProfilerStop", kProfiler},
    {"cuProfilerStart", kProfiler},
    {"cuProfilerStop", kProfiler},
    // device memory shared with other processes would outlive the candidate's process (a result cache)
    {"cudaIpc*", kIpc},
    {"cuIpc*", kIpc},
    {"cuMemExportToShareableHandle", kIpc},
    {"cuMemImportFromShareableHandle", kIpc},
};

// Vendor libraries: {pattern, library}. A library listed in the task's policy may be used; an empty
// library name means never allowed, whatever the policy says.
struct LibraryRule {
  std::string_view pattern;
  std::string_view library;
  bool policy_can_allow;
};
constexpr LibraryRule kLibraryRules[] = {
    {"cublasLt*", "cublasLt", true},  {"cublas*", "cublas", true},  // first match wins: cublasLt before cublas
    {"cudnn*", "cudnn", false},       {"cufft*", "cufft", false},       {"curand*", "curand", false},
    {"cusparse*", "cusparse", false}, {"cusolver*", "cusolver", false}, {"cutensor*", "cutensor", false},
    {"nccl*", "nccl", false},         {"~at", "torch", false},          {"~torch", "torch", false},
    {"~c10", "torch", false},
};

// Exports that replace what the executor or its libraries provide (in addition to every import rule
// above, reused for exports). khive_entry, khive_launch and khive_abi are the candidate's own.
constexpr SymbolRule kExportRules[] = {
    {"khive_*", kRedefines}, {"cuda*", kRedefines},     {"cu[A-Z]*", kRedefines},
    {"__cuda*", kRedefines}, {"pthread_*", kRedefines}, {"__libc_*", kRedefines},
    {"_dl_*", kRedefines},   {"GOMP_*", kRedefines},    {"omp_*", kRedefines},
};
constexpr std::string_view kOwnExports[] = {"khive_entry", "khive_launch", "khive_abi"};

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// "~text" whole-word substring of the demangled name. "~at" / "~torch" / "~c10" name a namespace: they
// match "at::" etc. at a word start.
bool demangled_contains(const std::string& dem, std::string_view text) {
  std::string needle(text);
  const bool ns = text == "at" || text == "torch" || text == "c10";
  if (ns) needle += "::";
  for (std::size_t p = dem.find(needle); p != std::string::npos; p = dem.find(needle, p + 1)) {
    if (p > 0 && (is_ident(dem[p - 1]) || (p > 1 && dem[p - 1] == ':' && dem[p - 2] == ':'))) continue;
    std::size_t e = p + needle.size();
    if (!ns && is_ident(needle.back()) && e < dem.size() && is_ident(dem[e])) continue;
    return true;
  }
  return false;
}

bool matches(std::string_view pattern, const std::string& raw, const std::string& dem) {
  if (!pattern.empty() && pattern.front() == '~') return demangled_contains(dem, pattern.substr(1));
  return ::fnmatch(std::string(pattern).c_str(), raw.c_str(), 0) == 0;
}

std::string strip_version(std::string s) {
  auto at = s.find('@');
  if (at != std::string::npos && at > 0) s.resize(at);
  return s;
}

std::string run_nm(const std::filesystem::path& so, const char* which) {
  ProcessSpec p;
  std::filesystem::path nm = find_program("nm");
  p.argv = {nm.empty() ? "nm" : nm.string(), "-D", which, so.string()};
  p.timeout_s = 60;
  p.capture_limit = 64u << 20;
  ProcessResult r = run_process(p);
  if (!r.ok())
    throw std::runtime_error("nm -D " + std::string(which) + " " + so.string() + ": " + r.describe() +
                             (r.err.empty() ? "" : ": " + r.err.substr(0, r.err.find('\n'))));
  return r.out;
}

// nm lines: "<addr> T name@@VER", "                 U name@VER", "                 w name".
std::vector<std::string> nm_names(const std::string& out) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::vector<std::string> tok;
    for (std::string t; ls >> t;) tok.push_back(t);
    if (tok.size() < 2) continue;
    std::string name = strip_version(tok.back());
    if (name.empty() || !seen.insert(name).second) continue;
    names.push_back(name);
  }
  return names;
}

}  // namespace

std::string demangle_symbol(const std::string& name) {
  if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && d ? std::string(d.get()) : name;
}

SymbolTable read_symbols(const std::filesystem::path& so) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(so, ec)) throw std::runtime_error(so.string() + ": no such file");
  SymbolTable t;
  t.imported = nm_names(run_nm(so, "--undefined-only"));
  t.exported = nm_names(run_nm(so, "--defined-only"));
  return t;
}

std::vector<SymbolViolation> check_symbols(const SymbolTable& syms, const LibraryPolicy& policy, Backend b) {
  std::vector<SymbolViolation> out;
  auto add = [&](const std::string& raw, const std::string& dem, std::string rule, bool imported) {
    for (const auto& v : out)
      if (v.mangled == raw && v.imported == imported) return;  // one violation per symbol and direction
    out.push_back(SymbolViolation{dem, std::move(rule), imported, raw});
  };

  for (const std::string& raw0 : syms.imported) {
    const std::string raw = strip_version(raw0);
    const std::string dem = demangle_symbol(raw);
    bool hit = false;
    for (const auto& r : kImportRules)
      if (!hit && matches(r.pattern, raw, dem)) {
        add(raw, dem, std::string(r.rule), true);
        hit = true;
      }
    if (b == Backend::cuda)
      for (const auto& r : kCudaImportRules)
        if (!hit && matches(r.pattern, raw, dem)) {
          add(raw, dem, std::string(r.rule), true);
          hit = true;
        }
    for (const auto& r : kLibraryRules) {
      if (hit || !matches(r.pattern, raw, dem)) continue;
      hit = true;
      if (!r.policy_can_allow || !policy.allows(r.library))
        add(raw, dem, "library not allowed by the task: " + std::string(r.library), true);
    }
  }

  for (const std::string& raw0 : syms.exported) {
    const std::string raw = strip_version(raw0);
    bool own = false;
    for (auto n : kOwnExports) own = own || raw == n;
    if (own) continue;
    const std::string dem = demangle_symbol(raw);
    bool hit = false;
    auto check = [&](auto const& table) {
      for (const auto& r : table)
        if (!hit && matches(r.pattern, raw, dem)) {
          add(raw, dem, std::string(kRedefines), false);
          hit = true;
        }
    };
    check(kExportRules);
    check(kImportRules);
    check(kCudaImportRules);  // on every backend: a CPU library has no business defining these either
  }
  return out;
}

std::vector<SymbolViolation> scan_symbols(const std::filesystem::path& so, const LibraryPolicy& policy, Backend b) {
  return check_symbols(read_symbols(so), policy, b);
}

}  // namespace khive
