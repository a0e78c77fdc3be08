"""The build (build_backend/compact_dp_build.py, setup.py): which build is made, what it
asks for, what a pure wheel is and holds, that a compile asked for never turns quietly
into pure Python, and that building leaves the source tree as it was.

The wheels here are built without build isolation (the test extra installs setuptools and
the pinned mypy), so no test needs the network."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from .conftest import ROOT, clean_env
from .test_compiled import compiled_modules

sys.path.insert(0, str(ROOT / "build_backend"))
import compact_dp_build as backend  # noqa: E402

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def left_in(folder: Path) -> set[str]:
    """What a build may leave behind in a source tree."""
    return {p.name for p in folder.iterdir() if p.name in ("build", "dist") or
            p.name.endswith(".egg-info")}


def pip_wheel(source: Path, out: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "--no-build-isolation", "--no-cache-dir", "-q", "-w", str(out),
                           str(source)], capture_output=True, text=True, timeout=300,
                          env=clean_env(PIP_DISABLE_PIP_VERSION_CHECK="1", **env))


def test_one_mypy_is_pinned_and_only_a_compiled_build_asks_for_it():
    extra = PYPROJECT["project"]["optional-dependencies"]["test"]
    assert backend.MYPY.startswith("mypy==") and backend.MYPY in extra
    assert not any("mypy" in r for r in PYPROJECT["build-system"]["requires"])
    probe = ("import sys, json; sys.path.insert(0, 'build_backend'); import compact_dp_build "
             "as b; print(json.dumps(b.get_requires_for_build_wheel()))")
    before = left_in(ROOT)
    asked = {}
    for name, env in {"pure": {"COMPACT_DP_PURE": "1"}, "compiled": {"COMPACT_DP_COMPILE": "1"},
                      "either": {}}.items():
        p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           cwd=ROOT, env=clean_env(**env), timeout=120)
        assert p.returncode == 0, p.stderr
        asked[name] = json.loads(p.stdout.splitlines()[-1])
    assert not any("mypy" in r for r in asked["pure"])
    assert backend.MYPY in asked["compiled"] and backend.MYPY in asked["either"]
    assert left_in(ROOT) == before


def test_the_compiled_build_asks_for_every_package_its_type_check_reads():
    """mypyc type-checks the compiled modules and everything they import — their
    packages' ``__init__`` too, type-only imports included — in the build's own
    environment, which holds only what the backend asks for: every third-party package so
    reached is asked for (a package missing there fails the build with "Cannot find
    implementation or library stub", where a machine that has it passes)."""
    from .test_layout import MODULES, imports_of
    seen, todo = set(), list(compiled_modules())
    while todo:
        name = todo.pop()
        if name in seen or name not in MODULES:
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]     # the packages
        todo += sorted(imports_of(name))
    third = set()
    for name in seen:
        for node in ast.walk(ast.parse(MODULES[name].read_text())):
            found = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and not node.level and \
                node.module else []
            third |= {f.split(".")[0] for f in found}
    third -= set(sys.stdlib_module_names) | {"compact_dp", "_bytescan", "mypyc"}
    asked = {re.split(r"[<>=!\[ ]", r)[0] for r in (backend.MYPY, backend.ORJSON, backend.RICH)}
    assert third and third <= asked, third - asked


@pytest.mark.parametrize("variables, build", [
    ({}, "either"), ({"COMPACT_DP_PURE": "1"}, "pure"), ({"COMPACT_DP_COMPILE": "1"}, "compiled"),
    ({"COMPACT_DP_PURE": "0", "COMPACT_DP_COMPILE": "1"}, "compiled"),
    ({"COMPACT_DP_PURE": "", "COMPACT_DP_COMPILE": "0"}, "either"),
])
def test_the_variables_choose_the_build(variables, build, monkeypatch):
    for name in ("COMPACT_DP_PURE", "COMPACT_DP_COMPILE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert backend.requested() == build


def test_both_variables_at_once_stop_the_build(monkeypatch):
    monkeypatch.setenv("COMPACT_DP_PURE", "1")
    monkeypatch.setenv("COMPACT_DP_COMPILE", "1")
    with pytest.raises(backend.BuildRefused, match="both set"):
        backend.build_wheel("out")


FAILURES = {
    "no compiler": (SystemExit("error: command 'cc' failed: No such file or directory"),
                    "command 'cc' failed"),
    "a type error": (SystemExit(1), "mypyc's type check failed"),
    "no mypyc": (ModuleNotFoundError("No module named 'mypyc'"), "No module named 'mypyc'"),
}


@pytest.fixture
def builds(monkeypatch):
    """The backend with its two builds stood in for: the compiled one fails as given, the
    pure one is recorded; returns the list of the builds it made."""
    made: list[str] = []

    def pure(build, step, *args):
        made.append(build)
        return "compact_dp-0.2.0-py3-none-any.whl"
    monkeypatch.setattr(backend, "run", pure)
    for name in ("COMPACT_DP_PURE", "COMPACT_DP_COMPILE"):
        monkeypatch.delenv(name, raising=False)
    return made


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_a_compile_asked_for_that_fails_stops_the_build_with_the_reason(failure, builds,
                                                                       monkeypatch):
    error, words = FAILURES[failure]

    def fails(*args):
        raise error
    monkeypatch.setattr(backend, "compiled_wheel", fails)
    monkeypatch.setenv("COMPACT_DP_COMPILE", "1")
    with pytest.raises(backend.BuildRefused) as refused:
        backend.build_wheel("out")
    assert words in str(refused.value) and "COMPACT_DP_COMPILE" in str(refused.value)
    assert builds == []                                 # no pure wheel instead


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_a_compile_not_asked_for_that_fails_builds_pure_python_and_says_why(failure, builds,
                                                                           monkeypatch,
                                                                           capsys):
    error, words = FAILURES[failure]

    def fails(*args):
        raise error
    monkeypatch.setattr(backend, "compiled_wheel", fails)
    assert backend.build_wheel("out").endswith("-py3-none-any.whl")
    assert builds == ["pure"]
    err = capsys.readouterr().err
    assert "building pure Python" in err and words in err


def test_a_pure_build_never_tries_to_compile(builds, monkeypatch):
    def compiles(*args):
        raise AssertionError("compiled")
    monkeypatch.setattr(backend, "compiled_wheel", compiles)
    monkeypatch.setenv("COMPACT_DP_PURE", "1")
    backend.build_wheel("out")
    assert builds == ["pure"]


def test_a_failing_compiler_stops_a_real_build_asked_to_compile(tmp_path):
    """The whole way through pip: mypyc translates, the C compiler (here one that always
    fails) does not compile, and pip fails, saying why — no wheel, and no build folder
    left in the source tree (mypyc and setuptools wrote theirs in the copy)."""
    before = left_in(ROOT)
    out = tmp_path / "out"
    p = pip_wheel(ROOT, out, COMPACT_DP_COMPILE="1", CC="false")
    assert p.returncode != 0
    assert "COMPACT_DP_COMPILE is set and compiling failed" in p.stdout + p.stderr
    assert not out.exists() or not list(out.glob("*.whl"))
    assert left_in(ROOT) == before


def test_a_compiled_build_type_checks_once(tmp_path):
    """mypyc's type check is the slow half of the compile: pip asks the backend for the
    requirements, the metadata and the wheel, and only the wheel's step may run it (a
    stand-in mypyc here counts the calls and translates nothing)."""
    fake = tmp_path / "fake" / "mypyc"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    calls = tmp_path / "calls"
    (fake / "build.py").write_text(
        "def mypycify(paths, **kw):\n"
        f"    open({str(calls)!r}, 'a').write(str(len(paths)) + '\\n')\n"
        "    return []\n")
    p = pip_wheel(ROOT, tmp_path / "out", COMPACT_DP_COMPILE="1",
                  PYTHONPATH=str(tmp_path / "fake"))
    assert p.returncode == 0, p.stdout + p.stderr
    assert calls.read_text().split() == [str(len(compiled_modules()))]


def test_a_pure_wheel_is_for_any_python_holds_every_source_file_and_leaves_no_trace(
        tmp_path):
    """From the source tree to an sdist, and from the sdist to a pure wheel: tagged
    py3-none-any, with every file of the package (the test run compares them: conftest),
    the hooks and no compiled module; its --version says pure Python; and neither tree
    is left with a build folder or egg-info."""
    before = left_in(ROOT)
    sdists = tmp_path / "sdist"
    p = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, "
                        "'build_backend'); import compact_dp_build as b; "
                        f"print(b.build_sdist({str(sdists)!r}))"], capture_output=True,
                       text=True, cwd=ROOT, env=clean_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    with tarfile.open(sdists / p.stdout.split()[-1]) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    unpacked = next((tmp_path / "unpacked").iterdir())
    assert (unpacked / "build_backend" / "compact_dp_build.py").exists()
    listed = sorted(p.relative_to(unpacked) for p in unpacked.rglob("*"))

    out = tmp_path / "wheels"
    p = pip_wheel(unpacked, out, COMPACT_DP_PURE="1")
    assert p.returncode == 0, p.stderr
    assert sorted(p.relative_to(unpacked) for p in unpacked.rglob("*")) == listed
    assert left_in(ROOT) == before
    (wheel,) = out.glob("*.whl")
    assert wheel.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        info = next(n for n in names if n.endswith(".dist-info/WHEEL"))
        assert "Tag: py3-none-any" in z.read(info).decode()
        z.extractall(tmp_path / "site")
    sources = {"compact_dp/" + str(f.relative_to(ROOT / "compact_dp"))
               for f in (ROOT / "compact_dp").rglob("*")
               if f.is_file() and "__pycache__" not in f.parts}
    hooks = {"compact_dp/agent_hooks/" + f.name for f in (ROOT / "agent_hooks").iterdir()
             if f.suffix in (".sh", ".md")}
    assert sources | hooks <= names, sorted(sources | hooks - names)
    assert not [n for n in names if n.endswith((".so", ".pyd"))]
    p = subprocess.run([sys.executable, "-m", "compact_dp", "--version"], capture_output=True,
                       text=True, cwd="/", timeout=60,
                       env=clean_env(PYTHONPATH=str(tmp_path / "site")))
    assert p.stdout.endswith(" (pure Python)\n"), p


def test_ci_asks_for_the_compiled_build():
    """Else a machine without a compiler would pass CI on the pure build, unseen."""
    ci = (ROOT / ".ci" / "run").read_text()
    assert "COMPACT_DP_COMPILE=1 make test\n" in ci
    assert "\nmake test-pure\n" in ci                 # and the pure build's tests after
    assert os.access(ROOT / ".ci" / "run", os.X_OK)


def test_the_readme_says_what_the_compiled_install_costs_and_how_to_skip_it():
    readme = (ROOT / "README.md").read_text()
    install = readme[readme.index("\n## Install\n"):]
    install = " ".join(install[:install.index("\n## ", 5)].split())
    assert re.search(r"The install compiles: .* about \d+ CPU-seconds", install), install
    assert "`COMPACT_DP_PURE=1 pipx install .` skips it and needs no mypy" in install
    assert "`--version` names the build" in install
