"""Awk's values: what a ``-v name=value`` string means to the awk program (docs/awk.md).

The callers pass every parameter as a string.  Awk gives it a numeric value and, separately,
decides whether comparisons with it are numeric or string comparisons.  ``compact_dp.awk``
behaves differently for ``e_fixed=abc`` than for ``e_fixed=0``, so the drop-in must carry
both facts around exactly as awk does.
"""

from __future__ import annotations

import math

# Hand-written instead of a regex: importing re costs ~5 ms, and this runs before every
# LLM call of an agent.
_BLANKS = " \t\n\r\f\v"
_DIGITS = frozenset("0123456789")
_ESCAPES = {"\\": "\\", '"': '"', "/": "/", "a": "\a", "b": "\b", "f": "\f",
            "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_OCTAL = frozenset("01234567")
_HEX = frozenset("0123456789abcdefABCDEF")
_IEEE = {"+inf": math.inf, "-inf": -math.inf, "+nan": math.nan, "-nan": -math.nan}


def _digits_end(text: str, i: int) -> int:
    while i < len(text) and text[i] in _DIGITS:
        i += 1
    return i


def decimal_end(text: str, i: int = 0) -> int:
    """End of the decimal number starting at i — [+-]? (d+ .? d* | . d+) ([eE][+-]? d+)? —
    or i itself when there is none."""
    j = i + 1 if i < len(text) and text[i] in "+-" else i
    mantissa = _digits_end(text, j)
    if mantissa < len(text) and text[mantissa] == ".":
        end = _digits_end(text, mantissa + 1)
        if end == mantissa + 1 and mantissa == j:   # a lone point
            return i
        mantissa = end
    elif mantissa == j:
        return i
    if mantissa < len(text) and text[mantissa] in "eE":
        e = mantissa + 1
        if e < len(text) and text[e] in "+-":
            e += 1
        end = _digits_end(text, e)
        if end > e:
            return end
    return mantissa


def _skip_blanks(text: str, i: int) -> int:
    while i < len(text) and text[i] in _BLANKS:
        i += 1
    return i


def _ieee(text: str) -> float | None:
    """``+inf``, ``-inf``, ``+nan``, ``-nan`` (any case, blanks around): awk reads these as
    numbers; an unsigned ``inf`` or ``nan`` stays a string."""
    core = text.strip(_BLANKS)
    return _IEEE.get(core.lower()) if len(core) == 4 else None


def looks_numeric(text: str) -> bool:
    """True when awk would treat this input string as a number in comparisons."""
    start = _skip_blanks(text, 0)
    end = decimal_end(text, start)
    if end > start and _skip_blanks(text, end) == len(text):
        return True
    return _ieee(text) is not None


def numeric_prefix(text: str) -> float:
    """The value awk uses in arithmetic: the longest leading decimal number, else 0."""
    start = _skip_blanks(text, 0)
    end = decimal_end(text, start)
    return float(text[start:end]) if end > start else 0.0


def _byte(value: int) -> str:
    """One byte as a character of the command-line string (surrogate-escaped above 0x7f,
    the way Python decodes argv), so comparisons see awk's byte."""
    value &= 0xFF
    return chr(value) if value < 0x80 else chr(0xDC00 + value)


def unescape(text: str) -> str:
    r"""Process backslash escapes as gawk does for ``-v`` and operand assignments.

    ``\\ \" \/ \a \b \f \n \r \t \v``; ``\ddd`` up to three octal digits (the
    byte's low 8 bits, so ``\777`` is 0xFF); ``\xHH`` up to two hex digits (``\x``
    with none is ``x``); any other ``\c`` is ``c``; a trailing backslash is dropped.
    """
    if "\\" not in text:
        return text
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 == n:                      # a trailing backslash: gawk drops it
            break
        nxt = text[i + 1]
        if nxt in _OCTAL:
            j = i + 1
            while j < n and j < i + 4 and text[j] in _OCTAL:
                j += 1
            out.append(_byte(int(text[i + 1:j], 8)))
            i = j
        elif nxt == "x":
            j = i + 2
            while j < n and j < i + 4 and text[j] in _HEX:
                j += 1
            out.append(_byte(int(text[i + 2:j], 16)) if j > i + 2 else "x")
            i = j
        else:
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
    return "".join(out)


def number_to_string(x: float) -> str:
    """How awk writes a number when it must compare it as a string (CONVFMT=%.6g)."""
    if math.isfinite(x) and x == int(x):
        return "%d" % x
    return "%.6g" % x


class AwkValue:
    """A value together with its awk nature.

    ``kind`` is ``"number"`` (computed or given as a number), ``"strnum"`` (an input string
    that looks numeric), ``"string"`` (any other input string) or ``"unset"`` (a variable
    never assigned: both 0 and "").  ``text`` is the original string, if there was one.
    """

    __slots__ = ("text", "num", "kind")

    def __init__(self, text: str | None, num: float, kind: str):
        self.text = text
        self.num = num
        self.kind = kind

    @classmethod
    def from_input(cls, text: str) -> AwkValue:
        """A string that came from the command line (a ``-v`` value or an operand)."""
        special = _ieee(text)
        if special is not None:
            return cls(text, special, "strnum")
        if looks_numeric(text):
            return cls(text, float(text.strip(_BLANKS)), "strnum")
        return cls(text, numeric_prefix(text), "string")

    @classmethod
    def number(cls, x: float) -> AwkValue:
        return cls(None, float(x), "number")

    @property
    def is_string(self) -> bool:
        """Comparisons with this value are string comparisons."""
        return self.kind == "string"

    def as_string(self) -> str:
        if self.text is not None:
            return self.text
        return "" if self.kind == "unset" else number_to_string(self.num)

    def __repr__(self) -> str:
        return f"AwkValue({self.text!r}, {self.num!r}, {self.kind})"


UNSET = AwkValue(None, 0.0, "unset")


def _cmp_bytes(a: str, b: str) -> int:
    ab, bb = a.encode("utf-8", "surrogateescape"), b.encode("utf-8", "surrogateescape")
    return (ab > bb) - (ab < bb)


def compare_number(v: AwkValue, const: float) -> int | None:
    """Compare a variable with a numeric constant as awk does: -1, 0, 1 (None if NaN).

    Numbers, numeric strings and unset values compare numerically; other strings compare
    byte-wise against the constant written as awk writes it (``0`` -> ``"0"``).
    """
    if v.kind != "string":
        a = v.num
        if a != a or const != const:
            return None
        return (a > const) - (a < const)
    return _cmp_bytes(v.as_string(), number_to_string(const))


def gt(v: AwkValue, const: float) -> bool:
    c = compare_number(v, const)
    return c is not None and c > 0


def lt(v: AwkValue, const: float) -> bool:
    c = compare_number(v, const)
    return c is not None and c < 0


def le(v: AwkValue, const: float) -> bool:
    c = compare_number(v, const)
    return c is not None and c <= 0


def equals_empty_string(v: AwkValue) -> bool:
    """``v == ""`` is always a string comparison; an unset variable is the empty string."""
    return v.as_string() == ""


def awk_int(x: float) -> float:
    """awk's int(): truncate toward zero, leaving infinities and NaN alone."""
    if math.isfinite(x):
        return float(math.trunc(x))
    return x
