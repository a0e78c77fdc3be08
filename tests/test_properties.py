"""Properties: the fast core answers exactly what a plain transcription answers.

Stated as sentences, checked on generated conversations and awk values by hypothesis
(profile ``dev`` by default, ``ci`` with HYPOTHESIS_PROFILE=ci; see conftest.py).
"""

from __future__ import annotations

import io
import math

from hypothesis import example, given
from hypothesis import strategies as st

from compact_dp.core.decision import decide_conversation
from compact_dp.core.models import get_model
from compact_dp.core.params import AWK_NAMES, awk_values
from compact_dp.core.retention import compounded_retention
from compact_dp.core.scan import Scanner
from compact_dp.errors import AwkFatal
from compact_dp.views.explain import all_terms

from . import reference
from .conftest import AGENT_VALUES

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
                     "0.5x", "2x", "-abc", "1e", "-0", "9e0", "+inf", "-inf", "+nan",
                     " -INF "]),
)


def price(usual: list[str]):
    """Real price lists, equal prices, zero, and arbitrary decimals (inexact in binary)."""
    return st.one_of(st.sampled_from(usual),
                     st.floats(0, 100, allow_nan=False).map(lambda x: repr(round(x, 3))),
                     st.floats(0, 100, allow_nan=False).map(repr))


def value_strategy(name: str):
    """Typical, degenerate and awk-string values per parameter."""
    special = {
        "p_input": price(["0", "3.0", "0.30", "15", "1.25"]),
        "p_cache": price(["0", "0.30", "3.0", "0.075"]),
        "p_out": price(["0", "15.0", "75"]),
        "r": st.sampled_from(["0.8", "0", "1", "1.2", "-0.9", "0.5", "-1", "0.999", "2"]),
        "total_compact": st.sampled_from(["0", "2", "2.5", "-1", "abc", "300", "-7"]),
        "min_keep_ratio": st.sampled_from(["0.12", "0", "1", "1.5", "-0.3", "0.5", "abc",
                                           "0.99", "+nan", "-inf"]),
        "ratio": st.sampled_from(["0.12", "0", "1", "3", "-1", "abc", "0.5"]),
        "max_context": st.sampled_from(["200000", "", " ", "0", "-5", "10000", "2e5", "50",
                                        "1e12"]),
        "quality_penalty": st.sampled_from(["0.2", "", " ", "0", "1e3", "5"]),
        "V": st.sampled_from(["5000", "0", "150000"]),
        "S": st.sampled_from(["500", "0", "2000", "1"]),
    }
    return special.get(name, awk_text)


@st.composite
def assignments(draw):
    """The agent's values with a few replaced by odd ones and a few left unset."""
    names = sorted(AWK_NAMES)
    assigned = dict(AGENT_VALUES, ratio="0.12")
    for name in draw(st.lists(st.sampled_from(names), max_size=6, unique=True)):
        assigned[name] = draw(value_strategy(name))
    for name in draw(st.lists(st.sampled_from(names), max_size=3, unique=True)):
        assigned.pop(name, None)
    return assigned


def scan_bytes(data: bytes, v2: bool, chunk: int = 1 << 20):
    scanner = Scanner(v2, chunk)
    scanner.add_stream(io.BytesIO(data))
    return scanner.conv


def fast(data: bytes, assigned: dict[str, str], model: str):
    """(printed number, best_k, best benefit, every k's terms) from the package's core."""
    m = get_model(model)
    try:
        d = decide_conversation(awk_values(assigned), scan_bytes(data, m.v2_users), m)
        rows = [] if m.turn_keep or d.derived is None else all_terms(d)
    except AwkFatal:
        return "fatal"
    if m.turn_keep:
        return d.keep, 0, -1e18, []
    return d.keep, d.best_k, d.best_benefit, [
        {"k": t.k, "K": t.K, "H": t.H, "savings": t.savings, "cache_miss": t.cache_miss,
         "compact_cost": t.compact_cost, "info_loss": t.info_loss, "quality": t.quality,
         "benefit": t.benefit} for t in rows if t.H > 0]


def slow(data: bytes, assigned: dict[str, str], model: str):
    try:
        keep, best_k, best, facts = reference.explain(reference.records(data), assigned,
                                                      model)
    except reference.Fatal:
        return "fatal"
    return keep, best_k, best, facts.get("rows", [])


def bits(x):
    """A float's exact bits (so NaN equals NaN and -0.0 differs from 0.0)."""
    return x.hex() if isinstance(x, float) else x


def same(a, b) -> bool:
    """Equal to the last bit, every k's terms included."""
    if a == "fatal" or b == "fatal":
        return a == b
    rows_a = [{k: bits(v) for k, v in row.items()} for row in a[3]]
    rows_b = [{k: bits(float(v) if k not in ("k", "K", "H") else v) for k, v in row.items()}
              for row in b[3]]
    return a[:2] == b[:2] and bits(a[2]) == bits(float(b[2])) and rows_a == rows_b


@given(data=conversation, assigned=assignments(), model=st.sampled_from(MODELS))
@example(data=b"", assigned={}, model="v3.0.7")
@example(data=b"\n\n\n", assigned={"p_input": "3.0", "p_cache": "0.30"}, model="v3.0.7")
@example(data=b"a\nb\n" * 8, assigned=dict(AGENT_VALUES, r="2", total_compact="3000"),
         model="v3.0.7")
def test_fast_core_equals_the_plain_transcription(data, assigned, model):
    """For any conversation and any awk values, the linear core prints what the plain
    transcription prints, finds the same best k with the bit-identical best benefit, and
    every candidate k's terms are bit-identical."""
    assert same(fast(data, assigned, model), slow(data, assigned, model))


@given(data=conversation, model=st.sampled_from(MODELS[:3]),
       t=st.integers(0, 40), reqs=st.integers(0, 400), c=st.integers(0, 12),
       tin=st.integers(0, 5_000_000), scale=st.sampled_from([0.0, 1.0, 10.0, 0.01, 0.37]))
def test_realistic_parameters_agree(data, model, t, reqs, c, tin, scale):
    """With the values bash-agent passes (prices scaled, zero included), both agree."""
    assigned = dict(AGENT_VALUES, t=str(t), total_requests=str(reqs), total_compact=str(c),
                    total_input=str(tin), p_input=repr(3.0 * scale), p_cache=repr(0.3 * scale))
    assert same(fast(data, assigned, model), slow(data, assigned, model))


inexact = st.floats(0.01, 100, allow_nan=False).map(lambda x: repr(round(x, 3)))


@given(sizes=st.lists(st.integers(1, 4000), min_size=4, max_size=60),
       p_input=inexact, p_cache=inexact, p_out=inexact, S=st.integers(0, 3000),
       V=st.integers(0, 30000), model=st.sampled_from(MODELS[:3]))
def test_every_k_is_bit_exact_with_inexact_prices(sizes, p_input, p_cache, p_out, S, V,
                                                  model):
    """With prices that binary cannot hold exactly, every candidate k's terms still equal
    the plain transcription's to the last bit (the evaluation order is the awk's)."""
    data = b"".join(b'{"role":"user","content":"' + b"x" * (4 * n) + b'"}\n' for n in sizes)
    assigned = dict(AGENT_VALUES, p_input=p_input, p_cache=p_cache, p_out=p_out, S=str(S),
                    V=str(V), min_keep_ratio="0")
    assert same(fast(data, assigned, model), slow(data, assigned, model))


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


# --- the cache-aware model -----------------------------------------------------------------

def cache_fast(data: bytes, assigned: dict[str, str], p_write: float | None, cold: bool,
               whole: bool = False):
    m = get_model("cache-clock")
    conv = scan_bytes(data, False)
    try:
        d = decide_conversation(awk_values(assigned), conv, m, whole=whole, p_write=p_write,
                                cold=cold)
        rows = [] if d.derived is None else all_terms(d)
    except AwkFatal:
        return "fatal"
    return d.keep, d.best_k, d.best_benefit, [
        {"k": t.k, "K": t.K, "H": t.H, "savings": t.savings, "cache_miss": t.cache_miss,
         "compact_cost": t.compact_cost, "info_loss": t.info_loss, "quality": t.quality,
         "benefit": t.benefit, "rewrite": t.rewrite} for t in rows if t.H > 0]


def cache_slow(data: bytes, assigned: dict[str, str], p_write: float | None, cold: bool,
               whole: bool = False):
    try:
        keep, best_k, best, facts = reference.explain(reference.records(data), assigned,
                                                      "cache-clock", p_write, cold, whole)
    except reference.Fatal:
        return "fatal"
    return keep, best_k, best, facts.get("rows", [])


def agent_data(sizes: list[int]) -> bytes:
    return b"".join((b'{"role":"user","content":"' if i % 3 == 0 else
                     b'{"role":"assistant","content":"') + b"x" * (4 * n) + b'"}\n'
                    for i, n in enumerate(sizes))


@given(sizes=st.lists(st.integers(1, 4000), min_size=0, max_size=50),
       p_input=inexact, p_cache=inexact, p_out=inexact, V=st.integers(0, 30000),
       S=st.integers(0, 12000))
def test_cache_clock_with_input_priced_writes_and_a_warm_cache_is_v307(sizes, p_input,
                                                                        p_cache, p_out, V, S):
    """With the write price equal to the input price, a warm cache and partial keeps, the
    cache-aware model is v3.0.7 to the last bit: the answer, the best k and every k's
    terms."""
    data = agent_data(sizes)
    assigned = dict(AGENT_VALUES, p_input=p_input, p_cache=p_cache, p_out=p_out, V=str(V),
                    S=str(S))
    cache = cache_fast(data, assigned, float(p_input), False)
    old = fast(data, assigned, "v3.0.7")
    if cache == "fatal" or old == "fatal":
        assert cache == old
        return
    assert cache[:2] == old[:2] and bits(cache[2]) == bits(old[2])
    assert [{k: bits(v) for k, v in r.items() if k != "rewrite"} for r in cache[3]] == \
        [{k: bits(v) for k, v in r.items()} for r in old[3]]
    assert all(r["rewrite"] == 0.0 for r in cache[3])


@given(sizes=st.lists(st.integers(1, 4000), min_size=0, max_size=50),
       p_input=inexact, p_cache=inexact, p_write=inexact, cold=st.booleans(),
       whole=st.booleans())
def test_cache_clock_equals_its_plain_transcription(sizes, p_input, p_cache, p_write, cold,
                                                    whole):
    """Any write price, warm or cold, partial or whole-history: every term of every k is
    the transcription's, bit for bit."""
    data = agent_data(sizes)
    assigned = dict(AGENT_VALUES, p_input=p_input, p_cache=p_cache)
    assert same(cache_fast(data, assigned, float(p_write), cold, whole),
                cache_slow(data, assigned, float(p_write), cold, whole))


@given(sizes=st.lists(st.integers(1, 4000), min_size=4, max_size=50), p_write=inexact)
def test_a_cold_cache_adds_the_kept_part_to_the_benefit(sizes, p_write):
    """Cold against warm, the same k: the baseline's re-write of V + T less the summary
    request's of V + H — K (p_write − p_cache) / 10⁶, up to rounding; so whole-history
    compaction (K = 0) is as worth it cold as warm."""
    data = agent_data(sizes)
    assigned = dict(AGENT_VALUES)
    for whole in (False, True):
        warm = cache_fast(data, assigned, float(p_write), False, whole)
        cold = cache_fast(data, assigned, float(p_write), True, whole)
        for a, b in zip(warm[3], cold[3]):
            gain = a["K"] * (float(p_write) - 0.3) / 1e6
            assert math.isclose(b["benefit"] - a["benefit"], gain, rel_tol=1e-6,
                                abs_tol=1e-9)
