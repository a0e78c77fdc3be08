#!/usr/bin/env bash
# An agent loop that compacts with compact-dp, runnable as it is: it replays a recorded
# conversation (SOURCE, one JSON message per line) into CONV_FILE line by line, as an agent
# would append them, and before every LLM call (after each user or tool-result line) asks
# compact_dp_policy whether to compact now.
#
#   usage: example-loop.sh SOURCE.jsonl CONV_FILE [PLAN_AT_LINE]
#   prints: "compact at=N keep=K drop=D trigger=T first=user|other|empty" per compaction,
#           then "done lines=N compactions=C"
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bash-agent.sh
source "$here/bash-agent.sh"

src=$1
CONV_FILE=$2
plan_at=${3:-0}
: > "$CONV_FILE"
turns=0 requests=0 compactions=0 input_tokens=0 n=0

# a user message: "role":"user" without array content
# (https://github.com/compact-dp/compact-dp/blob/main/docs/formats.md)
is_user_line() {
    case "$1" in *'"content":['*) return 1 ;; *'"role":"user"'*) return 0 ;; *) return 1 ;; esac
}

summarise() {      # stands in for the LLM call that writes the summary
    wc -l > /dev/null
}

while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    printf '%s\n' "$line" >> "$CONV_FILE"
    case "$line" in
        *'"role":"assistant"'*) requests=$((requests + 1)); continue ;;   # the LLM's reply
    esac
    if is_user_line "$line"; then turns=$((turns + 1)); fi
    context=$(( $(wc -c < "$CONV_FILE") / 4 ))
    trigger=auto
    if [ "$n" = "$plan_at" ]; then trigger=plan_clear; fi
    status=0
    keep=$(compact_dp_policy "$trigger" "$context" "$turns" "$requests" "$compactions" \
           "$input_tokens") || status=$?
    case $status in
        0)  # compact now: summarise the first total-keep lines, keep the last keep
            total=$(wc -l < "$CONV_FILE")
            drop=$((total - keep))
            head -n "$drop" "$CONV_FILE" | summarise
            tail -n "$keep" "$CONV_FILE" > "$CONV_FILE.kept"
            mv "$CONV_FILE.kept" "$CONV_FILE"
            compactions=$((compactions + 1))
            first=empty
            if [ -s "$CONV_FILE" ]; then
                if is_user_line "$(head -n 1 "$CONV_FILE")"; then first=user; else first=other; fi
            fi
            echo "compact at=$n keep=$keep drop=$drop trigger=$trigger first=$first" ;;
        1)  ;;  # not now
        *)  echo "compact-dp failed (status $status); not compacting" >&2 ;;
    esac
    input_tokens=$((input_tokens + context))
done < "$src"
echo "done lines=$n compactions=$compactions"
