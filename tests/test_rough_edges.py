"""The rough edges a new user hit (issue 28, "Why 7"), each run as the user ran it — the
installed command in a subprocess, or the in-process command (``run_main``) — and held to
what the user now sees."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from compact_dp.calibration.profile import BUILT_IN

from .conftest import ROOT, clean_env, command_path, run_cli, run_main
from .session_fixtures import claude_session, claude_turns

EXAMPLES = ROOT / "examples"
NOW = "1800000000"


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def table_rows(out: str) -> tuple[list[str], list[list[str]]]:
    """The header and the rows (the total last) of the first ASCII table in ``out``."""
    lines = [line for line in out.splitlines() if line.startswith("|")]
    return cells(lines[0]), [cells(line) for line in lines[1:] if not line.startswith("|-")]


def sessions_folder(tmp_path: Path) -> Path:
    """Three Claude Code sessions of 4, 9 and 6 requests, in projects with long names (the
    columns cannot all fit 60 characters)."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name, turns in (("a", [2, 2]), ("b", [3, 3, 3]), ("c", [3, 3])):
        s = claude_turns(turns, grow=4000, session_id=f"{name * 8}-0000", ids=name,
                         cwd=f"/home/me/a-project-with-a-long-name-{name}")
        (folder / f"{name}.jsonl").write_bytes(s.text())
    return folder


# --- --sort -----------------------------------------------------------------------------------

def test_the_column_sorted_by_stays_in_sight_and_the_order_is_said(tmp_path):
    folder = str(sessions_folder(tmp_path))
    narrow = {"COLUMNS": "60"}
    header, _ = table_rows(run_main("replay", folder, environ=narrow).out)
    assert "requests" not in header                   # the width drops it by default
    r = run_main("replay", "--sort", "requests", folder, environ=narrow)
    header, rows = table_rows(r.out)
    at = header.index("requests")
    assert [row[at] for row in rows] == ["9", "6", "4", "19"]
    assert "rows sorted by requests, the largest first." in " ".join(r.out.split())
    r = run_main("replay", "--sort", "saving", "--policy", "recorded", "--policy",
                 "threshold:50", "--policy", "never", folder, environ=narrow)
    header, rows = table_rows(r.out)
    assert "threshold:50" in header                   # the first compared: the one sorted by
    assert "rows sorted by threshold:50's saving, the largest first." in \
        " ".join(r.out.split())


def test_rows_by_day_sorted_by_project_is_an_error_not_a_silent_date_order(tmp_path):
    folder = str(sessions_folder(tmp_path))
    for by in ("day", "month"):
        r = run_main("replay", "--by", by, "--sort", "project", folder)
        assert (r.status, r.out) == (2, "")
        assert r.err == (f"compact-dp: error: --sort project: rows by {by} have no project "
                         "(sort them by date, requests, cost, saving, or use --by project)\n")
    assert run_main("replay", "--by", "project", "--sort", "project", folder).status == 0


# --- the profile --------------------------------------------------------------------------------

def test_replay_names_the_profile_its_dp_used(tmp_path):
    """calibrate changes replay's numbers: the replay says which profile made them."""
    config = tmp_path / "config"
    environ = {"XDG_CONFIG_HOME": str(config)}
    session = str(EXAMPLES / "claude-code.jsonl")
    words = lambda out: " ".join(out.split())           # noqa: E731 (the text, unwrapped)
    before = run_main("replay", session, environ=environ)
    assert "dp's forecast and compaction figures: the built-in profile (make calibrate: " \
        "real sessions of other projects)." in words(before.out)
    calibrated = run_main("calibrate", str(EXAMPLES), environ=environ)
    assert calibrated.status == 0
    mine = config / "compact-dp" / "profile.json"
    for argv in ([session], [session, str(EXAMPLES / "codex.jsonl")]):
        after = run_main("replay", *argv, environ=environ)
        assert f"dp's forecast and compaction figures: the profile (2 sessions of your own) " \
            f"in\n{mine}\n" in after.out.replace("own)\nin", "own) in")
    (got,) = json.loads(run_main("replay", "--json", session, environ=environ).out)["sessions"]
    assert got["profile"] == {"source": "2 sessions of your own", "path": str(mine)}
    (seed,) = json.loads(run_main("replay", "--json", "--model", "v3.0.7", session,
                                  environ=environ).out)["sessions"]
    assert "profile" not in seed                      # a seed model uses none


def test_the_api_reads_the_profile_and_settings_as_the_command_does(tmp_path, monkeypatch):
    import compact_dp
    config = tmp_path / "config"
    assert run_main("calibrate", str(EXAMPLES), environ={"XDG_CONFIG_HOME": str(config)}
                    ).status == 0
    monkeypatch.delenv("COMPACT_DP_PROFILE", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("DP_BETA", "0.2")
    session = EXAMPLES / "claude-code.jsonl"
    cli = run_cli("--json", "--now", NOW, str(session), env={**os.environ})
    assert cli.returncode == 0
    api = compact_dp.load(session).decide(now=float(NOW)).as_dict()
    assert api == json.loads(cli.stdout)
    assert api["session"]["profile"]["path"] == str(config / "compact-dp" / "profile.json")
    alone = compact_dp.load(session).decide(now=float(NOW), environ={}).as_dict()
    assert alone["session"]["profile"]["path"] == BUILT_IN and alone != api


# --- files written where the user said ----------------------------------------------------------

def test_calibrate_output_into_a_missing_folder_is_refused_as_install_refuses(tmp_path):
    nowhere = tmp_path / "nowhere" / "deeper"
    r = run_cli("calibrate", "--output", str(nowhere / "p.json"), str(EXAMPLES))
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr.decode() == (f"compact-dp: error: --output: {nowhere} does not exist; "
                                 "not creating it (make it first, or leave --output out for "
                                 "the default)\n")
    assert not (tmp_path / "nowhere").exists()
    r = run_cli("install", "claude-code", "--settings", str(nowhere / "settings.json"))
    assert r.returncode == 2 and r.stderr.decode() == (
        f"compact-dp: error: --settings: {nowhere} does not exist; not creating it (make it "
        "first, or leave --settings out for the default)\n")
    # the default path's own folders are made: the config folder and compact-dp's in it,
    # but never one above them
    config = tmp_path / "fresh" / "config"
    (tmp_path / "fresh").mkdir()
    r = run_cli("calibrate", str(EXAMPLES), env=clean_env(XDG_CONFIG_HOME=str(config)))
    assert r.returncode == 0 and (config / "compact-dp" / "profile.json").exists()
    above = tmp_path / "no" / "config"
    r = run_cli("calibrate", str(EXAMPLES), env=clean_env(XDG_CONFIG_HOME=str(above)))
    assert r.returncode == 2 and not (tmp_path / "no").exists()
    assert f"{tmp_path / 'no'} does not exist; not creating it" in r.stderr.decode()


def test_a_file_where_the_folder_should_be_is_called_not_a_folder(tmp_path):
    """Not "does not exist": the path is there, as a file (install --settings says so
    too, as it reads the settings: "cannot read …: Not a directory")."""
    file = tmp_path / "notes.txt"
    file.write_text("hello\n")
    r = run_cli("calibrate", "--output", str(file / "p.json"), str(EXAMPLES))
    assert (r.returncode, r.stdout) == (2, b"")
    assert r.stderr.decode() == f"compact-dp: error: --output: {file} is not a folder\n"
    assert file.read_text() == "hello\n"


# --- help ---------------------------------------------------------------------------------------

def test_the_help_lists_every_command():
    from compact_dp.cli.main import COMMANDS
    out = run_cli("--help").stdout.decode()
    listed = out[out.index("\nCommands:\n"):]
    for name in COMMANDS:
        assert re.search(rf"^  {re.escape(name)}\b", listed, re.M), name
    assert {"backtest", "calibrate"} <= set(COMMANDS)
    for name in COMMANDS:                              # and each one is one to run
        r = run_main("help", name, environ={"COLUMNS": "80"})
        assert r.status == 0 and r.out.startswith("Usage: compact-dp"), name


# --- a closed pipe ------------------------------------------------------------------------------

def test_replay_json_into_head_exits_0_quietly(tmp_path):
    """More than a pipe holds (64 KiB), so the reader is gone while we write."""
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(8):              # eight sessions (not copies: requests of their own)
        data = (EXAMPLES / "claude-code.jsonl").read_bytes()
        (folder / f"s{i}.jsonl").write_bytes(data.replace(b'"requestId":"',
                                                          f'"requestId":"s{i}'.encode()))
    assert len(run_cli("replay", "--json", str(folder)).stdout) > 65536
    env = {k: v for k, v in clean_env().items() if k != "PYTHONUNBUFFERED"}  # unbuffered,
    # a write cut short by the closed pipe goes unnoticed: as a user runs it, buffered
    p = subprocess.run(["bash", "-o", "pipefail", "-c",
                        f"'{command_path()}' replay --json --jobs 1 '{folder}' | head -c 10"],
                       capture_output=True, env=env, timeout=120)
    assert (p.returncode, p.stdout, p.stderr) == (0, b'{"schema_v', b"")


@pytest.mark.parametrize("argv", [
    ["replay", "--json", str(EXAMPLES / "claude-code.jsonl")],
    ["replay", str(EXAMPLES / "claude-code.jsonl"), str(EXAMPLES / "codex.jsonl")],
    ["backtest", "--json", str(EXAMPLES / "claude-code.jsonl")],
    ["prices", "--json"], ["--help"], ["replay", "--help"],
    ["--explain", str(EXAMPLES / "claude-code.jsonl")],
    ["-v", "t=5", "-f", "compact_dp.awk", str(ROOT / "golden" / "inputs" / "syn_40.jsonl")],
], ids=lambda a: " ".join(x for x in a if "/" not in x))
def test_a_stdout_closed_before_any_write_is_no_error_for_any_command(argv):
    """... but for the awk form, which ends as awk does: killed by SIGPIPE."""
    r, w = os.pipe()
    os.close(r)
    p = subprocess.run([command_path(), *argv], stdout=w, stderr=subprocess.PIPE,
                       env=clean_env(), timeout=120)
    os.close(w)
    awk_form = "compact_dp.awk" in argv
    assert (p.returncode, p.stderr) == (-13 if awk_form else 0, b"")


def test_the_awk_form_on_a_closed_pipe_ends_as_awk_does():
    import shutil
    awk = shutil.which("mawk") or shutil.which("gawk") or shutil.which("awk")
    if awk is None:
        pytest.skip("no awk here to compare with")
    codes = []
    for cmd in ([awk, "BEGIN { print 1 }"],
                [command_path(), "-f", "compact_dp.awk",
                 str(ROOT / "golden" / "inputs" / "syn_40.jsonl")]):
        r, w = os.pipe()
        os.close(r)
        codes.append(subprocess.run(cmd, stdout=w, stderr=subprocess.PIPE,
                                    env=clean_env(), timeout=60).returncode)
        os.close(w)
    assert codes[0] == codes[1] == -13


# --- files that are no session ------------------------------------------------------------------

SUMMARIES = ('{"type":"summary","summary":"Fixing the parser","leafUuid":"a1"}\n'
             '{"type":"summary","summary":"Docs","leafUuid":"b2"}\n')


def test_a_file_of_only_summary_lines_is_called_a_claude_code_file_without_conversation(
        tmp_path):
    f = tmp_path / "summaries.jsonl"
    f.write_text(SUMMARIES)
    expected = f"{f}: a Claude Code file with no conversation in it (only summary lines)"
    r = run_main(str(f))
    assert (r.status, r.err) == (2, f"compact-dp: error: {expected}\n")
    assert "--format bash-agent" not in r.err
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / "s.jsonl").write_bytes(claude_session().text())
    (folder / "summaries.jsonl").write_text(SUMMARIES)
    r = run_main("replay", str(folder))
    assert r.status == 0 and f"warning: skipped {folder / 'summaries.jsonl'}: a Claude Code " \
        "file with no conversation in it (only summary lines)" in r.err


def test_an_empty_file_in_a_folder_is_left_out_with_a_note_not_counted_as_a_session(tmp_path):
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / "s.jsonl").write_bytes(claude_session().text())
    (folder / "t.jsonl").write_bytes(claude_session(session_id="t-2", ids="t").text())
    (folder / "empty.jsonl").write_bytes(b"")
    r = run_main("replay", str(folder), environ={"COLUMNS": "120"})
    assert r.status == 0
    assert "compact-dp: left out 1 empty file in the folders (no session in it)\n" in r.err
    _, rows = table_rows(r.out)
    assert [row[1] for row in rows] == ["s-1", "t-2", "2 sessions"]
    assert "empty" not in r.out.replace("empty file", "")
    (got,) = [s for s in json.loads(run_main("replay", "--json", str(folder)).out)["skipped"]]
    assert got == {"session": str(folder / "empty.jsonl"),
                   "error": "an empty file, no session in it"}
    r = run_main("replay", str(folder / "empty.jsonl"))          # named: an error
    assert (r.status, r.err) == (2, f"compact-dp: error: {folder / 'empty.jsonl'}: an empty "
                                    "file, no session in it\n")
    assert run_main(str(folder / "empty.jsonl")).out == "0\n"    # the decision: awk's 0


def test_an_unreadable_subfolder_is_said_not_skipped_in_silence(tmp_path, monkeypatch):
    folder = tmp_path / "home"
    locked = folder / "locked"
    locked.mkdir(parents=True)
    (folder / "s.jsonl").write_bytes(claude_session().text())
    (locked / "t.jsonl").write_bytes(claude_session(session_id="t-2").text())
    locked.chmod(0)
    try:
        if os.geteuid() == 0:           # root reads it all the same: list it as a user would
            real = os.scandir

            def scandir(path="."):
                if os.fspath(path) == str(locked):
                    raise PermissionError(13, "Permission denied", os.fspath(path))
                return real(path)
            monkeypatch.setattr(os, "scandir", scandir)
        r = run_main("replay", str(folder))
    finally:
        locked.chmod(0o755)
    assert r.status == 0
    assert r.err == (f"compact-dp: warning: cannot read the folder {locked} (Permission "
                     "denied): its sessions are left out\n")


# --- the hooks ----------------------------------------------------------------------------------

@pytest.mark.parametrize("hook", ["user-prompt-submit", "pre-compact"])
def test_a_hook_on_a_transcript_that_is_no_session_says_so_in_words(hook, tmp_path):
    summaries = tmp_path / "summaries.jsonl"
    summaries.write_text(SUMMARIES)
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    for path, words in ((summaries, "a Claude Code file with no conversation in it (only "
                                    "summary lines)"),
                        (notes, "not a session in a known format (bash-agent, claude-code, "
                                "codex, openai)"),
                        (tmp_path / "missing.jsonl", None)):
        stdin = json.dumps({"transcript_path": str(path), "trigger": "auto"}).encode()
        p = run_cli("hook", hook, input=stdin)
        err = p.stderr.decode()
        assert (p.returncode, p.stdout) == (0, b"")          # never breaks Claude Code
        assert "internal error" not in err and "NotASession" not in err
        if words is None:
            assert err == (f"compact-dp: hook {hook}: cannot open: {path}: No such file or "
                           "directory, so the hook says nothing\n")
        else:
            assert err == f"compact-dp: hook {hook}: {path}: {words}, so the hook says nothing\n"


# --- wording ------------------------------------------------------------------------------------

def test_one_is_singular_everywhere(tmp_path):
    folder = tmp_path / "home"
    (folder / ".claude" / "projects" / "p").mkdir(parents=True)
    (folder / ".claude" / "projects" / "p" / "s.jsonl").write_bytes(
        (EXAMPLES / "claude-code.jsonl").read_bytes())
    r = run_main("replay", "--by", "session", environ={"HOME": str(folder)})
    assert f"compact-dp: Claude Code: 1 session file in {folder}/.claude/projects\n" in r.err
    _, rows = table_rows(r.out)
    assert rows[-1][:2] == ["total", "1 session"]
    r = run_main("calibrate", "--dry-run", str(EXAMPLES / "claude-code.jsonl"),
                 environ={"HOME": str(folder)})
    assert "claude-code: level" in r.out and "(1 session);" in r.out
    assert r.err == "compact-dp: calibrate: 1 session read\n"
    r = run_main("backtest", str(EXAMPLES / "claude-code.jsonl"), environ={"COLUMNS": "200"})
    assert "on 100% of 1 session of 100 or more requests" in r.out
    assert "1 sessions" not in r.out + r.err
    one = tmp_path / "one.jsonl"                        # a session of one request
    one.write_bytes(claude_turns([1]).text())
    r = run_main("replay", str(one), environ={"COLUMNS": "200"})
    assert "1 request ·" in r.out and " over 1 request (" in r.out
    assert not re.search(r"\b1 (request|session|compaction)s\b", r.out + r.err), r.out


def test_calibrate_says_its_success_plainly_not_as_a_warning(tmp_path):
    target = tmp_path / "p.json"
    r = run_main("calibrate", "--output", str(target), str(EXAMPLES))
    assert r.status == 0 and "warning" not in r.err
    assert r.err.splitlines()[-1] == f"compact-dp: calibrate: profile written to {target}"
    r = run_main("calibrate", "--output", str(target), str(EXAMPLES))
    assert r.err.splitlines()[-1] == (f"compact-dp: calibrate: profile written to {target} "
                                      f"(the one it replaces kept as {target}.bak)")


def test_uninstall_dry_run_labels_a_file_it_would_delete_removed(tmp_path):
    made = tmp_path / "made" / "settings.json"          # install creates it, uninstall deletes
    made.parent.mkdir()
    kept = tmp_path / "kept" / "settings.json"          # it was there before: it stays
    kept.parent.mkdir()
    kept.write_text('{"model": "opus"}\n')
    for f in (made, kept):
        assert run_main("install", "claude-code", "--settings", str(f)).status == 0
    out = run_main("uninstall", "claude-code", "--dry-run", "--settings", str(made)).out
    assert out.splitlines()[:2] == [f"--- {made}", f"+++ {made} (removed)"]
    assert made.exists()
    out = run_main("uninstall", "claude-code", "--dry-run", "--settings", str(kept)).out
    assert out.splitlines()[:2] == [f"--- {kept}", f"+++ {kept} (new)"]


def test_token_counts_are_written_one_way_a_million_as_1m(tmp_path):
    status = {"context_window": {"context_window_size": 1_000_000, "current_usage": {
        "input_tokens": 5_000, "cache_creation_input_tokens": 50_000,
        "cache_read_input_tokens": 500_000}}}
    r = run_main("statusline", "--color", "never", stdin=json.dumps(status).encode(),
                 environ={"COMPACT_DP_CACHE": str(tmp_path)})
    assert "ctx 555k/1M 56%" in r.out and "1,000k" not in r.out
    status["context_window"]["context_window_size"] = 999_999
    r = run_main("statusline", "--color", "never", stdin=json.dumps(status).encode(),
                 environ={"COMPACT_DP_CACHE": str(tmp_path)})
    assert "ctx 555k/1M " in r.out                     # not "1,000k"
    prices = run_main("prices", "claude-opus-4-6", "gpt-5.1-codex").out
    assert re.search(r"\|claude-opus-4-6 .*\|\s+1M \|", prices)
    assert re.search(r"\|gpt-5.1 .*\|\s+400k \|", prices)


@pytest.mark.parametrize("argv, hint", [
    (["replay", "--bogus"], ""),                        # no option is like it
    (["--bogus", "x"], ""),
    (["replay", "--josn"], " (did you mean --json?)"),
    (["replay", "--polcy", "dp"], " (did you mean --policy?)"),
    (["--jso", "x"], " (did you mean --json?)"),
    (["backtest", "--evry", "2"], " (did you mean --every?)"),
    # two edits only where both the typo and the name have six letters or more
    (["--exlpin", "x"], " (did you mean --explain?)"),
    (["--exlan", "x"], ""),
])
def test_an_unknown_option_gets_a_suggestion_only_when_one_is_close(argv, hint):
    r = run_main(*argv)
    typo = next(a for a in argv if a.startswith("--"))
    assert (r.status, r.out) == (2, "")
    assert r.err == f"compact-dp: error: no such option: {typo}{hint}\n"


# --- backtest ----------------------------------------------------------------------------------

def test_backtest_tables_columns_are_each_sessions_scores():
    """Each number in the backtest table is the score its header names, as --json has it:
    "$ said / got" the summed ratio (the legend gives the median), "ρ" the rank
    correlation, and so on, for every session and the total."""
    files = [str(EXAMPLES / "claude-code.jsonl"), str(EXAMPLES / "codex.jsonl")]
    header, rows = table_rows(run_main("backtest", *files, environ={"COLUMNS": "200"}).out)
    doc = json.loads(run_main("backtest", "--json", *files).out)
    scores = [r["scores"] for r in doc["sessions"]] + [doc["total"]["scores"]]
    names = {"R / actual": "forecast_bias", "log err / elapsed's":
             "forecast_log_error_vs_elapsed", "$ said / got": "dollars_sum_ratio",
             "ρ": "dollars_spearman"}
    assert len(rows) == len(scores) and set(names) <= set(header)
    for row, s in zip(rows, scores):
        for column, field in names.items():
            x = s[field] if s is not None else None
            assert row[header.index(column)] == ("-" if x is None else f"{x:.2f}")
    assert scores[0]["dollars_sum_ratio"] != scores[0]["dollars_median_ratio"]


def test_backtest_names_each_session_as_replay_does():
    files = [str(EXAMPLES / "claude-code.jsonl"), str(EXAMPLES / "codex.jsonl")]
    wide = {"COLUMNS": "200"}
    _, replayed = table_rows(run_main("replay", *files, environ=wide).out)
    header, tested = table_rows(run_main("backtest", *files, environ=wide).out)
    assert header[:2] == ["project", "session"]
    assert [row[:2] for row in tested] == [row[:2] for row in replayed]
    assert [row[:2] for row in tested][:2] == [["project", "0f0e0d0c…"], ["p", "0199-exa…"]]
    assert not any("jsonl" in c for row in tested for c in row)


# --- what an installed copy points to -----------------------------------------------------------

REPOSITORY = "https://github.com/compact-dp/compact-dp/"


def in_repository(url: str) -> Path | None:
    """The file of this repository a GitHub address names (blob/ or tree/ on main)."""
    m = re.fullmatch(re.escape(REPOSITORY) + r"(?:blob|tree)/main/(.*)", url)
    return ROOT / m.group(1) if m else None


def test_the_installed_hooks_readme_links_only_what_an_install_has():
    installed = Path(run_cli("hooks", "path").stdout.decode().strip())
    text = (installed / "README.md").read_text()
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert links
    for target in links:
        target = target.split("#")[0]
        if target.startswith("http"):
            assert in_repository(target) is not None and in_repository(target).exists(), \
                target
        else:
            assert (installed / target).exists(), f"{target}: not in the installed copy"


def test_no_help_page_points_to_a_docs_folder_an_install_lacks():
    from compact_dp.cli.main import COMMANDS
    pages = [run_cli("--help").stdout.decode()] + \
        [run_cli(name, "--help").stdout.decode() for name in COMMANDS if name != "help"]
    named = 0
    for page in pages:
        addresses = re.findall(r"https://\S+", page)
        for url in addresses:
            assert in_repository(url) is not None and in_repository(url).exists(), url
        rest = re.sub(r"https://\S+", "", page)
        assert not re.search(r"\b[\w-]+\.md\b|docs/|in the docs", rest), rest
        named += sum(url.endswith(".md") for url in addresses)
    assert named >= 8            # the decision's, replay's, backtest's, calibrate's, …


def test_explain_counts_one_request_and_one_summary_in_the_singular(tmp_path):
    """`--explain` on a session of one request, never compacted: "j = 1 request so far"
    and "c + 1 = 1 summary", not "1 requests" and "1 summaries"; two keep the plural."""
    from .session_fixtures import turns_session
    one = tmp_path / "one.jsonl"
    one.write_bytes(turns_session([[900]]).text())
    out = run_cli("--explain", str(one)).stdout.decode()
    assert "with j = 1 request so far" in out and "= 1 summary " in out
    assert "1 requests" not in out and "1 summaries" not in out
    two = tmp_path / "two.jsonl"
    two.write_bytes(turns_session([[900, 900]], compacted=None).text())
    out = run_cli("--explain", str(two)).stdout.decode()
    assert "with j = 2 requests so far" in out


def test_calibrate_names_each_file_it_skips_and_why(tmp_path):
    """As replay does: one warning a skipped file, its path and its reason, and then the
    count."""
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes((ROOT / "examples" / "claude-code.jsonl").read_bytes())
    (folder / "b.jsonl").write_text('{"type":"summary"}\n')
    (folder / "c.jsonl").write_text("garbage\n")
    r = run_cli("calibrate", "--output", str(tmp_path / "out.json"), str(folder))
    err = r.stderr.decode()
    assert r.returncode == 0, err
    assert f"warning: skipped {folder / 'b.jsonl'}: a Claude Code file with no conversation" \
        in err
    assert f"warning: skipped {folder / 'c.jsonl'}: not a session in a known format" in err
    assert "1 session read, 2 files skipped" in err


def test_a_profile_of_extreme_but_legal_numbers_answers_everywhere(tmp_path):
    """A level of 1e300 passes the profile's checks (finite, above 0): the forecast stays
    a count (10¹² at most) and the decision, replay and the status line answer, where the
    schedule's arithmetic once overflowed into an internal error."""
    body = json.loads((ROOT / "compact_dp" / "calibration" / "default.json").read_text())
    body["agents"]["claude-code"]["level"] = 1e300
    body["agents"]["claude-code"]["compaction_seconds_per_mtok"] = 1e300
    path = tmp_path / "extreme.json"
    path.write_text(json.dumps(body))
    env = clean_env(COMPACT_DP_PROFILE=str(path), COMPACT_DP_CACHE=str(tmp_path / "cache"))
    example = str(EXAMPLES / "claude-code.jsonl")
    decided = run_cli("--json", example, env=env)
    assert decided.returncode == 0, decided.stderr
    assert json.loads(decided.stdout)["derived"]["R"] == 1e12
    assert run_cli("replay", example, env=env).returncode == 0
    line = run_cli("statusline", "--color", "never", env=env, input=json.dumps(
        {"transcript_path": example}).encode())
    text = line.stdout.decode()
    assert line.returncode == 0 and line.stderr == b"" and text.startswith(
        ("/compact now", "not yet")) and len(text) < 200        # no 300-digit days
