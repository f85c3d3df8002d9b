#!/usr/bin/env python3
"""Check 11's error rates: how often does the guard call a kernel faster than an identical copy of itself (null), and how
often does it see a real 3 % gain (power)?

  null_ab.py KHIVE ROOT BACKEND [--mode null|power] [--seeds S] [--first-seed F] [--classes 5us,20us,500us,5ms]
             [--jobs J] [--time-limit SECONDS] [--out table.md]

For each duration class (bench/null_ab/add: one perf workload per class and backend, ~5 us, ~20 us, ~500 us and ~5 ms
per call) it runs `khive eval` S times with a fresh seed.
  null:  kernel_b against kernel_a as the leader (and, on odd seeds, the other way round: the two are byte-different
         copies of one source, so either direction is a null comparison). A "new leader" is a false positive; the
         guard promises at most 1 % (guard/stats.hpp: exact signed-rank test, Holm over the workloads, 1 % minimum
         effect). Identical kernels must never be called slower either.
  power: kernel_a against kernel_slow (the same add, 3.3 % slower by its own clock) as the leader: a "new leader" is
         a detection; the target is >= 90 % for calls of >= 20 us.
Reported per class: the count and rate with its 95 % Clopper-Pearson bound (upper for false leaders, lower for
detections), the "slower" verdicts, the median A/B ratio on the judge's clock and on the executors' events, and the
median p-value. --time-limit: no evaluation starts after that many seconds (classes take turns seed by seed, so
every class gets about as many), and the table covers what ran (its evaluations column says how many)."""
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

def lower95(k, n):
    """One-sided 95 % Clopper-Pearson lower bound of a binomial rate."""
    return 1.0 - upper95(n - k, n) if n else 0.0

def main():
    khive, root, backend = sys.argv[1:4]
    root = pathlib.Path(root)
    mode = arg("--mode", "null")
    seeds = int(arg("--seeds", "40"))
    first = int(arg("--first-seed", "0"))   # to extend an earlier run with new seeds (its table's counts add up)
    classes = arg("--classes", "5us,20us,500us,5ms").split(",")
    jobs = int(arg("--jobs", "1"))
    out = arg("--out", None)
    limit = float(arg("--time-limit", "0"))   # 0: none
    task = root / "bench/null_ab/add"
    ext = "cu" if backend == "cuda" else "cpp"
    a, b, slow = task / f"kernel_a.{ext}", task / f"kernel_b.{ext}", task / f"kernel_slow.{ext}"

    def one(cls, seed):
        if mode == "power":
            cand, lead = a, slow
        else:
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
    # Seed-major order: a time limit cuts every class about equally.
    work = [(c, s) for s in range(first, first + seeds) for c in classes]
    t_start = time.time()

    def timed_one(cs):
        if limit and time.time() - t_start > limit:
            return cs[0], cs[1], None, "skipped", 0.0
        return one(*cs)

    skipped = 0
    with cf.ThreadPoolExecutor(max_workers=jobs) as ex:
        for cls, seed, j, err, secs in ex.map(timed_one, work):
            if err == "skipped":   # past --time-limit: not an evaluation, not in the table
                skipped += 1
                continue
            results[cls].append((seed, j, err, secs))
            mark = "error" if err else ("LEADER" if j.get("new_leader") else ("backup" if j.get("accepted") else "rejected"))
            detail = ""
            if j and j.get("ab"):   # what decided it, per workload: both clocks, the pairs, the p-value
                x = j["ab"][0]
                ev = x.get("events") or {}
                detail = (f" ratio {x.get('ratio', 0):.4f} events {ev.get('ratio', 0):.4f} pairs {x.get('pairs')} p_faster {x.get('p_faster', 1):.3g}"
                          f" p_slower {x.get('p_slower', 1):.3g}{' SLOWER' if x.get('slower') else ''}")
            elif j and not j.get("accepted"):   # why a copy of an accepted kernel was rejected is the finding
                v = j.get("verdict") or j.get("candidate", {}).get("rejection") or {}
                detail = f" check {v.get('check')} {v.get('reason')}: {str(v.get('message', j.get('harness_error', '')))[:400]}"
            print(f"{cls:6} seed {seed:3}: {mark} ({secs:.1f} s){' ' + err if err else ''}{detail}", flush=True)

    what = "kernel_a vs kernel_b (byte-different copies)" if mode != "power" else "kernel_a vs kernel_slow (3.3 % slower) as the leader"
    bound = "95 % upper bound" if mode != "power" else "95 % lower bound"
    lines = [f"{mode} A/B on {backend}: {what}, {seeds} seeds per class, command: "
             f"bench/null_ab.py KHIVE . {backend} --mode {mode} --seeds {seeds}{f' --first-seed {first}' if first else ''} --classes {','.join(classes)}"
             f"{f' --time-limit {limit:g}' if limit else ''}", "",
             f"| class | per call (median) | evaluations | new leaders | rate | {bound} | called slower | median ratio (judge) | "
             "median ratio (events) | median p (faster) | guard s per eval | errors |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for cls in classes:
        rs = results[cls]
        ok = [j for _, j, e, _ in rs if j and not e and j.get("accepted")]
        leaders = sum(1 for j in ok if j.get("new_leader"))
        slower = sum(1 for j in ok for x in j.get("ab", []) if x.get("slower"))
        ratios = [x["ratio"] for j in ok for x in j.get("ab", [])]
        ev = [x["events"]["ratio"] for j in ok for x in j.get("ab", []) if isinstance(x.get("events"), dict) and "ratio" in x["events"]]
        ps = [x["p_faster"] for j in ok for x in j.get("ab", [])]
        per_call = [w["kernel"]["median_s"] for j in ok for w in j.get("workloads", []) if w.get("kernel")]
        secs = [s for _, j, e, s in rs if j and not e]
        errors = len(rs) - len(ok)
        n = len(ok)
        rate_bound = upper95(leaders, n) if mode != "power" else lower95(leaders, n)
        med = lambda v, f="{:.4f}": f.format(statistics.median(v)) if v else "-"
        lines.append(f"| {cls} | {statistics.median(per_call) * 1e6:.1f} us | {n} | {leaders} | {leaders / max(n, 1) * 100:.1f} % | "
                     f"{rate_bound * 100:.1f} % | {slower} | {med(ratios)} | {med(ev)} | {med(ps, '{:.3g}')} | {med(secs, '{:.1f}')} | {errors} |"
                     if per_call else f"| {cls} | - | {n} | {leaders} | - | - | {slower} | - | - | - | - | {errors} |")
    if skipped:
        lines += ["", f"{skipped} of {len(work)} evaluations not started: past --time-limit {limit:g} s."]
    table = "\n".join(lines) + "\n"
    print(table)
    if out:
        pathlib.Path(out).write_text(table)
    return 0

if __name__ == "__main__":
    sys.exit(main())
