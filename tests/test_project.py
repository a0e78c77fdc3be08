"""The forecast that learns each project (calibration/project.py, docs/calibrate.md "Each
project's own"): hand-made folders of sessions with known lengths and times, the level
worked out by hand; what is used at a moment (``--now``) and what is not; the cache; the
walk-forward backtest; and the scores that compare like with like."""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import pytest

from compact_dp.calibration import profile as profile_module
from compact_dp.calibration import project
from compact_dp.calibration.fit import project_sums, project_weight
from compact_dp.replaying.backtest import totals
from compact_dp.replaying.compare import like_with_like
from compact_dp.sessions.read import read_session

from .conftest import ROOT, TRANSCRIPTS, clean_env, run_cli, run_main
from .session_fixtures import T0, ClaudeSession, CodexRollout, claude_turns, text

HOUR = 3600.0
LEVEL, EXPONENT, WEIGHT = 2.0, 0.5, 4.0        # the test profile's forecast


@pytest.fixture(autouse=True)
def fresh_profiles(monkeypatch):
    monkeypatch.setattr(profile_module, "_CACHE", {})


def t0() -> float:
    """T0 in seconds since 1970."""
    from datetime import datetime
    return datetime.fromisoformat(T0.replace("Z", "+00:00")).timestamp()


def a_profile(tmp_path: Path, weight: float | None = WEIGHT) -> dict[str, str]:
    path = tmp_path / "profile.json"
    body = {"profile_version": 1, "source": "a test profile", "exponent": EXPONENT,
            "end_chance": [-1.0, -0.5, 0.25],
            "agents": {"*": {"level": 7.0}, "claude-code": {"level": LEVEL},
                       "codex": {"level": 20.0}}}
    if weight is not None:
        body["project_weight"] = weight
    path.write_text(json.dumps(body))
    return {"COMPACT_DP_PROFILE": str(path)}


def claude_at(hours: float, turns: list[int], sid: str, pauses: dict[int, float] | None = None
              ) -> ClaudeSession:
    """A Claude Code session that begins ``hours`` after T0: human turns of ``turns[i]``
    requests each, two seconds a line; ``pauses``: hours away before turn i."""
    away = {t: h * HOUR for t, h in (pauses or {}).items()}
    away[0] = away.get(0, 0.0) + hours * HOUR
    return claude_turns(turns, away=away, session_id=sid, ids=sid)


def write(folder: Path, name: str, session: ClaudeSession | CodexRollout,
          old: bool = True) -> Path:
    """The session's file; ``old``: last written an hour ago (a file being written now is
    read only once it has been quiet)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(session.text())
    if old:
        past = time.time() - HOUR
        os.utime(path, (past, past))
    return path


def by_hand(sessions: list[tuple[int, list[int]]]) -> tuple[float, float]:
    """(Σ remaining, Σ (j + 1)^a) of sessions of N requests whose human turns began
    before ``turn ends`` requests: at each turn end and every 10th request."""
    remaining = exposure = 0.0
    for n, ends in sessions:
        for j in ends + list(range(10, n, 10)):
            remaining += n - j
            exposure += (j + 1) ** EXPONENT
    return remaining, exposure


def pooled(remaining: float, exposure: float) -> float:
    return (remaining + WEIGHT * LEVEL) / (exposure + WEIGHT)


def decide(path: Path, env: dict, *args: str) -> dict:
    return json.loads(run_main("--json", *args, str(path), environ=env).out)


def at(hours: float) -> str:
    return f"{t0() + hours * HOUR:.3f}"


# --- the level, by hand -------------------------------------------------------------------

def test_with_no_earlier_session_the_forecast_is_the_profiles(tmp_path):
    env = a_profile(tmp_path)
    now = write(tmp_path / "p", "now.jsonl", claude_at(10, [1, 2], "now"))
    obj = decide(now, env, "--now", at(11))
    assert obj["session"]["requests"] == 3
    assert obj["derived"]["R"] == LEVEL * 4 ** EXPONENT
    assert "no earlier session of this project" in obj["derived"]["horizon_source"]
    alone = decide(now, env, "--now", at(11), "--horizon", "profile")
    assert alone["derived"]["R"] == obj["derived"]["R"]
    assert alone["derived"]["horizon"] == "profile"
    assert "project" not in alone["derived"]["horizon_source"]


def test_many_long_earlier_sessions_forecast_longer_than_the_profile(tmp_path):
    """Five sessions of 61 requests (a turn of 1, then one of 60): at j = 1 and every 10th
    request, 61 − j remained; the level is (Σ remaining + 4 × 10) / (Σ √(j + 1) + 4)."""
    env = a_profile(tmp_path)
    folder = tmp_path / "p"
    for k in range(5):
        write(folder, f"past{k}.jsonl", claude_at(k, [1, 60], f"past{k}"))
    now = write(folder, "now.jsonl", claude_at(10, [1, 2], "now"))
    obj = decide(now, env, "--now", at(11))
    level = pooled(*by_hand([(61, [1])] * 5))
    assert level > 2.5 * LEVEL
    assert obj["derived"]["R"] == pytest.approx(level * 4 ** EXPONENT, rel=1e-12)
    assert "5 earlier sessions of this project" in obj["derived"]["horizon_source"]
    explained = run_main("--explain", "--now", at(11), str(now), environ=env).out
    assert "5 earlier sessions of this project" in " ".join(explained.split())


def test_a_pipe_in_the_projects_folder_is_passed_over(tmp_path):
    """A named pipe called like a session would be waited on forever (no one writes it):
    the project's sessions are the files; the answer comes, and is the one without it."""
    env = a_profile(tmp_path)
    folder = tmp_path / "p"
    for k in range(5):
        write(folder, f"past{k}.jsonl", claude_at(k, [1, 60], f"past{k}"))
    now = write(folder, "now.jsonl", claude_at(10, [1, 2], "now"))
    alone = decide(now, env, "--now", at(11))["derived"]
    os.mkfifo(folder / "live.jsonl")
    past = time.time() - HOUR                   # quiet long enough to be read
    os.utime(folder / "live.jsonl", (past, past))
    p = run_cli("--json", "--now", at(11), str(now), env=clean_env(
        COMPACT_DP_CACHE=str(tmp_path / "cache"), **env))
    assert p.returncode == 0, p.stderr
    derived = json.loads(p.stdout)["derived"]
    assert (derived["R"], derived["horizon_source"]) == (alone["R"], alone["horizon_source"])
    assert "5 earlier sessions of this project" in derived["horizon_source"]


def test_the_more_sessions_the_nearer_the_projects_own_level(tmp_path):
    """The pooled level moves from the profile's towards the sessions' own as they add
    up: 1, 3 and 9 sessions of 21 requests."""
    env = a_profile(tmp_path)
    levels = []
    for count in (1, 3, 9):
        folder = tmp_path / f"p{count}"
        for k in range(count):
            write(folder, f"past{k}.jsonl", claude_at(k, [1, 20], f"s{count}-{k}"))
        now = write(folder, "now.jsonl", claude_at(20, [1, 2], f"now{count}"))
        R = decide(now, env, "--now", at(21))["derived"]["R"]
        levels.append(R / 4 ** EXPONENT)
        assert levels[-1] == pytest.approx(pooled(*by_hand([(21, [1])] * count)), rel=1e-12)
    own = by_hand([(21, [1])])
    own_level = own[0] / own[1]
    assert LEVEL < levels[0] < levels[1] < levels[2] < own_level


def test_sessions_after_the_moment_are_not_used_and_one_still_going_is_not_either(tmp_path):
    """At hour 3: the sessions of hours 0 and 1 are over; the one of hour 5 has not begun;
    one whose last request came within 5 minutes may still be going; one that paused for
    an hour counts with the requests it had made by then (a turn of 1 and one of 20: 21
    of them, its turn end at j = 1)."""
    env = a_profile(tmp_path)
    folder = tmp_path / "p"
    write(folder, "a.jsonl", claude_at(0, [1, 30], "a"))
    write(folder, "b.jsonl", claude_at(1, [1, 30], "b"))
    write(folder, "later.jsonl", claude_at(5, [1, 30], "later"))
    going = claude_at(3 - 60 / HOUR, [1, 30], "going")       # began a minute before
    write(folder, "going.jsonl", going)
    write(folder, "paused.jsonl", claude_at(2, [1, 20, 40], "paused", pauses={2: 2.0}))
    now = write(folder, "now.jsonl", claude_at(3, [1, 2], "now"))
    obj = decide(now, env, "--now", at(3 + 120 / HOUR))
    level = pooled(*by_hand([(31, [1]), (31, [1]), (21, [1])]))
    assert obj["derived"]["R"] == pytest.approx(level * 4 ** EXPONENT, rel=1e-12)
    assert "3 earlier sessions of this project" in obj["derived"]["horizon_source"]
    # an hour later the one that was going is over too, all 31 of its requests
    later = decide(now, env, "--now", at(4))
    level = pooled(*by_hand([(31, [1]), (31, [1]), (21, [1]), (31, [1])]))
    assert later["derived"]["R"] == pytest.approx(level * 4 ** EXPONENT, rel=1e-12)


@pytest.mark.parametrize("name, older", [("a-start.jsonl", True), ("z-start.jsonl", False)])
def test_a_resumed_sessions_first_file_counts_once(tmp_path, name, older):
    """A file holding the start of another (the same first request): the longer counts,
    whichever is met first (read first: the newer file)."""
    env = a_profile(tmp_path)
    folder = tmp_path / "p"
    whole = claude_at(0, [1, 40], "whole")
    write(folder, "whole.jsonl", whole)
    start = ClaudeSession(session_id="start")
    start.lines = whole.lines[:30]
    first = write(folder, name, start)
    when = time.time() - (2 if older else 0.5) * HOUR
    os.utime(first, (when, when))
    now = write(folder, "now.jsonl", claude_at(10, [1, 2], "now"))
    obj = decide(now, env, "--now", at(11))
    assert obj["derived"]["R"] == pytest.approx(pooled(*by_hand([(41, [1])])) * 2, rel=1e-12)
    assert "1 earlier session of this project" in obj["derived"]["horizon_source"]


def test_a_codex_rollout_learns_from_the_rollouts_of_its_working_folder(tmp_path):
    env = a_profile(tmp_path)
    day = tmp_path / "sessions" / "2026" / "03" / "01"

    def rollout(cwd: str, requests: int, hours: float) -> CodexRollout:
        r = CodexRollout()
        r.pause(hours * HOUR)
        r.user("do it")
        for i in range(requests - 1):
            r.tool_request(9000 + 500 * i, 9000 + 500 * i - 500 if i else 0)
        r.reply(9000 + 500 * requests, 9000 + 500 * (requests - 1))
        r.lines = [line.replace('"cwd":"/p"', f'"cwd":"{cwd}"')
                   .replace('"id":"r-1"', f'"id":"r-{hours}"') for line in r.lines]
        return r
    write(day, "rollout-a.jsonl", rollout("/p", 30, 1))
    write(day.parent / "02", "rollout-b.jsonl", rollout("/p", 30, 2))
    write(day, "rollout-c.jsonl", rollout("/elsewhere", 90, 3))
    now = write(day.parent / "03", "rollout-now.jsonl", rollout("/p", 3, 10))
    obj = decide(now, env, "--now", at(30))
    assert "2 earlier sessions of this project" in obj["derived"]["horizon_source"]


# --- the cache ------------------------------------------------------------------------------

def counting(monkeypatch) -> list[str]:
    read: list[str] = []
    original = project.read_past

    def counted(path, *args, **kw):
        read.append(os.path.basename(path))
        return original(path, *args, **kw)
    monkeypatch.setattr(project, "read_past", counted)
    return read


def test_the_cache_is_used_and_a_changed_file_is_read_again(tmp_path, monkeypatch):
    env = {**a_profile(tmp_path), "COMPACT_DP_CACHE": str(tmp_path / "cache")}
    folder = tmp_path / "p"
    for k in range(3):
        write(folder, f"past{k}.jsonl", claude_at(k, [1, 20], f"past{k}"))
    now = write(folder, "now.jsonl", claude_at(10, [1, 2], "now"))
    read = counting(monkeypatch)
    first = decide(now, env, "--now", at(11))
    assert sorted(read) == ["past0.jsonl", "past1.jsonl", "past2.jsonl"]
    (cache,) = (tmp_path / "cache").glob("project-*.cache")
    assert cache.stat().st_mode & 0o777 == 0o600
    read.clear()
    assert decide(now, env, "--now", at(11)) == first
    assert read == []                                   # nothing read again
    longer = claude_at(1, [1, 50], "past1")
    write(folder, "past1.jsonl", longer)                # the file changed
    second = decide(now, env, "--now", at(11))
    assert read == ["past1.jsonl"]
    level = pooled(*by_hand([(21, [1]), (51, [1]), (21, [1])]))
    assert second["derived"]["R"] == pytest.approx(level * 2, rel=1e-12)
    assert cache.with_name(cache.name + ".bak").exists()    # the one it replaced
    cache.write_bytes(b"not a cache")                   # a broken cache: the backup, which
    read.clear()                                        # is from before past1 changed
    assert decide(now, env, "--now", at(11)) == second
    assert read == ["past1.jsonl"]
    (folder / "past2.jsonl").unlink()                   # a file gone is gone
    level = pooled(*by_hand([(21, [1]), (51, [1])]))
    assert decide(now, env, "--now", at(11))["derived"]["R"] == \
        pytest.approx(level * 2, rel=1e-12)


def test_a_file_being_written_is_neither_read_nor_used(tmp_path, monkeypatch):
    env = {**a_profile(tmp_path), "COMPACT_DP_CACHE": str(tmp_path / "cache")}
    folder = tmp_path / "p"
    write(folder, "past.jsonl", claude_at(0, [1, 20], "past"))
    write(folder, "busy.jsonl", claude_at(1, [1, 20], "busy"), old=False)
    now = write(folder, "now.jsonl", claude_at(10, [1, 2], "now"))
    read = counting(monkeypatch)
    obj = decide(now, env, "--now", at(11))
    assert read == ["past.jsonl"]
    assert "1 earlier session of this project" in obj["derived"]["horizon_source"]


def test_reading_stops_at_the_deadline_and_goes_on_later(tmp_path):
    """Past the deadline nothing more is read (said: "not read yet"); a file larger than
    a step is read in steps across calls, to the same figures as at once."""
    env = {"COMPACT_DP_CACHE": str(tmp_path / "cache")}
    folder = tmp_path / "p"
    for k in range(2):
        write(folder, f"past{k}.jsonl", claude_at(k, [1, 20], f"past{k}"))
    now = write(folder, "now.jsonl", claude_at(10, [1, 2], "now"))
    late = project.project_history(str(now), "claude-code", "/p", env, time.monotonic() - 1)
    assert late is not None and (late.pasts, late.unread) == ([], 2)
    assert "(2 more not read yet)" in late.evidence(t0() + 11 * HOUR, EXPONENT, LEVEL,
                                                    WEIGHT).words()
    done = project.project_history(str(now), "claude-code", "/p", env)
    assert done is not None and (len(done.pasts), done.unread) == (2, 0)
    big = ClaudeSession(session_id="big", ids="big")
    big.user("go")
    for i in range(800):
        big.response([text("x" * 3000)], (0, 10, 9000 + 10 * i))
    path = write(folder, "big.jsonl", big)
    assert path.stat().st_size > 2 * project.STEP
    whole, _ = project.read_past(str(path))
    progress, steps = None, 0
    while True:
        past, progress = project.read_past(str(path), None, progress, time.monotonic() - 1)
        steps += 1
        if progress is None:
            break
    assert steps >= 2 and past is not None and whole is not None
    assert (past.times, past.turns, past.start, past.cwd) == \
        (whole.times, whole.turns, whole.start, whole.cwd)
    assert len(whole.times) == 800


@pytest.mark.parametrize("name", ["claude-code.jsonl", "codex.jsonl"])
def test_what_is_kept_of_a_session_is_its_request_times_and_turn_ends(name):
    """As the full reading finds them (session.turn_requests, each request's time)."""
    path = str(ROOT / "examples" / name)
    past, _ = project.read_past(path)
    session = read_session([path])
    assert past is not None
    assert past.turns == session.turn_requests() and past.turns
    assert len(past.times) == len(session.requests)
    assert list(past.times) == [r.sent if r.sent is not None else r.time
                                for r in session.requests]


def test_the_real_sessions_kept_as_the_full_reading_finds_them():
    files = sorted(TRANSCRIPTS.glob("*.jsonl")) if TRANSCRIPTS.is_dir() else []
    if not files:
        pytest.skip("needs ../shared (real data read in place; absent in a lone clone)")
    for f in files:
        past, _ = project.read_past(str(f))
        session = read_session([str(f)])
        if past is None:
            assert not session.has_usage
            continue
        assert past.turns == session.turn_requests(), f
        assert len(past.times) == len(session.requests), f


# --- the weight, measured ---------------------------------------------------------------------

def test_the_weight_is_the_within_over_the_between_variance_of_levels():
    """Bühlmann–Straub on two projects of two sessions: levels 2 and 4 (exposure 1 each)
    in one, 6 and 8 in the other: σ² = (1 + 1 + 1 + 1) / 2 = 2; the projects' means 3 and
    7 about 5, Σ m (x − 5)² = 2 × 4 + 2 × 4 = 16, τ² = (16 − 2) / (4 − 8 / 4) = 7."""
    rows = [("a", 2.0, 1.0), ("a", 4.0, 1.0), ("b", 6.0, 1.0), ("b", 8.0, 1.0)]
    assert project_weight(rows) == pytest.approx(2 / 7, rel=1e-12)
    assert project_weight([("a", 2.0, 1.0), ("a", 4.0, 1.0)]) == 1e12   # one project
    same = [("a", 2.0, 1.0), ("a", 8.0, 1.0), ("b", 2.0, 1.0), ("b", 8.0, 1.0)]
    assert project_weight(same) == 1e12                  # no difference between them


def test_a_sessions_sums_count_a_point_in_both_sets_twice():
    pts = [(1, 1, 20, True, False), (10, 2, 11, False, False), (20, 3, 1, True, True)]
    assert project_sums(pts, 0.5) == (20 + 11 + 2 * 1, math.sqrt(2) + math.sqrt(11) +
                                      2 * math.sqrt(21))


def test_the_built_in_profile_carries_its_measured_weight():
    built_in = profile_module.load_profile({"COMPACT_DP_PROFILE": "none"})
    assert built_in.project_weight is not None and 1 < built_in.project_weight < 1000
    assert profile_module.project_weight(built_in) == built_in.project_weight


def test_a_profile_without_a_weight_takes_the_built_in_ones(tmp_path):
    env = a_profile(tmp_path, weight=None)
    mine = profile_module.load_profile(env)
    built_in = profile_module.load_profile({"COMPACT_DP_PROFILE": "none"})
    assert mine.project_weight is None
    assert profile_module.project_weight(mine) == built_in.project_weight


# --- walk-forward backtest ----------------------------------------------------------------------

def test_backtest_walks_forward_each_forecast_seeing_only_earlier_sessions(tmp_path):
    """Three sessions of one project, hours apart: the first's points see none, the
    second's the first, the third's both — at each point the level by hand — and the first
    backtested alone is the same: the later ones were never seen.  Nor is a session itself,
    though it was quiet for half an hour before its last turn."""
    env = {**a_profile(tmp_path), "COLUMNS": "200"}
    folder = tmp_path / "p"
    shapes = [[1, 20, 3], [1, 30, 2], [1, 10, 4]]
    paths = [write(folder, f"s{k}.jsonl", claude_at(2 * k, turns, f"s{k}", {2: 0.5}))
             for k, turns in enumerate(shapes)]
    obj = json.loads(run_main("backtest", "--json", str(folder), environ=env).out)
    by = {Path(s["session"]).name: s for s in obj["sessions"]}
    known = [(sum(t), [1, 1 + t[1]]) for t in shapes]       # requests, turn ends
    for k, path in enumerate(paths):
        s = by[path.name]
        assert s["project"] == "p"                 # named as replay names it (its cwd: /p)
        level = pooled(*by_hand(known[:k])) if k else LEVEL
        words = "no earlier session" if k == 0 else \
            f"{k} earlier session{'s' if k > 1 else ''} of this project"
        assert s["points"]
        for p in s["points"]:
            assert words in p["horizon"]
            assert p["forecast"] == pytest.approx(level * (p["request"] + 1) ** EXPONENT,
                                                  rel=1e-12)
    alone = json.loads(run_main("backtest", "--json", str(paths[0]), environ=env).out)
    assert [p["forecast"] for p in alone["sessions"][0]["points"]] == \
        [p["forecast"] for p in by["s0.jsonl"]["points"]]
    plain = json.loads(run_main("backtest", "--json", "--profile-only", str(folder),
                                environ=env).out)
    for s in plain["sessions"]:
        for p in s["points"]:
            assert "project" not in p["horizon"]
            assert p["forecast"] == LEVEL * (p["request"] + 1) ** EXPONENT


# --- like with like ---------------------------------------------------------------------------

def run(policy: str, cost: float, penalty: float, compactions: int = 1) -> dict:
    return {"policy": policy, "comparable_cost": cost, "objective": cost + penalty,
            "compactions": compactions}


def test_shares_set_the_objective_against_the_objective_and_dollars_against_dollars():
    """dp saves $4 and, with ④ of $3, 1 in the objective; hindsight saves 3 in the
    objective; the cheapest schedule in dollars saves $5."""
    runs = [run("recorded", 10.0, 0.0, 0), run("dp", 6.0, 3.0, 3),
            run("hindsight", 8.0, 0.0), run("hindsight:free", 5.0, 4.0, 4)]
    like_with_like(runs)
    by = {r["policy"]: r for r in runs}
    assert (by["dp"]["objective_saving"], by["dp"]["objective_share"]) == (1.0, 0.5)
    assert by["dp"]["dollar_share"] == 4 / 5
    assert (by["hindsight"]["objective_share"], by["hindsight:free"]["dollar_share"]) == \
        (1.0, 1.0)
    alone = [run("recorded", 10.0, 0.0), run("dp", 6.0, 3.0), run("hindsight", 8.0, 0.0)]
    like_with_like(alone)
    assert alone[1]["dollar_share"] is None             # no cheapest schedule in dollars


def test_the_total_takes_the_median_and_the_sum_of_long_sessions():
    def session(requests: int, dp: tuple[float, float], best: float, free: float) -> dict:
        runs = [run("recorded", 10.0, 0.0, 0), run("dp", *dp, 2),
                run("hindsight", best, 0.0), run("hindsight:free", free, 1.0, 2)]
        like_with_like(runs)
        for r in runs:
            r["saving"] = 10.0 - r["comparable_cost"]
        return {"requests": requests, "points": [],
                "policies": {r["policy"]: r for r in runs}}
    results = [session(100, (9.0, 0.0), 8.0, 6.0),       # objective 1 of 2, dollars 1 of 4
               session(150, (7.0, 4.0), 9.0, 5.0),       # objective −1 of 1, dollars 3 of 5
               session(400, (4.0, 0.0), 6.0, 4.0),       # objective 6 of 4, dollars 6 of 6
               session(99, (1.0, 0.0), 9.0, 1.0)]        # short: not counted
    t = totals(results)
    assert t["long_sessions"] == 3
    assert t["dp_hindsight_share_median"] == 0.5
    assert t["dp_hindsight_share_sum"] == pytest.approx((1 - 1 + 6) / (2 + 1 + 4))
    assert t["dp_dollar_share_median"] == pytest.approx(3 / 5)
    assert t["dp_dollar_share_sum"] == pytest.approx((1 + 3 + 6) / (4 + 5 + 6))
    assert t["dp_objective_worse_share"] == pytest.approx(1 / 3)
    assert t["dp_compactions_over_hindsight"] == 2.0


# --- the status line ------------------------------------------------------------------------

def test_the_status_line_learns_the_project_and_a_broken_cache_never_breaks_it(tmp_path):
    """The installed command, as Claude Code runs it: the forecast it says ("over ~N more
    requests") is the one the decision makes with the folder's other sessions; a cache
    file that is not one, and a sibling that is no session, change nothing."""
    import subprocess

    from .conftest import clean_env, command_path
    env = {**clean_env(), **a_profile(tmp_path), "COMPACT_DP_CACHE": str(tmp_path / "c")}
    folder = tmp_path / "p"
    for k in range(4):
        write(folder, f"past{k}.jsonl", claude_at(k, [1, 60], f"past{k}"))
    (folder / "notes.jsonl").write_text("not a session\n")
    now = write(folder, "now.jsonl", claude_at(10, [1, 2], "now"))
    status = json.dumps({"transcript_path": str(now), "model": {"id": "claude-opus-4-6"},
                         "context_window": {"context_window_size": 200000}}).encode()

    def line() -> str:
        p = subprocess.run([command_path(), "statusline"], input=status, env=env,
                           capture_output=True, timeout=60)
        assert p.returncode == 0 and p.stderr == b""
        return p.stdout.decode()
    said = line()
    level = pooled(*by_hand([(61, [1])] * 4))
    assert f"over ~{level * 2:,.0f} more requests" in said, said
    assert f"{LEVEL * 2:,.0f} more" not in said
    (cache,) = (tmp_path / "c").glob("project-*.cache")
    cache.write_bytes(b"\x00garbage")
    cache.with_name(cache.name + ".bak").write_bytes(b"garbage too")
    assert line() == said
