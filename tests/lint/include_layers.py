#!/usr/bin/env python3
"""The include layers of src/khive and the trust line between khive's three processes, checked on every build.

  include_layers.py [SRC]      SRC defaults to src/khive next to this file's repository; exit 0 clean, 1 violations
  include_layers.py --self-test  the checker on small synthetic trees: each forbidden include must be caught
  include_layers.py --table      the table as docs/architecture.md shows it (the check also fails when that copy
                                 differs from ALLOWED)

One folder per concept, one library per folder (docs/architecture.md). A folder may include its own headers and those
of the folders ALLOWED lists for it, nothing else; the table is the architecture as it stands, so a new arrow fails
here until it is added on purpose (and reviewed). Two rules say why some arrows may never be added:

- executor/ runs in the process that loads the untrusted kernel: it includes nothing outside its folder, so nothing
  of the judge's, the hive's or the records' is compiled into that process.
- judge/ is the trusted measuring process (khive-judge): neither it nor anything it includes, however indirectly,
  reaches the orchestration (hive, agent, llm, tuner, suite, cli), the records, the evaluation front end (eval) or
  interop: a candidate's verdict cannot depend on them. (compile/ is reached, through guard/'s check-1 rule over a
  build's result; that is the only way.)

Every include must also name a header that exists, and the folder graph must have no cycle.
"""
import pathlib
import re
import sys
import tempfile

ALLOWED = {
    "agent": {"support", "task", "verdict"},
    "cli": {"agent", "compile", "eval", "hive", "interop", "job", "llm", "numerics", "record", "suite", "support", "task",
            "tuner"},
    "compile": {"jail", "support", "task"},
    "eval": {"compile", "guard", "interop", "job", "numerics", "score", "support", "task", "verdict"},
    "executor": set(),
    "guard": {"compile", "numerics", "verdict"},
    "hive": {"agent", "compile", "eval", "guard", "record", "support", "task"},
    "interop": {"compile", "jail", "support", "task"},
    "jail": {"executor", "support"},
    "job": {"guard", "numerics", "support", "verdict"},
    "judge": {"executor", "guard", "job", "numerics", "score", "support", "task", "verdict"},
    "llm": {"agent", "compile", "support"},
    "numerics": {"task"},
    "record": {"agent", "eval", "score", "support", "task", "verdict"},
    "score": {"support", "task"},
    "suite": {"eval", "guard", "job", "support"},
    "support": set(),
    "task": {"support"},
    "tuner": {"agent", "compile", "support", "task"},
    "verdict": set(),
}
# The trust line: arrows that no edit of ALLOWED may add (checked against the table itself too).
NEVER = {
    "executor": "the executor shares its process with the untrusted kernel: it includes nothing outside executor/",
    "judge": "the judge decides verdicts alone: no orchestration, records, evaluation front end or interop in khive-judge",
}
JUDGE_NEVER_REACHES = {"hive", "agent", "llm", "tuner", "suite", "cli", "record", "eval", "interop"}


def reach(table, start):
    """Every folder start includes, directly or through others."""
    seen, todo = set(), list(table.get(start, ()))
    while todo:
        v = todo.pop()
        if v not in seen:
            seen.add(v)
            todo += list(table.get(v, ()))
    return seen
SOURCES = (".cpp", ".hpp", ".cu", ".cuh", ".h")
INCLUDE = re.compile(r'^\s*#\s*include\s+"khive/([^"]+)"', re.M)


def trust_line_breaches(table):
    """Arrows of a table that cross the trust line, as (from, to, why)."""
    out = [("executor", t, NEVER["executor"]) for t in sorted(table.get("executor", ()))]
    out += [("judge", t, NEVER["judge"]) for t in sorted(reach(table, "judge") & JUDGE_NEVER_REACHES)]
    return out


def cycles(graph):
    """Folder cycles of graph {folder: {folder}}, each as a list closing on its first folder (Tarjan's SCCs)."""
    index, low, stack, on, found, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp) + [sorted(comp)[0]])

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def check(src, table=ALLOWED):
    """Violations in the tree under src (src/khive): a list of 'path:line: message' strings."""
    src = pathlib.Path(src)
    problems, graph = [], {}
    for a, b, why in trust_line_breaches(table):
        problems.append(f"{pathlib.Path(__file__).name}: ALLOWED lets {a!r} reach {b!r}, across the trust line: {why}")
    folders = sorted(p.name for p in src.iterdir() if p.is_dir())
    for folder in folders:
        if folder not in table:
            problems.append(f"{src / folder}: a folder ALLOWED does not list: add its row (what it may include) to "
                            f"tests/lint/include_layers.py")
    for f in sorted(src.rglob("*")):
        if f.suffix not in SOURCES or not f.is_file():
            continue
        rel = f.relative_to(src)
        if len(rel.parts) < 2:
            continue
        me = rel.parts[0]
        text = f.read_text(errors="replace")
        for m in INCLUDE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            target = m.group(1)
            to = target.split("/", 1)[0]
            where = f"{f}:{line}"
            if not (src / target).is_file():
                problems.append(f'{where}: #include "khive/{target}": no such header under {src}')
            if to == me:
                continue
            graph.setdefault(me, set()).add(to)
            if to not in table.get(me, set()):
                why = "a new arrow between folders: add it to ALLOWED on purpose, or include something else"
                if me == "executor" or (me == "judge" and ({to} | reach(table, to)) & JUDGE_NEVER_REACHES):
                    why = NEVER[me]
                problems.append(f'{where}: {me}/ includes "khive/{target}": {me} -> {to} is not allowed ({why})')
    for c in cycles(graph):
        problems.append(f"{src}: the folders include each other in a cycle: {' -> '.join(c)}")
    return problems


DOC_BEGIN, DOC_END = "<!-- include_layers.py --table -->", "<!-- end of the table -->"


def table_markdown(table=ALLOWED):
    """ALLOWED as a markdown table, lowest layers first (a folder after everything it includes)."""
    order, seen = [], set()

    def visit(v):
        if v in seen:
            return
        seen.add(v)
        for w in sorted(table.get(v, ())):
            visit(w)
        order.append(v)

    for v in sorted(table):
        visit(v)
    rows = ["| folder | may include | process |", "|---|---|---|"]
    proc = {"executor": "khive-exec (beside the kernel)", "judge": "khive-judge (trusted)", "jail": "khive-jail",
            "cli": "khive"}
    for v in order:
        rows.append(f"| `{v}/` | {', '.join(f'`{w}/`' for w in sorted(table[v])) or 'nothing'} | {proc.get(v, '')} |")
    return "\n".join(rows)


def doc_problems(doc):
    """The copy of the table in docs/architecture.md, between DOC_BEGIN and DOC_END, must be table_markdown()."""
    if not doc.is_file():
        return [f"{doc}: missing (it shows the include table)"]
    text = doc.read_text()
    if DOC_BEGIN not in text or DOC_END not in text:
        return [f"{doc}: no '{DOC_BEGIN}' ... '{DOC_END}' block (the include table's copy)"]
    shown = text.split(DOC_BEGIN, 1)[1].split(DOC_END, 1)[0].strip()
    if shown != table_markdown():
        return [f"{doc}: the include table differs from tests/lint/include_layers.py's ALLOWED: paste "
                f"`python3 tests/lint/include_layers.py --table` between its markers"]
    return []


def self_test():
    """Each rule must fire on a tree that breaks it, and a clean tree must pass: the check can fail."""
    def tree(root, files):
        for path, text in files.items():
            p = root / path
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)

    table = {"executor": set(), "judge": {"executor", "support"}, "support": set(), "hive": {"judge", "support"}}
    cases = {
        "clean": ({"executor/a.hpp": "", "support/s.hpp": "", "judge/j.cpp": '#include "khive/executor/a.hpp"\n',
                   "hive/h.cpp": '#include "khive/judge/j.hpp"\n', "judge/j.hpp": ""}, table, []),
        "executor reaches out": ({"executor/a.cpp": '#include "khive/support/s.hpp"\n', "support/s.hpp": ""}, table,
                                 ["executor -> support is not allowed"]),
        "judge reaches the hive": ({"judge/j.cpp": '#include "khive/hive/h.hpp"\n', "hive/h.hpp": ""}, table,
                                   ["judge -> hive is not allowed"]),
        "missing header": ({"judge/j.cpp": '#include "khive/executor/gone.hpp"\n', "executor/a.hpp": ""}, table,
                           ["no such header"]),
        "unlisted folder": ({"newthing/x.cpp": "", "support/s.hpp": ""}, table, ["a folder ALLOWED does not list"]),
        "cycle": ({"support/s.hpp": '#include "khive/hive/h.hpp"\n', "hive/h.hpp": '#include "khive/support/s.hpp"\n'},
                  {**table, "support": {"hive"}}, ["cycle: hive -> support -> hive"]),
        "table crosses the line": ({"support/s.hpp": ""}, {**table, "judge": {"executor", "hive"}},
                                   ["ALLOWED lets 'judge' reach 'hive'"]),
        "table crosses it indirectly": ({"support/s.hpp": ""}, {**table, "support": {"hive"}},
                                        ["ALLOWED lets 'judge' reach 'hive'"]),
    }
    failed = 0
    for name, (files, tab, expect) in cases.items():
        with tempfile.TemporaryDirectory() as d:
            root = pathlib.Path(d) / "khive"
            root.mkdir()
            tree(root, files)
            got = check(root, tab)
        ok = (not got) if not expect else all(any(e in g for g in got) for e in expect)
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {len(got)} finding(s){'' if ok else ': ' + '; '.join(got)}")
        failed += not ok
    return 1 if failed else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if argv[1:] == ["--table"]:
        print(table_markdown())
        return 0
    src = pathlib.Path(argv[1]) if len(argv) > 1 else pathlib.Path(__file__).resolve().parents[2] / "src" / "khive"
    if not src.is_dir():
        print(f"include_layers: {src}: not a directory (expected src/khive)", file=sys.stderr)
        return 2
    problems = check(src)
    doc = src.resolve().parents[1] / "docs" / "architecture.md"
    if (src.resolve().parents[1] / "tests" / "lint").is_dir():   # the repository's own tree: its doc too
        problems += doc_problems(doc)
    for p in problems:
        print(p)
    n = sum(1 for f in src.rglob("*") if f.suffix in SOURCES)
    print(f"include_layers: {n} files under {src}, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
