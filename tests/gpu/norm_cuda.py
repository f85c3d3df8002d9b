#!/usr/bin/env python3
"""The norm family's CUDA template (kernels/norm/cuda.cu.in) on the GPU, element by element: for each case (batch,
instance, group, layer norm, RMS over the channels, L1, L2 over rows, a middle axis and everything; fp32 on data far
from zero mean, bf16, fp16; weights per channel, per element and in runs), a task written with its khive.op.norm, the
binding the tuner infers, `khive-tune point` at several points of the path it takes (runs of contiguous elements:
BLOCK, VEC, WAVES; strided groups: BX, SPLIT), each compiled with nvcc and a host harness that runs it twice (the kept
workspace reused) and compares every output to a double-precision reference of the same formula over two sizes.

  norm_cuda.py KHIVE_TUNE ROOT [--build-only]
Exit 0, 1 with the failed cases, 77 (skipped) without nvcc or (unless --build-only) without a GPU.
"""
import concurrent.futures
import json
import os
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from gpu_harness import check_macro, finish, start  # noqa: E402

tune, root, build_only, nvcc = start()


STATS = ["var", "rms", "l2", "mean_abs"]
# name, stat, two size sets, axes, groups, affine axes, weight, bias, eps, data offset, dtype
CASES = [
    ("batch", "var", [[3, 5, 7, 9], [8, 64, 32, 32]], [0, 2, 3], 1, [1], True, True, 1e-5, 300.0, "float32"),
    ("batch_odd", "var", [[5, 3, 7, 11], [16, 8, 33, 31]], [0, 2, 3], 1, [1], True, True, 1e-5, 3.0, "float32"),
    ("batch1d", "var", [[7, 5], [3000, 3]], [0], 1, [1], True, True, 1e-3, 2.0, "float32"),
    ("instance", "var", [[2, 3, 10, 11], [4, 16, 64, 64]], [2, 3], 1, [], False, False, 1e-5, 3.0, "float32"),
    ("group", "var", [[2, 8, 5, 7], [4, 64, 32, 32]], [1, 2, 3], 8, [1], True, True, 1e-5, 10.0, "float32"),
    ("group_bf16", "var", [[2, 8, 6, 4], [4, 64, 32, 32]], [1, 2, 3], 4, [1], True, True, 1e-5, 1.0, "bfloat16"),
    ("layer", "var", [[3, 4, 6, 5], [4, 64, 64, 64]], [1, 2, 3], 1, [1, 2, 3], True, True, 1e-5, 300.0, "float32"),
    ("layer_bias_f16", "var", [[5, 37], [64, 4096]], [1], 1, [1], False, True, 1e-5, 1.0, "float16"),
    ("rms_channels", "rms", [[2, 6, 5, 7], [4, 64, 64, 64]], [1], 1, [], False, False, 1e-5, 0.5, "float32"),
    ("rms_channels_bf16", "rms", [[3, 7, 5, 3], [8, 64, 32, 33]], [1], 1, [], False, False, 1e-5, 0.5, "bfloat16"),
    ("mean_abs_rows", "mean_abs", [[4, 300], [512, 65535]], [1], 1, [], False, False, 0.0, 0.0, "float32"),
    ("l2_rows", "l2", [[4, 300], [512, 65535]], [1], 1, [], False, False, 0.0, 0.0, "float32"),
    ("l2_all", "l2", [[3, 4, 50, 60], [16, 64, 128, 128]], [0, 1, 2, 3], 1, [], False, False, 0.0, 0.25, "float32"),
    ("l2_middle", "l2", [[3, 40, 6], [5, 7, 100]], [1], 1, [], False, False, 0.5, 0.0, "float32"),
    ("var_middle", "var", [[4, 30, 7], [3, 1500, 9]], [1], 1, [], False, False, 1e-5, 50.0, "float32"),
    ("batch1d_bare", "var", [[7, 5], [3000, 3]], [0], 1, [], False, False, 1e-3, 2.0, "float32"),
]
POINTS_RUNS = [{}, {"VEC": "1"}, {"BLOCK": "1024", "WAVES": "1"}, {"BLOCK": "128", "VEC": "2", "WAVES": "8"}]
POINTS_STRIDED = [{}, {"BX": "32", "SPLIT": "8"}, {"BX": "256", "SPLIT": "2", "WAVES": "1"}]

# The GPU side of tests/unit/tuner/norm_harness.inc (the element-by-element check, shared with the CPU unit test):
# the set copied to the device, khive_launch twice (the kept workspace reused), then 10 timed calls, y copied back.
RUN_SET = r"""
#include <cstdio>
#include <vector>
""" + check_macro("false") + r"""
template <class X, class W>
bool run_set(std::vector<X>& x, std::vector<W>& w, std::vector<W>& b, std::vector<X>& y, const long* d) {
  X *dx, *dy;
  W *dw, *db;
  CK(cudaMalloc(&dx, x.size() * sizeof(X)));
  CK(cudaMalloc(&dy, y.size() * sizeof(X)));
  CK(cudaMalloc(&dw, w.size() * sizeof(W)));
  CK(cudaMalloc(&db, b.size() * sizeof(W)));
  CK(cudaMemcpy(dx, x.data(), x.size() * sizeof(X), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dy, y.data(), y.size() * sizeof(X), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dw, w.data(), w.size() * sizeof(W), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, b.data(), b.size() * sizeof(W), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 2; ++rep) CALL;
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaEventRecord(e0));
  for (int rep = 0; rep < 10; ++rep) CALL;
  CK(cudaEventRecord(e1));
  CK(cudaEventSynchronize(e1));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  CK(cudaMemcpy(y.data(), dy, y.size() * sizeof(X), cudaMemcpyDeviceToHost));
  cudaFree(dx); cudaFree(dy); cudaFree(dw); cudaFree(db);
  std::printf("%ld elements: %.1f us per call\n", (long)x.size(), ms * 100.0);
  return true;
}
"""
HARNESS = RUN_SET + (root / "tests/unit/tuner/norm_harness.inc").read_text()


def task_dir(base, case):
    name, stat, sets, axes, groups, affine, w, b, eps, offset, dtype = case
    shape = [f"A{i}" for i in range(len(sets[0]))]
    inputs, operands = {"x": {"shape": shape, "dtype": dtype}}, {"x": "x"}
    for role, given in (("weight", w), ("bias", b)):
        if given:
            inputs[role] = {"shape": [f"A{i}" for i in affine], "dtype": dtype}
            operands[role] = role
    norm = {"stat": stat, "axes": axes, "groups": groups, "eps": eps}
    if affine:
        norm["affine_axes"] = affine
    d = base / "gpu" / name
    d.mkdir(parents=True)
    (d / "definition.json").write_text(json.dumps({
        "name": name, "axes": {a: {"type": "var"} for a in shape}, "inputs": inputs,
        "outputs": {"y": {"shape": shape, "dtype": dtype}},
        "khive": {"op": {"op": "norm", "family": "norm", "norm": norm, "operands": operands}}}))
    (d / "workload.jsonl").write_text("".join(json.dumps({"uuid": f"w{i}", "axes": dict(zip(shape, s))}) + "\n"
                                              for i, s in enumerate(sets)))
    return d


def defines(case):
    name, stat, sets, axes, groups, affine, w, b, eps, offset, dtype = case
    rank = len(sets[0])
    call = ("khive_launch(dx" + (", dw" if w else "") + (", db" if b else "") + ", dy" +
            "".join(f", d[{a}]" for a in range(rank)) + ", 0)")
    return (f"#define NSETS {len(sets)}\n#define RANK {rank}\n"
            f"#define SIZES {', '.join('{' + ', '.join(map(str, s)) + '}' for s in sets)}\n"
            f"#define REDUCED {', '.join('1' if a in axes else '0' for a in range(rank))}\n#define GROUPS {groups}\n"
            f"#define STAT {STATS.index(stat)}\n#define AFF_LO {affine[0] if affine else 0}\n"
            f"#define AFF_HI {affine[-1] if affine else -1}\n#define HAS_W {int(w)}\n#define HAS_B {int(b)}\n"
            f"#define EPS {eps!r}\n#define OFFSET {offset!r}\n"
            f"#define TOL {'(1e-4 + 1e-6 * OFFSET)' if dtype == 'float32' else '1e-2'}\n#define CALL {call}\n")


def main():
    failures, sources = [], []
    with tempfile.TemporaryDirectory(prefix="khive-norm-cuda-") as t:
        tmp = pathlib.Path(t)
        for case in CASES:
            d = task_dir(tmp, case)

            def render(point, out):
                args = [tune, "point", str(d), "--backend", "cuda", "--template", "norm.cuda", "--out", str(out)]
                for k, v in point.items():
                    args += ["--set", f"{k}={v}"]
                r = subprocess.run(args, capture_output=True, text=True)
                if r.returncode != 0:
                    failures.append(f"{case[0]} {point}: khive-tune point: {r.stderr.strip()[-500:]}")
                    return None
                return out.read_text()
            first = render({}, tmp / "probe.cu")
            if first is None:
                continue
            strided = "constexpr bool KHIVE_REDUCE_MID = true;" in first
            for point in POINTS_STRIDED if strided else POINTS_RUNS:
                tag = "-".join(f"{k}{v}" for k, v in point.items()) or "default"
                src = render(point, tmp / "k.cu")
                if src is None:
                    continue
                cu = tmp / f"{case[0]}__{tag}.cu"
                cu.write_text("#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
                              "#include <cstdint>\n" + src + "\n" + defines(case) + HARNESS)
                sources.append(cu)

        def build(cu):
            r = subprocess.run([nvcc, "-std=c++17", "-arch=sm_90a", "-O3", "-w", "-o", str(cu.with_suffix("")), str(cu)],
                               capture_output=True, text=True)
            return cu, r
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            built = list(pool.map(build, sources))
        for cu, r in built:
            if r.returncode != 0:
                failures.append(f"{cu.stem}: nvcc failed: {(r.stdout + r.stderr).strip()[-1500:]}")
                continue
            if build_only:
                print(f"{cu.stem}: built")
                continue
            run = subprocess.run([str(cu.with_suffix(""))], capture_output=True, text=True, timeout=300)
            lines = run.stdout.strip().splitlines()
            print(f"{cu.stem}: {' | '.join(lines[-3:])}")
            if run.returncode != 0 or not lines or not lines[-1].startswith("bad 0 "):
                failures.append(f"{cu.stem}: exit {run.returncode}\n{run.stdout[-1500:]}{run.stderr[-500:]}")
    return finish(sources, failures, build_only)


if __name__ == "__main__":
    sys.exit(main())
