"""The Python API: compact_dp.decide and compact_dp.should_compact, without a subprocess."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

import compact_dp
from compact_dp.errors import BadValue, CompactDpError, UsageError

from .conftest import EXAMPLE, INPUTS, clean_env

STATS = {"turns": 5, "requests": 40, "input_tokens": 400000}


def test_every_kind_of_source_gives_the_same_decision():
    data = EXAMPLE.read_bytes()
    lines = data.rstrip(b"\n").split(b"\n")
    answers = {compact_dp.decide(src, STATS).keep
               for src in (EXAMPLE, str(EXAMPLE), data, io.BytesIO(data), lines,
                           [x.decode() for x in lines])}
    assert answers == {54}


def test_parameters_by_awk_or_option_name():
    by_option = compact_dp.decide(EXAMPLE, {"turns": 5, "requests": 40, "input-tokens": 4e5})
    by_awk = compact_dp.decide(EXAMPLE, {"t": "5", "total_requests": 40,
                                         "total_input": 400000})
    assert (by_option.keep, by_option.best_benefit) == (by_awk.keep, by_awk.best_benefit)
    with pytest.raises(BadValue, match="unknown parameter"):
        compact_dp.decide(EXAMPLE, {"turnz": 5})
    with pytest.raises(BadValue, match="not a number"):
        compact_dp.decide(EXAMPLE, {"turns": "five"})
    with pytest.raises(BadValue, match="out of range"):
        compact_dp.decide(EXAMPLE, {"retention": 1.5})


def test_one_error_type_for_callers():
    """Every failure a caller can cause is a CompactDpError with its exit status."""
    for call in (lambda: compact_dp.decide(EXAMPLE, {"turns": "x"}),
                 lambda: compact_dp.decide(INPUTS / "missing.jsonl"),
                 lambda: compact_dp.decide(EXAMPLE, model="v9"),
                 lambda: compact_dp.should_compact(EXAMPLE, trigger="later")):
        with pytest.raises(CompactDpError) as info:
            call()
        assert info.value.status == 2 and info.value.line().startswith(("error", "fatal"))
    assert issubclass(BadValue, UsageError)


def test_env_only_when_asked():
    plain = compact_dp.decide(EXAMPLE, STATS, model="v3.0.7")
    small = compact_dp.decide(EXAMPLE, STATS, env={"DP_MIN_KEEP_RATIO": "0.5"})
    assert plain.derived.min_keep == 48 and small.derived.min_keep == 200


def test_should_compact_is_the_policy():
    r = compact_dp.should_compact(EXAMPLE, "auto", 185000, STATS)
    assert (r.action, r.keep, r.forced, r.exit_status) == ("compact", 54, False, 0)
    r = compact_dp.should_compact(INPUTS / "edge_no_user_lines.jsonl", "auto", 1000, STATS)
    assert (r.action, r.keep, r.exit_status) == ("skip", 0, 1)


def test_importing_the_package_is_light():
    """``import compact_dp`` alone pulls in nothing but the package's own __init__."""
    p = subprocess.run([sys.executable, "-c", "import sys, compact_dp; "
                        "print(sorted(m for m in sys.modules if m.startswith('compact_dp')))"],
                       capture_output=True, text=True, env=clean_env(), cwd="/")
    assert p.stdout.strip() == "['compact_dp', 'compact_dp.version']"
