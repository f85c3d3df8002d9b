#include "khive/runner/sandbox.hpp"

#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "khive/run/protocol.hpp"

namespace khive {
namespace {

// Names of the trapped system calls, resolved before the filter is installed (the handler may not allocate).
struct Named { int nr; const char* name; };
Named g_names[96];
int g_count = 0;

void on_sigsys(int, siginfo_t* info, void*) {
  const char* name = "unknown";
  for (int i = 0; i < g_count; ++i)
    if (g_names[i].nr == info->si_syscall) name = g_names[i].name;
  (void)!::write(2, kSandboxMarker, std::strlen(kSandboxMarker));
  (void)!::write(2, name, std::strlen(name));
  (void)!::write(2, "\n", 1);
  ::_exit(kSandboxExit);
}

}  // namespace

std::string install_seccomp(SandboxLevel level) {
  struct sigaction sa{};
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (::sigaction(SIGSYS, &sa, nullptr) != 0) return std::string("sigaction(SIGSYS): ") + std::strerror(errno);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return std::string("no_new_privs: ") + std::strerror(errno);

  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return "seccomp_init failed";
  auto trap = [&](const char* name) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return 0;
    if (g_count < 96) g_names[g_count++] = {nr, name};
    return seccomp_rule_add(ctx, SCMP_ACT_TRAP, nr, 0);
  };
  int rc = 0;
  // Network, new programs, other processes, privileges, kernel interfaces: never needed by a kernel.
  for (const char* n : {"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "execve", "execveat",
                        "fork", "vfork", "ptrace", "process_vm_readv", "process_vm_writev", "unshare", "setns",
                        "mount", "umount2", "chroot", "pivot_root", "reboot", "init_module", "finit_module",
                        "delete_module", "kexec_load", "bpf", "perf_event_open", "keyctl", "add_key",
                        "request_key", "userfaultfd", "io_uring_setup",
                        "setitimer", "timer_create", "alarm", "kill", "tkill", "seccomp", "prctl", "symlink",
                        "symlinkat", "link", "linkat", "chmod", "fchmod", "fchmodat", "truncate"})
    rc |= trap(n);
  if (level != SandboxLevel::golden)   // the golden writer renames its files into place
    for (const char* n : {"unlink", "unlinkat", "rename", "renameat", "renameat2", "rmdir", "mkdir", "mkdirat", "ftruncate"})
      rc |= trap(n);
  // clone: threads (OpenMP, the CUDA runtime) yes, new processes no. clone3 cannot be filtered by its
  // flags (they sit behind a pointer), so it answers ENOSYS and glibc falls back to clone.
  {
    int nr = seccomp_syscall_resolve_name("clone");
    g_names[g_count++] = {nr, "clone (new process)"};
    rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), seccomp_syscall_resolve_name("clone3"), 0);
  }
  // Files: opened read-only only. The CUDA driver opens its device nodes read-write, so there only
  // creating, truncating, appending and write-only opens are refused.
  if (level != SandboxLevel::golden) {
    unsigned long deny = O_WRONLY | O_CREAT | O_TRUNC | O_APPEND;
    if (level == SandboxLevel::cpu) deny |= O_RDWR;
    int open_nr = seccomp_syscall_resolve_name("open"), openat_nr = seccomp_syscall_resolve_name("openat");
    g_names[g_count++] = {open_nr, "open (for writing)"};
    g_names[g_count++] = {openat_nr, "openat (for writing)"};
    for (unsigned long bit = 1; bit; bit <<= 1) {
      if (!(deny & bit)) continue;
      rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, open_nr, 1, SCMP_A1(SCMP_CMP_MASKED_EQ, bit, bit));
      rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, openat_nr, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, bit, bit));
    }
    int creat_nr = seccomp_syscall_resolve_name("creat");
    g_names[g_count++] = {creat_nr, "creat"};
    rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, creat_nr, 0);
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), seccomp_syscall_resolve_name("openat2"), 0);
  }
  if (rc != 0) {
    seccomp_release(ctx);
    return "seccomp_rule_add failed";
  }
  rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) return std::string("seccomp_load: ") + std::strerror(-rc);
  return "";
}

}  // namespace khive
