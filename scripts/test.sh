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
ctest --output-on-failure -j "${TEST_JOBS:-2}" "$@"
