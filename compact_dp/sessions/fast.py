"""Reading Claude Code sessions for replay: orjson where it gives the standard reading's
numbers, the standard reading wherever it might not.

A history is mostly tool output and progress lines, and the standard reading (the C
scanner of the standard library, through ``lightjson``) spends most of a replay's time
parsing them.  orjson parses a line in a third of the time, but costs ~17 ms to import, so
only replay, backtest and batch read this way; the decision, the status line and the hooks
read with ``lightjson`` (tests/test_live_input.py checks what they import).

orjson and the standard library parse a line to the same values, but:

* orjson refuses what the standard reading accepts or skips in its own way (a BOM, lone
  surrogates, NaN, Infinity, numbers beyond a double, nesting deeper than 1,024): a line
  orjson refuses is read the standard way;
* orjson makes an integer beyond 64 bits a float.  A reader uses numbers only as token
  counts and times (where such a number and its float are both garbage: 0 and no time),
  in a message's size and in a response's ids: a line whose message content holds a float
  or whose ids are not text is read again the standard way (``Unsure``), before anything
  of it is counted.

A message's size is the length of orjson's compact writing of its content (C speed, where
``jsonsize`` walks it in Python), which is ``jsonsize``'s number but for two kinds of value,
found before it is trusted:

* a float: orjson writes it otherwise than ``repr`` (and it may be an integer beyond 64
  bits), so a content holding one is ``Unsure``, as before (a walk over its lists and
  objects finds one; strings are not looked into);
* a control character other than newline, return and tab: ``jsonsize`` counts one byte
  where orjson writes ``\\b``, ``\\f`` or ``\\u00XX``, so where orjson's writing holds
  ``\\b``, ``\\f`` or ``\\u`` anywhere (an escaped backslash before a ``b`` too: it only
  costs the walk) the content is sized by the walk.  orjson writes ``\\u`` for nothing else.

Either way every number is the standard reading's: tests/test_fast.py compares the two on
real sessions, and ``make bench`` on every file of the corpus.
"""

from __future__ import annotations

import orjson

from ..lightjson import loads as standard_loads
from .bytescan import escaped_control, marked
from .claude_code import ClaudeCodeReader
from .jsonsize import sizer
from .line_reader import feed_line

dumps = orjson.dumps


class Unsure(Exception):
    """orjson's value of this line might not be the standard library's."""


def _unsure_of_floats(x: int | float) -> int:
    if isinstance(x, float):
        raise Unsure
    return len(repr(x))


walked_size = sizer(_unsure_of_floats)


def has_float(x: dict[str, object] | list[object]) -> bool:
    """Whether a float is anywhere in a parsed list or object (strings are not looked
    into)."""
    for v in x.values() if type(x) is dict else x:
        if type(v) is float or isinstance(v, (dict, list)) and has_float(v):
            return True
    return False


def content_size(content: object) -> int:
    """``jsonsize``'s size of a content, from orjson's writing of it where that is the
    same number (the module's docstring says when); ``Unsure`` if it holds a float."""
    if isinstance(content, (dict, list)) and has_float(content) or \
            type(content) is float:
        raise Unsure
    try:
        written = dumps(content)
    except orjson.JSONEncodeError:              # nested deeper than orjson writes
        return walked_size(content)
    return walked_size(content) if escaped_control(written) else len(written)


TEXT = (str, type(None))                        # ids of these types are read the same


class FastClaudeCodeReader(ClaudeCodeReader):
    """A Claude Code reader fed orjson's values: each message's content is measured before
    the line is fed, so a line it cannot be sure of is fed again, the standard way, with
    nothing of it counted yet."""

    measured: int | None = None

    def feed_orjson(self, obj: object) -> None:
        size = None
        if type(obj) is dict:
            kind = obj.get("type")
            message = obj.get("message")
            if (kind == "user" or kind == "assistant") and type(message) is dict:
                try:
                    size = content_size(message.get("content"))
                except RecursionError:          # the standard reading says what it is
                    raise Unsure from None
                if kind == "assistant" and not (
                        type(message.get("id")) in TEXT and type(obj.get("uuid")) in TEXT
                        and type(obj.get("requestId")) in TEXT):
                    raise Unsure
        self.measured = size                    # for this line only
        try:
            self.feed(obj)
        finally:
            self.measured = None

    def measure(self, content: object) -> int:
        return super().measure(content) if self.measured is None else self.measured


def feed_block(reader: FastClaudeCodeReader, block: bytes, start: int, end: int) -> None:
    """The complete lines of ``block[start:end]``, as ``read.feed_block`` feeds them (the
    same lines: those that can be conversation), each parsed by orjson where it can be —
    found in place, with no copy of each line (most bytes are in lines copied for
    nothing)."""
    parse, refused, find = orjson.loads, orjson.JSONDecodeError, block.find
    view = memoryview(block)
    while start < end:
        stop = find(b"\n", start, end)
        if stop < 0:
            stop = end
        if marked(block, start, stop):          # (a line with a marker is not blank)
            try:
                obj = parse(view[start:stop])
            except refused:
                feed_line(reader, block[start:stop], standard_loads)
            else:
                try:
                    reader.feed_orjson(obj)
                except Unsure:
                    feed_line(reader, block[start:stop], standard_loads)
        start = stop + 1
