"""The integration scripts' list of failed checks: check(cond, what) records and prints a failure, finish(name)
prints the tally and exits 1 when anything failed (the scripts run as `python3 tests/integration/X.py`, so this
module is found next to them)."""
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return bool(cond)


def finish(name):
    print(f"{name}:", "FAIL" if failures else "ok", len(failures))
    sys.exit(1 if failures else 0)
