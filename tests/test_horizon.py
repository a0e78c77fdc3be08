"""The forecast of the requests still to come, R (core/horizon.py, docs/calibrate.md):
its values and shape, R on hand-made sessions for given profile figures, a fixed
``--horizon N``, and ``--horizon seed`` giving the answers of before the horizon, bit for
bit."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from compact_dp import api
from compact_dp.calibration import profile as profile_module
from compact_dp.core.horizon import HUGE, end_chance, forecast, parse_horizon

from . import seed_answers
from .conftest import INPUTS, ROOT, run_main
from .session_fixtures import claude_turns, codex_lines

EXAMPLES = ROOT / "examples"
OPUS = {"p_input": 5.0, "p_cache": 0.5}          # claude-opus-4-6, the fixtures' model


@pytest.fixture(autouse=True)
def fresh_profiles(monkeypatch):
    monkeypatch.setattr(profile_module, "_CACHE", {})


def test_profile(tmp_path: Path, level: float = 10.0, exponent: float = 0.5,
                 codex: float = 20.0, other: float = 7.0) -> dict[str, str]:
    """An environment naming a profile with these forecast figures."""
    path = tmp_path / "profile.json"
    path.write_text(json.dumps({
        "profile_version": 1, "source": "a test profile", "exponent": exponent,
        "end_chance": [-1.0, -0.5, 0.25],
        "agents": {"*": {"level": other}, "claude-code": {"level": level},
                   "codex": {"level": codex}}}))
    return {"COMPACT_DP_PROFILE": str(path)}


test_profile.__test__ = False        # type: ignore[attr-defined]  (a helper, not a test)

# --- the rule ---------------------------------------------------------------------------------

counts = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                   st.integers(-10, 10**6).map(float))
levels = st.floats(1e-6, 1e6)
exponents = st.floats(0.0, 1.0)


@pytest.mark.parametrize("j, level, exponent, R", [
    (0, 36.5, 0.115, 36.5), (3, 10.0, 0.5, 20.0), (8, 10.0, 0.5, 30.0),
    (99, 2.0, 1.0, 200.0), (1000, 42.0, 0.0, 42.0), (5, 0.5, 0.3, 1.0),
    (-7, 36.5, 0.115, 36.5), (math.nan, 36.5, 0.115, 36.5),
    (math.inf, 1.0, 1.0, HUGE), (1e300, 1.0, 1.0, HUGE), (HUGE - 2, 1.0, 1.0, HUGE - 1),
    (3, 1e300, 0.5, HUGE), (0, math.inf, 0.5, HUGE)])
def test_the_forecast_is_level_times_requests_plus_one_to_the_exponent(j, level, exponent,
                                                                       R):
    """Exact where the arithmetic is: a count below 0 or NaN reads as 0, beyond 10¹² as
    10¹², and R is at least 1 and at most 10¹² (a profile's level of 1e300 once made the
    schedule's arithmetic overflow)."""
    assert forecast(j, level, exponent) == R


@given(counts, levels, exponents)
def test_the_forecast_is_at_least_one_and_finite(j, level, exponent):
    R = forecast(j, level, exponent)
    assert 1.0 <= R < math.inf


@given(st.floats(0, 1e13), st.floats(0, 1e13), levels, exponents)
def test_more_requests_so_far_never_forecast_fewer_to_come(a, b, level, exponent):
    lo, hi = sorted((a, b))
    assert forecast(lo, level, exponent) <= forecast(hi, level, exponent)


@given(st.floats(0, 1e13), levels, levels, exponents)
def test_a_higher_level_never_forecasts_fewer(j, a, b, exponent):
    lo, hi = sorted((a, b))
    assert forecast(j, lo, exponent) <= forecast(j, hi, exponent)


@given(st.floats(0, 1e13), levels, exponents)
def test_the_forecast_grows_no_faster_than_the_requests_so_far(j, level, exponent):
    assert forecast(j, level, exponent) <= max(1.0, level * (min(j, HUGE) + 1.0)) * \
        (1 + 1e-12)


@given(st.floats(0, 1e13), levels)
def test_with_exponent_zero_the_forecast_is_the_level(j, level):
    assert forecast(j, level, 0.0) == max(1.0, level)


@given(st.floats(HUGE, 1e308), levels, exponents)
def test_beyond_any_session_the_forecast_stops_growing(j, level, exponent):
    assert forecast(j, level, exponent) == forecast(HUGE, level, exponent)


@given(counts, counts, st.floats(-50, 50), st.floats(-5, 5), st.floats(-5, 5))
def test_the_end_chance_is_a_probability(t, j, b0, bt, bj):
    assert 0.0 <= end_chance(t, j, b0, bt, bj) <= 1.0


def test_the_end_chance_is_the_logistic_of_its_three_terms():
    sigma = lambda z: 1 / (1 + math.exp(-z))  # noqa: E731
    assert end_chance(1, 0, -1.443, -0.771, 0.293) == sigma(-1.443)
    assert end_chance(math.e, math.e - 1, 0.0, 1.0, 1.0) == pytest.approx(sigma(2.0), 1e-15)
    assert end_chance(0, 0, 0.5, 9.0, 9.0) == sigma(0.5)        # fewer than one turn: one
    assert end_chance(1, 0, -800.0, 0.0, 0.0) == 0.0             # no overflow


@given(st.floats(1, 1e6), st.floats(1, 1e6), st.floats(0, 1e6), st.floats(0.01, 5))
def test_the_end_chance_falls_with_turns_and_rises_with_requests(t1, t2, j, slope):
    lo, hi = sorted((t1, t2))
    assert end_chance(hi, j, -1.0, -slope, slope) <= end_chance(lo, j, -1.0, -slope, slope)
    assert end_chance(lo, j, -1.0, -slope, slope) <= end_chance(lo, j + 10, -1.0, -slope,
                                                                 slope)


@pytest.mark.parametrize("text, value", [("seed", "seed"), ("auto", "auto"), ("40", 40.0),
                                         ("2.5", 2.5), ("1e3", 1000.0)])
def test_a_horizon_is_seed_auto_or_a_positive_number(text, value):
    assert parse_horizon(text) == value


@pytest.mark.parametrize("text", ["0", "-3", "nan", "inf", "", "forty", "Seed"])
def test_anything_else_is_no_horizon(text):
    with pytest.raises(ValueError):
        parse_horizon(text)
    r = run_main("--horizon", text, str(EXAMPLES / "codex.jsonl"))
    assert r.status == 2 and not r.out and len(r.err.splitlines()) == 1
    assert r.err.startswith("compact-dp: error: ") and "--horizon" in r.err


# --- R on sessions whose requests the test knows ----------------------------------------------

def decided(data: bytes, environ: dict[str, str], **options) -> dict:
    """--json of a session, through the Python API (the same dict)."""
    return api.load(data).decide(environ=environ, now=0.0, **options).as_dict()


@pytest.mark.parametrize("turns, R", [([4], 10.0 * 5 ** 0.5), ([1, 2], 20.0),
                                      ([3, 5], 30.0), ([2, 6, 7], 40.0), ([24], 50.0)])
def test_auto_forecasts_from_the_requests_so_far_with_the_profiles_figures(turns, R,
                                                                          tmp_path):
    """level 10, exponent 0.5: after 3, 8, 15 and 24 requests R is 20, 30, 40, 50 — the
    turns do not matter, the requests so far do."""
    obj = decided(claude_turns(turns).text(), test_profile(tmp_path))
    assert obj["session"]["requests"] == sum(turns)
    assert (obj["derived"]["R"], obj["derived"]["horizon"]) == (R, "auto")
    assert obj["session"]["profile"]["source"] == "a test profile"


def test_the_forecast_takes_each_agents_level_and_the_other_formats_the_fallback(tmp_path):
    env = test_profile(tmp_path, level=10.0, exponent=0.5, codex=20.0, other=7.0)
    lines, expect = codex_lines()
    codex = decided(("\n".join(lines) + "\n").encode(), env)
    assert codex["derived"]["R"] == 20.0 * (expect["requests"] + 1) ** 0.5
    bash = json.loads(run_main("--json", "--horizon", "auto", "--requests", "15",
                               str(INPUTS / "syn_40.jsonl"), environ=env).out)
    assert bash["derived"]["R"] == 7.0 * 16 ** 0.5 == 28.0


def test_auto_is_the_default_only_of_the_cache_aware_model_on_a_session_with_usage(tmp_path):
    env = test_profile(tmp_path)
    data = claude_turns([3]).text()
    assert decided(data, env)["derived"]["horizon"] == "auto"
    assert decided(data, env, model="v3.0.7")["derived"]["horizon"] == "seed"
    assert decided(data, env, fixed_turns=3)["derived"]["horizon"] == "seed"
    assert decided(data, env, calls_per_turn=2)["derived"]["horizon"] == "seed"
    bash = json.loads(run_main("--json", "--model", "cache-clock",
                               str(INPUTS / "syn_40.jsonl"), environ=env).out)
    assert bash["derived"]["horizon"] == "seed"


@pytest.mark.parametrize("N", [1.0, 7.0, 42.5, 1e6])
@pytest.mark.parametrize("model", ["cache-clock", "v3.0.7", "v2", "v4.2"])
def test_a_fixed_horizon_is_R_in_every_model_and_every_term(N, model, tmp_path):
    builder = claude_turns([3, 4])
    obj = decided(builder.text(), test_profile(tmp_path), model=model, horizon=N,
                  keep="none")
    d, t = obj["derived"], obj["terms"]
    assert (d["R"], d["horizon"], obj["session"]["horizon"]) == (N, "fixed", f"{N:g}")
    avg = sum(r["prompt"] for r in builder.requests) / len(builder.requests)
    assert d["avg"] == avg
    left = d.get("X") or 0.0       # cache-clock: what a compaction leaves replaces history
    assert t["savings"] == (N - 1) * OPUS["p_cache"] * (t["H"] - left) / 1000000
    assert t["info_loss"] == 0.03 * (1.0 - 0.8) * (N * avg) * OPUS["p_input"] / 1000000
    assert t["billed"] == pytest.approx(t["savings"] - t["cache_miss"] - t["compact_cost"] +
                                        t["cold_rewrite"], rel=1e-12, abs=1e-15)


def test_a_fixed_horizon_on_the_command_line(tmp_path):
    for args in (["--horizon", "12"], ["--horizon=12"]):
        for path in (EXAMPLES / "codex.jsonl", INPUTS / "syn_40.jsonl"):
            obj = json.loads(run_main("--json", *args, str(path),
                                      environ=test_profile(tmp_path)).out)
            assert (obj["derived"]["R"], obj["session"]["horizon"]) == (12.0, "12")


# --- seed: E × L, as before -------------------------------------------------------------------

def seed_E_L(t: int, requests: int, baseline: float = 8.0, e_fixed: float = 0.0,
             L_fixed: float = 0.0) -> tuple[float, float]:
    """bash-agent's E and L, transcribed from docs/model.md step 5 (awk truncates)."""
    if e_fixed > 0:
        E = e_fixed
    elif baseline > 0:
        floor = math.trunc(baseline / 2) if baseline > 1 else 2
        E = baseline - t if baseline - t > floor else floor
    else:
        E = 2.0
    if L_fixed > 0:
        L = L_fixed
    elif t > 0 and requests > 0:
        L = requests / t
    else:
        L = 5.0
    return float(E), float(max(L, 1.0))


@given(st.lists(st.integers(1, 9), min_size=1, max_size=7),
       st.sampled_from(["cache-clock", "v3.0.7", "v2", "v4.2"]),
       st.sampled_from([{}, {"baseline_turns": 3}, {"baseline_turns": 20},
                        {"baseline_turns": 1}, {"baseline_turns": 0},
                        {"fixed_turns": 2.5}, {"calls_per_turn": 0.5}]))
@example([1], "cache-clock", {})
@example([9, 9, 9, 9, 9, 9, 9], "cache-clock", {})
def test_seed_on_a_session_with_usage_is_E_times_L_of_its_turns_and_requests(turns, model,
                                                                            params):
    """The session's own turns and requests (what the builder wrote, not what a reader
    found) give E × L; ① and ④ weigh that R."""
    builder = claude_turns(turns)
    obj = decided(builder.text(), {"COMPACT_DP_PROFILE": "none"}, model=model,
                  horizon="seed", keep="none", **params)
    E, L = seed_E_L(builder.turns, len(builder.requests),
                    float(params.get("baseline_turns", 8.0)),
                    float(params.get("fixed_turns", 0.0)),
                    float(params.get("calls_per_turn", 0.0)))
    d = obj["derived"]
    assert (d["E"], d["L"], d["R"], d["horizon"]) == (E, L, E * L, "seed")
    avg = sum(r["prompt"] for r in builder.requests) / len(builder.requests)
    left = d.get("X") or 0.0
    assert obj["terms"]["savings"] == (E * L - 1) * OPUS["p_cache"] * \
        (obj["terms"]["H"] - left) / 1000000
    assert obj["terms"]["info_loss"] == 0.03 * (1.0 - 0.8) * (E * L * avg) * \
        OPUS["p_input"] / 1000000


RECORDED = json.loads((Path(__file__).parent / "seed_answers.json").read_text())
CHANGED = {("session", "summary_tokens"),     # null before: the S used now (issue 18)
           ("session", "sources", "max_context"),   # the window's source in words (issue 26)
           # the table's entry: claude-opus-4-6 is a 1M model (prices.json, with its source);
           # Claude Code opened it at 200k on this session's day, the M used (agents.py)
           ("session", "prices", "context_window")}


def differences(old: object, new: object, path: tuple = ()) -> list[tuple]:
    """Where ``new`` differs from ``old`` in anything ``old`` has (new fields are fine)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [d for k in old if path + (k,) not in CHANGED
                for d in (differences(old[k], new[k], path + (k,)) if k in new
                          else [(path + (k,), "missing")])]
    return [] if old == new and type(old) is type(new) else [(path, old, new)]


def test_the_recorded_answers_are_the_ones_the_generator_lists():
    assert [a["args"] for a in RECORDED["answers"]] == seed_answers.cases()
    assert RECORDED["generated_by"] == seed_answers.COMMAND


@pytest.mark.parametrize("answer", RECORDED["answers"], ids=lambda a: " ".join(a["args"]))
def test_seed_models_give_the_answers_of_before_the_horizon_bit_for_bit(answer,
                                                                        monkeypatch):
    """Plain output, exit status and every --json field the pre-horizon code printed,
    by default and under --horizon seed (tests/seed_answers.py made them)."""
    monkeypatch.chdir(ROOT)
    for horizon in ([], ["--horizon", "seed"]):
        plain = run_main(*horizon, *answer["args"])
        assert (plain.out, plain.status) == (answer["stdout"], answer["status"])
        obj = json.loads(run_main("--json", *horizon, *answer["args"]).out)
        old_window = answer["json"].get("derived", {}).get("M")
        if old_window is not None and obj["derived"]["M"] != old_window:
            # the session recorded its own window (Codex reports it; issue 26) where these
            # answers took the price table's: given that window, the answer is as before
            assert obj["session"]["sources"]["max_context"] == \
                "the context window the agent reported"
            again = ["--max-context", f"{old_window:.0f}", *horizon, *answer["args"]]
            plain = run_main(*again)
            assert (plain.out, plain.status) == (answer["stdout"], answer["status"])
            obj = json.loads(run_main("--json", *again).out)
        assert differences(answer["json"], obj) == []
        if "derived" in obj:                   # an empty conversation has none
            assert obj["derived"]["horizon"] == "seed"
