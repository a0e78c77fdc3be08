"""Live and broken input, on every hot path, as it runs: a fresh process each time.

A status line reads a transcript Claude Code is still writing, so its last line is often
cut in the middle; a crash on such a line hid for a release because pytest had already
imported ``json``, which the hot paths avoid.  So these tests run the installed command in
a subprocess with nothing imported beforehand, and COMPACT_DP_DEBUG set, so an internal
error shows as a traceback and fails the test.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .conftest import SHARED, clean_env, command_path
from .session_fixtures import claude_session, codex_lines

HOT_PATHS = ("decide", "replay", "statusline", "user-prompt-submit", "pre-compact")


def run(path: Path, hot: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = clean_env(COMPACT_DP_DEBUG="1", COMPACT_DP_CACHE=str(tmp_path / "cache"))
    hook = json.dumps({"transcript_path": str(path), "session_id": "s", "trigger": "auto",
                       "hook_event_name": hot,
                       "context_window": {"context_window_size": 200000}}).encode()
    argv = {"decide": ["--json", str(path)], "replay": ["replay", "--json", str(path)],
            "statusline": ["statusline"], "user-prompt-submit": ["hook", hot],
            "pre-compact": ["hook", hot]}[hot]
    return subprocess.run([command_path(), *argv], input=hook, capture_output=True,
                          env=env, timeout=60)


def assert_whole(p: subprocess.CompletedProcess, hot: str) -> None:
    """No internal error; the status line prints one line and the hooks exit 0."""
    text = (p.stdout + p.stderr).decode(errors="replace")
    assert "Traceback" not in text and "internal error" not in text, text
    assert "SystemError" not in text and "Scanner" not in text, text
    if hot in ("statusline", "user-prompt-submit", "pre-compact"):
        assert p.returncode == 0, text
    else:
        assert p.returncode in (0, 1, 2), text
    if hot == "statusline":
        assert len(p.stdout.decode().splitlines()) == 1, text


def cuts(data: bytes) -> list[int]:
    """Places inside the last line: in a string, after a backslash, inside a number and
    inside a multi-byte character."""
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    line = data[last:]
    out = {last + len(line) // 2, len(data) - 2}
    for needle in (b'\\"', b'":', b"\xc3"):
        at = line.find(needle)
        if at > 0:
            out.add(last + at + 1)
    digit = next((i for i, c in enumerate(line) if chr(c).isdigit()), None)
    if digit is not None:
        out.add(last + digit + 1)
    return sorted(out)


def claude_bytes() -> bytes:
    s = claude_session()
    s.user("é — und weiter, bitte \\\"zitiert\\\"")
    return s.text()


def codex_bytes() -> bytes:
    lines, _ = codex_lines()
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("hot", HOT_PATHS)
@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_a_half_written_last_line_never_breaks_a_hot_path(hot, fmt, tmp_path):
    data = claude_bytes() if fmt == "claude-code" else codex_bytes()
    for i, at in enumerate(cuts(data)):
        path = tmp_path / f"cut{i}.jsonl"
        path.write_bytes(data[:at])
        p = run(path, hot, tmp_path)
        assert_whole(p, hot)
        if hot == "decide":
            assert p.returncode == 0, p.stderr
            assert json.loads(p.stdout)["decision"] in ("compact", "skip")


@pytest.mark.parametrize("hot", HOT_PATHS)
def test_a_corrupt_line_in_the_middle_is_skipped_and_counted(hot, tmp_path):
    lines = claude_bytes().split(b"\n")
    middle = len(lines) // 2
    lines[middle] = lines[middle][: len(lines[middle]) // 2]      # a line cut short
    path = tmp_path / "corrupt.jsonl"
    path.write_bytes(b"\n".join(lines))
    p = run(path, hot, tmp_path)
    assert_whole(p, hot)
    if hot == "decide":
        assert p.returncode == 0
        assert "1 line(s) are not JSON and were skipped" in p.stderr.decode()


def test_the_shared_corpus_cut_at_random_bytes(tmp_path):
    """The real sessions of other projects, cut where a live transcript may end (the
    shared tool does 200 cuts in `make bench`; here a few, to stay quick)."""
    tool = SHARED / "tools" / "corpus-smoke"
    if not tool.exists():
        pytest.skip(f"needs {tool} (absent in a lone clone)")
    p = subprocess.run([str(tool), command_path(), "--cuts", "12", "--seconds", "40"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
