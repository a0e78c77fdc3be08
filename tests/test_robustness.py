"""No argument list, however odd, makes compact-dp crash: every failure is an exit status
with a message — and never an internal error (the tests run with COMPACT_DP_DEBUG, so a
crash raises here instead of hiding behind exit 2)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from .conftest import INPUTS, run_main

WORDS = ["-v", "t=1", "-vt=abc", "-vmax_context=abc", "-v", "total_requests=5", "-f",
         "compact_turn_keep.awk", "-fcompact_dp.awk", "--model", "v2", "v4.2", "turn-keep",
         "v9", "--json", "--explain", "--", "-", "nofile.jsonl", str(INPUTS / "syn_12.jsonl"),
         str(INPUTS / "empty.jsonl"), str(INPUTS), "--turns", "abc", "1e999", "nan", "",
         "--trigger", "plan_clear", "later", "--context-tokens", "-5", "190000", "replay",
         "--policy", "threshold:x", "threshold:80", "never", "--jobs", "0", "2", "=",
         "1x=2", "x=", "--force-percent", "50.5", "--p-input", "-F", ",", "--help", "-h",
         "--keep-tokens", "--retention", "2", "--compactions", "1e12", "help", "hooks",
         "path", "--version", "ORS=\\", "-vORS=x", "--max-context", "0", "prices",
         "claude-opus-4-6", "nope-model", "statusline", "hook", "user-prompt-submit",
         "pre-compact", "--format", "claude-code", "codex", "openai", "yaml", "--tokens",
         "bytes", "usage", "--keep", "none", "best", "--price", "gpt-5", "--now", "1e9",
         "--cache-ttl", "1h", "0m", "--p-write", "cache-clock", "--color",
         str(INPUTS.parent.parent / "examples" / "claude-code.jsonl"),
         str(INPUTS.parent.parent / "examples" / "openai-chat.json")]


@given(argv=st.lists(st.sampled_from(WORDS), max_size=8))
def test_any_arguments_end_in_an_exit_status(argv):
    r = run_main(*argv, stdin=b'{"role":"user","content":"hi"}\n')
    assert r.status in (0, 1, 2)
    assert "Traceback" not in r.err and "internal error" not in r.err
    if r.status == 2:
        assert r.err.strip(), "an error must say something"
        assert len(r.err.strip().splitlines()) == 1 or "warning" in r.err
