#!/usr/bin/env python3
"""The golden cache does not grow with one-off evaluations: `khive eval` without --seed draws a random seed base and
input secret whose goldens are removed when the evaluation ends; with --seed they are kept for reuse. A second
evaluation with the same seed reuses every golden the first made (it rewrites none of them); it may add goldens
for timed calls beyond the first one's last (the stopping rule decides how many calls are timed).

  golden_cache.py KHIVE ROOT
"""
import os, pathlib, subprocess, sys, tempfile

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
task = root / "tasks/demo-cpu/gemm"
kernel = task / "candidates/blocked_packed.cpp"
with tempfile.TemporaryDirectory(prefix="khive-golden-cache-") as cache:
    env = dict(os.environ, KHIVE_CACHE=cache)

    def files():
        g = pathlib.Path(cache) / "goldens"
        # Dot files are the cache's bookkeeping (.khive-lock, .task: docs/guard.md, "The cache"), not goldens.
        return sorted(p for p in g.rglob("*") if p.is_file() and not p.name.startswith(".")) if g.exists() else []

    def run(*extra):
        r = subprocess.run([khive, "eval", str(task), str(kernel), "--backend", "cpu", "--no-reference", "--no-baselines",
                            "--time-cap", "0.1", *extra], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"FAIL: khive eval {' '.join(extra)} exited {r.returncode}: {r.stdout[-800:]} {r.stderr[-800:]}")

    run()
    run()
    left = files()
    if left:
        sys.exit(f"FAIL: {len(left)} golden file(s) left behind by random-seed evaluations, e.g. {left[0]}")
    run("--seed", "77")
    kept = files()
    if not kept or not all(p.name.startswith("s") for p in kept):
        sys.exit(f"FAIL: a fixed-seed evaluation kept no goldens ({kept[:3]})")
    stamps = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in kept}
    run("--seed", "77")   # reuses them: none is made again
    again = files()
    changed = [p for p in kept if not p.exists() or (p.stat().st_ino, p.stat().st_mtime_ns) != stamps[p]]
    if changed:
        sys.exit(f"FAIL: a second evaluation with the same seed made {len(changed)} of the first one's goldens again, e.g. {changed[0]}")
    # Correctness goldens are named by the correctness seeds (seed base + 1 ..): those the first run made are all there is.
    correctness = lambda fs: {p for p in fs if len(p.name.split(".")[0]) <= 12}   # timed seeds are 20-digit hashes
    if correctness(again) != correctness(kept):
        sys.exit("FAIL: the second evaluation made correctness goldens the first did not")
    print(f"ok: random seeds leave nothing; --seed 77 keeps {len(kept)} golden file(s) and reuses them "
          f"({len(again) - len(kept)} new timed goldens for calls beyond the first run's)")
