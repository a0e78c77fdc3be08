"""Replay's ``dp`` asks what the decision asks (issue 28.1): at every turn end of a replay
that follows the recording (its compactions taken where they happened, so the context is
the recorded one), the decision replay's dp makes has the inputs ``compact-dp --json``
finds on the transcript cut there — the same summary, what compactions left, the fixed
prefix, the forecast, prices and cache, the context's size T — and so the same answer.
T is the same because replay's dp counts the messages no request has seen yet at what
the decision could know of them then (sizing.Sizer.estimates), not at the sizes the
next request's usage gave them."""

from __future__ import annotations

import pytest

from compact_dp.asking import PolicyAsk
from compact_dp.core.models import get_model
from compact_dp.errors import CompactDpError
from compact_dp.question import Options, decide_session
from compact_dp.replaying.backtest import moments
from compact_dp.replaying.policies import Compact, Policy, ask_decision
from compact_dp.replaying.run import setting_for
from compact_dp.replaying.simulate import Replay
from compact_dp.sessions.read import read_session
from compact_dp.sessions.session import USER
from compact_dp.views.record import to_dict

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

    def at_recorded(self, replay, request, boundary, trigger):
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
        assert replayed.T == said.T, (path, m.index)
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


def turn_end_cut(lines: list[bytes], requests: int) -> bytes:
    """The transcript cut where the agent stood at the turn end before request
    ``requests``: the longest prefix with that many requests read and no human prompt
    after the last of them (nor any line that counts one: Codex writes a prompt twice),
    found by reading prefixes, as the command would."""
    import tempfile

    def seen(k: int) -> tuple[int, int, str | None]:
        with tempfile.NamedTemporaryFile(suffix=".jsonl") as f:
            f.write(b"".join(lines[:k]))
            f.flush()
            try:
                s = read_session([f.name])
            except CompactDpError:              # too little of it to be a session yet
                return 0, 0, None
            return len(s.requests), s.user_turns, s.last_kind

    def last(fits) -> int:                  # the longest prefix that fits
        lo, hi = 0, len(lines)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
        return lo

    first = last(lambda k: seen(k)[0] < requests) + 1   # request `requests` read
    k, turns = last(lambda k: seen(k)[0] <= requests), seen(first)[1]
    while k > first and seen(k)[1] > turns:   # back to before the next turn's prompts
        k -= 1
    while k > first and seen(k)[2] == USER:   # ... the prompt itself, and any line more
        k -= 1
    return b"".join(lines[:k])


def close(a: object, b: object, rel: float = 1e-9) -> bool:
    """The same structure, strings and flags equal, numbers equal but for rounding."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], rel) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y, rel) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or \
            not isinstance(b, (int, float)):
        return a == b
    return a == pytest.approx(b, rel=rel, abs=1e-9)


def compare_with_the_command(path: str, tmp_path, limit: int = 6) -> int:
    """At each turn end replay's dp weighed (at most ``limit``), ``compact-dp --json`` on
    the transcript cut there, run as a user runs it, decides what replay's dp decided."""
    import json as jsonlib

    from .conftest import clean_env, run_cli
    session = read_session([path])
    setting = setting_for(session, {}, get_model("cache-clock"), True, 0, None, None, {})
    follow = Following()
    Replay(setting, follow, setting.events).run()
    lines = open(path, "rb").read().splitlines(keepends=True)
    checked = 0
    for m in moments(path, session.format):
        if m.kind != "turn" or m.index not in follow.answers or m.time is None:
            continue
        cut = tmp_path / f"cut-{m.index}.jsonl"
        cut.write_bytes(turn_end_cut(lines, m.index))
        r = run_cli("--json", "--now", f"{m.time:.3f}", str(cut), env=clean_env())
        said = jsonlib.loads(r.stdout)
        assert said["session"]["requests"] == m.index, (path, m.index)
        replayed = jsonlib.loads(jsonlib.dumps(to_dict(follow.answers[m.index])))
        # the same record, field for field: the answer (compact or not, k, the wait, the
        # end chance, the uncertainty hold, the terms, the growth), each number the
        # command's — but
        # what only the views say (the reason in words, which names T; the forecast's
        # source in words; the pause and the compaction's seconds, which replay's dp does
        # not ask for: they change no answer; nor the wait "until the cache goes cold",
        # the *when* of a "not yet" already given, which the cache clock's seconds set)
        for record in (replayed, said):
            for views in ("reason", "pause", "compaction_seconds"):
                record.pop(views, None)
            if (record.get("wait") or {}).get("until") == "before_cold":
                record["wait"] = None
            record["derived"].pop("horizon_source")
        assert close(replayed, {k: said[k] for k in replayed}), (path, m.index)
        checked += 1
        if checked == limit:
            break
    return checked


@pytest.mark.parametrize("name", ["claude-code.jsonl", "codex.jsonl"])
def test_replays_dp_decides_what_the_command_decides_on_the_cut_example(name, tmp_path):
    assert compare_with_the_command(str(ROOT / "examples" / name), tmp_path) >= 2


def test_replays_dp_decides_what_the_command_decides_on_cut_real_sessions(tmp_path):
    """The same on real sessions of other projects, read in place: a few Claude Code
    sessions and Codex rollouts of every size the corpus has, a few turn ends each."""
    folder = corpus()
    checked = 0
    for fmt, step in (("claude-code", 60), ("codex", 12)):
        files = [f for f in sorted((folder / fmt).rglob("*.jsonl"))
                 if "subagents" not in f.parts and not f.name.startswith("agent-")
                 and f.stat().st_size < 2_000_000][::step]
        for f in files:
            try:
                checked += compare_with_the_command(str(f), tmp_path, limit=3)
            except Exception as e:      # not a session with usage: not this test's
                if "Format" not in type(e).__name__ and "NotASession" not in type(e).__name__:
                    raise
    assert checked > 10


def test_on_the_recorded_context_after_a_compaction_v_is_that_contexts_own(tmp_path):
    """After a recorded compaction whose context starts on a larger fixed prefix than the
    first one (the agent re-injected files, a longer system prompt), replay's dp asks with
    that context's V and its messages, as the command does on the transcript cut there —
    the prefixes' difference is not counted in T on top."""
    from .session_fixtures import ClaudeSession, text
    s = ClaudeSession()
    s.user("fix it")
    s.response([text("Looking.")], (3, 10000, 0))
    for turn in range(3):
        s.user(f"turn {turn} " * 40)
        s.response([text("ok " * 300)], (3, 1500, 10000 + 1500 * turn))
    s.boundary("manual", 15000)
    s.summary()
    s.response([text("Continuing.")], (3, 16000, 0))
    for turn in range(3):
        s.user(f"later {turn} " * 40)
        s.response([text("ok " * 300)], (3, 1500, 16000 + 1500 * turn))
    path = tmp_path / "session.jsonl"
    path.write_bytes(s.text())
    session = read_session([str(path)])
    assert session.segment_prefixes[1] > session.segment_prefixes[0] + 3000
    assert compare_with_the_command(str(path), tmp_path, limit=10) >= 5


@pytest.mark.parametrize("name", ["claude-code.jsonl", "codex.jsonl"])
def test_the_asker_asked_at_the_transcripts_end_is_the_commands_question(name):
    """The Asker replay's dp asks (Question.asker) is the command's question: asked with
    the moment the transcript's end shows, the growth rebuilt by replay's rule included,
    it gives the command's R, end chance and schedule outlook. A replay that built its
    own forecast, end chance or outlook (a second builder) would part from it here."""
    from compact_dp.question import arriving_turns, growth_of, session_question
    session = read_session([str(ROOT / "examples" / name)])
    question = session_question(session, Options(now=2e9))
    mine = question.ask
    asker = question.asker()
    values = mine.values
    again = asker.ask(values, mine.policy, p_write=mine.p_write, cold=mine.cold,
                      requests=values["total_requests"].num, turns=arriving_turns(session),
                      growth=growth_of(session, values))
    assert mine.horizon is not None and again.horizon is not None
    assert again.horizon[0] == mine.horizon[0]
    assert again.end_chance == mine.end_chance is not None
    assert mine.outlook is not None and again.outlook is not None
    for field in ("growth", "auto", "hold", "retention", "log_error", "requests", "exponent"):
        assert getattr(again.outlook, field) == getattr(mine.outlook, field), field
    assert again.whole == mine.whole and again.model is mine.model


def test_replays_setting_keeps_what_billing_needs_and_asks_through_the_asker():
    """The decision's own state (the forecast, the end chance, the outlook, what was known
    of compactions) lives in the Asker, not in the setting beside it."""
    session = read_session([str(ROOT / "examples" / "claude-code.jsonl")])
    setting = setting_for(session, {}, get_model("cache-clock"), True, 0, None, None, {})
    for name in ("forecast", "ender", "outlook", "known", "known_at"):
        assert not hasattr(setting, name), name
    assert setting.asker.forecast is not None and setting.asker.outlook is not None


@pytest.mark.parametrize("name", ["claude-code.jsonl", "codex.jsonl"])
def test_the_commands_r_and_end_chance_are_the_profiles_at_the_transcripts_end(name):
    """What `--json` says of R and the end chance, by the rules written out: R =
    level × (j + 1)^exponent at j, the requests the transcript holds, and the end chance
    σ(b0 + bt ln t + bj ln(j + 1)) with t the human turns, the arriving one included. One
    request or one turn off (in the builder both paths share) fails here."""
    import json
    import math
    import subprocess
    import sys

    from compact_dp.calibration.profile import load_profile
    from compact_dp.question import arriving_turns
    path = ROOT / "examples" / name
    session = read_session([str(path)])
    out = subprocess.run([sys.executable, "-m", "compact_dp", "--json", str(path)],
                         capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin", "COMPACT_DP_PROFILE": ""})
    doc = json.loads(out.stdout)
    profile = load_profile({})
    level, exponent = profile.agent(session.format).level, profile.exponent
    j = len(session.requests)
    assert doc["session"]["requests"] == j
    assert doc["derived"]["R"] == pytest.approx(level * (j + 1) ** exponent, rel=1e-12)
    b0, bt, bj = profile.end
    z = b0 + bt * math.log(arriving_turns(session)) + bj * math.log(j + 1)
    assert doc["ending"]["chance"] == pytest.approx(1 / (1 + math.exp(-z)), rel=1e-12)
