"""Replay's reading (sessions/fast.py: orjson where it gives the same numbers) against the
standard reading (lightjson), number for number: on real sessions, on the lines orjson reads
otherwise, and on any value anywhere in a line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compact_dp.sessions.read import read_session

from .conftest import SHARED, write
from .session_fixtures import claude_session, dumps, text, tool_use
from .test_bad_input import ANY_JSON, GONE, _places, _replaced

CORPUS = Path.home() / ".cache" / "compact-dp-corpus"


def everything(path: Path, fast: bool) -> dict:
    """Every number a full session holds, its warnings and what it failed with."""
    try:
        s = read_session([str(path)], fast=fast)
    except Exception as e:                       # the fast reading must fail alike
        return {"error": f"{type(e).__name__}: {e}"}
    return {"totals": s.totals(), "kinds": s.kinds, "nbytes": s.nbytes, "tokens": s.tokens,
            "requests": [(r.seen, r.time, r.llm, r.usage and r.usage.numbers(), r.segment,
                          r.key, r.adjust, r.sent, r.done) for r in s.requests],
            "compactions": [(c.at, c.time) for c in s.compactions], "touches": s.touches,
            "warnings": s.warnings}


def same_both_ways(path: Path) -> dict:
    standard = everything(path, fast=False)
    assert everything(path, fast=True) == standard, path
    return standard


def test_real_claude_code_sessions_read_the_same_fast():
    """A sample of the shared corpus (``make bench`` checks every file)."""
    if not (SHARED / "transcripts" / "corpus").is_dir() or not CORPUS.is_dir():
        pytest.skip("needs the unpacked shared corpus (../shared/transcripts/corpus/unpack)")
    files = sorted((CORPUS / "claude-code").rglob("*.jsonl"))
    assert files
    for path in files[::7]:
        same_both_ways(path)


def session_with(line: str) -> bytes:
    s = claude_session()
    return ("\n".join(s.lines[:4] + [line] + s.lines[4:]) + "\n").encode("utf-8",
                                                                       "surrogatepass")


def assistant(content: list, message_id: object = "msg_x", request_id: object = "req_x"
              ) -> str:
    return dumps({"type": "assistant", "sessionId": "s-1", "uuid": "a1",
                  "timestamp": "2026-03-01T10:00:05.000Z", "requestId": request_id,
                  "message": {"id": message_id, "model": "claude-opus-4-6",
                              "role": "assistant", "content": content,
                              "usage": {"input_tokens": 3, "output_tokens": 5,
                                        "cache_read_input_tokens": 11000}}})


BIG = 123456789012345678901234567890          # orjson reads it as a float
ODD_LINES = {
    "an integer beyond 64 bits in a tool's input":
        assistant([tool_use("t9", "x") | {"input": {"n": BIG}}]),
    "a float in a tool's input": assistant([tool_use("t9", "x") | {"input": {"t": 1e-05}}]),
    "a message id beyond 64 bits": assistant([text("a")], message_id=BIG),
    "a request id that is a number": assistant([text("a")], request_id=7),
    "a lone surrogate": assistant([text("\ud800 half")]),
    "a lone surrogate, escaped": assistant([text("\ud800 half")]).replace("\ud800", "\\ud800"),
    "NaN in the usage": assistant([text("a")]).replace('"output_tokens":5',
                                                       '"output_tokens":NaN'),
    "a byte order mark": "\ufeff" + assistant([text("a")]),
    "control characters": assistant([text("\x01\x08\x0c\x7f \u2028")]),
    "a backspace": assistant([text("a\bc")]),
    "a form feed": assistant([text("a\fc")]),
    "an escape character (colours in a tool's output)": assistant([text("\x1b[31mred")]),
    "a content that is a float": assistant([text("a")]).replace(
        '"content":[{"type":"text","text":"a"}]', '"content":1e-05'),
    "content nested 600 deep": assistant([text("a"), json.loads("[" * 600 + "]" * 600)]),
    "a line nested 2,000 deep": "[" * 2000 + "]" * 2000,
    "not JSON": '{"type":"assistant","message":{',
}


@pytest.mark.parametrize("name", sorted(ODD_LINES))
def test_a_line_orjson_would_read_otherwise_reads_the_standard_way(name, tmp_path):
    f = write(tmp_path, session_with(ODD_LINES[name]))
    standard = same_both_ways(f)
    assert "error" not in standard


def test_two_message_ids_one_float_apart_are_two_responses(tmp_path):
    """orjson would read both ids as the same float: one response, where there are two."""
    lines = [assistant([text("a")], message_id=BIG, request_id=BIG),
             assistant([text("b")], message_id=BIG + 1, request_id=BIG + 1)]
    f = write(tmp_path, session_with("\n".join(lines)))
    assert len(same_both_ways(f)["requests"]) == len(claude_session().requests) + 2


def test_one_request_id_is_one_request_whatever_its_message_ids(tmp_path):
    """A request's streamed lines may carry different message.ids: one API request is one
    bill, both ways of reading."""
    lines = [assistant([text("a")], message_id="msg_1"), assistant([text("b")], message_id="msg_2")]
    f = write(tmp_path, session_with("\n".join(lines)))
    assert len(same_both_ways(f)["requests"]) == len(claude_session().requests) + 1


@pytest.mark.parametrize("first, second", [(1, True), (1, 1.0), ([1], [1.0])])
def test_ids_equal_in_value_but_not_in_writing_are_two_responses(first, second, tmp_path):
    """A response's lines repeat its ids, so the reader keys them once; an id that only
    equals the last one (1 == True == 1.0) is another response, both ways of reading. (A
    requestId that is not text does not key; the message.id does, so both carry the id.)"""
    lines = [assistant([text("a")], message_id=first, request_id=first),
             assistant([text("b")], message_id=second, request_id=second)]
    f = write(tmp_path, session_with("\n".join(lines)))
    assert len(same_both_ways(f)["requests"]) == len(claude_session().requests) + 2


@st.composite
def claude_lines_with_a_value_changed(draw):
    """The fixture session's lines, each with one value anywhere replaced by any JSON (or
    removed), written as the standard library writes it (NaN, big integers and all)."""
    lines = []
    for raw in claude_session().lines:
        line = json.loads(raw)
        path = draw(st.sampled_from(list(_places(line))[::-1]))
        new = draw(st.one_of(ANY_JSON, st.just(GONE)) if path else ANY_JSON)
        lines.append(json.dumps(_replaced(line, path, new), separators=(",", ":")))
    return "\n".join(lines) + "\n"


@settings(max_examples=150)
@given(claude_lines_with_a_value_changed())
def test_any_value_anywhere_reads_the_same_fast(tmp_path_factory, data):
    same_both_ways(write(tmp_path_factory.mktemp("any"), data))


SIZED = st.recursive(st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) |
                     st.floats(allow_nan=False, allow_infinity=False) | st.text(),
                     lambda inner: st.lists(inner, max_size=3) |
                     st.dictionaries(st.text(max_size=3), inner, max_size=3),
                     max_leaves=8)


def leaves(value: object):
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        for v in value:
            yield from leaves(v)
    else:
        yield value


@given(SIZED)
def test_a_content_is_sized_as_jsonsize_sizes_it_or_said_unsure(value):
    """orjson's writing of any value orjson can read (text with any character, integers
    of 64 bits) is taken for its size only where it is jsonsize's number; a float is
    Unsure."""
    from compact_dp.sessions.fast import Unsure, content_size
    from compact_dp.sessions.jsonsize import json_size
    try:
        size = content_size(value)
    except Unsure:
        assert any(type(x) is float for x in leaves(value))
        return
    assert size == json_size(value)
