#!/usr/bin/env bash
# The README's test command: set up a fresh machine, build, run every test. GPU tests (label gpu)
# skip themselves when no GPU is visible.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "${BUILD_DIR:-$root/build}"
# A private cache so tests never reuse goldens or builds from another checkout.
export KHIVE_CACHE=${KHIVE_CACHE:-$PWD/test-cache}
# A small cap: seeded evaluations keep every timed call's goldens (up to 16 MB each), and the suite makes a few GB
# of them that no later test reads (the tests of the cache itself use caches of their own).
export KHIVE_CACHE_MAX_GB=${KHIVE_CACHE_MAX_GB:-1}
# Tests whose verdict rests on timing (label timing: check 11 must see a difference) run after the others, one at a
# time, so the suite's own parallel jobs never load the cores they measure on.
rc=0
ctest --output-on-failure -j "${TEST_JOBS:-2}" -LE timing "$@" || rc=$?
ctest --output-on-failure -j 1 -L timing "$@" || rc=$?
exit "$rc"
