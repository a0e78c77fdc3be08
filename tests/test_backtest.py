"""compact-dp backtest (docs/backtest.md): what the advice said at each point beside what
happened, scored; checked on hand-made sessions whose future the test knows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import INPUTS, ROOT, run_main

EXAMPLES = ROOT / "examples"


# --- bad input ----------------------------------------------------------------------------------

def one_error_line(r, *words: str) -> str:
    assert r.status == 2 and not r.out
    lines = r.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("compact-dp: error: "), r.err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("name, data, words", [
    ("garbage.jsonl", b"garbage\n", ["not a session"]),
    ("chat.json", (EXAMPLES / "openai-chat.json").read_bytes(), ["recorded usage"]),
    ("bash.jsonl", (INPUTS / "syn_40.jsonl").read_bytes(), ["recorded usage"]),
])
def test_a_file_named_that_backtest_cannot_measure_is_one_error_line(name, data, words,
                                                                     tmp_path):
    f = tmp_path / name
    f.write_bytes(data)
    line = one_error_line(run_main("backtest", str(f), str(EXAMPLES / "codex.jsonl")),
                          *words)
    assert line.count(str(f)) == 1


@pytest.mark.parametrize("args, words", [
    (["/nonexistent/session.jsonl"], ["cannot open", "/nonexistent/session.jsonl"]),
    (["-"], ["standard input"]),
    (["--every", "0", str(EXAMPLES / "codex.jsonl")], ["--every"]),
    (["--every", "ten", str(EXAMPLES / "codex.jsonl")], ["--every"]),
    (["--jobs", "0", str(EXAMPLES / "codex.jsonl")], ["--jobs"]),
    (["--every=", str(EXAMPLES / "codex.jsonl")], ["--every"]),
])
def test_bad_input_is_one_error_line_and_exit_2(args, words):
    one_error_line(run_main("backtest", *args), *words)


def test_in_a_folder_what_cannot_be_measured_is_skipped_with_a_line_each(tmp_path):
    (tmp_path / "codex.jsonl").write_bytes((EXAMPLES / "codex.jsonl").read_bytes())
    (tmp_path / "chat.json").write_bytes((EXAMPLES / "openai-chat.json").read_bytes())
    (tmp_path / "notes.jsonl").write_bytes(b"garbage\n")
    r = run_main("backtest", "--json", str(tmp_path))
    assert r.status == 0
    skipped = {Path(s["session"]).name: s["error"] for s in json.loads(r.out)["skipped"]}
    assert set(skipped) == {"chat.json", "notes.jsonl"}
    assert "recorded usage" in skipped["chat.json"]
    lines = r.err.splitlines()
    assert sorted(lines) == [f"compact-dp: warning: skipped {tmp_path}/chat.json: backtest "
                             "needs a Claude Code or Codex session with recorded usage",
                             f"compact-dp: warning: skipped {tmp_path}/notes.jsonl: not a "
                             "session in a known format (bash-agent, claude-code, codex, "
                             "openai); --format bash-agent reads any text as bash-agent "
                             "lines"]


def test_a_folder_with_nothing_to_measure_is_one_error_line(tmp_path):
    (tmp_path / "chat.json").write_bytes((EXAMPLES / "openai-chat.json").read_bytes())
    (tmp_path / "notes.jsonl").write_bytes(b"garbage\n")
    one_error_line(run_main("backtest", str(tmp_path)), "no session to backtest", "2 files")
