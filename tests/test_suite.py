"""The test suite itself (issue 28, "Why 6"): it leaves nothing behind, and CI runs the
Hypothesis profile made for it."""

from __future__ import annotations

import os
import re
import subprocess
import sys

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
