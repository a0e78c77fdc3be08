"""Shared fixtures: the recorded awk runs and the installed command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "golden"
INPUTS = GOLDEN / "inputs"
CASES = [json.loads(line) for line in (GOLDEN / "cases.jsonl").read_text().splitlines()]


def command_path() -> str:
    """The console script installed next to this interpreter (what users run)."""
    candidate = Path(sys.executable).parent / "compact-dp"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("compact-dp")
    if not found:
        pytest.fail("compact-dp is not installed; run `make test`")
    return found


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without any DP_*/MAX_CONTEXT_TOKENS/COMPACT_DP_* settings."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DP_", "COMPACT_DP_")) and k != "MAX_CONTEXT_TOKENS"}
    env.update(extra)
    return env


def run_cli(*args: str, input: bytes | None = None, env: dict | None = None,
            **kw) -> subprocess.CompletedProcess:
    return subprocess.run([command_path(), *args], input=input, capture_output=True,
                          env=env if env is not None else clean_env(), timeout=120, **kw)


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(autouse=True)
def _no_caller_env(monkeypatch):
    """Tests see the documented defaults, not the developer's DP_* settings."""
    for k in list(os.environ):
        if k.startswith(("DP_", "COMPACT_DP_")) or k == "MAX_CONTEXT_TOKENS":
            monkeypatch.delenv(k)


def pytest_sessionstart(session):
    """The tests run the installed command: stop early if it is older than the sources."""
    probe = subprocess.run([sys.executable, "-c", "import compact_dp, os; "
                            "print(os.path.dirname(compact_dp.__file__))"],
                           capture_output=True, text=True, cwd="/", env=clean_env())
    installed = Path(probe.stdout.strip()) if probe.returncode == 0 else None
    if installed is None:
        pytest.exit("compact-dp is not installed in this environment: run `make test`", 2)
    if installed.resolve() == (ROOT / "compact_dp").resolve():
        return
    for source in (ROOT / "compact_dp").glob("*.py"):
        copy = installed / source.name
        if not copy.exists() or copy.read_bytes() != source.read_bytes():
            pytest.exit(f"the installed compact-dp is older than {source.name}: run "
                        "`make test` (it reinstalls)", 2)
