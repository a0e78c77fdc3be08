"""The Claude Code reader on the shapes real sessions have (docs/formats.md, claude-code):
a compaction boundary in every position a file can put one — a sub-agent's own among them —
1-hour cache writes, a cache break, failed and interrupted prompts, copies of responses,
and a session's side files in its ``subagents/`` folder."""

from __future__ import annotations

import json

import pytest

from compact_dp.sessions.read import read_session
from compact_dp.sessions.session import ASSISTANT, CONTEXT, TOOL, USER
from compact_dp.sessions.timefmt import parse_time

from .conftest import run_main, write
from .session_fixtures import (
    T0,
    ClaudeSession,
    claude_with_side_files,
    dumps,
    stamp,
    text,
    tool_use,
)

START = parse_time(T0)


def read(tmp_path, built: ClaudeSession):
    return read_session([str(write(tmp_path, built.text()))])


def first_turn() -> ClaudeSession:
    """A prompt, a response that runs a tool, its result, the reply."""
    s = ClaudeSession()
    s.user("fix the bug")
    s.response([text("Looking."), tool_use("t1", "cat a.py")], (3, 10000, 0))
    s.tool_result("t1", "print(1)\n" * 20)
    s.response([text("Fixed.")], (1, 300, 10000))
    return s


def next_turn(s: ClaudeSession) -> None:
    s.user("next step please")
    s.response([text("Done.")], (3, 6000, 0))


# --- a boundary in every position ------------------------------------------------------------

def test_a_boundary_that_opens_the_file_starts_its_only_context(tmp_path):
    s = ClaudeSession()
    s.boundary()
    s.summary()
    s.user("fix the bug")
    s.response([text("Looking.")], (3, 10000, 0))
    got = read(tmp_path, s)
    assert (got.compaction_count, got.live_start) == (1, 0)
    assert got.kinds == [CONTEXT, USER, ASSISTANT]
    assert got.user_turns == 1 and [r.segment for r in got.requests] == [1]
    assert got.summary_tokens == got.tokens[0]
    assert got.prefix == 10003 - got.tokens[0] - got.tokens[1]


def test_a_boundary_between_a_prompt_and_its_response_leaves_the_prompt_behind(tmp_path):
    s = first_turn()
    s.user("next step please")
    s.boundary()
    s.response([text("Done.")], (3, 6000, 0))
    got = read(tmp_path, s)
    assert got.live_start == 5 and got.kinds[5:] == [ASSISTANT]
    assert got.user_turns == 2 and got.live_user_count == 0
    assert [r.segment for r in got.requests] == [0, 0, 1]
    assert got.prefix == 6003 and got.summary_tokens is None


def test_a_tool_result_after_a_boundary_is_a_tool_result_and_the_summary_still_context(
        tmp_path):
    s = ClaudeSession()
    s.user("fix the bug")
    s.response([tool_use("t1", "cat a.py")], (3, 10000, 0))
    s.boundary()
    s.tool_result("t1", "x" * 100)
    s.summary()
    s.user("and then?")
    s.response([text("Fixed.")], (3, 6000, 0))
    got = read(tmp_path, s)
    assert got.kinds[got.live_start:] == [TOOL, CONTEXT, USER, ASSISTANT]
    assert got.user_turns == 2 and got.live_user_count == 1


def test_a_boundary_right_after_the_last_reply_leaves_an_empty_context(tmp_path):
    s = first_turn()
    s.boundary()
    got = read(tmp_path, s)
    assert (got.compaction_count, got.live_start, got.live_messages) == (1, 4, 0)
    assert got.live_tokens == 0 and got.summary_tokens is None
    assert got.prefix == got.segment_prefixes[0]          # the last V known
    obj = json.loads(run_main("--json", str(tmp_path / "session.jsonl")).out)
    assert (obj["decision"], obj["lines"], obj["total_tokens"]) == ("skip", 0, 0)
    assert obj["reason"] == "skip: the conversation is empty."
    assert obj["session"]["messages"] == 0 and obj["session"]["compactions"] == 1


def test_the_summary_after_a_boundary_is_context_and_the_next_prompt_a_turn(tmp_path):
    s = first_turn()
    s.boundary()
    s.summary()
    s.response([text("Continuing.")], (3, 6000, 0))
    next_turn(s)
    got = read(tmp_path, s)
    assert got.kinds[got.live_start:] == [CONTEXT, ASSISTANT, USER, ASSISTANT]
    assert got.user_turns == 2 and got.live_user_count == 1
    assert got.summary_tokens == got.tokens[got.live_start]
    assert got.prefix == 6003 - got.summary_tokens


def test_a_boundary_followed_by_a_response_then_a_prompt_makes_that_prompt_a_turn(tmp_path):
    """No summary line: the response ends the boundary's hold, so the next user line is
    the human's, not a summary."""
    s = first_turn()
    s.boundary()
    s.response([text("Continuing.")], (3, 6000, 0))
    next_turn(s)
    got = read(tmp_path, s)
    assert got.kinds[got.live_start:] == [ASSISTANT, USER, ASSISTANT]
    assert got.user_turns == 2 and got.live_user_count == 1
    assert got.summary_tokens is None and got.prefix == 6003


def test_a_line_flagged_as_a_summary_is_never_a_turn_and_the_first_request_after_is_kept(
        tmp_path):
    """An older version's flag counts wherever the line is; what the compaction left is
    measured on the first request after it, not a later one."""
    s = first_turn()
    s.boundary()
    s.response([text("Continuing.")], (3, 6000, 0))
    s.user("Summary of the conversation so far: …", turn=False, isCompactSummary=True)
    next_turn(s)
    s.user("and the last step")
    s.response([text("Done too.")], (1, 50, 6000))
    got = read(tmp_path, s)
    assert got.kinds[got.live_start:] == [ASSISTANT, CONTEXT, USER, ASSISTANT, USER,
                                          ASSISTANT]
    assert got.user_turns == 3
    first = got.aftermath[0]
    assert (first.left, first.first_prompt, first.first_read) == (6003, 6003, 0)


def test_two_boundaries_in_a_row_are_two_compactions_and_one_new_context(tmp_path):
    s = first_turn()
    s.boundary()
    s.boundary()
    s.summary()
    next_turn(s)
    got = read(tmp_path, s)
    assert got.compaction_count == 2 and got.live_start == 4
    assert got.kinds[4:] == [CONTEXT, USER, ASSISTANT]
    assert [r.segment for r in got.requests] == [0, 0, 2]
    assert got.aftermath[0].left is None and got.aftermath[1].first_prompt == 6003


@pytest.mark.parametrize("where", ["after the prompt", "between responses", "at the end"])
def test_a_sub_agents_boundary_is_not_the_sessions_compaction(where, tmp_path):
    s = ClaudeSession()
    s.user("fix the bug")
    if where == "after the prompt":
        s.boundary(sidechain=True)
    s.response([text("Looking.")], (3, 10000, 0))
    if where == "between responses":
        s.response([text("side")], (3, 500, 0), sidechain=True)
        s.boundary(sidechain=True)
    s.user("and now?")
    s.response([text("Now this.")], (1, 40, 10000))
    if where == "at the end":
        s.boundary(sidechain=True)
    got = read(tmp_path, s)
    assert got.compaction_count == 0 and got.live_start == 0
    assert got.kinds == [USER, ASSISTANT, USER, ASSISTANT] and got.user_turns == 2
    assert [r.usage.prompt for r in got.requests] == [10003, 10041]


# --- usage, the cache's clock and what is not a request --------------------------------------

def test_writes_are_split_into_5_minute_and_1_hour_and_the_ttl_is_the_larger(tmp_path):
    s = ClaudeSession()
    s.user("hi")
    s.response([text("a")], (3, 1000, 0), ttl="1h")
    s.user("more")
    s.response([text("b")], (3, 700, 1000))                    # 5m writes last
    got = read(tmp_path, s)
    u = [r.usage for r in got.requests]
    assert (u[0].write_5m, u[0].write_1h, u[1].write_5m, u[1].write_1h) == (0, 1000, 700, 0)
    assert got.recorded_ttl == "5m"
    s.user("again")
    s.response([text("c")], (3, 900, 1700), ttl="1h")           # 1h writes last
    s.user("a read only")
    s.response([text("d")], (3, 0, 2600))                      # no write: the TTL stays
    assert read(tmp_path, s).recorded_ttl == "1h"


def test_a_split_that_names_more_1_hour_writes_than_were_written_is_cut_to_them(tmp_path):
    s = ClaudeSession()
    s.user("hi")
    s.response([text("a")], (3, 1000, 0))
    lines = [json.loads(x) for x in s.lines]
    lines[-1]["message"]["usage"]["cache_creation"] = {"ephemeral_5m_input_tokens": 0,
                                                       "ephemeral_1h_input_tokens": 5000}
    f = write(tmp_path, "\n".join(map(dumps, lines)) + "\n")
    u = read_session([str(f)]).requests[0].usage
    assert (u.write_5m, u.write_1h) == (0, 1000)


def test_equal_5_minute_and_1_hour_writes_keep_the_5_minute_ttl(tmp_path):
    s = ClaudeSession()
    s.user("hi")
    s.response([text("a")], (3, 1000, 0))
    lines = [json.loads(x) for x in s.lines]
    usage = lines[-1]["message"]["usage"]
    usage["cache_creation_input_tokens"] = 1000
    usage["cache_creation"] = {"ephemeral_5m_input_tokens": 500,
                               "ephemeral_1h_input_tokens": 500}
    f = write(tmp_path, "\n".join(map(dumps, lines)) + "\n")
    assert read_session([str(f)]).recorded_ttl == "5m"


def test_a_request_is_sent_at_the_last_main_line_before_it_and_ends_at_its_last_line(
        tmp_path):
    """The cache's clock: a request was sent when the line before its response was written
    (a sub-agent's lines do not count), and its response ended at its last line."""
    s = ClaudeSession()
    s.user("hi")                                            # t = 2
    s.response([text("a"), text("b"), text("c")], (3, 1000, 0), gap=5)   # 7, (9), 11, 13
    s.user("more")                                          # t = 15
    s.user("a sub-agent's prompt", turn=False, isSidechain=True)     # t = 17
    s.response([text("side")], (3, 10, 0), sidechain=True)  # t = 19, its response
    s.response([text("d")], (3, 10, 1000), gap=7)           # t = 26
    got = read(tmp_path, s)
    first, second = got.requests
    assert (first.sent, first.time, first.done) == (START + 2, START + 7, START + 13)
    assert (second.sent, second.time, second.done) == (START + 15, START + 26, START + 26)
    assert got.last_time("claude-opus-4-6") == START + 26


def test_the_cache_clock_runs_from_the_end_of_the_models_last_response(tmp_path):
    s = ClaudeSession()
    s.user("hi")
    s.response([text("a"), text("b")], (3, 1000, 0))        # ends at t = 8
    f = write(tmp_path, s.text())
    cache = json.loads(run_main("--json", "--now", str(START + 108), str(f)).out)[
        "session"]["cache"]
    assert (cache["last_request_at"], cache["idle_seconds"]) == (START + 8, 100.0)


def test_a_failed_or_interrupted_prompt_touched_the_cache_once(tmp_path):
    s = ClaudeSession()
    s.user("hi")                                             # t = 2
    s.response([text("a")], (3, 1000, 0))
    s.user("please go on")                                   # t = 6, sent …
    s.api_error()                                            # … and failed
    s.api_error()                                            # its retry: the same prompt
    s.user("try again")                                      # t = 12
    s.interrupt()                                            # Esc before any response
    s.user("once more")                                      # t = 16
    s.response([tool_use("t1", "sleep 100")], (3, 10, 1000))
    s.user("[Request interrupted by user for tool use]", turn=False)   # a tool stopped:
    s.user("go on")                                          # its request was answered
    s.response([text("b")], (3, 10, 1010))
    got = read(tmp_path, s)
    assert got.touches == [(1, START + 6), (1, START + 12)]
    assert got.request_count == 3


def test_synthetic_errors_and_copies_of_earlier_responses_are_not_requests(tmp_path):
    s = ClaudeSession()
    s.user("hi")
    s.response([text("a")], (3, 1000, 0))
    first = s.lines[-1]
    s.synthetic()
    s.user("more")
    s.response([text("b")], (3, 10, 1000))
    s.lines.append(first)                                    # a resumed session's copy
    got = read(tmp_path, s)
    assert [r.usage.prompt for r in got.requests] == [1003, 1013]
    assert got.kinds == [USER, ASSISTANT, ASSISTANT, USER, ASSISTANT]


@pytest.mark.parametrize("between, counted", [(1023, False), (1024, True)])
def test_a_copy_counts_once_when_it_repeats_one_of_the_1024_responses_before_it(
        between, counted, tmp_path):
    """A resumed session re-sends an old response: with ``between`` other responses since
    it, the copy repeats one of the 1,024 before it (1,023 between) and is not a request
    again; one further back is past the window a reader remembers, and counts
    (docs/formats.md, bad input)."""
    s = ClaudeSession()
    s.user("hi")
    s.response([text("a")], (3, 1000, 0))
    first = s.lines[-1]
    for i in range(between):
        s.response([text(f"r{i}")], (3, 1, 1000 + i))
    s.lines.append(first)
    got = read(tmp_path, s)
    assert got.request_count == 1 + between + counted
    assert json.loads(run_main("--json", str(write(tmp_path, s.text(), "cli.jsonl"))).out)[
        "session"]["requests"] == 1 + between + counted


# --- a session with its side files -----------------------------------------------------------

def test_the_side_files_are_not_the_main_context(tmp_path):
    path, want = claude_with_side_files(tmp_path)
    got = read_session([str(path)])
    assert [r.usage.prompt for r in got.requests] == [r["prompt"] for r in want["main"]]
    assert got.compaction_count == 1 and got.user_turns == want["turns"] == 4
    assert got.recorded_ttl == "1h"
    assert got.requests[3].usage.numbers() == [1, 0, 21400, 0, 50]    # the cache break


def test_a_1_hour_session_is_still_warm_after_20_minutes_and_writes_at_the_1_hour_price(
        tmp_path):
    path, _ = claude_with_side_files(tmp_path)
    last = read_session([str(path)]).last_time(None)
    obj = json.loads(run_main("--json", "--now", str(last + 1200), str(path)).out)
    cache = obj["session"]["cache"]
    assert {k: cache[k] for k in ("state", "ttl", "ttl_seconds", "ttl_source", "p_write",
                                  "p_write_source", "idle_seconds", "seconds_left")} == {
        "state": "warm", "ttl": "1h", "ttl_seconds": 3600.0,
        "ttl_source": "the session's cache writes", "p_write": 10.0,
        "p_write_source": "price table, 1h writes", "idle_seconds": 1200.0,
        "seconds_left": 2400.0}


def opus_cost(uncached: int, w5m: int, w1h: int, read: int) -> float:
    return (uncached * 5 + w5m * 6.25 + w1h * 10 + read * 0.5) / 1e6


def test_the_recorded_bill_counts_the_compaction_request_and_the_sub_agent_apart(tmp_path):
    path, want = claude_with_side_files(tmp_path)
    r = run_main("replay", "--json", "--policy", "recorded", str(path))
    assert r.status == 0, r.err
    recorded = json.loads(r.out)["sessions"][0]["recorded"]
    main = [r.usage.numbers()[:4] for r in read_session([str(path)]).requests]
    rows = main + [list(want["compaction_usage"])]
    assert recorded["requests"] == len(main) + 1 == 8
    assert recorded["cache_write_1h_tokens"] == sum(x[2] for x in rows) == 54740
    assert recorded["cache_write_5m_tokens"] == sum(x[1] for x in rows) == 1500
    assert recorded["input_cost"] == pytest.approx(sum(opus_cost(*x) for x in rows),
                                                   rel=1e-12)
    agents = recorded["subagents"]
    assert (agents["files"], agents["requests"], agents["models"]) == (
        1, 2, ["claude-sonnet-4-5"])
    sonnet = sum((u * 3 + w * 3.75 + rd * 0.3) / 1e6 for u, w, _, rd in want["agent_usage"])
    assert agents["input_cost"] == pytest.approx(sonnet, rel=1e-12)
    assert recorded["total_cost"] == pytest.approx(
        recorded["input_cost"] + recorded["output_cost"] + agents["input_cost"] +
        agents["output_cost"], rel=1e-12)


@pytest.mark.parametrize("spaced", [False, True])
def test_an_older_sub_agent_file_beside_the_session_is_its_when_it_names_the_session(
        spaced, tmp_path):
    """From older versions of Claude Code, ``agent-*.jsonl`` beside the session carry its
    id: those are its sub-agents, whether their JSON is compact or has spaces after the
    colons (as any Claude Code line may: docs/formats.md)."""
    path, _ = claude_with_side_files(tmp_path)
    agent = ClaudeSession(session_id=read_session([str(path)]).session_id, agent="aold")
    agent.user("look around")
    agent.response([text("ok")], (3, 2000, 0))
    lines = [json.dumps(json.loads(x)) if spaced else x for x in agent.lines]
    assert ('"sessionId": "' in lines[0]) == spaced
    (tmp_path / "agent-aold.jsonl").write_text("\n".join(lines) + "\n")
    stranger = ClaudeSession(session_id="another-session", agent="aelse")
    stranger.user("x")
    stranger.response([text("y")], (3, 2000, 0))
    (tmp_path / "agent-aelse.jsonl").write_bytes(stranger.text())
    recorded = json.loads(run_main("replay", "--json", "--policy", "recorded",
                                   str(path)).out)["sessions"][0]["recorded"]
    assert (recorded["subagents"]["files"], recorded["subagents"]["requests"]) == (2, 3)


def test_a_sub_agents_file_alone_is_refused_in_one_line(tmp_path):
    path, _ = claude_with_side_files(tmp_path)
    agent = next((path.parent / path.stem / "subagents").glob("agent-a5*.jsonl"))
    r = run_main(str(agent))
    assert r.status == 2 and r.err.count("\n") == 1 and "sub-agent" in r.err


def test_timestamps_of_the_fixture_are_what_stamp_says():
    assert parse_time(stamp(3723.5)) == START + 3723.5


@pytest.mark.parametrize("kinds", [("file-history-snapshot",), ("progress",),
                                   ("file-history-snapshot", "progress", "queue-operation")])
def test_a_new_transcript_of_only_bookkeeping_lines_is_a_claude_code_session(kinds, tmp_path):
    """A session just begun holds snapshots and progress lines and no message yet: they are
    Claude Code's own lines, so the file is its session (no request yet), not refused as
    having "no claude-code line"."""
    lines = [json.dumps({"type": kind, "messageId": "m1"}) for kind in kinds]
    got = read_session([str(write(tmp_path, "\n".join(lines) + "\n"))], "claude-code")
    assert (got.format, got.requests, got.touches) == ("claude-code", [], [])


def test_a_new_transcript_of_only_bookkeeping_lines_is_told_and_read_as_claude_code(tmp_path):
    """The same, as a user meets it: the format found from the bytes (no ``--format``),
    the file given to the decision and to replay.  Its progress lines are the ones a
    session just begun has — a hook's, and a sub-agent's carrying that agent's messages
    (``"type":"user"``, ``"type":"assistant"`` inside ``data``, so the reader is given
    them to read): Claude Code's own lines, none of them a message of this session."""
    s = ClaudeSession()
    s.snapshot()
    s.progress()
    for role, words in (("user", "explore the parser"), ("assistant", "looking")):
        s.lines.append(dumps(s._base("progress", data={"type": "agent_progress", "message": {
            "type": role, "message": {"role": role, "content": [text(words)]}}})))
    s.lines.append(dumps({"type": "queue-operation", "operation": "enqueue",
                          "sessionId": s.sid, "timestamp": stamp(20)}))
    path = str(write(tmp_path, s.text()))
    got = read_session([path])
    assert (got.format, got.requests, got.touches, got.kinds) == ("claude-code", [], [], [])
    decided = run_main(path)
    assert (decided.status, decided.out, decided.err) == (0, "skip\n", "")
    replayed = run_main("replay", "--json", path)
    assert replayed.status == 0, replayed.err
    (session,) = json.loads(replayed.out)["sessions"]
    assert (session["format"], session["requests"]) == ("claude-code", 0)


def test_an_interruption_during_a_tool_use_is_not_an_unanswered_prompt(tmp_path):
    """Stopping a tool ("… interrupted by user for tool use") sends the tool's result on:
    no prompt went unanswered, so it touches the cache nowhere — however the lines before
    it left the reader (a tool's result is sent as a request too)."""
    s = ClaudeSession()
    s.user("run it")
    s.response([tool_use("t1", "sleep 100")], (3, 1000, 0))
    s.tool_result("t1", "The user doesn't want to proceed with this tool use.")
    s.user("[Request interrupted by user for tool use]", turn=False)
    s.user("go on")
    s.response([text("b")], (3, 10, 1000))
    got = read(tmp_path, s)
    assert got.touches == [] and got.request_count == 2
