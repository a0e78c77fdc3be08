"""The pruned search for the best k finds exactly what the full loop finds."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compact_dp.models import AwkFatal, derive, get_model
from compact_dp.params import awk_values
from compact_dp.scan import Conversation
from compact_dp.search import BenefitCurve, best_candidate, best_candidate_full

AGENT = {"baseline_e": "8", "V": "5000", "p_input": "3.0", "p_cache": "0.30", "p_out": "15.0",
         "S": "500", "min_keep_ratio": "0.12", "r": "0.8", "beta": "0.03",
         "max_context": "200000", "quality_penalty": "0.2", "t": "5",
         "total_requests": "40", "total_compact": "0", "total_input": "400000"}
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


def conversation(sizes: list[int]) -> Conversation:
    conv = Conversation()
    conv.sizes.extend(sizes)
    return conv


def both(sizes, assigned, model_name):
    model = get_model(model_name)
    d = derive(awk_values(assigned), conversation(sizes), model)
    try:
        fast = best_candidate(d, model, sizes)
    except AwkFatal:
        fast = "fatal"
    try:
        full = best_candidate_full(d, model, sizes)
    except AwkFatal:
        full = "fatal"
    return fast, full


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
    assigned = dict(AGENT)
    for name in draw(st.lists(st.sampled_from(sorted(ODD)), max_size=5, unique=True)):
        assigned[name] = draw(st.sampled_from(ODD[name]))
    return assigned


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=sizes_strategy, assigned=parameters(),
       model=st.sampled_from(["v3.0.7", "v2", "v4.2"]))
@example(sizes=[7] * 500, assigned=dict(AGENT, p_input="0", p_cache="0", p_out="0"),
         model="v3.0.7")
@example(sizes=[7] * 500, assigned=dict(AGENT, p_input="3", p_cache="3", quality_penalty="0"),
         model="v3.0.7")
def test_pruned_search_equals_the_full_loop(sizes, assigned, model):
    """Same best k and bit-identical best benefit for any sizes and parameters: zero and
    equal prices, huge c, r above 1, ratios above 1, Q = 0 or negative, tiny M."""
    fast, full = both(sizes, assigned, model)
    assert same(fast, full)


def test_agent_like_searches_evaluate_few_candidates(monkeypatch):
    """On a long, realistic conversation the walk evaluates a small share of the k."""
    import random
    rnd = random.Random(7)
    sizes = [rnd.randint(20, 400) for _ in range(20000)]
    calls = []
    original = BenefitCurve.__call__
    monkeypatch.setattr(BenefitCurve, "__call__",
                        lambda self, K: calls.append(K) or original(self, K))
    for params in (AGENT, dict(AGENT, t="40", total_requests="400", total_input="2e7"),
                   dict(AGENT, quality_penalty="0")):
        calls.clear()
        model = get_model("v3.0.7")
        d = derive(awk_values(params), conversation(sizes), model)
        assert best_candidate(d, model, sizes) == best_candidate_full(d, model, sizes)
        assert len(calls) - 17600 < 200      # the full loop's own 17,600 + a few


def test_flat_benefit_falls_back_to_every_k():
    """Zero prices: every k is worth 0, the first one wins, as in the awk."""
    sizes = [5] * 1000
    fast, full = both(sizes, dict(AGENT, p_input="0", p_cache="0", p_out="0"), "v3.0.7")
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
    assigned = dict(AGENT, p_input=repr(price), p_cache=repr(price), e_fixed=repr(R),
                    L_fixed="1", V=repr(V), quality_penalty=repr(Q), min_keep_ratio="0",
                    max_context=repr(M))
    return sizes, assigned


@settings(max_examples=400, deadline=None)
@given(case=interior_peaks(), model=st.sampled_from(["v3.0.7", "v4.2"]))
def test_pruned_search_equals_the_full_loop_at_interior_peaks(case, model):
    """When the best k lies inside the range (and at exact real ties), the walk still
    finds the awk's k: the first with the largest double."""
    sizes, assigned = case
    fast, full = both(sizes, assigned, model)
    assert same(fast, full)
