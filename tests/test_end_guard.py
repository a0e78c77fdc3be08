"""The near-end guard: a compaction that cannot pay back before a likely end is not advised.

The forecast R averages sessions that go on and sessions that stop.  When the turn now
starting is likely the session's last, the requests that matter are that turn's (about L),
so a compaction that pays back only after more of them is held — in ``--json``, the status
line and the hook alike, because the guard lives in the decision.  Profiles whose end
chance is ~1 or ~0 (COMPACT_DP_PROFILE) make the two cases certain.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compact_dp.calibration.profile import BUILT_IN

from .conftest import DEFAULTS, run_main, scan_stream
from .session_fixtures import ClaudeSession, text, tool_use


def big_session(tmp_path: Path, turns: int, requests_per_turn: int) -> Path:
    """A session whose context sits at ~150k tokens: compacting pays after a few requests."""
    s = ClaudeSession()
    context = 150_000
    for t in range(turns):
        s.user(f"step {t}")
        for r in range(requests_per_turn):
            s.response([text("working"), tool_use(f"t{t}.{r}", "make")],
                       (3, 300, context))
            s.tool_result(f"t{t}.{r}", "ok")
            context += 303
    s.response([text("done")], (3, 300, context))
    f = tmp_path / "big.jsonl"
    f.write_bytes(s.text())
    return f


def profile(tmp_path: Path, b0: float) -> str:
    """The built-in profile with an end chance σ(b0): ~1 for b0 = 50, ~0 for b0 = −50."""
    data = json.loads(Path(BUILT_IN).read_text())
    data["end_chance"] = [b0, 0.0, 0.0]
    path = tmp_path / f"profile{b0:+.0f}.json"
    path.write_text(json.dumps(data))
    return str(path)


def decide(f: Path, tmp_path: Path, b0: float, *args: str) -> dict:
    r = run_main("--json", *args, str(f),
                 environ={"COMPACT_DP_PROFILE": profile(tmp_path, b0),
                          "COMPACT_DP_CACHE": str(tmp_path / "cache")})
    assert r.status in (0, 1), r.err
    return json.loads(r.out)


def test_a_compaction_that_pays_back_after_the_likely_last_turn_is_held(tmp_path):
    f = big_session(tmp_path, turns=3, requests_per_turn=2)
    going_on = decide(f, tmp_path, -50.0)
    ending = decide(f, tmp_path, 50.0)
    assert going_on["decision"] == "compact" and not going_on["ending"]["held"]
    after = going_on["ending"]["pays_back_after"]
    assert ending["ending"]["requests"] == going_on["derived"]["L"]       # L = 7 / 3
    assert after is not None and after > ending["ending"]["requests"]
    assert ending["decision"] == "skip" and ending["ending"]["held"]
    assert ending["ending"]["chance"] == pytest.approx(1.0)
    assert ending["keep"] == 0
    assert "likely the last" in ending["reason"]
    # the rest of the decision is the same: only the advice changed
    assert ending["best_benefit"] == going_on["best_benefit"]
    assert ending["terms"] == going_on["terms"]


def test_a_compaction_that_pays_back_within_the_last_turn_is_still_advised(tmp_path):
    """Long turns (L = 30 requests) give a compaction time to pay back, end or not."""
    f = big_session(tmp_path, turns=2, requests_per_turn=30)
    ending = decide(f, tmp_path, 50.0)
    e = ending["ending"]
    assert e["pays_back_after"] is not None and e["pays_back_after"] <= e["requests"]
    assert ending["decision"] == "compact" and not e["held"]


def test_the_seed_horizon_has_no_end_guard(tmp_path):
    """The seed rule knows nothing of an end: its answers stay bash-agent's."""
    f = big_session(tmp_path, turns=3, requests_per_turn=2)
    seeded = decide(f, tmp_path, 50.0, "--horizon", "seed")
    assert "ending" not in seeded
    fixed = decide(f, tmp_path, 50.0, "--horizon", "40")
    assert "ending" not in fixed


def test_the_status_line_and_the_hook_follow_the_guard(tmp_path):
    f = big_session(tmp_path, turns=3, requests_per_turn=2)
    status = json.dumps({"session_id": "s", "transcript_path": str(f)}).encode()
    lines = {}
    for b0 in (-50.0, 50.0):
        env = {"COMPACT_DP_PROFILE": profile(tmp_path, b0),
               "COMPACT_DP_CACHE": str(tmp_path / f"cache{b0}")}
        r = run_main("statusline", "--color", "never", stdin=status, environ=env)
        assert r.status == 0 and r.out.count("\n") == 1
        hook = run_main("hook", "user-prompt-submit", environ=env, stdin=json.dumps(
            {"transcript_path": str(f), "hook_event_name": "UserPromptSubmit"}).encode())
        assert hook.status == 0
        lines[b0] = (r.out.split(" · ")[0], hook.out)
    R = decide(f, tmp_path, -50.0)["derived"]["R"]
    advised, note = lines[-50.0]
    assert advised.startswith("/compact now saves ~$") and \
        advised.endswith(f" over ~{R:,.0f} more requests")
    assert f"~{R:,.0f} requests still expected" in json.loads(note)[
        "hookSpecificOutput"]["additionalContext"]
    held, quiet = lines[50.0]
    assert held == "not yet: this may be the last turn, too short to pay back"
    assert quiet == ""


def test_explain_names_the_horizon_and_the_end_chance(tmp_path):
    f = big_session(tmp_path, turns=3, requests_per_turn=2)
    r = run_main("--explain", str(f), environ={
        "COMPACT_DP_PROFILE": profile(tmp_path, 50.0), "COLUMNS": "200",
        "COMPACT_DP_CACHE": str(tmp_path / "cache")})
    lines = r.out.splitlines()
    horizon = next(x for x in lines if x.startswith("horizon "))
    assert horizon.split()[1] == "auto" and "the default for a session with recorded usage" \
        in horizon
    R = next(x for x in lines if x.startswith("R "))
    assert "auto:" in R and "requests so far" in R
    end = next(x for x in lines if x.startswith("end "))
    assert "100%" in end and "so not now" in end


@pytest.mark.parametrize("turn, held", [(-1, True), (0, False), (1, False)])
def test_a_compaction_paying_back_within_the_last_turn_exactly_is_not_held(turn, held):
    """Near a likely end, a compaction whose break-even comes after the turn's requests is
    held; one that pays back with the turn's last request, or sooner, is not."""
    from compact_dp.core.decision import decide_conversation, hold_near_end
    from compact_dp.core.models import get_model
    from compact_dp.core.params import awk_values
    from compact_dp.core.search import break_even_calls
    conv = scan_stream([b"x" * 40000] * 40)
    values = awk_values({**DEFAULTS, "e_fixed": "20", "L_fixed": "5",
                         "max_context": "1000000"})
    model = get_model("cache-clock")
    dec = decide_conversation(values, conv, model, whole=True)     # Claude Code's kind
    d, t = dec.derived, dec.terms
    assert dec.compact and d is not None and t is not None
    after = break_even_calls(d, dec.model, t.k, t.K)
    assert after is not None and 1 < after < d.R
    d.L = float(after + turn)               # the last turn's requests, about L
    hold_near_end(dec, 1.0)
    assert dec.ending is not None and dec.ending.requests == after + turn
    assert (dec.ending.held, dec.compact) == (held, not held)
