"""The status line, whole: each case it words (docs/claude-code.md) — compacting pays, not
yet, the cache warm or cold with its minutes, the moment right after a compaction, Claude
Code's own cache state, no transcript — asserted as the entire line, at a fixed moment.
And on any input, in a fresh process: exactly one line, exit 0."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from compact_dp.sessions.read import read_session

from .conftest import clean_env, command_path, run_main, write
from .session_fixtures import claude_session
from .test_claude_code import EXAMPLES

# The wording of the decision part when compacting pays: the one place it is pinned.
# ``money``: the net benefit as the line writes dollars; ``requests``: R, the requests the
# benefit is counted over (the --json's derived.R).
SAVES = "/compact now saves ~{money} over ~{requests} more requests"
NOT_YET = "not yet: compacting would lose {money} over ~{requests} more requests"


def dollars(x: float) -> str:
    """Dollars as the status line writes them: cents from $0.10 on, else three places."""
    return f"${x:,.2f}" if abs(x) >= 0.1 else f"${x:.3f}"


def took(seconds: float) -> str:
    """How long compacting takes, as the line writes it: seconds under 90, then minutes."""
    return f"~{seconds:.0f} s" if seconds < 90 else f"~{seconds / 60:.0f} min"


def decision_words(obj: dict) -> str:
    """The decision part the line must show for a --json decision (and how long compacting
    takes, when the profile timed compactions of the agent)."""
    if obj["decision"] == "compact":
        words = SAVES.format(money=dollars(obj["best_benefit"]),
                             requests=f'{obj["derived"]["R"]:,.0f}')
        seconds = obj.get("compaction_seconds")
        return words + (f" · {took(seconds)} to compact" if seconds is not None else "")
    return NOT_YET.format(money=dollars(-obj["best_benefit"]),
                          requests=f'{obj["derived"]["R"]:,.0f}')


def tokens_words(n: float) -> str:
    return f"{n / 1000:,.0f}k" if n >= 10_000 else f"{n / 1000:.1f}k" if n >= 1000 \
        else f"{n:.0f}"


def line_at(monkeypatch, tmp_path, status: dict, now: float, *args: str) -> str:
    """The status line for ``status`` at the moment ``now`` (the clock stopped there)."""
    monkeypatch.setattr(time, "time", lambda: now)
    r = run_main("statusline", "--color", "never", *args, stdin=json.dumps(status).encode(),
                 environ={"COMPACT_DP_CACHE": str(tmp_path / "cache")})
    assert r.status == 0 and r.err == "" and r.out.endswith("\n")
    assert r.out.count("\n") == 1
    return r.out[:-1]


def decided(path, now: float) -> dict:
    r = run_main("--json", "--now", repr(now), str(path))
    assert r.status == 0, r.err
    return json.loads(r.out)


def transcript_context(obj: dict) -> str:
    """ctx from the transcript (no usage in the JSON): V plus the live messages."""
    used = obj["session"]["prefix_tokens"] + obj["session"]["context_tokens"]
    return f"ctx {tokens_words(used)}/200k {100 * used / 200000:.0f}%"


WINDOW = {"context_window": {"context_window_size": 200000}}


def test_when_compacting_pays_the_line_says_so_with_the_context_and_the_warm_cache(
        monkeypatch, tmp_path):
    path = EXAMPLES / "claude-code.jsonl"
    last = read_session([str(path)]).last_time(None)
    obj = decided(path, last + 60)
    assert obj["decision"] == "compact"
    got = line_at(monkeypatch, tmp_path, {"transcript_path": str(path), **WINDOW}, last + 60)
    assert got == f"{decision_words(obj)} · {transcript_context(obj)} · cache warm 4m left"


@pytest.mark.parametrize("idle, cache", [
    (60, "cache warm 59m left"), (3599, "cache warm 1s left"),
    (3615, "cache warm 0s left"), (3616, "cache cold 16s"),                # the grace
    (3600 + 19 * 60, "cache cold 19m"), (3600 + 4.2 * 3600, "cache cold 4.2h"),
    (3600 + 3 * 86400, "cache cold 3d")])
def test_not_yet_with_what_compacting_would_lose_and_the_caches_time(
        idle, cache, monkeypatch, tmp_path):
    """The written session writes with the 1-hour TTL: warm with its minutes left, then
    cold for as long as it has been past the TTL."""
    f = write(tmp_path, claude_session().text())
    last = read_session([str(f)]).last_time(None)
    obj = decided(f, last + idle)
    assert obj["decision"] == "skip"
    status = {"transcript_path": str(f), "context_window": {
        "context_window_size": 200000, "current_usage": {
            "input_tokens": 1, "cache_creation_input_tokens": 400,
            "cache_read_input_tokens": 23500}}}
    got = line_at(monkeypatch, tmp_path, status, last + idle)
    assert got == f"{decision_words(obj)} · ctx 24k/200k 12% · {cache}"


def test_right_after_a_compaction_the_context_comes_from_the_transcript(
        monkeypatch, tmp_path):
    """The boundary and its summary are written, no request yet, and Claude Code sends a
    null usage: the context is V and the summary."""
    built = claude_session()
    built.lines = built.lines[:-3]                          # up to the summary
    f = write(tmp_path, built.text())
    last = read_session([str(f)]).last_time(None)
    obj = decided(f, last + 60)
    status = {"transcript_path": str(f), "context_window": {
        "context_window_size": 200000, "current_usage": None, "used_percentage": None}}
    got = line_at(monkeypatch, tmp_path, status, last + 60)
    assert got == f"{decision_words(obj)} · {transcript_context(obj)} · cache warm 4m left"


def test_right_after_a_compaction_that_followed_the_last_reply_nothing_is_weighed_yet(
        monkeypatch, tmp_path):
    built = claude_session()
    built.lines = built.lines[:-4]                          # up to the boundary
    f = write(tmp_path, built.text())
    last = read_session([str(f)]).last_time(None)
    status = {"transcript_path": str(f), "context_window": {
        "context_window_size": 200000, "current_usage": None}}
    got = line_at(monkeypatch, tmp_path, status, last + 60)
    assert got == "no compaction to weigh yet · cache warm 4m left"


@pytest.mark.parametrize("cache, words", [
    ({"warm": True, "expires_at": "NOW+125"}, "cache warm 2m left"),
    ({"warm": False, "expires_at": "NOW-600"}, "cache cold 10m"),
    ({"warm": True, "expires_at": "NOW-30"}, "cache cold 30s"),
    ({"warm": False, "expires_at": "NOW+100"}, "cache cold"),      # since when: unknown
    ({"warm": True}, "cache warm"), ({"warm": False}, "cache cold"),
    ({"expires_at": "NOW+9e9"}, "cache cold 19m")])          # not a time: the transcript's
def test_claude_codes_own_cache_state_wins_over_the_transcripts_clock(
        cache, words, monkeypatch, tmp_path):
    f = write(tmp_path, claude_session().text())
    now = read_session([str(f)]).last_time(None) + 3600 + 19 * 60
    prompt_cache = {k: now + float(v[3:]) if isinstance(v, str) else v
                    for k, v in cache.items()}
    status = {"transcript_path": str(f), **WINDOW, "prompt_cache": prompt_cache,
              "context_window": {"context_window_size": 200000, "used_percentage": 71.6}}
    got = line_at(monkeypatch, tmp_path, status, now)
    assert got == f"{decision_words(decided(f, now))} · ctx 24k/200k 72% · {words}"


@pytest.mark.parametrize("status, line", [
    ({}, "compact-dp: no transcript yet"),
    ({"context_window": {"used_percentage": 42, "context_window_size": 200000}},
     "ctx ?/200k 42% · compact-dp: no transcript yet"),
    ({"context_window": {"context_window_size": 200000, "current_usage": {
        "input_tokens": 3, "cache_creation_input_tokens": 997,
        "cache_read_input_tokens": 8000}}}, "ctx 9.0k/200k 4% · compact-dp: no transcript yet"),
    ({"transcript_path": "/no/such/t.jsonl"},
     "compact-dp: /no/such/t.jsonl: No such file or directory")])
def test_without_a_transcript_the_line_says_what_it_can(status, line, monkeypatch, tmp_path):
    assert line_at(monkeypatch, tmp_path, status, 1.8e9) == line


def test_colours_mark_each_part_and_a_context_past_70_percent(monkeypatch, tmp_path):
    f = write(tmp_path, claude_session().text())
    now = read_session([str(f)]).last_time(None) + 60
    status = {"transcript_path": str(f), "context_window": {
        "context_window_size": 200000, "used_percentage": 70}}
    monkeypatch.setattr(time, "time", lambda: now)
    r = run_main("statusline", "--color", "always", stdin=json.dumps(status).encode(),
                 environ={"COMPACT_DP_CACHE": str(tmp_path / "cache")})
    words = decision_words(decided(f, now))
    assert r.out == (f"\x1b[2m{words}\x1b[0m · \x1b[33mctx 24k/200k 70%\x1b[0m · "
                     "\x1b[32mcache warm 59m left\x1b[0m\n")
    status["context_window"]["used_percentage"] = 69.4
    r = run_main("statusline", "--color", "always", stdin=json.dumps(status).encode(),
                 environ={"COMPACT_DP_CACHE": str(tmp_path / "cache")})
    assert " · ctx 24k/200k 69% · " in r.out


@pytest.mark.parametrize("n, words", [(999, "999"), (1000, "1.0k"), (9949, "9.9k"),
                                      (9999, "10.0k"), (10_000, "10k"), (142_499, "142k")])
def test_token_counts_are_written_short(n, words):
    from compact_dp.integrations.statusline import tokens_text
    assert tokens_text(n) == words == tokens_words(n)


# --- any input, in a fresh process -------------------------------------------------------------

def test_any_input_gives_exactly_one_line_and_exit_0(tmp_path):
    """The installed command, nothing imported beforehand, on a sample of what a broken
    or hostile client could send."""
    folder = tmp_path / "a folder"
    folder.mkdir()
    binary = write(tmp_path, b"\x00\xff\xfe garbage \n\x80\x81\n", "binary.jsonl")
    inputs = [b"", b"\xff\xfe\x00", b"[" * 100_000, b'{"transcript_path": 42}',
              b'{"transcript_path": "' + str(folder).encode() + b'"}',
              b'{"transcript_path": "' + str(binary).encode() + b'"}',
              b'{"transcript_path": "/tmp/x\\nevil.jsonl"}',
              b'{"context_window": {"context_window_size": -5, "used_percentage": 1e308}}',
              json.dumps({"transcript_path": str(EXAMPLES / "claude-code.jsonl"),
                          "prompt_cache": {"expires_at": "soon", "warm": "yes"}}).encode()]
    env = clean_env(COMPACT_DP_DEBUG="1", COMPACT_DP_CACHE=str(tmp_path / "cache"))
    for data in inputs:
        p = subprocess.run([command_path(), "statusline"], input=data, capture_output=True,
                           env=env, timeout=60)
        out = p.stdout.decode()
        assert p.returncode == 0 and out.count("\n") == 1 and out.endswith("\n"), (data, p)
        assert "Traceback" not in p.stderr.decode(), p.stderr


# --- a transcript the status line has read before -------------------------------------------

def test_a_transcript_rewritten_in_place_at_the_same_size_is_read_again(tmp_path):
    """Claude Code only appends, but a file changed in place near where the last call
    stopped (the same inode, the same size) must not be taken for the one read: its last
    write's TTL changes from 1 hour to 5 minutes here."""
    from compact_dp.sessions.incremental import read_incremental
    f = write(tmp_path, claude_session().text())
    cache = str(tmp_path / "cache")
    assert read_incremental(str(f), cache).session.recorded_ttl == "1h"
    data = f.read_bytes()
    at = data.rindex(b'"ephemeral_1h_input_tokens":400')
    with open(f, "r+b") as out:                   # in place: same inode, same size
        out.seek(at)
        out.write(b'"ephemeral_1h_input_tokens":000')
    again = read_incremental(str(f), cache)
    assert not again.resumed and again.session.recorded_ttl == "5m"
    assert again.session.totals() == read_session([str(f)]).totals()
    # read again as a transcript, to go on from: the next call reads nothing
    assert not again.session.full
    after = read_incremental(str(f), cache)
    assert after.resumed and after.bytes_read == 0


@pytest.mark.parametrize("seconds, short, long", [
    (0, "0s", "0 s"), (59.4, "59s", "59 s"), (60, "1m", "60 s"), (89, "1m", "89 s"),
    (90, "2m", "2 min"), (3599, "60m", "60 min"), (3600, "1.0h", "60 min"),
    (5399, "1.5h", "90 min"), (5400, "1.5h", "1.5 h"), (172799, "48.0h", "48.0 h"),
    (172800, "2d", "2 days"), (459 * 86400, "459d", "459 days"),
    (36524 * 86400, "36524d", "36524 days"), (36525 * 86400, ">100y", "over 100 years"),
    (1e300, ">100y", "over 100 years")])
def test_durations_change_unit_at_a_minute_an_hour_and_two_days(seconds, short, long):
    """The status bar's short form changes unit at 60 s, 60 min and 48 h; --explain's at
    90 s, 90 min and 48 h; past a century neither counts (a clock or a profile gone
    wrong once printed 300 digits of days), while a real session's 459 days are said."""
    from compact_dp.views.words import duration
    assert (duration(seconds, short=True), duration(seconds)) == (short, long)


def test_a_hand_edited_state_costs_one_fresh_read_never_an_error(tmp_path):
    """A state whose reader loads but holds a value of another type (a model's name that
    is a number) made every later call print the error: the call that meets it reads the
    transcript afresh and replaces the state."""
    import marshal

    from .conftest import run_cli
    example = EXAMPLES / "claude-code.jsonl"
    env = clean_env(COMPACT_DP_CACHE=str(tmp_path / "cache"))
    stdin = json.dumps({"transcript_path": str(example)}).encode()

    def line() -> bytes:
        p = run_cli("statusline", "--color", "never", input=stdin, env=env)
        assert p.returncode == 0 and p.stderr == b""
        return p.stdout
    first = line()
    state, = (tmp_path / "cache").glob("*.state")
    saved = marshal.loads(state.read_bytes())
    saved["reader"]["recorder"]["llms"].append(1.5)
    state.write_bytes(marshal.dumps(saved))
    assert line() == first
    assert 1.5 not in marshal.loads(state.read_bytes())["reader"]["recorder"]["llms"]
    assert line() == first


@pytest.mark.parametrize("home, xdg, where", [
    ("{tmp}", "", "{tmp}/.cache/compact-dp"),
    ("{tmp}", "{tmp}/xdg", "{tmp}/xdg/compact-dp"),
    ("{tmp}", "relative/xdg", "{tmp}/.cache/compact-dp"),      # the XDG rule: ignored
    ("", "", ""), ("relative", "", ""),                        # no home: no cache
    ("", "{tmp}/xdg", "{tmp}/xdg/compact-dp"),
    ("{tmp}/missing", "", "")])                                 # never made: no cache
def test_the_cache_folder_is_never_a_home_it_makes_nor_at_the_root(home, xdg, where, tmp_path):
    """An empty HOME once put the cache in /.cache, a missing one was created."""
    import os

    from compact_dp.sessions.incremental import cache_dir
    if os.uname().sysname == "Darwin":
        pytest.skip("macOS keeps it in ~/Library/Caches")

    def fill(text: str) -> str:
        return text.replace("{tmp}", str(tmp_path))
    environ = {"HOME": fill(home), "XDG_CACHE_HOME": fill(xdg)}
    assert cache_dir(environ) == fill(where)


def test_with_no_home_to_keep_a_cache_in_the_status_line_answers_and_writes_nothing(
        tmp_path):
    from .conftest import run_cli
    env = {k: v for k, v in clean_env().items() if k not in ("COMPACT_DP_CACHE",
                                                             "XDG_CACHE_HOME")}
    env["HOME"] = str(tmp_path / "missing")
    stdin = json.dumps({"transcript_path": str(EXAMPLES / "claude-code.jsonl")}).encode()
    p = run_cli("statusline", "--color", "never", input=stdin, env=env, cwd=str(tmp_path))
    assert p.returncode == 0 and p.stdout.startswith((b"/compact now", b"not yet"))
    assert list(tmp_path.iterdir()) == []


def test_no_cache_folder_names_no_file_a_relative_path_would_find_in_the_working_folder():
    """cache_dir's "" is no cache: not a state or project cache of the same name in
    whatever folder the agent runs the status line from."""
    from compact_dp.calibration.project import cache_file
    from compact_dp.sessions.incremental import _cache_file
    assert _cache_file("", "/p/s.jsonl") == "" and cache_file("", "/p") == ""
    assert _cache_file("/c", "/p/s.jsonl").startswith("/c/") and cache_file("/c", "/p") \
        .startswith("/c/project-")


def test_a_bug_in_deciding_is_read_afresh_once_then_said(tmp_path, monkeypatch):
    """The fresh read is for a state of another shape; an error that is not the state's
    must not send every later call through a whole new read of a long transcript."""
    import time as clock

    from compact_dp.integrations import live
    example = str(EXAMPLES / "claude-code.jsonl")
    environ = {"COMPACT_DP_CACHE": str(tmp_path / "cache")}
    assert live.decide_transcript(example, environ, 5.0, clock.time())[1] is not None
    fresh = []
    read = live.read_incremental

    def counted(*args, **kw):
        fresh.append(kw.get("afresh", False))
        return read(*args, **kw)

    def bug(*args, **kw):
        raise ValueError("a bug")
    monkeypatch.setattr(live, "read_incremental", counted)
    monkeypatch.setattr(live, "decide_session", bug)
    for _ in range(3):
        with pytest.raises(ValueError, match="a bug"):
            live.decide_transcript(example, environ, 5.0, clock.time())
    assert fresh == [False, True, False, False]
