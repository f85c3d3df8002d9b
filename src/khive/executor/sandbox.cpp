#include "khive/executor/sandbox.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>
#include <set>

namespace khive::exec {
namespace {

// Landlock's ABI (linux/landlock.h of newer kernels; Debian 12's headers stop at ABI 2).
constexpr unsigned long long kFsExecute = 1ull << 0, kFsWriteFile = 1ull << 1, kFsReadFile = 1ull << 2,
                             kFsReadDir = 1ull << 3;
constexpr unsigned long long kFsTruncate = 1ull << 14, kFsIoctlDev = 1ull << 15;
constexpr unsigned long long kScopeAbstractUnix = 1ull << 0, kScopeSignal = 1ull << 1;
constexpr int kRulePathBeneath = 1;
constexpr unsigned kCreateRulesetVersion = 1u << 0;

struct RulesetAttr {
  unsigned long long handled_access_fs, handled_access_net, scoped;
};
struct PathBeneathAttr {
  unsigned long long allowed_access;
  int parent_fd;
} __attribute__((packed));

// Every filesystem right the running kernel's ABI knows: handled (so denied unless a rule allows it).
unsigned long long handled_fs(int abi) {
  unsigned long long all = (1ull << 13) - 1;  // ABI 1: execute .. make_sym
  if (abi >= 2) all |= 1ull << 13;            // refer
  if (abi >= 3) all |= 1ull << 14;            // truncate
  if (abi >= 5) all |= kFsIoctlDev;
  return all;
}

// Vendor libraries a kernel may not load unless its task allows them (they stay outside the view).
bool vendor_library(const std::string& name) {
  static const std::regex re(
      "^lib(cublas|cublasLt|cudnn|cufft|curand|cusolver|cusparse|nvblas|cutensor|nccl|nvjpeg|npp|cupti)[^/]*\\.so.*$");
  return std::regex_match(name, re);
}

bool add_rule(int ruleset, const std::string& path, unsigned long long rights, unsigned long long handled) {
  int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
    rights &= kFsExecute | kFsReadFile | kFsWriteFile | kFsIoctlDev | (1ull << 14);
  PathBeneathAttr pb{rights & handled, fd};
  bool ok = ::syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &pb, 0) == 0;
  ::close(fd);
  return ok;
}

// A directory that holds vendor libraries is allowed file by file, without them.
void add_read_path(int ruleset, const std::string& path, unsigned long long handled, bool vendor) {
  const unsigned long long r = kFsExecute | kFsReadFile | kFsReadDir;
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    add_rule(ruleset, path, r, handled);
    return;
  }
  bool has_vendor = false;
  for (auto it = std::filesystem::directory_iterator(path, ec);
       !vendor && !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    if (vendor_library(it->path().filename().string())) has_vendor = true;
  if (!has_vendor) {
    add_rule(ruleset, path, r, handled);
    return;
  }
  for (auto it = std::filesystem::directory_iterator(path, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (vendor_library(name)) continue;
    std::error_code e2;
    if (it->is_directory(e2)) continue;  // subfolders of a library folder are not needed by a kernel
    add_rule(ruleset, it->path().string(), r, handled);
  }
}

int loaded_object_dir(dl_phdr_info* info, size_t, void* data) {
  auto* dirs = static_cast<std::set<std::string>*>(data);
  if (info->dlpi_name && info->dlpi_name[0] == '/')
    dirs->insert(std::filesystem::path(info->dlpi_name).parent_path().string());
  return 0;
}

}  // namespace

std::vector<std::string> base_read_paths() {
  std::vector<std::string> p = {
      "/lib",  "/lib64", "/usr/lib", "/usr/lib64", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
      "/proc", "/sys"};
  // Where the libraries already loaded live (the CUDA runtime and driver: the driver loads helpers from its own
  // folder); LD_LIBRARY_PATH's folders, where a kernel's dependencies are found.
  std::set<std::string> dirs;
  ::dl_iterate_phdr(loaded_object_dir, &dirs);
  if (const char* l = std::getenv("LD_LIBRARY_PATH")) {
    std::string s = l, cur;
    for (char c : s + ":") {
      if (c == ':') {
        if (!cur.empty()) dirs.insert(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
  }
  for (const auto& d : dirs) p.push_back(d);
  return p;
}

std::vector<std::string> device_paths(bool cuda) {
  std::vector<std::string> p = {"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"};
  if (cuda) {
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator("/dev", ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec))
      if (it->path().filename().string().rfind("nvidia", 0) == 0) p.push_back(it->path().string());
  }
  return p;
}

std::string apply_landlock(const std::vector<std::string>& read_paths, const std::vector<std::string>& dev_paths,
                           bool vendor, int& abi, unsigned scopes, const std::vector<std::string>& write_paths) {
  abi = static_cast<int>(::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion));
  if (abi < 1) {
    abi = 0;
    return std::string("the kernel has no Landlock (") + std::strerror(errno) + ")";
  }
  const unsigned long long scoped =
      (scopes & kScopeAbstractUnixSockets ? kScopeAbstractUnix : 0ull) | (scopes & kScopeSignals ? kScopeSignal : 0ull);
  RulesetAttr attr{handled_fs(abi), 0, abi >= 6 ? scoped : 0};
  const std::size_t size = abi >= 6 ? sizeof(RulesetAttr) : (abi >= 4 ? 16 : 8);
  int rs = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (rs < 0) return std::string("landlock_create_ruleset: ") + std::strerror(errno);
  for (const auto& p : read_paths) add_read_path(rs, p, attr.handled_access_fs, vendor);
  for (const auto& p : dev_paths) add_rule(rs, p, kFsReadFile | kFsWriteFile | kFsIoctlDev, attr.handled_access_fs);
  for (const auto& p : write_paths)
    if (!add_rule(rs, p, attr.handled_access_fs, attr.handled_access_fs)) {
      ::close(rs);
      return "the writable folder " + p + " cannot be opened";
    }
  // The CUDA driver names its threads (it writes /proc/self/task/<tid>/comm) and fails its initialisation with
  // cudaErrorOperatingSystem when it cannot. /proc/self resolves to this process here, so the rule covers its own
  // threads only (other processes' /proc entries stay read-only and, across Landlock domains, not ptrace-able).
  add_rule(rs, "/proc/self/task", kFsReadFile | kFsReadDir | kFsWriteFile | kFsTruncate, attr.handled_access_fs);
  add_rule(rs, "/proc/self/comm", kFsReadFile | kFsWriteFile | kFsTruncate, attr.handled_access_fs);
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  const bool ok = ::syscall(SYS_landlock_restrict_self, rs, 0) == 0;
  const int err = errno;
  ::close(rs);
  return ok ? "" : std::string("landlock_restrict_self: ") + std::strerror(err);
}

std::string enter_new_netns() {
  if (::unshare(CLONE_NEWNET) == 0) return "";
  const int err = errno;
  // Unprivileged: a user namespace of our own makes the network namespace possible.
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0) return "";
  return std::string("unshare: ") + std::strerror(err);
}

std::string drop_capabilities() {
  for (int cap = 0; cap <= 63; ++cap) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);  // fails quietly past the last cap
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &hdr, data) != 0) return std::string("capset: ") + std::strerror(errno);
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  return "";
}

void apply_rlimits(int64_t memory_limit) {
  rlimit zero{0, 0};
  ::setrlimit(RLIMIT_CORE, &zero);
  ::setrlimit(RLIMIT_FSIZE, &zero);  // no file grows: a kernel never writes a file
  rlimit nofile{256, 256};
  ::setrlimit(RLIMIT_NOFILE, &nofile);
  if (memory_limit > 0) {
    rlimit as{static_cast<rlim_t>(memory_limit), static_cast<rlim_t>(memory_limit)};
    ::setrlimit(RLIMIT_AS, &as);
  }
}

namespace {

// Calls a kernel's process may make, whatever it computes: memory, threads, time, its own signals, reading
// files the view allows, the descriptors it holds. Anything else (processes, network, other processes'
// memory, namespaces, mounts, keys, BPF, perf, io_uring, ptrace, file creation or removal) is not here.
const char* const kAllowed[] = {
    "read",
    "write",
    "readv",
    "writev",
    "pread64",
    "pwrite64",
    "preadv",
    "pwritev",
    "preadv2",
    "pwritev2",
    "lseek",
    "close",
    "close_range",
    "fstat",
    "newfstatat",
    "statx",
    "stat",
    "lstat",
    "statfs",
    "fstatfs",
    "access",
    "faccessat",
    "faccessat2",
    "readlink",
    "readlinkat",
    "getcwd",
    "getdents64",
    "dup",
    "dup3",
    "ioctl",
    "fadvise64",
    "mmap",
    "munmap",
    "mremap",
    "mprotect",
    "madvise",
    "brk",
    "mlock",
    "mlock2",
    "munlock",
    "mlockall",
    "munlockall",
    "mincore",
    "msync",
    "membarrier",
    "get_mempolicy",
    "set_mempolicy",
    "mbind",
    "memfd_create",
    "futex",
    "futex_waitv",
    "set_robust_list",
    "get_robust_list",
    "rseq",
    "set_tid_address",
    "exit",
    "exit_group",
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "rt_sigtimedwait",
    "rt_sigsuspend",
    "sigaltstack",
    "restart_syscall",
    "getpid",
    "gettid",
    "getppid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getresuid",
    "getresgid",
    "getgroups",
    "uname",
    "sysinfo",
    "getrlimit",
    "getrusage",
    "times",
    "umask",
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "time",
    "nanosleep",
    "clock_nanosleep",
    "sched_yield",
    "sched_getaffinity",
    "sched_getparam",
    "sched_getscheduler",
    "sched_get_priority_max",
    "sched_get_priority_min",
    "getpriority",
    "getcpu",
    "getrandom",
    "poll",
    "ppoll",
    "select",
    "pselect6",
    "epoll_create",
    "epoll_create1",
    "epoll_ctl",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "eventfd",
    "eventfd2",
    "pipe",
    "pipe2",
    "recvmsg",
    "sendmsg",
    "recvfrom",
    "sendto",
    "shutdown",
    "timerfd_create",
    "timerfd_settime",
    "timerfd_gettime",
    "wait4",
};

// Refused with an error instead of a violation: settings a library may try and survive without, and which
// could otherwise reach other processes of the same user (affinity, priority).
const char* const kRefused[] = {
    "sched_setaffinity", "sched_setscheduler", "sched_setparam", "setpriority", "chdir", "fchdir", "personality"};

}  // namespace

std::vector<std::string> allowed_syscalls() {
  std::vector<std::string> v(std::begin(kAllowed), std::end(kAllowed));
  for (const char* s :
       {"openat (read-only; CUDA: read-write device nodes)", "open (likewise)", "clone (threads only)",
        "kill / tgkill (itself only, never SIGKILL)", "prlimit64 (reading only)", "prctl (names, dumpable)",
        "fcntl (descriptor flags, locks, seals, pipe sizes; never F_SETOWN, F_SETSIG, F_SETLEASE or F_NOTIFY)"})
    v.emplace_back(s);
  return v;
}

std::string apply_seccomp(bool cuda, const std::vector<std::string>& extra, int& notify_fd) {
  notify_fd = -1;
  // Violations go to the judge (user notification) where the kernel and libseccomp can; else they kill.
  const bool notify = seccomp_api_get() >= 6;
  scmp_filter_ctx ctx = seccomp_init(notify ? SCMP_ACT_NOTIFY : SCMP_ACT_KILL_PROCESS);
  if (!ctx) return "seccomp_init failed";
  int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);  // every thread, the CUDA runtime's too
  rc |= seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
  auto nr = [](const char* name) { return seccomp_syscall_resolve_name(name); };
  auto allow = [&](const char* name) {
    int n = nr(name);
    if (n != __NR_SCMP_ERROR) rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, n, 0);
  };
  for (const char* n : kAllowed) allow(n);
  for (const auto& n : extra) allow(n.c_str());
  for (const char* n : kRefused)
    if (nr(n) != __NR_SCMP_ERROR) rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr(n), 0);
  // clone3 hides its flags behind a pointer: ENOSYS makes glibc fall back to clone, whose flags are checked.
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr("clone3"), 0);
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr("clone"), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
  // Files: read-only opens (the view decides which); CUDA opens its device nodes read-write.
  const unsigned long deny =
      O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | (cuda ? 0ul : static_cast<unsigned long>(O_RDWR));
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr("openat"), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, deny, 0));
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr("open"), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, deny, 0));
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr("openat2"), 0);
  // Signals: to itself only (abort, raise, pthread_kill), and never SIGKILL, which therefore always comes from outside.
  const scmp_datum_t self = static_cast<scmp_datum_t>(::getpid());
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr("kill"), 2, SCMP_A0(SCMP_CMP_EQ, self), SCMP_A1(SCMP_CMP_NE, SIGKILL));
  rc |=
      seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr("tgkill"), 2, SCMP_A0(SCMP_CMP_EQ, self), SCMP_A2(SCMP_CMP_NE, SIGKILL));
  // Reading its own limits (prlimit64(0, resource, NULL, old)).
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr("prlimit64"), 2, SCMP_A0(SCMP_CMP_EQ, 0), SCMP_A2(SCMP_CMP_EQ, 0));
  // fcntl by command: the ones that deliver signals (F_SETOWN, F_SETOWN_EX, F_SETSIG: I/O-ready signals sent to an
  // owner of the caller's choosing; F_SETLEASE, F_NOTIFY: lease breaks and directory changes signalled) would reach
  // the judge where Landlock has no signal scope (kernels before 6.12, or the CUDA fallback without Landlock), so
  // they are violations like any other call outside the list.
  for (int cmd : {F_DUPFD,  F_DUPFD_CLOEXEC, F_GETFD,      F_SETFD,      F_GETFL,      F_SETFL,    F_GETLK,
                  F_SETLK,  F_SETLKW,        F_OFD_GETLK,  F_OFD_SETLK,  F_OFD_SETLKW, F_GETOWN,   F_GETOWN_EX,
                  F_GETSIG, F_GETLEASE,      F_GETPIPE_SZ, F_SETPIPE_SZ, F_ADD_SEALS,  F_GET_SEALS})
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr("fcntl"), 1, SCMP_A1(SCMP_CMP_EQ, static_cast<scmp_datum_t>(cmd)));
  for (int opt : {PR_SET_NAME, PR_GET_NAME, PR_GET_DUMPABLE, PR_SET_VMA, PR_GET_NO_NEW_PRIVS, PR_CAPBSET_READ})
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr("prctl"), 1, SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(opt)));
  if (rc != 0) {
    seccomp_release(ctx);
    return "seccomp_rule_add failed";
  }
  rc = seccomp_load(ctx);
  if (rc == 0 && notify) notify_fd = seccomp_notify_fd(ctx);
  seccomp_release(ctx);
  if (rc != 0) return std::string("seccomp_load: ") + std::strerror(-rc);
  return "";
}

}  // namespace khive::exec
