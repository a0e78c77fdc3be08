"""The two byte scans of replay's fast reading (sessions/fast.py), defined here as regular
expressions: what each answers, and what runs where the C module ``_bytescan`` is not built.

* ``marked(block, start, stop)``: whether ``block[start:stop]`` holds one of
  ``read.CLAUDE_MARKERS`` (``"user"``, ``"assistant"``, ``"system"``, quotes included):
  the lines that can be Claude Code conversation.  One pass, where three finds read a line
  that has none three times.
* ``escaped_control(written)``: whether orjson's writing of a content holds a backslash
  followed by ``b``, ``f`` or ``u`` — what it writes for a control character other than
  newline, return and tab, where ``jsonsize`` counts one byte (fast.py says why).

Python's regular expressions look at every byte; ``_bytescan`` (setup.py builds it with
the compiled modules) jumps between the bytes a match must start with, and answers the
same: tests/test_bytescan.py compares the two.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

MARKERS = re.compile(rb'"(?:user|assistant|system)"')
CONTROL_ESCAPE = re.compile(rb"\\[bfu]")


def marked_by_pattern(block: bytes, start: int, stop: int) -> bool:
    return MARKERS.search(block, start, stop) is not None


def escaped_control_by_pattern(written: bytes) -> bool:
    return CONTROL_ESCAPE.search(written) is not None


try:
    from . import _bytescan
    marked: Callable[[bytes, int, int], bool] = _bytescan.marked
    escaped_control: Callable[[bytes], bool] = _bytescan.escaped_control
except ImportError:                         # the pure build
    marked, escaped_control = marked_by_pattern, escaped_control_by_pattern
