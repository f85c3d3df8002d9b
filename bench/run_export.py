"""A khive run directory's records for the bench scripts, read by `khive export RUN` (schema khive.run-export/1:
load_run_records in src/khive/record/run_records.hpp reads run.db, or events.jsonl when a results folder kept only the log),
so that the scripts and khive agree on what a run recorded.

  import run_export
  rec = run_export.load("build/bin/khive", run_dir)   # {"meta": {...}, "candidates": [...]}; raises run_export.Error
"""
import json
import pathlib
import subprocess

SCHEMA = "khive.run-export/1"


class Error(Exception):
    """The run could not be read; the message says why (khive's own error where it gave one)."""


def load(khive, run):
    exe = pathlib.Path(khive)
    if not exe.is_file():
        raise Error(f"{khive}: no khive executable there (build it: cmake --build BUILD --target khive; or give --khive PATH)")
    r = subprocess.run([str(exe), "export", str(run)], capture_output=True, text=True)
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines()
        raise Error(lines[-1] if lines else f"khive export {run}: exit {r.returncode}")
    try:
        rec = json.loads(r.stdout)
    except ValueError as e:
        raise Error(f"khive export {run}: output is not JSON ({e})")
    if rec.get("schema") != SCHEMA:
        raise Error(f"khive export {run}: schema: expected {SCHEMA}, got {rec.get('schema')!r} (khive too old or too new for this script)")
    return rec
