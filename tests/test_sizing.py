"""The sizing rules of sessions/sizing.py, one test per rule, with numbers worked by hand."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from compact_dp.sessions.read import read_session
from compact_dp.sessions.recorder import Recorder
from compact_dp.sessions.session import ASSISTANT, CONTEXT, TOOL, USER
from compact_dp.sessions.sizing import share

from .conftest import write
from .session_fixtures import ClaudeSession, CodexRollout, bytes_rule, shares, text, tool_use


def test_the_first_request_is_the_prefix_plus_its_messages_at_the_bytes_rule():
    rec = Recorder("claude-code")
    rec.message(USER, 400)                                   # 101 tokens by the bytes rule
    rec.request(1, None, "m", [3, 20_000, 0, 0, 9])
    s = rec.session()
    assert s.tokens[0] == 101 and s.prefix == 20_003 - 101


def test_messages_that_alone_exceed_the_first_prompt_are_scaled_down_to_it():
    rec = Recorder("claude-code")
    rec.message(USER, 4000)                                  # 1001 tokens
    rec.message(CONTEXT, 2000)                               # 501 tokens
    rec.request(2, None, "m", [0, 0, 0, 900, 0])             # the prompt is only 900
    s = rec.session()
    assert s.prefix == 0 and sum(s.tokens[:2]) == 900
    assert s.tokens == [600, 300]                            # 900 × 1001/1502, 900 × 501/1502


def test_growth_is_shared_among_the_new_messages_in_proportion_to_their_bytes():
    rec = Recorder("claude-code")
    rec.message(USER, 100)
    rec.request(1, None, "m", [1, 10_000, 0, 0, 5])
    rec.message(ASSISTANT, 300)
    rec.message(TOOL, 700)
    rec.request(3, None, "m", [1, 101, 0, 10_000, 5])        # grew by 101 tokens
    s = rec.session()
    # 101 × 3/10 = 30.3, 101 × 7/10 = 70.7: 30 + 70, and the larger remainder (0.7) wins
    assert s.tokens[1:3] == [30, 71]


def test_unseen_messages_are_sized_at_the_tokens_per_byte_so_far_rounded():
    rec = Recorder("claude-code")
    rec.message(USER, 100)
    rec.request(1, None, "m", [1, 10_000, 0, 0, 5])
    rec.message(ASSISTANT, 1000)
    rec.request(2, None, "m", [1, 333, 0, 10_000, 5])        # 333 tokens for 1000 bytes
    rec.message(ASSISTANT, 1002)                             # no request saw it yet
    s = rec.session()
    assert s.tokens[2] == 334 and s.live_tokens == sum(s.tokens)   # 333.666, rounded


def test_growth_with_no_new_message_is_an_adjustment_of_the_context():
    rec = Recorder("claude-code")
    rec.request(0, None, "m", [0, 5000, 0, 0, 5])            # nothing seen yet
    rec.request(0, None, "m", [0, 100, 0, 5000, 5])          # grew: the context takes it
    rec.message(USER, 40)
    rec.request(1, None, "m", [0, 11, 0, 5100, 5])
    rec.request(1, None, "m", [0, 7, 0, 5111, 5])            # grew, no new message
    s = rec.session()
    assert s.prefix == 5000 and s.tokens == [11]             # V and sizes never change
    assert [r.adjust for r in s.requests] == [0, 100, 0, 7]
    assert s.live_tokens == 5118 - 5000


def test_a_shrinking_prompt_is_a_removal_and_new_messages_keep_their_estimate():
    rec = Recorder("claude-code")
    rec.message(USER, 100)
    rec.request(1, None, "m", [0, 1000, 0, 0, 5])
    rec.message(TOOL, 100)
    rec.message(TOOL, 300)
    rec.request(3, None, "m", [0, 400, 0, 1000, 5])          # +400: 100 and 300 (1/byte)
    rec.message(TOOL, 50)
    rec.request(4, None, "m", [0, 0, 0, 1250, 5])            # −150, with 50 new bytes
    s = rec.session()
    assert s.tokens == [26, 100, 300, 50] and s.prefix == 1000 - 26
    assert s.requests[-1].adjust == -200                     # 50 new, so 200 removed
    assert s.prefix + sum(s.tokens) + sum(r.adjust for r in s.requests) == 1250
    assert s.live_tokens == 1250 - s.prefix


def test_a_removal_beyond_the_context_takes_the_rest_from_the_prefix():
    rec = Recorder("claude-code")
    rec.message(USER, 100)
    rec.request(1, None, "m", [0, 1000, 0, 0, 5])
    rec.request(1, None, "m", [0, 0, 0, 500, 5])             # a new session's prompt
    s = rec.session()
    assert s.live_tokens == 0 and s.prefix == 500
    assert s.requests[-1].adjust == -26


def test_a_context_that_ends_sizes_its_unseen_messages_at_the_tokens_per_byte_then():
    rec = Recorder("claude-code")
    rec.message(USER, 100)
    rec.request(1, None, "m", [0, 1000, 0, 0, 5])
    rec.message(ASSISTANT, 200)
    rec.request(2, None, "m", [0, 100, 0, 1000, 5])          # 0.5 tokens per byte
    rec.message(ASSISTANT, 600)                              # the last reply: unseen
    rec.compaction(None)
    rec.message(CONTEXT, 100)
    rec.message(USER, 100)
    rec.request(5, None, "m", [0, 2000, 0, 0, 5])           # at 0.5: 50 and 50
    rec.message(ASSISTANT, 100)
    rec.request(6, None, "m", [0, 400, 0, 2000, 5])          # 4 tokens per byte from here
    s = rec.session()
    assert s.tokens[2] == 300                                # at 0.5, not at the later rate
    assert s.tokens[3:6] == [50, 50, 400] and s.prefix == 1900
    assert s.summary_tokens == 50


def test_bytes_mode_sizes_every_message_by_the_bytes_rule_and_the_prefix_from_usage():
    rec = Recorder("claude-code", "bytes")
    rec.message(USER, 400)
    rec.request(1, None, "m", [3, 20_000, 0, 0, 9])
    rec.message(ASSISTANT, 1000)
    rec.request(2, None, "m", [3, 100, 0, 20_000, 9])
    s = rec.session()
    assert s.tokens == [101, 251] and s.prefix == 20_003 - 101 and s.token_source == "bytes"


@given(st.integers(-10**6, 10**7),
       st.lists(st.integers(-50, 50) | st.integers(0, 10**6), max_size=5))
@example(5, [1, 1]).via("a tie of two")
@example(7, [3, 3]).via("a tie of two")
@example(1, [0, 0]).via("a tie of two, from no weight")
@example(-3, [2, 2]).via("a tie of two, below zero")
def test_shares_are_the_proportional_parts_with_the_largest_remainders_rounded_up(total,
                                                                                  weights):
    """share against the rule said plainly: floor parts of the weights (negative ones count
    0; all 0: equal), and one more unit to each of the largest remainders, ties to the
    first — for two weights (the usual growth shared by a reply and a tool result) too."""
    w = [max(0, x) for x in weights]
    if w and not sum(w):
        w = [1] * len(w)
    whole = sum(w)
    want = [total * x // whole for x in w] if w else []
    by_remainder = sorted(range(len(w)), key=lambda i: (-(total * w[i] % whole), i))
    for i in by_remainder[:total - sum(want)]:
        want[i] += 1
    assert share(total, weights) == (want if len(w) > 1 else [total] if w else [])


# --- which message gets the growth: every size, exactly --------------------------------------

def content_bytes(built: ClaudeSession) -> list[int]:
    """The compact JSON size of each message's content, one message per response."""
    sizes, last = [], None
    for line in built.lines:
        d = json.loads(line)
        if d["type"] not in ("user", "assistant") or d.get("isSidechain"):
            continue
        content = json.dumps(d["message"]["content"], separators=(",", ":"),
                             ensure_ascii=False).encode()
        key = d.get("requestId")
        if d["type"] == "assistant" and key == last:
            sizes[-1] += len(content)        # another block of the same response
        else:
            sizes.append(len(content))
        last = key if d["type"] == "assistant" else None
    return sizes


def test_every_message_of_a_claude_code_session_gets_its_own_share_of_the_growth(tmp_path):
    """Four requests over two contexts: each message's size is the rule's, to the token —
    not only in sum."""
    s = ClaudeSession()
    s.user("fix the bug")                                              # 0
    s.response([text("Looking."), tool_use("t1", "cat a.py")], (3, 10000, 0))     # 1
    s.tool_result("t1", "print(1)\n" * 20)                             # 2
    s.response([text("Fixed.")], (1, 300, 10000))                      # 3 (unseen)
    s.boundary()
    s.summary()                                                        # 4
    s.response([text("Continuing.")], (3, 6000, 0))                    # 5
    s.user("next step please, with a longer message this time")        # 6
    s.response([text("Done.")], (1, 777, 6000))                        # 7 (unseen)
    got = read_session([str(write(tmp_path, s.text()))])
    b = content_bytes(s)
    assert got.nbytes == b
    rate = 298 / (b[1] + b[2])              # 10,301 − 10,003 over messages 1 and 2
    want = [bytes_rule(b[0]), *shares(298, b[1:3]), round(b[3] * rate),
            round(b[4] * rate)]             # the summary: the first request saw it
    rate = (298 + 777 - 3 + 1) / (b[1] + b[2] + b[5] + b[6])          # 6,778 − 6,003
    want += [*shares(775, b[5:7]), round(b[7] * rate)]
    assert got.tokens == want
    assert got.segment_prefixes == [10003 - want[0], 6003 - want[4]]
    assert got.summary_tokens == want[4] and got.live_tokens == sum(want[4:])


def test_every_message_of_a_codex_rollout_gets_its_own_share_of_the_growth(tmp_path):
    c = CodexRollout()
    c.context()                                   # 0
    c.user("add a flag")                          # 1
    c.reasoning()                                 # 2   output of request 1
    c.call("c1", "rg x")                          # 3
    c.token_count(9000, 0, 300)
    c.output("c1", "x" * 333)                     # 4
    c.assistant("Adding it.")                     # 5   output of request 2
    c.token_count(9450, 9000, 20)
    c.user("now the docs")                        # 6
    c.token_count(9530, 9450, 20)
    got = read_session([str(write(tmp_path, c.text(), "rollout.jsonl"))])
    b = got.nbytes
    assert [r.seen for r in got.requests] == [2, 5, 7]
    assert got.tokens == [bytes_rule(b[0]), bytes_rule(b[1]), *shares(450, b[2:5]),
                          *shares(80, b[5:7])]


def test_a_request_that_saw_new_messages_but_did_not_grow_gives_them_nothing():
    """They are sized 0, and the tokens per byte do not count their bytes."""
    rec = Recorder("claude-code")
    rec.message(USER, 100)
    rec.request(1, None, "m", [0, 1000, 0, 0, 5])
    rec.message(ASSISTANT, 100)
    rec.request(2, None, "m", [0, 200, 0, 1000, 5])         # 2 tokens per byte
    rec.message(TOOL, 500)
    rec.request(3, None, "m", [0, 0, 0, 1200, 5])           # grew by nothing
    rec.message(ASSISTANT, 10)                              # unseen: at 2 per byte
    s = rec.session()
    assert s.tokens == [26, 200, 0, 20] and [r.adjust for r in s.requests] == [0, 0, 0]


def test_equal_remainders_go_to_the_earlier_message():
    rec = Recorder("claude-code")
    rec.message(USER, 100)
    rec.request(1, None, "m", [0, 1000, 0, 0, 5])
    for _ in range(3):
        rec.message(TOOL, 50)
    rec.request(4, None, "m", [0, 5, 0, 1000, 5])            # 5 over three equal messages
    assert rec.session().tokens[1:] == [2, 2, 1]


def test_a_request_that_saw_fewer_messages_than_the_one_before_sizes_nothing_again():
    rec = Recorder("claude-code")
    rec.message(USER, 100)
    rec.message(ASSISTANT, 100)
    rec.request(2, None, "m", [0, 1000, 0, 0, 5])
    rec.request(1, None, "m", [0, 40, 0, 1000, 5])          # an older view: a growth
    s = rec.session()
    assert s.tokens == [26, 26] and s.requests[-1].adjust == 40


def test_the_summary_is_the_context_run_that_opens_a_context_and_no_later_context():
    rec = Recorder("claude-code")
    rec.message(USER, 100)
    rec.request(1, None, "m", [0, 1000, 0, 0, 5])
    rec.message(ASSISTANT, 100)
    rec.request(2, None, "m", [0, 100, 0, 1000, 5])          # 1 token per byte
    rec.compaction(None)
    rec.message(CONTEXT, 300)                                # the summary
    rec.message(CONTEXT, 200)                                # re-injected with it
    rec.message(USER, 100)
    rec.message(CONTEXT, 400)                                # a meta line: not summary
    rec.request(6, None, "m", [0, 5000, 0, 0, 5])
    s = rec.session()
    assert s.tokens[2:] == [300, 200, 100, 400] and s.summary_tokens == 500
    assert s.prefix == 4000 and s.aftermath[0].left == 4500


def test_what_a_compaction_left_counts_its_marked_replies_but_its_summary_only_context():
    """A Codex replacement history may hold a reply: it is left (V + it), not summary."""
    rec = Recorder("codex")
    rec.message(USER, 100)
    rec.request(1, None, "m", [1000, 0, 0, 0, 5])
    rec.message(ASSISTANT, 100)
    rec.request(2, None, "m", [100, 0, 0, 1000, 5])          # 1 token per byte
    rec.compaction(None)
    rec.message(CONTEXT, 300, left=True)
    rec.message(ASSISTANT, 200, left=True)
    rec.message(USER, 100)
    rec.request(5, None, "m", [3000, 0, 0, 0, 5])
    s = rec.session()
    assert s.summary_tokens == 300 and s.aftermath[0].left == 2400 + 500
    assert s.prefix == 2400


@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=4), st.integers(0, 10**6))
def test_bytes_mode_never_makes_the_fixed_prefix_negative(sizes, prompt):
    """With --tokens bytes the messages are sized by their bytes, whatever the usage says:
    when they alone exceed the first prompt, the fixed prefix is 0, never below."""
    rec = Recorder("claude-code", "bytes")
    for size in sizes:
        rec.message(USER, size)
    rec.request(len(sizes), None, "m", [3, prompt, 0, 0, 9])
    s = rec.session()
    assert s.prefix == max(0, prompt + 3 - sum(s.tokens))
