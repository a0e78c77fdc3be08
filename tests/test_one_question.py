"""Replay's ``dp`` asks what the decision asks (issue 28.1): at every turn end of a replay
that follows the recording (its compactions taken where they happened, so the context is
the recorded one), the decision replay's dp makes has the inputs ``compact-dp --json``
finds on the transcript cut there — the same summary, what compactions left, the fixed
prefix, the forecast, prices and cache — and so the same answer.  The one input that
may differ is the context's size T: replay sizes every message from the whole
recording's usage, the cut transcript from the usage recorded by then."""

from __future__ import annotations

import pytest

from compact_dp.asking import PolicyAsk
from compact_dp.core.models import get_model
from compact_dp.question import Options, decide_session
from compact_dp.replaying.backtest import moments
from compact_dp.replaying.policies import Compact, Policy, ask_decision
from compact_dp.replaying.run import setting_for
from compact_dp.replaying.simulate import Replay
from compact_dp.sessions.read import read_session

from .conftest import ROOT, corpus

SAME = ("E", "L", "R", "r_t", "Q", "M", "V", "S", "p_input", "p_cache", "p_write", "p_out",
        "cold", "X", "U")


class Following(Policy):
    """Takes every recorded compaction and none of its own; notes dp's answer at each
    turn end."""

    name = "following"

    def __init__(self) -> None:
        self.answers: dict = {}

    def at_turn_end(self, replay, request):
        self.answers[replay.index] = ask_decision(
            replay, request, PolicyAsk("auto", replay.last_prompt), turn_end=True).decision
        return None

    def at_recorded(self, replay, request):
        return Compact(0)


def compare(path: str) -> int:
    session = read_session([path])
    setting = setting_for(session, {}, get_model("cache-clock"), True, 0, None, None, {})
    follow = Following()
    Replay(setting, follow, setting.events).run()
    checked = 0
    for m in moments(path, session.format):
        if m.kind != "turn" or m.index not in follow.answers:
            continue
        cut, _ = decide_session(m.session, Options(environ={}, now=m.time))
        said, replayed = cut.decision.derived, follow.answers[m.index].derived
        assert said is not None and replayed is not None
        # replay judges the cache when the next request is sent, the decision when the
        # human message came: the same moment, but where a rollout resumed hours later
        sent = session.requests[m.index].sent
        same = [k for k in SAME if k != "cold" or m.time is None or sent is None or
                abs(sent - m.time) < 60]
        assert {k: getattr(said, k) for k in same} == \
            {k: getattr(replayed, k) for k in same}, (path, m.index)
        assert replayed.T == pytest.approx(said.T, rel=0.1, abs=4000)
        checked += 1
    return checked


@pytest.mark.parametrize("name", ["claude-code.jsonl", "codex.jsonl"])
def test_replays_dp_asks_what_the_decision_asks_on_the_examples(name):
    assert compare(str(ROOT / "examples" / name)) >= 2


def test_replays_dp_asks_what_the_decision_asks_on_real_sessions():
    folder = corpus()
    files = sorted((folder / "claude-code").rglob("*.jsonl"))[::40] + \
        sorted((folder / "codex").rglob("*.jsonl"))[::8]
    checked = 0
    for f in files:
        if "subagents" in f.parts or f.name.startswith("agent-"):
            continue
        try:
            checked += compare(str(f))
        except Exception as e:          # not a session with usage: not this test's
            if "Format" not in type(e).__name__ and "NotASession" not in type(e).__name__:
                raise
    assert checked > 20
