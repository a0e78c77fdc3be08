"""The test suite itself (issue 28, "Why 6"): it leaves nothing behind, and CI runs the
Hypothesis profile made for it."""

from __future__ import annotations

import os
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
