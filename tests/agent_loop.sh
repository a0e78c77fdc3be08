#!/usr/bin/env bash
# A small bash agent loop, as bash-agent runs one: replay SOURCE line by line into
# $CONV_FILE; before every LLM call (after each user or tool-result line) ask the policy; on
# "compact" summarise the first total-keep lines (head -n) and keep the last keep (tail -n).
# usage: agent_loop.sh SOURCE.jsonl CONV_FILE [PLAN_AT_LINE]
# prints one line per compaction: "compact at=N keep=K drop=D trigger=T first=user|other|empty"
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../agent_hooks/bash-agent.sh
source "$here/../agent_hooks/bash-agent.sh"

src=$1
CONV_FILE=$2
plan_at=${3:-0}
: > "$CONV_FILE"
t=0 requests=0 compactions=0 input=0 n=0

is_user_line() {   # the SPEC §1 test, with grep
    printf '%s\n' "$1" | grep -qF '"role":"user"' && ! printf '%s\n' "$1" | grep -qF '"content":['
}

while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    printf '%s\n' "$line" >> "$CONV_FILE"
    case "$line" in
        *'"role":"assistant"'*) requests=$((requests + 1)); continue ;;   # the LLM's reply
    esac
    if is_user_line "$line"; then t=$((t + 1)); fi
    ctx=$(( $(wc -c < "$CONV_FILE") / 4 ))
    trigger=auto
    if [ "$n" = "$plan_at" ]; then trigger=plan_clear; fi
    if keep=$(compact_dp_policy "$trigger" "$ctx" "$t" "$requests" "$compactions" "$input"); then
        total=$(wc -l < "$CONV_FILE")
        drop=$((total - keep))
        head -n "$drop" "$CONV_FILE" > "$CONV_FILE.summarised"
        tail -n "$keep" "$CONV_FILE" > "$CONV_FILE.kept"
        mv "$CONV_FILE.kept" "$CONV_FILE"
        compactions=$((compactions + 1))
        first=empty
        if [ -s "$CONV_FILE" ]; then
            if is_user_line "$(head -n 1 "$CONV_FILE")"; then first=user; else first=other; fi
        fi
        echo "compact at=$n keep=$keep drop=$drop trigger=$trigger first=$first"
    fi
    input=$((input + ctx))
done < "$src"
echo "done lines=$n compactions=$compactions"
