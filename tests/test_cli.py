"""Both command lines: exit statuses, errors as one line, stdin, several files, awk's
escapes, signed infinities and ORS, and what each form imports at start-up."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from compact_dp.core.params import PARAMS, looks_numeric

from .conftest import (
    AGENT_ARGS,
    CASES,
    EXAMPLE,
    INPUTS,
    NATIVE_STATS,
    ROOT,
    STATS_ARGS,
    assignments,
    clean_env,
    command_path,
    recorded,
    run_cli,
    run_main,
)

EX = str(EXAMPLE)
EX_ANSWER = recorded(EXAMPLE.name, AGENT_ARGS + STATS_ARGS)       # "54\n"


def assert_one_line_error(status: int, out: str | bytes, err: str | bytes, *words: str):
    err = err.decode() if isinstance(err, bytes) else err
    assert status == 2
    assert not out
    assert "Traceback" not in err and "internal error" not in err
    errs = [x for x in err.strip().splitlines() if not x.startswith("compact-dp: warning:")]
    assert len(errs) == 1, err
    for w in words:
        assert w in errs[0]


# --- the awk-compatible form -------------------------------------------------------------

def test_awk_form_prints_the_recorded_answer():
    p = run_cli(*AGENT_ARGS, *STATS_ARGS, EX)
    assert (p.stdout.decode(), p.returncode) == (EX_ANSWER, 0)
    assert EX_ANSWER == "54\n"


def test_attached_v_and_f_forms_and_double_dash():
    args = [a for a in AGENT_ARGS + STATS_ARGS if a != "-v"]
    r = run_main(*["-v" + a for a in args], "-fcompact_dp.awk", "--", EX)
    assert r.out == EX_ANSWER


def test_assignment_operands_apply_like_awk():
    """name=value operands between files count (here they override -v t=5)."""
    expected = run_main("--json", *AGENT_ARGS, "-v", "t=7", "-v", "total_requests=40", "-v",
                        "total_input=4e5", EX).out
    r = run_main("--json", *AGENT_ARGS, "-v", "t=5", "-v", "total_requests=40", EX, "t=7",
                 "total_input=4e5")
    assert r.out == expected != run_main("--json", *AGENT_ARGS, "-v", "t=5", "-v",
                                         "total_requests=40", EX).out


def test_stdin_and_dash_read_the_same_stream():
    data = EXAMPLE.read_bytes()
    assert run_main(*AGENT_ARGS, *STATS_ARGS, stdin=data).out == EX_ANSWER
    assert run_main(*AGENT_ARGS, *STATS_ARGS, "-", stdin=data).out == EX_ANSWER
    assert run_main(*NATIVE_STATS, "-", stdin=data).out == EX_ANSWER


def test_two_files_are_one_stream_and_file_ends_end_records(tmp_path):
    """A file without a final newline still ends its record before the next file."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    lines = EXAMPLE.read_bytes().split(b"\n")
    a.write_bytes(b"\n".join(lines[:100]))            # no final newline
    b.write_bytes(b"\n".join(lines[100:]))
    assert run_main(*AGENT_ARGS, *STATS_ARGS, str(a), str(b)).out == EX_ANSWER
    whole = json.loads(run_main("--json", *AGENT_ARGS, *STATS_ARGS, EX).out)
    split = json.loads(run_main("--json", *AGENT_ARGS, *STATS_ARGS, str(a), str(b)).out)
    assert split["lines"] == whole["lines"] == len(lines) - 1     # EXAMPLE ends with \n
    assert split["total_tokens"] == whole["total_tokens"]


def test_turn_keep_program_name_selects_the_fallback():
    f = str(INPUTS / "edge_garbage_lines.jsonl")
    want = recorded("edge_garbage_lines.jsonl", ["-v", "ratio=0.12"], "turn-keep")
    assert run_main("-v", "ratio=0.12", "-f", "/some/dir/compact_turn_keep.awk", f).out == want
    assert run_main("-v", "ratio=0.12", "-f", "compact_dp.awk", f).out != want


def test_model_from_environment():
    f = str(INPUTS / "syn_150.jsonl")
    want = recorded("syn_150.jsonl", AGENT_ARGS + STATS_ARGS, "v4.2")
    assert want != recorded("syn_150.jsonl", AGENT_ARGS + STATS_ARGS, "v3.0.7")
    environ = {"COMPACT_DP_MODEL": "v4.2"}
    assert run_main(*AGENT_ARGS, *STATS_ARGS, f, environ=environ).out == want
    assert run_main(*NATIVE_STATS, f, environ=environ).out == want


def test_string_values_warn_on_stderr_only():
    r = run_main(*AGENT_ARGS, "-v", "e_fixed=abc", *STATS_ARGS, EX)
    assert r.status == 0 and r.out.strip().isdigit()
    assert "e_fixed" in r.err and "string" in r.err


def test_division_by_zero_is_fatal_like_gawk():
    """t=abc with total_requests=5: "abc" > "0", so L = 5 / 0: exit 2, no output."""
    r = run_main(*AGENT_ARGS, "-v", "t=abc", "-v", "total_requests=5", EX)
    assert_one_line_error(r.status, r.out, r.err, "fatal", "division by zero",
                          "total_requests / t")
    r = run_main(*AGENT_ARGS, *STATS_ARGS, "-v", "max_context=abc", EX)
    assert_one_line_error(r.status, r.out, r.err, "division by zero", "max_context")


FOUR_LINES = b"xxxxxxxx\n\n\n\n"


@pytest.mark.parametrize("value, want", [
    # gawk's escapes; gawk, mawk and original-awk all print these answers
    ("\\.0", "0\n"),          # an unknown escape \c is c: ".0" is 0, so M falls back
    ("\\x30", "0\n"),         # \xHH: "0"
    ("200000\\", "0\n"),      # a trailing backslash is dropped
])
def test_escapes_in_assignments_follow_awk(value, want):
    r = run_main("-v", f"max_context={value}", "-f", "compact_dp.awk", "-", stdin=FOUR_LINES)
    assert (r.out, r.status) == (want, 0), r.err
    r = run_main("-f", "compact_dp.awk", "-", f"max_context={value}", stdin=FOUR_LINES)
    assert (r.out, r.status) == (want, 0), r.err


@pytest.mark.parametrize("p_input, want", [
    ("-inf", "0\n"), ("-INF", "0\n"), (" +Inf ", "0\n"), ("+nan", "0\n"), ("-NaN", "0\n"),
    ("inf", "4\n"),        # unsigned: a string, compared and used as 0 … like every awk
])
def test_signed_infinities_are_numbers(p_input, want):
    """-v p_cache=1 -v p_input=-inf on 8 x's and 3 blank lines: every awk prints 0."""
    r = run_main("-v", "p_cache=1", "-v", f"p_input={p_input}", "-f", "compact_dp.awk", "-",
                 stdin=FOUR_LINES)
    assert (r.out, r.status) == (want, 0)


@pytest.mark.parametrize("ors, want", [("X", b"0X"), ("\\r\\n", b"0\r\n"), ("", b"0"),
                                       ("\\377", b"0\xff")])
def test_ors_ends_the_answer(ors, want):
    p = run_cli("-v", f"ORS={ors}", "-f", "compact_dp.awk", "-", input=FOUR_LINES)
    assert (p.stdout, p.returncode) == (want, 0)


@pytest.mark.parametrize("args, words", [
    (["-v", "t", EX], ["-v", "name=value"]),
    (["-v", "1x=3", EX], ["-v"]),
    (["-v"], ["needs a value"]),
    (["-v", "t=1", "-q", EX], ["unknown option", "-q"]),
    (["-v", "t=1", "--model", "v9", EX], ["unknown model"]),
    (["-v", "t=1", "/nonexistent/conv.jsonl"], ["/nonexistent/conv.jsonl", "No such file"]),
    (["-v", "t=1", "/tmp"], ["/tmp", "directory"]),
])
def test_awk_form_errors(args, words):
    r = run_main(*args)
    assert_one_line_error(r.status, r.out, r.err, *words)


def test_unreadable_file(monkeypatch):
    """Permission denied (simulated: the tests may run as root, who reads anything)."""
    import compact_dp.core.scan as scan

    def denied(path, mode="r"):
        raise PermissionError(13, "Permission denied", path)
    monkeypatch.setattr(scan, "open", denied, raising=False)
    for argv in (["-v", "t=1", "secret.jsonl"], ["--turns", "1", "secret.jsonl"]):
        r = run_main(*argv)
        assert_one_line_error(r.status, r.out, r.err, "secret.jsonl", "Permission denied")


def test_missing_file_after_a_good_one_prints_nothing():
    r = run_main(*AGENT_ARGS, *STATS_ARGS, EX, "missing.jsonl")
    assert_one_line_error(r.status, r.out, r.err, "missing.jsonl")


def test_empty_file_and_empty_stdin_print_zero():
    assert run_main(*AGENT_ARGS, *STATS_ARGS, str(INPUTS / "empty.jsonl")).out == "0\n"
    assert run_main(*AGENT_ARGS, *STATS_ARGS).out == "0\n"
    assert run_main("-").out == "0\n"


# --- the native form ---------------------------------------------------------------------

def test_native_defaults_equal_the_agent_arguments():
    """The documented defaults are what bash-agent passes, so the answers agree."""
    for name in ("syn_900.jsonl", "syn_400.jsonl", "edge_blank_lines.jsonl"):
        want = recorded(name, AGENT_ARGS + STATS_ARGS)
        assert run_main(*NATIVE_STATS, str(INPUTS / name)).out == want


def decision_json(*args: str, environ: dict | None = None) -> dict:
    """--json without the native form's session object (the awk form has none)."""
    obj = json.loads(run_main("--json", *args, environ=environ).out)
    obj.pop("session", None)
    return obj


def test_native_env_defaults_and_empty_env_means_default():
    base = decision_json(*NATIVE_STATS, EX)
    assert decision_json(*NATIVE_STATS, EX, environ={"DP_V": ""}) == base
    awk = decision_json(*AGENT_ARGS[:-4], "-v", "max_context=50000", "-v",
                        "quality_penalty=5", *STATS_ARGS, EX)
    environ = {"MAX_CONTEXT_TOKENS": "50000", "DP_QUALITY_PENALTY": "5"}
    assert decision_json(*NATIVE_STATS, EX, environ=environ) == awk != base
    # an option beats its env var
    assert decision_json(*NATIVE_STATS, "--max-context", "200000", "--quality-penalty",
                         "0.2", EX, environ=environ) == base


def native_form_accepts(args: dict[str, str]) -> bool:
    """True when every value is one the native form's validation allows."""
    from compact_dp.core.params import BY_AWK
    for name, text in args.items():
        p = BY_AWK[name]
        if not looks_numeric(text):
            return False
        x = float(text)
        if not ((x > p.low if p.above else x >= p.low) and x <= p.high) or \
                p.whole and x != int(x):
            return False
    return True


def test_native_options_match_awk_names_one_by_one():
    """Each option reaches the awk variable the table says (checked by a value that changes
    the recorded answer)."""
    checked = 0
    for c in CASES:
        if not c["label"].startswith("sweep_") or c["profile"] != "v3.0.7":
            continue
        args = assignments(c)
        if c["rc"] != 0 or not native_form_accepts(args):
            continue
        native = []
        for p in PARAMS:
            if p.awk in args:
                native += [f"--{p.option}", args[p.awk]]
        assert run_main(*native, c["path"]).out == c["stdout"], c
        checked += 1
    assert checked >= 20


@pytest.mark.parametrize("args, env, words", [
    (["--turns", "abc", EX], {}, ["--turns", "abc", "not a number"]),
    (["--p-input", "inf", EX], {}, ["--p-input"]),
    (["--p-input", "nan", EX], {}, ["--p-input"]),
    (["--max-context", "1e999", EX], {}, ["--max-context", "finite"]),
    (["--beta", "", EX], {}, ["--beta"]),
    ([EX], {"DP_BETA": "0.03x"}, ["DP_BETA"]),
    ([EX], {"COMPACT_DP_MODEL": "v5"}, ["unknown model"]),
    (["--bogus", EX], {}, ["--bogus"]),
    (["--turns"], {}, ["--turns", "requires a value"]),
    (["missing.jsonl"], {}, ["missing.jsonl"]),
    ([str(INPUTS)], {}, ["directory"]),
    (["--trigger", "later", EX], {}, ["--trigger"]),
    (["--json", "--explain", EX], {}, ["--json"]),
    (["--force-percent", "90", EX], {}, ["--force-percent"]),
    (["--context-tokens", "5", "--force-percent", "101", EX], {}, ["--force-percent"]),
    # what the native form accepts (docs/options.md)
    (["--turns", "-1", EX], {}, ["--turns", "whole number ≥ 0"]),
    (["--turns", "2.5", EX], {}, ["--turns", "whole number"]),
    (["--p-input", "-3", EX], {}, ["--p-input", "≥ 0"]),
    (["--retention", "1.5", EX], {}, ["--retention", "between 0 and 1"]),
    (["--min-keep-ratio", "2", EX], {}, ["--min-keep-ratio", "between 0 and 1"]),
    (["--max-context", "0", EX], {}, ["--max-context", "> 0"]),
    (["--max-context", "-5", EX], {}, ["--max-context", "> 0"]),
    ([EX], {"MAX_CONTEXT_TOKENS": "0"}, ["MAX_CONTEXT_TOKENS", "> 0"]),
    (["--json=1", EX], {}, ["--json", "does not take a value"]),
])
def test_native_errors(args, env, words):
    r = run_main(*args, environ=env)
    assert_one_line_error(r.status, r.out, r.err, *words)


@pytest.mark.parametrize("args, words", [
    (["--context-tokens", "-5", EX], ["--context-tokens", "≥ 0"]),
    (["--now", "1e20", EX], ["--now", "1e20", "not a time"]),
    (["--now", "-1", EX], ["--now", "not a time"]),
    (["--now", "+nan", EX], ["--now"]),
    (["--now", "1900-01-01", EX], ["--now", "not a time"]),
    (["--format=", EX], ["--format", "empty"]),
    (["--price", "", EX], ["--price", "empty"]),
    (["--model", "", EX], ["--model", "empty"]),
    (["replay", "--format=", EX], ["--format", "empty"]),
    (["replay", "--price", "", EX], ["--price", "empty"]),
    (["replay", "--policy", "dp", "--policy=", EX], ["--policy", "empty"]),
])
def test_a_value_that_means_nothing_is_refused_not_taken_for_the_default(args, words):
    """An empty value (a shell variable that expanded to nothing), a negative context, a
    moment before 1970 or after the year 9999: each is named, never silently used."""
    r = run_main(*args)
    assert_one_line_error(r.status, r.out, r.err, *words)


def test_native_without_file_on_a_terminal_is_an_error():
    """With a terminal on stdin we would wait forever; say what is missing instead."""
    r = run_main(stdin_isatty=True)
    assert_one_line_error(r.status, r.out, r.err, "no conversation file")


def test_help_version_and_help_command():
    for argv in (["--help"], ["-h"], ["help"]):
        r = run_main(*argv)
        assert r.status == 0
        for opt in ("--turns", "--max-context", "--quality-penalty", "--trigger", "--json",
                    "replay", "Exit status"):
            assert opt in r.out, (argv, opt)
    from compact_dp.version import __version__, build
    assert run_main("--version").out == f"compact-dp {__version__} ({build()})\n"
    assert "--policy" in run_main("help", "replay").out
    r = run_main("help", "nonsense")
    assert_one_line_error(r.status, r.out, r.err, "nonsense")


@pytest.mark.parametrize("typo, command", [("replya", "replay"), ("price", "prices"),
                                            ("statusln", "statusline"), ("hlep", "help")])
def test_a_mistyped_command_that_is_no_file_gets_the_command_suggested(typo, command,
                                                                        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run_main(typo)
    assert_one_line_error(r.status, r.out, r.err, typo, f"did you mean {command}?")
    (tmp_path / typo).write_text("")                     # a file of that name: no guess
    r = run_main(typo, str(tmp_path / "missing"))
    assert r.status == 2 and "did you mean" not in r.err


@pytest.mark.parametrize("argv, status, words", [
    (["hook"], 1, ["hook needs a name", "user-prompt-submit", "pre-compact"]),
    (["hook", "bogus"], 1, ["unknown hook 'bogus'", "user-prompt-submit"]),
    (["hooks"], 2, ["hooks needs a command", "path"]),
    (["hooks", "bogus"], 2, ["unknown hooks command 'bogus'"]),
])
def test_a_missing_or_unknown_hook_is_one_line_and_a_nonzero_status(argv, status, words):
    """Exit 1, not 2, for hook: Claude Code takes a hook's exit 2 to mean block."""
    r = run_main(*argv)
    assert (r.status, r.out) == (status, "")
    assert r.err.count("\n") == 1 and r.err.startswith("compact-dp: error: "), r.err
    for w in words:
        assert w in r.err, r.err


@pytest.mark.parametrize("argv", [["hooks", "path", "--help"], ["hooks", "-h"],
                                  ["hooks", "--help", "path"]])
def test_hooks_help_anywhere_shows_the_usage(argv):
    r = run_main(*argv)
    assert r.status == 0 and r.out.startswith("Usage: compact-dp hooks path") and not r.err


@pytest.mark.parametrize("command, operand", [("replay", "FILE"), ("prices", "MODEL"),
                                              ("install", "TARGET"),
                                              ("uninstall", "TARGET"),
                                              ("backtest", "FILE"), ("calibrate", "DIR")])
def test_help_pages_show_plain_metavars_not_python_types(command, operand):
    out = run_main("help", command).out
    usage = out.splitlines()[0]
    assert usage.endswith(f"[{operand}]..."), usage
    assert "<" not in out and "list[" not in out and "...]" not in out
    assert f"\n  {operand} " in out                       # the Arguments section


def test_help_and_the_package_metadata_say_where_the_docs_are():
    """A pipx user has no source tree: --help names the docs' address, and the installed
    package's metadata has it and the home page, as pyproject.toml says."""
    import tomllib
    from importlib.metadata import metadata

    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert urls == {"Homepage": "https://github.com/compact-dp/compact-dp",
                    "Documentation": "https://github.com/compact-dp/compact-dp/tree/main/docs"}
    assert set(metadata("compact-dp").get_all("Project-URL")) == \
        {f"{name}, {url}" for name, url in urls.items()}
    for argv in (["--help"], ["help", "replay"]):
        out = run_main(*argv, environ={"COLUMNS": "200"}).out
        assert urls["Documentation"] in out and "source tree" not in out, argv


def test_options_before_a_command_belong_to_it(tmp_path):
    """compact-dp --model v4.2 replay F means replay F with --model v4.2."""
    f = str(INPUTS / "syn_40.jsonl")
    a = run_main("--model", "v4.2", "replay", "--json", f)
    b = run_main("replay", "--json", "--model", "v4.2", f)
    assert a.status == b.status == 0 and a.out == b.out
    assert json.loads(a.out) != json.loads(run_main("replay", "--json", f).out)


def test_hooks_path_finds_the_installed_bash_hooks():
    p = run_cli("hooks", "path")
    where = p.stdout.decode().strip()
    assert p.returncode == 0 and os.path.isfile(os.path.join(where, "bash-agent.sh"))
    assert "site-packages" in where or "dist-packages" in where    # shipped with the package


# --- both forms --------------------------------------------------------------------------

@pytest.mark.parametrize("args", [[*AGENT_ARGS, *STATS_ARGS, EX], [*NATIVE_STATS, EX]])
def test_a_reader_gone_before_we_write_is_no_error(args):
    """compact-dp … | head -c0: the reader is gone before we write; it wanted nothing, so
    nothing is said and the answer's status stands (no traceback, no exit 120) — but the
    awk form, which ends as awk does, killed by SIGPIPE (test_rough_edges.py)."""
    r, w = os.pipe()
    os.close(r)
    p = subprocess.run([command_path(), *args], stdout=w, stderr=subprocess.PIPE,
                       env=clean_env(), timeout=60)
    os.close(w)
    awk_form = args[0] == AGENT_ARGS[0]
    assert (p.returncode, p.stderr.decode()) == (-13 if awk_form else 0, "")


@pytest.mark.parametrize("args", [[*AGENT_ARGS, *STATS_ARGS], [*NATIVE_STATS]])
def test_the_conversation_is_only_read(tmp_path, args):
    f = tmp_path / "conv.jsonl"
    f.write_bytes(EXAMPLE.read_bytes())
    before = (hashlib.sha256(f.read_bytes()).hexdigest(), f.stat().st_mtime_ns)
    for extra in ([], ["--json"], ["--explain"]):
        assert run_main(*extra, *args, str(f)).status == 0
    assert (hashlib.sha256(f.read_bytes()).hexdigest(), f.stat().st_mtime_ns) == before


def test_python_dash_m_runs_the_same_command():
    p = subprocess.run([sys.executable, "-m", "compact_dp", *AGENT_ARGS, *STATS_ARGS, EX],
                       capture_output=True, env=clean_env(), timeout=60)
    assert p.stdout.decode() == EX_ANSWER


def imported_by(*args: str) -> set[str]:
    """Top-level packages a run imports (python -X importtime)."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "compact_dp", *args],
                       capture_output=True, env=clean_env(), timeout=60)
    assert p.returncode == 0, p.stderr[-500:]
    return {line.split("|")[-1].strip().split(".")[0]
            for line in p.stderr.decode().splitlines() if line.startswith("import time:")}


HEAVY = {"typer", "rich", "click", "pydantic", "typing", "dataclasses", "re"}


def test_awk_path_imports_no_heavy_module():
    imported = imported_by(*AGENT_ARGS, *STATS_ARGS, EX)
    assert "compact_dp" in imported
    assert not imported & (HEAVY | {"orjson"})


def test_native_decision_imports_no_heavy_module():
    """The native decision starts light too: no typer (and no orjson for the number)."""
    imported = imported_by(*NATIVE_STATS, EX)
    assert not imported & (HEAVY | {"orjson"})
    # orjson itself imports dataclasses and re; nothing of the CLI frameworks
    assert not imported_by("--json", *NATIVE_STATS, EX) & {"typer", "rich", "click",
                                                            "pydantic"}


def test_the_commands_for_people_start_without_pydantic():
    """typer would build a pydantic adapter per option (~70 ms a run); typerkit passes the
    values on as typer would have coerced them, and the library validates them."""
    imported = imported_by("replay", "--json", "--policy", "recorded", EX)
    assert "typer" in imported and "pydantic" not in imported


@pytest.mark.parametrize("argv", [[], ["a"], ["a", "b"], ["--one", "v"], ["--one", "-"],
                                  ["--many", "x", "--many", "y"], ["--many", "x"],
                                  ["--flag"], ["--", "-x"], ["a", "--flag", "--one", "1"]])
def test_a_command_gets_its_values_as_typers_own_coercion_gives_them(argv):
    import typer

    from compact_dp.cli.options import Option
    from compact_dp.cli.typerkit import command

    def values(plain: bool) -> dict:
        got: list[dict] = []
        options = [Option("--one", "one", "h"), Option("--many", "many", "h", multiple=True),
                   Option("--flag", "flag", "h", takes_value=False)]
        cmd = command("x", lambda **kw: got.append(kw) or 0, options, "files", "doc")
        if plain:                      # typer's own classes: its pydantic coercion
            for p in cmd.params:
                p.__class__ = typer.core.TyperArgument if isinstance(
                    p, typer.core.TyperArgument) else typer.core.TyperOption
        cmd.main(list(argv), standalone_mode=False)
        return {k: (type(v), v) for k, v in got[0].items()}
    assert values(plain=False) == values(plain=True)


# --- a full disk -------------------------------------------------------------------------

STATUS = json.dumps({"transcript_path": str(ROOT / "examples" / "claude-code.jsonl")}).encode()
FULL_DISK_RUNS = {
    "decision": [EX], "--json": ["--json", EX], "--explain": ["--explain", EX],
    "replay": ["replay", EX], "replay --json": ["replay", "--json", EX],
    "prices": ["prices"], "help": ["help"], "help replay": ["help", "replay"],
    "--help": ["--help"], "replay --help": ["replay", "--help"], "--version": ["--version"],
    "hooks path": ["hooks", "path"], "awk form": [*AGENT_ARGS, *STATS_ARGS, EX],
    "statusline": ["statusline"], "hook": ["hook", "user-prompt-submit"],
}


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("name", sorted(FULL_DISK_RUNS))
def test_a_full_disk_is_one_line_and_the_documented_status_for_every_command(name, tmp_path):
    """stdout on /dev/full, block-buffered as under pipx (no PYTHONUNBUFFERED): one line on
    stderr, exit 2 — the status line and hooks exit 0 — and the interpreter's own final
    flush at exit does not fail again ("Exception ignored", exit 120)."""
    env = clean_env(COMPACT_DP_CACHE=str(tmp_path))
    env.pop("PYTHONUNBUFFERED", None)
    with open("/dev/full", "w") as full:
        p = subprocess.run([command_path(), *FULL_DISK_RUNS[name]], stdout=full,
                           stderr=subprocess.PIPE, input=STATUS, env=env, timeout=60)
    err = p.stderr.decode()
    assert p.returncode == (0 if name in ("statusline", "hook") else 2), err
    assert err.count("\n") == 1 and err.startswith("compact-dp: "), err
    assert "No space left on device" in err and "internal error" not in err
