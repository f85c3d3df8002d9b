#!/usr/bin/env bash
# Relay for the LLM agent's command provider: hands each prompt to a model outside the process (a person,
# or a helper LLM session) through files, and waits for its reply. docs/llm.md shows the whole setup.
#
#   khive optimize TASK --agent 'cmd:scripts/llm-relay.sh {prompt_file}'     # the agent's side
#   scripts/llm-relay.sh list                                                 # the model's side: open prompts
#   scripts/llm-relay.sh show ID                                              #   read one
#   scripts/llm-relay.sh answer ID < reply.md                                 #   answer it
#
# Folder ($KHIVE_RELAY_DIR, default .khive/relay under the current directory):
#   pending/ID.prompt.md   written by the agent (atomically), removed once answered
#   replies/ID.reply.md    written by the model (answer writes it atomically)
#   done/ID.prompt.md, done/ID.reply.md   the exchange, kept
# ID = <agent>-<seq>-<purpose>-<pid>: unique per request, readable in a listing.
# Provider mode waits up to $KHIVE_RELAY_TIMEOUT seconds (default 3600), then fails with a message.
set -euo pipefail
dir=${KHIVE_RELAY_DIR:-.khive/relay}
mkdir -p "$dir/pending" "$dir/replies" "$dir/done"

case "${1:-}" in
  list)
    ls -1tr "$dir/pending" 2>/dev/null | sed -n 's/\.prompt\.md$//p'
    exit 0 ;;
  show)
    id=${2:?usage: llm-relay.sh show ID}
    cat "$dir/pending/$id.prompt.md"
    exit 0 ;;
  answer)
    id=${2:?usage: llm-relay.sh answer ID [FILE] (reply on stdin when FILE is absent)}
    [ -f "$dir/pending/$id.prompt.md" ] || { echo "llm-relay: no pending prompt $id in $dir/pending" >&2; exit 1; }
    tmp="$dir/replies/.$id.tmp"
    if [ -n "${3:-}" ]; then cp "$3" "$tmp"; else cat > "$tmp"; fi
    [ -s "$tmp" ] || { rm -f "$tmp"; echo "llm-relay: empty reply refused" >&2; exit 1; }
    mv "$tmp" "$dir/replies/$id.reply.md"
    exit 0 ;;
esac

# Provider mode: the prompt is the file named by $1 (the {prompt_file} placeholder), else stdin.
agent=${KHIVE_LLM_AGENT:-agent}; agent=${agent//[^A-Za-z0-9._-]/_}
purpose=${KHIVE_LLM_PURPOSE:-chat}; purpose=${purpose//[^A-Za-z0-9._-]/_}
id="$agent-${KHIVE_LLM_SEQ:-0}-$purpose-$$"
tmp="$dir/pending/.$id.tmp"
if [ -n "${1:-}" ]; then cp "$1" "$tmp"; else cat > "$tmp"; fi
mv "$tmp" "$dir/pending/$id.prompt.md"
echo "llm-relay: waiting for $dir/replies/$id.reply.md" >&2
timeout=${KHIVE_RELAY_TIMEOUT:-3600}
start=$(date +%s)
while [ ! -f "$dir/replies/$id.reply.md" ]; do
  if [ $(( $(date +%s) - start )) -ge "$timeout" ]; then
    # Out of pending, so nobody answers a prompt whose agent has given up on it.
    mv "$dir/pending/$id.prompt.md" "$dir/done/$id.prompt.abandoned.md"
    echo "llm-relay: no reply to $id within ${timeout} s ($dir/done/$id.prompt.abandoned.md)" >&2
    exit 1
  fi
  sleep 1
done
mv "$dir/pending/$id.prompt.md" "$dir/done/$id.prompt.md"
mv "$dir/replies/$id.reply.md" "$dir/done/$id.reply.md"
cat "$dir/done/$id.reply.md"
