"""The profile and ``compact-dp calibrate`` (docs/calibrate.md): where the profile is
written and how, which one every command reads, what a broken one does, and that fitting
is deterministic."""

from __future__ import annotations

import json
import math
import stat
from pathlib import Path

import pytest

from compact_dp.calibration import profile as profile_module
from compact_dp.calibration.profile import BUILT_IN

from .conftest import ROOT, run_main
from .session_fixtures import claude_session, claude_turns

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
    "a version true": json.dumps({**a_profile(), "profile_version": True}),
    "a version 1.0": json.dumps({**a_profile(), "profile_version": 1.0}),
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


def written_profile(home: Path) -> Path:
    return home / ".config" / "compact-dp" / "profile.json"


@pytest.fixture
def umask_022():
    import os
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_calibrate_writes_the_profile_whole_and_keeps_the_one_it_replaces(home, umask_022):
    env = {"HOME": str(home)}
    assert run_main("calibrate", environ=env).status == 0
    target = written_profile(home)
    folder = target.parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    shown = json.loads(run_main("calibrate", "--dry-run", "--json", environ=env).out)
    assert shown.pop("schema_version") == 1 and json.loads(target.read_text()) == shown
    assert shown["source"] == "3 sessions of your own" and shown["profile_version"] == 1
    assert {k: a["sessions"] for k, a in shown["agents"].items()} == \
        {"*": 3, "claude-code": 2, "codex": 1}
    target.chmod(0o600)                       # the user's own choice is kept
    first = target.read_bytes()
    r = run_main("calibrate", "--source", "again", environ=env)
    assert r.status == 0, r.err
    backup = folder / "profile.json.bak"
    assert backup.read_bytes() == first and stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert json.loads(target.read_text())["source"] == "again"
    assert sorted(p.name for p in folder.iterdir()) == ["profile.json", "profile.json.bak"]


def test_a_profile_that_cannot_be_written_leaves_the_old_one_whole(home, monkeypatch):
    import errno
    import os
    env = {"HOME": str(home)}
    assert run_main("calibrate", environ=env).status == 0
    target = written_profile(home)
    first = target.read_bytes()

    def full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "replace", full)
    r = run_main("calibrate", "--source", "again", environ=env)
    errors = [line for line in r.err.splitlines() if line.startswith("compact-dp: error")]
    assert r.status == 2 and errors == [f"compact-dp: error: cannot write {target}: No space "
                                        "left on device"]
    assert target.read_bytes() == first
    assert sorted(p.name for p in target.parent.iterdir()) == ["profile.json",
                                                               "profile.json.bak"]


def test_dry_run_writes_nothing_and_output_writes_where_asked(home, tmp_path):
    env = {"HOME": str(home)}
    assert run_main("calibrate", "--dry-run", environ=env).status == 0
    assert not written_profile(home).exists()
    elsewhere = tmp_path / "mine.json"
    assert run_main("calibrate", "--output", str(elsewhere), environ=env).status == 0
    assert not written_profile(home).exists()
    assert json.loads(elsewhere.read_text())["profile_version"] == 1


def two_turn_sessions(folder: Path, requests: list[int], same_ids: bool = False) -> Path:
    """Claude Code sessions of a one-request turn, then one of ``requests[k]``: their one
    point is that turn end, at j = 1, where ``requests[k]`` remain."""
    folder.mkdir(parents=True, exist_ok=True)
    for k, n in enumerate(requests):
        text = claude_turns([1, n]).text().decode()
        if not same_ids:                      # each its own responses
            text = text.replace('"msg_', f'"msg{k}_').replace('"req_', f'"req{k}_')
        (folder / f"s{k}.jsonl").write_text(text)
    return folder


def test_a_fresh_fit_levels_on_the_mean_of_what_remained(tmp_path):
    """All points at j = 1: no slope to fit (exponent 0), and the level is the mean of
    2, 4 and 9 requests remaining — each point weighing 1/√1."""
    folder = two_turn_sessions(tmp_path / "h", [2, 4, 9])
    r = run_main("calibrate", "--fresh", "--dry-run", "--json", str(folder))
    fitted = json.loads(r.out)
    assert fitted["exponent"] == 0.0
    assert fitted["agents"]["claude-code"]["level"] == 5.0 == fitted["agents"]["*"]["level"]
    assert fitted["agents"]["claude-code"]["sessions"] == 3


def test_a_resumed_sessions_first_file_is_left_out(tmp_path):
    """A file whose every response is in a longer one is the start of a resumed session:
    its last request is no end."""
    folder = two_turn_sessions(tmp_path / "h", [2, 9], same_ids=True)
    fitted = json.loads(run_main("calibrate", "--fresh", "--dry-run", "--json",
                                 str(folder)).out)
    assert fitted["agents"]["claude-code"]["level"] == 9.0


def test_a_fresh_fit_on_nothing_to_fit_is_one_error_line(tmp_path):
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "s.jsonl").write_bytes(claude_turns([9]).text())     # no second turn
    r = run_main("calibrate", "--fresh", "--dry-run", str(folder))
    errors = [line for line in r.err.splitlines() if line.startswith("compact-dp: error")]
    assert r.status == 2 and errors == ["compact-dp: error: calibrate: no session with a "
                                        "turn end or ten requests to fit on"]


def test_a_few_sessions_pull_the_built_in_level_by_their_number(tmp_path):
    """Three sessions against the built-in level's weight of 3 sessions (the prefix's and
    what compactions leave: 20): their level at its exponent a is Ĉ = mean(2, 4, 9) / 2^a,
    and ln C = (3 ln Ĉ + 3 ln C₀) / 6; below 100 sessions nothing else moves."""
    folder = two_turn_sessions(tmp_path / "h", [2, 4, 9])
    fitted = json.loads(run_main("calibrate", "--dry-run", "--json", str(folder)).out)
    prior = BUILT_IN_FIGURES
    for agent in ("claude-code", "*"):
        C0 = prior["agents"][agent]["level"]
        assert fitted["agents"][agent]["level"] == pytest.approx(
            math.exp((3 * math.log(5.0 / 2 ** prior["exponent"]) + 3 * math.log(C0)) / 6),
            rel=1e-12)
    assert (fitted["exponent"], fitted["end_chance"]) == (prior["exponent"],
                                                          prior["end_chance"])
    figures = ("level", "summary_tokens", "after_extra", "after_cached", "prefix")
    assert [fitted["agents"]["codex"][k] for k in figures] == \
        [prior["agents"]["codex"][k] for k in figures]           # no Codex session here
    mine, before = fitted["agents"]["claude-code"], prior["agents"]["claude-code"]
    kept = ("summary_tokens", "after_extra", "after_cached", "compactions")
    assert [mine[k] for k in kept] == [before[k] for k in kept]     # no compaction here
    from compact_dp.sessions.read import read_session
    prefixes = sorted(read_session([str(f)]).segment_prefixes[0]
                      for f in sorted(folder.iterdir()))             # each starts afresh
    assert mine["prefix"] == pytest.approx((3 * prefixes[1] + 20 * before["prefix"]) / 23,
                                           rel=1e-12)


def test_what_a_compaction_left_is_read_from_the_sessions_own(tmp_path):
    """A fresh fit on one session with one compaction: its summary, what it left beyond
    the replaced context's fixed prefix, and what of it the next request read."""
    from compact_dp.sessions.read import read_session
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "s.jsonl").write_bytes(claude_session().text())
    read = read_session([str(folder / "s.jsonl")])
    (after,) = read.aftermath
    fitted = json.loads(run_main("calibrate", "--fresh", "--dry-run", "--json",
                                 str(folder)).out)["agents"]["claude-code"]
    assert (fitted["summary_tokens"], fitted["after_extra"], fitted["after_cached"],
            fitted["compactions"]) == \
        (after.summary, after.left - read.segment_prefixes[0], after.first_read, 1)


def test_each_sessions_last_turn_end_is_the_ending_the_end_chance_is_fitted_on(tmp_path):
    """At a turn end the fit asks "was this the session's last turn?": the last turn end
    of each session is its one ending.  The end chance is a logistic regression with an
    intercept (its ridge is on the slopes only), so at its fit the chances of the turn
    ends it was fitted on add up to the endings: one per session."""
    from compact_dp.calibration.fit import points
    from compact_dp.core.horizon import end_chance
    from compact_dp.sessions.read import read_session
    folder = tmp_path / "h"
    folder.mkdir()
    shapes = ([1, 2], [1, 1, 3], [2, 12, 1], [1, 1, 1, 1], [3, 1, 2, 1, 1])
    for k, turns in enumerate(shapes):
        (folder / f"s{k}.jsonl").write_bytes(claude_turns(turns, ids=f"k{k}").text())
    turn_ends = []
    for f in sorted(folder.iterdir()):
        ends = [p for p in points(read_session([str(f)])) if p[3]]
        assert [p[4] for p in ends] == [False] * (len(ends) - 1) + [True], f.name
        turn_ends += ends
    fitted = json.loads(run_main("calibrate", "--fresh", "--dry-run", "--json",
                                 str(folder)).out)
    b0, bt, bj = fitted["end_chance"]
    chances = [end_chance(t, j, b0, bt, bj) for j, t, _rem, _te, _last in turn_ends]
    assert sum(chances) == pytest.approx(len(shapes), rel=1e-6)


def test_the_users_compaction_figures_are_pulled_to_the_built_in_ones_by_their_number(
        tmp_path):
    """n compactions of the user's own against the built-in figures' weight of 20: each
    figure (the summary, what a compaction left beyond the fixed prefix, what was still
    cached) is (n × the median of the user's + 20 × the built-in) / (n + 20)."""
    from compact_dp.calibration.fit import compaction_figures, median
    from compact_dp.sessions.read import read_session
    folder = tmp_path / "h"
    folder.mkdir()
    for k in range(3):
        built = claude_session(ids=f"k{k}")
        summary = "fixed parser quote handling. "
        text = built.text().decode().replace(summary * 30, summary * (10 + 15 * k))
        (folder / f"s{k}.jsonl").write_text(text)
    mine = [fig for f in sorted(folder.iterdir())
            for fig in compaction_figures(read_session([str(f)]))]
    assert len(mine) == 3 and len({fig[0] for fig in mine}) == 3
    fitted = json.loads(run_main("calibrate", "--dry-run", "--json",
                                 str(folder)).out)["agents"]["claude-code"]
    before = BUILT_IN_FIGURES["agents"]["claude-code"]
    for i, name in enumerate(("summary_tokens", "after_extra", "after_cached")):
        assert fitted[name] == pytest.approx(
            (3 * median([fig[i] for fig in mine]) + 20 * before[name]) / 23, rel=1e-12), name
    assert fitted["compactions"] == before["compactions"] + 3


def test_fitting_is_deterministic_whatever_the_order_of_the_folders(home, tmp_path):
    """What make calibrate relies on: the same sessions give the same bytes."""
    claude, codex = str(home / ".claude"), str(home / ".codex")
    outputs = []
    for i, order in enumerate(([claude, codex], [codex, claude], [claude, codex])):
        out = tmp_path / f"p{i}.json"
        r = run_main("calibrate", "--fresh", "--source", "s", "--output", str(out), *order)
        assert r.status == 0, r.err
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]


def test_make_calibrate_writes_the_built_in_profile_with_a_fresh_fit():
    """The Makefile's recipe: --fresh, the shipped file as --output, no backup left."""
    make = (ROOT / "Makefile").read_text()
    recipe = make[make.index("\ncalibrate:"):].split("\n\n")[0]
    assert "calibrate --fresh --output compact_dp/calibration/default.json" in recipe
    assert "rm -f compact_dp/calibration/default.json.bak" in recipe
    assert Path(BUILT_IN).read_text() == \
        json.dumps(BUILT_IN_FIGURES, indent=1) + "\n"          # as calibrate writes it


# --- which profile every command uses ----------------------------------------------------------

def users_profile(home: Path, **figures) -> Path:
    target = written_profile(home)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(a_profile(**figures)))
    return target


def test_the_decision_uses_the_users_profile_and_names_it(home):
    target = users_profile(home, level=1000.0)
    obj = decide({"HOME": str(home)})
    j = obj["session"]["requests"]
    assert obj["derived"]["R"] == 1000.0 * (j + 1) ** 0.5
    assert obj["session"]["profile"] == {"source": "a test profile", "path": str(target)}
    assert "a test profile" in obj["derived"]["horizon_source"]


def test_compact_dp_profile_names_another_file_or_none_for_the_built_in(home, tmp_path):
    users_profile(home, level=1000.0)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**a_profile(level=3.0), "source": "another"}))
    obj = decide({"HOME": str(home), "COMPACT_DP_PROFILE": str(other)})
    assert obj["session"]["profile"]["source"] == "another"
    assert obj["derived"]["R"] == 3.0 * (obj["session"]["requests"] + 1) ** 0.5
    obj = decide({"HOME": str(home), "COMPACT_DP_PROFILE": "none"})
    assert obj["session"]["profile"]["path"] == BUILT_IN
    missing = decide({"HOME": str(home), "COMPACT_DP_PROFILE": str(tmp_path / "nope")})
    assert missing["session"]["profile"]["path"] == BUILT_IN


def test_xdg_config_home_moves_the_users_profile(home, tmp_path):
    users_profile(home, level=1000.0)
    config = tmp_path / "config" / "compact-dp"
    config.mkdir(parents=True)
    (config / "profile.json").write_text(json.dumps({**a_profile(), "source": "xdg"}))
    obj = decide({"HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert obj["session"]["profile"]["source"] == "xdg"


@pytest.mark.parametrize("origin", ["given", "session", "env", "profile", "default"])
def test_a_figure_comes_from_the_caller_the_session_the_env_the_profile_the_default(
        origin, tmp_path):
    """S: given > what the session recorded > DP_S > the profile (what real sessions of
    the agent showed) > the agent's own summaries (a profile that saw no compaction of
    the agent: never bash-agent's 500-token default)."""
    from compact_dp import api
    data = (claude_session() if origin == "session" else claude_turns([3, 4])).text()
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(a_profile() if origin != "default" else
                               {**a_profile(), "agents": {"claude-code": {"level": 9.0}}}))
    environ = {"COMPACT_DP_PROFILE": str(path), **({"DP_S": "777"} if origin == "env" else {})}
    given = {"summary_tokens": 123} if origin == "given" else {}
    obj = api.load(data).decide(environ=environ, now=0.0, **given).as_dict()
    from compact_dp.sessions.read import read_session
    (tmp_path / "s.jsonl").write_bytes(data)
    own = read_session([str(tmp_path / "s.jsonl")]).summary_tokens
    S = {"given": 123.0, "session": own, "env": 777.0, "profile": 1000.0,
         "default": 8000.0}[origin]
    words = {"given": "given", "session": "from the session", "env": "env DP_S",
             "profile": "a test profile", "default": "format default"}[origin]
    assert obj["session"]["summary_tokens"] == S and own != 1000.0
    assert words in obj["session"]["sources"]["S"]
    if origin == "default":          # nothing measured what a compaction leaves: V + S
        assert obj["derived"]["X"] == S
        assert obj["session"]["sources"]["after_tokens"].startswith("V + S")


def test_the_status_line_uses_the_users_profile(home):
    from .conftest import clean_env, run_cli
    stdin = json.dumps({"transcript_path": EXAMPLE}).encode()
    lines = {}
    for name, extra in (("built in", {"COMPACT_DP_PROFILE": "none"}), ("the user's", {})):
        users_profile(home, level=1000.0)
        p = run_cli("statusline", input=stdin,
                    env=clean_env(HOME=str(home), XDG_CONFIG_HOME="", NO_COLOR="1", **extra))
        assert p.returncode == 0 and len(p.stdout.splitlines()) == 1
        lines[name] = p.stdout
    assert lines["built in"] != lines["the user's"]


def test_replay_and_backtest_use_the_users_profile(home):
    env = {"HOME": str(home)}
    runs = {}
    for level in (1e-6, 1000.0):
        users_profile(home, level=level)
        profile_module._CACHE.clear()
        obj = json.loads(run_main("replay", "--json", "--policy", "dp", EXAMPLE,
                                  environ=env).out)
        runs[level] = obj["sessions"][0]["policies"][0]["compactions"]
    assert runs[1e-6] == 0 < runs[1000.0]     # R = 1 never pays; R in the thousands does
    obj = json.loads(run_main("backtest", "--json", EXAMPLE, environ=env).out)
    for p in obj["sessions"][0]["points"]:
        assert p["forecast"] == 1000.0 * (p["request"] + 1) ** 0.5
        assert "a test profile" in p["horizon"]


def explained_line(tmp_path: Path, name: str) -> tuple[str, str]:
    """--explain on a session with no compaction of its own, under the test profile: all
    of it, and the line of one quantity."""
    (tmp_path / "s.jsonl").write_bytes(claude_turns([3, 4]).text())
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(a_profile()))
    out = run_main("--explain", str(tmp_path / "s.jsonl"),
                   environ={"COMPACT_DP_PROFILE": str(path), "COLUMNS": "200"}).out
    return out, next(line for line in out.splitlines() if line.startswith(name + " "))


def test_explain_names_the_profile_a_figure_came_from(tmp_path):
    assert "a test profile" in explained_line(tmp_path, "S")[1]


def test_explain_names_the_forecast_and_its_profile(tmp_path):
    out, R = explained_line(tmp_path, "R")
    assert "E × L" not in R and "(j + 1)" in out and "a test profile" in R


def test_replays_decision_before_the_first_compaction_knows_only_the_agents_figures(
        tmp_path):
    """A session whose one compaction comes late, with a profile that saw no compaction of
    the agent: before it, replay's dp knows no summary of its own, so it weighs the
    agent's summaries and V + S (as the decision would), never 500 tokens that cost the
    later requests nothing; after it, the session's own."""
    from compact_dp.core.models import get_model
    from compact_dp.replaying.run import setting_for
    from compact_dp.sessions.read import read_session

    from .session_fixtures import turns_session
    path = tmp_path / "profile.json"
    path.write_text(json.dumps({**a_profile(), "agents": {"claude-code": {"level": 9.0}}}))
    f = tmp_path / "s.jsonl"
    f.write_bytes(turns_session([[900] * 3] * 4, compacted=3).text())
    session = read_session([str(f)])
    setting = setting_for(session, {}, get_model("cache-clock"), True, 0, None, None,
                          {"COMPACT_DP_PROFILE": str(path)})
    (first, before), *later = setting.asker.known
    assert first == 0 and before["S"] == 8000.0
    assert before["after_tokens"] == setting.V0 + 8000.0
    own = session.aftermath[0]
    assert later and later[-1][1]["after_tokens"] == own.left
