"""lightjson.loads is json.loads: the same objects for every JSON text, and a ValueError
for every text json refuses."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compact_dp.lightjson import loads

values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-10 ** 30, max_value=10 ** 30)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner,
                                                                max_size=5),
    max_leaves=30)


def same(a: object, b: object) -> bool:
    """Equal, with NaN equal to NaN and types compared too (1 is not 1.0, nor True)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


def outcome(parse, data):
    try:
        return "ok", parse(data)
    except ValueError:
        return "ValueError", None


@given(values, st.sampled_from([None, (",", ":"), (", ", ": ")]), st.booleans(),
       st.sampled_from(["", " ", "\n", " \t\r\n"]))
def test_every_json_text_gives_the_objects_json_gives(value, separators, ascii, space):
    text = space + json.dumps(value, separators=separators, ensure_ascii=ascii) + space
    for data in (text, text.encode("utf-8", "surrogatepass")):
        assert same(loads(data), json.loads(data))


@given(st.binary(max_size=40) | st.text(max_size=40).map(str.encode))
def test_any_bytes_are_parsed_or_refused_as_json_does(data):
    ours, theirs = outcome(loads, data), outcome(json.loads, data)
    assert ours[0] == theirs[0] and same(ours[1], theirs[1])


@pytest.mark.parametrize("data", [
    b"", b"  ", b"{", b"[1,]", b'{"a" 1}', b"01", b"1 2", b'"\\x"', b"nan", b"\xef\xbb\xbf[1]",
    "\ufeff[1]", b"\xff\xfe[\x001\x00]\x00", '[1e400, -Infinity, NaN]', b"\x80",
    b'["\xed\xa0\x80"]'])
def test_edge_texts_match_json(data):
    ours, theirs = outcome(loads, data), outcome(json.loads, data)
    assert ours[0] == theirs[0] and same(ours[1], theirs[1]), data


def test_it_does_not_import_json():
    import subprocess
    import sys
    code = ("import sys; from compact_dp.lightjson import loads; "
            "loads(b'{\"a\": [1, 2.5, null]}'); print('json' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
