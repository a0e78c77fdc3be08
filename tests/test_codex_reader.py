"""The Codex reader on the edge events real rollouts have (docs/formats.md, codex): repeated
and null token_count events, requests with no output, compactions in both orders and with
or without a replacement history, model switches — each with the exact numbers a reader
must find."""

from __future__ import annotations

import json

from compact_dp.sessions.read import read_session
from compact_dp.sessions.session import ASSISTANT, CONTEXT, TOOL, USER
from compact_dp.sessions.timefmt import parse_time

from .conftest import run_main, write
from .session_fixtures import CodexRollout, bytes_rule, dumps, shares, stamp

SUMMARY = ("Another language model started to solve this problem and produced a summary: "
           "added --verbose to cli.py and documented it.")


def read(tmp_path, built: CodexRollout):
    return read_session([str(write(tmp_path, built.text(), "rollout.jsonl"))])


def item_bytes(built: CodexRollout) -> list[int]:
    """The compact JSON size of every response item, in file order."""
    return [len(dumps(json.loads(x)["payload"]).encode()) for x in built.lines
            if json.loads(x)["type"] == "response_item"]


def one_turn() -> CodexRollout:
    """Context, a turn whose request runs a tool, the tool's output and a reply, a second
    request — the token_count repeated, a null info between them."""
    c = CodexRollout()
    c.context()                              # 0
    c.null_info()                            # before anything is known
    c.user("add a --verbose flag")           # 1
    c.reasoning()                            # 2  the first request's output run
    c.call("c1", "rg argparse")              # 3
    c.token_count(9000, 0, 300)
    c.repeat()                               # the same request, reported again
    c.null_info()
    c.repeat()                               # ... and again after a null info
    c.output("c1", "cli.py:12: parser = argparse.ArgumentParser()")   # 4
    c.assistant("Adding the flag.")          # 5
    c.token_count(9600, 8900, 0)             # no output tokens: still a request
    return c


# --- which token_count events are requests ---------------------------------------------------

def test_a_repeated_token_count_is_one_request_even_after_a_null_info(tmp_path):
    s = read(tmp_path, one_turn())
    assert [r.usage.prompt for r in s.requests] == [9000, 9600]
    assert s.request_count == 2 and s.input_tokens == 18600


def test_the_session_id_folder_and_start_come_from_the_rollouts_first_lines(tmp_path):
    s = read(tmp_path, one_turn())
    assert (s.session_id, s.cwd, s.started) == ("r-1", "/p", parse_time(stamp(1.5)))


def test_two_equal_requests_in_a_row_are_two_requests_when_the_running_total_moves(tmp_path):
    """Equal last_token_usage twice is two requests: only an unchanged running total is a
    repeat."""
    c = one_turn()
    c.user("again")
    c.token_count(9700, 9600, 40)
    c.token_count(9700, 9600, 40)
    s = read(tmp_path, c)
    assert [r.usage.prompt for r in s.requests] == [9000, 9600, 9700, 9700]


def test_a_request_with_no_output_tokens_counts_and_a_zero_placeholder_does_not(tmp_path):
    c = one_turn()
    c.token_count(0, 0, 0, count=False)       # Codex's "filled to the window" placeholder
    c.repeat()
    c.user("go on")
    c.token_count(9800, 9600, 0)
    s = read(tmp_path, c)
    assert [(r.usage.prompt, r.usage.output) for r in s.requests] == \
        [(9000, 300), (9600, 0), (9800, 0)]
    assert s.output_tokens == 300


def test_input_tokens_include_the_cached_and_written_parts(tmp_path):
    """``input_tokens`` is the whole prompt: the reads and writes are inside it, and a
    cached count larger than the prompt is cut to it."""
    c = CodexRollout(model="gpt-5.6-terra")
    c.user("hi")
    c.token_count(5000, 1200, 10, write=3000)
    c.user("more")
    c.token_count(5100, 9999, 10)            # more cached than sent: all of it read
    s = read(tmp_path, c)
    u = [r.usage for r in s.requests]
    assert (u[0].input, u[0].write_5m, u[0].write_1h, u[0].read) == (800, 3000, 0, 1200)
    assert (u[1].input, u[1].written, u[1].read) == (0, 0, 5100)


def test_the_model_comes_from_the_latest_turn_context(tmp_path):
    c = CodexRollout(model="gpt-5.1-codex")
    c.user("one")
    c.token_count(8000)
    c.turn_context("gpt-5.2")
    c.user("two")
    c.token_count(8200, 8000)
    c.line("turn_context", {"cwd": "/p", "model": ""})     # no model: the last one stays
    c.user("three")
    c.token_count(8400, 8200)
    s = read(tmp_path, c)
    assert [r.llm for r in s.requests] == ["gpt-5.1-codex", "gpt-5.2", "gpt-5.2"]
    assert s.llms == ["gpt-5.1-codex", "gpt-5.2"] and s.llm == "gpt-5.2"
    got = json.loads(run_main("--json", str(tmp_path / "rollout.jsonl")).out)
    assert got["session"]["prices"]["model"] == "gpt-5.2"      # the next request's


def test_a_model_the_table_does_not_know_takes_the_window_the_rollout_reports(tmp_path):
    c = CodexRollout(model="gpt-9-preview", window=258400)
    c.user("one")
    c.token_count(8000)
    s = read(tmp_path, c)
    assert s.window == 258400
    got = json.loads(run_main("--json", str(tmp_path / "rollout.jsonl")).out)
    assert got["derived"]["M"] == 258400.0
    assert got["session"]["sources"]["max_context"] == "the context window the agent reported"


# --- what each request saw, and the sizes that follow ----------------------------------------

def test_a_request_saw_the_messages_before_its_output_run_and_sizes_follow(tmp_path):
    """The first request answered with reasoning and a call (its output run), so it saw the
    context and the prompt; the second answered with the reply, so it saw up to the tool
    output.  V is the first prompt less what it saw; the growth is shared among the new
    messages by their bytes; the reply no request saw is sized at the tokens per byte."""
    built = one_turn()
    s = read(tmp_path, built)
    assert s.kinds == [CONTEXT, USER, ASSISTANT, ASSISTANT, TOOL, ASSISTANT]
    assert [r.seen for r in s.requests] == [2, 5]
    nbytes = item_bytes(built)
    assert s.nbytes == nbytes
    first = [bytes_rule(n) for n in nbytes[:2]]          # nothing per byte known yet
    assert s.tokens[:2] == first and s.prefix == 9000 - sum(first)
    assert s.tokens[2:5] == shares(600, nbytes[2:5])
    assert s.tokens[5] == round(nbytes[5] * 600 / sum(nbytes[2:5]))
    assert s.live_tokens == sum(s.tokens)


def test_an_output_run_answered_by_a_later_request_is_still_seen_by_it(tmp_path):
    """The reply the second request answered with is seen by the next request, with the
    human message after it: the growth is theirs."""
    c = one_turn()
    c.user("now the docs")                                   # 6
    c.token_count(9900, 9600, 20)
    s = read(tmp_path, c)
    assert [r.seen for r in s.requests] == [2, 5, 7]
    assert s.tokens[5:7] == shares(300, item_bytes(c)[5:7])


# --- compactions ----------------------------------------------------------------------------

def compacted_turn(order: str = "compacted first", history: bool = True) -> CodexRollout:
    c = one_turn()
    c.user("also document it")                               # 6
    c.token_count(9800, 9600, 50)
    items = [c.msg("user", "add a --verbose flag"), c.msg("user", "also document it"),
             c.msg("user", SUMMARY)]
    if order == "compacted first":
        c.compacted(items if history else None, "" if history else SUMMARY)
        c.context_compacted()
    elif order == "event first":
        c.context_compacted()
        c.compacted(items if history else None, "" if history else SUMMARY)
    else:                                                    # the event alone
        c.context_compacted()
    c.assistant("Documented in README.")
    c.token_count(3000, 0, 200)
    return c


def test_a_replacement_history_is_the_new_context_and_its_prompts_are_no_turns(tmp_path):
    built = compacted_turn()
    s = read(tmp_path, built)
    assert s.compaction_count == 1 and s.live_start == 7
    assert s.kinds[7:] == [CONTEXT, CONTEXT, CONTEXT, ASSISTANT]
    assert s.user_turns == 2 and s.live_user_count == 0
    # the first request after it saw the three items, sized at the tokens per byte the
    # session had shown (800 tokens of growth over the bytes of messages 2-6); V is its
    # prompt less them, and the summary S is all three
    nbytes = item_bytes(built)
    history = [len(dumps(x).encode()) for x in json.loads(next(
        x for x in built.lines if '"compacted"' in x))["payload"]["replacement_history"]]
    per_byte = 800 / sum(nbytes[2:7])
    left = [round(n * per_byte) for n in history]
    assert s.requests[-1].seen == 10 and s.tokens[7:10] == left
    assert s.summary_tokens == sum(left) and s.prefix == 3000 - sum(left)
    assert (s.aftermath[0].left, s.aftermath[0].first_prompt, s.aftermath[0].first_read) \
        == (3000, 3000, 0)


def test_a_compaction_counts_once_whichever_of_its_two_lines_comes_first(tmp_path):
    for order in ("compacted first", "event first", "event alone"):
        s = read(tmp_path, compacted_turn(order))
        assert s.compaction_count == 1, order
        assert [r.segment for r in s.requests] == [0, 0, 0, 1], order


def test_two_compactions_with_a_message_between_them_are_two(tmp_path):
    """Only a compacted line and its event with nothing between them are one: a message
    after them, even with no request, ends that compaction."""
    c = compacted_turn()
    c.compacted([c.msg("user", SUMMARY)])
    c.context_compacted()
    c.user("one more thing")
    c.compacted([c.msg("user", SUMMARY)])
    s = read(tmp_path, c)
    assert s.compaction_count == 3 and s.live_start == 13
    assert s.kinds[11:] == [CONTEXT, USER, CONTEXT]


def test_a_compaction_without_a_replacement_history_leaves_its_message(tmp_path):
    s = read(tmp_path, compacted_turn(history=False))
    assert s.kinds[7:] == [CONTEXT, ASSISTANT]
    assert s.summary_tokens == s.tokens[7] and s.prefix == 3000 - s.tokens[7]


def test_the_event_alone_leaves_nothing_but_the_new_messages(tmp_path):
    s = read(tmp_path, compacted_turn("event alone"))
    assert s.kinds[7:] == [ASSISTANT] and s.summary_tokens is None
    assert s.prefix == 3000                       # the request saw no message after it


def test_a_summary_message_typed_as_user_is_context_not_a_turn(tmp_path):
    c = CodexRollout()
    c.item(c.msg("user", SUMMARY))
    c.user("continue")
    c.token_count(4000)
    s = read(tmp_path, c)
    assert s.kinds == [CONTEXT, USER] and s.user_turns == 1


def test_the_session_json_of_an_edge_rollout(tmp_path):
    """What a user sees of all of the above in --json."""
    f = write(tmp_path, compacted_turn().text(), "rollout.jsonl")
    got = json.loads(run_main("--json", str(f)).out)["session"]
    assert {k: got[k] for k in ("format", "requests", "compactions", "user_turns",
                                "messages", "last_request_tokens", "models", "tokens")} == {
        "format": "codex", "requests": 4, "compactions": 1, "user_turns": 2, "messages": 4,
        "last_request_tokens": 3000, "models": ["gpt-5.1-codex"], "tokens": "usage"}


# --- every item's kind, turns, and the rollouts from before the envelope ---------------------

def test_every_response_item_has_its_kind(tmp_path):
    c = CodexRollout()
    c.item({"type": "message", "role": "developer", "content": [
        {"type": "input_text", "text": "<permissions instructions>…"}]})
    c.context("# AGENTS.md instructions for /p\n\nbe brief")
    c.user("go")
    for kind in ("reasoning", "function_call", "custom_tool_call", "local_shell_call",
                 "web_search_call"):
        c.item({"type": kind, "call_id": "x", "status": "completed"})
    c.item({"type": "function_call_output", "call_id": "x", "output": "ok"})
    c.item({"type": "custom_tool_call_output", "call_id": "x", "output": "ok"})
    c.item({"type": "compaction_summary", "encrypted_content": "e"})
    c.item({"type": "ghost_snapshot", "ghost_commit": {}})          # not conversation
    c.token_count(5000)
    s = read(tmp_path, c)
    assert s.kinds == [CONTEXT, CONTEXT, USER] + [ASSISTANT] * 5 + [TOOL, TOOL, CONTEXT]


def test_turns_are_the_user_message_events_not_the_user_items(tmp_path):
    """A shell command the user ran (``!ls``) is injected context, yet a turn of theirs."""
    c = CodexRollout()
    c.user("first")
    c.item(c.msg("user", "<user_shell_command>\nls\n</user_shell_command>"))
    c.line("event_msg", {"type": "user_message", "message": "!ls"}, 0.0)
    c.token_count(3000)
    s = read(tmp_path, c)
    assert s.kinds == [USER, CONTEXT] and s.user_turns == 2


def test_a_rollout_from_before_the_envelope_is_read_without_usage(tmp_path):
    lines = [{"id": "0199", "timestamp": "2025-06-01T10:00:00.000Z", "instructions": None},
             {"record_type": "state"},
             CodexRollout.msg("user", "fix it"),
             {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c"},
             {"type": "function_call_output", "call_id": "c", "output": "done"},
             CodexRollout.msg("assistant", "Fixed.")]
    f = write(tmp_path, "\n".join(map(dumps, lines)) + "\n", "rollout.jsonl")
    s = read_session([str(f)])
    assert s.format == "codex" and s.kinds == [USER, ASSISTANT, TOOL, ASSISTANT]
    assert (s.request_count, s.has_usage, s.token_source) == (0, False, "bytes")
    assert s.tokens == [bytes_rule(n) for n in s.nbytes]
