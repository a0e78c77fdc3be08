"""docs/awk.md, rule by rule: what a -v value means to awk."""

from __future__ import annotations

import math

import pytest

from compact_dp.core.awkvalue import (
    UNSET,
    AwkValue,
    awk_int,
    equals_empty_string,
    gt,
    le,
    looks_numeric,
    lt,
    number_to_string,
    numeric_prefix,
    unescape,
)


@pytest.mark.parametrize("text", ["0", "3", " 3 ", "+2", "-4", ".5", "5.", "1e1", "9e0",
                                  "2E-3", "\t7\n", "-0", "0.30", "1e+5"])
def test_decimal_looking_values_are_numeric(text):
    """Optional blanks, sign, digits with a point, exponent, blanks: a number."""
    assert looks_numeric(text)
    assert AwkValue.from_input(text).kind == "strnum"


@pytest.mark.parametrize("text, value", [("", 0), ("abc", 0), ("3abc", 3), ("0x1A", 0),
                                         ("inf", 0), ("nan", 0), ("INF", 0), ("+infx", 0),
                                         ("+ inf", 0), (" ", 0), ("-x", 0),
                                         ("0.5x", 0.5), ("2x", 2), ("1e", 1), ("1e+", 1),
                                         (".", 0), ("-abc", 0), ("+", 0), ("1_000", 1),
                                         (" 12 x", 12), ("1e3z", 1000)])
def test_other_values_are_strings_with_their_numeric_prefix(text, value):
    """Anything else is a string; arithmetic uses its longest leading decimal number."""
    v = AwkValue.from_input(text)
    assert v.kind == "string"
    assert v.num == value
    assert numeric_prefix(text) == value


def test_string_compared_with_number_compares_strings():
    """e_fixed=abc makes e_fixed > 0 true ("abc" > "0"); " " <= 0 is true (" " < "0")."""
    assert gt(AwkValue.from_input("abc"), 0)
    assert le(AwkValue.from_input(" "), 0)
    assert not gt(AwkValue.from_input("-x"), 0)      # "-" sorts before "0"
    assert lt(AwkValue.from_input("0.5x"), 1)        # "0.5x" < "1"
    assert not lt(AwkValue.from_input("abc"), 1)     # "abc" > "1"
    assert gt(AwkValue.from_input("10x"), 2) is False  # "10x" < "2" as strings


def test_numeric_values_compare_numerically():
    assert gt(AwkValue.from_input("10"), 2)
    assert not gt(AwkValue.from_input(" -3 "), 0)
    assert lt(AwkValue.number(0.5), 1)


def test_unset_is_both_zero_and_empty():
    assert not gt(UNSET, 0) and le(UNSET, 0)
    assert equals_empty_string(UNSET)
    assert not equals_empty_string(AwkValue.from_input("0"))
    assert equals_empty_string(AwkValue.from_input(""))
    assert not equals_empty_string(AwkValue.from_input(" "))


def test_numbers_written_as_awk_writes_them():
    assert number_to_string(0.0) == "0"
    assert number_to_string(2.0) == "2"
    assert number_to_string(0.3) == "0.3"
    assert number_to_string(1e20) == "100000000000000000000"
    assert number_to_string(1 / 3) == "0.333333"


def test_awk_int_truncates_toward_zero_and_keeps_infinities():
    assert awk_int(2.7) == 2 and awk_int(-2.7) == -2
    assert awk_int(math.inf) == math.inf and awk_int(-math.inf) == -math.inf


@pytest.mark.parametrize("raw, want", [
    (r"a\tb", "a\tb"), (r"\\", "\\"), (r"\101", "A"), (r"\1234", "S4"), (r"\08", "\x008"),
    (r"\q", "q"), (r"\.0", ".0"), (r"\/", "/"), (r'\"', '"'),        # unknown \c is c
    (r"\x41B", "AB"), (r"\x4142", "A42"), (r"\x", "x"), (r"\xg", "xg"),  # at most 2 hex
    ("x\\", "x"), ("\\", ""),                                         # trailing \ dropped
    (r"\777", "\udcff"), (r"\400", "\x00"),                           # octal: low 8 bits
])
def test_escapes_are_processed_like_gawk(raw, want):
    r"""As gawk 5.2 processes -v values (checked by hand against gawk, where mawk and
    original-awk differ: \x, a trailing backslash, octal above 0377)."""
    assert unescape(raw) == want


def test_assignment_keeps_the_nature(tmp_path):
    """L_fixed=abc: L = L_fixed stays a string, so L < 1 is false and R = E × 0 = 0;
    L_fixed=0.5x: "0.5x" < "1" is true, so L = 1."""
    from compact_dp.core.models import derive, get_model
    from compact_dp.core.params import awk_values

    from .conftest import scan_stream

    conv = scan_stream([b'{"role":"user","content":"hi"}'] * 5)
    model = get_model("v3.0.7")
    d = derive(awk_values({"L_fixed": "abc", "e_fixed": "4"}), conv, model)
    assert (d.L, d.R) == (0.0, 0.0)
    d = derive(awk_values({"L_fixed": "0.5x", "e_fixed": "4"}), conv, model)
    assert (d.L, d.R) == (1.0, 4.0)
    d = derive(awk_values({"e_fixed": "abc"}), conv, model)
    assert d.E == 0.0
    d = derive(awk_values({"max_context": " ", "quality_penalty": ""}), conv, model)
    assert (d.M, d.Q) == (200000.0, 0.2)
    d = derive(awk_values({"max_context": "abc", "quality_penalty": " "}), conv, model)
    assert (d.M, d.Q) == (0.0, 0.0)


# The scanner is hand-written (re costs start-up time); a regular expression is the oracle.
import re  # noqa: E402

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_DEC = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_NUMERIC = re.compile(r"[ \t\n\r\f\v]*" + _DEC + r"[ \t\n\r\f\v]*\Z")
_PREFIX = re.compile(r"[ \t\n\r\f\v]*(" + _DEC + ")")


_IEEE = re.compile(r"[ \t\n\r\f\v]*[+-](?:inf|nan)[ \t\n\r\f\v]*\Z", re.I)


@given(st.text(alphabet=st.sampled_from(" \t\n+-.eE0123456789xainfNAIF"), max_size=12))
def test_hand_written_recogniser_agrees_with_the_regex(text):
    assert looks_numeric(text) == bool(_NUMERIC.match(text) or _IEEE.match(text))
    m = _PREFIX.match(text)
    assert numeric_prefix(text) == (float(m.group(1)) if m else 0.0)


@pytest.mark.parametrize("text, value", [("+inf", math.inf), ("-inf", -math.inf),
                                         (" +INF\t", math.inf), ("-Inf", -math.inf)])
def test_signed_infinities_are_numbers(text, value):
    """awk reads +inf, -inf, +nan, -nan (any case, blanks around) as numbers."""
    v = AwkValue.from_input(text)
    assert v.kind == "strnum" and v.num == value and looks_numeric(text)
    assert lt(AwkValue.from_input("-inf"), 0) and gt(AwkValue.from_input("+inf"), 1e308)


def test_signed_nans_are_numbers_that_compare_false():
    for text in ("+nan", "-NaN", " +nan "):
        v = AwkValue.from_input(text)
        assert v.kind == "strnum" and v.num != v.num
        assert not gt(v, 0) and not lt(v, 0) and not le(v, 0)
