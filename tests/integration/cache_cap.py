#!/usr/bin/env python3
"""The cache size policy end to end on the CPU (docs/guard.md, "The cache"): an evaluation over the cap removes
the least recently used golden sets and builds but never its own, and still passes; a golden set held by a live
evaluation (a shared flock on its .khive-lock) is skipped; `khive cache`, `cache prune --max-gb`, `cache clear`;
a malformed KHIVE_CACHE_MAX_GB is an error naming the variable.

  cache_cap.py KHIVE ROOT
"""
import fcntl, json, os, pathlib, subprocess, sys, tempfile

khive, root = sys.argv[1], pathlib.Path(sys.argv[2])
TINY = "0.000001"   # 1 kB: every unit but the current one is over


def fail(msg):
    sys.exit("FAIL: " + msg)


with tempfile.TemporaryDirectory(prefix="khive-cache-cap-") as cache:
    base_env = dict(os.environ, KHIVE_CACHE=cache)
    base_env.pop("KHIVE_CACHE_MAX_GB", None)

    def khive_run(args, cap=None, expect=0):
        env = dict(base_env)
        if cap is not None:
            env["KHIVE_CACHE_MAX_GB"] = cap
        r = subprocess.run([khive, *args], env=env, capture_output=True, text=True)
        if expect is not None and r.returncode != expect:
            fail(f"khive {' '.join(args)} (KHIVE_CACHE_MAX_GB={cap}) exited {r.returncode}, expected {expect}: "
                 f"{r.stdout[-1500:]} {r.stderr[-1500:]}")
        return r

    def evaluate(task, kernel, cap=None, expect=0):
        t = root / "tasks/demo-cpu" / task
        return khive_run(["eval", str(t), str(t / kernel), "--backend", "cpu", "--no-reference", "--no-baselines",
                          "--time-cap", "0.1", "--seed", "77", "--json"], cap, expect)

    def usage():
        return json.loads(khive_run(["cache", "--json"]).stdout)

    def golden_tasks():
        return sorted(g["label"].split()[0] for g in usage()["goldens"])

    def doomed():
        return [p for p in pathlib.Path(cache).rglob("*.doomed-*")]

    evaluate("gemm", "candidates/blocked_packed.cpp", cap="0")
    u1 = usage()
    if golden_tasks() != ["gemm"] or u1["builds"] < 1:
        fail(f"after the gemm evaluation: goldens {golden_tasks()}, {u1['builds']} builds")
    gemm_bytes = u1["capped_bytes"]

    # Over the tiny cap: gemm's goldens and every build but the ones in use go; softmax still passes.
    r = evaluate("softmax", "reference.cpp", cap=TINY)
    rep = json.loads(r.stdout)
    if not rep["accepted"]:
        fail(f"the softmax evaluation under the tiny cap was not accepted: {rep.get('harness_error') or rep['verdict']}")
    if not rep.get("cache_pruned") or "removed 1 golden set" not in rep["cache_pruned"] or "cache over" not in r.stderr:
        fail(f"no pruning line: cache_pruned={rep.get('cache_pruned')!r}, stderr={r.stderr[-500:]!r}")
    if golden_tasks() != ["softmax"]:
        fail(f"after pruning the goldens are {golden_tasks()}, expected only softmax's")
    if doomed():
        fail(f"doomed directories left: {doomed()}")
    print(f"ok: pruned under a 1 kB cap: {rep['cache_pruned']} (gemm's units were {gemm_bytes} bytes)")

    # A second evaluation of gemm re-makes its goldens and passes; softmax's set (now least recently used) goes.
    rep2 = json.loads(evaluate("gemm", "candidates/blocked_packed.cpp", cap=TINY).stdout)
    if not rep2["accepted"] or golden_tasks() != ["gemm"]:
        fail(f"gemm after softmax: accepted={rep2['accepted']}, goldens {golden_tasks()}")

    # A golden set held by a live evaluation is never removed, by the policy or by clear.
    gemm_unit = pathlib.Path(usage()["goldens"][0]["path"])
    with open(gemm_unit / ".khive-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        p = khive_run(["cache", "prune", "--max-gb", TINY])
        if golden_tasks() != ["gemm"] or "in use" not in p.stdout:
            fail(f"prune removed a held golden set or did not say so: {p.stdout!r}, goldens {golden_tasks()}")
        c = khive_run(["cache", "clear"])
        if golden_tasks() != ["gemm"] or "kept 1 in use" not in c.stdout:
            fail(f"clear removed a held golden set or did not say so: {c.stdout!r}")
    c = khive_run(["cache", "clear"])
    u2 = usage()
    if u2["goldens"] or u2["builds"] or u2["capped_bytes"]:
        fail(f"clear left {len(u2['goldens'])} golden sets and {u2['builds']} builds: {c.stdout!r}")
    print(f"ok: held set skipped by prune and clear; then {c.stdout.strip()}")

    # Malformed caps are errors that name the variable or option.
    bad = evaluate("gemm", "candidates/blocked_packed.cpp", cap="20GB", expect=2)
    if "KHIVE_CACHE_MAX_GB" not in bad.stdout + bad.stderr:
        fail(f"a malformed KHIVE_CACHE_MAX_GB did not name the variable: {bad.stdout[-400:]} {bad.stderr[-400:]}")
    bad = khive_run(["cache", "prune", "--max-gb", "-3"], expect=2)
    if "--max-gb" not in bad.stderr:
        fail(f"cache prune --max-gb -3: {bad.stderr!r}")
    print("ok: malformed caps rejected with the variable's name")
