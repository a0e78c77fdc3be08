"""Shared fixtures: the recorded awk runs, the real sessions beside the repository (when
present), and the installed command.

Real data from other projects is never copied here: ``../shared/golden-awk`` (the
recordings on converted SWE-agent trajectories) and ``../shared/transcripts`` (real Claude
Code sessions) are read in place, and the tests that need them skip, saying so, when the
repository is cloned alone.
"""

from __future__ import annotations

import atexit
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from compact_dp.core.params import DEFAULTS, STATS, awk_arguments  # noqa: F401 (re-exported)
from compact_dp.environment import Env

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "golden"
INPUTS = GOLDEN / "inputs"
SHARED = ROOT.parent / "shared"
SHARED_GOLDEN = SHARED / "golden-awk"
TRANSCRIPTS = SHARED / "transcripts" / "claude-code"
NO_SHARED = f"needs {SHARED} (real data read in place; absent in a lone clone)"

# Hypothesis profiles, chosen by HYPOTHESIS_PROFILE (else ``ci`` where $CI is set, as CI
# services set it, else ``dev``):
# * dev: quick, new examples every run, the failures kept in .hypothesis/ to try first;
# * ci: as many examples, derandomized — each run tries the same ones, so a red CI run is
#   one anybody reproduces with HYPOTHESIS_PROFILE=ci — and no example database (a fresh
#   clone has none to keep); ``make test`` stays under two minutes on two cores;
# * thorough: 400 examples each, for a long look before a release.
# Each is built on Hypothesis's own ``default`` profile, never on the one loaded: where $CI
# is set, Hypothesis loads its built-in ``ci`` (derandomized, no database) at import, and a
# ``dev`` built on that would be derandomized too.
QUICK = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow],
         "parent": settings.get_profile("default")}
settings.register_profile("dev", max_examples=60, **QUICK)
settings.register_profile("ci", max_examples=60, derandomize=True, database=None,
                          print_blob=True, **QUICK)
settings.register_profile("thorough", max_examples=400, **QUICK)


def chosen_profile(environ: Mapping[str, str]) -> str:
    return environ.get("HYPOTHESIS_PROFILE") or ("ci" if environ.get("CI") else "dev")


PROFILE = chosen_profile(os.environ)
settings.load_profile(PROFILE)


def _cases(folder: Path) -> list[dict]:
    cases = [json.loads(line) for line in (folder / "cases.jsonl").read_text().splitlines()]
    for c in cases:
        c["path"] = str(folder / "inputs" / c["input"])
    return cases


CASES = _cases(GOLDEN)                                  # the recordings this repo holds
SHARED_CASES = _cases(SHARED_GOLDEN) if (SHARED_GOLDEN / "cases.jsonl").exists() else []
REAL_SWE_CASES = [c for c in SHARED_CASES if c["input"].startswith("real_swe_")]

# The agent's own values: the parameter table's defaults plus its running stats.
AGENT_STATS = {"t": "5", "total_requests": "40", "total_compact": "0", "total_input": "400000"}
AGENT_VALUES = {**DEFAULTS, **AGENT_STATS}
AGENT_ARGS = awk_arguments({k: v for k, v in DEFAULTS.items() if k not in STATS})
STATS_ARGS = awk_arguments(AGENT_STATS)
NATIVE_STATS = ["--turns", "5", "--requests", "40", "--compactions", "0",
                "--input-tokens", "400000"]
EXAMPLE = INPUTS / "syn_400.jsonl"                     # a generated session with recordings
# One folder for this run (per process: each xdist worker has its own), removed when the
# run ends: the cache the commands write (never the user's) and the config folder they
# read (no profile the user calibrated).
RUN_DIR = tempfile.mkdtemp(prefix="compact-dp-tests-")
CACHE_DIR = os.path.join(RUN_DIR, "cache")
CONFIG_DIR = os.path.join(RUN_DIR, "config")
os.mkdir(CACHE_DIR)
os.mkdir(CONFIG_DIR)


def _remove_run_dir() -> None:
    shutil.rmtree(RUN_DIR, ignore_errors=True)


atexit.register(_remove_run_dir)        # also when the run stops before pytest_unconfigure

# The Python API reads the process's environment, as the command does: in-process tests
# must not read the user's settings or profile either.
for _name in [k for k in os.environ if k.startswith("DP_") or k == "MAX_CONTEXT_TOKENS" or
              k.startswith("COMPACT_DP_") and k != "COMPACT_DP_PURE"]:
    del os.environ[_name]
os.environ["COMPACT_DP_PROFILE"] = "none"        # the built-in profile


def assignments(case: dict) -> dict[str, str]:
    """A recorded case's ``-v name=value`` arguments as a dict."""
    return dict(a.split("=", 1) for a in case["args"] if a != "-v")


def recorded(input_name: str, args: list[str], profile: str = "v3.0.7") -> str:
    for c in CASES + SHARED_CASES:
        if (c["input"], c["args"], c["profile"]) == (input_name, args, profile):
            return c["stdout"]
    raise LookupError((input_name, args, profile))


def transcripts() -> list[Path]:
    """The real Claude Code sessions (skips the calling test when they are absent)."""
    if not TRANSCRIPTS.is_dir():
        pytest.skip(NO_SHARED)
    return sorted(TRANSCRIPTS.glob("*.jsonl"))


CORPUS = SHARED / "transcripts" / "corpus"
_unpacked: list[Path] = []


def corpus() -> Path:
    """The folder the real-session corpus is unpacked in (``unpack`` extracts it once and
    prints it); skips the calling test when ../shared is absent."""
    if not (CORPUS / "unpack").exists():
        pytest.skip(NO_SHARED)
    if not _unpacked:
        out = subprocess.run([str(CORPUS / "unpack")], capture_output=True, text=True,
                             check=True, timeout=300)
        _unpacked.append(Path(out.stdout.strip().splitlines()[-1]))
    return _unpacked[0]


def cut(path: Path, share: float, tmp_path: Path) -> Path:
    """The first ``share`` of a session's lines, as a live session looks part-way."""
    lines = path.read_bytes().split(b"\n")
    n = max(1, int(len(lines) * share))
    out = tmp_path / f"{path.stem}-{int(share * 100)}.jsonl"
    out.write_bytes(b"\n".join(lines[:n]) + b"\n")
    return out


def scan_stream(lines: list[bytes]):
    """The Conversation of some records, read as the awk form reads its input: one stream
    on standard input, each record a line."""
    from compact_dp.core.scan import scan_paths
    return scan_paths([], stdin=io.BytesIO(b"".join(x + b"\n" for x in lines)))


def write(tmp_path: Path, data: bytes | str, name: str = "session.jsonl") -> Path:
    """A session file the test writes itself (str is written as UTF-8)."""
    f = tmp_path / name
    f.write_bytes(data.encode() if isinstance(data, str) else data)
    return f


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
    """The environment without any DP_*/MAX_CONTEXT_TOKENS/COMPACT_DP_* settings, and
    with a config folder of its own (no profile the user calibrated)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DP_", "COMPACT_DP_")) and k != "MAX_CONTEXT_TOKENS"}
    env.setdefault("COMPACT_DP_CACHE", CACHE_DIR)
    env["XDG_CONFIG_HOME"] = CONFIG_DIR
    env.update(extra)
    return env


def run_cli(*args: str, input: bytes | None = None, env: dict | None = None,
            **kw) -> subprocess.CompletedProcess:
    return subprocess.run([command_path(), *args], input=input, capture_output=True,
                          env=env if env is not None else clean_env(), timeout=120, **kw)


class Captured:
    """What one in-process run wrote: stdout, stderr, exit status."""

    def __init__(self, status: int, out: str, err: str):
        self.status, self.out, self.err = status, out, err


def run_main(*argv: str, stdin: bytes = b"", environ: dict | None = None,
             stdin_isatty: bool = False, stdout_isatty: bool = False) -> Captured:
    """compact-dp in this process with its own Env — and internal errors re-raised
    (COMPACT_DP_DEBUG), so a crash fails the test instead of passing as exit 2."""
    from compact_dp.cli.main import main
    out, err = io.StringIO(), io.StringIO()
    environ = {"COMPACT_DP_DEBUG": "1", "COMPACT_DP_CACHE": CACHE_DIR, **(environ or {})}
    env = Env(stdin=io.BytesIO(stdin), stdout=out, stderr=err, environ=environ,
              stdin_isatty=stdin_isatty, stdout_isatty=stdout_isatty)
    status = main(list(argv), env)
    return Captured(status, out.getvalue(), err.getvalue())


def pytest_unconfigure(config):
    _remove_run_dir()


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
    for source in (ROOT / "compact_dp").rglob("*"):
        if source.is_dir() or "__pycache__" in source.parts:
            continue
        copy = installed / source.relative_to(ROOT / "compact_dp")
        if not copy.exists() or copy.read_bytes() != source.read_bytes():
            pytest.exit(f"the installed compact-dp is older than {source.name}: run "
                        "`make test` (it reinstalls)", 2)
