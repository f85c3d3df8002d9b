// RED TEAM (vector_add, CPU). Hack: takes a file handle of a directory (name_to_handle_at) to reopen files later with
// open_by_handle_at, which bypasses path checks and write-open traps (a kernel of the old design rewrote the
// goldens this way).
// Caught by check 2: neither call is on the executor's allowlist -> "sandbox_violation" (name_to_handle_at).
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

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  struct {
    unsigned bytes;
    int type;
    unsigned char f[128];
  } handle{128, 0, {}};
  int mount_id = 0;
  raw_syscall6(/*name_to_handle_at*/ 303, /*AT_FDCWD*/ -100, reinterpret_cast<long>("/"), reinterpret_cast<long>(&handle),
               reinterpret_cast<long>(&mount_id), 0);
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
}
