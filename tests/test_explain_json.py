"""--json and --explain: exact numbers, the decision unchanged, readable text."""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest

from compact_dp.main import main
from compact_dp.params import awk_values

from . import reference
from .conftest import CASES, INPUTS, clean_env, run_cli

SNAPSHOTS = Path(__file__).parent / "snapshots"
STATS = ["--turns", "5", "--requests", "40", "--input-tokens", "400000"]
DECIDING = [c for c in CASES if c["profile"] != "turn-keep" and c["rc"] == 0
            and c["label"] != "omitted_all"]


def finite(x):
    """JSON writes inf/nan as strings; turn them back for comparison."""
    return float(x) if isinstance(x, str) else x


def assignments(case) -> dict[str, str]:
    return dict(a.split("=", 1) for a in case["args"] if a != "-v")


@pytest.mark.parametrize("case", DECIDING, ids=lambda c: f"{c['profile']}-{c['label']}")
def test_json_numbers_equal_the_plain_transcription(case, capsys):
    """Every number of --json equals SPEC §3 computed plainly, to the last bit."""
    path = str(INPUTS / case["input"])
    assert main(["--model", case["profile"], "--json", *case["args"], path]) == 0
    out = json.loads(capsys.readouterr().out)
    lines = reference.records((INPUTS / case["input"]).read_bytes())
    keep, best_k, best, facts = reference.explain(lines, awk_values(assignments(case)),
                                                  case["profile"])
    assert out["keep"] == keep == int(case["stdout"])
    assert out["lines"] == len(lines)
    assert out["total_tokens"] == sum(reference.size(x) for x in lines)
    if not lines:
        assert set(out) == {"model", "lines", "total_tokens", "keep", "decision", "reason"}
        return
    assert out["best_k"] == best_k and finite(out["best_benefit"]) == best
    assert out["min_keep"] == facts["min_keep"]
    assert {k: finite(v) for k, v in out["derived"].items()} == facts["derived"]
    if facts["terms"] is None:
        assert out["terms"] is None
    else:
        assert {k: finite(v) for k, v in out["terms"].items()} == facts["terms"]
    assert out["decision"] == ("compact" if 0 < keep < len(lines) else "skip")


def test_json_empty_file_and_turn_keep_fields():
    p = run_cli("--json", str(INPUTS / "empty.jsonl"))
    assert json.loads(p.stdout) == {"model": "v3.0.7", "lines": 0, "total_tokens": 0,
                                    "keep": 0, "decision": "skip",
                                    "reason": "skip: the conversation is empty."}
    obj = json.loads(run_cli("--json", "--model", "turn-keep",
                             str(INPUTS / "syn_40.jsonl")).stdout)
    assert obj["keep"] == 6 and obj["decision"] == "compact"


def test_json_writes_non_finite_numbers_as_strings():
    """r > 1 grows r_t to inf; JSON has no inf, so it is the string "inf"."""
    p = run_cli("--json", *STATS, "--retention", "2", "--compactions", "5000",
                str(INPUTS / "syn_40.jsonl"))
    obj = json.loads(p.stdout)
    assert obj["derived"]["r_t"] == "inf" and obj["best_benefit"] == "inf"


@pytest.mark.parametrize("flag", ["--json", "--explain"])
@pytest.mark.parametrize("form", ["awk", "native"])
def test_neither_flag_changes_the_decision(flag, form):
    for name in ("real_swe_7tasks.jsonl", "syn_12.jsonl", "edge_no_user_lines.jsonl",
                 "empty.jsonl"):
        args = ["-v", "t=5", "-v", "total_requests=40", "-v", "total_input=400000",
                "-v", "p_input=3", "-v", "p_cache=0.3", "-v", "p_out=15", "-v", "S=500",
                "-v", "V=5000", "-v", "beta=0.03", "-v", "r=0.8", "-v", "baseline_e=8",
                "-v", "min_keep_ratio=0.12"] if form == "awk" else STATS
        path = str(INPUTS / name)
        plain = run_cli(*args, path)
        other = run_cli(flag, *args, path)
        assert other.returncode == plain.returncode == 0
        keep = int(plain.stdout)
        if flag == "--json":
            assert json.loads(other.stdout)["keep"] == keep
        else:
            text = other.stdout.decode()
            if 0 < keep < reference.records(open(path, "rb").read()).__len__():
                assert f"compact: keep the last {keep} line" in text
            else:
                assert "skip" in text


# --- snapshots -----------------------------------------------------------------------------

SNAPSHOT_CASES = {
    "compact": [*STATS, "golden/inputs/real_swe_7tasks.jsonl"],
    "skip_break_even": ["--turns", "1", "--requests", "3", "--input-tokens", "12000",
                        "golden/inputs/syn_12.jsonl"],
    "empty": ["golden/inputs/empty.jsonl"],
    "v42_guard": ["--model", "v4.2", *STATS, "golden/inputs/syn_40.jsonl"],
    "no_user_lines": [*STATS, "golden/inputs/edge_no_user_lines.jsonl"],
    "policy_forced": ["--model", "v4.2", *STATS, "--trigger", "auto", "--context-tokens",
                      "190000", "golden/inputs/syn_40.jsonl"],
}


@pytest.mark.parametrize("name", sorted(SNAPSHOT_CASES))
def test_explain_snapshot(name):
    """The --explain text at a fixed width, piped (no colour); UPDATE_SNAPSHOTS=1 rewrites."""
    root = Path(__file__).resolve().parent.parent
    p = run_cli("--explain", *SNAPSHOT_CASES[name], cwd=root, env=clean_env(COLUMNS="100"))
    text = p.stdout.decode()
    assert p.returncode in (0, 1) and "\x1b[" not in text
    assert all(len(line) <= 100 for line in text.splitlines())
    snap = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS"):
        snap.write_text(text)
    assert text == snap.read_text()


def test_break_even_is_exact():
    """The sentence's R is the first whole number of remaining calls at which the best k's
    benefit, computed plainly with E = R and L = 1, turns positive."""
    text = run_cli("--explain", "--turns", "1", "--requests", "3", "--input-tokens", "12000",
                   str(INPUTS / "syn_12.jsonl")).stdout.decode()
    import re
    m = re.search(r"keep (\d+) lines?\) loses .*? after ([\d,]+) more LLM\s+calls", text, re.S)
    assert m, text
    k, calls = int(m.group(1)), int(m.group(2).replace(",", ""))
    lines = reference.records((INPUTS / "syn_12.jsonl").read_bytes())

    def benefit_at(R: int) -> float:
        v = awk_values({"e_fixed": str(R), "L_fixed": "1", "t": "1", "total_requests": "3",
                        "total_input": "12000", "baseline_e": "8", "V": "5000",
                        "p_input": "3.0", "p_cache": "0.30", "p_out": "15.0", "S": "500",
                        "min_keep_ratio": "0.12", "r": "0.8", "beta": "0.03",
                        "max_context": "200000", "quality_penalty": "0.2",
                        "total_compact": "0"})
        sizes = [reference.size(x) for x in lines]
        from compact_dp.models import derive, get_model, terms_at
        from compact_dp.scan import scan_lines
        model = get_model("v3.0.7")
        d = derive(v, scan_lines(lines), model)
        return terms_at(d, model, k, sum(sizes[len(lines) - k:])).benefit

    assert benefit_at(calls) > 0 >= benefit_at(calls - 1)


def test_explain_colour_follows_the_terminal_and_no_color(monkeypatch):
    from compact_dp import decide
    from compact_dp.explain import render
    d = decide(INPUTS / "real_swe_7tasks.jsonl", {"turns": 5, "requests": 40})
    assert "\x1b[" in render(d, d.conv.sizes, width=100, terminal=True)
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in render(d, d.conv.sizes, width=100, terminal=True)
    narrow = render(d, d.conv.sizes, width=60, terminal=False)
    assert max(len(x) for x in narrow.splitlines()) <= 60


def test_long_tables_leave_rows_out_and_say_so():
    text = run_cli("--explain", *STATS, str(INPUTS / "syn_2500.jsonl"),
                   env=clean_env(COLUMNS="120")).stdout.decode()
    assert "rows left out" in text
    assert len(text.splitlines()) < 60
