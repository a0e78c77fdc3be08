"""The pruned search for the best k finds exactly what a plain loop over every k finds.

The oracle here shares nothing with the search: it scores every candidate k with the
benefit curve (whose values test_properties proves bit-identical, k by k, to the plain
transcription) and keeps the first strictly largest, as the awk loop does.
"""

from __future__ import annotations

import random

from hypothesis import example, given
from hypothesis import strategies as st

from compact_dp.core.models import derive, get_model
from compact_dp.core.params import awk_values
from compact_dp.core.scan import Conversation
from compact_dp.core.search import BenefitCurve, best_candidate, prefix_sums
from compact_dp.errors import AwkFatal

from .conftest import AGENT_VALUES

ODD = {
    "p_input": ["0", "3.0", "0.30", "1e-300", "1e300", "-3"],
    "p_cache": ["0", "0.30", "3.0", "-0.3"],
    "p_out": ["0", "15.0", "1e308"],
    "quality_penalty": ["0", "0.2", "1e3", "-0.2", "1e-320", "abc"],
    "max_context": ["200000", "1", "1e-300", "50000", "1e308"],
    "r": ["0.8", "1.2", "2", "1", "0", "-1.5"],
    "total_compact": ["0", "1e12", "3000", "-1"],
    "beta": ["0.03", "0", "50", "-1"],
    "V": ["5000", "0", "1e17", "-5000", "0.5"],
    "S": ["500", "0", "0.1", "1e16"],
    "min_keep_ratio": ["0.12", "0", "1", "1.5", "-0.3", "0.5"],
    "e_fixed": ["0", "1", "1e9"],
    "L_fixed": ["0", "1e-9", "3"],
}


def plain_loop(d, model, sizes) -> tuple[int, float]:
    """Every candidate k in order, K summed from the window itself; the first strictly
    largest benefit wins (ties keep the smaller k), as the awk loop does."""
    curve = BenefitCurve(d, model)
    hi = d.max_keep if d.max_keep is not None else d.NR
    best_k, best = 0, -1e18
    for k in range(d.min_keep, hi + 1):
        K = sum(sizes[len(sizes) - k:]) if k else 0
        if d.T - K <= 0:
            continue
        b = curve(K)
        if b > best:
            best, best_k = b, k
    return best_k, best


def both(sizes, assigned, model_name):
    model = get_model(model_name)
    conv = Conversation(list(sizes))
    d = derive(awk_values(assigned), conv, model)
    results = []
    for search in (lambda: best_candidate(d, model, prefix_sums(sizes)),
                   lambda: plain_loop(d, model, sizes)):
        try:
            results.append(search())
        except AwkFatal:
            results.append("fatal")
    return results


def same(a, b) -> bool:
    if a == b:
        return True
    return isinstance(a, tuple) and a[0] == b[0] and a[1] != a[1] and b[1] != b[1]


sizes_strategy = st.one_of(
    st.lists(st.integers(1, 3000), min_size=0, max_size=600),
    st.lists(st.sampled_from([1, 2, 160, 161]), min_size=0, max_size=600),   # plateaus, ties
    st.integers(1, 800).map(lambda n: [7] * n),
)


@st.composite
def parameters(draw):
    assigned = dict(AGENT_VALUES)
    for name in draw(st.lists(st.sampled_from(sorted(ODD)), max_size=5, unique=True)):
        assigned[name] = draw(st.sampled_from(ODD[name]))
    return assigned


@given(sizes=sizes_strategy, assigned=parameters(),
       model=st.sampled_from(["v3.0.7", "v2", "v4.2"]))
@example(sizes=[7] * 500, assigned=dict(AGENT_VALUES, p_input="0", p_cache="0", p_out="0"),
         model="v3.0.7")
@example(sizes=[7] * 500, assigned=dict(AGENT_VALUES, p_input="3", p_cache="3",
                                        quality_penalty="0"), model="v3.0.7")
@example(sizes=[69, 292, 434, 411, 392, 33, 131, 61, 254, 390, 231, 242, 334, 195, 404, 108,
              49, 250, 15, 458, 428, 200, 222, 312, 391, 393, 2, 357, 229, 137, 370, 411,
              118, 303, 484, 53, 462, 163, 16, 12, 14, 333, 278, 5, 481, 452, 196, 352, 111,
              497, 217, 372, 15, 271, 114, 392, 225, 481, 254, 284],
         assigned=dict(AGENT_VALUES, e_fixed="2.0", L_fixed="1", V="0.0", p_input="0.3",
                       p_cache="0.3", quality_penalty="0.0", min_keep_ratio="0"),
         model="v3.0.7")          # flat in reals: rounding alone picks k = 11, not 3
def test_pruned_search_equals_every_k(sizes, assigned, model):
    """Same best k and bit-identical best benefit for any sizes and parameters: zero and
    equal prices, huge c, r above 1, ratios above 1, Q = 0 or negative, tiny M."""
    fast, full = both(sizes, assigned, model)
    assert same(fast, full)


def test_agent_like_searches_evaluate_few_candidates(monkeypatch):
    """On a long, realistic conversation the walk evaluates a small share of the k."""
    rnd = random.Random(7)
    sizes = [rnd.randint(20, 400) for _ in range(20000)]
    calls = []
    original = BenefitCurve.__call__
    monkeypatch.setattr(BenefitCurve, "__call__",
                        lambda self, K: calls.append(K) or original(self, K))
    for params in (AGENT_VALUES, dict(AGENT_VALUES, t="40", total_requests="400",
                                      total_input="2e7"),
                   dict(AGENT_VALUES, quality_penalty="0")):
        model = get_model("v3.0.7")
        d = derive(awk_values(params), Conversation(sizes), model)
        full = plain_loop(d, model, sizes)
        calls.clear()
        assert best_candidate(d, model, prefix_sums(sizes)) == full
        assert len(calls) < 200


def test_flat_benefit_falls_back_to_every_k():
    """Zero prices: every k is worth 0, the first one wins, as in the awk."""
    fast, full = both([5] * 1000, dict(AGENT_VALUES, p_input="0", p_cache="0", p_out="0"),
                      "v3.0.7")
    assert fast == full == (120, 0.0)


@st.composite
def interior_peaks(draw):
    """Parameters whose real benefit curve peaks inside the candidate range — sometimes
    exactly half-way between two k, where the doubles decide the tie."""
    equal_sizes = draw(st.booleans())
    n = draw(st.integers(30, 400))
    sizes = [10] * n if equal_sizes else draw(st.lists(st.integers(1, 500), min_size=n,
                                                        max_size=n))
    T = sum(sizes)
    price = draw(st.sampled_from([0.3, 0.25, 1.0, 0.1]))
    R = draw(st.sampled_from([0.1, 0.5, 1.0, 1.5, 2.0]))
    V = draw(st.sampled_from([0.0, 0.0, 100.0, 5000.0]))
    M = 200000.0
    beta = (-(R - 1) * price - 0.0 + price) / 1000000
    if equal_sizes:
        j = draw(st.integers(n // 4, n - 2))
        peak = 10 * j + 5.0                            # half-way between k = j and j + 1
    else:
        peak = draw(st.floats(0.05, 0.95)) * T
    Q = beta * M * 1000000 / (2 * price * (peak + V))
    assigned = dict(AGENT_VALUES, p_input=repr(price), p_cache=repr(price), e_fixed=repr(R),
                    L_fixed="1", V=repr(V), quality_penalty=repr(Q), min_keep_ratio="0",
                    max_context=repr(M))
    return sizes, assigned


@given(case=interior_peaks(), model=st.sampled_from(["v3.0.7", "v4.2"]))
def test_pruned_search_equals_every_k_at_interior_peaks(case, model):
    """When the best k lies inside the range (and at exact real ties), the walk still
    finds the awk's k: the first with the largest double."""
    sizes, assigned = case
    fast, full = both(sizes, assigned, model)
    assert same(fast, full)
