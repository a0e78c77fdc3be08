"""The forced-compaction policy (SPEC §6) against a plain transcription, on every recording."""

from __future__ import annotations

import json

import pytest

import compact_dp
from compact_dp.main import main
from compact_dp.params import native_values
from compact_dp.policy import force_limit

from . import reference
from .conftest import CASES, INPUTS

TRIGGERS = ["auto", "plan_clear", "plan_confirm"]
NAMES = {"t": "turns", "total_requests": "requests", "total_compact": "compactions",
         "total_input": "input_tokens", "baseline_e": "baseline_turns",
         "e_fixed": "fixed_turns", "L_fixed": "calls_per_turn", "V": "prefix_tokens",
         "S": "summary_tokens", "r": "retention"}
AGENT_CASES = [c for c in CASES if c["label"] == "agent"]


def params_of(case) -> dict[str, str]:
    return dict(a.split("=", 1) for a in case["args"] if a != "-v")


def lines_of(name: str) -> list[bytes]:
    return reference.records((INPUTS / name).read_bytes())


@pytest.mark.parametrize("case", AGENT_CASES, ids=lambda c: f"{c['profile']}-{c['input']}")
def test_policy_follows_spec_6_for_every_recorded_agent_call(case):
    """3 triggers × context below / at / above the force limit, from the recorded awk answer."""
    params = params_of(case)
    lines = lines_of(case["input"])
    recorded_keep = int(case["stdout"] or 0)
    limit = force_limit(float(params.get("max_context", 200000)))
    assert limit == 180000
    for trigger in TRIGGERS:
        for ctx in (0, limit - 1, limit, limit + 1, 10 * limit):
            want = reference.policy(lines, recorded_keep, trigger, ctx, 200000, 0.12)
            got = compact_dp.should_compact(INPUTS / case["input"], trigger, ctx, params,
                                    model=case["profile"])
            assert (got.keep, got.exit_status) == want, (trigger, ctx)
            undecided = recorded_keep == 0 or recorded_keep >= len(lines)
            assert got.forced == (undecided and (trigger != "auto" or ctx > limit))


@pytest.mark.parametrize("name", sorted({c["input"] for c in AGENT_CASES}))
def test_policy_on_the_command_line(name, capsys):
    """The native form: prints the keep, exit 0 = compact now, 1 = do not; --json adds
    action and forced."""
    lines = lines_of(name)
    stats = ["--turns", "5", "--requests", "40", "--compactions", "0",
             "--input-tokens", "400000"]
    values = native_values({"t": "5", "total_requests": "40", "total_input": "400000"}, {})
    decided = reference.decide(lines, values, "v3.0.7")
    for trigger in TRIGGERS:
        for ctx in ("1000", "180001"):
            want_keep, want_status = reference.policy(lines, decided, trigger,
                                                      float(ctx), 200000, 0.12)
            status = main([*stats, "--trigger", trigger, "--context-tokens", ctx,
                           str(INPUTS / name)])
            assert (capsys.readouterr().out, status) == (f"{want_keep}\n", want_status)
            status = main([*stats, "--trigger", trigger, "--context-tokens", ctx, "--json",
                           str(INPUTS / name)])
            obj = json.loads(capsys.readouterr().out)
            assert status == want_status
            assert obj["action"] == ("compact" if want_status == 0 else "skip")
            assert obj["keep"] == want_keep
            assert isinstance(obj["forced"], bool)


def test_force_percent_moves_the_limit(capsys):
    """--force-percent 50 forces at 100,001 tokens what 90 % does not."""
    f = str(INPUTS / "edge_no_user_lines.jsonl")   # the decision alone never compacts here
    args = ["--context-tokens", "100001", f]
    assert main(args) == 1 and capsys.readouterr().out == "0\n"
    assert main(["--force-percent", "50", *args]) in (0, 1)
    out = capsys.readouterr().out
    want = reference.policy(lines_of("edge_no_user_lines.jsonl"), 0, "auto", 100001, 200000,
                            0.12, 50)
    assert out == f"{want[0]}\n"


def test_plan_trigger_with_nothing_to_keep_summarises_everything(capsys):
    """plan_* proceeds even with keep = 0 (no user lines: turn-keep keeps nothing)."""
    f = str(INPUTS / "edge_spaced_json.jsonl")
    assert main(["--trigger", "plan_clear", f]) == 0
    assert capsys.readouterr().out == "0\n"
    assert main(["--trigger", "auto", "--context-tokens", "999999", f]) == 1
    assert capsys.readouterr().out == "0\n"
