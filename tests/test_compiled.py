"""The compiled build against the source it is compiled from: the same numbers, to the
byte, and no error the source does not raise.

setup.py compiles the modules that read sessions and bill requests with mypyc.  The tests,
in-process and subprocess alike, run the installed build (tests/__init__.py); these run
the source as well, on PYTHONPATH, beside it.  A compiled function checks the types its
annotations promise, where Python only trusts them, and it stores an int given as a float
as a float — so a value of a type the annotations did not foresee could fail, or print
``0.0`` where the source prints ``0``.  These tests give both builds the same odd lines and
sessions and compare what they print, written out (``repr``: 0 and 0.0 differ)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import source_on_pythonpath
from .conftest import ROOT, clean_env, command_path
from .session_fixtures import claude_session
from .test_bad_input import a_field_wrong_in_every_line
from .test_fast import ODD_LINES, claude_lines_with_a_value_changed, session_with

# What a build reads from lines or files, written out: run by the installed build (from
# "/", where the source tree is not on the path) and by the source (PYTHONPATH).
DRIVER = r"""
import json, marshal, sys
from compact_dp.sessions.read import read_session, reader_for

def said(work):
    try:
        return work()
    except Exception as e:
        return f"{type(e).__name__}: {e}"

def numbers(s):
    return (s.totals(), s.kinds, s.nbytes, s.tokens, s.warnings, s.touches,
            [(r.seen, r.time, r.llm, r.usage and r.usage.numbers(), r.segment, r.key,
              r.adjust, r.sent, r.done, r.side) for r in s.requests],
            [(c.at, c.time) for c in s.compactions])

def fed(fmt, lines):
    reader = reader_for(fmt)
    for line in lines:
        reader.feed(line)
    state = reader.state()
    marshal.dumps(state)
    return state, numbers(reader.session("x"))

task = json.load(open(sys.argv[1]))
for fmt, lines in task.get("lines", []):
    print(repr(said(lambda: fed(fmt, lines))))
for path in task.get("files", []):
    for fast in (False, True):
        print(repr(said(lambda: numbers(read_session([path], fast=fast)))))
"""


def both_builds(task: dict, tmp_path) -> tuple[str, str]:
    """What the installed build and the source print for the same task."""
    f = tmp_path / "task.json"
    f.write_text(json.dumps(task))
    out = []
    for env in (clean_env(), clean_env(PYTHONPATH=str(ROOT))):
        p = subprocess.run([sys.executable, "-c", DRIVER, str(f)], capture_output=True,
                           text=True, env=env, cwd="/", timeout=120)
        assert p.returncode == 0, p.stderr
        out.append(p.stdout)
    return out[0], out[1]


def compiled_modules() -> list[str]:
    """The modules setup.py compiles (its COMPILED list, read, not run)."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "COMPILED":
            names = node.value.generators[0].iter    # [f"compact_dp/{name}.py" for name in (…)]
            return ["compact_dp." + n.value.replace("/", ".") for n in names.elts]
    raise AssertionError("setup.py has no COMPILED list")


def test_the_installed_reading_and_billing_are_compiled():
    """A build that quietly fell back to pure Python would pass every other test, slower;
    COMPACT_DP_PURE=1 asks for that build on purpose."""
    if os.environ.get("COMPACT_DP_PURE"):
        pytest.skip("COMPACT_DP_PURE is set: the pure build was asked for")
    modules = compiled_modules()
    assert "compact_dp.sessions.fast" in modules and "compact_dp.replaying.simulate" in modules
    probe = "import importlib, sys\n" + "".join(
        f"print(importlib.import_module({m!r}).__file__)\n" for m in modules)
    files = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           env=clean_env(), cwd="/", check=True).stdout.split()
    pure = [f for f in files if not f.endswith(".so")]
    assert not pure, f"built as pure Python (`pip install -v .` says why): {pure}"
    version = subprocess.run([command_path(), "--version"], capture_output=True, text=True,
                             env=clean_env(), cwd="/", check=True).stdout
    assert version.endswith(" (compiled)\n"), version


def test_the_in_process_tests_run_the_installed_build():
    """pytest puts the source tree first on sys.path; tests/__init__.py imports the
    installed package instead, so the in-process tests run the compiled modules too."""
    import compact_dp
    import compact_dp.replaying.simulate
    import compact_dp.sessions.fast
    if source_on_pythonpath():
        pytest.skip("PYTHONPATH names the source tree, which runs (as mutants.py runs it)")
    assert not compact_dp.__file__.startswith(str(ROOT / "compact_dp")), compact_dp.__file__
    if not os.environ.get("COMPACT_DP_PURE"):
        for module in (compact_dp.sessions.fast, compact_dp.replaying.simulate):
            assert module.__file__.endswith(".so"), module.__file__


def test_the_source_tree_says_it_is_pure_python():
    """--version names the build by the files beside the package: the source tree has
    none built (the build works in a copy)."""
    p = subprocess.run([sys.executable, "-m", "compact_dp", "--version"], capture_output=True,
                       text=True, cwd="/", env=clean_env(PYTHONPATH=str(ROOT)), timeout=60)
    assert p.returncode == 0 and p.stdout.endswith(" (pure Python)\n"), p


# a batch an example: each example costs two processes
BATCHES = settings(max_examples=4, suppress_health_check=[
    HealthCheck.large_base_example, HealthCheck.data_too_large, HealthCheck.too_slow])


@BATCHES
@given(st.lists(a_field_wrong_in_every_line(), min_size=40, max_size=40))
def test_any_value_anywhere_is_read_alike_by_both_builds(tmp_path_factory, cases):
    compiled, pure = both_builds({"lines": cases}, tmp_path_factory.mktemp("lines"))
    assert compiled == pure


@BATCHES
@given(st.lists(claude_lines_with_a_value_changed(), min_size=15, max_size=15))
def test_any_session_file_is_read_alike_by_both_builds(tmp_path_factory, sessions):
    folder = tmp_path_factory.mktemp("files")
    files = []
    for i, data in enumerate(sessions):
        f = folder / f"s{i}.jsonl"
        f.write_text(data, encoding="utf-8", errors="surrogatepass")
        files.append(str(f))
    compiled, pure = both_builds({"files": files}, folder)
    assert compiled == pure


def test_the_lines_orjson_reads_otherwise_are_read_alike_by_both_builds(tmp_path):
    files = []
    for i, line in enumerate(ODD_LINES.values()):
        f = tmp_path / f"odd{i}.jsonl"
        f.write_bytes(session_with(line))
        files.append(str(f))
    compiled, pure = both_builds({"files": files}, tmp_path)
    assert compiled == pure


def test_lines_nested_about_as_deep_as_the_parser_goes_are_read_alike_by_both_builds(
        tmp_path):
    """How deep the standard parser goes depends on the Python frames below it, and compiled
    code leaves none: a line nested ~985 deep parsed in one build and not in the other (a
    Claude Code line was "malformed" in one, "not JSON" in the other; an OpenAI message
    inside as many arrays was counted by one, skipped by the other).  Both call any line
    nested past jsonsize.MAX_DEPTH malformed, parsed or not."""
    claude = claude_session()
    files = []
    for depth in range(940, 1001):
        nested = "[" * depth + "]" * depth
        deep = claude.lines[2].replace('"content":"', '"content":' + nested + ',"x":"', 1)
        f = tmp_path / f"claude{depth}.jsonl"
        f.write_bytes(session_with(deep))
        g = tmp_path / f"openai{depth}.jsonl"
        g.write_text('{"role":"system","content":"s"}\n' + "[" * depth +
                     '{"role":"user","content":"hi"}' + "]" * depth +
                     '\n{"role":"assistant","content":"ok"}\n')
        files += [str(f), str(g)]
    compiled, pure = both_builds({"files": files}, tmp_path)
    assert compiled == pure
    assert "not JSON" not in pure and pure.count("1 line(s) are malformed") == 2 * 61


EXAMPLES = [ROOT / "examples" / "claude-code.jsonl", ROOT / "examples" / "codex.jsonl",
            ROOT / "golden" / "inputs" / "syn_400.jsonl"]


@pytest.mark.parametrize("args", [
    ["replay", "--json", "--jobs", "1"],
    ["replay", "--json", "--jobs", "1", "--compact-at", "request",
     "--policy", "hindsight", "--policy", "threshold:50"],
    ["replay", "--jobs", "1", "--detail"],
])
def test_a_replay_prints_the_same_from_both_builds(args):
    """The engine, billing and records, compiled: every number of every policy."""
    files = [str(f) for f in EXAMPLES]
    compiled = subprocess.run([command_path(), *args, *files], capture_output=True,
                              env=clean_env(COLUMNS="100"), cwd="/", timeout=120)
    pure = subprocess.run([sys.executable, "-m", "compact_dp", *args, *files],
                          capture_output=True, cwd="/", timeout=120,
                          env=clean_env(COLUMNS="100", PYTHONPATH=str(ROOT)))
    assert compiled.returncode == pure.returncode == 0, compiled.stderr
    # the built-in profile each names is its own copy's (the installed one, the source's)
    installed = subprocess.run([sys.executable, "-c", "from compact_dp.calibration.profile "
                                "import BUILT_IN; print(BUILT_IN)"], capture_output=True,
                               text=True, env=clean_env(), cwd="/", check=True).stdout.strip()
    source = str(ROOT / "compact_dp" / "calibration" / "default.json")
    assert installed != source
    assert (compiled.stdout.replace(installed.encode(), b"BUILT_IN"), compiled.stderr) == \
        (pure.stdout.replace(source.encode(), b"BUILT_IN"), pure.stderr)


def test_a_copy_of_a_replay_copies_every_field():
    """copy_at copies a compiled Replay field by field (no copy.copy of a compiled class):
    every field __init__ sets is in SCALARS or copied apart."""
    from compact_dp.replaying.simulate import Replay
    source = (ROOT / "compact_dp" / "replaying" / "simulate.py").read_text()
    init = next(n for n in ast.walk(ast.parse(source))
                if isinstance(n, ast.FunctionDef) and n.name == "__init__" and
                any(isinstance(a, ast.Attribute) and a.attr == "policy"
                    for a in ast.walk(n)))
    fields = {t.attr for n in ast.walk(init) if isinstance(n, (ast.Assign, ast.AnnAssign))
              for target in (n.targets if isinstance(n, ast.Assign) else [n.target])
              for t in (target.elts if isinstance(target, ast.Tuple) else [target])
              if isinstance(t, ast.Attribute) and getattr(t.value, "id", "") == "self"}
    apart = {"setting", "policy", "events", "result", "context", "caches", "unseen"}
    assert fields - apart == set(Replay.SCALARS)
