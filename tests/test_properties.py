"""Properties: the fast core answers exactly what a plain transcription of SPEC.md answers."""

from __future__ import annotations

import io
import math

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from compact_dp.awkvalue import UNSET, AwkValue
from compact_dp.models import AwkFatal, decide_conversation, get_model
from compact_dp.params import AWK_NAMES
from compact_dp.retention import compounded_retention
from compact_dp.scan import CHUNK, Scanner

from . import reference

MODELS = ["v3.0.7", "v2", "v4.2", "turn-keep"]
USER = b'{"role":"user","content":"%s"}'
LINE_SHAPES = [
    USER,
    b'{"role":"assistant","content":"%s"}',
    b'{"role":"user","content":[{"type":"tool_result","content":"%s"}]}',
    b'{"role": "user", "content": "%s"}',           # spaces: never a user line
    b'  {"role":"user","content":"%s"}',            # v3 user line, not v2
    b'{"role":"user","content":"%s"}\r',            # CRLF
    b"%s",                                          # arbitrary text, maybe blank
]

text = st.text(alphabet=st.sampled_from("ab é漢\t\"\\"), max_size=40).map(
    lambda s: s.encode("utf-8"))
line = st.builds(lambda shape, body, pad: shape % body + b"x" * pad,
                 st.sampled_from(LINE_SHAPES), text, st.integers(0, 3000))
conversation = st.builds(
    lambda lines, final_newline: b"\n".join(lines) + (b"\n" if lines and final_newline else b""),
    st.lists(line, max_size=40), st.booleans())

plain_numbers = st.one_of(
    st.sampled_from([0.0, 1.0, -1.0, 0.5, 2.0, 3.0, 0.3, 0.37, 1e-9, 1e12, 1e300]),
    st.floats(-1e6, 1e6, allow_nan=False),
)
awk_text = st.one_of(
    plain_numbers.map(repr),
    st.sampled_from(["", " ", "abc", "3abc", "0x1A", "inf", "-x", " 3 ", "+2", ".5", "1e1",
                     "0.5x", "2x", "-abc", "1e", "-0", "9e0"]),
)


def price(usual: list[str]):
    """Real price lists, equal prices, zero, and arbitrary decimals (inexact in binary)."""
    return st.one_of(st.sampled_from(usual),
                     st.floats(0, 100, allow_nan=False).map(lambda x: repr(round(x, 3))))


def value_strategy(name: str):
    """Typical, degenerate and awk-string values per parameter."""
    special = {
        "p_input": price(["0", "3.0", "0.30", "15", "1.25"]),
        "p_cache": price(["0", "0.30", "3.0", "0.075"]),
        "p_out": price(["0", "15.0", "75"]),
        "r": st.sampled_from(["0.8", "0", "1", "1.2", "-0.9", "0.5", "-1", "0.999", "2"]),
        "total_compact": st.sampled_from(["0", "2", "2.5", "-1", "abc", "300", "-7"]),
        "min_keep_ratio": st.sampled_from(["0.12", "0", "1", "1.5", "-0.3", "0.5", "abc",
                                           "0.99"]),
        "ratio": st.sampled_from(["0.12", "0", "1", "3", "-1", "abc", "0.5"]),
        "max_context": st.sampled_from(["200000", "", " ", "0", "-5", "10000", "2e5", "50",
                                        "1e12"]),
        "quality_penalty": st.sampled_from(["0.2", "", " ", "0", "1e3", "5"]),
        "V": st.sampled_from(["5000", "0", "150000"]),
        "S": st.sampled_from(["500", "0", "2000", "1"]),
    }
    return special.get(name, awk_text)


agent_defaults = {"baseline_e": "8", "V": "5000", "p_input": "3.0", "p_cache": "0.30",
                  "p_out": "15.0", "S": "500", "min_keep_ratio": "0.12", "r": "0.8",
                  "beta": "0.03", "max_context": "200000", "quality_penalty": "0.2",
                  "ratio": "0.12", "t": "5", "total_requests": "40", "total_compact": "0",
                  "total_input": "400000"}


@st.composite
def assignments(draw):
    """The agent's values with a few replaced by odd ones and a few left unset."""
    names = sorted(AWK_NAMES)
    assigned = dict(agent_defaults)
    for name in draw(st.lists(st.sampled_from(names), max_size=6, unique=True)):
        assigned[name] = draw(value_strategy(name))
    for name in draw(st.lists(st.sampled_from(names), max_size=3, unique=True)):
        assigned.pop(name, None)
    return assigned


def awk_values(assigned: dict[str, str]) -> dict[str, AwkValue]:
    values = {name: UNSET for name in AWK_NAMES}
    values.update({k: AwkValue.from_input(v) for k, v in assigned.items()})
    return values


def scan_bytes(data: bytes, v2: bool, chunk: int = CHUNK):
    scanner = Scanner(v2)
    import compact_dp.scan as scan_mod
    old, scan_mod.CHUNK = scan_mod.CHUNK, chunk
    try:
        scanner.add_stream(io.BytesIO(data))
    finally:
        scan_mod.CHUNK = old
    return scanner.conv


def fast(data: bytes, values, model: str):
    """(printed number, best_k, best benefit) from the package's core."""
    m = get_model(model)
    try:
        d = decide_conversation(values, scan_bytes(data, m.v2_users), m)
    except AwkFatal:
        return "fatal"
    return (d.keep, d.best_k, d.best_benefit) if model != "turn-keep" else (d.keep, 0, -1e18)


def slow(data: bytes, values, model: str):
    try:
        return reference.decide_detail(reference.records(data), values, model)
    except reference.Fatal:
        return "fatal"


def same(a, b) -> bool:
    """Equal, counting NaN benefits as equal to each other."""
    if a == b:
        return True
    return (isinstance(a, tuple) and isinstance(b, tuple) and a[:2] == b[:2]
            and a[2] != a[2] and b[2] != b[2])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=conversation, assigned=assignments(), model=st.sampled_from(MODELS))
@example(data=b"", assigned={}, model="v3.0.7")
@example(data=b"\n\n\n", assigned={"p_input": "3.0", "p_cache": "0.30"}, model="v3.0.7")
@example(data=b"a\nb\n" * 8, assigned=dict(agent_defaults, r="2", total_compact="3000"),
         model="v3.0.7")
def test_fast_core_equals_the_plain_transcription(data, assigned, model):
    """For any conversation and any awk values, the linear core finds the same best k with
    the bit-identical best benefit, and prints what SPEC §3 says."""
    values = awk_values(assigned)
    assert same(fast(data, values, model), slow(data, values, model))


@settings(max_examples=300, deadline=None)
@given(data=conversation, model=st.sampled_from(MODELS[:3]),
       t=st.integers(0, 40), reqs=st.integers(0, 400), c=st.integers(0, 12),
       tin=st.integers(0, 5_000_000), scale=st.sampled_from([0.0, 1.0, 10.0, 0.01]))
def test_realistic_parameters_agree(data, model, t, reqs, c, tin, scale):
    """With the values bash-agent passes (prices scaled, zero included), both agree."""
    assigned = dict(agent_defaults, t=str(t), total_requests=str(reqs), total_compact=str(c),
                    total_input=str(tin), p_input=repr(3.0 * scale), p_cache=repr(0.3 * scale))
    values = awk_values(assigned)
    assert same(fast(data, values, model), slow(data, values, model))


@settings(max_examples=200, deadline=None)
@given(data=conversation, chunk=st.integers(1, 64))
def test_chunk_boundaries_do_not_change_records(data, chunk):
    """Reading in tiny chunks yields the same records as splitting the whole input."""
    conv = scan_bytes(data, True, chunk)
    recs = reference.records(data)
    assert list(conv.sizes) == [reference.size(x) for x in recs]
    assert list(conv.users) == [i for i, x in enumerate(recs) if reference.is_user(x, "v3")]
    assert list(conv.users_v2) == [i for i, x in enumerate(recs) if reference.is_user(x, "v2")]


def plain_retention(r: float, c: float) -> float:
    r_t, i = 1.0, 1
    while i <= c + 1:
        r_t = r_t * r
        i += 1
    return 0.37 if r_t < 0.37 else r_t


@settings(max_examples=500, deadline=None)
@given(r=st.one_of(st.floats(-3, 3, allow_nan=False),
                   st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.37, 1e308, -1e308, math.inf,
                                    -math.inf, 0.9999, 1.0001])),
       c=st.one_of(st.integers(-3, 3000).map(float), st.floats(-5, 3000, allow_nan=False)))
def test_retention_shortcuts_never_change_the_result(r, c):
    """Stopping the r_t loop early gives the bit-identical value of the full loop."""
    got, want = compounded_retention(r, c), plain_retention(r, c)
    assert got == want and math.copysign(1, got) == math.copysign(1, want)


def test_retention_does_not_hang_on_huge_counts():
    """total_compact=1e12 (or inf) finishes, with the value the endless loop tends to."""
    assert compounded_retention(0.8, 1e12) == 0.37
    assert compounded_retention(0.9999999, 1e12) == 0.37
    assert compounded_retention(1.0, 1e12) == 1.0
    assert compounded_retention(1.2, 1e12) == math.inf
    assert compounded_retention(1.0000001, 1e12) == math.inf
    assert compounded_retention(-1.2, 1e12) == 0.37              # 1e12 + 1 steps: -inf
    assert compounded_retention(-1.2, 1e12 + 1) == math.inf      # an even count: +inf
    assert compounded_retention(0.8, math.inf) == 0.37
