#!/usr/bin/env python3
"""Runs kernels through `khive eval --json` and checks the guard's verdicts.

  guard_cases.py redteam KHIVE ROOT BACKEND [--table OUT.md]   every planted kernel rejected with its reason
  guard_cases.py honest  KHIVE ROOT BACKEND SUITE              every reference and candidate accepted

Exit 77 (ctest: skipped) when BACKEND is cuda and no GPU is visible."""
import concurrent.futures as cf, json, os, pathlib, shutil, subprocess, sys, time

def gpu_present():
    smi = shutil.which("nvidia-smi")
    return bool(smi) and subprocess.run([smi, "-L"], capture_output=True).returncode == 0

def run_eval(khive, task, kernel, backend, extra=()):
    t0 = time.time()
    r = subprocess.run([khive, "eval", str(task), str(kernel), "--backend", backend, "--json", "--seeds", "2",
                        "--no-reference", "--no-baselines", *extra], capture_output=True, text=True)
    try:
        j = json.loads(r.stdout)
    except json.JSONDecodeError:
        j = None
    return r.returncode, j, r.stderr, time.time() - t0

def harness_error(j, err):
    """What an eval that gave no verdict said: its stderr, else the error fields of its JSON."""
    if err.strip():
        return err.strip()[-300:]
    found = []
    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if k in ("error", "harness_error") and v:
                    found.append(str(v))
                else:
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(j)
    return "; ".join(found)[:300] or "(no message)"

def main():
    mode, khive, root, backend = sys.argv[1:5]
    root = pathlib.Path(root)
    if backend == "cuda" and not gpu_present():
        print("no GPU visible: skipping the CUDA cases")
        return 77
    failures, rows = [], []
    if mode == "redteam":
        table = sys.argv[sys.argv.index("--table") + 1] if "--table" in sys.argv else None
        cases = [c for c in json.loads((root / "tests/redteam/expectations.json").read_text()) if c["backend"] == backend]
        def one(c):
            rc, j, err, secs = run_eval(khive, root / c["task"], root / "tests/redteam" / c["kernel"], backend, ["--timeout", "40"])
            return c, rc, j, err, secs
        with cf.ThreadPoolExecutor(max_workers=int(os.environ.get("REDTEAM_JOBS", "1" if backend == "cuda" else "2"))) as ex:
            results = list(ex.map(one, cases))
        for c, rc, j, err, secs in results:
            v = (j or {}).get("verdict") or {}
            got = f"check {v.get('check')} {v.get('reason')}" if v else ("accepted" if j and j.get("accepted") else f"exit {rc}: {harness_error(j, err)}")
            if c.get("expect") == "accepted":   # an honest control, or an attack the design makes pointless
                expected, ok = "accepted", rc == 0 and bool(j) and j.get("accepted")
            else:
                want = c["reason"].split("|")
                expected = f"{c['check']} {c['reason']}"
                ok = rc == 1 and v.get("reason") in want and (v.get("check") == c["check"] or len(want) > 1)
            rows.append((c["kernel"], c["why"], expected, got, v.get("message", "")[:140], ok, secs))
            if not ok:
                failures.append(f"{c['kernel']}: expected {expected}, got {got}")
        lines = ["| kernel | hack or fault | expected | verdict | guard's message | ok | s |", "|---|---|---|---|---|---|---|"]
        for k, why, exp, got, msg, ok, secs in rows:
            msg = msg.replace("|", "\\|")
            lines.append(f"| {k} | {why} | {exp} | {got} | {msg} | {'yes' if ok else 'NO'} | {secs:.1f} |")
        print("\n".join(lines))
        if table:
            pathlib.Path(table).write_text("\n".join(lines) + "\n")
    else:
        suite = root / sys.argv[5]
        ext = "cu" if backend == "cuda" else "cpp"
        kernels = [(task, k) for task in sorted(p for p in suite.iterdir() if (p / "definition.json").exists())
                   for k in [task / f"reference.{ext}"] + sorted((task / "candidates").glob(f"*.{ext}")) if k.exists()]
        with cf.ThreadPoolExecutor(max_workers=int(os.environ.get("HONEST_JOBS", "1"))) as ex:
            results = list(ex.map(lambda tk: (tk, run_eval(khive, tk[0], tk[1], backend)), kernels))
        for (task, k), (rc, j, err, secs) in results:
            ok = rc == 0 and j and j["accepted"]
            v = (j or {}).get("verdict") or {}
            print(f"{task.name:12} {k.name:30} {'accepted' if ok else 'REJECTED'} {secs:5.1f}s {v.get('reason','')} {v.get('message','')[:200]} {err.strip()[:200]}")
            if not ok:
                failures.append(f"{task.name}/{k.name}: {v or err.strip()[:300]}")
    print(f"{len(failures)} failed" if failures else "all verdicts as expected")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0

if __name__ == "__main__":
    sys.exit(main())
