"""Bad, odd and hostile input: each case is one a reviewer broke an earlier version with.

Every test runs compact-dp in-process with internal errors re-raised (conftest.run_main),
so "no traceback" is checked, not assumed: a crash fails the test instead of passing as
exit status 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compact_dp.core.models import MODEL_TABLE
from compact_dp.sessions.read import read_session

from .conftest import INPUTS, ROOT, run_main, write
from .session_fixtures import (
    OPENAI_MESSAGES,
    ClaudeSession,
    claude_session,
    codex_lines,
    dumps,
    text,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def decided(*args: str) -> dict:
    r = run_main("--json", *args)
    assert r.status == 0, r.err
    return json.loads(r.out)


# --- every model on every format -------------------------------------------------------------

@pytest.mark.parametrize("model", sorted(MODEL_TABLE))
@pytest.mark.parametrize("example", ["claude-code.jsonl", "codex.jsonl", "openai-chat.json"])
def test_every_model_decides_every_format(model, example):
    """v2 counts user lines; sessions that are not bash-agent's have them too."""
    out = decided("--model", model, str(EXAMPLES / example))
    assert out["model"] == model and out["decision"] in ("compact", "skip")
    r = run_main("replay", "--model", model, "--json", str(EXAMPLES / example))
    if MODEL_TABLE[model].turn_keep:
        assert r.status == 2 and "turn-keep" in r.err
    else:
        assert r.status == 0, r.err


def test_v2_counts_the_same_user_turns_on_a_session_as_the_session_reports():
    out = decided("--model", "v2", "--keep", "best", str(EXAMPLES / "claude-code.jsonl"))
    assert out["derived"]["E"] > 0 and out["session"]["user_turns"] > 0


# --- the awk form's odd values ---------------------------------------------------------------

@pytest.mark.parametrize("value", ["+nan", "-nan"])
def test_a_nan_min_keep_ratio_scores_nothing_like_awk(value):
    """awk reads +nan as NaN: min_keep is NaN, the k loop never runs, the answer is 0 (as
    gawk prints).  Named options refuse it: only the awk form takes awk's odd values."""
    f = str(INPUTS / "syn_40.jsonl")
    r = run_main("-v", f"min_keep_ratio={value}", "-f", "compact_dp.awk", f)
    assert (r.status, r.out, r.err) == (0, "0\n", "")
    r = run_main("--json", "-v", f"min_keep_ratio={value}", "-f", "compact_dp.awk", f)
    out = json.loads(r.out)
    assert out["best_k"] == 0 and out["min_keep"] == "nan"
    assert "no candidate k" in out["reason"]
    r = run_main("--min-keep-ratio", value, f)
    assert r.status == 2 and "--min-keep-ratio" in r.err


def test_the_reason_for_hopelessly_negative_benefits_does_not_say_nan():
    out = decided("--p-input", "1e15", "--summary-tokens", "1e12",
                  str(INPUTS / "syn_400.jsonl"))
    assert out["decision"] == "skip" and out["best_benefit"] == -1e18
    assert "lower still" in out["reason"]


# --- malformed lines are skipped, with a warning ---------------------------------------------

def claude_with(bad_line: str) -> bytes:
    s = claude_session()
    lines = s.lines[:3] + [bad_line] + s.lines[3:]
    return ("\n".join(lines) + "\n").encode()


BAD_CLAUDE_LINES = [
    '{"type":"system","subtype":"compact_boundary","compactMetadata":"auto",'
    '"sessionId":"s-1","parentUuid":"u1"}',
    '{"type":"assistant","sessionId":"s-1","message":["not","an","object"]}',
    '{"type":"user","sessionId":"s-1","message":{"role":"user","content":7}}',
    '{"type":["user"],"sessionId":"s-1"}',
    '[' * 100_000 + ']' * 100_000,
]


@pytest.mark.parametrize("bad", BAD_CLAUDE_LINES, ids=range(len(BAD_CLAUDE_LINES)))
def test_a_malformed_claude_code_line_costs_nothing_but_itself(bad, tmp_path):
    """Lines of a shape the format does not have are left out (a line that claims to be
    conversation but is not, with a one-line warning); the rest reads as without them."""
    good = read_session([str(write(tmp_path, claude_with("{}"), "good.jsonl"))])
    r = run_main("--json", str(write(tmp_path, claude_with(bad))))
    assert r.status == 0, r.err
    assert r.err.count("\n") <= 1 and ("skipped" in r.err or not r.err)
    session = json.loads(r.out)["session"]
    assert session["requests"] == len(good.requests)
    assert session["compactions"] == len(good.compactions) + ("compact_boundary" in bad)
    assert session["last_request_tokens"] == good.last_request_tokens


def test_a_conversation_line_without_a_message_object_is_named_in_a_warning(tmp_path):
    r = run_main(str(write(tmp_path, claude_with(BAD_CLAUDE_LINES[1]))))
    assert r.status == 0 and "1 line(s) are malformed and were skipped" in r.err


@pytest.mark.parametrize("bad, warned", [
    ('{"timestamp":"2026-03-01T10:00:00Z","type":["event_msg"],"payload":{}}', False),
    ('{"timestamp":"2026-03-01T10:00:00Z","type":"event_msg","payload":{"type":{"a":1}}}',
     False),
    ('{"timestamp":"2026-03-01T10:00:00Z","type":"response_item","payload":[1]}', True),
])
def test_a_malformed_codex_line_costs_nothing_but_itself(bad, warned, tmp_path):
    """A line whose type is not a name is not Codex's (left out quietly); an envelope with
    a payload of the wrong shape is Codex's, broken, and said so."""
    lines, want = codex_lines()
    f = write(tmp_path, "\n".join(lines[:5] + [bad] + lines[5:]) + "\n")
    r = run_main("--json", str(f))
    assert r.status == 0, r.err
    assert r.err == ("compact-dp: warning: 1 line(s) are malformed and were skipped\n"
                     if warned else "")
    assert json.loads(r.out)["session"]["requests"] == want["requests"]


def test_malformed_openai_messages_are_skipped_and_called_messages(tmp_path):
    messages = OPENAI_MESSAGES[:3] + [{"role": ["user"], "content": "x"}, 5] + \
        OPENAI_MESSAGES[3:]
    r = run_main("--json", str(write(tmp_path, json.dumps(messages), "chat.json")))
    assert r.status == 0 and "2 item(s) are not a message" in r.err, r.err
    assert json.loads(r.out)["session"]["messages"] == len(OPENAI_MESSAGES)


@pytest.mark.parametrize("data", [b'[{"role":["user"],"content":"x"}]', b"[" * 100_000])
def test_a_file_of_nothing_but_malformed_messages_is_a_one_line_error(data, tmp_path):
    r = run_main("--format", "openai", str(write(tmp_path, data, "chat.json")))
    assert r.status == 2 and r.err.count("\n") == 1 and "chat.json: " in r.err


def _places(value, path=()):
    """Every place in a parsed line: the path to each value inside it."""
    yield path
    items = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        yield from _places(inner, path + (key,))


def _replaced(value, path, new):
    """``value`` with the value at ``path`` replaced by ``new`` (removed when new is GONE)."""
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    if new is GONE and len(path) == 1:
        del copy[path[0]]
    else:
        copy[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy


GONE = object()
ANY_JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(),
                                  st.text(max_size=3)),
                        lambda inner: st.one_of(st.lists(inner, max_size=2),
                                                st.dictionaries(st.text(max_size=2), inner,
                                                                max_size=2)),
                        max_leaves=4)
VALID_LINES = {"claude-code": [json.loads(x) for x in claude_session().lines],
               "codex": [json.loads(x) for x in codex_lines()[0]],
               "openai": OPENAI_MESSAGES}


@st.composite
def a_field_wrong_in_every_line(draw):
    """A format's valid lines, each with one value anywhere in it replaced by any JSON (or
    removed): every shape check a reader makes is one such place."""
    fmt = draw(st.sampled_from(sorted(VALID_LINES)))
    lines = []
    for line in VALID_LINES[fmt]:
        # deepest first: hypothesis favours the first choice, which would be the whole line
        path = draw(st.sampled_from(list(_places(line))[::-1]))
        lines.append(_replaced(line, path, draw(st.one_of(ANY_JSON, st.just(GONE)) if path
                                                else ANY_JSON)))
    return fmt, lines


@settings(max_examples=300)
@given(a_field_wrong_in_every_line())
def test_every_reader_takes_a_line_of_any_shape_and_never_raises(case):
    """Readers check shapes themselves: whatever a line parses to, it is read, left out or
    counted — so read.py need not catch TypeError and friends, which would hide bugs — and
    the state the status line saves still marshals."""
    import marshal

    from compact_dp.sessions.read import reader_for
    fmt, lines = case
    reader = reader_for(fmt)
    for line in lines:
        reader.feed(line)
    reader.session("x")
    marshal.dumps(reader.state())


@pytest.mark.parametrize("bug", [TypeError, AttributeError, KeyError, IndexError])
def test_a_bug_in_a_reader_is_an_internal_error_not_a_malformed_line(bug, monkeypatch,
                                                                      tmp_path):
    # A compiled class cannot be patched, so the bug is in the Python object the recorder
    # tells of each message (its watcher), set on the reader read.py (pure) makes.
    from compact_dp.sessions import read

    class Broken:
        def message(self, kind):
            raise bug("a reader bug")

    def reader_with_a_bug(*args, **kw):
        reader = made(*args, **kw)
        reader.rec.watcher = Broken()
        return reader
    made = read.reader_for
    monkeypatch.setattr(read, "reader_for", reader_with_a_bug)
    r = run_main(str(write(tmp_path, claude_session().text())),
                 environ={"COMPACT_DP_DEBUG": ""})
    assert r.status == 2 and "malformed" not in r.err
    assert r.err.startswith(f"compact-dp: internal error: {bug.__name__}: ") and \
        "a reader bug" in r.err


# --- the format -------------------------------------------------------------------------------

def test_an_explicit_wrong_format_is_an_error_not_an_empty_session(tmp_path):
    cc = str(EXAMPLES / "claude-code.jsonl")
    r = run_main("--format", "codex", cc)
    assert r.status == 2 and "no codex line" in r.err
    r = run_main("--format", "claude-code", str(EXAMPLES / "openai-chat.json"))
    assert r.status == 2 and "no claude-code line" in r.err


@pytest.mark.parametrize("data", [b"hello\nworld\n", b"[1, 2]\n\"x\"\n", b"\x00\xff\xfe\x80\n",
                                  b"not json {\n42\n", b"{\"a\": 1}\n"])
def test_text_named_claude_code_is_an_error_though_no_line_names_a_role(data, tmp_path):
    """A Claude Code file is read only where a line names "user", "assistant" or
    "system": text with none of them had passed as a session with nothing in it."""
    f = tmp_path / "t.jsonl"
    f.write_bytes(data)
    r = run_main("--format", "claude-code", str(f))
    assert (r.status, r.out) == (2, "") and r.err == (
        f"compact-dp: error: {f}: no claude-code line in it (a session in another format? "
        "--format auto tells)\n")


@pytest.mark.parametrize("data", [b"", b"\n\n", b'{"type":"file-history-snapshot"}\n',
                                  b'{"type":"queue-operation","operation":"enqueue"}\n',
                                  # a pasted prompt longer than the 64 KiB looked at
                                  b'{"type":"queue-operation","content":"' + b"a" * 70_000 +
                                  b'"}\n'])
def test_a_new_claude_code_transcript_named_so_is_a_session_with_nothing_yet(data, tmp_path):
    """Empty, or only Claude Code's own typed lines before the first message: no error."""
    f = tmp_path / "new.jsonl"
    f.write_bytes(data)
    r = run_main("--format", "claude-code", str(f))
    assert r.status == 0 and r.out == "skip\n"


def test_a_byte_order_mark_and_spaced_json_are_still_recognised(tmp_path):
    bom = write(tmp_path, b"\xef\xbb\xbf" + json.dumps(OPENAI_MESSAGES).encode(), "bom.json")
    assert decided(str(bom))["session"]["format"] == "openai"
    assert decided(str(bom))["session"]["messages"] == len(OPENAI_MESSAGES)
    s = claude_session()
    spaced = "\n".join(json.dumps(json.loads(x)) for x in s.lines) + "\n"
    f = write(tmp_path, spaced, "spaced.jsonl")
    session = decided(str(f))["session"]
    assert session["format"] == "claude-code" and session["requests"] == len(s.requests)


BASH_AGENT_LOOKALIKES = {
    "a tool call's input names Claude Code's keys":
        {"sessionId": "s", "parentUuid": None, "type": "user"},
    "a tool call's input names Codex's keys": {"type": "event_msg", "payload": {"x": 1}},
    "a tool call's input names OpenAI roles": {"role": "tool", "tool_calls": []},
}


@pytest.mark.parametrize("name", sorted(BASH_AGENT_LOOKALIKES))
def test_a_bash_agent_file_is_not_taken_for_another_format(name, tmp_path):
    """Another format's keys nested inside a bash-agent message (a tool call's arguments)
    are not that format: only top-level keys count."""
    lines = (INPUTS / "syn_40.jsonl").read_bytes().split(b"\n")
    call = {"role": "assistant", "content": [{"type": "tool_use", "id": "t9", "name": "x",
                                              "input": BASH_AGENT_LOOKALIKES[name]}]}
    f = write(tmp_path, b"\n".join(lines[:1] + [dumps(call).encode()] + lines[1:]))
    got = decided(str(f))
    want = decided("--format", "bash-agent", str(f))
    assert got["session"]["format"] == "bash-agent"
    assert (got["decision"], got["best_k"]) == (want["decision"], want["best_k"])


@pytest.mark.parametrize("first", [b"[agent] started 2026-01-01",
                                   b'{"role":"user","content":"hi","instructions":"x",'
                                   b'"id":"1","timestamp":"t"}'])
def test_a_stray_first_line_does_not_change_the_format(first, tmp_path):
    f = write(tmp_path, first + b"\n" + (INPUTS / "syn_40.jsonl").read_bytes())
    assert decided(str(f))["session"]["format"] == "bash-agent"


def test_codex_counts_a_compaction_once_whichever_line_comes_first(tmp_path):
    lines, want = codex_lines()
    at = next(i for i, x in enumerate(lines) if '"type":"compacted"' in x)
    event = next(i for i, x in enumerate(lines) if '"context_compacted"' in x)
    swapped = list(lines)
    swapped[at], swapped[event] = lines[event], lines[at]
    for order in (lines, swapped):
        f = write(tmp_path, "\n".join(order) + "\n")
        assert decided(str(f))["session"]["compactions"] == want["compactions"]


# --- usage written in unusual places or shapes -------------------------------------------------

def two_block_response(first_usage: dict | None, later_usage: dict) -> bytes:
    s = ClaudeSession()
    s.user("hello")
    s.response([text("a"), text("b")], (10, 1000, 0))
    lines = [json.loads(x) for x in s.lines]
    blocks = [x for x in lines if x["type"] == "assistant"]
    if first_usage is None:
        del blocks[0]["message"]["usage"]
    else:
        blocks[0]["message"]["usage"] = first_usage
    blocks[1]["message"]["usage"] = later_usage
    return ("\n".join(map(dumps, lines)) + "\n").encode()


def test_usage_on_a_later_block_of_the_response_counts(tmp_path):
    usage = {"input_tokens": 3, "cache_creation_input_tokens": 40000,
             "cache_read_input_tokens": 500, "output_tokens": 9}
    f = write(tmp_path, two_block_response(None, usage))
    assert decided(str(f))["session"]["last_request_tokens"] == 40503


@pytest.mark.parametrize("number", [lambda n: float(n), lambda n: str(n)])
def test_token_counts_written_as_floats_or_strings_count(number, tmp_path):
    usage = {"input_tokens": number(2), "cache_creation_input_tokens": number(50000),
             "cache_read_input_tokens": number(1000), "output_tokens": number(7)}
    f = write(tmp_path, two_block_response(usage, usage))
    assert decided(str(f))["session"]["last_request_tokens"] == 51002


def test_a_string_false_is_not_a_sidechain(tmp_path):
    s = ClaudeSession()
    s.user("hello")
    s.response([text("a")], (10, 1000, 0))
    lines = [json.loads(x) for x in s.lines]
    for x in lines:
        x["isSidechain"] = "false"
    f = write(tmp_path, "\n".join(map(dumps, lines)) + "\n")
    assert decided(str(f))["session"]["requests"] == 1


# --- replay -------------------------------------------------------------------------------------

def test_replay_of_a_folder_names_every_file_it_skipped_on_stderr_and_in_json(
        tmp_path, monkeypatch):
    """Five files that cannot be replayed, each for another reason: each gets one line on
    stderr naming it and why, and an entry in --json's ``skipped``; the session that can
    be replayed is replayed."""
    from compact_dp.replaying import batch
    (tmp_path / "good.jsonl").write_bytes((EXAMPLES / "claude-code.jsonl").read_bytes())
    (tmp_path / "bug.jsonl").write_bytes((EXAMPLES / "claude-code.jsonl").read_bytes())
    (tmp_path / "notes.json").write_text("just text, no session\n")
    (tmp_path / "binary.jsonl").write_bytes(b"\x00\x01\x02")
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "side.jsonl").write_text(dumps(
        {"type": "user", "isSidechain": True, "sessionId": "s",
         "message": {"role": "user", "content": "x"}}) + "\n")
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "nowhere")
    real = batch.replay_file

    def breaks_on_bug(path, *args, **kw):
        if path.endswith("bug.jsonl"):
            raise RuntimeError("a bug met in one file")
        return real(path, *args, **kw)

    monkeypatch.setattr(batch, "replay_file", breaks_on_bug)
    bad = ["binary.jsonl", "bug.jsonl", "deep/side.jsonl", "gone.jsonl", "notes.json"]
    for args in (["--json"], []):
        r = run_main("replay", *args, str(tmp_path), environ={"COMPACT_DP_DEBUG": ""})
        assert r.status == 0, r.err
        lines = r.err.splitlines()
        assert len(lines) == len(bad), r.err
        for name, line in zip(bad[:-1], lines):
            assert line.startswith(f"compact-dp: warning: skipped {tmp_path / name}: ")
            assert "…" not in line
        assert "a bug met in one file" in lines[1] and "No such file" in lines[3]
        # a .json in no session format is counted, not named; named when given itself
        assert lines[-1] == "compact-dp: left out 1 .json file in the folders that are " \
            "not sessions"
    obj = json.loads(run_main("replay", "--json", str(tmp_path),
                              environ={"COMPACT_DP_DEBUG": ""}).out)
    assert [s["session"] for s in obj["skipped"]] == [str(tmp_path / n) for n in bad]
    assert all(s["error"] and str(tmp_path) not in s["error"] for s in obj["skipped"])
    assert [Path(s["session"]).name for s in obj["sessions"]] == ["good.jsonl"]
    assert "5 files skipped" in r.out
    r = run_main("replay", str(tmp_path / "notes.json"), str(tmp_path / "good.jsonl"))
    assert r.status == 2 and r.err.startswith(f"compact-dp: error: {tmp_path / 'notes.json'}: "
                                              "not a session")


def test_replay_recorded_on_a_session_without_usage_says_why(tmp_path):
    f = write(tmp_path, "\n".join(map(dumps, [m for m in OPENAI_MESSAGES])) + "\n",
              "chat.jsonl")
    r = run_main("replay", "--policy", "recorded", str(f))
    assert r.status in (0, 1, 2) and "recorded" in r.err and "usage" in r.err
    assert r.err.count("\n") == 1


# --- narrow terminals ---------------------------------------------------------------------------

def test_explain_at_forty_columns_folds_numbers_and_never_cuts_them():
    r = run_main("--explain", "--p-input", "1e15", "--summary-tokens", "1e12",
                 str(INPUTS / "syn_2500.jsonl"), environ={"COLUMNS": "40"})
    assert r.status == 0
    assert all(len(line) <= 40 for line in r.out.splitlines())
    table = r.out[r.out.index("net $"):]
    joined = "".join(cell.strip() for line in table.splitlines()
                     for cell in line.split("|")[2:3])
    assert "-1,000,000,567,388,898,459,648.0000" in joined       # k = 2,499, folded whole
    assert "2,499" in table and "…2,198" in table


# --- options ------------------------------------------------------------------------------------

def test_now_accepts_iso_8601_with_a_space_and_dates_alone():
    cc = str(EXAMPLES / "claude-code.jsonl")
    assert decided("--now", "2026-02-11 10:00", cc)["session"]["cache"]["now"] == 1770804000
    assert decided("--now", "2026-02-11", cc)["session"]["cache"]["now"] == 1770768000
    r = run_main("--now", "yesterday", cc)
    assert r.status == 2 and "--now" in r.err


def test_given_prices_are_the_prices_json_reports():
    out = decided("--p-input", "1000", "--p-out", "1", str(EXAMPLES / "claude-code.jsonl"))
    prices = out["session"]["prices"]
    assert prices["input"] == 1000 and prices["output"] == 1
    assert "p_input" in prices["source"] and out["session"]["sources"]["p_input"] == "given"


def test_every_help_page_fits_eighty_columns():
    from compact_dp.cli.main import COMMANDS
    for topic in [None, *COMMANDS]:
        r = run_main("help", *([topic] if topic else []), environ={"COLUMNS": "80"})
        assert r.status == 0, (topic, r.err)
        assert all(len(line) <= 80 for line in r.out.splitlines()), topic


@pytest.mark.parametrize("value", [2 ** 64, 2 ** 63 - 1, 10 ** 400, 1e30, "1e400"])
def test_absurd_token_counts_and_times_count_as_nothing(value, tmp_path):
    """A count no request can have (a quadrillion tokens and up) or a time no clock shows
    is garbage: it counts as 0 (or no time), and every output still writes."""
    s = ClaudeSession()
    s.user("hello")
    s.response([text("a")], (3, 1000, 0))
    s.user("more")
    s.response([text("b")], (3, 10, 1000))
    lines = [json.loads(x) for x in s.lines]
    last = [x for x in lines if x["type"] == "assistant"][-1]
    last["message"]["usage"]["cache_read_input_tokens"] = value
    last["timestamp"] = value
    f = write(tmp_path, "\n".join(json.dumps(x) for x in lines) + "\n")
    assert decided(str(f))["session"]["last_request_tokens"] == 13
    assert run_main("replay", "--json", str(f)).status == 0
    lines, _ = codex_lines()
    data = "\n".join(lines).replace('"input_tokens":9000', f'"input_tokens":{value}')
    f = write(tmp_path, data + "\n", "rollout.jsonl")
    assert run_main("replay", "--json", str(f)).status == 0


@pytest.mark.parametrize("argv", [[], ["replay"]], ids=["decision", "replay"])
def test_a_bad_cache_ttl_is_one_line_before_any_reading(argv):
    """--cache-ttl is checked where it is given, by the decision and by replay alike (replay
    once took it on to a worker, which failed on the first request)."""
    r = run_main(*argv, "--cache-ttl", "t=1", str(ROOT / "examples" / "claude-code.jsonl"))
    assert r.status == 2 and r.out == ""
    assert r.err == "compact-dp: error: --cache-ttl: 't=1' is not a TTL " \
                    "(5m, 1h, 30m or seconds)\n"


@pytest.mark.parametrize("ttl", ["1e400", "inf", "1e400h"])
def test_an_infinite_cache_ttl_is_refused_as_p_write_inf_is(ttl):
    r = run_main("--cache-ttl", ttl, str(ROOT / "examples" / "claude-code.jsonl"))
    assert (r.status, r.out) == (2, "") and r.err == \
        f"compact-dp: error: --cache-ttl: {ttl!r} is not a TTL (it must be finite)\n"
