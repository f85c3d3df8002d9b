#!/bin/sh
# A command provider for the tests: answers each prompt with the next canned reply of a folder
# (01.txt, 02.txt, ... in order), keeping its place in a counter file. The prompt arrives on stdin (or as
# the file named by $1) and is kept next to the reply for the test to inspect.
set -eu
dir=${CANNED_DIR:?CANNED_DIR names the folder of canned replies}
n=$(cat "$dir/.next" 2>/dev/null || echo 1)
if [ $# -ge 1 ]; then cp "$1" "$dir/prompt-$n.md"; else cat > "$dir/prompt-$n.md"; fi
reply=$(printf '%s/%02d.txt' "$dir" "$n")
[ -f "$reply" ] || { echo "canned-model: no reply $reply" >&2; exit 1; }
echo $((n + 1)) > "$dir/.next"
cat "$reply"
