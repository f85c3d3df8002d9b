#!/usr/bin/env python3
"""Developer check (not in CI): how many real upstream problems khive loads, evaluates on the CPU and would optimize.

  python3 scripts/check_upstream.py --out docs/results/DATE-cpu \\
      [--kernelbench SRC] [--sol SRC] [--flashinfer SRC] [--level2-sample N] [--khive build/bin/khive]

SRC is a git URL (cloned with --depth 1 into a temporary folder), a bare git directory (its HEAD is exported) or a
checked-out folder; nothing fetched is kept or committed. Without network, point SRC at a local copy.

What is counted, per problem:
  loaded     KernelBench: `khive import kernelbench` wrote a task that khive's loader accepts;
             SOL-ExecBench / FlashInfer-Bench: the problem's definition.json + workload.jsonl load as they are
             (FlashInfer-Bench's dataset layout through `khive import flashinfer`)
  evaluated  the PyTorch reference (the oracle) runs on the CPU on the task's correctness workloads, with outputs of
             the declared shapes and finite values (python -m khive_torch evaluate; workloads over 2^28 elements are
             skipped, so a problem whose every workload is larger counts as not evaluated on the CPU)
  tuner      the tuner has templates for it by itself (`khive-tune show`: a bindings file or a binding it infers);
             every loaded problem can still be optimized by LLM agents
Writes OUT/upstream.md (the table and every failure's reason) and OUT/upstream.json.
"""
import argparse
import datetime
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def materialize(src, tmp, name):
    """A folder holding the repository's files: cloned, exported from a bare git dir, or as given."""
    if src is None:
        return None
    p = pathlib.Path(src)
    if re.match(r"^(https?|git|ssh)://|^git@", src):
        dst = tmp / name
        subprocess.run(["git", "clone", "-q", "--depth", "1", src, str(dst)], check=True)
        return dst
    if (p / "HEAD").is_file() and (p / "objects").is_dir():   # a bare repository
        dst = tmp / name
        dst.mkdir()
        archive = subprocess.run(["git", "--git-dir", str(p), "archive", "HEAD"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dst)], input=archive, check=True)
        return dst
    if p.is_dir():
        return p
    sys.exit(f"check_upstream: {src}: expected a git URL, a bare git directory or a folder")


def env():
    e = dict(os.environ, PYTHONPATH=f"{ROOT}/python:{ROOT}/.deps/torch", PYTHONDONTWRITEBYTECODE="1")
    e.setdefault("KHIVE_CACHE", str(ROOT / ".khive-cache"))
    return e


def evaluate(task_dir):
    r = subprocess.run([sys.executable, "-m", "khive_torch", "evaluate", str(task_dir)], env=env(), capture_output=True, text=True, timeout=900)
    try:
        rep = json.loads(r.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return False, f"khive_torch evaluate failed: {r.stderr[-300:]}"
    return rep["ok"], rep.get("error") or ""


def tuner_binds(tune, task_dir):
    r = subprocess.run([tune, "show", str(task_dir), "--backend", "cpu"], env=env(), capture_output=True, text=True, timeout=300)
    if r.returncode == 0:
        return True, "inferred" if "binding inferred" in r.stdout else "bindings file"
    msg = (r.stderr or r.stdout).strip().splitlines()
    return False, msg[-1] if msg else f"exit {r.returncode}"


def loads(khive, task_dir):
    r = subprocess.run([khive, "signature", str(task_dir), "--backend", "cpu"], env=env(), capture_output=True, text=True, timeout=120)
    return r.returncode == 0, (r.stderr.strip().splitlines() or [""])[-1]


def kernelbench(args, repo, tmp, rows):
    for level, sample in ((1, 0), (2, args.level2_sample), (3, args.level3_sample)):
        src = repo / "KernelBench" / f"level{level}"
        if not src.is_dir():
            continue
        files = sorted(src.glob("*.py"), key=lambda p: int(p.name.split("_")[0]) if p.name.split("_")[0].isdigit() else 0)
        if sample:
            step = max(1, len(files) // sample)
            files = files[::step][:sample]
        elif level > 1:
            continue
        staged = tmp / "kb-src" / f"level{level}"
        staged.mkdir(parents=True)
        for f in files:
            shutil.copy(f, staged / f.name)
        out = tmp / "kb-tasks" / f"level{level}"
        r = subprocess.run([args.khive, "import", "kernelbench", str(staged), "--out", str(out), "--keep-failed"], env=env(),
                           capture_output=True, text=True, timeout=len(files) * 600)
        for line in r.stdout.splitlines():
            m = re.match(r"^(imported|FAILED)\s+(\S+)\s+(\S+?)(?::\s+(.*))?$", line)
            if not m:
                continue
            status, name, file, why = m.groups()
            task = out / name
            row = {"suite": f"KernelBench L{level}", "problem": file, "task": name}
            row["loaded"] = (task / "definition.json").is_file() and loads(args.khive, task)[0]
            row["evaluated"] = status == "imported"
            row["reason"] = "" if status == "imported" else (why or "")
            if row["loaded"]:
                row["tuner"], row["tuner_note"] = tuner_binds(args.tune, task)
            else:
                row["tuner"], row["tuner_note"] = False, "not loaded"
            rows.append(row)
            print(f"{row['suite']:16} {file:60} loaded={row['loaded']} evaluated={row['evaluated']} tuner={row['tuner']} {row['reason'][:120]}", flush=True)


def problem_dirs(repo, patterns):
    dirs = []
    for pat in patterns:
        dirs += [p.parent for p in sorted(repo.glob(pat))]
    return sorted(set(dirs))


def sol_execbench(args, repo, tmp, rows):
    for d in problem_dirs(repo, ["examples/*/*/definition.json", "tests/**/samples/*/definition.json"]):
        if not (d / "workload.jsonl").is_file():
            continue
        task = tmp / "sol" / d.relative_to(repo).as_posix().replace("/", "__")
        shutil.copytree(d, task)
        row = {"suite": "SOL-ExecBench", "problem": d.relative_to(repo).as_posix(), "task": task.name}
        ok, why = loads(args.khive, task)
        row["loaded"] = ok
        row["reason"] = "" if ok else why
        row["evaluated"] = False
        if ok:
            row["evaluated"], ev_why = evaluate(task)
            row["reason"] = ev_why
            row["tuner"], row["tuner_note"] = tuner_binds(args.tune, task)
        else:
            row["tuner"], row["tuner_note"] = False, "not loaded"
        rows.append(row)
        print(f"{row['suite']:16} {row['problem']:60} loaded={row['loaded']} evaluated={row['evaluated']} tuner={row['tuner']} {row['reason'][:120]}", flush=True)


def flashinfer(args, repo, tmp, rows):
    for defs in sorted(repo.glob("**/definitions")):
        ds = defs.parent
        out = tmp / "fib" / ds.name
        r = subprocess.run([args.khive, "import", "flashinfer", str(ds), "--out", str(out), "--keep-failed"], env=env(),
                           capture_output=True, text=True, timeout=600)
        for line in r.stdout.splitlines():
            m = re.match(r"^(imported|FAILED)\s+(\S+?)(?::\s+(.*))?$", line)
            if not m:
                continue
            status, name, why = m.groups()
            row = {"suite": "FlashInfer-Bench", "problem": f"{ds.relative_to(repo).as_posix()}/{name}", "task": name, "loaded": status == "imported",
                   "reason": why or "", "evaluated": False, "tuner": False, "tuner_note": "not loaded"}
            if row["loaded"]:
                row["evaluated"], row["reason"] = evaluate(out / name)
                row["tuner"], row["tuner_note"] = tuner_binds(args.tune, out / name)
            rows.append(row)
            print(f"{row['suite']:16} {row['problem']:60} loaded={row['loaded']} evaluated={row['evaluated']} tuner={row['tuner']} {row['reason'][:120]}", flush=True)


def write_report(args, rows, sources):
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "upstream.json").write_text(json.dumps({"date": datetime.date.today().isoformat(), "sources": sources, "rows": rows}, indent=1) + "\n")
    suites = []
    for r in rows:
        if r["suite"] not in suites:
            suites.append(r["suite"])
    lines = [f"# Upstream problems in khive ({datetime.date.today().isoformat()}, CPU)", "",
             "Produced by `scripts/check_upstream.py` (a developer check, not in CI) over the upstream repositories at the "
             "commits below; nothing of theirs is committed here. *loaded*: khive's task loader accepts the problem (KernelBench "
             "and FlashInfer-Bench through `khive import`); *evaluated*: its PyTorch reference, run as the oracle on the CPU by "
             "python/khive_torch, gives outputs of the declared shapes with finite values on every correctness workload up to "
             "2^28 elements; *tuner*: the built-in tuner has templates for it without hand-work (otherwise LLM agents only).", "",
             "| source | commit |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in sources.items()]
    lines += ["", "| suite | problems | loaded | evaluated (CPU) | tuner binds |", "| --- | ---: | ---: | ---: | ---: |"]
    for s in suites:
        rs = [r for r in rows if r["suite"] == s]
        n = len(rs)
        pct = lambda k: f"{sum(1 for r in rs if r[k])} ({100 * sum(1 for r in rs if r[k]) / n:.0f} %)"
        lines.append(f"| {s} | {n} | {pct('loaded')} | {pct('evaluated')} | {pct('tuner')} |")
    n = len(rows)
    if n:
        tot = lambda k: f"{sum(1 for r in rows if r[k])} ({100 * sum(1 for r in rows if r[k]) / n:.0f} %)"
        lines.append(f"| **all** | {n} | {tot('loaded')} | {tot('evaluated')} | {tot('tuner')} |")
    lines += ["", "## Failures and their reasons", "", "| suite | problem | loaded | evaluated | reason |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        if not r["evaluated"]:
            reason = r["reason"].replace("|", "\\|").replace("\n", " ")[:300]
            lines.append(f"| {r['suite']} | {r['problem']} | {'yes' if r['loaded'] else 'no'} | no | {reason} |")
    lines += ["", "## Tuner", "", "Problems the tuner binds by itself (`binding inferred`) or through a bindings file; the others "
              "are left to LLM agents, and `khive optimize` says so (agent_done: \"the tuner has no template for this task: ...\").", ""]
    for s in suites:
        rs = [r for r in rows if r["suite"] == s and r["tuner"]]
        if rs:
            lines.append(f"- {s}: " + ", ".join(f"{r['task']} ({r['tuner_note']})" for r in rs))
    (out / "upstream.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out / 'upstream.md'}")


def commit_of(src):
    if src is None:
        return None
    p = pathlib.Path(src)
    git = ["git", "--git-dir", str(p)] if (p / "HEAD").is_file() and (p / "objects").is_dir() else ["git", "-C", str(p)]
    r = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else src


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--kernelbench")
    ap.add_argument("--sol")
    ap.add_argument("--flashinfer")
    ap.add_argument("--level2-sample", type=int, default=20)
    ap.add_argument("--level3-sample", type=int, default=0)
    ap.add_argument("--khive", default=str(ROOT / "build/bin/khive"))
    ap.add_argument("--tune", default=None)
    args = ap.parse_args()
    args.tune = args.tune or str(pathlib.Path(args.khive).parent / "khive-tune")
    rows, sources = [], {}
    with tempfile.TemporaryDirectory(prefix="khive-upstream-") as t:
        tmp = pathlib.Path(t)
        for name, src, fn in (("KernelBench", args.kernelbench, kernelbench), ("SOL-ExecBench", args.sol, sol_execbench),
                              ("FlashInfer-Bench", args.flashinfer, flashinfer)):
            repo = materialize(src, tmp, name)
            if repo is None:
                continue
            sources[name] = commit_of(src)
            fn(args, repo, tmp, rows)
    write_report(args, rows, sources)
    return 0


if __name__ == "__main__":
    sys.exit(main())
