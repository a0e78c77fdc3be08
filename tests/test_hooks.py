"""agent_hooks/bash-agent.sh: the recorded awk answers through the hook functions, and the
README's agent loop (agent_hooks/example-loop.sh), run verbatim, compacting where a plain
transcription of the policy says."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from compact_dp.core.params import DEFAULTS, PARAMS

from . import reference
from .conftest import CASES, INPUTS, REAL_SWE_CASES, ROOT, clean_env, command_path

HOOKS = ROOT / "agent_hooks" / "bash-agent.sh"
ORDER = [p.awk for p in PARAMS]       # store_conv_dp_decision's 17 arguments, in order


def bash(script: str, **env: str) -> subprocess.CompletedProcess:
    path = f"{Path(command_path()).parent}:{os.environ['PATH']}"
    return subprocess.run(["bash", "-c", "set -euo pipefail\nsource \"$HOOKS\"\n" + script],
                          capture_output=True, timeout=600,
                          env=clean_env(PATH=path, HOOKS=str(HOOKS), **env))


def quoted(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def agent_cases(profile: str):
    for c in CASES + REAL_SWE_CASES:
        if c["profile"] == profile and c["label"] == "agent":
            yield c


@pytest.mark.parametrize("profile", ["v3.0.7", "v4.2", "v2"])
def test_store_conv_dp_decision_gives_the_recorded_answers(profile):
    """Every recorded bash-agent call, made through the hook with its 17 arguments."""
    cases = list(agent_cases(profile))
    assert cases
    lines = []
    for c in cases:
        values = dict(a.split("=", 1) for a in c["args"] if a != "-v")
        args = " ".join(quoted(values.get(n, "")) for n in ORDER)
        lines.append(f"CONV_FILE={quoted(c['path'])}; "
                     f"printf '%s|' \"$(store_conv_dp_decision {args} || true)\"")
    p = bash("\n".join(lines), COMPACT_DP_MODEL=profile)
    got = p.stdout.decode().split("|")[:-1]
    assert got == [c["stdout"].rstrip("\n") for c in cases], p.stderr.decode()[-2000:]


def test_store_conv_turn_keep_gives_the_recorded_answers():
    cases = [c for c in CASES + REAL_SWE_CASES if c["profile"] == "turn-keep"]
    lines = [f"CONV_FILE={quoted(c['path'])}; printf '%s|' "
             f"\"$(store_conv_turn_keep {quoted(c['args'][1].split('=', 1)[1])} || true)\""
             for c in cases]
    got = bash("\n".join(lines)).stdout.decode().split("|")[:-1]
    assert got == [c["stdout"].rstrip("\n") for c in cases]


def test_the_readme_example_prints_the_recording():
    f = INPUTS / "syn_400.jsonl"
    want = next(c["stdout"] for c in agent_cases("v3.0.7") if c["input"] == f.name
                and "t=5" in c["args"])
    p = bash(f"CONV_FILE={quoted(str(f))}\nstore_conv_dp_decision 5 40 0 400000 8 0 0 5000 "
             "3.0 0.30 15.0 500 0.12 0.8 0.03 200000 0.2")
    assert p.stdout.decode() == want and p.returncode == 0


def test_empty_arguments_fall_back_to_env_then_defaults():
    """${N:-${DP_X:-default}}: empty positional → env var → documented default."""
    f = quoted(str(INPUTS / "syn_400.jsonl"))
    explicit = bash(f"CONV_FILE={f}; store_conv_dp_decision 5 40 0 400000 8 0 0 5000 3.0 "
                    "0.30 15.0 500 0.5 0.8 0.03 50000 5").stdout
    from_env = bash(f"CONV_FILE={f}; store_conv_dp_decision 5 40 0 400000",
                    DP_MIN_KEEP_RATIO="0.5", MAX_CONTEXT_TOKENS="50000",
                    DP_QUALITY_PENALTY="5").stdout
    defaults = bash(f"CONV_FILE={f}; store_conv_dp_decision 5 40 0 400000 '' '' '' '' '' '' "
                    "'' '' 0.5 '' '' 50000 5").stdout
    assert explicit == from_env == defaults
    assert explicit != bash(f"CONV_FILE={f}; store_conv_dp_decision 5 40 0 400000").stdout


def test_paths_with_spaces_and_equals_signs_and_no_writes(tmp_path):
    src = (INPUTS / "syn_400.jsonl").read_bytes()
    odd = tmp_path / "my dir"
    odd.mkdir()
    conv = odd / "conv=1 file.jsonl"
    conv.write_bytes(src)
    before = hashlib.sha256(conv.read_bytes()).hexdigest(), conv.stat().st_mtime_ns
    for name in (str(conv), "conv=1 file.jsonl"):
        p = subprocess.run(
            ["bash", "-c", f"set -euo pipefail; source {quoted(str(HOOKS))}; "
             f"CONV_FILE={quoted(name)}; store_conv_dp_decision 5 40 0 400000; "
             "store_conv_turn_keep; compact_dp_policy auto 1000 5 40 0 400000"],
            cwd=odd, capture_output=True, timeout=60,
            env=clean_env(PATH=f"{Path(command_path()).parent}:{os.environ['PATH']}"))
        assert p.returncode == 0, p.stderr
        turn_keep = reference.turn_keep(reference.records(src), 0.12)
        assert p.stdout.decode().split() == ["54", str(turn_keep), "54"]
    assert (hashlib.sha256(conv.read_bytes()).hexdigest(), conv.stat().st_mtime_ns) == before


def test_bin_override_and_model(tmp_path):
    log = tmp_path / "args.log"
    fake = tmp_path / "fake-compact-dp"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {quoted(str(log))}\necho 7\n")
    fake.chmod(0o755)
    p = bash("CONV_FILE=x.jsonl; store_conv_dp_decision 1 2 3 4", COMPACT_DP_BIN=str(fake),
             COMPACT_DP_MODEL="v4.2")
    assert p.stdout == b"7\n"
    args = log.read_text().splitlines()
    assert args[:2] == ["--model", "v4.2"] and "t=1" in args and "total_input=4" in args
    assert args[-3:] == ["compact_dp.awk", "--", "x.jsonl"]


def test_missing_conv_file_is_an_error_not_a_crash():
    p = bash("unset CONV_FILE; store_conv_dp_decision 1 2 3 4 || echo status=$?")
    assert b"CONV_FILE is not set" in p.stderr and p.stdout == b"status=2\n"


# --- the README's agent loop, run verbatim ---------------------------------------------------

LOOP = ROOT / "agent_hooks" / "example-loop.sh"


def test_the_readme_shows_the_loop_file_verbatim():
    readme = (ROOT / "agent_hooks" / "README.md").read_text()
    assert LOOP.read_text() in readme


def simulate(lines: list[bytes], plan_at: int, env: dict) -> tuple[list[str], int]:
    """The same loop in Python, with the decision from the plain transcription; also how
    many compactions the fallback forced."""
    conv: list[bytes] = []
    t = requests = compactions = total_input = 0
    out = []
    forced = 0
    values = dict(DEFAULTS)
    values.update({p: env[e] for p, e in (("max_context", "MAX_CONTEXT_TOKENS"),
                                          ("beta", "DP_BETA")) if e in env})
    max_context = int(values["max_context"])
    for n, line in enumerate(lines, 1):
        conv.append(line)
        if b'"role":"assistant"' in line:
            requests += 1
            continue
        if reference.is_user(line, "v3.0.7"):
            t += 1
        ctx = sum(len(x) + 1 for x in conv) // 4
        trigger = "plan_clear" if n == plan_at else "auto"
        given = dict(values, t=str(t), total_requests=str(requests),
                     total_compact=str(compactions), total_input=str(total_input))
        keep = reference.decide(conv, given, "v3.0.7")
        forced += status_forced(conv, keep, trigger, ctx, max_context)
        keep, status = reference.policy(conv, keep, trigger, ctx, max_context, 0.12)
        if status == 0:
            drop = len(conv) - keep
            conv = conv[drop:] if keep else []
            compactions += 1
            first = "empty" if not conv else \
                "user" if reference.is_user(conv[0], "v3.0.7") else "other"
            out.append(f"compact at={n} keep={keep} drop={drop} trigger={trigger} first={first}")
        total_input += ctx
    out.append(f"done lines={len(lines)} compactions={compactions}")
    return out, forced


def status_forced(conv, keep, trigger, ctx, max_context) -> int:
    undecided = keep == 0 or keep >= len(conv)
    return int(undecided and (trigger != "auto" or ctx > max_context * 90 // 100)
               and reference.policy(conv, keep, trigger, ctx, max_context, 0.12)[1] == 0)


@pytest.mark.parametrize("source, plan_at, env, forced", [
    ("syn_400.jsonl", 0, {"MAX_CONTEXT_TOKENS": "200000"}, 0),
    ("syn_150.jsonl", 60, {"MAX_CONTEXT_TOKENS": "200000"}, 1),
    # a large information loss: the cost model never compacts, the context limit forces it
    ("syn_150.jsonl", 0, {"MAX_CONTEXT_TOKENS": "20000", "DP_BETA": "50"}, 1),
])
def test_agent_loop_compacts_where_the_policy_says(tmp_path, source, plan_at, env, forced):
    """Compactions happen exactly where the decision and the policy put them, and every
    kept window starts on a user line; the plan trigger and the context limit force
    compactions."""
    src = INPUTS / source
    lines = src.read_bytes().rstrip(b"\n").split(b"\n")
    if plan_at:   # the first LLM call at or after that line
        plan_at = next(n for n, x in enumerate(lines, 1)
                       if n >= plan_at and b'"role":"assistant"' not in x)
    p = subprocess.run(["bash", str(LOOP), str(src), str(tmp_path / "conversation file.jsonl"),
                        str(plan_at)], capture_output=True, timeout=900,
                       env=clean_env(PATH=f"{Path(command_path()).parent}:{os.environ['PATH']}",
                                     **env))
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    got = p.stdout.decode().splitlines()
    want, n_forced = simulate(lines, plan_at, env)
    assert got == want
    assert (n_forced > 0) == bool(forced)
    compactions = [x for x in got if x.startswith("compact ")]
    assert compactions, "the session should compact at least once"
    for x in compactions:
        assert "first=user" in x or "first=empty" in x
    if plan_at:
        assert any(f"at={plan_at} " in x and "trigger=plan_clear" in x for x in compactions)
