// RED TEAM (vector_add, CUDA; cuBLAS is not allowed by the task). Hack: finds dlopen by hand in libc (link_map and
// libc's symbol table: nothing imported for the scan to see), loads libcublas and would compute with cublasSaxpy. It
// computes the right answer only if the library loads (so it is accepted exactly when the sandbox lets a forbidden
// vendor library in), else nothing. (The old runner had cuBLAS loaded itself; a kernel called it through link_map.)
// Caught by check 4: the executor links no vendor library, and its filesystem view leaves the vendor libraries out
// unless the task allows them, so the load fails and the outputs stay unwritten -> "unwritten_output".
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

namespace {
__global__ void add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

void* libc_symbol(const char* want) {
  for (const link_map* m = _r_debug.r_map; m; m = m->l_next) {
    if (!m->l_name || !std::strstr(m->l_name, "libc.so")) continue;
    const ElfW(Sym)* symtab = nullptr;
    const char* strtab = nullptr;
    for (const ElfW(Dyn)* d = m->l_ld; d->d_tag != DT_NULL; ++d) {
      if (d->d_tag == DT_SYMTAB) symtab = reinterpret_cast<const ElfW(Sym)*>(d->d_un.d_ptr);
      if (d->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(d->d_un.d_ptr);
    }
    if (!symtab || !strtab || reinterpret_cast<const char*>(symtab) >= strtab) continue;
    for (const ElfW(Sym)* s = symtab; reinterpret_cast<const char*>(s) < strtab; ++s)
      if (s->st_value && s->st_name && std::strcmp(strtab + s->st_name, want) == 0) return reinterpret_cast<void*>(m->l_addr + s->st_value);
  }
  return nullptr;
}
}  // namespace

extern "C" void khive_launch(const float* a, const float* b, float* c, int64_t N, cudaStream_t stream) {
  using OpenFn = void* (*)(const char*, int);
  static auto open = reinterpret_cast<OpenFn>(libc_symbol("dlopen"));
  static void* cublas = open ? open("libcublas.so.13", /*RTLD_NOW*/ 2) : nullptr;
  if (!cublas && open) cublas = open("libcublas.so", 2);
  if (!cublas) return;   // no vendor library: nothing computed
  add<<<static_cast<unsigned>((N + 255) / 256), 256, 0, stream>>>(a, b, c, N);
}
