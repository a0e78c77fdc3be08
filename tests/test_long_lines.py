"""A line of any length costs a chunk of memory: the readers keep sizes, not lines."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compact_dp.core.scan import Scanner, read_records
from compact_dp.sessions.bash_agent import BashAgentScanner
from compact_dp.sessions.read import LongLine, line_blocks

from .conftest import clean_env, command_path

PIECES = [b'"role":"user"', b'"content":[', b'"role":"assistant"', b'"role": "user"',
          b"\n", b"x", b"xyz" * 7, b'{"role":"user","content":"']


@settings(max_examples=200)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.integers(1, 40),
       st.integers(1, 60))
def test_a_long_record_is_sized_and_classified_as_if_it_were_held(parts, chunk, long):
    """Whatever the chunk size and the long-record limit, every record has the length,
    the markers and the start of the plain split."""
    data = b"".join(parts)
    want = data.split(b"\n")
    if want and want[-1] == b"":
        want.pop()
    markers = BashAgentScanner.MARKERS
    got = [r for lines in read_records(io.BytesIO(data), chunk, markers, long)
           for r in lines]
    assert [len(r) for r in got] == [len(r) for r in want]
    for g, w in zip(got, want):
        assert [m in g for m in markers] == [m in w for m in markers]
        assert g.startswith(b'{"role":"user","content":"') == \
            w.startswith(b'{"role":"user","content":"')


@settings(max_examples=200)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.integers(1, 40),
       st.integers(1, 60))
def test_line_blocks_keep_short_lines_whole_and_measure_long_ones(parts, chunk, limit):
    data = b"".join(parts)
    pieces = [data[i:i + chunk] for i in range(0, len(data), chunk)]
    rest: list[bytes] = []
    out: list[bytes | int] = []
    for block in line_blocks(pieces, rest, limit):
        if isinstance(block, LongLine):
            out.append(block.length)
        else:
            out.append(block)
    whole = sum(x if isinstance(x, int) else len(x) for x in out) + sum(map(len, rest))
    assert whole == len(data)                    # every byte accounted for, in order
    lines = [x for x in out if not isinstance(x, int)]
    for block in lines:
        for line in block.split(b"\n")[:-1]:
            assert len(line) + 1 <= max(limit, chunk) + chunk


def peak_mib(*args: str, stdin: bytes | None = None) -> tuple[float, subprocess.CompletedProcess]:
    probe = ("import resource, subprocess, sys; "
             "p = subprocess.run(sys.argv[1:], input=sys.stdin.buffer.read(), "
             "capture_output=True); "
             "sys.stdout.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
             " + '\\n' + str(p.returncode) + '\\n' + p.stderr.decode(errors='replace'))")
    p = subprocess.run([sys.executable, "-c", probe, command_path(), *args],
                       input=stdin or b"", capture_output=True, env=clean_env(), timeout=120)
    rss, status, *err = p.stdout.decode().split("\n")
    return int(rss) / 1024, subprocess.CompletedProcess(args, int(status), b"",
                                                        "\n".join(err).encode())


def test_a_64_mb_line_is_read_in_bounded_memory(tmp_path):
    """A tool result of 64 MB on one line, in a bash-agent file and in a Claude Code
    transcript: the decision, the status line, both well under the line's size."""
    big = "y" * (64 << 20)
    bash = tmp_path / "bash.jsonl"
    bash.write_text(json.dumps({"role": "user", "content": "go"}) + "\n" +
                    json.dumps({"role": "user", "content": [{"type": "tool_result",
                                                             "content": big}]}) + "\n")
    claude = tmp_path / "claude.jsonl"
    line = {"type": "user", "sessionId": "s", "uuid": "u1",
            "message": {"role": "user", "content": [{"type": "tool_result",
                                                     "tool_use_id": "t", "content": big}]}}
    claude.write_text(json.dumps({"type": "user", "sessionId": "s", "uuid": "u0",
                                  "message": {"role": "user", "content": "hi"}}) + "\n" +
                      json.dumps(line) + "\n")
    del big, line
    for args in (["--turns", "1", str(bash)], ["--json", str(claude)]):
        mib, p = peak_mib(*args)
        assert p.returncode == 0, p.stderr
        assert mib < 48, (args, mib)
    status = json.dumps({"transcript_path": str(claude)}).encode()
    mib, p = peak_mib("statusline", stdin=status)
    assert p.returncode == 0 and mib < 48, mib
    _, p = peak_mib("--json", str(claude))
    assert b"longer than 16 MB" in p.stderr


def test_the_awk_form_sizes_a_long_line_exactly(tmp_path):
    """The awk's answer does not change when a line is summarised rather than held."""
    conv = tmp_path / "c.jsonl"
    rows = [{"role": "user", "content": "go"}] + \
        [{"role": "assistant", "content": "z" * 3000}] * 3 + \
        [{"role": "user", "content": [{"type": "tool_result", "content": "w" * 40_000}]},
         {"role": "user", "content": "next"}, {"role": "assistant", "content": "ok"}]
    conv.write_text("\n".join(json.dumps(r, separators=(",", ":")) for r in rows) + "\n")
    from compact_dp.core import scan
    whole = scan.scan_paths([str(conv)], v2_users=True)
    with open(conv, "rb") as f:
        s = Scanner(v2_users=True, chunk=97)
        for lines in read_records(f, 97, Scanner.MARKERS, long=500):
            s.add_lines(lines)
    assert (s.conv.sizes, s.conv.users, s.conv.users_v2) == \
        (whole.sizes, whole.users, whole.users_v2)


@pytest.mark.parametrize("chunk", [1, 3, 7, 10, 11, 64])
def test_a_line_of_exactly_the_limit_is_whole_and_one_byte_more_is_long(chunk):
    """The limit counts a line's bytes with its newline: a line of exactly ``limit`` bytes
    is parsed, whatever the chunks it arrives in; one of ``limit + 1`` is a long line."""
    limit = 10
    for size, whole in ((limit, True), (limit + 1, False)):
        data = b"x" * (size - 1) + b"\n" + b"ab\n"
        pieces = [data[i:i + chunk] for i in range(0, len(data), chunk)]
        rest: list[bytes] = []
        blocks = list(line_blocks(pieces, rest, limit))
        lines = [ln for b in blocks if not isinstance(b, LongLine)
                 for ln in b.splitlines(keepends=True)]
        longs = [b.length for b in blocks if isinstance(b, LongLine)]
        assert rest == []
        if whole:
            assert (lines, longs) == ([data[:size], b"ab\n"], [])
        else:
            assert (lines, longs) == ([b"ab\n"], [size])
