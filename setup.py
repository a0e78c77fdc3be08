"""compact-dp's build: pure Python, with the modules that read sessions and bill requests
compiled by mypyc where it and a C compiler are at hand.

Reading a whole history is per-line Python (the recorded policy of a 1 GB tree spent ~60 %
of its CPU there); compiled, the same source runs ~20 % faster end to end, with the same
numbers (docs/scale.md measures it, docs/house.md says what compiling asks of the code).
Two byte scans of that reading are a small C module (sessions/_bytescan.c), built with
them.
Anything that stops the compiled build — no mypyc, no compiler, ``COMPACT_DP_PURE=1`` —
leaves the pure package, which behaves the same, only slower.
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

COMPILED = [f"compact_dp/{name}.py" for name in (
    "sessions/reader", "sessions/claude_code", "sessions/fast", "sessions/codex",
    "sessions/openai_chat", "sessions/recorder", "sessions/sizing", "sessions/timefmt",
    "sessions/jsonsize", "sessions/normalised", "replay/engine", "replay/setting",
    "replay/bill", "replay/billing", "replay/records", "pricing/clock")]
# (not sessions/read.py: compiled, it read a history 1.5 times slower, not faster; the
# cause is not looked into)


# the byte scans of the fast reading, in C (sessions/bytescan.py defines them)
BYTESCAN = Extension("compact_dp.sessions._bytescan", ["compact_dp/sessions/_bytescan.c"])


def extensions() -> list:
    if os.environ.get("COMPACT_DP_PURE"):
        return []
    try:
        from mypyc.build import mypycify
        return [BYTESCAN, *mypycify(COMPILED, opt_level="3")]
    except (Exception, SystemExit) as e:     # mypyc missing, or its type check refusing
        print(f"compact-dp: building pure Python ({type(e).__name__}: {e})", file=sys.stderr)
        return []


class OptionalBuildExt(build_ext):
    """Compile if we can; if not, install the pure package (nothing half-built)."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as e:
            print(f"compact-dp: building pure Python (compiling failed: {e})",
                  file=sys.stderr)
            for ext in self.extensions:
                path = self.get_ext_fullpath(ext.name)
                if os.path.exists(path):
                    os.remove(path)


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
