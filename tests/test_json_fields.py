"""Every field a program reads: the decision's ``--json``, ``replay --json`` and the
status line, on fixtures whose numbers can be worked out by hand (docs/output.md,
docs/replay.md, docs/claude-code.md).  Each test names every field, so a field that
moves, changes its meaning or is left out fails here."""

from __future__ import annotations

import json

import pytest

from compact_dp.calibration.profile import BUILT_IN
from compact_dp.sessions.read import read_session
from compact_dp.sessions.timefmt import parse_time
from compact_dp.views.words import money

from .conftest import run_main, write
from .session_fixtures import ClaudeSession, claude_session, stamp, text

HAIKU = {"model": "claude-haiku-4-5", "known": True, "input": 1.0, "cache_read": 0.1,
         "cache_write": {"5m": 1.25, "1h": 2.0}, "output": 5.0, "context_window": 200000,
         "date": "2026-03"}
FROM_SESSION = {
    "t": "from the session: user turns",
    "total_requests": "from the session: API requests",
    "total_compact": "from the session: compactions",
    "total_input": "from the session: recorded prompt tokens",
    "V": "from the session: the fixed prefix: the first request's prompt less its messages",
    "S": "from the session: the last compaction's summary",
    "after_tokens": "from the session: what its compactions left",
    "after_cached": "from the session: what of it was still cached"}


def same(got: object, want: object) -> bool:
    """Equal, nested, with the same keys in the same order, floats to the last few bits
    (a sum of prices in another order may differ there; anything else must not)."""
    if isinstance(want, dict):
        return isinstance(got, dict) and list(got) == list(want) and all(
            same(got[k], v) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(
            same(a, b) for a, b in zip(got, want))
    if isinstance(want, float) and isinstance(got, (int, float)):
        return got == pytest.approx(want, rel=1e-12, abs=1e-15)
    return type(got) is type(want) and got == want


def opus_setting(ttl: str, keeps: str) -> dict:
    """The setting of a claude-opus-4-6 session of Claude Code 2.1.40 on 2026-03-01, 5-minute
    writes, no message kept (world.py): 200k before the 1M default, that version's point."""
    return {"context_window": 200000.0, "windows": None, "auto_compact_tokens": 167000.0,
            "ttl": "5m", "keeps": "none", "kept_messages": None, "model": None, "sources": {
                "context_window": "Claude Code opened claude-opus-4-6 at 200k before "
                                  "2026-03-13",
                "auto_compact_tokens": "Claude Code 2.1.40's default: the window less "
                                       "33,000 (from 2.1.21)",
                "ttl": ttl, "keeps": keeps}}


# --- the decision ----------------------------------------------------------------------------

@pytest.mark.parametrize("idle, state", [(60.0, "warm"), (7200.0, "cold")])
def test_every_field_of_the_decisions_json(idle, state, tmp_path):
    built = claude_session()
    f = write(tmp_path, built.text())
    s = read_session([str(f)])
    last = s.last_time(None)
    r = run_main("--json", "--now", repr(last + idle), "--horizon", "40", str(f))
    assert r.status == 0 and r.err == ""
    got = json.loads(r.out)
    assert list(got) == ["schema_version", "model", "lines", "total_tokens", "keep",
                         "min_keep", "best_k", "best_benefit", "derived", "terms",
                         "decision", "reason", "session"]
    T, V = s.live_tokens, s.prefix
    S = float(s.summary_tokens)
    assert (got["schema_version"], got["model"], got["lines"], got["total_tokens"],
            got["keep"], got["min_keep"], got["best_k"]) == (1, "cache-clock", 4, T, 0, 3, 0)
    prompts = [r["prompt"] for r in built.requests]
    # the quantities: E = baseline 8 − 3 turns, L = 6 requests / 3 turns, R as given, the
    # mean prompt, r_t after one compaction (0.8 twice), ④, Q and M (haiku's window), and
    # what the compaction left: X = the summary beyond V, U = V less the 1 token still read
    avg = sum(prompts) / 6
    r_t = 1.0 * 0.8 * 0.8
    info_loss = 0.03 * (1 - r_t) * (40 * avg) * 1.0 / 1e6
    derived = got["derived"]
    assert list(derived) == ["E", "L", "R", "avg", "r_t", "info_loss", "Q", "M", "X", "U",
                             "horizon", "horizon_source"]
    assert {k: derived[k] for k in ("E", "L", "R", "avg", "r_t", "Q", "M", "X", "U")} == {
        "E": 5.0, "L": 2.0, "R": 40.0, "avg": avg, "r_t": r_t, "Q": 0.2, "M": 200000.0,
        "X": S, "U": V - 1}
    assert derived["info_loss"] == pytest.approx(info_loss, rel=1e-12)
    assert (derived["horizon"], derived["horizon_source"]) == ("fixed",
                                                               "fixed: 40 requests, given")
    # the terms at k = 0 (keep none), haiku's prices, 1-hour writes at $2
    write_price, read_price, cold = 2.0, 0.1, state == "cold"
    summary_read = write_price if cold else read_price
    want = {"K": 0, "H": T,
            "savings": 39 * read_price * (T - S) / 1e6,
            "cache_miss": (S + V - 1) * (write_price - read_price) / 1e6,
            "compact_cost": (summary_read * (V + T) + 1.0 * 70 + 5.0 * S) / 1e6,
            "info_loss": info_loss,
            "quality": 0.2 * 1.0 * ((V + T) ** 2 - V ** 2) / (200000 * 1e6),
            "cold_rewrite": (V + T) * (write_price - read_price) / 1e6 if cold else 0.0}
    want["benefit"] = (want["savings"] - want["cache_miss"] - want["compact_cost"] -
                       info_loss + want["quality"] + want["cold_rewrite"])
    want["billed"] = (want["savings"] - want["cache_miss"] - want["compact_cost"] +
                      want["cold_rewrite"])
    terms = got["terms"]
    assert list(terms) == ["K", "H", "savings", "cache_miss", "compact_cost", "info_loss",
                           "quality", "benefit", "cold_rewrite", "billed"]
    assert terms == pytest.approx(want, rel=1e-12, abs=1e-18)
    assert got["best_benefit"] == terms["benefit"]
    benefit = terms["benefit"]
    assert got["decision"] == ("compact" if benefit > 0 else "skip")
    if benefit > 0:
        assert got["reason"] == (f"compact: summarise the whole history ({T:,} tokens); "
                                 f"net benefit {money(benefit)}.")
    else:
        assert got["reason"].startswith(f"skip: compacting now loses {money(-benefit)}")
    session = got["session"]
    assert list(session) == ["format", "requests", "compactions", "last_request_tokens",
                             "user_turns", "messages", "models", "tokens", "context_tokens",
                             "prefix_tokens", "summary_tokens", "last_request_at",
                             "sources", "warnings", "keep", "horizon", "horizon_reason",
                             "prices", "profile", "setting", "assumed", "cache"]
    last_response = built.requests[-1]["time"]
    # the setting (world.py): the window of the model that carried the conversation (opus,
    # not the last request's haiku), opened at 200k on the session's day; Claude Code
    # 2.1.40's point; the TTL most writes used; a recorded compaction that kept nothing
    assert session["setting"] == opus_setting(
        "the session's cache writes (1% of them 1-hour)",
        "Claude Code's compactions recorded keep no message")
    assert {k: v for k, v in session.items() if k not in ("sources", "prices", "profile",
                                                             "cache", "setting")} == {
        "format": "claude-code", "requests": 6, "compactions": 1,
        "last_request_tokens": 1 + 400 + 23500, "user_turns": 3, "messages": 4,
        "models": ["claude-opus-4-6", "claude-haiku-4-5-20251001"], "tokens": "usage",
        "context_tokens": T, "prefix_tokens": V, "summary_tokens": S,
        "last_request_at": parse_time(stamp(last_response)), "warnings": [],
        "keep": "none", "horizon": "40", "horizon_reason": "--horizon given", "assumed": []}
    table = "price table, the session's model claude-haiku-4-5-20251001"
    assert session["sources"] == {**FROM_SESSION, **dict.fromkeys(
        ("p_input", "p_cache", "p_out"), table),
        "max_context": session["setting"]["sources"]["context_window"]}
    assert session["prices"] == {**HAIKU, "source": table}
    assert list(session["profile"]) == ["source", "path"]
    assert session["profile"]["path"].endswith("calibration/default.json")
    assert session["cache"] == {
        "state": state, "ttl": "1h", "ttl_seconds": 3600.0,
        "ttl_source": "the session's cache writes", "last_request_at": last,
        "now": last + idle, "idle_seconds": idle, "seconds_left": max(0.0, 3600 - idle),
        "p_write": 2.0, "p_write_source": "price table, 1h writes"}


def test_the_json_of_a_policy_adds_its_action_and_whether_it_was_forced(tmp_path):
    f = write(tmp_path, claude_session().text())
    plain = json.loads(run_main("--json", "--now", "1800000000", str(f)).out)
    r = run_main("--json", "--now", "1800000000", "--trigger", "plan_clear", str(f))
    forced = json.loads(r.out)
    assert r.status == 0 and list(forced)[-3:] == ["action", "forced", "session"]
    assert (forced["action"], forced["forced"], forced["keep"]) == ("compact", True, 0)
    assert forced["reason"] == plain["reason"] + (
        " Policy: compact (forced by the plan_clear trigger; the whole history is "
        "summarised).")
    assert {k: v for k, v in forced.items() if k not in ("action", "forced", "reason")} == \
        {k: v for k, v in plain.items() if k != "reason"}


# --- replay ----------------------------------------------------------------------------------

def three_warm_requests() -> ClaudeSession:
    """Three requests two seconds apart on a warm 5-minute cache, each recorded as the
    cache rules bill it: a replay of any policy that does not compact is the bill."""
    s = ClaudeSession()
    s.user("hi")
    s.response([text("a")], (3, 10000, 0))
    s.user("more")
    s.response([text("b")], (3, 300, 10000))
    s.user("again")
    s.response([text("c")], (3, 200, 10300))
    return s


def test_every_field_of_replay_json(tmp_path):
    f = write(tmp_path, three_warm_requests().text())
    r = run_main("replay", "--json", "--policy", "recorded", "--policy", "never", str(f))
    assert r.status == 0 and r.err == ""
    got = json.loads(r.out)
    assert list(got) == ["schema_version", "sessions", "skipped", "by", "groups"]
    assert (got["schema_version"], got["skipped"], got["by"]) == (1, [], "session")
    (session,) = got["sessions"]
    started = parse_time(stamp(2))
    recorded_in = (9 * 5 + 20300 * 0.5 + 10500 * 6.25) / 1e6
    out_cost = 150 * 25 / 1e6
    none = {"requests": 0, "models": [], "input_tokens": 0, "cache_read_tokens": 0,
            "cache_write_5m_tokens": 0, "cache_write_1h_tokens": 0, "output_tokens": 0,
            "input_cost": 0.0, "output_cost": 0.0, "files": 0}
    assert list(session) == ["session", "format", "project", "session_id", "started", "date",
                             "messages", "requests", "compactions", "model", "keep",
                             "points", "setting", "assumed", "penalty", "warnings",
                             "profile", "recorded", "policies"]
    # ④ of one compaction halfway (test_setting.py works it out); more than nothing
    assert isinstance(session["penalty"], float) and session["penalty"] > 0
    assert session["setting"] == opus_setting(
        "the session's cache writes (0% of them 1-hour)", "Claude Code keeps no message")
    assert {k: v for k, v in session.items() if k not in ("recorded", "policies",
                                                             "setting", "penalty")} == {
        "session": str(f), "format": "claude-code", "project": "p", "session_id": "s-1",
        "started": started, "date": "2026-03-01", "messages": 6, "requests": 3,
        "compactions": 0, "model": "cache-clock", "keep": "none", "points": "turn",
        "assumed": [], "warnings": [], "profile": {
            "source": "make calibrate: real sessions of other projects",
            "path": BUILT_IN}}
    assert same(session["recorded"], {
        "requests": 3, "models": ["claude-opus-4-6"], "input_tokens": 9,
        "cache_read_tokens": 20300, "cache_write_5m_tokens": 10500,
        "cache_write_1h_tokens": 0, "output_tokens": 150, "input_cost": recorded_in,
        "output_cost": out_cost, "compactions": 0, "subagents": none,
        "total_cost": recorded_in + out_cost})
    prompts = [10003.0, 10303.0, 10503.0]
    run = {"requests": 3, "compactions": 0, "forced": 0, "input_cost": recorded_in,
           "output_cost": out_cost, "summary_cost": 0.0, "summary_output_cost": 0.0,
           "unrecorded_cost": 0.0, "comparable_cost": recorded_in,
           "penalty": 0.0, "objective": recorded_in,
           "total_cost": recorded_in + out_cost, "cache_read_tokens": 20300.0,
           "cache_write_tokens": 10500.0, "peak_context": 10503.0,
           "mean_context": sum(prompts) / 3, "cache_hit_share": 20300 / sum(prompts),
           "context": prompts, "compaction_points": []}
    recorded, never = session["policies"]
    like = {"objective_saving": 0.0, "objective_share": None, "dollar_share": None}
    assert same(recorded, {"policy": "recorded", **run, "simulation_error": 0.0,
                           "hindsight_share": None, **like})
    assert same(never, {"policy": "never", **run, "saving": 0.0, "hindsight_share": None,
                        **like})
    (group,) = got["groups"]
    assert same(group, {
        "key": str(f), "sessions": 1, "first": "2026-03-01", "last": "2026-03-01",
        "requests": 3, "compactions": 0, "recorded_cost": recorded_in + out_cost,
        "policies": [{"policy": "never", "saving": 0.0, "hindsight_share": None,
                      "objective_share": None, "dollar_share": None,
                      "compared_cost": recorded_in}],
        "paths": [str(f)], "project": "p", "session_id": "s-1"})


def test_a_replayed_compactions_fields(tmp_path):
    """A threshold at 5 % of the window compacts at the turn end after the first
    request: its point names the request it came before, what it dropped and kept, and
    its costs are the summary's."""
    f = write(tmp_path, three_warm_requests().text())
    r = run_main("replay", "--json", "--policy", "recorded", "--policy", "threshold:5",
                 str(f))
    session = json.loads(r.out)["sessions"][0]
    threshold = session["policies"][1]
    assert threshold["policy"] == "threshold:5" and threshold["compactions"] >= 1
    points = threshold["compaction_points"]
    assert len(points) == threshold["compactions"]
    first = points[0]
    assert list(first) == ["request", "time", "dropped_messages", "dropped_tokens",
                           "kept_messages", "forced", "input_cost", "output_cost"]
    s = read_session([str(f)])
    assert (first["request"], first["time"], first["dropped_messages"],
            first["kept_messages"], first["forced"]) == (2, s.requests[1].sent, 2, 0, False)
    assert first["dropped_tokens"] == s.tokens[0] + s.tokens[1]
    S = json.loads(run_main("--json", str(f)).out)["session"]["summary_tokens"]
    assert threshold["summary_output_cost"] == pytest.approx(len(points) * S * 25 / 1e6,
                                                             rel=1e-12)
    assert threshold["summary_cost"] == pytest.approx(
        sum(p["input_cost"] + p["output_cost"] for p in points), rel=1e-12)
    assert threshold["saving"] == pytest.approx(
        session["policies"][0]["comparable_cost"] - threshold["comparable_cost"], rel=1e-12)


def test_the_warnings_field_holds_what_stderr_said(tmp_path):
    """Both the reader's (a last line cut short) and the question's (a model the table
    does not know)."""
    built = ClaudeSession(model="mystery-model-1")
    built.user("hi")
    built.response([text("a")], (3, 1000, 0))
    built.user("more")
    f = write(tmp_path, built.text()[:-20])
    r = run_main("--json", str(f))
    warnings = json.loads(r.out)["session"]["warnings"]
    assert len(warnings) == 2 and warnings[0].startswith("the last line (")
    assert warnings[1].startswith("model 'mystery-model-1' is not in the price table")
    assert r.err == "".join(f"compact-dp: warning: {w}\n" for w in warnings)
