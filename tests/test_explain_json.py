"""--json and --explain: exact numbers, the decision unchanged, readable text that fits."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from compact_dp.core.decision import decide_conversation
from compact_dp.core.models import derive, get_model
from compact_dp.core.params import awk_values
from compact_dp.core.search import BenefitCurve

from . import reference
from .conftest import (
    AGENT_ARGS,
    AGENT_VALUES,
    CASES,
    INPUTS,
    REAL_SWE_CASES,
    ROOT,
    assignments,
    run_main,
    scan_stream,
)

SNAPSHOTS = Path(__file__).parent / "snapshots"
STATS = ["--turns", "5", "--requests", "40", "--input-tokens", "400000"]
DECIDING = [c for c in CASES + REAL_SWE_CASES if c["profile"] != "turn-keep" and c["rc"] == 0]
NUMBER = re.compile(r"-?\$?[\d,]*\d(?:\.\d+)?")


def finite(x):
    """JSON writes inf/nan as strings; turn them back for comparison."""
    return float(x) if isinstance(x, str) else x


@pytest.mark.parametrize("case", DECIDING, ids=lambda c: f"{c['profile']}-{c['label']}")
def test_json_numbers_equal_the_plain_transcription(case):
    """Every number of --json equals the decision computed plainly, to the last bit."""
    r = run_main("--model", case["profile"], "--json", *case["args"], "-f", "x", case["path"])
    assert r.status == 0
    out = json.loads(r.out)
    lines = reference.records(Path(case["path"]).read_bytes())
    keep, best_k, best, facts = reference.explain(lines, assignments(case), case["profile"])
    assert out["keep"] == keep == int(case["stdout"])
    assert out["lines"] == len(lines)
    assert out["total_tokens"] == sum(reference.size(x) for x in lines)
    if not lines:
        assert set(out) == {"schema_version", "model", "lines", "total_tokens", "keep",
                            "decision", "reason"}
        return
    assert out["best_k"] == best_k and finite(out["best_benefit"]) == best
    assert out["min_keep"] == facts["min_keep"]
    derived = dict(out["derived"])
    assert (derived.pop("horizon"), derived.pop("horizon_source")) == ("seed", "seed: E × L")
    assert {k: finite(v) for k, v in derived.items()} == facts["derived"]
    if facts["terms"] is None:
        assert out["terms"] is None
    else:
        terms = dict(out["terms"])
        t = facts["terms"]
        assert terms.pop("cold_rewrite") == 0.0         # warm: no ⓪ outside cache-clock
        assert terms.pop("billed") == t["savings"] - t["cache_miss"] - t["compact_cost"] + 0.0
        assert {k: finite(v) for k, v in terms.items()} == t
    assert out["decision"] == ("compact" if 0 < keep < len(lines) else "skip")


def test_json_empty_file_and_turn_keep_fields():
    r = run_main("--json", str(INPUTS / "empty.jsonl"))
    obj = json.loads(r.out)
    assert obj.pop("session")["messages"] == 0
    assert obj == {"schema_version": 1, "model": "v3.0.7", "lines": 0, "total_tokens": 0,
                   "keep": 0, "decision": "skip", "reason": "skip: the conversation is empty."}
    obj = json.loads(run_main("--json", "--model", "turn-keep",
                              str(INPUTS / "syn_40.jsonl")).out)
    assert obj["keep"] == 6 and obj["decision"] == "compact"



@pytest.mark.parametrize("model", ["turn-keep", "v3.0.7"])
def test_the_reason_counts_messages_in_a_session_and_lines_in_a_bash_agent_file(model):
    """Every model words its reason in what the conversation is made of: a Claude Code
    session's messages, a bash-agent file's lines (the awk form's words)."""
    session = json.loads(run_main("--json", "--model", model, "--keep", "best",
                                  str(ROOT / "examples" / "claude-code.jsonl")).out)
    assert " messages" in session["reason"] and " lines" not in session["reason"]
    lines = json.loads(run_main("--json", "--model", model, *STATS,
                                str(INPUTS / "syn_40.jsonl")).out)
    assert " lines" in lines["reason"] and " messages" not in lines["reason"]

def test_json_writes_non_finite_numbers_as_strings():
    """r > 1 (the awk form allows it) grows r_t to inf; JSON has no inf: the string."""
    r = run_main("--json", *AGENT_ARGS, "-v", "r=2", "-v", "total_compact=5000", "-f", "x",
                 str(INPUTS / "syn_40.jsonl"))
    obj = json.loads(r.out)
    assert obj["derived"]["r_t"] == "inf" and obj["best_benefit"] == "inf"


def test_json_writes_an_infinite_loss_as_minus_inf():
    """An output price of 10³⁰⁸ $/MTok makes the summary request cost ∞: with keep none
    the terms are k = 0's, and the net benefit and the billed dollars are −∞, which the
    JSON writes as "-inf" (not "inf": a reader would see a boundless gain)."""
    r = run_main("--json", "--now", "1800000000", "--p-out", "1e308",
                 str(ROOT / "examples" / "claude-code.jsonl"))
    obj = json.loads(r.out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    assert (obj["decision"], obj["best_k"]) == ("skip", 0)
    terms = obj["terms"]
    assert (terms["compact_cost"], terms["benefit"], terms["billed"]) == \
        ("inf", "-inf", "-inf")


@pytest.mark.parametrize("flag", ["--json", "--explain"])
@pytest.mark.parametrize("form", ["awk", "native"])
def test_neither_flag_changes_the_decision(flag, form):
    for name in ("syn_400.jsonl", "syn_12.jsonl", "edge_no_user_lines.jsonl", "empty.jsonl"):
        args = ["-v", "t=5", "-v", "total_requests=40", "-v", "total_input=400000",
                "-v", "p_input=3", "-v", "p_cache=0.3", "-v", "p_out=15", "-v", "S=500",
                "-v", "V=5000", "-v", "beta=0.03", "-v", "r=0.8", "-v", "baseline_e=8",
                "-v", "min_keep_ratio=0.12"] if form == "awk" else STATS
        path = str(INPUTS / name)
        plain = run_main(*args, path)
        other = run_main(flag, *args, path)
        assert other.status == plain.status == 0
        keep = int(plain.out)
        if flag == "--json":
            assert json.loads(other.out)["keep"] == keep
        elif 0 < keep < len(reference.records(Path(path).read_bytes())):
            assert f"compact: keep the last {keep:,} line" in " ".join(other.out.split())
        else:
            assert "skip" in other.out


# --- the text fits, and never cuts a number --------------------------------------------------

EXPLAINED = [["--model", m, *STATS, str(INPUTS / f)]
             for m in ("v3.0.7", "v4.2", "v2")
             for f in ("syn_400.jsonl", "syn_2500.jsonl", "syn_12.jsonl", "up_37f.jsonl")]


@pytest.mark.parametrize("args", EXPLAINED, ids=lambda a: f"{a[1]}-{Path(a[-1]).stem}")
@pytest.mark.parametrize("columns", ["80", "60", "0", "1", "abc"])
def test_explain_fits_the_width_and_shows_every_number_whole(args, columns):
    """Any width (COLUMNS=0 included) prints the whole explanation; at 80 columns or fewer
    no line is longer than the width, and every number of the table appears whole (no
    '…' inside a cell)."""
    r = run_main("--explain", *args, environ={"COLUMNS": columns})
    width = int(columns) if columns.isdigit() and int(columns) >= 40 else 80
    assert r.status == 0 and r.out.strip()
    lines = r.out.splitlines()
    assert max(len(x) for x in lines) <= width, r.out
    for line in lines:
        if line.startswith("|") and "…" in line:
            assert re.fullmatch(r"\|\s*…[\d,]+\s*(\|\s*)*", line), line
    decision = json.loads(run_main("--json", *args).out)
    assert (decision["decision"] + ":") in " ".join(r.out.split())
    if decision.get("terms"):
        best = decision["best_k"]
        row = next(x for x in lines if re.match(rf"\|?\s*{best:,}\*", x))
        benefit = f"{decision['best_benefit']:,.4f}"
        assert benefit in row


def test_reason_when_every_benefit_is_nan():
    """p_input = inf and p_cache = inf: ∞ − ∞ in every k."""
    r = run_main("--explain", "-v", "p_input=+inf", "-v", "p_cache=+inf", "-f", "x",
                 str(INPUTS / "syn_40.jsonl"))
    assert "NaN" in r.out and "no candidate k" not in r.out


def test_reason_with_a_policy_agrees_with_what_is_printed():
    """A cut that moves back to line 1 keeps everything: the decision prints NR, but the
    policy prints 0 — the sentence must not say it prints NR."""
    f = str(INPUTS / "edge_no_user_lines.jsonl")
    plain = run_main("--json", *STATS, f)
    obj = json.loads(plain.out)
    assert obj["keep"] == obj["lines"] and "(prints" in obj["reason"]
    r = run_main("--json", *STATS, "--context-tokens", "1000", f)
    obj = json.loads(r.out)
    assert obj["keep"] == 0 and obj["action"] == "skip"
    assert "prints" not in obj["reason"] and "Policy: skip" in obj["reason"]


def test_min_keep_is_described_with_its_cap():
    r = run_main("--explain", *STATS, str(INPUTS / "edge_two_lines.jsonl"))
    assert "at least 3, at most NR" in " ".join(r.out.split())


# --- snapshots: regression tests of the layout --------------------------------------------------

SNAPSHOT_CASES = {
    "compact": [*STATS, "golden/inputs/syn_400.jsonl"],
    "skip_break_even": ["--turns", "1", "--requests", "3", "--input-tokens", "12000",
                        "golden/inputs/syn_12.jsonl"],
    "empty": ["golden/inputs/empty.jsonl"],
    "v42_guard": ["--model", "v4.2", *STATS, "golden/inputs/syn_40.jsonl"],
    "no_user_lines": [*STATS, "golden/inputs/edge_no_user_lines.jsonl"],
    "policy_forced": ["--model", "v4.2", *STATS, "--trigger", "auto", "--context-tokens",
                      "190000", "golden/inputs/syn_40.jsonl"],
}


@pytest.mark.parametrize("name", sorted(SNAPSHOT_CASES))
def test_explain_snapshot(name, monkeypatch):
    """Regression tests of the --explain layout at 100 columns, piped (no colour): they
    prove nothing about the numbers (the tests above do); they show a change of layout.
    UPDATE_SNAPSHOTS=1 rewrites them after a deliberate change."""
    monkeypatch.chdir(ROOT)
    r = run_main("--explain", *SNAPSHOT_CASES[name], environ={"COLUMNS": "100"})
    assert r.status in (0, 1) and "\x1b[" not in r.out
    assert all(len(line) <= 100 for line in r.out.splitlines())
    snap = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS"):
        snap.write_text(r.out)
    assert r.out == snap.read_text()


def test_break_even_is_exact():
    """The sentence's R is the first whole number of remaining calls at which the best k's
    benefit, computed plainly with E = R and L = 1, turns positive."""
    text = " ".join(run_main("--explain", "--turns", "1", "--requests", "3", "--input-tokens",
                             "12000", str(INPUTS / "syn_12.jsonl")).out.split())
    m = re.search(r"keep (\d+) lines?\) loses .*? after ([\d,]+) more LLM calls", text)
    assert m, text
    k, calls = int(m.group(1)), int(m.group(2).replace(",", ""))
    lines = reference.records((INPUTS / "syn_12.jsonl").read_bytes())

    def benefit_at(R: int) -> float:
        given = {**AGENT_VALUES, "e_fixed": str(R), "L_fixed": "1", "t": "1",
                 "total_requests": "3", "total_input": "12000"}
        rows = reference.explain(lines, given, "v3.0.7")[3]["rows"]
        return next(row["benefit"] for row in rows if row["k"] == k)

    assert benefit_at(calls) > 0 >= benefit_at(calls - 1)


def test_break_even_boundary_is_strict():
    """A benefit of exactly 0 does not pay.  Ten lines of 2 tokens, k = 5 keeps K = H = 10;
    with p_input = 0 and exact binary prices the benefit is 0.5 (R − 2) H + 0.5 K over 10⁶,
    exactly 0.0 at R = 1: the break-even must be R = 2, not 1."""
    from compact_dp.core.search import break_even_calls
    conv = scan_stream([b"xxxx"] * 10)
    values = awk_values({"p_input": "0", "p_cache": "0.5", "p_out": "0", "S": "0", "V": "0",
                         "beta": "0", "min_keep_ratio": "0.5", "quality_penalty": "0",
                         "e_fixed": "1", "L_fixed": "1", "max_context": "1000"})
    model = get_model("v3.0.7")
    d = derive(values, conv, model)
    dec = decide_conversation(values, conv, model)
    assert (d.min_keep, d.T) == (5, 20)
    assert BenefitCurve(d.with_remaining_calls(1.0), model).terms(5, 10).benefit == 0.0
    assert BenefitCurve(d.with_remaining_calls(2.0), model).terms(5, 10).benefit > 0
    assert break_even_calls(d, dec.model, 5, 10) == 2


def test_explain_colour_follows_the_terminal_and_no_color():
    args = ["--explain", *STATS, str(INPUTS / "syn_400.jsonl")]
    assert "\x1b[" in run_main(*args, stdout_isatty=True).out
    assert "\x1b[" not in run_main(*args, stdout_isatty=True, environ={"NO_COLOR": "1"}).out
    assert "\x1b[" not in run_main(*args).out


def test_long_tables_leave_rows_out_and_say_so():
    text = run_main("--explain", *STATS, str(INPUTS / "syn_2500.jsonl"),
                    environ={"COLUMNS": "120"}).out
    assert "rows left out" in text
    assert len(text.splitlines()) < 60
