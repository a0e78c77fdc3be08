"""What compact-dp prints when piped (docs/output.md): no colour, no line ending in a space,
words and numbers whole at any width, and every JSON document versioned."""

from __future__ import annotations

import json
import re

import pytest

from .conftest import INPUTS, ROOT, clean_env, run_cli, run_main, write
from .session_fixtures import claude_turns

STATS = ["--turns", "5", "--requests", "40", "--input-tokens", "400000"]
EXAMPLES = ROOT / "examples"
WIDTHS = ["40", "47", "60", "80", "100", "133"]
PIPED = {
    "decision": [*STATS, str(INPUTS / "syn_400.jsonl")],
    "decision, keep none": [str(EXAMPLES / "claude-code.jsonl")],
    "explain": ["--explain", *STATS, str(INPUTS / "syn_40.jsonl")],
    "explain, long table": ["--explain", *STATS, str(INPUTS / "syn_2500.jsonl")],
    "explain, v4.2 policy": ["--explain", "--model", "v4.2", *STATS, "--trigger", "auto",
                             "--context-tokens", "190000", str(INPUTS / "syn_40.jsonl")],
    "explain, a session": ["--explain", str(EXAMPLES / "claude-code.jsonl")],
    "explain, codex": ["--explain", str(EXAMPLES / "codex.jsonl")],
    "replay": ["replay", str(EXAMPLES / "claude-code.jsonl"), str(EXAMPLES / "codex.jsonl")],
    "prices": ["prices"],
    "prices, two": ["prices", "claude-opus-4-6", "gpt-5.1-codex"],
}


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("name", sorted(PIPED))
def test_no_line_of_piped_output_ends_in_a_space(name, columns):
    r = run_main(*PIPED[name], environ={"COLUMNS": columns})
    assert r.status in (0, 1) and r.out.strip() and "\x1b[" not in r.out
    ragged = [line for line in r.out.split("\n") if line.endswith((" ", "\t"))]
    assert ragged == [], f"{len(ragged)} lines end in a space, e.g. {ragged[0]!r}"


def split_explanation(text: str) -> tuple[list[str], list[str]]:
    """(the words of the prose — the facts above the table, the legend and sentences below
    it — and the cells of the table)."""
    prose: list[str] = []
    cells: list[str] = []
    part = "facts"
    for line in text.splitlines():
        if part == "facts" and line.startswith("+"):
            part = "table"
        elif part == "table" and line.startswith("Terms in $"):
            part = "after"
        if part == "table":
            if line.startswith("|") and not set(line) <= set("|-+"):
                cells += line.replace("|", " ").split()
        else:
            prose += line.split()
    return prose, cells


EXPLAINED = sorted(name for name in PIPED if name.startswith("explain"))


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("name", EXPLAINED)
def test_explain_folds_text_only_between_words_and_cuts_no_number(name, columns):
    """At any width the explanation has the words it has on the widest line, in the same
    order (folding moves only the spaces), every table cell is one of the wide table's,
    and no line is longer than the width."""
    narrow = run_main(*PIPED[name], environ={"COLUMNS": columns}).out
    wide = run_main(*PIPED[name], environ={"COLUMNS": "1000"}).out
    words, cells = split_explanation(narrow)
    assert words == split_explanation(wide)[0]
    assert set(cells) <= set(split_explanation(wide)[1])
    assert max(len(line) for line in narrow.splitlines()) <= int(columns), narrow


def test_a_stdout_that_cannot_encode_a_symbol_gets_a_question_mark_not_an_error():
    """Piped output is UTF-8 with its symbols; a stdout in another encoding gets '?' for
    the ones it lacks, and the answer all the same."""
    p = run_cli(*PIPED["explain"], env=clean_env(PYTHONIOENCODING="latin-1", COLUMNS="80"))
    assert p.returncode == 0 and p.stderr == b""
    assert b"\n? " in p.stdout and b"compact: keep the last 6 lines" in p.stdout
    assert p.stdout.decode("latin-1") == run_main(*PIPED["explain"], environ={
        "COLUMNS": "80"}).out.encode("latin-1", "replace").decode("latin-1")


JSON_DOCUMENTS = {
    "decision": ["--json", *STATS, str(INPUTS / "syn_400.jsonl")],
    "decision, awk form": ["--json", "-v", "t=5", "-f", "x", str(INPUTS / "syn_40.jsonl")],
    "decision, a policy": ["--json", *STATS, "--context-tokens", "1000",
                           str(INPUTS / "syn_40.jsonl")],
    "decision, empty": ["--json", str(INPUTS / "empty.jsonl")],
    "decision, a session": ["--json", str(EXAMPLES / "claude-code.jsonl")],
    "replay": ["replay", "--json", str(EXAMPLES / "codex.jsonl")],
    "replay, two": ["replay", "--json", str(EXAMPLES / "codex.jsonl"),
                    str(EXAMPLES / "claude-code.jsonl")],
    "prices": ["prices", "--json"],
}


@pytest.mark.parametrize("name", sorted(JSON_DOCUMENTS))
def test_every_json_document_starts_with_the_schema_version_the_docs_give(name):
    r = run_main(*JSON_DOCUMENTS[name])
    assert r.status in (0, 1), r.err
    document = json.loads(r.out)
    assert next(iter(document)) == "schema_version"
    documented = re.search(r"`schema_version` is (\d+)", (ROOT / "docs" / "output.md")
                           .read_text())
    assert documented and document["schema_version"] == int(documented.group(1))


@pytest.mark.parametrize("x, words", [
    (1, "$1.00"), (1.0, "$1.00"), (-1, "-$1.00"), (12.5, "$12.50"), (1234.5, "$1,234.50"),
    (0, "$0.00"), (0.37, "$0.37"), (0.0042, "$0.0042"), (-0.0042, "-$0.0042")])
def test_money_has_cents_from_a_dollar_up_and_enough_digits_below(x, words):
    """From $1 up (exactly $1 included) an amount has two decimals and thousands
    separators; below, as many digits as show it."""
    from compact_dp.views.words import money
    assert money(x) == words


@pytest.mark.parametrize("policy, says", [
    ([], "skip"), (["--trigger", "auto"], "skip"), (["--trigger", "plan_clear"], "compact"),
    (["--trigger", "auto", "--context-tokens", "190000"], "compact"),
    (["--context-tokens", "199000"], "compact")])
def test_plain_output_on_a_whole_history_agent_says_what_the_policy_did(policy, says,
                                                                        tmp_path):
    """A Claude Code session summarises its whole history: the plain form prints
    ``compact`` or ``skip``, and with a policy asked for (a trigger, the last request's
    size) it is the policy's action — a forced compaction prints ``compact`` where the
    cost model alone says ``skip`` — the action ``--json`` reports."""
    f = str(write(tmp_path, claude_turns([1, 2]).text()))
    plain = run_main(*policy, f)
    obj = json.loads(run_main("--json", *policy, f).out)
    assert plain.status in (0, 1) and not plain.err, plain.err
    assert obj["keep"] == 0                  # the cost model alone: do not compact
    assert plain.out == says + "\n"
    assert obj.get("action", "skip") == says and obj.get("forced", False) == (says != "skip")
