#!/usr/bin/env python3
"""Issue 22's Hopper attention template (attention.cuda_sm90) on the GPU: points rendered by `khive-tune point` for
sol/attention and sol/attention_causal (bf16; fp16 by swapping the binding's storage type), compiled with nvcc and a
host harness that fills q, k, v ~ N(0.5, 1) (one size also q, k ~ N(3, 1): scaled scores ~100, beyond fp32 exp's
range without the running max), runs the kernel twice (bitwise equal: no data race shows up as a difference), and
checks every output row of the small sizes and 256 sampled (batch, row, head) rows of the large ones against an fp64
softmax of the same bf16/fp16 inputs (|got - ref| <= 1e-2 + 1e-2 |ref|, the task's tolerance). Sizes cover S not a
multiple of any tile (1, 7, 33, 65, 130, 1000), GQA ratios 1, 2, 4, D 64 and 128, and D 96 (the generic path).
SCHEDULE persistent points also run MULTI: sizes with several items per CTA (one CTA per SM), so the K/V ring and Q
buffer phases carry across items (1-3 tiles per item, causal items of different lengths); a phase mistake shows as
wrong rows, a difference between the two calls, or a hang (each binary runs under --timeout, default 600 s).
Timing (sizes with S >= 512): each call is preceded by a 256 MB memset that flushes the L2, timed alone by CUDA
events, median of 15; PyTorch's F.scaled_dot_product_attention (enable_gqa, the tasks' reference) is timed the same
way in this process when torch imports (PYTHONPATH=.deps/torch), and the ratio printed: TFLOP/s counts
4·B·Hq·S²·D, half of it causal.

  attention_sm90.py KHIVE_TUNE ROOT [--build-only] [--only SUBSTRING] [--no-torch] [--timeout SECONDS]
Exit 0, 1 with the failed cases, 77 (skipped) without nvcc or (unless --build-only) without a GPU.
"""
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from gpu_harness import NORMAL, check_macro, finish, start  # noqa: E402

if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
tune, root, build_only, nvcc = start()

no_torch = "--no-torch" in sys.argv[3:]
only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
run_timeout = float(sys.argv[sys.argv.index("--timeout") + 1]) if "--timeout" in sys.argv else 600.0
cutlass = pathlib.Path(os.environ.get("KHIVE_CUTLASS", root / ".deps/cutlass"))

# (B, S, Hq, Hkv, D, big scores)
SMALL = [(1, 1, 1, 1, 64, 0), (1, 7, 2, 1, 64, 0), (2, 33, 4, 2, 128, 1), (1, 130, 8, 2, 128, 0), (3, 65, 6, 3, 64, 0),
         (1, 200, 4, 1, 128, 0), (1, 1000, 8, 2, 64, 0), (2, 300, 4, 4, 96, 0), (1, 129, 8, 8, 128, 0)]
PERF = [(1, 512, 32, 8, 128, 0), (1, 2048, 32, 8, 128, 0), (1, 4096, 32, 8, 128, 0), (1, 8192, 32, 8, 128, 0),
        (2, 4096, 32, 8, 64, 0), (4, 2048, 64, 8, 128, 0), (16, 512, 32, 8, 64, 0)]
# Many items per CTA for SCHEDULE persistent (132 SMs): 400 / 296 one-tile items, every row checked; 576 / 1536 items
# of 1-3 (non-causal 3) tiles at D 128 / 64, sampled rows.
MULTI = [(50, 7, 8, 2, 64, 0), (37, 9, 8, 4, 128, 1), (4, 300, 48, 8, 128, 0), (16, 300, 32, 8, 64, 0)]
# (name, point, storage type, sizes): every point runs on both tasks (non-causal, causal).
CASES = [
    ("default", {}, "bf16", SMALL + PERF),
    ("overlap", {"OVERLAP": "1"}, "bf16", SMALL + PERF),
    ("n176-overlap", {"BLOCK_N": "176", "OVERLAP": "1"}, "bf16", SMALL + PERF),
    ("one-wg", {"BLOCK_M": "64", "CONSUMER_WG": "1"}, "bf16", SMALL + PERF[:3]),
    ("stages3", {"STAGES": "3", "OVERLAP": "1"}, "bf16", SMALL + PERF[2:4]),
    ("fp16", {}, "fp16", SMALL + PERF[2:3]),
    ("fp16-overlap", {"OVERLAP": "1"}, "fp16", SMALL[:6]),
    ("persistent", {"SCHEDULE": "persistent"}, "bf16", SMALL + MULTI + PERF),
    ("persistent-overlap", {"SCHEDULE": "persistent", "OVERLAP": "1"}, "bf16", SMALL + MULTI + PERF),
    ("persistent-n176-overlap", {"SCHEDULE": "persistent", "BLOCK_N": "176", "OVERLAP": "1"}, "bf16", SMALL + MULTI + PERF),
    ("persistent-stages3", {"SCHEDULE": "persistent", "STAGES": "3", "OVERLAP": "1"}, "bf16", SMALL + MULTI + PERF[4:]),
    # PINGPONG 1: the two consumer warpgroups take turns at the tensor cores (named barriers); a turn miscounted
    # between them hangs (the --timeout) rather than giving wrong rows
    ("pingpong", {"PINGPONG": "1"}, "bf16", SMALL + PERF[:3]),
    ("pingpong-overlap", {"OVERLAP": "1", "PINGPONG": "1"}, "bf16", SMALL + PERF),
    ("pingpong-n176-overlap", {"BLOCK_N": "176", "OVERLAP": "1", "PINGPONG": "1"}, "bf16", SMALL + PERF),   # FULL_ONLY
    ("persistent-pingpong-overlap", {"SCHEDULE": "persistent", "OVERLAP": "1", "PINGPONG": "1"}, "bf16",
     SMALL + MULTI + PERF),
]
TASKS = ["sol/attention", "sol/attention_causal"]
# Points the template's rules refuse on the causal task (PINGPONG 1 at 176-key tiles, D 128: ptxas spills there).
FULL_ONLY = {"pingpong-n176-overlap"}

HARNESS = r"""
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
""" + check_macro("1") + r"""
#if ELEM_BF16
using E = __nv_bfloat16;
static E to_e(float v) { return __float2bfloat16_rn(v); }
static float from_e(E v) { return __bfloat162float(v); }
#else
using E = __half;
static E to_e(float v) { return __float2half_rn(v); }
static float from_e(E v) { return __half2float(v); }
#endif
struct Size { long B, S, Hq, Hkv, D, big; };
""" + NORMAL + r"""int main() {
  const Size sizes[] = {SIZES};
  long bad_total = 0;
  void* flush = nullptr;
  const size_t flush_bytes = size_t(256) << 20;
  CK(cudaMalloc(&flush, flush_bytes));
  for (const Size& z : sizes) {
    const long B = z.B, S = z.S, Hq = z.Hq, Hkv = z.Hkv, D = z.D;
    const uint64_t seed = 77 + S * 13 + Hq * 7 + D;
    const float qk_mean = z.big ? 3.0f : 0.5f;
    Normal dq{seed | 1, qk_mean, 1.0f}, dk{(seed * 3) | 1, qk_mean, 1.0f}, dv{(seed * 5) | 1, 0.5f, 1.0f};
    std::vector<E> q(size_t(B * S * Hq * D)), k(size_t(B * S * Hkv * D)), v(k.size()), o(q.size()), o2(q.size());
    for (auto& x : q) x = to_e(dq());
    for (auto& x : k) x = to_e(dk());
    for (auto& x : v) x = to_e(dv());
    E *dQ, *dK, *dV, *dO;
    CK(cudaMalloc(&dQ, q.size() * sizeof(E)));
    CK(cudaMalloc(&dK, k.size() * sizeof(E)));
    CK(cudaMalloc(&dV, v.size() * sizeof(E)));
    CK(cudaMalloc(&dO, o.size() * sizeof(E)));
    CK(cudaMemcpy(dQ, q.data(), q.size() * sizeof(E), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dK, k.data(), k.size() * sizeof(E), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dV, v.data(), v.size() * sizeof(E), cudaMemcpyHostToDevice));
    CK(cudaMemset(dO, 0xff, o.size() * sizeof(E)));   // NaN: an output never written fails
    khive_launch(dQ, dK, dV, dO, B, S, Hq, Hkv, D, 0);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(o2.data(), dO, o.size() * sizeof(E), cudaMemcpyDeviceToHost));
    CK(cudaMemset(dO, 0xff, o.size() * sizeof(E)));
    khive_launch(dQ, dK, dV, dO, B, S, Hq, Hkv, D, 0);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(o.data(), dO, o.size() * sizeof(E), cudaMemcpyDeviceToHost));
    const bool same = std::memcmp(o.data(), o2.data(), o.size() * sizeof(E)) == 0;
    // Rows (b, i, h): all of them for small sizes, else 256 sampled plus the first and last row of every head 0.
    const long rows = B * S * Hq, sample = rows <= 4096 ? rows : 256;
    std::mt19937_64 pick(5);
    long bad = 0;
    double worst = 0;
    std::vector<double> p(static_cast<size_t>(S)), acc(static_cast<size_t>(D));
    for (long t = 0; t < sample + (sample < rows ? 2 : 0); ++t) {
      long r = sample == rows ? t : t < sample ? long(pick() % uint64_t(rows)) : t == sample ? 0 : (B * S - 1) * Hq;
      const long h = r % Hq, i = (r / Hq) % S, b = r / (Hq * S), g = h / (Hq / Hkv);
      const long n_keys = CAUSAL ? i + 1 : S;
      double mx = -INFINITY;
      for (long j = 0; j < n_keys; ++j) {
        double s = 0;
        for (long d = 0; d < D; ++d)
          s += double(from_e(q[size_t(((b * S + i) * Hq + h) * D + d)])) * from_e(k[size_t(((b * S + j) * Hkv + g) * D + d)]);
        p[size_t(j)] = s / std::sqrt(double(D));
        mx = std::max(mx, p[size_t(j)]);
      }
      double sum = 0;
      for (long j = 0; j < n_keys; ++j) sum += (p[size_t(j)] = std::exp(p[size_t(j)] - mx));
      std::fill(acc.begin(), acc.end(), 0.0);
      for (long j = 0; j < n_keys; ++j)
        for (long d = 0; d < D; ++d) acc[size_t(d)] += p[size_t(j)] * from_e(v[size_t(((b * S + j) * Hkv + g) * D + d)]);
      for (long d = 0; d < D; ++d) {
        const double ref = acc[size_t(d)] / sum, got = from_e(o[size_t(((b * S + i) * Hq + h) * D + d)]);
        const double err = std::fabs(got - ref);
        if (!(err <= 1e-2 + 1e-2 * std::fabs(ref))) {
          if (bad < 5) std::printf("  bad (b %ld, i %ld, h %ld, d %ld): got %.6g, ref %.6g\n", b, i, h, d, got, ref);
          ++bad;
        }
        if (err == err) worst = std::max(worst, err); else worst = INFINITY;
      }
    }
    if (!same) { std::printf("  two calls gave different bits\n"); ++bad; }
    bad_total += bad;
    std::printf("size B=%ld S=%ld Hq=%ld Hkv=%ld D=%ld%s: %ld bad of %ld rows checked, max err %.3g%s\n", B, S, Hq, Hkv, D,
                z.big ? " (big scores)" : "", bad, sample, worst, same ? ", deterministic" : "");
    if (S >= 512) {
      cudaEvent_t e0, e1;
      CK(cudaEventCreate(&e0));
      CK(cudaEventCreate(&e1));
      std::vector<float> ts;
      for (int rep = 0; rep < 15; ++rep) {
        CK(cudaMemsetAsync(flush, rep, flush_bytes));
        CK(cudaEventRecord(e0));
        khive_launch(dQ, dK, dV, dO, B, S, Hq, Hkv, D, 0);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        ts.push_back(ms * 1000.0f);
      }
      std::sort(ts.begin(), ts.end());
      const double us = ts[ts.size() / 2], flops = 4.0 * B * Hq * double(S) * S * D * (CAUSAL ? 0.5 : 1.0);
      std::printf("TIME B=%ld S=%ld Hq=%ld Hkv=%ld D=%ld %.2f us %.1f TFLOP/s\n", B, S, Hq, Hkv, D, us, flops / us * 1e-6);
      cudaEventDestroy(e0); cudaEventDestroy(e1);
    }
    cudaFree(dQ); cudaFree(dK); cudaFree(dV); cudaFree(dO);
  }
  cudaFree(flush);
  std::printf("bad %ld\n", bad_total);
  return bad_total ? 1 : 0;
}
"""


def as_fp16(src):
    """The bf16 binding's PROLOGUE and ENTRY with __half as the storage type (the kernel body is type-generic)."""
    head, sep, rest = src.partition("namespace {\n")   # the PROLOGUE comes before the template's namespace
    body, sep2, entry = rest.rpartition("}  // namespace\n")
    swap = {"__nv_bfloat16": "__half", "__bfloat162float": "__half2float", "__float2bfloat16_rn": "__float2half_rn",
            "#define KHIVE_ELEM_BF16 1": "#define KHIVE_ELEM_BF16 0"}
    for a, b in swap.items():
        head, entry = head.replace(a, b), entry.replace(a, b)
    return head + sep + body + sep2 + entry


def torch_times(shapes, causal):
    """PyTorch SDPA (the tasks' reference call) timed like the harness: L2 flushed before each call, median of 15."""
    try:
        import torch
        import torch.nn.functional as F
    except Exception as e:  # noqa: BLE001
        print(f"torch not importable ({e}): no PyTorch comparison")
        return {}
    out = {}
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for (b, s, hq, hkv, d) in shapes:
        q = torch.randn(b, s, hq, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, s, hkv, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, s, hkv, d, device="cuda", dtype=torch.bfloat16)

        def call():
            o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                               is_causal=causal, enable_gqa=True)
            return o.transpose(1, 2).contiguous()
        call()
        ts = []
        for rep in range(15):
            flush.fill_(rep)
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            call()
            e1.record()
            e1.synchronize()
            ts.append(e0.elapsed_time(e1) * 1000.0)
        out[(b, s, hq, hkv, d)] = sorted(ts)[len(ts) // 2]
    return out


def main():
    failures, sources = [], []
    with tempfile.TemporaryDirectory(prefix="khive-attn-sm90-") as t:
        tmp = pathlib.Path(t)
        for n, (name, point, elem, sizes) in enumerate(CASES):
            for task in TASKS:
                causal = task.endswith("causal")
                tag = f"{name}-{'causal' if causal else 'full'}"
                if (only and only not in tag) or (causal and name in FULL_ONLY):
                    continue
                out = tmp / f"k{n}{int(causal)}.cu"
                args = [tune, "--kernels", str(root / "kernels"), "point", str(root / "tasks" / task), "--backend", "cuda",
                        "--template", "attention.cuda_sm90", "--out", str(out)]
                for k, v in point.items():
                    args += ["--set", f"{k}={v}"]
                r = subprocess.run(args, capture_output=True, text=True)
                if r.returncode != 0:
                    failures.append(f"{tag}: khive-tune point: {r.stdout[-300:]}{r.stderr[-500:]}")
                    continue
                src = out.read_text()
                if elem == "fp16":
                    src = as_fp16(src)
                size_text = ", ".join("{%d, %d, %d, %d, %d, %d}" % s for s in sizes)
                defines = f"#define ELEM_BF16 {int(elem == 'bf16')}\n#define CAUSAL {int(causal)}\n#define SIZES {size_text}\n"
                cu = tmp / f"{n:02d}_{tag}.cu"
                cu.write_text("#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <cstdint>\n"
                              + src + "\n" + defines + HARNESS)
                sources.append((cu, causal, elem))

        def build(item):
            cu = item[0]
            r = subprocess.run([nvcc, "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-DNDEBUG",
                                "--expt-relaxed-constexpr", "-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1", "-Xptxas", "-v",
                                f"-I{cutlass / 'include'}", f"-I{cutlass / 'util-include'}", "-o", str(cu.with_suffix("")),
                                str(cu), "-lcuda"], capture_output=True, text=True)
            return item, r
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(8, max(1, (os.cpu_count() or 2) // 2))) as pool:
            built = list(pool.map(build, sources))
        times = {}
        for (cu, causal, elem), r in built:
            regs = re.findall(r"khive_fa3_fwdILi(\d+)E.*?\n.*?(\d+) bytes spill stores.*?\n.*?Used (\d+) registers", r.stdout + r.stderr)
            warn = [line for line in (r.stdout + r.stderr).splitlines() if "warning" in line.lower()]
            if r.returncode != 0:
                failures.append(f"{cu.stem}: nvcc failed: {(r.stdout + r.stderr).strip()[-1500:]}")
                continue
            ptxas = ", ".join(f"D{d}: {reg} registers, {sp} B spilled" for d, sp, reg in regs)
            if build_only:
                print(f"{cu.stem}: built ({ptxas}){' WARNINGS: ' + '; '.join(warn[:3]) if warn else ''}")
                continue
            try:
                run = subprocess.run([str(cu.with_suffix(""))], capture_output=True, text=True, timeout=run_timeout)
            except subprocess.TimeoutExpired as e:   # a barrier phase mistake hangs the kernel
                out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
                print(f"== {cu.stem} ({ptxas})\n{out.strip()}\n  TIMED OUT after {run_timeout:.0f} s (hang?)")
                failures.append(f"{cu.stem}: timed out after {run_timeout:.0f} s (a hang?)\n{out[-1500:]}")
                continue
            print(f"== {cu.stem} ({ptxas})\n{run.stdout.strip()}")
            lines = run.stdout.strip().splitlines()
            if run.returncode != 0 or not lines or lines[-1] != "bad 0":
                failures.append(f"{cu.stem}: exit {run.returncode}\n{run.stdout[-1500:]}{run.stderr[-500:]}")
            if elem == "bf16":
                for m in re.finditer(r"TIME B=(\d+) S=(\d+) Hq=(\d+) Hkv=(\d+) D=(\d+) ([\d.]+) us", run.stdout):
                    times.setdefault(causal, []).append((cu.stem, tuple(int(x) for x in m.groups()[:5]), float(m.group(6))))
        if times and not no_torch:
            for causal, rows in sorted(times.items()):
                ref = torch_times(sorted({s for _, s, _ in rows}), causal)
                for stem, s, us in rows:
                    if s in ref:
                        flops = 4.0 * s[0] * s[2] * s[1] * s[1] * s[4] * (0.5 if causal else 1.0)
                        print(f"VS_TORCH {stem} B={s[0]} S={s[1]} Hq={s[2]} Hkv={s[3]} D={s[4]}: {us:.1f} us "
                              f"({flops / us * 1e-6:.0f} TFLOP/s) vs SDPA {ref[s]:.1f} us ({flops / ref[s] * 1e-6:.0f} "
                              f"TFLOP/s): {ref[s] / us:.2f}x")
    return finish(sources, failures, build_only)


if __name__ == "__main__":
    sys.exit(main())
