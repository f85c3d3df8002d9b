"""python3 -m khive_torch COMMAND ...   (khive runs these; exit 0 ok, 1 the check failed, 2 bad input)

  import-kernelbench FILE --out DIR [--level N] [--problem N] [--name NAME]   a KernelBench problem as a task directory;
                                                               the reference is then run on the CPU
  evaluate TASK [--backend cpu|cuda] [--seed N]                the reference over the correctness workloads
Each prints one JSON object on stdout.
"""
import argparse
import json
import pathlib
import sys


def _torch():
    try:
        import torch
    except ImportError as e:
        print(json.dumps({"ok": False, "error": f"PyTorch is not installed ({e}); run scripts/setup.sh (it installs torch into .deps/torch)"}))
        sys.exit(2)
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    return torch


def _cuda_only(path, uuids):
    """workload.jsonl with these workloads marked for CUDA only (khive.backends)."""
    lines = []
    for line in path.read_text().splitlines():
        w = json.loads(line)
        if w.get("uuid") in uuids:
            w.setdefault("khive", {})["backends"] = ["cuda"]
        lines.append(json.dumps(w))
    path.write_text("".join(x + "\n" for x in lines))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m khive_torch")
    sub = ap.add_subparsers(dest="cmd", required=True)
    imp = sub.add_parser("import-kernelbench")
    imp.add_argument("file")
    imp.add_argument("--out", required=True)
    imp.add_argument("--level", type=int)
    imp.add_argument("--problem", type=int)
    imp.add_argument("--name", help="the task's name (khive passes its folder's name)")
    imp.add_argument("--no-evaluate", action="store_true")
    ev = sub.add_parser("evaluate")
    ev.add_argument("task")
    ev.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    ev.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)

    if a.cmd == "import-kernelbench":
        from .evaluate import evaluate_task
        from .kernelbench import ImportFailure, import_problem
        torch = _torch()
        try:
            d = import_problem(torch, a.file, a.out, a.level, a.problem, a.name)
        except ImportFailure as e:
            print(json.dumps({"ok": False, "file": a.file, "error": str(e)}))
            return 1
        result = {"ok": True, "file": a.file, "task": a.out, "name": d["name"],
                  "var_axes": [n for n, s in d["axes"].items() if s["type"] == "var"]}
        # What the reference computes, from its graph (recognize.py), recorded for the tuner's bindings; a reference
        # that cannot be traced is imported all the same, with the reason in the result.
        from .recognize import recognize, write
        from .task import load_task
        try:
            task = load_task(a.out)
            op = recognize(torch, task)
            write(task, op)   # {op: "unknown", why} too: the tuner's refusal says why
            result["op"] = op.get("op")
            if op.get("why"):
                result["op_why"] = op["why"]
        except Exception as e:  # noqa: BLE001 - recognition is a hint, never a reason to refuse the import
            result["op"] = "unknown"
            result["op_why"] = f"{type(e).__name__}: {e}"
        if not a.no_evaluate:
            rep = evaluate_task(torch, a.out, "cpu")
            result["evaluated"] = rep["ok"]
            result["evaluate_error"] = rep["error"]
            # Too large for the CPU even at its smallest (a Linear's 32768 x 32768 weight does not shrink with the
            # batch): the task is kept for CUDA, its oversized workloads marked so, and the import says why.
            skipped = [w for w in rep["workloads"] if w["status"] == "skipped"]
            if not rep["ok"] and skipped and len(skipped) == len(rep["workloads"]):
                _cuda_only(pathlib.Path(a.out) / "workload.jsonl", {w["uuid"] for w in skipped})
                result["cuda_only"] = rep["error"]
        print(json.dumps(result))
        return 0
    if a.cmd == "evaluate":
        from .evaluate import evaluate_task
        rep = evaluate_task(_torch(), a.task, a.backend, a.seed)
        print(json.dumps(rep))
        return 0 if rep["ok"] else 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
