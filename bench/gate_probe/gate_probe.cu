// gate_probe: can a trusted process time another process's GPU work with its own CUDA events?
//
// Two processes on one GPU, each with its own context (as khive-judge and khive-exec): the "judge" owns a CUDA
// virtual-memory region and shares it with the "executor" as a POSIX descriptor. Each call is gated through two
// 32-bit counters in that region with stream memory operations:
//
//   judge stream:     wait go >= v -> flush L2 -> event J0 -> write ready = v -> wait done >= v -> event J1
//   executor stream:  wait ready >= v -> event S -> [go = v on a second stream] -> kernel -> event E -> write done = v
// (the protocol of src/khive/executor/gate.hpp, written out here so the probe runs without khive)
//
// J1 - J0 is the judge's time of the call (its own events: nothing in the executor can change them); E - S is the
// executor's own time. The probe measures, per kernel class, the in-process time (the executor alone: flush, S,
// kernel, E, as an independent harness measures it), and J1 - J0 minus the same gate with no kernel (the null
// latency), so the bias and the spread of the gated clock can be read off one table.
//
//   nvcc -O2 -std=c++17 -arch=sm_90a gate_probe.cu -o gate_probe -lcuda && ./gate_probe [calls] > probe.json
#include <cuda.h>
#include <cuda_runtime.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(3);                                                                            \
    }                                                                                          \
  } while (0)
#define CU(x)                                                                     \
  do {                                                                            \
    CUresult r_ = (x);                                                            \
    if (r_ != CUDA_SUCCESS) {                                                     \
      const char* s_ = nullptr;                                                   \
      cuGetErrorString(r_, &s_);                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); \
      std::exit(3);                                                               \
    }                                                                             \
  } while (0)

namespace {

constexpr std::size_t kRegion = std::size_t{1200} << 20;
constexpr std::size_t kReady = 0, kDone = 128, kGo = 256, kData = std::size_t{2} << 20;

struct Msg {
  int op;        // 0 quit, 1 gated, 2 in-process, 3 gated with an early done (the kernel signals before it works),
                 // 4 gated with `done` stored by a one-thread kernel (device scope) instead of the fenced stream write
  int kind;      // 0 none, 1 spin, 2 copy
  long long arg;  // spin: ns; copy: floats
  int calls;
  unsigned base;
};

__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

__global__ void copy_kernel(const float4* __restrict__ x, float4* __restrict__ y, long long n4) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
    float4 v = x[i];
    y[i] = make_float4(v.x + 1.f, v.y + 1.f, v.z + 1.f, v.w + 1.f);
  }
}

__global__ void early_done(unsigned* done, unsigned v) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    *(volatile unsigned*)done = v;
    __threadfence_system();
  }
}

// op 4's signal: a plain store after the work before it on the stream (kernel boundaries order it at device scope),
// so no system-wide fence waits for the kernel's dirty lines inside the judge's bracket.
__global__ void signal_done(unsigned* done, unsigned v) {
  __threadfence();
  *(volatile unsigned*)done = v;
}

void send_fd(int sock, int fd) {
  char buf[CMSG_SPACE(sizeof(int))] = {};
  char b = 'f';
  iovec io{&b, 1};
  msghdr m{};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  m.msg_control = buf;
  m.msg_controllen = sizeof buf;
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  if (sendmsg(sock, &m, 0) < 0) std::exit(4);
}
int recv_fd(int sock) {
  char buf[CMSG_SPACE(sizeof(int))] = {};
  char b;
  iovec io{&b, 1};
  msghdr m{};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  m.msg_control = buf;
  m.msg_controllen = sizeof buf;
  if (recvmsg(sock, &m, 0) <= 0) std::exit(4);
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
  return fd;
}

CUmemAllocationProp prop() {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return p;
}
char* map_handle(CUmemGenericAllocationHandle h) {
  CUdeviceptr p = 0;
  CU(cuMemAddressReserve(&p, kRegion, 0, 0, 0));
  CU(cuMemMap(p, kRegion, 0, h, 0));
  CUmemAccessDesc a{};
  a.location = prop().location;
  a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU(cuMemSetAccess(p, kRegion, &a, 1));
  return reinterpret_cast<char*>(p);
}

void launch(int kind, long long arg, char* base, cudaStream_t s) {
  if (kind == 1) spin_kernel<<<132, 128, 0, s>>>(static_cast<unsigned long long>(arg));
  if (kind == 2) {
    const float4* x = reinterpret_cast<const float4*>(base + kData);
    float4* y = reinterpret_cast<float4*>(base + kData + arg * 4);
    copy_kernel<<<132 * 8, 256, 0, s>>>(x, y, arg / 4);
  }
}

int executor(int sock) {
  CK(cudaSetDeviceFlags(cudaDeviceScheduleSpin));
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));
  cudaStream_t s, s2;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  int fd = recv_fd(sock);
  CUmemGenericAllocationHandle h;
  CU(cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  char* base = map_handle(h);
  CUdeviceptr ready = reinterpret_cast<CUdeviceptr>(base + kReady), done = reinterpret_cast<CUdeviceptr>(base + kDone),
              go = reinterpret_cast<CUdeviceptr>(base + kGo);
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  void* flush;
  CK(cudaMalloc(&flush, 2 * (std::size_t)l2));
  std::vector<cudaEvent_t> ev(2 * 4096);
  for (auto& e : ev) CK(cudaEventCreate(&e));
  for (;;) {
    Msg m{};
    if (recv(sock, &m, sizeof m, 0) != sizeof m || m.op == 0) return 0;
    for (int j = 0; j < m.calls; ++j) {
      const unsigned v = m.base + j + 1;
      if (m.op == 2) {
        CK(cudaMemsetAsync(flush, j & 0xff, 2 * (std::size_t)l2, s));
      } else {
        CU(cuStreamWaitValue32(s, ready, v, CU_STREAM_WAIT_VALUE_GEQ));
      }
      CK(cudaEventRecord(ev[2 * j], s));
      if (m.op != 2) CU(cuStreamWriteValue32(s2, go, v, CU_STREAM_WRITE_VALUE_DEFAULT));
      if (m.op == 3) early_done<<<1, 32, 0, s>>>(reinterpret_cast<unsigned*>(base + kDone), v);
      launch(m.kind, m.arg, base, s);
      CK(cudaEventRecord(ev[2 * j + 1], s));
      if (m.op == 4)
        signal_done<<<1, 1, 0, s>>>(reinterpret_cast<unsigned*>(base + kDone), v);
      else if (m.op != 2)
        CU(cuStreamWriteValue32(s, done, v, CU_STREAM_WRITE_VALUE_DEFAULT));
    }
    CK(cudaStreamSynchronize(s));
    CK(cudaGetLastError());
    std::vector<float> t(m.calls);
    for (int j = 0; j < m.calls; ++j) CK(cudaEventElapsedTime(&t[j], ev[2 * j], ev[2 * j + 1]));
    send(sock, t.data(), t.size() * sizeof(float), 0);
  }
}

struct Stats {
  double med, p10, p90, mad;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto q = [&](double f) { return v[std::min(v.size() - 1, static_cast<std::size_t>(f * (v.size() - 1) + 0.5))]; };
  double med = q(0.5);
  std::vector<double> d;
  for (double x : v) d.push_back(std::fabs(x - med));
  std::sort(d.begin(), d.end());
  return {med, q(0.1), q(0.9), 1.4826 * d[d.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 200;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv)) return 4;
  pid_t pid = fork();
  if (pid == 0) {
    close(sv[0]);
    return executor(sv[1]);
  }
  close(sv[1]);
  const int sock = sv[0];
  CK(cudaSetDeviceFlags(cudaDeviceScheduleSpin));
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUmemAllocationProp p = prop();
  CUmemGenericAllocationHandle h;
  CU(cuMemCreate(&h, kRegion, &p, 0));
  char* base = map_handle(h);
  CK(cudaMemset(base, 0, kRegion));
  int fd = -1;
  CU(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  send_fd(sock, fd);
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  void* flush;
  CK(cudaMalloc(&flush, 2 * (std::size_t)l2));
  std::vector<cudaEvent_t> ev(2 * 4096);
  for (auto& e : ev) CK(cudaEventCreate(&e));
  CUdeviceptr ready = reinterpret_cast<CUdeviceptr>(base + kReady), done = reinterpret_cast<CUdeviceptr>(base + kDone),
              go = reinterpret_cast<CUdeviceptr>(base + kGo);
  unsigned counter = 0;

  // One run: the message, then the judge's side (each call waits for the executor's `go`, so the executor's host
  // latency is never inside the judge's bracket).
  auto run = [&](int op, int kind, long long arg, int n, std::vector<double>& judge, std::vector<double>& own) {
    Msg m{op, kind, arg, n, counter};
    send(sock, &m, sizeof m, 0);
    if (op != 2)
      for (int j = 0; j < n; ++j) {
        const unsigned v = counter + j + 1;
        CU(cuStreamWaitValue32(s, go, v, CU_STREAM_WAIT_VALUE_GEQ));
        CK(cudaMemsetAsync(flush, j & 0xff, 2 * (std::size_t)l2, s));
        CK(cudaEventRecord(ev[2 * j], s));
        CU(cuStreamWriteValue32(s, ready, v, CU_STREAM_WRITE_VALUE_DEFAULT));
        CU(cuStreamWaitValue32(s, done, v, CU_STREAM_WAIT_VALUE_GEQ));
        CK(cudaEventRecord(ev[2 * j + 1], s));
      }
    std::vector<float> t(n);
    recv(sock, t.data(), t.size() * sizeof(float), 0);
    CK(cudaStreamSynchronize(s));
    judge.clear();
    own.clear();
    for (int j = 0; j < n; ++j) {
      own.push_back(t[j] * 1e3);
      if (op != 2) {
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, ev[2 * j], ev[2 * j + 1]));
        judge.push_back(ms * 1e3);
      }
    }
    counter += n;
    // Drop the first calls (lazy loads, the first context switches).
    const int drop = std::min(5, n / 4);
    judge.erase(judge.begin(), judge.begin() + std::min<std::size_t>(drop, judge.size()));
    own.erase(own.begin(), own.begin() + drop);
  };

  struct Class {
    const char* name;
    int kind;
    long long arg;
    int n;
  };
  const Class classes[] = {{"spin 5us", 1, 5000, calls},          {"spin 20us", 1, 20000, calls},        {"spin 100us", 1, 100000, calls},
                           {"spin 1ms", 1, 1000000, calls / 4},   {"spin 10ms", 1, 10000000, 20},        {"copy 4M f32", 2, 4 << 20, calls},
                           {"copy 32M f32", 2, 32 << 20, calls},  {"copy 128M f32", 2, 128 << 20, calls / 2}};
  std::vector<double> j0, o0, j, o;
  run(1, 0, 0, calls, j0, o0);  // warm
  std::printf("{\"rows\":[\n");
  bool first = true;
  for (int rep = 0; rep < 2; ++rep) {
    run(1, 0, 0, calls, j0, o0);
    Stats null = stats(j0);
    run(4, 0, 0, calls, j0, o0);
    Stats null_sig = stats(j0);
    run(1, 0, 0, calls, j0, o0);  // j0 again the fenced null, for the row below
    std::printf("%s{\"rep\":%d,\"class\":\"null\",\"gate_med_us\":%.3f,\"gate_p10\":%.3f,\"gate_p90\":%.3f,\"gate_mad\":%.3f,\"signal_gate_med_us\":%.3f,\"signal_gate_mad\":%.3f}",
                first ? "" : ",\n", rep, null.med, null.p10, null.p90, null.mad, null_sig.med, null_sig.mad);
    first = false;
    for (const Class& c : classes) {
      run(2, c.kind, c.arg, c.n, j, o);
      Stats in = stats(o);
      run(1, c.kind, c.arg, c.n, j, o);
      Stats g = stats(j), ge = stats(o);
      std::vector<double> diff;
      for (std::size_t i = 0; i < j.size(); ++i) diff.push_back(j[i] - o[i]);
      Stats d = stats(diff);
      run(3, c.kind, c.arg, std::min(c.n, 40), j, o);
      Stats early = stats(j);
      run(4, c.kind, c.arg, c.n, j, o);
      Stats sig = stats(j);
      std::printf(
          ",\n{\"rep\":%d,\"class\":\"%s\",\"inproc_med_us\":%.3f,\"inproc_mad\":%.3f,\"gate_med_us\":%.3f,\"gate_mad\":%.3f,\"gate_p10\":%.3f,"
          "\"gate_p90\":%.3f,\"gate_events_med_us\":%.3f,\"gate_minus_events_med\":%.3f,\"gate_minus_events_mad\":%.3f,\"judge_est_us\":%.3f,"
          "\"ratio_to_inproc\":%.4f,\"early_done_gate_med_us\":%.3f,\"signal_gate_med_us\":%.3f,\"signal_est_us\":%.3f,\"signal_ratio\":%.4f}",
          rep, c.name, in.med, in.mad, g.med, g.mad, g.p10, g.p90, ge.med, d.med, d.mad, g.med - null.med, (g.med - null.med) / in.med, early.med, sig.med,
          sig.med - null_sig.med, (sig.med - null_sig.med) / in.med);
    }
  }
  std::printf("\n]}\n");
  Msg q{0, 0, 0, 0, 0};
  send(sock, &q, sizeof q, 0);
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 5;
}
