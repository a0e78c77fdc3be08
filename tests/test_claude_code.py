"""Claude Code: the status line, the hooks and the one-step install (docs/claude-code.md)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from compact_dp.integrations import settings as cc_settings
from compact_dp.integrations.statusline import OutOfTime, _with_budget
from compact_dp.sessions.incremental import read_incremental
from compact_dp.sessions.read import read_session

from .conftest import ROOT, clean_env, command_path, cut, run_main, transcripts
from .session_fixtures import ClaudeSession, claude_session, dumps, text

ANSI = "\x1b["
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def status_json(path: Path | str | None, session=None, **extra) -> bytes:
    """The statusLine JSON Claude Code would send for a transcript."""
    obj: dict = {"session_id": "s", "model": {"id": "claude-opus-4-6",
                                             "display_name": "Opus"}}
    if path is not None:
        obj["transcript_path"] = str(path)
    if session is not None and session.requests:
        u = session.requests[-1].usage
        obj["context_window"] = {"context_window_size": 200000, "current_usage": {
            "input_tokens": u.input, "cache_creation_input_tokens": u.written,
            "cache_read_input_tokens": u.read, "output_tokens": u.output}}
    obj.update(extra)
    return json.dumps(obj).encode()


def statusline(data: bytes, tmp_path: Path, **environ: str):
    return run_main("statusline", stdin=data,
                    environ={"COMPACT_DP_CACHE": str(tmp_path / "cache"), **environ})


def decision_of(path: Path | str) -> str:
    r = run_main("--json", str(path))
    assert r.status == 0, r.err
    return json.loads(r.out)["decision"]


# --- the status line -----------------------------------------------------------------------

@pytest.mark.parametrize("share", [0.15, 0.3, 0.5, 0.7, 0.85, 1.0])
def test_statusline_on_real_sessions_cut_part_way(share, tmp_path):
    """Every shared real session, cut as a live session looks: one line, exit 0, and
    "/compact now" in it exactly when compact-dp --json says compact."""
    for path in transcripts():
        f = cut(path, share, tmp_path)
        session = read_session([str(f)])
        r = statusline(status_json(f, session), tmp_path)
        assert r.status == 0 and r.out.count("\n") == 1, r.out
        assert ("/compact now" in r.out) == (decision_of(f) == "compact"), (path.name, r.out)


def written_session(tmp_path: Path, last_gap: float = 0.0, start: float | None = None,
                    name: str = "t.jsonl") -> Path:
    """The written Claude Code session, its clock moved so that it ended ``last_gap``
    seconds ago."""
    built = claude_session()
    data = built.text().decode()
    if start is not None:
        data = shift_times(built, data, start)
    f = tmp_path / name
    f.write_text(data)
    return f


def shift_times(built: ClaudeSession, data: str, end: float) -> str:
    """Rewrite the timestamps so the last request happened at ``end``."""
    from compact_dp.sessions.timefmt import parse_time
    out = []
    last = max(parse_time(json.loads(line).get("timestamp")) or 0
               for line in data.splitlines())
    for line in data.splitlines():
        obj = json.loads(line)
        t = parse_time(obj.get("timestamp"))
        if t is not None:
            moved = t - last + end
            obj["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moved)) + \
                f".{int(moved % 1 * 1000):03d}Z"
        out.append(dumps(obj))
    return "\n".join(out) + "\n"


def test_statusline_warm_cache_shows_time_left(tmp_path):
    """The last request a minute ago (1-hour writes): warm, with the time left."""
    f = written_session(tmp_path, start=time.time() - 60)
    r = statusline(status_json(f, read_session([str(f)])), tmp_path)
    assert "cache warm" in r.out and "left" in r.out
    assert ("/compact now" in r.out) == (decision_of(f) == "compact")


def test_statusline_prefers_claude_codes_prompt_cache(tmp_path):
    f = written_session(tmp_path)
    data = status_json(f, prompt_cache={"warm": True, "ttl": "5m",
                                        "expires_at": time.time() + 125})
    assert "cache warm 2m left" in statusline(data, tmp_path).out
    data = status_json(f, prompt_cache={"warm": False, "expires_at": time.time() - 600})
    assert "cache cold 10m" in statusline(data, tmp_path).out


def test_statusline_cold_cache(tmp_path):
    f = written_session(tmp_path)                     # recorded in March 2026: long cold
    r = statusline(status_json(f), tmp_path)
    assert "cache cold" in r.out


def test_statusline_just_after_a_compaction(tmp_path):
    """A boundary and its summary, no request yet, current_usage null: still one line
    that agrees with --json."""
    built = claude_session()
    built.lines = built.lines[:-3]                    # up to the summary line
    assert '"compact_boundary"' in built.lines[-2] and "continued" in built.lines[-1]
    f = tmp_path / "just.jsonl"
    f.write_bytes(built.text())
    data = status_json(f, context_window={"context_window_size": 200000,
                                          "current_usage": None, "used_percentage": None})
    r = statusline(data, tmp_path)
    assert r.status == 0 and r.out.count("\n") == 1
    assert ("/compact now" in r.out) == (decision_of(f) == "compact")


@pytest.mark.parametrize("data", [b"", b"{}", b"not json", b"[1, 2]",
                                  b'{"transcript_path": null}',
                                  b'{"transcript_path": "/no/such/file.jsonl"}',
                                  b'{"transcript_path": "/tmp"}',
                                  b'{"context_window": {"used_percentage": 42}}'])
def test_statusline_with_missing_fields_or_transcript_prints_one_short_line(data, tmp_path):
    r = statusline(data, tmp_path)
    assert r.status == 0 and r.out.count("\n") == 1 and len(r.out) < 120
    assert "Traceback" not in r.out + r.err and "/compact" not in r.out


def test_statusline_colour_only_where_wanted(tmp_path):
    f = written_session(tmp_path)
    assert ANSI in statusline(status_json(f), tmp_path).out        # Claude Code renders it
    assert ANSI not in statusline(status_json(f), tmp_path, NO_COLOR="1").out
    assert ANSI not in run_main("statusline", "--color", "never", stdin=status_json(f),
                                environ={"COMPACT_DP_CACHE": str(tmp_path)}).out


@pytest.mark.parametrize("args", [["--color", "bogus"], ["--color=sometimes"],
                                  ["--color"]])
def test_a_bad_colour_mode_is_said_on_stderr_and_the_line_still_prints(args, tmp_path):
    f = EXAMPLES / "claude-code.jsonl"
    r = run_main("statusline", *args, stdin=status_json(f),
                 environ={"COMPACT_DP_CACHE": str(tmp_path)})
    assert r.status == 0 and r.out.count("\n") == 1 and "/compact" in r.out
    assert r.err.count("\n") == 1 and "not one of auto|always|never" in r.err
    assert ANSI in r.out                                 # auto, as without the option


def test_an_empty_compact_dp_cache_means_the_default_cache_folder(tmp_path):
    """COMPACT_DP_CACHE= is unset, as for every env var here: the reader's state goes
    to $XDG_CACHE_HOME/compact-dp, and nowhere else."""
    f = EXAMPLES / "claude-code.jsonl"
    r = run_main("statusline", stdin=status_json(f),
                 environ={"COMPACT_DP_CACHE": "", "XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert r.status == 0 and "/compact" in r.out
    assert len(list((tmp_path / "xdg" / "compact-dp").glob("*.state"))) == 1


def test_statusline_never_outlives_its_budget(monkeypatch, tmp_path):
    """A transcript that takes too long gives the short line, not a hang."""
    import compact_dp.integrations.statusline as sl
    monkeypatch.setattr(sl, "BUDGET", 0.05)
    with pytest.raises(OutOfTime):
        _with_budget(lambda: slow(2.0))

    def stuck(*a, **k):
        slow(2.0)
    monkeypatch.setattr("compact_dp.integrations.live.read_incremental", stuck)
    r = statusline(status_json(written_session(tmp_path)), tmp_path)
    assert "too slow" in r.out and r.status == 0 and r.out.count("\n") == 1


def slow(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_statusline_and_hooks_start_light(tmp_path):
    """Neither typer nor rich on the status line's path (python -X importtime); and the
    status line, reading a real transcript, not even json (re, enum) or signal's enums:
    lightjson and _signal do their work for a third of the start-up."""
    data = status_json(EXAMPLES / "claude-code.jsonl")
    for argv in (["statusline"], ["hook", "user-prompt-submit"]):
        p = subprocess.run([sys.executable, "-X", "importtime", "-m", "compact_dp", *argv],
                           input=data, capture_output=True, timeout=60,
                           env=clean_env(COMPACT_DP_CACHE=str(tmp_path)))
        imported = {line.split("|")[-1].strip().split(".")[0]
                    for line in p.stderr.decode().splitlines()
                    if line.startswith("import time:")}
        assert p.returncode == 0 and "compact_dp" in imported
        assert not imported & {"typer", "rich", "click", "pydantic", "orjson"}
        if argv == ["statusline"]:
            assert b"/compact" in p.stdout                  # it did decide
            assert not imported & {"json", "re", "enum"}


# --- reading only what was appended -----------------------------------------------------------

def test_a_second_call_reads_only_the_appended_bytes(tmp_path):
    built = claude_session()
    lines = built.text().split(b"\n")
    f = tmp_path / "grow.jsonl"
    f.write_bytes(b"\n".join(lines[:20]) + b"\n")
    cache = str(tmp_path / "cache")
    first = read_incremental(str(f), cache)
    assert not first.resumed and first.bytes_read == f.stat().st_size
    more = b"\n".join(lines[20:])
    with open(f, "ab") as out:
        out.write(more)
    second = read_incremental(str(f), cache)
    assert second.resumed and second.bytes_read == len(more)
    whole = read_session([str(f)])
    s = second.session
    assert not s.full and not s.kinds and s.totals() == whole.totals()
    third = read_incremental(str(f), cache)                # nothing new: nothing read
    assert third.resumed and third.bytes_read == 0


@pytest.mark.parametrize("first, then", [("bytes", "usage"), ("usage", "bytes"),
                                         ("auto", "bytes")])
def test_a_state_saved_in_one_token_mode_is_not_resumed_in_another(first, then, tmp_path):
    """Messages sized one way are no start for sizing them another: the file is read
    afresh, and the session is the one that mode reads."""
    cache = str(tmp_path / "cache")
    f = written_session(tmp_path)
    read_incremental(str(f), cache, tokens=first)
    again = read_incremental(str(f), cache, tokens=then)
    assert not again.resumed and again.session is not None
    fresh = read_session([str(f)], tokens=then)
    assert again.session.token_source == fresh.token_source
    assert again.session.totals() == fresh.totals()
    assert read_incremental(str(f), cache, tokens=then).resumed     # same mode: resumed


def test_a_rewritten_or_shrunk_transcript_is_read_again(tmp_path):
    cache = str(tmp_path / "cache")
    f = written_session(tmp_path)
    read_incremental(str(f), cache)
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2].rsplit(b"\n", 1)[0] + b"\n")   # shorter
    again = read_incremental(str(f), cache)
    assert not again.resumed
    f.write_bytes(data.replace(b"fix the failing", b"FIX THE FAILING"))  # same size, changed
    read_incremental(str(f), cache)
    assert read_incremental(str(f), cache).session.totals() == \
        read_session([str(f)]).totals()


def test_a_broken_cache_is_ignored_and_replaced(tmp_path):
    cache = tmp_path / "cache"
    f = written_session(tmp_path)
    read_incremental(str(f), str(cache))
    (state,) = cache.iterdir()
    state.write_bytes(b"\x00garbage")
    r = read_incremental(str(f), str(cache))
    assert not r.resumed and r.session.totals() == read_session([str(f)]).totals()
    assert read_incremental(str(f), str(cache)).resumed


WRONG_SHAPES = {
    "a reader field of another type": lambda s: s["reader"]["fields"].update(recent="x"),
    "a recorder field missing": lambda s: s["reader"]["recorder"].pop("kinds"),
    "a sizer field of another type": lambda s: s["reader"]["recorder"]["sizer"].update(n=[]),
    "no reader": lambda s: s.pop("reader"),
    "an offset that is text": lambda s: s.update(offset="12"),
    "an offset before the file's start": lambda s: s.update(offset=-2),
    "a format that does not resume": lambda s: s.update(format="openai"),
}


@pytest.mark.parametrize("name", sorted(WRONG_SHAPES))
def test_a_saved_state_of_another_shape_is_read_afresh_not_refused(name, tmp_path):
    """A state the reader cannot resume (hand-edited, or of a shape a compiled reader
    refuses) costs one fresh read; the status line is never an error because of it."""
    import marshal
    cache = tmp_path / "cache"
    f = written_session(tmp_path)
    whole = f.read_bytes()
    lines = whole.splitlines(keepends=True)
    env = clean_env(COMPACT_DP_CACHE=str(cache))
    fresh = subprocess.run([command_path(), "statusline"], input=status_json(f),
                           capture_output=True, env=env, timeout=60).stdout
    for build in ("source", "compiled"):
        for old in cache.iterdir():
            old.unlink()
        f.write_bytes(b"".join(lines[:-3]))         # saved part-way, then grown
        read_incremental(str(f), str(cache))
        (state,) = cache.iterdir()
        saved = marshal.loads(state.read_bytes())
        WRONG_SHAPES[name](saved)
        state.write_bytes(marshal.dumps(saved))
        f.write_bytes(whole)
        if build == "source":                       # in this process
            r = read_incremental(str(f), str(cache))
            assert r.session.totals() == read_session([str(f)]).totals()
        else:
            p = subprocess.run([command_path(), "statusline"], input=status_json(f),
                               capture_output=True, env=env, timeout=60)
            assert (p.returncode, p.stdout) == (0, fresh)


def test_a_reader_error_met_while_resuming_surfaces_rather_than_restarting_forever(
        monkeypatch, tmp_path):
    """A resumed read that fails is retried from the start once; if the time runs out
    before that read gets back to where the first one failed, the reading goes on from
    it, and the same error met again is said (a bug in the reader, not a state of
    another shape) instead of starting over from the top on every call."""
    import compact_dp.sessions.incremental as inc
    from compact_dp.sessions import read

    feed_block = read.feed_block

    def buggy(reader, block, markers):            # a reader bug on one line
        if not isinstance(block, read.LongLine) and b"BUG" in block:
            raise TypeError("the reader's bug")
        feed_block(reader, block, markers)
    monkeypatch.setattr(read, "feed_block", buggy)
    monkeypatch.setattr(inc, "chunks", lambda f, head: read.chunks(f, head, 4096))
    f = tmp_path / "t.jsonl"
    whole = (EXAMPLES / "claude-code.jsonl").read_bytes()
    f.write_bytes(whole + b'{"type": "user", "BUG": 1}\n')
    calls = 0
    with pytest.raises(TypeError, match="the reader's bug"):
        while calls < 4 * len(whole) // 4096:     # the time always out: a block a call
            calls += 1
            assert read_incremental(str(f), str(tmp_path / "c"), deadline=0.0).session \
                is None


def test_concurrent_calls_leave_a_whole_cache(tmp_path):
    f = written_session(tmp_path)
    data = status_json(f)
    env = clean_env(COMPACT_DP_CACHE=str(tmp_path / "cache"))

    def one(_):
        return subprocess.run([command_path(), "statusline"], input=data,
                              capture_output=True, env=env, timeout=60)
    with ThreadPoolExecutor(6) as pool:
        outs = list(pool.map(one, range(12)))
    assert all(p.returncode == 0 and p.stdout.count(b"\n") == 1 for p in outs)
    assert len({p.stdout for p in outs}) == 1
    assert read_incremental(str(f), str(tmp_path / "cache")).resumed
    assert not [x for x in (tmp_path / "cache").iterdir() if x.name.endswith(".tmp")]


def test_the_transcript_is_only_read(tmp_path):
    f = written_session(tmp_path)
    before = (hashlib.sha256(f.read_bytes()).hexdigest(), f.stat().st_mtime_ns)
    statusline(status_json(f), tmp_path)
    run_main("hook", "user-prompt-submit", stdin=status_json(f),
             environ={"COMPACT_DP_CACHE": str(tmp_path)})
    run_main("hook", "pre-compact", stdin=status_json(f, trigger="auto"),
             environ={"COMPACT_DP_CACHE": str(tmp_path)})
    assert (hashlib.sha256(f.read_bytes()).hexdigest(), f.stat().st_mtime_ns) == before


# --- hooks ------------------------------------------------------------------------------------

def hook(name: str, data: dict, tmp_path: Path, *args: str):
    return run_main("hook", name, *args, stdin=json.dumps(data).encode(),
                    environ={"COMPACT_DP_CACHE": str(tmp_path / "cache")})


def small_session(tmp_path: Path) -> Path:
    """Two short requests: compacting cannot pay yet."""
    s = ClaudeSession()
    s.user("hello")
    s.response([text("hi")], (3, 20000, 0))
    s.user("thanks")
    s.response([text("welcome")], (3, 200, 20000))
    f = tmp_path / "small.jsonl"
    f.write_bytes(s.text())
    return f


def test_user_prompt_submit_speaks_only_when_compacting_pays(tmp_path):
    for path in [small_session(tmp_path)] + list(transcripts()):
        r = hook("user-prompt-submit", {"transcript_path": str(path),
                                        "hook_event_name": "UserPromptSubmit",
                                        "prompt": "next"}, tmp_path)
        assert r.status == 0
        if decision_of(path) == "compact":
            out = json.loads(r.out)["hookSpecificOutput"]
            assert out["hookEventName"] == "UserPromptSubmit"
            assert "/compact" in out["additionalContext"]
        else:
            assert r.out == ""


def test_pre_compact_blocks_only_automatic_compactions_that_do_not_pay(tmp_path):
    f = small_session(tmp_path)
    assert decision_of(f) == "skip"
    auto = hook("pre-compact", {"transcript_path": str(f), "trigger": "auto"}, tmp_path)
    assert json.loads(auto.out)["decision"] == "block" and auto.status == 0
    manual = hook("pre-compact", {"transcript_path": str(f), "trigger": "manual"}, tmp_path)
    assert manual.out == ""
    # within the safety margin of the window: never blocked
    near = hook("pre-compact", {"transcript_path": str(f), "trigger": "auto"}, tmp_path,
                "--margin", "95")
    assert near.out == ""


def test_when_compacting_pays_the_prompt_hook_tells_the_model_and_pre_compact_lets_it_run(
        tmp_path, monkeypatch):
    """The example session, decided as of a fixed moment, pays to compact: the
    UserPromptSubmit hook prints the note Claude Code adds to the model's context — under
    the event name Claude Code looks for, with the saving and the requests of --json — and
    PreCompact blocks nothing (held back, a paying compaction would cost the user)."""
    example, now = ROOT / "examples" / "claude-code.jsonl", 1_800_000_000.0
    decided = json.loads(run_main("--json", "--now", repr(now), str(example)).out)
    assert decided["decision"] == "compact"
    monkeypatch.setattr(time, "time", lambda: now)
    note = hook("user-prompt-submit", {"transcript_path": str(example), "prompt": "next",
                                       "hook_event_name": "UserPromptSubmit"}, tmp_path)
    assert note.status == 0 and note.err == ""
    assert json.loads(note.out) == {"hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit", "additionalContext": (
            "compact-dp: compacting this conversation now would pay — about "
            f"${decided['best_benefit']:,.2f} saved over the "
            f"~{decided['derived']['R']:,.0f} requests still expected — so if the user is "
            "moving to a new step, suggest they run /compact.")}}
    for trigger in ("auto", "manual"):
        r = hook("pre-compact", {"transcript_path": str(example), "trigger": trigger},
                 tmp_path)
        assert (r.status, r.out, r.err) == (0, "", "")


@pytest.mark.parametrize("data", [b"", b"nonsense", b'{"transcript_path": "/nope"}', b"[]"])
@pytest.mark.parametrize("name", ["user-prompt-submit", "pre-compact"])
def test_hooks_never_fail_claude_code(name, data, tmp_path):
    r = run_main("hook", name, stdin=data, environ={"COMPACT_DP_CACHE": str(tmp_path)})
    assert r.status == 0 and r.out == ""


@pytest.mark.parametrize("data", [b"garbage\n", b"", b"[1, 2]", b'{"transcript_path": '])
@pytest.mark.parametrize("name", ["user-prompt-submit", "pre-compact"])
def test_a_hook_given_no_json_object_says_so_in_plain_words(name, data, tmp_path):
    r = run_main("hook", name, stdin=data, environ={"COMPACT_DP_CACHE": str(tmp_path)})
    assert r.status == 0 and r.out == ""
    assert r.err == f"compact-dp: hook {name}: standard input holds no JSON object; " \
        "nothing to do\n"


def with_stdin_left_open(argv: list[str], data: bytes, tmp_path: Path):
    """Run the installed command with ``data`` on a stdin that is never closed (as a
    client that keeps its end of the pipe open would): (status, stdout, stderr) once it
    exits, or the test fails on a hang."""
    p = subprocess.Popen([command_path(), *argv], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=clean_env(COMPACT_DP_CACHE=str(tmp_path)))
    try:
        p.stdin.write(data)
        p.stdin.flush()
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            pytest.fail(f"{' '.join(argv)} still reads its open stdin")
        return p.returncode, p.stdout.read().decode(), p.stderr.read().decode()
    finally:
        p.stdin.close()
        p.stdout.close()
        p.stderr.close()


@pytest.mark.parametrize("argv", [["statusline"], ["hook", "user-prompt-submit"]])
def test_a_stdin_left_open_after_the_json_does_not_hang_the_status_line_or_a_hook(
        argv, tmp_path):
    """The JSON is read until it is complete, not until stdin ends: the answer is the
    same as with stdin closed."""
    data = status_json(EXAMPLES / "claude-code.jsonl")
    status, out, err = with_stdin_left_open(argv, data, tmp_path)
    assert status == 0 and "/compact" in out, err
    assert out == run_main(*argv, stdin=data,
                           environ={"COMPACT_DP_CACHE": str(tmp_path)}).out


@pytest.mark.parametrize("argv", [["statusline"], ["hook", "user-prompt-submit"],
                                  ["hook", "pre-compact"]])
def test_json_that_never_ends_on_an_open_stdin_gives_up_and_exits_0(argv, tmp_path):
    status, out, err = with_stdin_left_open(argv, b'{"transcript_path": "', tmp_path)
    assert status == 0
    assert out.count("\n") == (1 if argv == ["statusline"] else 0)


@pytest.mark.parametrize("argv", [["statusline", "--help"],
                                  ["hook", "user-prompt-submit", "--help"],
                                  ["hook", "pre-compact", "-h"], ["hook", "--help"]])
def test_help_never_reads_stdin(argv, tmp_path):
    status, out, err = with_stdin_left_open(argv, b"", tmp_path)
    assert status == 0 and out.startswith("Usage: compact-dp "), err


# --- install / uninstall ----------------------------------------------------------------------

SETTINGS = {
    "canonical": json.dumps({
        "$schema": "https://json.schemastore.org/claude-code-settings.json",
        "model": "opus", "permissions": {"allow": ["Bash(npm test:*)", "Read(~/.zshrc)"],
                                         "deny": ["Read(./.env)"]},
        "env": {"CLAUDE_CODE_ENABLE_TELEMETRY": "0", "NOTE": "café"},
        "hooks": {"PostToolUse": [{"matcher": "Edit|Write", "hooks": [
            {"type": "command", "command": "prettier --write \"$FILE\""}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command",
                                             "command": "~/bin/log-prompt"}]}]},
        "includeCoAuthoredBy": False}, indent=2, ensure_ascii=False) + "\n",
    "compact": '{"model":"sonnet","permissions":{"allow":[]},"cleanupPeriodDays":30}',
    "four spaces": json.dumps({"theme": "dark", "alwaysThinkingEnabled": True}, indent=4),
    "empty object": "{}\n",
}


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_install_then_uninstall_is_byte_identical(name, tmp_path):
    f = tmp_path / "settings.json"
    f.write_text(SETTINGS[name])
    original = f.read_bytes()
    before = json.loads(original)
    cc_settings.install(str(f), prefix="/opt/bin/compact-dp")
    after = json.loads(f.read_bytes())
    assert after["statusLine"]["command"] == "/opt/bin/compact-dp statusline"
    for key, value in before.items():                  # every other key untouched
        if key != "hooks":
            assert after[key] == value
    for event, groups in before.get("hooks", {}).items():
        assert after["hooks"][event][:len(groups)] == groups
    assert (tmp_path / "settings.json.compact-dp-backup").read_bytes() == original
    cc_settings.uninstall(str(f))
    assert f.read_bytes() == original


def test_install_is_idempotent_and_uninstall_after_edits_keeps_them(tmp_path):
    f = tmp_path / "settings.json"
    f.write_text(SETTINGS["canonical"])
    cdp = "/opt/compact-dp/bin/compact-dp"
    cc_settings.install(str(f), prefix=cdp)
    assert cc_settings.install(str(f), prefix=cdp) == ""            # nothing to change
    data = json.loads(f.read_text())
    data["model"] = "haiku"                                           # the user edits
    f.write_text(json.dumps(data, indent=2) + "\n")
    cc_settings.uninstall(str(f))
    left = json.loads(f.read_text())
    assert left["model"] == "haiku" and "statusLine" not in left
    assert not any(cdp in json.dumps(g) for g in left["hooks"].values())


def test_install_refuses_someone_elses_status_line_without_force(tmp_path):
    f = tmp_path / "settings.json"
    f.write_text(json.dumps({"statusLine": {"type": "command", "command": "~/sl.sh"}}))
    r = run_main("install", "claude-code", "--settings", str(f))
    assert r.status == 2 and "--force" in r.err
    assert json.loads(f.read_text())["statusLine"]["command"] == "~/sl.sh"
    assert run_main("install", "claude-code", "--settings", str(f), "--force").status == 0
    assert "statusline" in json.loads(f.read_text())["statusLine"]["command"]


def test_dry_run_shows_the_diff_and_writes_nothing(tmp_path):
    f = tmp_path / "settings.json"
    f.write_text(SETTINGS["canonical"])
    before = f.read_bytes()
    r = run_main("install", "claude-code", "--settings", str(f), "--dry-run",
                 "--block-auto-compact")
    assert r.status == 0 and r.out.startswith("---") and '+  "statusLine"' in r.out
    assert "PreCompact" in r.out and "hook pre-compact" in r.out
    assert f.read_bytes() == before
    assert not (tmp_path / "settings.json.compact-dp-backup").exists()


def test_install_into_no_settings_file_and_back(tmp_path):
    f = tmp_path / ".claude" / "settings.json"
    f.parent.mkdir()
    assert run_main("install", "claude-code", "--settings", str(f)).status == 0
    assert "statusLine" in json.loads(f.read_text())
    assert run_main("uninstall", "claude-code", "--settings", str(f)).status == 0
    assert not f.exists()


def test_install_without_settings_writes_under_the_home_it_is_given_and_makes_only_dot_claude(
        tmp_path):
    """The default path comes from the run's own HOME (a library caller's environ, not this
    process's): ~/.claude is made for its owner, a folder above it never."""
    home = tmp_path / "home"
    home.mkdir()
    r = run_main("install", "claude-code", environ={"HOME": str(home)})
    f = home / ".claude" / "settings.json"
    assert r.status == 0 and r.out.startswith(f"{f}: status line and hooks installed")
    assert "statusLine" in json.loads(f.read_text())
    assert os.stat(f.parent).st_mode & 0o777 == 0o700
    r = run_main("install", "claude-code", environ={"HOME": str(tmp_path / "nowhere")})
    assert r.status == 2 and not (tmp_path / "nowhere").exists()
    assert run_main("uninstall", "claude-code", environ={"HOME": str(home)}).status == 0
    assert not f.exists()


def test_install_refuses_a_broken_settings_file(tmp_path):
    f = tmp_path / "settings.json"
    f.write_text('{"model": "opus",')
    r = run_main("install", "claude-code", "--settings", str(f))
    assert r.status == 2 and "not valid JSON" in r.err
    assert f.read_text() == '{"model": "opus",'


def test_install_needs_the_claude_code_target(tmp_path):
    r = run_main("install", "cursor", "--settings", str(tmp_path / "s.json"))
    assert r.status == 2 and "claude-code" in r.err


def test_installed_commands_run(tmp_path):
    """The command install writes is one this machine can run."""
    f = tmp_path / "settings.json"
    p = subprocess.run([command_path(), "install", "claude-code", "--settings", str(f)],
                       capture_output=True, env=clean_env(), timeout=60)
    assert p.returncode == 0, p.stderr
    command = json.loads(f.read_text())["statusLine"]["command"]
    run = subprocess.run(command, shell=True, input=b"{}", capture_output=True,
                         env=clean_env(COMPACT_DP_CACHE=str(tmp_path)), timeout=60)
    assert run.returncode == 0 and run.stdout.count(b"\n") == 1


def test_force_then_uninstall_gives_back_the_replaced_status_line(tmp_path):
    """uninstall removes exactly what install added: a statusLine that --force replaced
    comes back, untouched, and after other edits too."""
    f = tmp_path / "settings.json"
    original = ('{\n  "statusLine": {"type": "command", "command": "~/.claude/my.sh"},\n'
                '  "theme": "dark"\n}\n')
    f.write_text(original)
    cc_settings.install(str(f), force=True, prefix="/opt/compact-dp")
    assert "my.sh" in (tmp_path / "settings.json.compact-dp-backup").read_text()
    cc_settings.uninstall(str(f))
    assert f.read_text() == original
    cc_settings.install(str(f), force=True, prefix="/opt/compact-dp")
    data = json.loads(f.read_text())
    data["theme"] = "light"                                           # the user edits
    f.write_text(json.dumps(data))
    cc_settings.uninstall(str(f))
    assert json.loads(f.read_text()) == {"statusLine": {"type": "command",
                                                        "command": "~/.claude/my.sh"},
                                         "theme": "light"}


@pytest.mark.parametrize("original", [
    '{\n    "env": {"NOTE": "caf\\u00e9"},  "hooks": {}, "x": [1, 2]\n}\n',
    "", '{"statusLine": null}'])
def test_installing_twice_then_uninstalling_gives_the_first_file_back(original, tmp_path):
    """The backup is the file before compact-dp was first installed: a second install
    (adding --block-auto-compact) keeps it, so uninstall gives those bytes back."""
    f = tmp_path / "settings.json"
    f.write_text(original)
    cc_settings.install(str(f), prefix="/opt/compact-dp")
    cc_settings.install(str(f), prefix="/opt/compact-dp", block_auto_compact=True)
    assert "PreCompact" in json.loads(f.read_text())["hooks"]
    cc_settings.uninstall(str(f))
    assert f.exists() and f.read_text() == original


def test_settings_keep_their_permissions_and_their_symlink(tmp_path):
    """A settings file may hold API keys: its backup is as private as it is.  A symlinked
    settings.json (dotfile managers) stays a link; its target is what changes, and the
    backup stays beside the link."""
    target = tmp_path / "dotfiles" / "settings.json"
    target.parent.mkdir()
    target.write_text('{"env": {"ANTHROPIC_API_KEY": "sk-secret"}}\n')
    target.chmod(0o600)
    link = tmp_path / "settings.json"
    link.symlink_to(target)
    cc_settings.install(str(link), prefix="/opt/compact-dp")
    assert link.is_symlink() and "statusLine" in json.loads(target.read_text())
    backup = tmp_path / "settings.json.compact-dp-backup"
    assert backup.stat().st_mode & 0o777 == 0o600
    assert target.stat().st_mode & 0o777 == 0o600
    cc_settings.uninstall(str(link))
    assert link.is_symlink() and "sk-secret" in target.read_text()


@pytest.mark.parametrize("data", ['{"hooks": {"UserPromptSubmit": {"oops": 1}}}',
                                  '{"hooks": null}', '{"hooks": []}'])
def test_install_refuses_hooks_of_the_wrong_shape_without_damage(data, tmp_path):
    f = tmp_path / "settings.json"
    f.write_text(data)
    r = run_main("install", "claude-code", "--settings", str(f))
    assert r.status == 2 and "not touching it" in r.err and r.err.count("\n") == 1
    assert f.read_text() == data
    assert not (tmp_path / "settings.json.compact-dp-backup").exists()


def big_session(tmp_path: Path, responses: int = 24, block: int = 200_000) -> Path:
    """A session of several megabytes: more than one read of the status line's chunk."""
    s = ClaudeSession()
    cached = 0
    for i in range(responses):
        s.user(f"step {i}")
        s.response([text("x" * block)], (3, 60_000, cached))
        cached += 60_000
    f = tmp_path / "big.jsonl"
    f.write_bytes(s.text())
    return f


def test_statusline_reading_a_long_transcript_makes_progress_call_by_call(
        tmp_path, monkeypatch):
    """When a transcript takes longer to read than one call may spend, each call reads on
    from where the last stopped and says how far it is; then the line agrees with --json."""
    from compact_dp.integrations import statusline as sl
    monkeypatch.setattr(sl, "READING", -1.0)        # every call stops after one chunk
    f = big_session(tmp_path)
    lines = [statusline(status_json(f), tmp_path).out for _ in range(8)]
    progress = [line for line in lines if "reading the transcript" in line]
    assert 2 <= len(progress) < 8
    shares = [int(line.split("reading the transcript, ")[1].split("%")[0]) for line in progress]
    assert shares == sorted(shares) and len(set(shares)) == len(shares)
    assert ("/compact now" in lines[-1]) == (decision_of(f) == "compact")
    assert "reading" not in lines[-1]


def test_statusline_with_no_cache_says_why_it_reads_on_for_ever(tmp_path, monkeypatch):
    """With no folder to keep its progress in, each call starts over: the line says so,
    where it once showed the same share on every call and never why."""
    from compact_dp.integrations import statusline as sl
    monkeypatch.setattr(sl, "READING", -1.0)
    f = big_session(tmp_path)
    blocked = tmp_path / "a-file"
    blocked.write_text("")                          # a cache "folder" that is a file
    lines = [statusline(status_json(f), tmp_path, COMPACT_DP_CACHE=str(blocked / "c")).out
             for _ in range(3)]
    assert len(set(lines)) == 1 and "reading the transcript, " in lines[0] and \
        "(its progress cannot be saved in a cache folder, so every call starts over)" in \
        lines[0]
    kept = statusline(status_json(f), tmp_path).out
    assert "reading the transcript, " in kept and "cannot be saved" not in kept


def test_statusline_gets_past_a_line_longer_than_a_chunk(tmp_path, monkeypatch):
    from compact_dp.integrations import statusline as sl
    monkeypatch.setattr(sl, "READING", -1.0)
    f = big_session(tmp_path, responses=2, block=3_000_000)
    lines = [statusline(status_json(f), tmp_path).out for _ in range(4)]
    assert "reading" not in lines[-1] and "ctx" in lines[-1]


@pytest.mark.parametrize("model", ["v2", "v3.0.7", "cache-clock"])
def test_statusline_and_hooks_decide_with_any_model(model, tmp_path):
    f = written_session(tmp_path)
    r = statusline(status_json(f), tmp_path, COMPACT_DP_MODEL=model)
    assert r.status == 0 and "compact-dp:" not in r.out
    want = run_main("--json", "--model", model, str(f))
    assert ("/compact now" in r.out) == ('"decision":"compact"' in want.out)
    h = hook("user-prompt-submit", {"transcript_path": str(f)}, tmp_path)
    assert h.status == 0 and h.err == ""


@pytest.mark.parametrize("extra", [
    {"context_window": {"context_window_size": 1e308, "current_usage": {"input_tokens": -5}}},
    {"context_window": {"context_window_size": -100, "used_percentage": float("inf")}},
    {"prompt_cache": {"warm": True, "expires_at": 1e300}},
    {"prompt_cache": {"warm": True, "expires_at": -1e300}},
    {"prompt_cache": {"warm": True, "expires_at": time.time() + 50 * 365 * 86400}},
])
def test_statusline_ignores_absurd_numbers(extra, tmp_path):
    f = written_session(tmp_path)
    plain = statusline(status_json(f), tmp_path).out
    r = statusline(status_json(f, **extra), tmp_path)
    assert r.status == 0 and r.out.count("\n") == 1
    assert not any(word in r.out for word in ("inf", "nan", "-1", "99999"))
    assert not re.search(r"\d{4,}d", r.out)                 # no 18,262 days left
    assert len(r.out) <= len(plain) + 20


@pytest.mark.parametrize("args, warned, blocks", [
    (["--margin", "5"], False, True), (["--margin=5"], False, True),
    (["--margin", "nan"], True, True), (["--margin", "-100"], True, True),
    (["--margin", "100"], False, False), (["--margin=101"], True, True),
])
def test_pre_compact_margin_is_a_percentage(args, warned, blocks, tmp_path):
    """An unusable --margin is said on stderr and the default (10) kept; the hook still
    answers, exit 0."""
    f = small_session(tmp_path)
    r = hook("pre-compact", {"transcript_path": str(f), "trigger": "auto"}, tmp_path, *args)
    assert decision_of(f) == "skip"
    assert r.status == 0 and ("--margin" in r.err) == warned
    assert ('"block"' in r.out) == blocks


def test_install_uninstall_cycles_on_a_new_file_always_take_it_all_out(tmp_path):
    """Uninstall keeps what it replaces as the backup; such a backup (it holds compact-dp's
    entries) is never mistaken for the file before install."""
    f = tmp_path / "settings.json"
    for _ in range(3):
        cc_settings.install(str(f), prefix="/opt/compact-dp")
        assert cc_settings.uninstall(str(f)) != ""
        assert not f.exists()
    f.write_text('{"theme": "dark"}\n')
    for _ in range(2):
        cc_settings.install(str(f), prefix="/opt/compact-dp")
        cc_settings.uninstall(str(f))
        assert f.read_text() == '{"theme": "dark"}\n'


def test_a_backup_an_older_version_left_with_our_entries_is_not_restored(tmp_path):
    f = tmp_path / "settings.json"
    installed_before = cc_settings.dumps_like(
        cc_settings.installed({"theme": "dark"}, "/old/compact-dp", False, False), b"{}\n")
    (tmp_path / "settings.json.compact-dp-backup").write_bytes(installed_before)
    f.write_bytes(cc_settings.dumps_like(
        cc_settings.installed({"theme": "dark"}, "/old/compact-dp", True, False), b"{}\n"))
    cc_settings.uninstall(str(f))
    assert json.loads(f.read_text()) == {"theme": "dark"}


def test_our_status_line_with_options_the_docs_give_is_still_ours(tmp_path):
    f = tmp_path / "settings.json"
    f.write_text('{"theme": "dark"}\n')
    cc_settings.install(str(f), prefix="/opt/compact-dp")
    data = json.loads(f.read_text())
    data["statusLine"]["command"] += " --color never"                   # docs/claude-code.md
    data["hooks"]["UserPromptSubmit"][0]["hooks"].append({"type": "command",
                                                          "command": "echo mine"})
    f.write_text(json.dumps(data))
    assert cc_settings.install(str(f), prefix="/opt/compact-dp") != ""  # not "foreign"
    cc_settings.uninstall(str(f))
    left = json.loads(f.read_text())
    assert "statusLine" not in left and "compact-dp" not in f.read_text()
    assert left["hooks"]["UserPromptSubmit"] == [{"hooks": [{"type": "command",
                                                             "command": "echo mine"}]}]


def test_settings_that_cannot_be_written_are_one_line_and_unchanged(tmp_path):
    f = tmp_path / "settings.json"
    f.write_text('{"theme": "dark"}\n')
    f.chmod(0o444)
    r = run_main("install", "claude-code", "--settings", str(f))
    assert r.status == 2 and "read-only" in r.err and r.err.count("\n") == 1
    f.chmod(0o644)
    (tmp_path / "settings.json.compact-dp-backup").mkdir()
    r = run_main("install", "claude-code", "--settings", str(f))
    assert r.status == 2 and "cannot write" in r.err and r.err.count("\n") == 1
    assert f.read_text() == '{"theme": "dark"}\n'


def test_every_hook_event_must_be_a_list(tmp_path):
    f = tmp_path / "settings.json"
    f.write_text('{"hooks": {"Stop": 5}}')
    r = run_main("install", "claude-code", "--settings", str(f))
    assert r.status == 2 and '"Stop"' in r.err and f.read_text() == '{"hooks": {"Stop": 5}}'


def test_the_install_message_names_the_backup_that_exists(tmp_path):
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text("{}\n")
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    r = run_main("install", "claude-code", "--settings", str(link))
    assert f"backup: {link}.compact-dp-backup" in r.out
    new = tmp_path / "new" / "settings.json"
    new.parent.mkdir()
    r = run_main("install", "claude-code", "--settings", str(new))
    assert r.status == 0 and "backup" not in r.out


def test_hooks_read_a_long_transcript_across_calls_and_say_nothing_meanwhile(
        tmp_path, monkeypatch):
    from compact_dp.integrations import hooks as cc_hooks
    monkeypatch.setattr(cc_hooks, "READING", -1.0)     # every call stops after one chunk
    f = big_session(tmp_path)
    outs = [hook("user-prompt-submit", {"transcript_path": str(f)}, tmp_path)
            for _ in range(8)]
    assert all(r.status == 0 and r.err == "" for r in outs)
    assert outs[0].out == ""
    assert bool(outs[-1].out) == (decision_of(f) == "compact")


def test_a_transcript_shorter_than_the_check_is_read_again_from_its_state(tmp_path):
    """The status line's reader saves a checksum of the last bytes it read (CHECK of them);
    a transcript shorter than that — a new session of one snapshot line — is resumed from
    its state as well, not refused ("Invalid argument" from a seek before the start)."""
    from compact_dp.sessions.incremental import CHECK, read_incremental
    path = tmp_path / "new.jsonl"
    path.write_bytes(b'{"type":"file-history-snapshot"}\n')
    assert path.stat().st_size < CHECK
    first = read_incremental(str(path), str(tmp_path / "cache"))
    again = read_incremental(str(path), str(tmp_path / "cache"))
    assert first.session is not None and again.session is not None
    assert again.resumed and again.bytes_read == 0 and again.session.requests == []
