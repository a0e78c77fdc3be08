"""Both command lines: exit statuses (SPEC §7), errors as one line, stdin, several files."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from .conftest import CASES, INPUTS, clean_env, command_path, run_cli

AGENT = ["-v", "baseline_e=8", "-v", "e_fixed=0", "-v", "L_fixed=0", "-v", "V=5000",
         "-v", "p_input=3.0", "-v", "p_cache=0.30", "-v", "p_out=15.0", "-v", "S=500",
         "-v", "min_keep_ratio=0.12", "-v", "r=0.8", "-v", "beta=0.03",
         "-v", "max_context=200000", "-v", "quality_penalty=0.2"]
STATS = ["-v", "t=5", "-v", "total_requests=40", "-v", "total_compact=0",
         "-v", "total_input=400000"]
NATIVE_STATS = ["--turns", "5", "--requests", "40", "--compactions", "0",
                "--input-tokens", "400000"]
REAL = str(INPUTS / "real_swe_7tasks.jsonl")


def recorded(input_name: str, args: list[str], profile: str = "v3.0.7") -> str:
    for c in CASES:
        if (c["input"], c["args"], c["profile"]) == (input_name, args, profile):
            return c["stdout"]
    raise LookupError


def assert_one_line_error(p: subprocess.CompletedProcess, *words: str):
    err = p.stderr.decode()
    assert p.returncode == 2
    assert p.stdout == b""
    assert "Traceback" not in err
    errs = [x for x in err.strip().splitlines() if not x.startswith("compact-dp: warning:")]
    assert len(errs) == 1, err
    for w in words:
        assert w in errs[0]


# --- the awk-compatible form -------------------------------------------------------------

def test_awk_form_prints_the_recorded_answer():
    p = run_cli(*AGENT, *STATS, REAL)
    assert p.returncode == 0
    assert p.stdout.decode() == recorded("real_swe_7tasks.jsonl", AGENT + STATS)


def test_attached_v_and_f_forms_and_double_dash():
    args = [a for a in AGENT + STATS if a != "-v"]
    p = run_cli(*["-v" + a for a in args], "-fcompact_dp.awk", "--", REAL)
    assert p.stdout.decode() == recorded("real_swe_7tasks.jsonl", AGENT + STATS)


def test_assignment_operands_apply_like_awk():
    """name=value operands between files count (here they override -v t=5)."""
    expected = run_cli(*AGENT, "-v", "t=7", "-v", "total_requests=40", "-v", "total_input=4e5",
                       REAL).stdout
    p = run_cli(*AGENT, "-v", "t=5", "-v", "total_requests=40", REAL, "t=7", "total_input=4e5")
    assert p.stdout == expected


def test_stdin_and_dash_read_the_same_stream():
    data = open(REAL, "rb").read()
    want = run_cli(*AGENT, *STATS, REAL).stdout
    assert run_cli(*AGENT, *STATS, input=data).stdout == want
    assert run_cli(*AGENT, *STATS, "-", input=data).stdout == want
    assert run_cli(*NATIVE_STATS, "-", input=data).stdout == want


def test_two_files_are_one_stream_and_file_ends_end_records(tmp_path):
    """A file without a final newline still ends its record before the next file."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    lines = open(REAL, "rb").read().split(b"\n")
    a.write_bytes(b"\n".join(lines[:100]))            # no final newline
    b.write_bytes(b"\n".join(lines[100:]))
    both = run_cli(*AGENT, *STATS, str(a), str(b))
    assert both.stdout == run_cli(*AGENT, *STATS, REAL).stdout
    import json
    whole = json.loads(run_cli("--json", *AGENT, *STATS, REAL).stdout)
    split = json.loads(run_cli("--json", *AGENT, *STATS, str(a), str(b)).stdout)
    assert split["lines"] == whole["lines"] == len(lines) - 1     # REAL ends with \n
    assert split["total_tokens"] == whole["total_tokens"]


def test_turn_keep_program_name_selects_the_fallback():
    f = str(INPUTS / "real_swe_3tasks.jsonl")
    p = run_cli("-v", "ratio=0.12", "-f", "/some/dir/compact_turn_keep.awk", f)
    want = recorded("real_swe_3tasks.jsonl", ["-v", "ratio=0.12"], "turn-keep")
    assert p.stdout.decode() == want
    assert run_cli("-v", "ratio=0.12", "-f", "compact_dp.awk", f).stdout.decode() != want


def test_model_from_environment():
    f = str(INPUTS / "syn_150.jsonl")
    want = recorded("syn_150.jsonl", AGENT + STATS, "v4.2")
    assert want != recorded("syn_150.jsonl", AGENT + STATS, "v3.0.7")
    p = run_cli(*AGENT, *STATS, f, env=clean_env(COMPACT_DP_MODEL="v4.2"))
    assert p.stdout.decode() == want
    p = run_cli(*NATIVE_STATS, f, env=clean_env(COMPACT_DP_MODEL="v4.2"))
    assert p.stdout.decode() == want


def test_string_values_warn_on_stderr_only():
    p = run_cli(*AGENT, "-v", "e_fixed=abc", *STATS, REAL)
    assert p.returncode == 0
    assert p.stdout.strip().isdigit()
    assert b"e_fixed" in p.stderr and b"string" in p.stderr


def test_division_by_zero_is_fatal_like_gawk():
    """t=abc with total_requests=5: "abc" > "0", so L = 5 / 0: exit 2, no output."""
    assert_one_line_error(run_cli(*AGENT, "-v", "t=abc", "-v", "total_requests=5", REAL),
                          "division by zero", "total_requests / t")
    assert_one_line_error(run_cli(*AGENT, *STATS, "-v", "max_context=abc", REAL),
                          "division by zero", "max_context")


@pytest.mark.parametrize("args, words", [
    (["-v", "t", REAL], ["-v", "name=value"]),
    (["-v", "1x=3", REAL], ["-v"]),
    (["-v"], ["needs a value"]),
    (["-v", "t=1", "-q", REAL], ["unknown option", "-q"]),
    (["-v", "t=1", "--model", "v9", REAL], ["unknown model"]),
    (["-v", "t=1", "/nonexistent/conv.jsonl"], ["/nonexistent/conv.jsonl", "No such file"]),
    (["-v", "t=1", "/tmp"], ["/tmp", "directory"]),
])
def test_awk_form_errors(args, words):
    assert_one_line_error(run_cli(*args), *words)


def test_unreadable_file(monkeypatch, capsys):
    """Permission denied (simulated: the tests may run as root, who reads anything)."""
    import compact_dp.scan as scan
    from compact_dp.main import main

    def denied(path, mode="r"):
        raise PermissionError(13, "Permission denied", path)
    monkeypatch.setattr(scan, "open", denied, raising=False)
    for argv in (["-v", "t=1", "secret.jsonl"], ["--turns", "1", "secret.jsonl"]):
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1
        assert "secret.jsonl" in err and "Permission denied" in err


def test_missing_file_after_a_good_one_prints_nothing():
    assert_one_line_error(run_cli(*AGENT, *STATS, REAL, "missing.jsonl"), "missing.jsonl")


def test_empty_file_and_empty_stdin_print_zero():
    assert run_cli(*AGENT, *STATS, str(INPUTS / "empty.jsonl")).stdout == b"0\n"
    assert run_cli(*AGENT, *STATS, input=b"").stdout == b"0\n"
    assert run_cli("-", input=b"").stdout == b"0\n"


# --- the native form ---------------------------------------------------------------------

def test_native_defaults_equal_the_agent_arguments():
    """The §2 defaults are what bash-agent passes, so the answers agree."""
    for name in ("real_swe_7tasks.jsonl", "syn_400.jsonl", "edge_blank_lines.jsonl"):
        want = recorded(name, AGENT + STATS)
        assert run_cli(*NATIVE_STATS, str(INPUTS / name)).stdout.decode() == want


def test_native_env_defaults_and_empty_env_means_default():
    base = run_cli(*NATIVE_STATS, REAL).stdout
    assert run_cli(*NATIVE_STATS, REAL, env=clean_env(DP_V="")).stdout == base
    awk = run_cli(*AGENT[:-4], "-v", "max_context=50000", "-v", "quality_penalty=5", *STATS,
                  REAL).stdout
    env = clean_env(MAX_CONTEXT_TOKENS="50000", DP_QUALITY_PENALTY="5")
    assert run_cli(*NATIVE_STATS, REAL, env=env).stdout == awk
    # an option beats its env var
    assert run_cli(*NATIVE_STATS, "--max-context", "200000", "--quality-penalty", "0.2", REAL,
                   env=env).stdout == base


def test_native_options_match_awk_names_one_by_one():
    """Each option reaches the awk variable the table says (checked by a value that changes
    the recorded answer)."""
    for c in CASES:
        if not c["label"].startswith("sweep_") or c["profile"] != "v3.0.7":
            continue
        if c["input"] != "syn_400.jsonl":
            continue
        args = dict(a.split("=", 1) for a in c["args"] if a != "-v")
        from compact_dp.params import PARAMS, looks_numeric
        if not all(looks_numeric(v) for v in args.values()):
            continue
        native = []
        for p in PARAMS:
            if p.awk in args:
                native += [f"--{p.option}", args[p.awk]]
        p = run_cli(*native, str(INPUTS / c["input"]))
        assert p.stdout.decode() == c["stdout"], c


@pytest.mark.parametrize("args, env, words", [
    (["--turns", "abc", REAL], {}, ["--turns", "abc", "not a number"]),
    (["--p-input", "inf", REAL], {}, ["--p-input"]),
    (["--p-input", "nan", REAL], {}, ["--p-input"]),
    (["--max-context", "1e999", REAL], {}, ["--max-context", "finite"]),
    (["--beta", "", REAL], {}, ["--beta"]),
    ([REAL], {"DP_BETA": "0.03x"}, ["DP_BETA"]),
    ([REAL], {"COMPACT_DP_MODEL": "v5"}, ["unknown model"]),
    (["--bogus", REAL], {}, ["--bogus"]),
    (["--turns"], {}, ["--turns"]),
    (["missing.jsonl"], {}, ["missing.jsonl"]),
    ([str(INPUTS)], {}, ["directory"]),
    (["--trigger", "later", REAL], {}, ["--trigger"]),
    (["--json", "--explain", REAL], {}, ["--json"]),
    (["--force-percent", "90", REAL], {}, ["--force-percent"]),
])
def test_native_errors(args, env, words):
    assert_one_line_error(run_cli(*args, env=clean_env(**env)), *words)


def test_native_without_file_on_a_terminal_is_an_error():
    """With a terminal on stdin we would wait forever; say what is missing instead."""
    import pty
    import os
    master, slave = pty.openpty()
    try:
        p = subprocess.run([command_path()], stdin=slave, capture_output=True, timeout=30,
                           env=clean_env())
    finally:
        os.close(master)
        os.close(slave)
    assert_one_line_error(p, "no conversation file")


def test_help_is_available():
    p = run_cli("--help")
    assert p.returncode == 0
    for opt in ("--turns", "--max-context", "--quality-penalty", "--trigger", "--json"):
        assert opt.encode() in p.stdout


# --- both forms --------------------------------------------------------------------------

@pytest.mark.parametrize("args", [[*AGENT, *STATS, REAL], [*NATIVE_STATS, REAL]])
def test_broken_pipe_is_one_line_not_a_traceback(args):
    """compact-dp … | head -c0: the reader is gone before we write."""
    r, w = __import__("os").pipe()
    __import__("os").close(r)
    p = subprocess.run([command_path(), *args], stdout=w, stderr=subprocess.PIPE,
                       env=clean_env(), timeout=60)
    __import__("os").close(w)
    err = p.stderr.decode()
    assert p.returncode == 2
    assert "Traceback" not in err and "broken pipe" in err
    assert len(err.strip().splitlines()) == 1


def test_shell_pipeline_into_head():
    cmd = f"{command_path()} {' '.join(NATIVE_STATS)} {REAL} | head -c0; echo ${{PIPESTATUS[0]}}"
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, env=clean_env(), timeout=60)
    assert b"Traceback" not in p.stderr
    assert p.stdout.strip() in (b"0", b"2")   # 0 if we finished before head closed the pipe


@pytest.mark.parametrize("args", [[*AGENT, *STATS], [*NATIVE_STATS]])
def test_the_conversation_is_only_read(tmp_path, args):
    f = tmp_path / "conv.jsonl"
    f.write_bytes(open(REAL, "rb").read())
    before = (hashlib.sha256(f.read_bytes()).hexdigest(), f.stat().st_mtime_ns)
    for extra in ([], ["--json"], ["--explain"]):
        assert run_cli(*extra, *args, str(f)).returncode == 0
    assert (hashlib.sha256(f.read_bytes()).hexdigest(), f.stat().st_mtime_ns) == before


def test_python_dash_m_runs_the_same_command():
    p = subprocess.run([sys.executable, "-m", "compact_dp", *AGENT, *STATS, REAL],
                       capture_output=True, env=clean_env(), timeout=60)
    assert p.stdout.decode() == recorded("real_swe_7tasks.jsonl", AGENT + STATS)


def test_awk_path_imports_no_heavy_package():
    """python -X importtime: the awk form loads neither typer, rich nor orjson."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "compact_dp", *AGENT, *STATS,
                        REAL], capture_output=True, env=clean_env(), timeout=60)
    assert p.returncode == 0
    imported = {line.split("|")[-1].strip().split(".")[0]
                for line in p.stderr.decode().splitlines() if line.startswith("import time:")}
    assert "compact_dp" in imported
    assert not imported & {"typer", "rich", "orjson", "click", "pydantic"}


def test_native_path_does_not_load_rich_or_orjson_for_the_plain_answer():
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "compact_dp", *NATIVE_STATS,
                        REAL], capture_output=True, env=clean_env(), timeout=60)
    imported = {line.split("|")[-1].strip().split(".")[0]
                for line in p.stderr.decode().splitlines() if line.startswith("import time:")}
    assert "typer" in imported
    assert "orjson" not in imported
