"""Every recorded awk run, replayed byte for byte (stdout and exit status)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from compact_dp.main import main

from .conftest import CASES, INPUTS, run_cli

PROGRAM = {"turn-keep": "compact_turn_keep.awk"}


def drop_in_argv(case: dict) -> list[str]:
    """How an agent script calls it: awk's arguments, -f PROGRAM, FILE (model named if
    the program name cannot say it)."""
    program = PROGRAM.get(case["profile"], "compact_dp.awk")
    model = [] if case["profile"] in ("turn-keep", "v3.0.7") else ["--model", case["profile"]]
    return [*model, *case["args"], "-f", program, str(INPUTS / case["input"])]


def test_every_recorded_case_through_the_installed_command():
    """All 742 cases, each in its own process, exactly as awk was called."""
    def one(case):
        p = run_cli(*drop_in_argv(case))
        return case, p.stdout.decode("latin-1"), p.returncode
    with ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as pool:
        results = list(pool.map(one, CASES))
    bad = [(c["label"], c["input"], c["args"], c["stdout"], c["rc"], out, rc)
           for c, out, rc in results if (out, rc) != (c["stdout"], c["rc"])]
    assert len(results) == 742
    assert bad == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['profile']}-{c['label']}-{c['input']}")
def test_golden_check_form(case, capsys):
    """The form ../shared/tools/golden-check uses: --model PROFILE ARGS... FILE."""
    argv = ["--model", case["profile"], *case["args"], str(INPUTS / case["input"])]
    status = main(argv)
    out = capsys.readouterr().out
    if case["label"] == "omitted_all":
        # No -v and no -f: SPEC §7 makes this the *native* form, which applies the §2
        # defaults; awk ran with every variable unset.  See README "Known differences".
        assert (out, status) == ("120\n", 0)
        assert main(["-f", "compact_dp.awk", str(INPUTS / case["input"])]) == 0
        assert capsys.readouterr().out == case["stdout"]
        return
    assert (out, status) == (case["stdout"], case["rc"])
