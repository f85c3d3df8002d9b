#!/usr/bin/env python3
"""The null A/B benchmark of check 11: how often does the guard call a kernel faster than an identical copy of itself?

  null_ab.py KHIVE ROOT BACKEND [--seeds S] [--first-seed F] [--classes 5us,500us,5ms] [--jobs J] [--out table.md]

For each duration class (bench/null_ab/add: one perf workload per class and backend, ~5 us, ~500 us and ~5 ms per
call) it runs `khive eval` S times with a fresh seed, kernel_b against kernel_a as the leader (and, on odd seeds,
the other way round: the two are byte-different copies of one source, so either direction is a null comparison).
A "new leader" is a false positive; the guard promises at most 1 % (guard/stats.hpp: exact signed-rank test, Holm
over the workloads, 1 % minimum effect). Reported per class: the false-leader count and rate with its 95 % upper
bound (Clopper-Pearson), the median A/B ratio, and the A/B's p-values."""
import concurrent.futures as cf, json, math, pathlib, statistics, subprocess, sys, time

def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default

def upper95(k, n):
    """One-sided 95 % Clopper-Pearson upper bound of a binomial rate (bisection on the binomial tail)."""
    if k >= n:
        return 1.0
    def tail(p):   # P(X <= k | n, p)
        return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        (lo, hi) = (mid, hi) if tail(mid) > 0.05 else (lo, mid)
    return hi

def main():
    khive, root, backend = sys.argv[1:4]
    root = pathlib.Path(root)
    seeds = int(arg("--seeds", "40"))
    first = int(arg("--first-seed", "0"))   # to extend an earlier run with new seeds (its table's counts add up)
    classes = arg("--classes", "5us,500us,5ms").split(",")
    jobs = int(arg("--jobs", "1"))
    out = arg("--out", None)
    task = root / "bench/null_ab/add"
    ext = "cu" if backend == "cuda" else "cpp"
    a, b = task / f"kernel_a.{ext}", task / f"kernel_b.{ext}"

    def one(cls, seed):
        cand, lead = (b, a) if seed % 2 == 0 else (a, b)
        t0 = time.time()
        r = subprocess.run([khive, "eval", str(task), str(cand), "--leader", str(lead), "--backend", backend, "--seed", str(1000 + seed),
                            "--perf-workloads", f"^{backend}-{cls}$", "--no-reference", "--no-baselines", "--no-pytorch", "--json"],
                           capture_output=True, text=True)
        try:
            j = json.loads(r.stdout)
        except json.JSONDecodeError:
            return cls, seed, None, f"exit {r.returncode}: {r.stderr.strip()[:300]}", time.time() - t0
        return cls, seed, j, None, time.time() - t0

    results = {c: [] for c in classes}
    work = [(c, s) for c in classes for s in range(first, first + seeds)]
    with cf.ThreadPoolExecutor(max_workers=jobs) as ex:
        for cls, seed, j, err, secs in ex.map(lambda cs: one(*cs), work):
            results[cls].append((seed, j, err, secs))
            mark = "error" if err else ("LEADER" if j.get("new_leader") else ("backup" if j.get("accepted") else "rejected"))
            print(f"{cls:6} seed {seed:3}: {mark} ({secs:.1f} s){' ' + err if err else ''}", flush=True)

    lines = [f"null A/B on {backend}: kernel_a vs kernel_b (byte-different copies), {seeds} seeds per class, command: "
             f"bench/null_ab.py KHIVE . {backend} --seeds {seeds}{f' --first-seed {first}' if first else ''} --classes {','.join(classes)}", "",
             "| class | per call (median) | evaluations | false leaders | rate | 95 % upper bound | median A/B ratio | median p (faster) | errors |",
             "|---|---|---|---|---|---|---|---|---|"]
    for cls in classes:
        rs = results[cls]
        ok = [j for _, j, e, _ in rs if j and not e and j.get("accepted")]
        leaders = sum(1 for j in ok if j.get("new_leader"))
        ratios = [x["ratio"] for j in ok for x in j.get("ab", [])]
        ps = [x["p_faster"] for j in ok for x in j.get("ab", [])]
        per_call = [w["kernel"]["median_s"] for j in ok for w in j.get("workloads", []) if w.get("kernel")]
        errors = len(rs) - len(ok)
        n = len(ok)
        lines.append(f"| {cls} | {statistics.median(per_call) * 1e6:.1f} us | {n} | {leaders} | {leaders / max(n, 1) * 100:.1f} % | "
                     f"{upper95(leaders, n) * 100:.1f} % | {statistics.median(ratios) if ratios else float('nan'):.4f} | "
                     f"{statistics.median(ps) if ps else float('nan'):.3f} | {errors} |" if per_call else f"| {cls} | - | {n} | {leaders} | - | - | - | - | {errors} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if out:
        pathlib.Path(out).write_text(table)
    return 0

if __name__ == "__main__":
    sys.exit(main())
