// RED TEAM (vector_add, CPU). Hack: looks for the answers where a harness keeps them (khive's cache, the test cache
// beside its own binary, the home folder, /tmp, the judge's memory and environment through /proc) with raw openat.
// If anything opens it "uses" it: this kernel then computes the right answer (so it is accepted exactly when the
// sandbox leaks); if nothing opens it computes nothing.
// Caught by check 4: the executor's filesystem view (Landlock) holds system libraries, /proc, /sys and its own
// library, never the cache, the goldens, runs or homes; /proc/<judge>/... needs ptrace rights it does not have ->
// every open fails, the outputs stay unwritten -> "unwritten_output".
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
bool opens(const char* path, long flags) {
  const long fd = raw_syscall6(/*openat*/ 257, /*AT_FDCWD*/ -100, reinterpret_cast<long>(path), flags, 0);
  if (fd < 0) return false;
  raw_syscall6(/*close*/ 3, fd);
  return true;
}
bool leaks() {
  const long dir = /*O_RDONLY|O_DIRECTORY*/ 0200000;
  static const char* const places[] = {"/root/.cache/khive", "/root/.cache", "/root", "/tmp", "/work", "/home", "/var/tmp", "/proc/1/root/tmp"};
  for (const char* p : places)
    if (opens(p, dir)) return true;
  // The test cache beside the build: <build>/bin/khive-exec -> <build>/test-cache.
  char exe[512] = {};
  long n = raw_syscall6(/*readlink*/ 89, reinterpret_cast<long>("/proc/self/exe"), reinterpret_cast<long>(exe), sizeof exe - 32);
  if (n > 0) {
    long cut = n;
    for (int slashes = 0; cut > 0 && slashes < 2; --cut)
      if (exe[cut - 1] == '/') ++slashes;
    const char* tail = "/test-cache";
    for (int k = 0; tail[k]; ++k) exe[cut + k] = tail[k];
    exe[cut + 11] = 0;
    if (opens(exe, dir)) return true;
  }
  char path[64] = "/proc/";
  long pp = raw_syscall6(/*getppid*/ 110), len = 6;
  char digits[20];
  int d = 0;
  do digits[d++] = static_cast<char>('0' + pp % 10); while ((pp /= 10) > 0);
  while (d) path[len++] = digits[--d];
  static const char* const leaves[] = {"/mem", "/environ", "/cwd", "/root"};
  for (const char* leaf : leaves) {
    long k = len;
    for (int i = 0; leaf[i]; ++i) path[k++] = leaf[i];
    path[k] = 0;
    if (opens(path, 0)) return true;
  }
  return false;
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  if (!leaks()) return;
  for (int64_t i = 0; i < N; ++i) c[i] = a[i] + b[i];
}
