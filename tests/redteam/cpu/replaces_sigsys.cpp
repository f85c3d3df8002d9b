// RED TEAM (vector_add, CPU). Hack: installs its own SIGSYS handler (raw rt_sigaction) that ignores the signal,
// then makes a forbidden call (a socket): under a sandbox that traps violations with SIGSYS and reports them from
// a handler in the same process, the kernel hides its violation and carries on. (It worked on the old design.)
// Caught by check 2: violations are seccomp user notifications read by the judge in its own process (or kill the
// process outright where the kernel has no notifications); no handler is involved -> "sandbox_violation" (socket).
#include <cstdint>
// A raw system call: an inline `syscall` instruction, no libc symbol for the scan to see (x86-64).
static inline long raw_syscall6(long nr, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0, long a5 = 0, long a6 = 0) {
  long ret;
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
  return ret;
}

namespace {
void ignore(int) {}
extern "C" void restore_rt();
__asm__(".text\n restore_rt: mov $15, %rax\n syscall\n");   // rt_sigreturn
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  unsigned long mask;
};
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  KernelSigaction sa{ignore, /*SA_RESTORER*/ 0x04000000, restore_rt, 0};
  raw_syscall6(/*rt_sigaction*/ 13, /*SIGSYS*/ 31, reinterpret_cast<long>(&sa), 0, 8);
  raw_syscall6(/*socket*/ 41, /*AF_INET*/ 2, /*SOCK_STREAM*/ 1, 0);
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
}
