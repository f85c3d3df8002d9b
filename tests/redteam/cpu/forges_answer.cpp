// RED TEAM (vector_add, CPU). Hack: the executor answers the judge on descriptor 3; the kernel writes a forged
// answer there itself ({"op":"done"} with a tiny time) and skips the work, hoping the forged answer is taken as
// the call's result and its time as the measurement.
// Caught by check 4: the judge reads the executor's answers as observations only; the time is its own clock and the
// outputs it reads from memory it owns are still the sentinel -> "unwritten_output" (or the stray message breaks
// the exchange -> "protocol_violation").
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
  static const char done[] = "{\"op\":\"done\",\"times_s\":[1e-9]}";
  raw_syscall6(/*write*/ 1, 3, reinterpret_cast<long>(done), sizeof done - 1);
}
