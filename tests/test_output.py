"""What compact-dp prints when piped (docs/output.md): no colour, no line ending in a space,
words and numbers whole at any width, and every JSON document versioned."""

from __future__ import annotations

import re

import pytest

from .conftest import INPUTS, ROOT, run_main

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
