"""The two rules every line of a session goes through: a content's size (jsonsize) and a
timestamp's time (timefmt), each against an independent statement of it."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compact_dp.sessions.jsonsize import json_size
from compact_dp.sessions.timefmt import parse_time

# text with the characters compact JSON escapes, others it writes as they are, and some
# beyond the BMP; no other control characters (the standard library writes \u00XX for
# those where the size rule counts one byte)
TEXT = st.text(st.sampled_from('ab"\\\n\r\t é€😀\u2028/'), max_size=12)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT |
    st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=12)


@given(VALUES)
def test_a_size_is_the_length_of_the_compact_json_of_it(value):
    written = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    assert json_size(value) == len(written.encode("utf-8"))


@given(st.lists(st.dictionaries(st.sampled_from(["type", "text", "é"]), TEXT), max_size=4))
def test_sizes_of_many_objects_with_the_same_keys_add_up_alike(blocks):
    """Keys are sized once and remembered: the same key in another object is the same size,
    and a different key is not taken for it."""
    assert json_size(blocks) == (2 if not blocks else 1 + len(blocks) +
                                 sum(json_size(b) for b in blocks))
    assert json_size(blocks) == len(json.dumps(blocks, separators=(",", ":"),
                                               ensure_ascii=False).encode("utf-8"))


def test_rarer_control_characters_count_one_byte():
    assert json_size("\x01\x08\x0c") == 2 + 3


def reference_time(text: str) -> float:
    """The shape Claude Code and Codex write, read field by field."""
    date, clock = text[:-1].split("T")
    y, mo, d = map(int, date.split("-"))
    h, mi, s = clock.split(":")
    days = (y - 1970) * 365 + sum(1 for year in range(1970, y)
                                  if year % 4 == 0 and (year % 100 or year % 400 == 0))
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    days += sum([31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][:mo - 1])
    days += d - 1
    return ((days * 24 + int(h)) * 60 + int(mi)) * 60 + float(s)


@given(st.integers(1970, 2100), st.integers(1, 12), st.integers(1, 28), st.integers(0, 23),
       st.integers(0, 59), st.integers(0, 59_999))
def test_a_timestamp_is_its_seconds_since_the_epoch_read_once_or_again(y, mo, d, h, mi, ms):
    text = f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{ms // 1000:02d}.{ms % 1000:03d}Z"
    first = parse_time(text)
    assert first == reference_time(text)
    assert parse_time(text) == first                      # the minute is remembered


@pytest.mark.parametrize("text", ["0001-01-01T00:00:00.000Z", "1969-12-31T23:59:59.999Z",
                                  "9999-12-31T23:59:59.999Z", "5200-01-01T00:00:00.000Z",
                                  "0001-01-01 00:00:00", "9999-12-31T23:59:59+00:00"])
def test_a_text_time_no_clock_shows_is_no_time_as_a_number_would_be(text):
    """Before 1970 or past year 5138 (1e11 s, a number's bound): "cold since 739,955
    days" came of year 1 taken as real."""
    assert parse_time(text) is None


@pytest.mark.parametrize("text, seconds", [("1970-01-01T00:00:00.000Z", 0.0),
                                           ("5138-11-16T09:46:39.000Z", 1e11 - 1),
                                           ("2026-12-06 09:00:00", 1796547600.0)])
def test_the_bounds_of_a_text_time_are_times(text, seconds):
    assert parse_time(text) == seconds


def test_a_minute_that_is_no_time_is_no_time_again_and_spares_its_neighbours():
    for _ in range(2):
        assert parse_time("2026-xx-01T10:00:00.000Z") is None
        assert parse_time("2026-03-01T10:00:0x.000Z") is None
    assert parse_time("2026-03-01T10:00:01.500Z") == reference_time("2026-03-01T10:00:01.500Z")
    assert parse_time(1.7e9) == 1.7e9 and parse_time(1.7e12) == 1.7e9
    assert parse_time(True) is None and parse_time(math.nan) is None
