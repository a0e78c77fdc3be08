"""How many bytes a parsed JSON value takes written compactly — without writing it.

A message's size (with ``--tokens bytes``, and as the weight that shares recorded growth
among messages) is its content's compact JSON length.  Computing it from the parsed value,
instead of serialising with one library or another, gives the same number whichever JSON
parser read the line (the status line uses the standard library's, to start fast).
Escapes counted: ``\\"``, ``\\\\``, ``\\n``, ``\\r``, ``\\t``; rarer control characters
count as one byte.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

ESCAPED = b'"\\\n\r\t'              # the characters compact JSON writes with a backslash
# A value nested deeper than this is not sized: the line is malformed, whether the
# stack would have held it or not (compiled, it would; in Python, about 480 deep).
MAX_DEPTH = 400
DEEPER = f"nested deeper than {MAX_DEPTH}"


def string_size(s: str) -> int:
    """The written string: its UTF-8 bytes, two quotes and a backslash per escaped
    character (counted by deleting them: one pass, where five counts were five)."""
    raw = s.encode("utf-8", "surrogatepass")
    return 2 * len(raw) + 2 - len(raw.translate(None, ESCAPED))


def sizer(number: Callable[[Any], int]) -> Callable[[Any], int]:
    """A ``json_size`` that sizes numbers with ``number`` (the one rule for the rest)."""
    keys: dict[str, int] = {}                 # a dict key's size, once per key

    def key_size(k: str) -> int:
        if len(keys) >= 4096:
            keys.clear()
        n = keys[k] = string_size(k)
        return n

    def size(x: Any, depth: int = 0) -> int:
        """Bytes of ``x``, a parsed JSON value, as compact JSON (separators ``,`` and
        ``:``, UTF-8, unescaped).  The kinds a message is made of come first; a string
        value in an object is sized in place (most values are)."""
        kind = type(x)
        if kind is str:
            return string_size(x)
        if kind is list:
            if depth >= MAX_DEPTH:
                raise RecursionError(DEEPER)
            return 1 + len(x) + sum([size(v, depth + 1) for v in x]) if x else 2
        if kind is dict:
            if depth >= MAX_DEPTH:
                raise RecursionError(DEEPER)
            n = 1 + len(x) if x else 2
            for k, v in x.items():
                n += (keys.get(k) or key_size(str(k))) + 1
                n += string_size(v) if type(v) is str else size(v, depth + 1)
            return n
        if x is None:
            return 4
        if kind is bool:
            return 4 if x else 5
        if kind is int or kind is float:
            return number(x)
        return len(str(x))
    return size


def _repr_size(x: Any) -> int:
    return len(repr(x))


json_size = sizer(_repr_size)
