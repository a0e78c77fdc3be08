"""The session's setting (world.py, docs/replay.md "The session's setting"): each figure
learned from what the session recorded, said with its source, overridden by options, the
same for the decision and for replay; what nobody showed is listed as assumed; and the
policies it makes comparable (``never`` where nothing was compacted, hindsight by the
objective it states)."""

from __future__ import annotations

import json

import pytest

from compact_dp.core.models import get_model
from compact_dp.replaying.hindsight import Penalties
from compact_dp.replaying.policies import SchedulePolicy, make_policy
from compact_dp.replaying.run import setting_for
from compact_dp.replaying.simulate import Replay
from compact_dp.sessions.read import read_session

from .conftest import run_main, write
from .session_fixtures import ClaudeSession, CodexRollout, text, tool_use, turns_session

POLICIES = ["recorded", "dp", "hindsight", "never", "threshold:60", "threshold:83"]


def replayed(path, *args: str) -> dict:
    argv = ["replay", "--json", *[a for p in POLICIES for a in ("--policy", p)], *args,
            str(path)]
    r = run_main(*argv)
    assert r.status == 0, r.err
    (session,) = json.loads(r.out)["sessions"]
    return session


def by_policy(session: dict) -> dict[str, dict]:
    return {p["policy"]: p for p in session["policies"]}


def long_claude(peak: int, step: int = 20000, model: str = "claude-opus-4-6") -> ClaudeSession:
    """One turn of tool calls growing from 20k to ``peak`` tokens, each request reading
    the last prompt (a warm cache all along): the bill the cache rules give exactly."""
    s = ClaudeSession(model=model)
    s.user("build it " * 30)
    prompt, last = 20000, 0
    i = 0
    while prompt <= peak:
        s.response([tool_use(f"t{i}", "make")], (1, prompt - last - 1, last))
        s.tool_result(f"t{i}", "x" * (4 * step))
        last, prompt, i = prompt, prompt + step, i + 1
    s.response([text("done")], (1, prompt - last - 1, last))
    return s


# --- the window --------------------------------------------------------------------------------

def test_a_prompt_past_the_window_of_the_day_proves_the_1m_window(tmp_path):
    """claude-opus-4-6 opened at 200k before 2026-03-13 (the fixture's day); a prompt of
    300k proves the 1M window: never is not forced, and bills what was recorded."""
    f = write(tmp_path, long_claude(300000).text())
    session = replayed(f)
    setting = session["setting"]
    assert setting["context_window"] == 1_000_000
    assert "a prompt of 320,000 proves more than" in setting["sources"]["context_window"]
    runs = by_policy(session)
    assert runs["never"]["compactions"] == runs["never"]["forced"] == 0
    assert runs["never"]["comparable_cost"] == pytest.approx(
        runs["recorded"]["comparable_cost"], rel=1e-12)


def test_below_the_window_of_the_day_the_table_rule_stands(tmp_path):
    f = write(tmp_path, long_claude(150000).text())
    setting = replayed(f)["setting"]
    assert setting["context_window"] == 200_000
    assert setting["sources"]["context_window"] == \
        "Claude Code opened claude-opus-4-6 at 200k before 2026-03-13"
    assert setting["auto_compact_tokens"] == 167_000


def codex_rollout(window: int, model: str | None = "gpt-5.5", version: str = "0.80.0"
                  ) -> CodexRollout:
    c = CodexRollout(model=model or "gpt-5.5", window=window)
    c.context()
    c.user("go")
    prompt, cached = 12000, 0
    for _ in range(4):
        c.tool_request(prompt, cached // 128 * 128)
        cached, prompt = prompt, prompt + 3000
    c.reply(prompt, cached // 128 * 128)
    lines = [json.loads(x) for x in c.lines]
    for line in lines:
        if line["type"] == "session_meta":
            line["payload"]["cli_version"] = version
        if line["type"] == "turn_context" and model is None:
            del line["payload"]["model"]
    c.lines = [json.dumps(x) for x in lines]
    return c


def test_the_window_codex_reported_wins_over_the_tables(tmp_path):
    f = write(tmp_path, codex_rollout(258400).text(), "rollout.jsonl")
    session = replayed(f)
    assert session["setting"]["context_window"] == 258400
    assert session["setting"]["sources"]["context_window"] == \
        "the context window the agent reported"
    decided = json.loads(run_main("--json", str(f)).out)
    assert decided["derived"]["M"] == 258400
    assert decided["session"]["setting"] == session["setting"]


# --- the auto-compaction point -----------------------------------------------------------------

def test_the_point_is_where_the_session_compacted_by_itself(tmp_path):
    s = turns_session([[0, 3000, 3000], [3000, 3000]], compacted=1)
    lines = [json.loads(x) for x in s.lines]
    for line in lines:
        if line.get("subtype") == "compact_boundary":
            line["compactMetadata"] = {"trigger": "auto", "preTokens": 151234}
    s.lines = [json.dumps(x) for x in lines]
    f = write(tmp_path, s.text())
    setting = replayed(f)["setting"]
    assert setting["auto_compact_tokens"] == 151234
    assert setting["sources"]["auto_compact_tokens"] == \
        "the session's own automatic compaction"


@pytest.mark.parametrize("args, key, value", [
    (["--max-context", "500000"], "context_window", 500000),
    (["--auto-compact-tokens", "90000"], "auto_compact_tokens", 90000),
    (["--auto-compact-tokens", "off"], "auto_compact_tokens", None),
    (["--cache-ttl", "1h"], "ttl", "1h")])
def test_an_option_overrides_its_figure_in_replay_and_in_the_decision(args, key, value,
                                                                      tmp_path):
    f = write(tmp_path, long_claude(150000).text())
    session = replayed(f, *args)
    assert session["setting"][key] == value
    assert session["setting"]["sources"][key] == "given"
    decided = json.loads(run_main("--json", *args, str(f)).out)
    assert decided["session"]["setting"] == session["setting"]


def test_a_bad_auto_compact_value_is_a_usage_error(tmp_path):
    f = write(tmp_path, long_claude(60000).text())
    for argv in (["--auto-compact-tokens", "0", str(f)],
                 ["replay", "--auto-compact-tokens", "lots", str(f)]):
        r = run_main(*argv)
        assert r.status == 2 and r.out == ""
        assert r.err.startswith("compact-dp: error: --auto-compact-tokens: ")


# --- assumed -----------------------------------------------------------------------------------

def test_a_known_models_session_assumes_nothing(tmp_path):
    f = write(tmp_path, long_claude(60000).text())
    assert replayed(f)["assumed"] == []
    r = run_main("replay", str(f))
    assert "assumed:" not in r.out


def test_an_unknown_models_prices_are_assumed_and_the_table_says_so(tmp_path):
    f = write(tmp_path, long_claude(60000, model="mystery-model-1").text())
    session = replayed(f)
    assert session["assumed"][0] == ("prices of mystery-model-1: not in the price table, "
                                     "billed at the default prices")
    r = run_main("replay", str(f))
    assert "assumed: 1 session billed at prices the session did not show" in \
        " ".join(r.out.split())


def test_a_codex_rollout_naming_no_model_is_priced_as_its_versions_default(tmp_path):
    f = write(tmp_path, codex_rollout(258400, model=None, version="0.34.0").text(),
              "rollout.jsonl")
    session = replayed(f)
    assert session["setting"]["model"] == "gpt-5"
    assert session["assumed"] == ["model: the rollout names no model: Codex 0.34.0's "
                                  "default, gpt-5"]
    named = write(tmp_path, codex_rollout(258400, model="gpt-5", version="0.34.0").text(),
                  "named.jsonl")
    assert replayed(named)["recorded"]["input_cost"] == session["recorded"]["input_cost"]


# --- the objective and hindsight ------------------------------------------------------------------

def test_each_policys_objective_is_its_cost_and_the_penalty_of_each_compaction(tmp_path):
    """A plain transcription: ④ of the n-th compaction before request j, as Penalties
    gives it, summed over the run's compactions."""
    built = turns_session([[0, 9000, 9000], [9000, 9000], [9000, 9000], [9000, 9000],
                           [9000, 9000]], start=30000)
    f = write(tmp_path, built.text())
    session = read_session([str(f)])
    setting = setting_for(session, {}, get_model("cache-clock"), True, 0, None, None, {})
    penalty = Penalties(setting)
    doc = replayed(f)
    for p in doc["policies"]:
        run = Replay(setting, make_policy(p["policy"]) if not p["policy"].startswith(
            "hindsight") else SchedulePolicy(
                {(c["request"] - 1, c["kind"]) for c in p["compaction_points"]}),
            setting.events).run()
        assert len(run.compactions) == p["compactions"]
        by_hand = sum(penalty(c.before, n) for n, c in enumerate(run.compactions))
        assert p["penalty"] == pytest.approx(by_hand, rel=1e-9, abs=1e-15)
        assert p["objective"] == pytest.approx(p["comparable_cost"] + p["penalty"],
                                               rel=1e-12)
        assert (p["penalty"] > 0) == (p["compactions"] > 0)
    assert doc["penalty"] == pytest.approx(penalty(len(session.requests) // 2, 0), rel=1e-12)


@pytest.mark.parametrize("turns, compacted", [
    ([[0, 20000, 20000], [20000, 20000], [20000, 20000], [20000, 20000]], 2),
    ([[0, 30000, 30000, 30000], [30000], [30000, 30000], [500]], 1),
    ([[0, 5000], [5000], [5000], [5000], [5000], [5000]], None)])
def test_hindsights_objective_is_never_above_another_policys(turns, compacted, tmp_path):
    f = write(tmp_path, turns_session(turns, start=30000, compacted=compacted).text())
    runs = by_policy(replayed(f))
    best = runs["hindsight"]["objective"]
    for name, run in runs.items():
        assert best <= run["objective"] + 1e-12, name


def recorded_auto_compaction() -> ClaudeSession:
    """A long turn that Claude Code compacted by itself in the middle (its boundary, the
    summary, the context starting again from 30k), then two more turns."""
    s = ClaudeSession()
    s.user("build it " * 30)
    prompt, last = 30000, 0
    for i in range(7):
        s.response([tool_use(f"t{i}", "make")], (1, prompt - last - 1, last))
        s.tool_result(f"t{i}", "x" * 4 * 22000)
        last, prompt = prompt, prompt + 22000
    s.boundary("auto", last)
    s.user("This session is being continued from a previous conversation. Summary: "
           + "we did things. " * 40, turn=False, isCompactSummary=True)
    prompt = 33000
    s.response([tool_use("t9", "make")], (1, prompt - 15000 - 1, 15000))
    last = prompt
    s.tool_result("t9", "x" * 4 * 5000)
    for t in range(2):
        prompt = last + 5000
        s.response([text("done")], (1, prompt - last - 1, last))
        last = prompt
        s.user(f"next {t}")
    prompt = last + 5000
    s.response([text("done")], (1, prompt - last - 1, last))
    return s


def test_a_compaction_at_the_recorded_point_costs_what_the_recording_shows(tmp_path):
    """Compacting where the recording did, as it did, is the recording: its cost equals
    the recorded policy's, and so hindsight (whose space holds that point) is no dearer."""
    f = write(tmp_path, recorded_auto_compaction().text())
    session = read_session([str(f)])
    assert session.compaction_count == 1
    setting = setting_for(session, {}, get_model("cache-clock"), True, 0, None, None, {})
    recorded = Replay(setting, make_policy("recorded"), setting.events).run()
    (c,) = recorded.compactions
    at = Replay(setting, SchedulePolicy({(c.before, "recorded")}), setting.events).run()
    assert [x.before for x in at.compactions] == [c.before]
    assert at.comparable_cost == pytest.approx(recorded.comparable_cost, rel=1e-12)
    assert [b.prompt for b in at.requests] == [b.prompt for b in recorded.requests]
    runs = by_policy(replayed(f))
    assert runs["hindsight"]["objective"] <= runs["recorded"]["objective"] + 1e-12
    assert "schedule_of" not in runs["hindsight"]         # the search found it itself


def test_the_footer_says_what_hindsight_minimises_and_dps_saving_both_ways(tmp_path):
    f = write(tmp_path, turns_session([[0, 20000, 20000], [20000, 20000], [20000, 20000],
                                       [20000, 20000]], start=30000).text())
    runs = by_policy(replayed(f))
    r = run_main("replay", "--policy", "recorded", "--policy", "dp", "--policy",
                 "hindsight", str(f))
    words = " ".join(r.out.split())
    dollars = runs["recorded"]["comparable_cost"] - runs["dp"]["comparable_cost"]
    objective = runs["recorded"]["objective"] - runs["dp"]["objective"]

    def said(x: float) -> str:
        return f"{'saves' if x >= 0 else 'loses'} ${abs(x):,.3f}"
    assert ("hindsight: the schedule with the least objective (input and summaries, plus "
            "the information penalty ④ for each compaction); dp "
            f"{said(dollars)} in dollars and {said(objective)} in the objective against "
            "what was recorded.") in words


# --- the drifting bills ------------------------------------------------------------------------

def test_a_session_of_1_hour_writes_only_is_billed_as_recorded_across_long_pauses(tmp_path):
    """Writes at the 1-hour price, pauses of 20 minutes: the cache stays warm, holding
    each prompt but its 1-token uncached tail."""
    s = ClaudeSession()
    prompt, cached = 20000, 0
    for t in range(6):
        s.pause(1200)
        s.user(f"turn {t}")
        s.response([text("ok")], (1, prompt - cached - 1, cached), ttl="1h")
        cached, prompt = prompt - 1, prompt + 4000
    f = write(tmp_path, s.text())
    session = replayed(f)
    assert session["setting"]["ttl"] == "1h"
    runs = by_policy(session)
    assert abs(runs["recorded"]["simulation_error"]) < 1e-12
    assert runs["never"]["comparable_cost"] == pytest.approx(
        runs["recorded"]["comparable_cost"], rel=1e-12)


def test_a_codex_rollout_switching_between_variants_shares_one_cache(tmp_path):
    """gpt-5.6-terra and gpt-5.6-sol in turn, each request reading what the other wrote
    (GPT-5.6 reads whole prefixes, no 128-token blocks): one cache, billed as recorded."""
    c = CodexRollout(model="gpt-5.6-terra")
    c.context()
    prompt, cached = 20000, 0
    for t in range(6):
        c.turn_context("gpt-5.6-terra" if t % 2 == 0 else "gpt-5.6-sol")
        c.user(f"turn {t}")
        c.reply(prompt, cached)
        cached, prompt = prompt, prompt + 4000
    f = write(tmp_path, c.text(), "rollout.jsonl")
    setting = setting_for(read_session([str(f)]), {}, get_model("cache-clock"), True, 0,
                          None, None, {})
    assert setting.cache_key("gpt-5.6-sol") == setting.cache_key("gpt-5.6-terra")
    runs = by_policy(replayed(f))
    assert abs(runs["recorded"]["simulation_error"]) < 1e-9


@pytest.mark.parametrize("window", [200000, 1000000])
def test_the_status_lines_window_is_the_settings(window, tmp_path):
    """Claude Code's statusLine JSON says the window it runs with: the decision the status
    line makes uses it (and says so)."""
    from compact_dp.integrations.live import decide_transcript
    f = write(tmp_path, long_claude(60000).text())
    env = {"COMPACT_DP_CACHE": str(tmp_path / "cache")}
    _, answered, question = decide_transcript(str(f), env, 5.0, 1.8e9, float(window))
    assert answered is not None and question is not None and question.world is not None
    assert question.world.context_window == window
    assert question.world.sources["context_window"] == "Claude Code's status line"
    assert answered.decision.derived is not None and answered.decision.derived.M == window


def test_a_request_above_the_long_context_tier_is_billed_whole_at_its_prices(tmp_path):
    """gpt-5.6-sol: above 272K input tokens the whole request is billed at the tier's
    prices (input, cached input, output); at 272K exactly, at the standard ones."""
    from compact_dp.pricing.table import find
    sol = find("gpt-5.6-sol")
    assert sol is not None and sol.long is not None and sol.long_above == 272000
    costs = []
    for prompt in (272000, 272001):
        c = CodexRollout(model="gpt-5.6-sol", window=1000000)
        c.context()
        c.user("go")
        c.reply(prompt, 200000)
        f = write(tmp_path, c.text(), f"r{prompt}.jsonl")
        costs.append(replayed(f)["recorded"])
    standard, tier = costs
    for bill, p, prompt in ((standard, sol, 272000), (tier, sol.long, 272001)):
        want = ((prompt - 200000) * p.input + 200000 * p.cache_read) / 1e6
        assert bill["input_cost"] == pytest.approx(want, rel=1e-12)
        assert bill["output_cost"] == pytest.approx(bill["output_tokens"] * p.output / 1e6,
                                                    rel=1e-12)
