"""compact-dp's build: pure Python, with the modules that read sessions and bill requests
compiled by mypyc, and two byte scans of that reading in C (sessions/_bytescan.c).

Reading a whole history is per-line Python (the recorded policy of a 1 GB tree spent ~60 %
of its CPU there); compiled, the same source runs ~20 % faster end to end, with the same
numbers (docs/scale.md measures it, docs/house.md says what compiling asks of the code).

Which build this is, the backend decides (build_backend/compact_dp_build.py: the
variables COMPACT_DP_PURE and COMPACT_DP_COMPILE, and what happens when compiling fails);
it tells this file through COMPACT_DP_BUILDING, set only while it builds the wheel.
Run any other way, this file describes the pure package.
"""

import os

from setuptools import Extension, setup

COMPILED = [f"compact_dp/{name}.py" for name in (
    "sessions/line_reader", "sessions/claude_code", "sessions/fast", "sessions/codex",
    "sessions/openai_chat", "sessions/recorder", "sessions/sizing", "sessions/timefmt",
    "sessions/jsonsize", "sessions/session", "replaying/simulate", "replaying/setting",
    "replaying/bill", "replaying/billing", "replaying/records", "pricing/clock",
    "core/wait", "replaying/hindsight")]
# (not sessions/read.py: compiled, it read a history 1.5 times slower, not faster; the
# cause is not looked into)


def extensions() -> list:
    """The compiled modules, when this is the compiled build: mypyc type-checks and
    translates them here, once; a failure (no mypyc, a type error) stops the build, and
    the backend says why."""
    if os.environ.get("COMPACT_DP_BUILDING") != "compiled":
        return []
    from mypyc.build import mypycify

    bytescan = Extension("compact_dp.sessions._bytescan", ["compact_dp/sessions/_bytescan.c"])
    return [bytescan, *mypycify(COMPILED, opt_level="3")]


setup(ext_modules=extensions())
