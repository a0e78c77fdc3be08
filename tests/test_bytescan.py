"""The fast reading's two byte scans (sessions/bytescan.py): the C module the build installs,
the regular expressions that define them (and run in the pure build), and a plain
statement of each, answer alike on any bytes and any bounds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compact_dp.sessions.bytescan import escaped_control_by_pattern, marked_by_pattern
from compact_dp.sessions.read import CLAUDE_MARKERS

from .conftest import ROOT, clean_env


def built_bytescan():
    """The C module of the package the tests import (the installed one: tests/__init__.py
    says why), or None if it has none; and whether that package is the source tree itself
    (on PYTHONPATH, as mutants.py runs it), where nothing is built."""
    import compact_dp
    source = Path(compact_dp.__file__).parent.resolve() == (ROOT / "compact_dp").resolve()
    try:
        from compact_dp.sessions import _bytescan
    except ImportError:
        return None, source
    return _bytescan, source


C, SOURCE_RUNS = built_bytescan()
needs_c = pytest.mark.skipif(C is None, reason="the installed build has no C module")


def test_the_installed_build_has_the_c_scans():
    """(as test_compiled checks the compiled modules: a quiet fallback is only slower)"""
    if os.environ.get("COMPACT_DP_PURE"):
        pytest.skip("COMPACT_DP_PURE is set: the pure build was asked for")
    if SOURCE_RUNS:
        pytest.skip("the source tree runs (PYTHONPATH), not a build")
    assert C is not None, "built without sessions/_bytescan.c (`pip install -v .` says why)"


# bytes a match is made of, and the bytes around one: quotes, backslashes, the markers'
# letters, a newline, a NUL and a byte past ASCII
PIECES = st.sampled_from([b'"', b"\\", b"u", b"b", b"f", b"user", b"assistant", b"system",
                          b'"user"', b'"assistant"', b'"system"', b'"use', b'ser"', b"\n",
                          b"\x00", b"\xff", b"x", b":"])
BYTES = st.lists(PIECES, max_size=30).map(b"".join)


def plainly_marked(block: bytes, start: int, stop: int) -> bool:
    """A marker lies wholly within the bounds (clipped to the block, as a search's are)."""
    start, stop = max(start, 0), min(stop, len(block))
    return any(m in block[start:stop] for m in CLAUDE_MARKERS) if start < stop else False


def plainly_escaped(written: bytes) -> bool:
    return any(written[i:i + 1] == b"\\" and written[i + 1:i + 2] in (b"b", b"f", b"u")
               for i in range(len(written)))


@given(BYTES, st.integers(-3, 40), st.integers(-3, 40))
def test_a_block_is_marked_where_a_marker_lies_within_the_bounds(block, start, stop):
    assert marked_by_pattern(block, start, stop) == plainly_marked(block, start, stop)


@needs_c
@given(BYTES, st.integers(-3, 40), st.integers(-3, 40))
def test_the_c_scan_finds_a_marker_where_the_pattern_does(block, start, stop):
    assert C.marked(block, start, stop) is marked_by_pattern(block, start, stop)


@given(BYTES)
def test_a_writing_holds_an_escaped_control_where_a_backslash_has_b_f_or_u_after_it(written):
    assert escaped_control_by_pattern(written) == plainly_escaped(written)


@needs_c
@given(BYTES)
def test_the_c_scan_finds_an_escaped_control_where_the_pattern_does(written):
    assert C.escaped_control(written) is escaped_control_by_pattern(written)


@needs_c
def test_the_c_scans_look_at_the_last_byte_and_no_further():
    """A marker or escape cut by the bounds (or the end) is none: the scans must not read
    past them, as a slice would not."""
    assert C.marked(b'"user"', 0, 6) and not C.marked(b'"user"', 0, 5)
    assert not C.marked(b'x"user"', 2, 7) and C.marked(b'x"user"', 1, 7)
    assert C.marked(b'"user"', -5, 99) and not C.marked(b'"user"', 4, 2)
    assert not C.marked(b'x', 0, 1 << 40)            # (unclipped, these read far past
    assert not C.marked(b'x', -(1 << 40), 1)         # the block's ends)
    assert C.escaped_control(b"a\\u") and not C.escaped_control(b"a\\")
    assert C.escaped_control(b"\\\\b") and not C.escaped_control(b"\\\\")


@needs_c
def test_the_c_scan_answers_as_the_pattern_for_bounds_as_far_outside_the_block_as_an_int_goes():
    """Bounds are clipped before a pointer is made of them: a stop far below zero, unclipped,
    made a pointer that wrapped past the block's start, and the scan read memory the block
    does not own until it crashed.  Run in a subprocess, so that a crash fails this test
    rather than the test run."""
    ends = [0, 1, -1, 7, 1 << 40, -(1 << 40), 1 << 47, -(1 << 47), 1 << 62, -(1 << 62),
            (1 << 63) - 1, -(1 << 63)]
    probe = f"""
from compact_dp.sessions._bytescan import marked
from compact_dp.sessions.bytescan import marked_by_pattern
for block in (b'', b'x', b'"user" and "system"'):
    for start in {ends!r}:
        for stop in {ends!r}:
            assert marked(block, start, stop) is marked_by_pattern(block, start, stop), \\
                (block, start, stop)
print("alike")
"""
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                       env=clean_env(), cwd="/", timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (0, "alike\n", "")


@needs_c
def test_the_c_scans_refuse_what_is_not_bytes():
    for call in (lambda: C.marked("x", 0, 1), lambda: C.marked(b"x", 0),
                 lambda: C.escaped_control(bytearray(b"x"))):
        with pytest.raises(TypeError):
            call()
