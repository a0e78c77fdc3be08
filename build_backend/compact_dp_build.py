"""compact-dp's build backend: setuptools' own, with three choices made here, once.

* **Which build.** ``COMPACT_DP_PURE=1`` asks for pure Python, ``COMPACT_DP_COMPILE=1`` for
  the compiled build; with neither, the build compiles where it can and says on stderr
  when it could not.  A compile that was asked for and fails stops the build with the
  reason: a compiled build quietly replaced by a pure one is only slower, so nothing
  else would show it.
* **What it needs.** Only a build that compiles asks for mypy (mypyc ships with it), at
  the one version the modules are known to compile with (``MYPY``); a pure build needs
  setuptools alone.
* **Where it works.** Every step runs on a copy of the sources in a temporary folder, so
  ``pip install .`` leaves no ``build/`` or ``*.egg-info`` in the tree.

``setup.py`` says what is compiled; it learns which build this is from ``BUILD_VARIABLE``,
which only the wheel's own build sets, so mypyc's type check runs once per build (not
in the requirements and metadata steps as well).  A pure wheel holds no compiled module
and is tagged ``py3-none-any``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from setuptools import build_meta as setuptools_build

MYPY = "mypy==2.4.1"        # the compiler's version (the test extra pins the same)
ORJSON = "orjson>=3.10"     # the compiled modules' type check reads orjson's types
# ... and rich's: it reads the package's __init__, whose typed API names replay's batch
# and views, which import rich (a build without it fails the check: "Cannot find ... rich")
RICH = "rich>=13"

BUILD_VARIABLE = "COMPACT_DP_BUILDING"          # "compiled" or "pure", for setup.py
SOURCES = ("pyproject.toml", "setup.py", "README.md", "MANIFEST.in", "build_backend",
           "compact_dp", "agent_hooks")         # what a build reads (a new top folder joins)
LEFT_OUT = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "build", "*.egg-info")

T = TypeVar("T")


class BuildRefused(SystemExit):
    """A build that cannot be what was asked for: the build stops with the reason, in a
    line (an exit, not a traceback)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"compact-dp build: {message}")


def requested() -> str:
    """"pure", "compiled" or "either" (the variables are read when set to anything but
    empty or 0)."""
    def on(name: str) -> bool:
        return os.environ.get(name, "") not in ("", "0")
    if on("COMPACT_DP_PURE") and on("COMPACT_DP_COMPILE"):
        raise BuildRefused("COMPACT_DP_PURE and COMPACT_DP_COMPILE are both set; "
                           "set one")
    if on("COMPACT_DP_PURE"):
        return "pure"
    return "compiled" if on("COMPACT_DP_COMPILE") else "either"


def say(message: str) -> None:
    print(f"compact-dp build: {message}", file=sys.stderr, flush=True)


@contextmanager
def in_a_copy(build: str) -> Iterator[Path]:
    """Work in a copy of the sources, with setup.py told which build this is."""
    here = Path.cwd()
    saved = os.environ.get(BUILD_VARIABLE)
    with tempfile.TemporaryDirectory(prefix="compact-dp-build-") as tmp:
        copy = Path(tmp) / "src"
        copy.mkdir()
        for name in SOURCES:
            source = here / name
            if source.is_dir():
                shutil.copytree(source, copy / name, ignore=LEFT_OUT)
            elif source.exists():
                shutil.copy2(source, copy / name)
        os.environ[BUILD_VARIABLE] = build
        os.chdir(copy)
        try:
            yield copy
        finally:
            os.chdir(here)
            if saved is None:
                os.environ.pop(BUILD_VARIABLE, None)
            else:
                os.environ[BUILD_VARIABLE] = saved


def run(build: str, step: Callable[..., T], *args: Any) -> T:
    """One of setuptools' steps, on a copy (the folders it is given are absolute)."""
    with in_a_copy(build):
        return step(*args)


def absolute(folder: str | None) -> str | None:
    return None if folder is None else os.path.abspath(folder)


def reason(e: BaseException) -> str:
    """What went wrong, in a line: setuptools ends a failed compile with SystemExit("error:
    command 'cc' failed ..."), mypyc a failed type check with SystemExit(1) after printing
    the errors."""
    text = str(e).strip()
    if isinstance(e, SystemExit) and text in ("", "1", "None"):
        return "mypyc's type check failed (its errors are printed above)"
    return f"{type(e).__name__}: {text}" if not isinstance(e, SystemExit) else text


# --- the hooks (PEP 517, PEP 660) ---------------------------------------------------------

def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    needed = run("pure", setuptools_build.get_requires_for_build_wheel, config_settings)
    return needed if requested() == "pure" else [*needed, MYPY, ORJSON, RICH]


def prepare_metadata_for_build_wheel(metadata_directory: str,
                                     config_settings: dict[str, Any] | None = None) -> str:
    return run("pure", setuptools_build.prepare_metadata_for_build_wheel,
               absolute(metadata_directory), config_settings)


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                metadata_directory: str | None = None) -> str:
    wanted = requested()
    wheel_directory = os.path.abspath(wheel_directory)
    metadata_directory = absolute(metadata_directory)
    if wanted != "pure":
        try:
            return compiled_wheel(wheel_directory, config_settings, metadata_directory)
        except (Exception, SystemExit) as e:
            why = reason(e)
            if wanted == "compiled":
                raise BuildRefused(f"COMPACT_DP_COMPILE is set and compiling failed: {why} "
                                   "(COMPACT_DP_PURE=1 builds pure Python)") from None
            say(f"building pure Python, as compiling failed: {why} (the same program, "
                "slower; COMPACT_DP_COMPILE=1 makes this an error)")
    return run("pure", setuptools_build.build_wheel, wheel_directory, config_settings,
               metadata_directory)


def compiled_wheel(wheel_directory: str, config_settings: dict[str, Any] | None,
                   metadata_directory: str | None) -> str:
    return run("compiled", setuptools_build.build_wheel, wheel_directory, config_settings,
               metadata_directory)


def get_requires_for_build_sdist(config_settings: dict[str, Any] | None = None) -> list[str]:
    return run("pure", setuptools_build.get_requires_for_build_sdist, config_settings)


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    return run("pure", setuptools_build.build_sdist, absolute(sdist_directory),
               config_settings)


# An editable install runs the source tree itself, so it is pure Python, built in place:
# compiled modules beside the sources would shadow every edit.

def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None
                                    ) -> list[str]:
    return setuptools_build.get_requires_for_build_editable(config_settings)


def prepare_metadata_for_build_editable(metadata_directory: str,
                                        config_settings: dict[str, Any] | None = None) -> str:
    return setuptools_build.prepare_metadata_for_build_editable(metadata_directory,
                                                                config_settings)


def build_editable(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                   metadata_directory: str | None = None) -> str:
    if requested() == "compiled":
        raise BuildRefused("an editable install runs the sources: it cannot be compiled")
    return setuptools_build.build_editable(wheel_directory, config_settings,
                                           metadata_directory)
