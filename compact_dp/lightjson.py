"""``json.loads`` without importing ``json``: the same C scanner, none of the import.

The status line runs after every assistant message, and most of its start-up was
``import json``: about 8 ms on a 10 ms interpreter start, because ``json.decoder`` imports
``re`` (and ``re`` brings enum, functools, collections).  ``json.loads`` parses with the C
scanner of ``_json``; this module drives that scanner the way ``json.decoder`` does —
leading and trailing whitespace, bytes decoded as UTF-8, the NaN/Infinity constants — so
the results are the same objects (tests/test_lightjson.py checks it against ``json.loads``).
Errors are ``ValueError``.  The scanner builds its ``JSONDecodeError`` from ``json.decoder``,
and on CPython 3.11 it cannot import that module from inside its own error path: every
error in a line (a live transcript's half-written last line, a corrupt one) came back as
``SystemError: … returned NULL without setting an exception``.  So the first error imports
``json.decoder`` and parses the text again, which raises the real ``JSONDecodeError``
(only bad input pays the import).  Where ``_json`` is missing (not CPython), this is
``json.loads`` itself.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Loads = Callable[[str | bytes | bytearray], object]

WHITESPACE = " \t\n\r"
CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


class _Options:
    """What the C scanner reads off json's decoder: plain dicts, floats and ints."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = CONSTANTS.__getitem__


def _json_loads(data: str | bytes | bytearray) -> object:
    import json
    return json.loads(data)


def _make() -> Loads:
    try:
        from _json import make_scanner
    except ImportError:                          # not CPython: json is all there is
        return _json_loads
    # typeshed types the context as a JSON decoder; the scanner reads only _Options' names
    scan = make_scanner(_Options())  # type: ignore[arg-type]

    def loads(data: str | bytes | bytearray) -> object:
        """json.loads(data), for str or UTF-8 bytes."""
        if isinstance(data, (bytes, bytearray)):
            if b"\x00" in data[:4] or data[:2] in (b"\xff\xfe", b"\xfe\xff"):
                # UTF-16 or UTF-32: json knows how
                return _json_loads(data)
            text = bytes(data).decode("utf-8-sig" if data[:3] == b"\xef\xbb\xbf" else
                                      "utf-8", "surrogatepass")
        elif isinstance(data, str):
            if data.startswith("\ufeff"):
                raise ValueError("Unexpected UTF-8 BOM (decode using utf-8-sig)")
            text = data
        else:
            raise TypeError(f"the JSON object must be str, bytes or bytearray, not "
                            f"{type(data).__name__}")
        start = len(text) - len(text.lstrip(WHITESPACE))
        try:
            obj, end = scan(text, start)
        except StopIteration as e:
            raise ValueError(f"Expecting value: char {e.value}") from None
        except SystemError:                  # 3.11: the error path needs json.decoder
            return _json_loads(text)
        if end != len(text) and text[end:].strip(WHITESPACE):
            raise ValueError(f"Extra data: char {end}")
        return obj

    return loads


loads = _make()
