"""Reading real agents' sessions: Claude Code, Codex and OpenAI chat, with their real token
counts (docs/formats.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compact_dp.sessions.read import read_session
from compact_dp.sessions.session import ASSISTANT, CONTEXT, TOOL, USER
from compact_dp.sessions.sizing import share
from compact_dp.sessions.sniff import sniff

from .conftest import INPUTS, cut, run_main, transcripts, write
from .session_fixtures import OPENAI_MESSAGES, claude_session, codex_lines, dumps


def independent_count(lines: list[bytes]) -> dict:
    """Requests, compactions and the last prompt, counted plainly: one request per
    (message.id, requestId) of the main chain, no <synthetic>; compact_boundary lines."""
    seen, last, compactions = set(), None, 0
    for raw in lines:
        try:
            d = json.loads(raw)
        except ValueError:
            continue
        if d.get("type") == "system" and d.get("subtype") == "compact_boundary":
            compactions += 1
        if d.get("type") != "assistant" or d.get("isSidechain"):
            continue
        m = d["message"]
        if m.get("model") == "<synthetic>":
            continue
        key = (m.get("id"), d.get("requestId"))
        if key not in seen:
            seen.add(key)
            u = m["usage"]
            last = u["input_tokens"] + u["cache_creation_input_tokens"] + \
                u["cache_read_input_tokens"]
    return {"requests": len(seen), "compactions": compactions, "last_request_tokens": last}


def session_json(path: Path | str, *args: str) -> dict:
    r = run_main("--json", *args, str(path))
    assert r.status == 0, r.err
    return json.loads(r.out)["session"]


# --- real sessions ------------------------------------------------------------------------

@pytest.mark.parametrize("fraction", [0.3, 0.7, 1.0])
def test_real_sessions_cut_part_way_report_exact_counts(fraction, tmp_path):
    """Cut after 30 %, 70 % and 100 % of its lines, every shared real session is detected
    as claude-code and reports requests, compactions and the last prompt exactly as a
    plain count of the file gives them."""
    for path in transcripts():
        f = cut(path, fraction, tmp_path)
        got = session_json(f)
        want = independent_count(f.read_bytes().split(b"\n"))
        assert got["format"] == "claude-code"
        assert {k: got[k] for k in want} == want, (path.name, fraction)


def prompt_sums_hold(session) -> list[tuple[int, int]]:
    """(sizes + V, recorded prompt) for every request whose sums should hold."""
    out = []
    for seg in range(len(session.compactions) + 1):
        start = session.compactions[seg - 1].at if seg else 0
        reqs = [r for r in session.requests if r.segment == seg and r.usage]
        if not reqs:
            continue
        prefix = reqs[0].usage.prompt - sum(session.tokens[start:reqs[0].seen])
        assert prefix >= 0
        out += [(sum(session.tokens[start:r.seen]) + prefix, r.usage.prompt) for r in reqs]
    return out


def test_message_sizes_sum_to_every_recorded_prompt():
    """With --tokens usage, V plus the sizes of the messages a request saw is its recorded
    prompt, for every request of every real session (and the live V is that prefix)."""
    for path in transcripts():
        session = read_session([str(path)])
        assert session.token_source == "usage"
        pairs = prompt_sums_hold(session)
        assert pairs and all(a == b for a, b in pairs), path.name
        live = [r for r in session.requests if r.segment == session.compaction_count]
        assert session.prefix == live[0].usage.prompt - sum(
            session.tokens[session.live_start:live[0].seen])


def test_usage_sizes_differ_visibly_from_bytes():
    """On real sessions the bytes rule undercounts the recorded growth by a quarter or
    more."""
    for path in transcripts():
        usage = session_json(path, "--tokens", "usage")
        nbytes = session_json(path, "--tokens", "bytes")
        assert usage["tokens"] == "usage" and nbytes["tokens"] == "bytes"
        if usage["requests"] > 3:
            assert usage["context_tokens"] > 1.1 * nbytes["context_tokens"], path.name


# --- Claude Code rules, on a file written here ----------------------------------------------

def test_claude_code_rules(tmp_path):
    built = claude_session()
    f = write(tmp_path, built.text())
    s = read_session([str(f)])
    assert s.format == "claude-code"
    assert len(s.requests) == len(built.requests) == 6    # not the sidechain, not synthetic
    assert [r.usage.prompt for r in s.requests] == [r["prompt"] for r in built.requests]
    assert len(s.compactions) == s.compaction_count == 1
    assert s.user_turns == built.turns == 3              # no meta, markup or summary
    assert s.llms == ["claude-opus-4-6", "claude-haiku-4-5-20251001"]
    assert s.last_request_tokens == 1 + 400 + 23500
    assert s.requests[-1].usage.write_1h == 400 and s.requests[0].usage.write_5m == 12000
    # one message per response: the three lines of the first response are one message
    first = s.requests[0].seen
    assert s.kinds[first] == ASSISTANT and s.kinds[first + 1] == TOOL
    live = s.kinds[s.live_start:]
    assert live == [CONTEXT, ASSISTANT, USER, ASSISTANT]   # the summary is context
    assert s.summary_tokens and s.summary_tokens > 100
    assert [r.segment for r in s.requests] == [0, 0, 0, 0, 1, 1]
    assert all(a == b for a, b in prompt_sums_hold(s))


def test_output_tokens_are_the_last_snapshot(tmp_path):
    """A response's lines carry mid-stream output counts; the largest is kept."""
    s = read_session([str(write(tmp_path, claude_session().text()))])
    assert s.requests[0].usage.output == 50


def test_without_ttl_split_writes_count_as_five_minutes(tmp_path):
    built = claude_session()
    built.response([text_block()], (1, 777, 30000), split=False)
    s = read_session([str(write(tmp_path, built.text()))])
    assert (s.requests[-1].usage.write_5m, s.requests[-1].usage.write_1h) == (777, 0)


def text_block() -> dict:
    return {"type": "text", "text": "ok"}


def test_a_truncated_last_line_is_a_warning(tmp_path):
    """A session being written ends in half a line: one warning, the rest decided."""
    data = claude_session().text()
    whole = read_session([str(write(tmp_path, data, "whole.jsonl"))])
    f = write(tmp_path, data[:-40])
    r = run_main("--json", str(f))
    assert r.status == 0 and "incomplete" in r.err and len(r.err.strip().splitlines()) == 1
    got = json.loads(r.out)["session"]
    assert got["requests"] == len(whole.requests) - 1


def test_a_session_with_no_request_yet(tmp_path):
    s = claude_session()
    s.lines = s.lines[:3]                          # snapshot, progress, the first prompt
    r = run_main("--json", str(write(tmp_path, s.text())))
    assert r.status == 0 and "no API request" in r.err
    obj = json.loads(r.out)
    assert obj["session"]["requests"] == 0 and obj["session"]["tokens"] == "bytes"


def test_a_subagent_file_is_not_a_main_session(tmp_path):
    s = claude_session()
    side = []
    for line in s.lines:
        d = json.loads(line)
        if d.get("type") in ("user", "assistant"):
            d["isSidechain"] = True
            side.append(dumps(d))
    r = run_main(str(write(tmp_path, ("\n".join(side) + "\n").encode())))
    assert r.status == 2 and "sub-agent" in r.err and not r.out


def test_stats_come_from_the_session_and_given_ones_win(tmp_path):
    f = write(tmp_path, claude_session().text())
    obj = json.loads(run_main("--json", str(f)).out)
    assert obj["session"]["sources"]["t"].startswith("from the session")
    given = json.loads(run_main("--json", "--turns", "9", str(f)).out)
    assert given["session"]["sources"]["t"] == "given"
    assert given["derived"]["L"] != obj["derived"]["L"]


# --- Codex -------------------------------------------------------------------------------

def test_codex_rollout(tmp_path):
    lines, want = codex_lines()
    f = write(tmp_path, ("\n".join(lines) + "\n").encode(), "rollout.jsonl")
    got = session_json(f)
    assert got["format"] == "codex"
    for key in ("requests", "compactions", "last_request_tokens", "models"):
        assert got[key] == want[key], key
    assert got["user_turns"] == want["turns"]
    s = read_session([str(f)])
    assert [r.usage.prompt for r in s.requests] == want["prompts"]
    assert s.requests[1].usage.read == 8900 and s.requests[1].usage.input == 700
    assert all(a == b for a, b in prompt_sums_hold(s))
    # the environment context is context, the typed request a turn
    assert s.kinds[0] == CONTEXT and s.kinds[1] == USER


# --- OpenAI chat --------------------------------------------------------------------------

def test_openai_chat_as_array_and_as_lines(tmp_path):
    array = write(tmp_path, json.dumps(OPENAI_MESSAGES, indent=2).encode(), "chat.json")
    lines = write(tmp_path, "\n".join(map(dumps, OPENAI_MESSAGES)).encode(), "chat.jsonl")
    a, b = read_session([str(array)]), read_session([str(lines)])
    assert a.format == b.format == "openai"
    assert a.kinds == b.kinds == [CONTEXT, USER, ASSISTANT, TOOL, ASSISTANT, USER, ASSISTANT]
    assert a.tokens == b.tokens and a.token_source == "bytes"
    assert [r.seen for r in a.requests] == [2, 4, 6]
    assert run_main(str(array)).status == 0


# --- which format ---------------------------------------------------------------------------

def test_sniffing_tells_every_format():
    assert sniff(claude_session().text()[:65536]) == "claude-code"
    assert sniff(("\n".join(codex_lines()[0])).encode()) == "codex"
    assert sniff(json.dumps(OPENAI_MESSAGES).encode()) == "openai"
    assert sniff("\n".join(map(dumps, OPENAI_MESSAGES)).encode()) == "openai"
    for f in INPUTS.glob("*.jsonl"):
        assert sniff(f.read_bytes()[:65536]) == "bash-agent", f.name
    assert sniff(b"just some text\nand more\n") is None


def test_a_file_in_no_known_format_is_a_one_line_error(tmp_path):
    r = run_main(str(write(tmp_path, b"hello\nworld\n", "notes.txt")))
    assert r.status == 2 and "not a session in a known format" in r.err
    assert len(r.err.strip().splitlines()) == 1
    assert run_main("--format", "bash-agent", str(tmp_path / "notes.txt")).status == 0


def test_spaced_json_has_no_user_line_and_says_so():
    r = run_main(str(INPUTS / "edge_spaced_json.jsonl"))
    assert r.status == 0 and "no user line recognised" in r.err and "--format openai" in r.err
    r = run_main(str(INPUTS / "edge_no_user_lines.jsonl"))      # no hint where it cannot help
    assert "no user line recognised" in r.err and "--format openai" not in r.err


def test_bash_agent_decisions_are_the_awks(tmp_path):
    """The session reader gives bash-agent files the awk's sizes and user lines: the native
    form with the stats given prints the recorded answers (test_cli covers more)."""
    from .conftest import AGENT_ARGS, NATIVE_STATS, STATS_ARGS, recorded
    for name in ("syn_400.jsonl", "edge_garbage_lines.jsonl", "edge_no_final_newline.jsonl"):
        want = recorded(name, AGENT_ARGS + STATS_ARGS)
        assert run_main(*NATIVE_STATS, str(INPUTS / name)).out == want


def test_formats_other_than_bash_agent_take_one_file(tmp_path):
    f = write(tmp_path, claude_session().text())
    r = run_main(str(f), str(f))
    assert r.status == 2 and "one file" in r.err


def test_unknown_format_or_token_mode_are_usage_errors():
    for args in (["--format", "yaml"], ["--tokens", "words"]):
        r = run_main(*args, str(INPUTS / "syn_40.jsonl"))
        assert r.status == 2 and args[0] in r.err


@pytest.mark.parametrize("total, weights", [(10, [1, 1, 1]), (7, [0, 0]), (0, [5, 3]),
                                            (100, [3, 0, 7]), (5, [1])])
def test_share_sums_exactly_in_proportion(total, weights):
    parts = share(total, weights)
    assert sum(parts) == total and all(p >= 0 for p in parts)
    if sum(weights):
        for p, w in zip(parts, weights):
            assert abs(p - total * w / sum(weights)) < 1
