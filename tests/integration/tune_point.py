#!/usr/bin/env python3
"""khive-tune point: one hand-picked template point is rendered exactly as asked (defaults for what is not set),
builds, and is accepted by the guard; bad requests exit 2 with a message naming the field and what was expected,
and write nothing.

usage: tune_point.py KHIVE_TUNE KHIVE REPO"""
import os
import subprocess
import sys
import tempfile


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    tune, khive, repo = sys.argv[1:4]
    task = os.path.join(repo, "tasks/demo-cpu/softmax")
    failures = []

    def expect(cond, what, r=None):
        if not cond:
            failures.append(what + ("" if r is None else f"\n  rc={r.returncode}\n  out={r.stdout[-800:]}\n  err={r.stderr[-800:]}"))

    with tempfile.TemporaryDirectory(prefix="khive-point-") as tmp:
        out = os.path.join(tmp, "sub", "p.cpp")
        r = run([tune, "point", task, "--template", "rowop.cpu_softmax", "--set", "LANES=8", "--set", "ONLINE=1", "--out", out, "--build"])
        expect(r.returncode == 0 and "build ok" in r.stdout, "a valid point renders and builds", r)
        src = open(out).read() if os.path.exists(out) else ""
        # The header names the exact point: the two settings and the default of the parameter left alone.
        expect("// point: LANES=8 ONLINE=1 ROW_BLOCK=4" in src, "the rendered header names the point (ROW_BLOCK at its default 4)")
        expect("LANES=8" in src and "{{" not in src, "every placeholder is filled")
        e = run([khive, "eval", task, out, "--backend", "cpu", "--no-baselines", "--no-reference"])
        expect(e.returncode == 0, "the guard accepts the rendered point", e)

        bad = [
            (["--template", "rowop.cpu_softmaxx"], 'no template named "rowop.cpu_softmaxx"'),
            (["--template", "rowop.cpu_softmax", "--set", "LANES=7"], "LANES of rowop.cpu_softmax takes one of 1, 4, 8, 16, 32"),
            (["--template", "rowop.cpu_softmax", "--set", "FOO=1"], "has no parameter FOO (it has ROW_BLOCK, LANES, ONLINE)"),
            (["--template", "rowop.cpu_softmax", "--set", "LANES"], 'expected PARAM=VALUE, got "LANES"'),
            (["--template", "elementwise.cpu"], "does not apply to demo-cpu/softmax"),
        ]
        for args, msg in bad:
            dest = os.path.join(tmp, "bad.cpp")
            r = run([tune, "point", task, *args, "--out", dest])
            expect(r.returncode == 2 and msg in r.stderr, f"{' '.join(args)}: exit 2 naming the problem ({msg})", r)
            expect(not os.path.exists(dest), f"{' '.join(args)}: nothing written")
        # compose: a route to a variant that was not given is refused, naming the flag and the valid range.
        dest = os.path.join(tmp, "bad-compose.cpp")
        r = run([tune, "compose", task, "--point", "rowop.cpu_softmax", "--route", "softmax-512x4096=3", "--out", dest])
        expect(r.returncode == 2 and "--route softmax-512x4096=3: expected a variant index 0..0 (one per --point)" in r.stderr,
               "compose refuses a route to a missing variant", r)
        expect(not os.path.exists(dest), "compose with a bad route writes nothing")
        # A rule of the template (not just a value list) refuses the point with the rule's own message.
        r = run([tune, "point", os.path.join(repo, "tasks/sol/softmax"), "--backend", "cuda", "--template", "rowop.cuda_softmax",
                 "--set", "CACHE=smem", "--out", os.path.join(tmp, "bad.cu")])
        expect(r.returncode == 2 and "invalid point: CHUNKS only matters for the register cache" in r.stderr,
               "a point breaking a template rule is refused with the rule's message", r)
    for f in failures:
        print("FAIL", f)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
