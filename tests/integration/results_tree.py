#!/usr/bin/env python3
"""docs/results keeps summaries and tables only (docs/results/README.md): Markdown and the JSON tables and profiles the
READMEs cite, no run directories (run.db, events.jsonl, report.html, candidates/), kernel copies, logs or scripts, and
stays small; the curated recordings under tests/recordings/ stay under 1 MB each and declare their schema.

  results_tree.py ROOT
"""
import json
import pathlib
import sys

from checks import check, finish

root = pathlib.Path(sys.argv[1])
results = root / "docs" / "results"
total = 0
for f in sorted(results.rglob("*")):
    if not f.is_file():
        continue
    rel = f.relative_to(root)
    total += f.stat().st_size
    check(f.suffix in (".md", ".json"), f"{rel}: only .md and .json belong in docs/results (raw run files are in git history)")
    check(not {"candidates", "kernels", "transcripts", "replies"} & set(f.relative_to(results).parts[:-1]),
          f"{rel}: a run directory's or kernel copy's folder in docs/results")
    check(f.stat().st_size < 256 * 1024, f"{rel}: {f.stat().st_size} bytes; a table in docs/results stays under 256 KB")
check(total < 4 * 1024 * 1024, f"docs/results holds {total} bytes; summaries and tables stay under 4 MB")

recs = sorted((root / "tests" / "recordings").glob("*.json"))
check(len(recs) >= 2, "tests/recordings holds the curated recordings")
for f in recs:
    check(f.stat().st_size < 1024 * 1024, f"{f.name}: a recording stays well under 1 MB")
    check(json.loads(f.read_text()).get("schema") == "khive.recording/1", f"{f.name}: schema khive.recording/1")
finish("results_tree")
