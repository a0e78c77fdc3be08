"""How many bytes a parsed JSON value takes written compactly — without writing it.

A message's size (with ``--tokens bytes``, and as the weight that shares recorded growth
among messages) is its content's compact JSON length.  Computing it from the parsed value,
instead of serialising with one library or another, gives the same number whichever JSON
parser read the line (the status line uses the standard library's, to start fast).
Escapes counted: ``\\"``, ``\\\\``, ``\\n``, ``\\r``, ``\\t``; rarer control characters
count as one byte.
"""

from __future__ import annotations


def string_size(s: str) -> int:
    return (len(s.encode("utf-8", "surrogatepass")) + 2 + s.count('"') + s.count("\\")
            + s.count("\n") + s.count("\r") + s.count("\t"))


def json_size(x: object) -> int:
    """Bytes of ``x`` as compact JSON (separators ``,`` and ``:``, UTF-8, unescaped)."""
    if isinstance(x, str):
        return string_size(x)
    if x is None:
        return 4
    if isinstance(x, bool):
        return 4 if x else 5
    if isinstance(x, (int, float)):
        return len(repr(x))
    if isinstance(x, list):
        return 1 + len(x) + sum(json_size(v) for v in x) if x else 2
    if isinstance(x, dict):
        if not x:
            return 2
        return 1 + len(x) + sum(string_size(str(k)) + 1 + json_size(v) for k, v in x.items())
    return len(str(x))
