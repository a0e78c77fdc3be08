"""The profile and ``compact-dp calibrate`` (docs/calibrate.md): where the profile is
written and how, which one every command reads, what a broken one does, and that fitting
is deterministic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compact_dp.calibration import profile as profile_module
from compact_dp.calibration.profile import BUILT_IN

from .conftest import ROOT, run_main
from .session_fixtures import claude_turns

EXAMPLE = str(ROOT / "examples" / "claude-code.jsonl")
BUILT_IN_FIGURES = json.loads(Path(BUILT_IN).read_text())


@pytest.fixture(autouse=True)
def fresh_profiles(monkeypatch):
    """Profiles are read once per process and path; each test reads its own afresh."""
    monkeypatch.setattr(profile_module, "_CACHE", {})


def a_profile(level: float = 10.0, exponent: float = 0.5, **agent) -> dict:
    """A valid profile whose Claude Code forecast is level × (j + 1)^exponent."""
    return {"profile_version": 1, "source": "a test profile", "fitted": "",
            "exponent": exponent, "end_chance": [-1.0, -0.5, 0.25],
            "agents": {"*": {"level": 8.0},
                       "claude-code": {"level": level, "summary_tokens": 1000.0,
                                       "after_extra": 2000.0, "after_cached": 4000.0,
                                       **agent}}}


def decide(environ: dict[str, str], *args: str) -> dict:
    r = run_main("--json", *args, EXAMPLE, environ=environ)
    assert r.status == 0 and not r.err, r.err
    return json.loads(r.out)


def built_in_R(requests: int) -> float:
    figures = BUILT_IN_FIGURES["agents"]["claude-code"]
    return max(1.0, figures["level"] * (requests + 1) ** BUILT_IN_FIGURES["exponent"])


# --- a profile that cannot be used ------------------------------------------------------------

BROKEN = {
    "not JSON": "{profile",
    "a list": "[]",
    "another version": json.dumps({**a_profile(), "profile_version": 2}),
    "no agents": json.dumps({k: v for k, v in a_profile().items() if k != "agents"}),
    "agents a list": json.dumps({**a_profile(), "agents": []}),
    "an agent a number": json.dumps({**a_profile(), "agents": {"claude-code": 5}}),
    "a level in words": json.dumps(a_profile(level="high")),
    "a level of 0": json.dumps(a_profile(level=0.0)),
    "a negative summary": json.dumps(a_profile(summary_tokens=-3.0)),
    "a count true": json.dumps(a_profile(sessions=True)),
    "an exponent NaN": json.dumps(a_profile(exponent=float("nan"))),
    "an exponent above 1": json.dumps(a_profile(exponent=1.5)),
    "an exponent in words": json.dumps(a_profile(exponent="0.2")),
    "two end-chance numbers": json.dumps({**a_profile(), "end_chance": [1.0, 2.0]}),
    "an infinite end chance": json.dumps({**a_profile(), "end_chance": [1.0, 2.0, 1e999]}),
    "a source that is a number": json.dumps({**a_profile(), "source": 3}),
    "nested past any depth": "[" * 100_000 + "]" * 100_000,
}


@pytest.mark.parametrize("text", BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_profile_is_passed_over_silently_for_the_built_in_one(text, tmp_path):
    """What the code does: the decision never fails on a profile, and says nothing on
    standard error; --json names the built-in profile it used instead."""
    path = tmp_path / "profile.json"
    path.write_text(text)
    obj = decide({"COMPACT_DP_PROFILE": str(path)})
    assert obj["session"]["profile"]["path"] == BUILT_IN
    assert obj["derived"]["R"] == built_in_R(obj["session"]["requests"])


def test_a_profile_that_is_a_folder_is_passed_over_too(tmp_path):
    obj = decide({"COMPACT_DP_PROFILE": str(tmp_path)})
    assert obj["session"]["profile"]["path"] == BUILT_IN


def test_a_valid_profile_next_to_the_broken_ones_is_used(tmp_path):
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(a_profile()))
    obj = decide({"COMPACT_DP_PROFILE": str(path)})
    assert obj["session"]["profile"] == {"source": "a test profile", "path": str(path)}
    assert obj["derived"]["R"] == 10.0 * (obj["session"]["requests"] + 1) ** 0.5


# --- where the profile is ----------------------------------------------------------------------

@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """The fixture home of tests/test_history.py, and this process's own HOME somewhere
    else: the environment a command is given is the whole truth."""
    from .test_history import make_home
    monkeypatch.setenv("HOME", str(tmp_path / "the process's own home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return make_home(tmp_path)


def test_the_user_profile_is_in_the_given_homes_config_folder(home, tmp_path):
    r = run_main("calibrate", environ={"HOME": str(home)})
    target = home / ".config" / "compact-dp" / "profile.json"
    assert r.status == 0, r.err
    assert f"calibrate: profile written to {target}" in r.err
    assert target.is_file() and not (tmp_path / "the process's own home").exists()
    obj = decide({"HOME": str(home)})
    assert obj["session"]["profile"]["path"] == str(target)


def test_without_a_home_there_is_no_user_profile(home):
    (home / ".config" / "compact-dp").mkdir(parents=True)
    (home / ".config" / "compact-dp" / "profile.json").write_text(json.dumps(a_profile()))
    assert decide({})["session"]["profile"]["path"] == BUILT_IN
    r = run_main("calibrate", str(home / ".claude"), environ={})
    assert r.status == 2 and "--output" in r.err and len(r.err.splitlines()) == 1


def test_a_fresh_fit_on_nothing_to_fit_is_one_error_line(tmp_path):
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "s.jsonl").write_bytes(claude_turns([9]).text())     # no second turn
    r = run_main("calibrate", "--fresh", "--dry-run", str(folder))
    errors = [line for line in r.err.splitlines() if line.startswith("compact-dp: error")]
    assert r.status == 2 and errors == ["compact-dp: error: calibrate: no session with a "
                                        "turn end or ten requests to fit on"]
