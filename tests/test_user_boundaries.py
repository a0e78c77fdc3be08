"""The boundaries a user can reach from the outside, each on both sides: a prompt exactly
at the window, the pre-compact hook's margin, the forced-compaction limit on a Claude Code
session, where S comes from (DP_S against what the session records), and Ctrl-C."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import termios
import time

import pytest

from compact_dp.sessions.read import read_session

from .conftest import INPUTS, ROOT, clean_env, command_path, run_cli, run_main, write
from .session_fixtures import ClaudeSession, claude_session, text
from .test_json_fields import three_warm_requests

# --- the window --------------------------------------------------------------------------------

@pytest.mark.parametrize("window, before", [(10503, []), (10502, [3]), (10303, [3]),
                                            (10302, [2, 3])])
def test_never_compacts_a_prompt_exactly_at_the_window(window, before, tmp_path):
    """The requests' prompts are 10,003, 10,303 and 10,503 tokens: one that fills the
    window exactly still fits."""
    f = write(tmp_path, three_warm_requests().text())
    r = run_main("replay", "--json", "--policy", "never", "--max-context", str(window),
                 str(f))
    never = json.loads(r.out)["sessions"][0]["policies"][0]
    assert [p["request"] for p in never["compaction_points"]] == before
    assert all(p["forced"] for p in never["compaction_points"])


def turn_end_session(first: int) -> ClaudeSession:
    s = ClaudeSession()
    s.user("hi")
    s.response([text("a")], (3, first - 3, 0))
    s.user("more")
    s.response([text("b")], (3, 1000, first - 3))
    s.user("again")
    s.response([text("c")], (3, 1000, first + 997))
    return s


@pytest.mark.parametrize("delta, before", [(0, 2), (1, 2), (-1, 3)])
def test_a_threshold_compacts_at_the_turn_end_whose_context_reaches_it(
        delta, before, tmp_path):
    """threshold:5 of a 200,000-token window is 10,000 tokens; at the turn end before
    the second request the context is the first prompt and its reply — made exactly
    10,000 (+ delta) here — and reaching the threshold compacts there."""
    probe = read_session([str(write(tmp_path, turn_end_session(9000).text()))])
    reply = probe.tokens[1]                       # the reply's share of the growth
    f = write(tmp_path, turn_end_session(10000 - reply + delta).text())
    assert read_session([str(f)]).tokens[1] == reply
    r = run_main("replay", "--json", "--policy", "threshold:5", str(f))
    run = json.loads(r.out)["sessions"][0]["policies"][0]
    assert run["compaction_points"][0]["request"] == before


def two_requests(tmp_path, prompt: int):
    """Compacting does not pay a minute after the second request (``prompt`` tokens)."""
    s = ClaudeSession()
    s.user("hello")
    s.response([text("hi")], (3, 20000, 0))
    s.user("thanks")
    s.response([text("welcome")], (3, prompt - 20003, 20000))
    return write(tmp_path, s.text())


@pytest.mark.parametrize("prompt, margin, blocked", [
    (25_000, "87.5", False), (24_999, "87.5", True),        # 200,000 × (1 − 87.5 %)
    (25_000, "0", True), (25_000, "100", False)])
def test_pre_compact_never_blocks_at_or_past_the_margin(prompt, margin, blocked, tmp_path,
                                                        monkeypatch):
    """The hook blocks an automatic compaction that does not pay, unless the context is
    within the margin of the window's end (exactly at it included)."""
    f = two_requests(tmp_path, prompt)
    now = read_session([str(f)]).last_time(None) + 60
    decided = json.loads(run_main("--json", "--now", repr(now), str(f)).out)
    assert decided["decision"] == "skip"
    monkeypatch.setattr(time, "time", lambda: now)
    r = run_main("hook", "pre-compact", "--margin", margin,
                 stdin=json.dumps({"transcript_path": str(f), "trigger": "auto"}).encode(),
                 environ={"COMPACT_DP_CACHE": str(tmp_path / "cache")})
    assert r.status == 0 and r.err == ""                 # a margin from 0 to 100 is fine
    if blocked:
        assert json.loads(r.out) == {"decision": "block", "reason": (
            "compact-dp: an automatic compaction does not pay yet: compacting would lose "
            f"${-decided['best_benefit']:,.2f} over ~{decided['derived']['R']:,.0f} more "
            f"requests; {prompt:,} of 200,000 tokens used")}
    else:
        assert r.out == ""


@pytest.mark.parametrize("prompt, blocked", [(180_000, False), (179_999, True)])
def test_pre_compact_keeps_a_10_percent_margin_when_none_is_given(prompt, blocked, tmp_path,
                                                                  monkeypatch):
    """Installed as `hook pre-compact`, with no --margin: the last 10 % of the window
    (180,000 of 200,000 tokens, exactly there included) is never held back, since the
    next request might not fit; a token short of it, a compaction that does not pay (the
    last one left nearly all the context, so another would gain little) is."""
    s = ClaudeSession()
    s.user("hello")
    s.response([text("hi")], (3, 19997, 0))
    s.boundary("auto", 20000)                  # a compaction that left nearly all of it
    s.summary()
    s.response([text("continuing")], (3, prompt - 1003, 0))
    s.user("thanks")
    s.response([text("welcome")], (3, 1000, prompt - 1003))
    f = write(tmp_path, s.text())
    now = read_session([str(f)]).last_time(None) + 60
    decided = json.loads(run_main("--json", "--now", repr(now), str(f)).out)
    assert (decided["decision"], decided["session"]["last_request_tokens"]) == \
        ("skip", prompt)
    monkeypatch.setattr(time, "time", lambda: now)
    r = run_main("hook", "pre-compact",
                 stdin=json.dumps({"transcript_path": str(f), "trigger": "auto"}).encode(),
                 environ={"COMPACT_DP_CACHE": str(tmp_path / "cache")})
    assert r.status == 0 and r.err == ""
    assert (json.loads(r.out)["decision"] if r.out else None) == \
        ("block" if blocked else None)


@pytest.mark.parametrize("context, action, status", [("180000", "skip", 1),
                                                     ("180001", "compact", 0)])
def test_a_claude_code_session_is_forced_only_past_90_percent_of_its_window(
        context, action, status, tmp_path):
    f = write(tmp_path, claude_session().text())
    r = run_main("--json", "--now", "1800000000", "--trigger", "auto", "--context-tokens",
                 context, str(f))
    got = json.loads(r.out)
    assert got["decision"] == "skip"
    assert (r.status, got["action"], got["forced"]) == (status, action, action == "compact")


# --- where S comes from ------------------------------------------------------------------------

def no_compaction(tmp_path):
    s = ClaudeSession()
    s.user("hello")
    s.response([text("hi")], (3, 20000, 0))
    s.user("more")
    s.response([text("ok")], (3, 100, 20000))
    return write(tmp_path, s.text(), "plain.jsonl")


@pytest.mark.parametrize("session, environ, S, source", [
    ("plain", {"DP_S": "1234"}, 1234.0, "env DP_S"),
    ("compacted", {"DP_S": "1234"}, None, "from the session: the last compaction's summary"),
    ("plain", {}, None, "the median summary of claude-code sessions"),
])
def test_dp_s_sets_the_summary_of_a_claude_code_session_that_records_none(
        session, environ, S, source, tmp_path):
    """The session's own summary wins over DP_S; DP_S wins over the profile's."""
    f = no_compaction(tmp_path) if session == "plain" else \
        write(tmp_path, claude_session().text())
    got = json.loads(run_main("--json", "--now", "1800000000", str(f),
                              environ=environ).out)["session"]
    assert got["sources"]["S"].startswith(source)
    if S is not None:
        assert got["summary_tokens"] == S
    if session == "compacted":
        assert got["summary_tokens"] == float(json.loads(run_main(
            "--json", "--now", "1800000000", str(f)).out)["session"]["summary_tokens"])
    given = json.loads(run_main("--json", "--now", "1800000000", "--summary-tokens", "777",
                                str(f), environ=environ).out)["session"]
    assert (given["summary_tokens"], given["sources"]["S"]) == (777.0, "given")


def test_dp_s_moves_the_decision_of_a_claude_code_session(tmp_path):
    f = no_compaction(tmp_path)
    small = json.loads(run_main("--json", "--now", "1800000000", str(f),
                                environ={"DP_S": "10"}).out)
    large = json.loads(run_main("--json", "--now", "1800000000", str(f),
                                environ={"DP_S": "50000"}).out)
    assert large["terms"]["compact_cost"] > small["terms"]["compact_cost"]
    assert (large["terms"]["compact_cost"] - small["terms"]["compact_cost"]) == \
        pytest.approx((50000 - 10) * 25 / 1e6, rel=1e-9)           # opus output, $25/MTok


# --- Ctrl-C ------------------------------------------------------------------------------------

def unread(fd: int) -> int:
    """Bytes written to a pipe that its reader has not read yet."""
    import array
    buf = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, buf)
    return buf[0]


@pytest.mark.parametrize("argv", [["--turns", "5", "-"], ["replay", "-"]],
                         ids=["decision", "replay"])
def test_ctrl_c_while_reading_is_one_line_and_exit_130(argv, tmp_path):
    """The decision (or replay, a command typer runs: it turns Ctrl-C into a silent exit
    130 of its own) reading a session from a pipe that stays open: SIGINT, once it has
    read what was sent, ends it with the documented status and one line."""
    read_end, write_end = os.pipe()
    # as at a terminal: SIGINT at its default (a background job of a script, like this
    # test run under `cmd &`, inherits it ignored, and Python then leaves it ignored)
    p = subprocess.Popen([command_path(), *argv], stdin=read_end,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env(),
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    os.close(read_end)
    try:
        os.write(write_end, (INPUTS / "syn_40.jsonl").read_bytes()[:3000])
        deadline = time.monotonic() + 30
        while unread(write_end) and time.monotonic() < deadline:
            time.sleep(0.02)                          # until it is waiting for more
        time.sleep(0.2)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        os.close(write_end)
        if p.poll() is None:
            p.kill()
    assert (p.returncode, out, err) == (130, b"", b"compact-dp: interrupted\n")


@pytest.mark.parametrize("option", [
    ("--trigger", "auto", "--force-percent", "0"), ("--context-tokens", "0"),
    ("--p-write", "0")])
def test_zero_is_a_legal_value_of_every_option_that_takes_one(option, tmp_path):
    """0 % force, a context of 0 tokens and a write chance of 0 are values a user may give:
    the answer comes, with no word on stderr (a bound written ``> 0`` would refuse them)."""
    r = run_main(*option, "--json", str(two_requests(tmp_path, 25_000)))
    assert r.status in (0, 1) and r.err == ""
    assert "decision" in json.loads(r.out) or "action" in json.loads(r.out)


@pytest.mark.parametrize("trigger", ["manual", None, "", "AUTO", "something"])
def test_pre_compact_blocks_only_an_automatic_compaction(trigger, tmp_path, monkeypatch):
    """Only the agent's own compaction (trigger "auto") is ever held back: one the user
    asked for (/compact), or a hook input with no or another trigger, gets nothing, where
    the same moment's "auto" is blocked."""
    f = two_requests(tmp_path, 24_999)
    now = read_session([str(f)]).last_time(None) + 60
    monkeypatch.setattr(time, "time", lambda: now)

    def hook(**fields) -> str:
        r = run_main("hook", "pre-compact", "--margin", "87.5",
                     stdin=json.dumps({"transcript_path": str(f), **fields}).encode(),
                     environ={"COMPACT_DP_CACHE": str(tmp_path / "cache")})
        assert r.status == 0
        return r.out
    assert json.loads(hook(trigger="auto"))["decision"] == "block"
    assert hook(**({} if trigger is None else {"trigger": trigger})) == ""


# --- what is not a regular file --------------------------------------------------------------

@pytest.fixture
def pipe(tmp_path):
    """A named pipe with no writer: opening it to read would wait forever, and replacing
    it would put a file where the pipe was."""
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return path


def still_a_pipe(path) -> bool:
    import stat
    return stat.S_ISFIFO(os.lstat(path).st_mode) and not os.path.exists(f"{path}.bak")


def test_calibrate_does_not_write_over_what_is_not_a_regular_file(pipe):
    p = run_cli("calibrate", "--output", str(pipe), str(ROOT / "examples"))
    assert p.returncode == 2 and b"is not a regular file; not touching it" in p.stderr
    assert p.stderr.count(b"\n") <= 2 and still_a_pipe(pipe)


def test_a_file_is_never_written_over_what_is_not_a_regular_file(pipe, tmp_path):
    """write_atomic, under every file compact-dp writes: a pipe (or /dev/null) stays
    what it is; ``replay --plot`` has no other guard."""
    from compact_dp.files import NotARegularFile, write_atomic
    with pytest.raises(NotARegularFile):
        write_atomic(str(pipe), "x")
    assert still_a_pipe(pipe)
    svg = tmp_path / "pipe.svg"
    os.mkfifo(svg)
    p = run_cli("replay", "--plot", str(svg), str(ROOT / "examples" / "claude-code.jsonl"))
    assert p.returncode == 2 and p.stderr.endswith(
        b"not a regular file; not touching it\n") and still_a_pipe(svg)


def test_install_neither_waits_on_nor_replaces_a_settings_pipe(pipe):
    p = run_cli("install", "claude-code", "--settings", str(pipe))
    assert p.returncode == 2 and p.stderr.endswith(
        b"is not a regular file; not touching it\n") and still_a_pipe(pipe)
    assert not [f for f in os.listdir(pipe.parent) if f != pipe.name]


@pytest.mark.parametrize("hook", ["user-prompt-submit", "pre-compact"])
def test_a_hook_whose_transcript_is_a_pipe_says_nothing_at_once(hook, pipe):
    """Claude Code waits on its hooks: a transcript that is a pipe is no transcript."""
    p = run_cli("hook", hook, input=json.dumps(
        {"transcript_path": str(pipe), "trigger": "auto"}).encode())
    assert (p.returncode, p.stdout, p.stderr) == (0, b"", b"")


def test_the_status_line_names_a_transcript_that_is_a_pipe(pipe):
    """The status line, as the hooks, does not wait on a pipe until its own time runs out
    ("too slow to read"): it says at once what the path is (cut to the line's length)."""
    p = run_cli("statusline", "--color", "never",
                input=json.dumps({"transcript_path": str(pipe)}).encode())
    said = p.stdout.decode().strip().removeprefix("compact-dp: ").removesuffix("…")
    assert p.returncode == 0 and len(said) > 20
    assert f"{pipe}: not a regular file; not touching it".startswith(said)


def test_a_folder_s_pipe_named_like_a_session_is_passed_over(pipe, tmp_path):
    from compact_dp.history import find_sessions
    os.rename(pipe, tmp_path / "live.jsonl")
    (tmp_path / "real.jsonl").write_bytes(claude_session().text())
    os.symlink(tmp_path / "gone", tmp_path / "dangling.jsonl")      # said, not passed over
    assert sorted(os.path.basename(f) for f in find_sessions([str(tmp_path)])) == [
        "dangling.jsonl", "real.jsonl"]
