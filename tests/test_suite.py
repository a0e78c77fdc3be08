"""The test suite itself (issue 28, "Why 6"): it leaves nothing behind, and CI runs the
Hypothesis profile made for it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from hypothesis import settings

from .conftest import PROFILE, ROOT, chosen_profile


def test_ci_runs_the_ci_profile_the_same_examples_every_run():
    assert "export HYPOTHESIS_PROFILE=ci\n" in (ROOT / ".ci" / "run").read_text()
    assert chosen_profile({"HYPOTHESIS_PROFILE": "ci"}) == "ci"
    assert chosen_profile({"CI": "true"}) == "ci"            # as CI services set it
    assert chosen_profile({"CI": "true", "HYPOTHESIS_PROFILE": "dev"}) == "dev"
    assert chosen_profile({}) == "dev"
    ci, dev = settings.get_profile("ci"), settings.get_profile("dev")
    assert (ci.derandomize, ci.database, ci.deadline) == (True, None, None)
    assert ci.max_examples == dev.max_examples               # the same time as a local run
    assert not dev.derandomize and dev.database is not None
    assert settings.get_profile("thorough").max_examples == 400
    assert settings.default.derandomize == (PROFILE == "ci")  # this run's profile is loaded
    assert PROFILE == chosen_profile(dict(os.environ))


def test_a_run_removes_the_folders_it_made(tmp_path):
    """A whole pytest run, in a temporary folder of its own: the cache and config folders
    the commands are given are gone when it ends (60 of them were once left in /tmp)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-n", "0",
                        "tests/test_cli.py::test_python_dash_m_runs_the_same_command",
                        "--basetemp", str(tmp_path / "base")],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 passed" in p.stdout
    assert sorted(os.listdir(scratch)) == []


# What `make bench` does in a lone clone: every section whose goals need ../shared, and how
# each is called (its arguments when it returns early: none is used).
NEEDS_SHARED = {
    "project_statusline": "('compact-dp', 1, 0.01, goals)",
    "corpus_smoke": "('compact-dp', goals)",
    "simulation_errors": "(goals)",
    "setting_checks": "('compact-dp', goals)",
    "backtest_section": "('compact-dp', goals)",
    "history_section": "('compact-dp', 1, goals)",
    "home_section": "('compact-dp', 1, goals)",
    "fast_reading_check": "(goals)",
}
DATA_BUILDERS = {"corpus_folder", "history_tree", "corpus_home"}    # they return None


def test_bench_in_a_lone_clone_skips_each_goal_that_needs_shared_data_saying_why(tmp_path):
    """benchmarks/bench.py copied where no ../shared is beside it: each section that needs
    the real sessions adds no goal (a goal missing its data is neither met nor missed) and
    says on its own line that it skipped and what it needs."""
    import ast
    source = (ROOT / "benchmarks" / "bench.py").read_text()
    callers = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name not in DATA_BUILDERS:
            called = {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call)
                      and isinstance(n.func, ast.Name)}
            if called & DATA_BUILDERS or '"shared"' in ast.get_source_segment(source, node):
                callers.add(node.name)
    assert callers == set(NEEDS_SHARED)          # a new section that needs ../shared joins
    clone = tmp_path / "lone" / "compact-dp"
    for part in ("benchmarks/bench.py", "examples/generate.py"):
        (clone / part).parent.mkdir(parents=True, exist_ok=True)
        (clone / part).write_text((ROOT / part).read_text())
    probe = "import sys, bench\n" + "".join(
        f"goals = []\nbench.{name}{args}\nprint('goals:', len(goals))\n"
        for name, args in NEEDS_SHARED.items())
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                       cwd=clone / "benchmarks", timeout=120)
    assert p.returncode == 0, p.stderr
    said = [line for line in p.stdout.splitlines() if line.strip()]
    assert len(said) == 2 * len(NEEDS_SHARED), said
    for why, goals in zip(said[::2], said[1::2]):
        assert goals == "goals: 0"
        assert re.search(r": (skipped|not checked) \(needs \.\./shared/\S+", why), why
    assert not (clone / "benchmarks" / "data").exists()


def test_bench_counts_a_tie_with_the_cheaper_threshold_apart_from_a_win():
    """``make bench``'s tie count: a long session where dp costs what the cheaper threshold
    costs is a tie (not a win, not a loss); a short session is not counted at all."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))

    def session(requests: int, dp: float, t60: float, t83: float) -> dict:
        costs = {"dp": dp, "threshold:60": t60, "threshold:83": t83, "recorded": 0.0}
        return {"requests": requests, "dp_beats_thresholds": dp < min(t60, t83),
                "policies": {n: {"comparable_cost": c} for n, c in costs.items()}}
    results = [session(100, 5.0, 5.0, 6.0),         # a tie with threshold:60
               session(150, 4.0, 5.0, 6.0),         # cheaper than both
               session(120, 5.5, 6.0, 5.0),         # dearer than threshold:83
               session(99, 1.0, 5.0, 6.0)]          # short: not counted
    assert bench.threshold_ties(results) == (1, 1, 3)
    # another policy than dp's has no backtest flag: its costs say it (hindsight below
    # both on the first and third, a tie on the second)
    for r, cost in zip(results, (4.0, 5.0, 4.9, 0.5)):
        r["policies"]["hindsight"] = {"comparable_cost": cost}
    assert bench.threshold_ties(results, "hindsight") == (1, 2, 3)


def test_bench_resamples_each_project_apart_and_reads_the_central_share():
    """``make bench``'s intervals: a resample draws each held-out project's sessions again,
    as many as it has (a project with one session is that session every time; the pooled
    draw would mix projects), seeded; the interval is the central 90 % by nearest rank,
    with the share of resamples where the goal holds."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    results = [{"held_out": "a", "v": v} for v in (1.0, 2.0, 3.0)] + \
        [{"held_out": "b", "v": 100.0}]

    def figures(sample: list[dict]) -> list[float | None]:
        a = [r["v"] for r in sample if r["held_out"] == "a"]
        return [sum(r["v"] for r in sample if r["held_out"] == "b"), float(len(a)),
                sum(a) / len(a)]
    again = bench.resampled(results, figures, rounds=300)
    assert len(again) == 300
    assert {v[0] for v in again} == {100.0} and {v[1] for v in again} == {3.0}
    means = {v[2] for v in again}
    assert min(means) < 2.0 < max(means)
    assert all(abs(3 * m - round(3 * m)) < 1e-9 for m in means)   # thirds: 3 of a's
    assert again == bench.resampled(results, figures, rounds=300)      # seeded
    assert again != bench.resampled(results, figures, rounds=300, seed=28)
    lo, hi, met = bench.interval([None] + [float(x) for x in range(1, 101)],
                                 lambda x: x > 80)
    assert (lo, hi, met) == (6.0, 95.0, 0.2)
    assert bench.interval([None, None]) is None
    assert bench.interval([2.0, 1.0]) == (1.0, 2.0, None)


def test_bench_compare_pairs_the_sessions_of_two_runs(monkeypatch, capsys):
    """``bench.py --compare``: the differences are taken on the sessions both runs hold,
    paired (a shift every session shares is beyond chance however wide each run's own
    spread; a shift on a single session is not), with the saving against recorded."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    n = len(bench.GOALS_27)

    def figures(results: list[dict]) -> tuple[dict, list]:
        mean = sum(r["v"] for r in results) / len(results)
        last = sum(r["w"] for r in results) / len(results)
        return {"values": [mean, last] + [None] * (n - 2)}, []
    monkeypatch.setattr(bench, "lopo_figures", figures)

    def run(shift: float, one: float) -> list[dict]:
        costs = {"recorded": 10.0, "dp": 9.0 - shift}
        return [{"held_out": "p", "session_id": str(k % 19), "v": 10.0 * k + shift,
                 "w": one if k == 0 else 0.0,
                 "policies": {name: {"objective": c, "comparable_cost": c}
                              for name, c in costs.items()}} for k in range(20)]
    extra = {"held_out": "q", "session_id": "only in the new run",
             "v": 1e6, "w": 0.0, "policies": {}}
    assert bench.compare_runs(run(0.0, 0.0), run(0.5, 40.0) + [extra], rounds=100)
    out = capsys.readouterr().out
    assert "20 sessions in both runs (left out: 0 only in the old, 1 only in the new)" in out
    first, second = [line for line in out.splitlines() if line.startswith("  ")][:2]
    assert "+0.500" in first and first.endswith("beyond chance")
    assert "+2.000" in second and not second.endswith("beyond chance")
    assert "$20.00 → $30.00" in out

    assert not bench.compare_runs(run(0.0, 0.0), [extra])
    assert "share no session" in capsys.readouterr().out


@pytest.mark.parametrize("run, says", [
    ({"a": 1}, "not a run saved by bench.py"),
    ([{"held_out": "p", "session": "x"}], "not a run saved by bench.py"),
    ("[1, 2]", "not a run saved by bench.py"),
])
def test_bench_compare_refuses_what_is_not_a_run(tmp_path, run, says):
    """``bench.py --compare`` on a file that is not a saved run:
    one line naming the file, exit 2, no traceback."""
    path = tmp_path / "run.json"
    path.write_text(run if isinstance(run, str) else json.dumps(run))
    p = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--compare",
                        str(path), str(path)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert f"{path}: {says}" in p.stderr.splitlines()[-1]
