"""Policies compact only where the agent can (docs/replay.md): a Claude Code or Codex
session at a turn end — before the next human message — or, in the middle of a turn, at
the agent's own automatic compaction (Claude Code: 33,000 tokens short of the window;
Codex: 90 % of it); a bash-agent session before any request.  Each bound holds exactly at
its value: a prompt at the threshold compacts, one a token short does not."""

from __future__ import annotations

import json

import pytest

from compact_dp.agents import REQUEST, TURN
from compact_dp.core.models import get_model
from compact_dp.replaying.policies import DpPolicy, Policy
from compact_dp.replaying.run import policy_for, setting_for
from compact_dp.replaying.simulate import Replay
from compact_dp.sessions.read import read_session
from compact_dp.sessions.session import TOOL

from .conftest import INPUTS, run_main, write
from .session_fixtures import codex_turns, turns_session

CACHE_CLOCK = get_model("cache-clock")


class Watched(Policy):
    """A policy, watched: every moment it was asked (where, the request, the prompt then)
    and every compaction it asked for that the engine carried out."""

    def __init__(self, inner: Policy):
        self.inner, self.name = inner, inner.name
        self.asked: list[tuple[str, int, float]] = []
        self.compacted: list[tuple[str, int, float, bool]] = []

    def _watch(self, where: str, replay, request, decision):
        prompt = replay.prompt_now(request)
        self.asked.append((where, replay.index, prompt))
        if decision is not None and replay.context.count:
            self.compacted.append((where, replay.index, prompt, decision.forced))
        return decision

    def at_turn_end(self, replay, request):
        return self._watch(TURN, replay, request, self.inner.at_turn_end(replay, request))

    def before_request(self, replay, request):
        return self._watch(REQUEST, replay, request,
                           self.inner.before_request(replay, request))


def setting_of(path, window: float, whole: bool = True, model=CACHE_CLOCK):
    session = read_session([str(path)])
    return setting_for(session, {"max_context": str(window)}, model, whole, 0, None, None,
                       {})


def watch(setting, spec: str) -> Watched:
    watched = Watched(policy_for(spec, setting))
    run = Replay(setting, watched, setting.events).run()
    assert len(run.compactions) == len(watched.compacted)
    return watched


# --- Claude Code and Codex: turn ends, and the agent's own automatic compaction ------------------

LONG = [[20000] * 5] + [[1000] * 3] * 6 + [[20000] * 3] + [[1000] * 3] * 4


def sessions(tmp_path):
    """A Claude Code session and a Codex rollout with long turns, in windows where every
    policy must compact, some of them in the middle of a turn."""
    cc = setting_of(write(tmp_path, turns_session(LONG, start=27000).text(), "cc.jsonl"),
                    120000)
    codex = setting_of(write(tmp_path, codex_turns(LONG).text(), "codex.jsonl"), 110000)
    return {"claude-code": cc, "codex": codex}


@pytest.mark.parametrize("kind", ["claude-code", "codex"])
def test_policies_compact_at_turn_ends_or_at_the_agents_own_threshold(kind, tmp_path):
    setting = sessions(tmp_path)[kind]
    ends = set(setting.session.turn_requests())
    assert setting.points == TURN and setting.auto is not None
    mid_turn = 0
    for spec in ("dp", "threshold:50", "threshold:80", "hindsight", "hindsight:free"):
        watched = watch(setting, spec)
        assert watched.compacted, spec
        assert {j for where, j, _ in watched.asked if where == TURN} == ends, spec
        for where, j, prompt, forced in watched.compacted:
            if where == TURN:
                assert j in ends, (spec, j)
            else:
                assert prompt >= setting.auto, (spec, j, prompt)
                assert forced or not spec.startswith("threshold"), (spec, j)
                mid_turn += 1
    assert mid_turn, "some policy had to compact in the middle of a turn"


def test_a_threshold_crossed_in_the_middle_of_a_turn_waits_for_its_end(tmp_path):
    """At 30 % of an 80,000-token window (24,000), crossed by the turn's second request
    (25,000, after a tool result): the user compacts at the turn's end, not before."""
    built = turns_session([[5000, 5000, 5000], [5000, 5000], [3000]])
    setting = setting_of(write(tmp_path, built.text()), 80000)
    prompts = [r.usage.prompt for r in setting.session.requests]
    assert prompts[:3] == [20000, 25000, 30000] and setting.session.turn_requests() == [3, 5]
    assert setting.session.kinds[setting.session.requests[1].seen - 1] == TOOL
    watched = watch(setting, "threshold:30")
    assert [(where, j) for where, j, _, _ in watched.compacted][:1] == [(TURN, 3)]


def turn_end_prompt(setting, j: int) -> float:
    """The prompt a policy sees at the turn end before request j (nothing compacted)."""
    watched = watch(setting, "never")
    return next(p for where, i, p in watched.asked if (where, i) == (TURN, j))


@pytest.mark.parametrize("kind", ["claude-code", "codex"])
def test_a_threshold_compacts_at_a_turn_end_exactly_at_p_percent(kind, tmp_path):
    built = turns_session([[5000, 5000], [5000, 5000], [3000]]) if kind == "claude-code" \
        else codex_turns([[5000, 5000], [5000, 5000], [3000]])
    path = write(tmp_path, built.text())
    at = turn_end_prompt(setting_of(path, 1e6), 2)
    exact = watch(setting_of(path, 4 * at), "threshold:25")
    assert [(where, j, p) for where, j, p, _ in exact.compacted][:1] == [(TURN, 2, at)]
    short = watch(setting_of(path, 4 * (at + 1)), "threshold:25")      # P % is at + 1
    assert (TURN, 2) not in [(where, j) for where, j, _, _ in short.compacted]


@pytest.mark.parametrize("kind, window", [("claude-code", lambda p: p + 33000),
                                          ("codex", lambda p: p / 0.9)])
def test_in_the_middle_of_a_turn_the_agent_compacts_exactly_at_its_threshold(kind, window,
                                                                             tmp_path):
    """The third request of a turn, after a tool result, at exactly the agent's automatic
    threshold: a threshold policy of a higher P compacts there, forced; a window one token
    larger (its threshold a token above the prompt) leaves it alone."""
    turns = [[4500, 4500, 4500, 4500]]
    built = turns_session(turns, start=36000) if kind == "claude-code" else \
        codex_turns(turns, start=36000)
    path = write(tmp_path, built.text())
    prompt = 45000                                   # the third request's, a multiple of 9
    assert read_session([str(path)]).requests[2].usage.prompt == prompt
    setting = setting_of(path, window(prompt))
    assert setting.auto == prompt
    exact = watch(setting, "threshold:99")
    assert [(where, j, p, forced) for where, j, p, forced in exact.compacted][:1] == \
        [(REQUEST, 2, prompt, True)]
    above = watch(setting_of(path, window(prompt + 1)), "threshold:99")
    assert (REQUEST, 2) not in [(where, j) for where, j, _, _ in above.compacted]


@pytest.mark.parametrize("policy", ["hindsight", "hindsight:free"])
@pytest.mark.parametrize("window, at", [(78000, 3), (78001, 4)])
def test_hindsight_may_compact_in_a_turn_from_a_prompt_exactly_at_the_threshold(
        policy, window, at, tmp_path):
    """One long turn whose third request's prompt, 45,000 tokens, is exactly Claude Code's
    automatic threshold in a 78,000-token window (33,000 short of it), and a hundred
    small requests after it: the cheapest schedule compacts as early as the agent could,
    before that request (the JSON counts requests from 1); in a window a token larger,
    before the next one."""
    f = write(tmp_path, turns_session([[4500, 20000, 20000] + [100] * 100],
                                      start=5000).text())
    assert [r.usage.prompt for r in read_session([str(f)]).requests][:3] == \
        [5000, 25000, 45000]
    r = run_main("replay", "--json", "--policy", policy, "--max-context", str(window),
                 str(f))
    assert r.status == 0, r.err
    points = json.loads(r.out)["sessions"][0]["policies"][0]["compaction_points"]
    assert [p["request"] for p in points][:1] == [at]


@pytest.mark.parametrize("kind", ["claude-code", "codex"])
def test_dp_holds_the_automatic_compaction_back_exactly_to_the_margin(kind, tmp_path,
                                                                      monkeypatch):
    """With a decision that never pays, dp lets the agent's own compaction wait — up to
    the last 10 % of the window, where it compacts, forced: at a prompt exactly there, and
    not at one a token short of it."""
    monkeypatch.setattr(DpPolicy, "_decide", lambda self, replay, request: None)
    turns = [[4500, 4500, 4500, 4500]]
    built = turns_session(turns, start=36000) if kind == "claude-code" else \
        codex_turns(turns, start=36000)
    path = write(tmp_path, built.text())
    setting = setting_of(path, 50000)
    assert setting.hold_limit == 45000 == setting.session.requests[2].usage.prompt
    assert setting.auto is not None and setting.auto <= 45000
    assert [(w, j, forced) for w, j, _, forced in watch(setting, "dp").compacted][:1] == \
        [(REQUEST, 2, True)]
    later = watch(setting_of(path, 50002), "dp").compacted        # the margin at 45001.8
    assert [(w, j) for w, j, _, _ in later][:1] == [(REQUEST, 3)]


# --- bash-agent: before any request -----------------------------------------------------------

@pytest.mark.parametrize("spec", ["dp", "threshold:60"])
def test_bash_agent_compacts_before_any_request(spec):
    """bash-agent asks before every request, so policies compact there, in the middle of
    the tool loop too; it has no turn ends to wait for and no automatic threshold."""
    setting = setting_of(INPUTS / "syn_150.jsonl", 20000, whole=False,
                         model=get_model("v3.0.7"))
    assert setting.points == REQUEST and setting.auto is None
    watched = watch(setting, spec)
    assert {where for where, _, _ in watched.asked} == {REQUEST}
    assert len(watched.asked) == len(setting.session.requests)
    kinds, requests = setting.session.kinds, setting.session.requests
    after_tool = [j for _, j, _, _ in watched.compacted if kinds[requests[j].seen - 1] == TOOL]
    assert after_tool, "some compaction falls inside the tool loop"


def test_compact_at_request_lets_every_policy_compact_inside_a_turn(tmp_path):
    """``replay --compact-at request`` on a Claude Code session: the points are requests,
    and a threshold crossed inside the tool loop compacts there, not at the turn end."""
    from .conftest import ROOT
    example = str(ROOT / "examples" / "claude-code.jsonl")

    def run(*args: str) -> dict:
        r = run_main("replay", "--json", "--policy", "threshold:40", *args, example)
        assert r.status == 0, r.err
        return json.loads(r.out)["sessions"][0]
    turns, requests = run(), run("--compact-at", "request")
    assert (turns["points"], requests["points"]) == (TURN, REQUEST)
    at = {s["points"]: [c["request"] for c in s["policies"][0]["compaction_points"]]
          for s in (turns, requests)}
    assert at[REQUEST] and at[REQUEST] != at[TURN]
    bad = run_main("replay", "--compact-at", "tuesday", example)
    assert bad.status == 2 and bad.err == ("compact-dp: error: --compact-at: 'tuesday' is "
                                           "not one of request, turn\n")


def test_with_compact_at_request_the_best_schedule_compacts_and_costs_no_more_than_dp():
    """Where every request is a point, so is every request for hindsight: on the example
    session its schedule compacts, and no other policy's schedule of requests is cheaper
    in dollars than hindsight:free's (dp's is one it could have chosen)."""
    from .conftest import ROOT
    r = run_main("replay", "--json", "--compact-at", "request", "--policy", "dp",
                 "--policy", "hindsight:free", "--policy", "hindsight",
                 str(ROOT / "examples" / "claude-code.jsonl"))
    assert r.status == 0, r.err
    dp, free, best = json.loads(r.out)["sessions"][0]["policies"]
    assert dp["compactions"] and free["compactions"] and best["compactions"]
    assert free["comparable_cost"] <= min(dp["comparable_cost"], best["comparable_cost"])
