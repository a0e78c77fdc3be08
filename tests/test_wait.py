"""The schedule that knows when to wait (core/wait.py, docs/model.md "When to wait"):
compacting now against a later turn end or the agent's own compaction, the uncertainty
hold, the saving before a pause, and how long a compaction takes (learned from recorded
durations).  The plans' values are worked out by hand on small numbers, and on hand-made
sessions by a plain enumeration of every plan written here from the documented rules."""

from __future__ import annotations

import functools
import json
import math
import uuid
from pathlib import Path

import pytest

from compact_dp.calibration import fit as fitting
from compact_dp.calibration import profile as profile_module
from compact_dp.calibration.profile import BUILT_IN
from compact_dp.core import wait
from compact_dp.core.quantities import Derived
from compact_dp.sessions.read import read_session
from compact_dp.sessions.timefmt import parse_time

from .conftest import run_main
from .session_fixtures import ClaudeSession, claude_session, stamp, text, tool_use


@pytest.fixture(autouse=True)
def fresh_profiles(monkeypatch):
    monkeypatch.setattr(profile_module, "_CACHE", {})


# --- the plans, by hand ----------------------------------------------------------------------
#
# Round numbers: p_cache 1, p_input = p_write 2, p_out 1, V = 0, a compaction leaves X = 0,
# no ④ (beta 0) or ⑤ (no Q), and S chosen so that a summary request's fixed part is exactly
# $7 (2 × 70 + S = 7,000,000 tokens-dollars).  Then a compaction of c tokens with r
# requests to come is worth b(c, r) = ((r − 2) c − 7,000,000) / 10⁶ — ① (r − 1) c less ③'s
# read of c and its $7 — and with the exponent 0, R stays 10 from any moment and a session
# goes n more requests on with the chance e^(−n/10).

def derived(L: float, T: int = 1_000_000, R: float = 10.0) -> Derived:
    return Derived(E=1.0, L=L, R=R, avg=1000.0, c=0.0, r_t=0.8, N_remain=R * 1000.0,
                   info_loss=0.0, Q=None, M=None, min_keep=0, max_keep=None, T=T, NR=1,
                   V=0.0, S=7_000_000 - 140, p_input=2.0, p_cache=1.0, p_out=1.0, beta=0.0,
                   p_write=2.0, X=0.0, U=0.0)


def b(c: float, r: float = 10.0) -> float:
    return ((r - 2) * c - 7_000_000) / 1e6


def test_the_benefit_of_a_compaction_is_the_decisions_whole_history_terms():
    d = derived(L=100.0)
    assert wait.Whole(d, 0.8)(1_000_000, 10.0, 0) == pytest.approx(b(1_000_000))
    assert wait.Whole(d, 0.8)(3_000_000, 7.5, 3) == pytest.approx(b(3_000_000, 7.5))


def test_waiting_for_a_later_turn_end_by_hand():
    """Turn ends every 20 requests: the one weighed is at 20 (the horizon ends where the
    session goes on with chance e^−4, 40 requests).  The context grows 100,000 a request.
    Now: b(1M) = $1, and then at 20, on 2M, 9 × e^−2.  Waiting: at 20 on 3M, 17 × e^−2."""
    d = derived(L=20.0)
    o = wait.Outlook(growth=100_000)
    now = b(1_000_000)
    assert now == pytest.approx(1.0)
    w = wait.later(d, now, o)
    assert w is not None and w.until == wait.TURN_END and w.requests == 20.0
    value_now = 1.0 + 9 * math.exp(-2)
    value_then = 17 * math.exp(-2)
    assert (w.now, w.then) == (pytest.approx(value_now), pytest.approx(value_then))
    assert w.expected_benefit == pytest.approx(8 * math.exp(-2) - 1.0)      # ≈ $0.083


def test_a_slow_growing_context_is_compacted_now():
    """Growing 20,000 a request, compacting again at 20 would not pay (b(400k) < 0) and a
    compaction at 20 of 1.4M is worth 4.2 × e^−2 < $1: no wait."""
    d = derived(L=20.0)
    assert wait.later(d, b(1_000_000), wait.Outlook(growth=20_000)) is None


def test_waiting_for_the_agents_own_compaction_by_hand():
    """No turn end within the horizon (L = 100); the agent compacts by itself at 1.1M.
    Waiting, it does at 1 request, then every 11 (at 12, 23, 34); compacting now, at 11,
    22 and 33.  Each of those summarises 1.1M: b = $1.80."""
    d = derived(L=100.0)
    o = wait.Outlook(growth=100_000, auto=1_100_000)
    w = wait.later(d, b(1_000_000), o)
    assert w is not None and w.until == wait.AUTO and w.requests == pytest.approx(1.0)
    then = 1.8 * sum(math.exp(-n / 10) for n in (1, 12, 23, 34))
    now = 1.0 + 1.8 * sum(math.exp(-n / 10) for n in (11, 22, 33))
    assert (w.then, w.now) == (pytest.approx(then), pytest.approx(now))
    assert w.expected_benefit == pytest.approx(then - now)                  # ≈ $0.546


def test_a_turn_end_before_the_agents_own_compaction_can_be_the_better_wait():
    """Turn ends every 20 requests and the agent's point at 3.5M: from 1M it would compact
    by itself at 25 (b(3.5M) = $21, × e^−2.5), but the turn end at 20 (b(3M) = $17, × e^−2)
    is worth more, and after either nothing more comes within the horizon.  Now: $1 and
    then the turn end at 20 on 2M (9 × e^−2; the agent's own, at 35, is worth 21 × e^−3.5)."""
    d = derived(L=20.0)
    w = wait.later(d, b(1_000_000), wait.Outlook(growth=100_000, auto=3_500_000))
    assert w is not None and w.until == wait.TURN_END and w.requests == 20.0
    assert w.then == pytest.approx(17 * math.exp(-2))
    assert w.now == pytest.approx(1.0 + 9 * math.exp(-2))
    assert 21 * math.exp(-3.5) < 9 * math.exp(-2) and 21 * math.exp(-2.5) < 17 * math.exp(-2)


def test_a_wait_the_forecasts_error_could_undo_holds_nothing_back():
    """2M tokens, turns of 2 requests, growing 300,000 a request: at R = 10 the next turn
    end is worth waiting for, at R × e^0.3 (more requests to come) compacting now is the
    better plan: the compaction (which pays at R × e^−0.3 too) is advised, the wait said."""
    from compact_dp.core.decision import Weighing, weigh_waiting
    from compact_dp.core.models import MODEL_TABLE
    from compact_dp.core.scan import Conversation
    from compact_dp.core.search import BenefitCurve

    model = MODEL_TABLE["cache-clock"]
    d = derived(L=2.0, T=2_000_000)
    o = wait.Outlook(growth=300_000, log_error=0.3)
    dec = Weighing(model, 1, d.T, 0, Conversation.summed(1, d.T, 0), whole=True)
    dec.derived, dec.terms = d, BenefitCurve(d, model).terms(0, 0)
    dec.best_benefit, dec.compact = dec.terms.benefit, True
    assert dec.best_benefit == pytest.approx(b(2_000_000))                     # $9
    assert wait.later(d, dec.best_benefit, o) is not None                      # at R
    high = d.with_remaining_calls(10.0 * math.exp(0.3))
    assert wait.later(high, BenefitCurve(high, model).terms(0, 0).benefit, o) is None
    weigh_waiting(dec, o)
    assert dec.compact and dec.wait is not None and not dec.wait.held
    assert dec.uncertainty is not None and not dec.uncertainty.held
    sure = wait.Outlook(growth=300_000, log_error=None)                        # no σ: held
    dec.compact, dec.wait, dec.uncertainty = True, None, None
    weigh_waiting(dec, sure)
    assert not dec.compact and dec.wait is not None and dec.wait.held


def test_past_the_agents_point_the_hold_limit_is_where_it_compacts():
    """A context already past the agent's point (its compaction held back) is compacted
    at the hold limit at the latest; past that too, there is no waiting."""
    d = derived(L=100.0)
    held = wait.Schedule(d, wait.Outlook(growth=100_000, auto=900_000, hold=1_100_000))
    plan = held.waiting()
    assert plan is not None and plan.forced and plan.first == pytest.approx(1.0)
    late = wait.Schedule(d, wait.Outlook(growth=100_000, auto=900_000, hold=950_000))
    assert late.waiting() is None


def test_the_survival_has_the_forecasts_mean():
    """P(n) = R / R(j + n) × exp(−∫ dt / R(j + t)): the requests it expects from now add
    up to R, with the forecast's exponent as without."""
    for exponent, j in ((0.0, 0.0), (0.187, 11.0), (0.5, 200.0)):
        s = wait.Schedule(derived(L=5.0, R=30.0), wait.Outlook(
            growth=0.0, requests=j, exponent=exponent))
        step = 0.05
        mean = sum(s.survival(i * step) for i in range(int(4000 / step))) * step
        assert mean == pytest.approx(30.0, rel=2e-3)
        later = s.remaining(50.0)
        assert later == pytest.approx(30.0 * ((j + 51) / (j + 1)) ** exponent)


def test_the_pause_saving_is_the_net_benefit_and_the_rewrite_it_avoids():
    d = derived(L=20.0)
    d.U = 5_000.0
    p = wait.pause(d, 1.0, wait.Outlook(growth=0.0, cache_left=200.0))
    assert p is not None and p.if_idle_seconds == 200.0
    assert p.rewrite == pytest.approx((1_000_000 + 5_000) * (2.0 - 1.0) / 1e6)
    assert p.saving == pytest.approx(1.0 + 1.005)
    assert wait.pause(d, 1.0, wait.Outlook(growth=0.0, cache_left=None)) is None   # cold
    assert wait.pause(d, -1.5, wait.Outlook(growth=0.0, cache_left=200.0)) is None  # < 0
    # break-even: compacting first saves nothing, so nothing is offered
    assert wait.pause(d, -p.rewrite, wait.Outlook(growth=0.0, cache_left=200.0)) is None


# --- on hand-made sessions ------------------------------------------------------------------

def grown(turns: int, per_turn: int, context: int, step: int) -> ClaudeSession:
    """A Claude Code session whose prompt grows by ``step`` tokens a request."""
    s = ClaudeSession()
    for t in range(turns):
        s.user(f"step {t}")
        for r in range(per_turn):
            s.response([text("working"), tool_use(f"t{t}.{r}", "make")], (3, step, context))
            s.tool_result(f"t{t}.{r}", "ok")
            context += step + 3
    s.response([text("done")], (3, 300, context))
    return s


def profile(tmp_path: Path, **figures) -> dict[str, str]:
    """The built-in profile with a flat forecast (exponent 0: R is the level from any
    moment), no end in sight, and these figures (``log_error``: the profile's; the rest
    Claude Code's)."""
    data = json.loads(Path(BUILT_IN).read_text())
    data["end_chance"], data["exponent"] = [-50.0, 0.0, 0.0], 0.0
    data["log_error"] = figures.pop("log_error", None)
    data["agents"]["claude-code"].update(figures)
    path = tmp_path / f"profile-{uuid.uuid4().hex}.json"
    path.write_text(json.dumps(data))
    return {"COMPACT_DP_PROFILE": str(path), "COMPACT_DP_CACHE": str(tmp_path / "cache")}


def moment(s: ClaudeSession, after: float) -> float:
    """``after`` seconds past the session's last line, on the clock (seconds since 1970)."""
    when = parse_time(stamp(s.t + after))
    assert when is not None
    return when


def decided(tmp_path: Path, s: ClaudeSession, env: dict, after: float = 30.0) -> dict:
    f = tmp_path / f"s-{uuid.uuid4().hex}.jsonl"
    f.write_bytes(s.text())
    r = run_main("--json", "--now", repr(moment(s, after)), str(f), environ=env)
    assert r.status == 0, r.err
    return json.loads(r.out)


def plans_by_hand(obj: dict) -> tuple[float, float, float, bool]:
    """(the best plan that compacts now, the best that waits, its first compaction, by the
    agent itself) by trying every plan: turn ends every L requests up to where the session
    goes on with chance e^−4 (the exponent is 0: 4R), the agent's own compaction where the
    prompt reaches its point, each compaction worth e^(−n/R) × its terms with R to come."""
    d, s, p = obj["derived"], obj["session"], obj["session"]["prices"]
    R, L, T, X, U = d["R"], d["L"], obj["total_tokens"], d["X"], d["U"]
    S, g = s["summary_tokens"], obj["growth"]
    pc, pi, po, pw = p["cache_read"], p["input"], p["output"], s["cache"]["p_write"]
    # V as the decision used it: ③ = (p_cache (V + T) + 70 p_input + S p_out) / 10⁶
    V = (obj["terms"]["compact_cost"] * 1e6 - 70 * pi - S * po) / pc - T
    auto = s["setting"]["auto_compact_tokens"]
    loss = [0.03 * (1 - max(0.37, 0.8 ** (s["compactions"] + 1 + k))) * d["avg"] * pi / 1e6
            for k in range(12)]
    end = 4 * R
    count = math.ceil(end / L) - 1                     # the turn ends before the end ...
    stride = math.ceil(count / 24)                     # ... 24 of them at most, evenly
    moments = [i * L for i in range(stride, count + 1, stride)]

    def worth(c: float, n: float, k: int) -> float:
        benefit = ((R - 1) * pc * (c - X) - (X + U) * (pw - pc) - pc * (V + c) - pi * 70
                   - po * S) / 1e6 - loss[min(k, 11)] * R \
            + d["Q"] * pi * ((V + c) ** 2 - V ** 2) / (d["M"] * 1e6)
        return math.exp(-n / R) * benefit

    @functools.cache
    def best(n0: float, c0: float, k: int) -> tuple[float, float | None, bool]:
        forced = n0 + (auto - V - c0) / g if auto is not None and g > 0 else math.inf
        options = [(0.0, None, False)] if forced >= end else \
            [(worth(auto - V, forced, k) + best(forced, X, k + 1)[0], forced, True)]
        for m in moments:
            if n0 < m < forced:
                options.append((worth(c0 + (m - n0) * g, m, k) + best(m, X, k + 1)[0], m,
                                False))
        return max(options, key=lambda o: o[0])
    now = obj["best_benefit"] + best(0.0, X, 1)[0]
    then, first, by_itself = best(0.0, T, 0)
    return now, then, first or 0.0, by_itself


def test_a_session_waits_for_a_later_turn_end(tmp_path):
    """Summaries of 40,000 tokens ($1 of output each) and turns of 4 requests: compacting
    now pays ($0.24), and waiting for a turn end 13 requests on pays more."""
    s = grown(3, 4, 100_000, 8000)
    obj = decided(tmp_path, s, profile(tmp_path, level=20.0, summary_tokens=40_000))
    assert obj["best_benefit"] > 0 and obj["decision"] == "skip"
    w = obj["wait"]
    now, then, first, by_itself = plans_by_hand(obj)
    assert then > now and not by_itself
    assert w["until"] == "turn_end" and w["held"] and w["requests"] == pytest.approx(first)
    assert w["expected_benefit"] == pytest.approx(then - now, rel=1e-9)
    assert (w["value_now"], w["value_then"]) == (pytest.approx(now), pytest.approx(then))
    # the growth: the live context over the requests that built it (no compaction yet)
    assert obj["growth"] == obj["session"]["context_tokens"] / obj["session"]["requests"]
    assert obj["reason"].startswith(f"skip: compacting now would save ${obj['best_benefit']:.3f}"
                                    .rstrip("0")) and "waiting is expected to save" in \
        obj["reason"] and f"about {first:,.0f} requests on" in obj["reason"]


def test_a_session_waits_for_the_agents_own_compaction(tmp_path):
    s = grown(3, 4, 100_000, 3000)
    obj = decided(tmp_path, s, profile(tmp_path, level=20.0, summary_tokens=20_000))
    now, then, first, by_itself = plans_by_hand(obj)
    w = obj["wait"]
    assert by_itself and then > now and obj["decision"] == "skip"
    assert w["until"] == "auto_compaction" and w["requests"] == pytest.approx(first)
    assert w["expected_benefit"] == pytest.approx(then - now, rel=1e-9)


def test_a_session_where_compacting_now_is_best_compacts(tmp_path):
    s = grown(3, 4, 100_000, 3000)
    obj = decided(tmp_path, s, profile(tmp_path, level=40.0, summary_tokens=3204.5))
    now, then, _, _ = plans_by_hand(obj)
    assert now >= then and obj["decision"] == "compact" and obj["wait"] is None


def test_the_seed_and_fixed_horizons_have_no_schedule(tmp_path):
    """The schedule belongs to the forecast: the seed models, --horizon seed and a fixed
    horizon answer as before, without its fields."""
    s = grown(3, 4, 100_000, 8000)
    env = profile(tmp_path, level=20.0, summary_tokens=40_000)
    f = tmp_path / "s.jsonl"
    f.write_bytes(s.text())
    for args in (["--horizon", "seed"], ["--horizon", "20"], ["--model", "v3.0.7"]):
        r = run_main("--json", "--now", repr(moment(s, 30)), *args, str(f), environ=env)
        obj = json.loads(r.out)
        assert not {"wait", "uncertainty", "pause", "compaction_seconds"} & set(obj)
    fixed = json.loads(run_main("--json", "--now", repr(moment(s, 30)), "--horizon", "20",
                                str(f), environ=env).out)
    assert fixed["decision"] == "compact"             # the same numbers, no wait


def test_a_gain_inside_the_forecasts_error_is_not_advised(tmp_path):
    """The benefit is linear in R: at R e^−σ/2 it is what the JSON's terms say it is
    there.  With σ = 4 (R = 40 → 5.4 requests) compacting would lose: held; with σ = 0.1,
    not."""
    s = grown(3, 4, 100_000, 3000)
    wide = decided(tmp_path, s, profile(tmp_path, level=40.0, summary_tokens=3204.5,
                                        log_error=4.0))
    narrow = decided(tmp_path, s, profile(tmp_path, level=40.0, summary_tokens=3204.5,
                                          log_error=0.1))
    for obj, sigma in ((wide, 4.0), (narrow, 0.1)):
        u, d, t = obj["uncertainty"], obj["derived"], obj["terms"]
        low = 40.0 * math.exp(-sigma / 2)
        assert u["log_error"] == sigma and u["requests_low"] == pytest.approx(low)
        # ① grows with R − 1 and ④ with R: the benefit at R' is b + (R' − R) × the slope
        slope = obj["session"]["prices"]["cache_read"] * (t["H"] - d["X"]) / 1e6 - \
            t["info_loss"] / d["R"]
        assert u["benefit_low"] == pytest.approx(obj["best_benefit"] + (low - 40.0) * slope)
    assert wide["uncertainty"]["benefit_low"] <= 0 and wide["uncertainty"]["held"]
    assert wide["decision"] == "skip" and "within the forecast's error" in wide["reason"]
    assert narrow["uncertainty"]["benefit_low"] > 0 and not narrow["uncertainty"]["held"]
    assert narrow["decision"] == "compact"


def status(tmp_path: Path, s: ClaudeSession, env: dict, after: float = 30.0) -> str:
    f = tmp_path / f"s-{uuid.uuid4().hex}.jsonl"
    f.write_bytes(s.text())
    import time as clock
    import unittest.mock
    with unittest.mock.patch.object(clock, "time", lambda: moment(s, after)):
        r = run_main("statusline", "--color", "never",
                     stdin=json.dumps({"transcript_path": str(f)}).encode(), environ=env)
    assert r.status == 0 and r.out.count("\n") == 1
    return r.out[:-1]


def dollars(x: float) -> str:
    return f"${x:,.2f}" if abs(x) >= 0.1 else f"${x:.3f}"


def test_the_pause_saving_by_hand_in_the_json_and_the_status_line(tmp_path):
    """Compacting now would lose a little; had the user stepped away past the cache's TTL
    first, the next request would re-write the whole context at the write price: compacting
    first, on the warm cache, saves that less the loss.  "not yet" says when: before the
    cache goes cold."""
    s = grown(3, 2, 100_000, 3000)
    env = profile(tmp_path, level=20.0, summary_tokens=20_000)
    obj = decided(tmp_path, s, env)
    cache, d = obj["session"]["cache"], obj["derived"]
    rewrite = (obj["total_tokens"] + d["U"]) * (cache["p_write"] -
                                                obj["session"]["prices"]["cache_read"]) / 1e6
    p = obj["pause"]
    assert obj["decision"] == "skip" and obj["best_benefit"] < 0 < p["saving"]
    assert p["rewrite"] == pytest.approx(rewrite)
    assert p["saving"] == pytest.approx(obj["best_benefit"] + rewrite)
    assert p["if_idle_seconds"] == cache["seconds_left"] and cache["state"] == "warm"
    assert obj["wait"] == {"until": "before_cold", "expected_benefit": p["saving"],
                           "requests": None, "seconds": cache["seconds_left"],
                           "value_now": None, "value_then": None, "held": False}
    assert "compacting before then saves" in obj["reason"]
    line = status(tmp_path, s, env)
    minutes = f"{cache['seconds_left'] / 60:.0f}m"
    assert line.startswith(
        f"not yet: compacting would lose {dollars(-obj['best_benefit'])} over ~20 more "
        f"requests · away > {minutes}? /compact first saves ~{dollars(p['saving'])} · ctx ")
    assert "/compact now" not in line
    cold = decided(tmp_path, s, env, after=400.0)      # past the TTL: nothing to offer
    assert cold["pause"] is None and cold["wait"] is None


def test_the_status_line_says_what_to_wait_for(tmp_path):
    s = grown(3, 4, 100_000, 8000)
    env = profile(tmp_path, level=20.0, summary_tokens=40_000)
    obj = decided(tmp_path, s, env)
    w = obj["wait"]
    line = status(tmp_path, s, env)
    assert line.startswith(f"not yet: a later turn end (~{w['requests']:,.0f} requests on) "
                           f"saves ~{dollars(w['expected_benefit'])} more · ")
    s = grown(3, 4, 100_000, 3000)
    env = profile(tmp_path, level=20.0, summary_tokens=20_000)
    obj = decided(tmp_path, s, env)
    line = status(tmp_path, s, env)
    assert line.startswith(f"not yet: the agent's own compaction in "
                           f"~{obj['wait']['requests']:,.0f} requests saves "
                           f"~{dollars(obj['wait']['expected_benefit'])} more · ")
    env = profile(tmp_path, level=40.0, summary_tokens=3204.5, log_error=4.0)
    obj = decided(tmp_path, s, env)
    assert status(tmp_path, s, env).startswith(
        f"not yet: ~{dollars(obj['best_benefit'])} is within the forecast's error · ")


def test_the_pre_compact_hook_gives_the_waits_reason_not_a_negative_loss(tmp_path):
    """Compacting now pays, and a later turn end pays more: the hook blocks the automatic
    compaction for that reason, in the status line's words — not "it would lose $-0.24"
    (the context is near the window's end: no margin, so that the hook weighs at all)."""
    s = grown(3, 4, 100_000, 8000)
    env = profile(tmp_path, level=20.0, summary_tokens=40_000)
    obj = decided(tmp_path, s, env)
    w = obj["wait"]
    assert obj["best_benefit"] > 0 and w["held"]
    f = tmp_path / "hooked.jsonl"
    f.write_bytes(s.text())
    import time as clock
    import unittest.mock
    with unittest.mock.patch.object(clock, "time", lambda: moment(s, 30.0)):
        r = run_main("hook", "pre-compact", "--margin", "0", stdin=json.dumps(
            {"transcript_path": str(f), "trigger": "auto"}).encode(), environ=env)
    assert r.status == 0 and r.err == ""
    reason = json.loads(r.out)["reason"]
    assert reason.startswith(
        "compact-dp: an automatic compaction does not pay yet: a later turn end "
        f"(~{w['requests']:,.0f} requests on) saves ~{dollars(w['expected_benefit'])} "
        "more; ") and "$-" not in reason and "lose" not in reason
    # a line that is no "not yet …" (nothing to weigh) is set apart, not run on
    from compact_dp.integrations import statusline
    with unittest.mock.patch.object(clock, "time", lambda: moment(s, 30.0)), \
            unittest.mock.patch.object(statusline, "decision_part",
                                       lambda d, paint: "no compaction to weigh yet"):
        r = run_main("hook", "pre-compact", "--margin", "0", stdin=json.dumps(
            {"transcript_path": str(f), "trigger": "auto"}).encode(), environ=env)
    assert json.loads(r.out)["reason"].startswith(
        "compact-dp: an automatic compaction does not pay yet: no compaction to weigh yet; ")


# --- how long a compaction takes -------------------------------------------------------------

def timed_session() -> ClaudeSession:
    """Three compactions: one that recorded its duration (90 s, 300,000 tokens), one the
    agent started by itself 41 s after the line before it (preTokens 100,000), and a manual
    one whose gap waited on the user (left out)."""
    s = ClaudeSession()
    for i, (trigger, pre, ms, pause) in enumerate((("manual", 300_000, 90_000, 500.0),
                                                    ("auto", 100_000, None, 39.0),
                                                    ("manual", 200_000, None, 45.0))):
        s.user(f"task {i}")
        s.response([text("ok")], (3, 1000, 20_000))
        s.pause(pause)
        s.boundary(trigger, pre, duration_ms=ms)
        s.summary()
    s.user("more")
    s.response([text("done")], (3, 1000, 20_000))
    return s


def test_compactions_are_timed_by_their_recorded_duration_else_the_agents_gap(tmp_path):
    f = tmp_path / "timed.jsonl"
    f.write_bytes(timed_session().text())
    session = read_session([str(f)])
    assert [(m.seconds, m.gap) for m in session.marks] == [(90.0, 502.0), (None, 41.0),
                                                           (None, 47.0)]
    assert fitting.timed_compactions(session) == [(300_000.0, 90.0), (100_000.0, 41.0)]


def test_the_duration_is_a_line_in_the_context_size():
    # through (100k, 50 s) and (300k, 90 s): 200 s per million tokens, 30 s at none
    assert fitting.duration_fit([(100_000, 50.0), (300_000, 90.0)]) == \
        (pytest.approx(30.0), pytest.approx(200.0))
    # a larger context never compacts faster: the slope is at least 0, at the mean
    assert fitting.duration_fit([(100_000, 90.0), (300_000, 50.0)]) == (70.0, 0.0)
    assert fitting.duration_fit([]) is None


def test_the_profile_learns_the_duration_and_the_decision_shows_it(tmp_path):
    f = tmp_path / "timed.jsonl"
    f.write_bytes(timed_session().text())
    fitted = fitting.fit([read_session([str(f)])])
    cc = fitted.agents["claude-code"]
    slope = (90.0 - 41.0) / 0.2
    assert (cc.compaction_seconds, cc.compaction_seconds_per_mtok, cc.timed_compactions) == \
        (pytest.approx(41.0 - slope * 0.1), pytest.approx(slope), 2)
    # pulled towards a prior's figures with its weight of 20 compactions
    pulled = fitting.fit([read_session([str(f)])], prior=fitted, prior_sessions=20.0)
    assert pulled.agents["claude-code"].compaction_seconds_per_mtok == pytest.approx(slope)
    assert pulled.agents["claude-code"].timed_compactions == 4
    s = grown(3, 4, 100_000, 3000)
    env = profile(tmp_path, level=40.0, summary_tokens=3204.5, compaction_seconds=12.0,
                  compaction_seconds_per_mtok=300.0, timed_compactions=7)
    obj = decided(tmp_path, s, env)
    tokens = obj["session"]["prefix_tokens"] + obj["session"]["context_tokens"]   # a prompt
    seconds = 12.0 + 300.0 * tokens / 1e6
    assert obj["decision"] == "compact" and obj["compaction_seconds"] == pytest.approx(seconds)
    assert f" · ~{seconds:.0f} s to compact · " in status(tmp_path, s, env)
    f = tmp_path / "s.jsonl"
    f.write_bytes(s.text())
    r = run_main("--explain", "--now", repr(moment(s, 30)), str(f),
                 environ={**env, "COLUMNS": "200"})
    assert f"~{seconds:.0f} s  how long a compaction takes: 7 timed compactions of " \
        "claude-code sessions" in r.out


# --- the backtest of the pause ---------------------------------------------------------------

def test_backtest_scores_the_pause_at_the_turn_ends_a_pause_followed(tmp_path):
    """The written session pauses 6.6 minutes (past its 5-minute TTL) before its second
    turn: that turn end is a pause point.  Compacting at the end of the turn before,
    ahead of the pause, saves more than compacting when the user is back (the summary
    request reads a warm cache instead of re-writing the context)."""
    f = tmp_path / "s.jsonl"
    f.write_bytes(claude_session().text())
    r = run_main("backtest", "--json", str(f), environ={"COMPACT_DP_CACHE": str(tmp_path)})
    obj = json.loads(r.out)
    (session,) = obj["sessions"]
    points = session["points"]
    paused = [p for p in points if p["paused_at"] is not None]
    assert [p["kind"] for p in paused] == ["turn"] and len(paused) == 1
    (p,) = paused
    read = read_session([str(f)])
    ends = [q.done for q in read.requests if q.done is not None and q.done < p["time"]]
    assert p["paused_at"] == max(ends) and p["time"] - p["paused_at"] > 300 + 15
    assert p["pause_realized"] > p["realized"]
    scores = session["scores"]
    given = [q for q in paused if q["pause_predicted"] is not None]
    assert scores["pause_points"] == 1 and scores["pause_advice"] == len(given)
    if given:
        assert scores["pause_advice_paid"] == (1.0 if p["pause_realized"] > 0 else 0.0)
    total = obj["total"]
    assert total["dp_compactions"] == session["policies"]["dp"]["compactions"]
    assert total["hindsight_compactions"] == session["policies"]["hindsight"]["compactions"]
    assert total["dp_worse_than_recorded_share"] == (
        1.0 if session["policies"]["dp"]["comparable_cost"] >
        session["policies"]["recorded"]["comparable_cost"] else 0.0)


# --- the end known (replay's dp:known) ---------------------------------------------------------

def test_with_the_end_known_the_session_makes_exactly_R_more_requests():
    """Told the end, the schedule does not weigh a survival: R − n requests remain after n
    more, the session surely gets to R and never past it, and the horizon is R."""
    s = wait.Schedule(derived(L=5.0, R=30.0), wait.Outlook(
        growth=0.0, requests=11.0, exponent=0.187, end_known=True))
    assert [s.remaining(n) for n in (0.0, 10.0, 29.0, 40.0)] == [30.0, 20.0, 1.0, 1.0]
    assert [s.survival(n) for n in (0.0, 29.9, 30.0, 31.0)] == [1.0, 1.0, 0.0, 0.0]
    assert s.end == 30.0


def test_waiting_with_the_end_known_by_hand():
    """T = 300,000, turn ends every 20 requests, 30 requests to come for sure: the one turn
    end weighed is at 20, with 10 to come after it.  Now: b(0.3M, 30) = $1.40 and then at 20
    on 2M, b(2M, 10) = $9; waiting: at 20 on 2.3M, b(2.3M, 10) = $11.40."""
    d = derived(L=20.0, T=300_000, R=30.0)
    w = wait.later(d, b(300_000, 30.0), wait.Outlook(growth=100_000, end_known=True))
    assert w is not None and w.until == wait.TURN_END and w.requests == 20.0
    assert (w.now, w.then) == (pytest.approx(1.4 + 9.0), pytest.approx(11.4))
    assert w.expected_benefit == pytest.approx(1.0)


def test_a_turn_end_past_the_known_end_is_worth_nothing():
    """With 15 requests to come, the turn end at 20 never comes when the end is known;
    under the forecast (15 on average) it may, and is worth waiting for."""
    d = derived(L=20.0, T=300_000, R=15.0)
    now = b(300_000, 15.0)
    assert wait.later(d, now, wait.Outlook(growth=100_000, end_known=True)) is None
    guessed = wait.later(d, now, wait.Outlook(growth=100_000))
    assert guessed is not None and guessed.requests == 20.0
