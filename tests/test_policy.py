"""The forced-compaction policy against a plain transcription, on every recording."""

from __future__ import annotations

import json

import pytest

import compact_dp
from compact_dp.core.policy import force_limit

from . import reference
from .conftest import (
    AGENT_STATS,
    CASES,
    DEFAULTS,
    INPUTS,
    NATIVE_STATS,
    REAL_SWE_CASES,
    assignments,
    run_main,
)

TRIGGERS = ["auto", "plan_clear", "plan_confirm"]
AGENT_CASES = [c for c in CASES + REAL_SWE_CASES if c["label"] == "agent"]


def lines_of(path: str) -> list[bytes]:
    with open(path, "rb") as f:
        return reference.records(f.read())


@pytest.mark.parametrize("case", AGENT_CASES, ids=lambda c: f"{c['profile']}-{c['input']}")
def test_policy_follows_the_agent_for_every_recorded_agent_call(case):
    """3 triggers × context below / at / above the force limit, from the recorded answer."""
    params = assignments(case)
    lines = lines_of(case["path"])
    recorded_keep = int(case["stdout"] or 0)
    limit = force_limit(float(params.get("max_context", 200000)))
    assert limit == 180000
    session = compact_dp.load(case["path"])
    for trigger in TRIGGERS:
        for ctx in (0, limit - 1, limit, limit + 1, 10 * limit):
            want = reference.policy(lines, recorded_keep, trigger, ctx, 200000, 0.12)
            got = session.decide(trigger=trigger, context_tokens=ctx,
                                 model=case["profile"], params=params)
            assert (got.keep, got.exit_status) == want, (trigger, ctx)
            undecided = recorded_keep == 0 or recorded_keep >= len(lines)
            assert got.forced == (undecided and (trigger != "auto" or ctx > limit))


@pytest.mark.parametrize("name", sorted({c["input"] for c in CASES if c["label"] == "agent"
                                         and c["input"] != "does_not_exist.jsonl"}))
def test_policy_on_the_command_line(name):
    """The native form: prints the keep, exit 0 = compact now, 1 = do not; --json adds
    action and forced."""
    lines = lines_of(str(INPUTS / name))
    decided = reference.decide(lines, {**DEFAULTS, **AGENT_STATS}, "v3.0.7")
    for trigger in TRIGGERS:
        for ctx in ("1000", "180001"):
            want_keep, want_status = reference.policy(lines, decided, trigger,
                                                      float(ctx), 200000, 0.12)
            r = run_main(*NATIVE_STATS, "--trigger", trigger, "--context-tokens", ctx,
                         str(INPUTS / name))
            assert (r.out, r.status) == (f"{want_keep}\n", want_status)
            r = run_main(*NATIVE_STATS, "--trigger", trigger, "--context-tokens", ctx,
                         "--json", str(INPUTS / name))
            obj = json.loads(r.out)
            assert r.status == want_status
            assert obj["action"] == ("compact" if want_status == 0 else "skip")
            assert obj["keep"] == want_keep
            assert isinstance(obj["forced"], bool)


def test_force_percent_moves_the_limit():
    """--force-percent 50 forces at 100,001 tokens what 90 % does not."""
    f = str(INPUTS / "edge_no_user_lines.jsonl")   # the decision alone never compacts here
    args = ["--context-tokens", "100001", f]
    r = run_main(*args)
    assert (r.status, r.out) == (1, "0\n")
    r = run_main("--force-percent", "50", *args)
    want = reference.policy(lines_of(f), 0, "auto", 100001, 200000, 0.12, 50)
    assert (r.out, r.status) == (f"{want[0]}\n", want[1])


def test_plan_trigger_with_nothing_to_keep_summarises_everything():
    """plan_* proceeds even with keep = 0 (no user lines: turn-keep keeps nothing)."""
    f = str(INPUTS / "edge_spaced_json.jsonl")
    r = run_main("--trigger", "plan_clear", f)
    assert (r.status, r.out) == (0, "0\n")
    assert run_main("--trigger", "auto", "--context-tokens", "999999", f).status == 1


@pytest.mark.parametrize("spec, legal", [
    ("threshold:0", False), ("threshold:-5", False), ("threshold:100.5", False),
    ("threshold:x", False), ("threshold:0.5", True), ("threshold:100", True)])
def test_a_threshold_is_a_percentage_above_0_up_to_100(spec, legal):
    """A threshold of 0 % would compact before every request: refused, as is anything past
    100 % or not a number; the bounds' inside (100 included) is a policy of that name."""
    from compact_dp.errors import UsageError
    from compact_dp.replaying.policies import make_policy
    if legal:
        assert make_policy(spec).name == f"threshold:{float(spec.split(':')[1]):g}"
    else:
        with pytest.raises(UsageError, match="percentage"):
            make_policy(spec)
