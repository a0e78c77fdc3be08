#!/usr/bin/env python3
"""Break the code on purpose and check that the tests notice (``make mutants``).

Each mutant is one small change to the core that a code review found the suite could not
see.  For each, the script copies the repository to a temporary folder, applies the change
there, runs the named tests against that copy (in this process's Python, so only the
in-process tests see the mutant) and reports whether they failed — as they must.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (name, file, text, mutated text, tests that must fail)
MUTANTS = [
    ("v4.2 minimum kept size: < → <=", "compact_dp/core/decision.py",
     "if kept < 20 * d.S:", "if kept <= 20 * d.S:",
     "tests/test_boundaries.py"),
    ("v4.2 quality gate: > → >=", "compact_dp/core/search.py",
     "d.T > d.M * 0.30", "d.T >= d.M * 0.30",
     "tests/test_boundaries.py"),
    ("v4.2 ③: p·(H + 70) → p·H + p·70", "compact_dp/core/search.py",
     "self.pi * (H + L_INSTR)", "self.pi * H + self.pi * L_INSTR",
     "tests/test_properties.py"),
    ("threshold policy: < → <=", "compact_dp/replay/policies.py",
     "if replay.prompt_now(request) < s.window * self.percent / 100:",
     "if replay.prompt_now(request) <= s.window * self.percent / 100:",
     "tests/test_boundaries.py"),
    ("replay dp policy: total_requests + 1", "compact_dp/replay/policies.py",
     '"total_requests": replay.requests,', '"total_requests": replay.requests + 1,',
     "tests/test_boundaries.py"),
    ("break-even: > 0 → >= 0", "compact_dp/views/words.py",
     "if benefit(float(R)) > 0:", "if benefit(float(R)) >= 0:",
     "tests/test_explain_json.py"),
    ("search margin: b < top - margin → b < top", "compact_dp/core/search.py",
     "elif b < top - margin:", "elif b < top:",
     "tests/test_search.py"),
    ("cache-clock: a cold summary request reads at the read price",
     "compact_dp/core/search.py",
     "self.summary_read = write if d.cold else d.p_cache",
     "self.summary_read = d.p_cache",
     "tests/test_properties.py"),
    ("cache-clock: the cold re-write counts K instead of T", "compact_dp/core/search.py",
     "self.rewrite = (d.V + d.T) * (write - d.p_cache)",
     "self.rewrite = (d.V + d.S) * (write - d.p_cache)",
     "tests/test_properties.py"),
    ("replay: a cache idle past its TTL still reads", "compact_dp/replay/billing.py",
     "time - cache.last <= parse_ttl(cache.ttl)",
     "time - cache.last <= 100 * parse_ttl(cache.ttl)",
     "tests/test_replay.py"),
]


def run_mutant(name: str, file: str, old: str, new: str, tests: str) -> bool:
    """True when the tests fail on the mutant (the mutant is killed)."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(
            ".venv", ".git", "__pycache__", ".hypothesis", ".pytest_cache", "data"))
        target = copy / file
        text = target.read_text()
        assert text.count(old) == 1, f"{name}: {old!r} not found exactly once in {file}"
        target.write_text(text.replace(old, new))
        p = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p",
                            "no:cacheprovider", tests], cwd=copy, capture_output=True,
                           text=True, env={**__import__("os").environ, "PYTHONPATH": str(copy)})
        return p.returncode != 0


def main() -> int:
    survivors = 0
    for name, file, old, new, tests in MUTANTS:
        killed = run_mutant(name, file, old, new, tests)
        survivors += not killed
        print(f"{'killed  ' if killed else 'SURVIVED'}  {name}  ({tests})")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
