"""On every session of the shared corpus (real sessions of other projects, read in
place): the window learned holds the recorded peak, ``never`` is the bill where nothing was
compacted, hindsight's objective is the least, and nothing is assumed without a reason
(replaying/checks.py; docs/replay.md, "The session's setting")."""

from __future__ import annotations

import json

from compact_dp.replaying.checks import CHECKS, failures

from .conftest import corpus, run_main

POLICIES = ["recorded", "dp", "hindsight", "never", "threshold:60", "threshold:83"]


def test_no_corpus_session_fails_a_check_of_its_setting():
    folder = corpus()
    r = run_main("replay", "--json", *[a for p in POLICIES for a in ("--policy", p)],
                 str(folder / "claude-code"), str(folder / "codex"))
    assert r.status == 0, r.err
    sessions = json.loads(r.out)["sessions"]
    assert len(sessions) > 300
    checked = [s for s in sessions if s.get("recorded")]
    assert sum("hindsight" in {p["policy"] for p in s["policies"]} for s in checked) > 300
    failed = {s["session"]: failures(s) for s in checked if failures(s)}
    assert failed == {}, {k: v for k, v in list(failed.items())[:5]}


def test_the_checks_catch_what_they_name():
    """Each check fails the session shape it is about (so a zero above means something)."""
    def session(**change) -> dict:
        runs = {"recorded": {"policy": "recorded", "comparable_cost": 10.0, "objective": 11.0,
                             "peak_context": 150000.0, "forced": 0},
                "never": {"policy": "never", "comparable_cost": 10.0, "objective": 10.0,
                          "forced": 0},
                "hindsight": {"policy": "hindsight", "comparable_cost": 9.0,
                              "objective": 9.5, "forced": 0}}
        for (policy, key), value in change.pop("runs", {}).items():
            runs[policy][key] = value
        return {"recorded": {"input_cost": 10.0}, "compactions": 0, "assumed": [],
                "setting": {"context_window": 200000.0, "windows": None},
                "policies": list(runs.values()), **change}
    assert failures(session()) == []
    assert failures(session(runs={("recorded", "peak_context"): 250000.0})) == [CHECKS[0]]
    assert failures(session(runs={("never", "forced"): 1})) == [CHECKS[1]]
    assert failures(session(runs={("never", "comparable_cost"): 10.06})) == [CHECKS[1]]
    assert failures(session(runs={("never", "comparable_cost"): 10.04})) == []
    assert failures(session(runs={("hindsight", "objective"): 10.1})) == [CHECKS[2]]
    assert failures(session(assumed=["window: just because"])) == [CHECKS[3]]
    assert failures(session(assumed=["prices of x: not in the price table"])) == []
