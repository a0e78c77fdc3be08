"""The tests import compact_dp from the installed copy — the compiled build, where it is
one — not from the source tree beside them, which pytest and ``python -m`` put first on
``sys.path``: so the in-process tests run the modules users run.  Once the package is
imported, every module of it comes from the same place.  When PYTHONPATH names this tree
(tests/mutants.py runs a changed copy so), the tree is what runs."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _is_root(entry: str) -> bool:
    return Path(entry or ".").resolve() == ROOT


def source_on_pythonpath() -> bool:
    return any(_is_root(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)


def _import_the_installed_package() -> None:
    if "compact_dp" in sys.modules or source_on_pythonpath():
        return
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if not _is_root(p)]
    try:
        import compact_dp  # noqa: F401
    except ImportError:
        pass                # not installed: conftest's start-up check stops the run
    finally:
        sys.path[:] = saved


_import_the_installed_package()
