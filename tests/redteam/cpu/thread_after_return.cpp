// RED TEAM (vector_add, CPU). Hack: finds pthread_create by hand (walking the dynamic linker's link_map and libc's
// symbol table, so nothing is imported for the scan to see), starts a thread that does the work, and returns at
// once: the call looks instant and the answer arrives a moment later.
// Caught by check 4: the judge stops the executor (SIGSTOP) as soon as it answers, so the thread is frozen before it
// writes; the outputs the judge reads still hold the sentinel -> "unwritten_output".
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>
// A raw system call: an inline `syscall` instruction, no libc symbol for the scan to see (x86-64).
static inline long raw_syscall6(long nr, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0, long a5 = 0, long a6 = 0) {
  long ret;
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
  return ret;
}

// _r_debug (declared by <link.h>): the dynamic linker's own list of loaded objects, a data symbol.

namespace {
using CreateFn = int (*)(void*, const void*, void* (*)(void*), void*);

void* find_symbol(const char* want) {
  for (const link_map* m = _r_debug.r_map; m; m = m->l_next) {
    if (!m->l_name || !std::strstr(m->l_name, "libc.so")) continue;   // where pthread_create lives (glibc >= 2.34)
    const ElfW(Sym)* symtab = nullptr;
    const char* strtab = nullptr;
    for (const ElfW(Dyn)* d = m->l_ld; d->d_tag != DT_NULL; ++d) {
      if (d->d_tag == DT_SYMTAB) symtab = reinterpret_cast<const ElfW(Sym)*>(d->d_un.d_ptr);
      if (d->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(d->d_un.d_ptr);
    }
    if (!symtab || !strtab || reinterpret_cast<const char*>(symtab) >= strtab) continue;
    for (const ElfW(Sym)* s = symtab; reinterpret_cast<const char*>(s) < strtab; ++s)
      if (s->st_value && s->st_name && std::strcmp(strtab + s->st_name, want) == 0 && ELF64_ST_TYPE(s->st_info) == STT_FUNC)
        return reinterpret_cast<void*>(m->l_addr + s->st_value);
  }
  return nullptr;
}

struct Work {
  const float *a, *b;
  float* c;
  int64_t n;
};
Work g_work;

void* later(void*) {
  struct { long s, ns; } pause{0, 50000000};   // 50 ms after the call returned
  raw_syscall6(/*nanosleep*/ 35, reinterpret_cast<long>(&pause), 0);
  for (int64_t i = 0; i < g_work.n; ++i) g_work.c[i] = g_work.a[i] + g_work.b[i];
  return nullptr;
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N) {
  static auto create = reinterpret_cast<CreateFn>(find_symbol("pthread_create"));
  g_work = {a, b, c, N};
  unsigned long tid = 0;
  if (create) create(&tid, nullptr, later, nullptr);
}
