"""What a session's decision is asked with (question.py), on hand-made Claude Code
sessions: which turn the end chance is about, what a session's compactions left, and the
history a file that starts part-way does not show."""

from __future__ import annotations

import pytest

from compact_dp.calibration.profile import load_profile
from compact_dp.core.horizon import end_chance
from compact_dp.question import Options, decide_session, session_question
from compact_dp.sessions.read import read_session
from compact_dp.sessions.session import USER

from .conftest import write
from .session_fixtures import ClaudeSession, claude_turns, text

ASKED = Options(environ={}, now=0.0)          # the built-in profile, a fixed moment


def read(tmp_path, built: ClaudeSession, name: str = "session.jsonl"):
    return read_session([str(write(tmp_path, built.text(), name))])


def test_the_end_chance_is_about_the_turn_arriving(tmp_path):
    """After a reply the turn arriving is the next one; with a human prompt still
    unanswered at the end of the file it is that prompt's own.  So the prompt arriving
    does not change the chance: both moments ask about turn 3."""
    built = claude_turns([2, 1])
    answered = read(tmp_path, built, "answered.jsonl")
    built.user("one more thing")
    waiting = read(tmp_path, built, "waiting.jsonl")
    assert (answered.user_turns, waiting.user_turns, waiting.last_kind) == (2, 3, USER)
    assert answered.request_count == waiting.request_count == 3
    b0, bt, bj = load_profile({}).end
    for session in (answered, waiting):
        chance = session_question(session, ASKED).ask.end_chance
        assert chance == end_chance(3, 3, b0, bt, bj), session.path


def compacted_three_times(lefts: tuple[int, ...], reads: tuple[int, ...]) -> ClaudeSession:
    """A session compacted once per ``lefts``: the first request after each compaction
    sends that many tokens, ``reads`` of them read from the cache."""
    s = ClaudeSession()
    s.user("start")
    s.response([text("ok")], (1, 20000, 0))
    for k, (left, read) in enumerate(zip(lefts, reads)):
        s.user(f"turn {k}")
        s.response([text("ok")], (1, 2000, 20000))
        s.boundary()
        s.summary("summary " * (10 + 5 * k))
        s.user(f"after {k}")
        s.response([text("ok")], (1, left - read - 1, read))
        s.user(f"more {k}")
        s.response([text("ok")], (1, 500, left))
    return s


def test_what_compactions_left_is_the_median_of_the_sessions_own(tmp_path):
    """after_tokens and after_cached are the middle of what the session's compactions
    left and of what their first requests read (not the smallest, nor the last); S is the
    last summary."""
    session = read(tmp_path, compacted_three_times((30000, 24000, 18000), (9000, 4000, 6000)))
    lefts = [a.left for a in session.aftermath]
    reads = [a.first_read for a in session.aftermath]
    assert len(set(lefts)) == 3 and sorted(lefts) != lefts and reads == [9000, 4000, 6000]
    values = session_question(session, ASKED).ask.values
    assert values["after_tokens"].num == sorted(lefts)[1] != min(lefts)
    assert values["after_cached"].num == 6000
    assert values["S"].num == session.aftermath[-1].summary


def part_way() -> ClaudeSession:
    """A file whose first request is 120,000 tokens, nearly all read from a cache, with a
    few hundred tokens of messages: it starts part-way into a session."""
    s = ClaudeSession()
    s.user("go on with the plan")
    s.response([text("On it.")], (1, 1000, 119000))
    for turn in range(2):
        s.user(f"next step {turn}")
        s.response([text("Done.")], (1, 2000, 120000 + 2000 * turn))
    return s


def test_history_hidden_before_the_file_counts_until_a_compaction_replaces_it(tmp_path):
    """The history a part-way file does not show is in its context — T holds it, beside
    the messages — until a compaction replaces it with the rest: after one, T is the
    messages of the new context alone."""
    built = part_way()
    before = read(tmp_path, built, "before.jsonl")
    got, question = decide_session(before, ASKED)
    hidden = question.hidden
    assert hidden > 50000 and before.live_start == 0
    assert got.decision.total_tokens == pytest.approx(before.live_tokens + hidden, abs=1)
    built.boundary()
    built.summary()
    built.user("after")
    built.response([text("Done.")], (1, 30000, 0))
    built.user("after 2")
    built.response([text("Done.")], (1, 1000, 30001))
    after = read(tmp_path, built, "after.jsonl")
    got, question = decide_session(after, ASKED)
    assert question.hidden == hidden and after.live_start > 0
    assert got.decision.total_tokens == after.live_tokens
