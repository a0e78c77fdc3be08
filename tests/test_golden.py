"""Every recorded awk run, replayed byte for byte (stdout and exit status).

The recordings are regression data from real awk runs (gawk, mawk and original-awk agreed
on each): ``golden/`` holds those on generated and edge inputs; the ones on converted
SWE-agent trajectories are read from ``../shared/golden-awk`` when it is there.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from .conftest import CASES, NO_SHARED, REAL_SWE_CASES, SHARED_CASES, run_cli, run_main

PROGRAM = {"turn-keep": "compact_turn_keep.awk"}


def drop_in_argv(case: dict) -> list[str]:
    """The agent's own call, as ../shared/tools/golden-check makes it: --model PROFILE,
    awk's arguments, -f PROGRAM, FILE."""
    program = PROGRAM.get(case["profile"], "compact_dp.awk")
    return ["--model", case["profile"], *case["args"], "-f", program, case["path"]]


def mismatches(cases: list[dict], run) -> list[tuple]:
    with ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as pool:
        results = list(pool.map(run, cases))
    return [(c["profile"], c["label"], c["input"], c["args"], c["stdout"], c["rc"], out, rc)
            for c, (out, rc) in zip(cases, results) if (out, rc) != (c["stdout"], c["rc"])]


def installed(case: dict) -> tuple[str, int]:
    p = run_cli(*drop_in_argv(case))
    return p.stdout.decode("latin-1"), p.returncode


def test_every_local_recording_through_the_installed_command():
    """All recordings this repository holds, each in its own process."""
    assert len(CASES) == 625
    assert mismatches(CASES, installed) == []


def test_every_shared_recording_through_the_installed_command():
    """The full recorded set (742 runs, 117 of them on real SWE-agent sessions)."""
    if not SHARED_CASES:
        pytest.skip(NO_SHARED)
    assert len(SHARED_CASES) == 742 and len(REAL_SWE_CASES) == 117
    assert mismatches(REAL_SWE_CASES, installed) == []


@pytest.mark.parametrize("case", CASES + REAL_SWE_CASES,
                         ids=lambda c: f"{c['profile']}-{c['label']}-{c['input']}")
def test_each_recording_in_process(case):
    """The same call in this process, with internal errors re-raised."""
    r = run_main(*drop_in_argv(case))
    assert (r.out, r.status) == (case["stdout"], case["rc"])
