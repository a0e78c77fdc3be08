#!/usr/bin/env python3
"""Time compact-dp against baselines measured in the same run, and print ratios.

    python benchmarks/bench.py [--runs 7] [--sizes 200,1000,10000,100000]
                               [--awk-program compact_dp.awk] [--awk-max-lines 10000]
                               [--sessions 24] [--skip-sessions]
                               [--history-only] [--history-runs 2] [--backtest-only]
    python benchmarks/bench.py --compare OLD.json [NEW.json]

Baselines: one plain ``mawk '{n+=length($0)} END{print n}'`` pass over the same file (the
floor any tool pays to read it) and a bare ``python -c pass`` (the interpreter's start-up).
Each time is the median of --runs runs after one warm-up.  Machines are noisy: read the
ratios, not the milliseconds.  Sections:

1. the decision on bash-agent conversations of 200 … 100,000 lines (awk form, native);
2. sessions: a 3.5 MB Claude Code transcript (generated, as examples/generate.py writes
   them) read and decided, against the bash-agent path on as many messages, time and peak
   memory; the real sessions beside the repository when present;
3. the status line on that transcript, called again and again as Claude Code does, and on
   a 300 MB one: catching up call by call, then unchanged; and in a project of 150 real
   sessions, which its forecast learns from (when ../shared is there);
4. replay of many sessions, serial against --jobs 2;
5. corpus-smoke: real sessions cut at random bytes (when ../shared is there);
6. the recorded policy's simulation error on the real corpus, per format (the same), and
   the checks of each session's setting there (compact_dp/replaying/checks.py: four counts,
   each goal zero);
7. backtest on the corpus and the shared sessions, leave one project out (the profile
   fitted without the project scored, the forecast walk-forward within it): issue 27's
   goals of the forecast, the dollars and the policy, pooled and per project (the same),
   each with the central 90 % of 200 resamples of each project's sessions; the run is kept
   in benchmarks/data/lopo/sessions.json, and ``--compare OLD.json`` sets an earlier one
   beside it, paired session by session (docs/backtest.md, "How sure these are");
8. a whole history: a ~1 GB ~/.claude/projects-shaped tree built once from the corpus
   (every id rewritten per copy, so nothing collapses), replayed with --policy recorded and
   with the four default policies, in MB per CPU-second (user + sys of every process),
   next to ``ccusage session --json --offline`` on the same tree where npx can install it;
   the same for the corpus's sessions as they came, laid out as a user's home (replay with
   no FILE); and replay's fast reading checked against the standard one on every corpus
   file.
   ``--history-only`` runs just this.

The goals are checked at the end; the exit status is 1 when one is missed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
RUN = DATA / "lopo" / "sessions.json"    # the last leave-one-project-out run (--compare)
GENERATOR_VERSION = 3
SHARED = HERE.parent.parent / "shared" / "transcripts" / "claude-code"
CORPUS_UNPACK = HERE.parent.parent / "shared" / "transcripts" / "corpus" / "unpack"
TREE_VERSION = 1
TREE_BYTES = 1_000_000_000
# the ids a copy rewrites, so that nothing in one copy is a copy of another to a reader
# that counts each response once (compact-dp within a session, ccusage across the tree)
ID_FIELD = re.compile(rb'"(sessionId|requestId|uuid|parentUuid|leafUuid|id)":(\s*)"([^"\\]+)"')
sys.path.insert(0, str(HERE.parent / "examples"))
import generate as examples  # noqa: E402 (examples/generate.py: the session generator)

from compact_dp.core.params import DEFAULTS, awk_arguments  # noqa: E402 (the one table)

STATS = {"t": "40", "total_requests": "400", "total_compact": "2", "total_input": "20000000"}
AGENT_ARGS = awk_arguments({**DEFAULTS, **STATS}) + ["-f", "compact_dp.awk"]
NATIVE_ARGS = ["--turns", "40", "--requests", "400", "--compactions", "2",
               "--input-tokens", "20000000"]
WORDS = ("the of and to in is that for it with as was on be by this are from at or file "
         "def return self import test error line value path").split()


def conversation(lines: int) -> Path:
    """A bash-agent-shaped conversation: user turns, assistant replies, tool results
    (about 650 bytes a line on average, so 100,000 lines are about 65 MB)."""
    DATA.mkdir(exist_ok=True)
    path = DATA / f"conv_{lines}_v{GENERATOR_VERSION}.jsonl"
    if path.exists():
        return path
    rnd = random.Random(lines)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        for i in range(lines):
            kind = rnd.random()
            text = " ".join(rnd.choices(WORDS, k=rnd.randint(10, 260)))
            if kind < 0.08:
                msg = {"role": "user", "content": text}
            elif kind < 0.5:
                msg = {"role": "assistant", "content": [{"type": "text", "text": text}]}
            else:
                msg = {"role": "user", "content": [{"type": "tool_result",
                                                    "tool_use_id": f"toolu_{i:08d}",
                                                    "content": text}]}
            f.write(json.dumps(msg, separators=(",", ":")) + "\n")
    tmp.rename(path)
    return path


def median_seconds(argv: list[str], runs: int) -> float:
    """Median wall time of running argv (stdout discarded) after one warm-up."""
    def once() -> float:
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        return time.perf_counter() - start
    once()
    return statistics.median(once() for _ in range(runs))


def peak_rss_mib(argv: list[str]) -> float:
    """Peak resident memory of one run, measured in a fresh child (ru_maxrss is per tree)."""
    probe = ("import resource, subprocess, sys; "
             "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True)
    return int(out.stdout.strip()) / 1024


def find_command() -> str:
    beside = Path(sys.executable).parent / "compact-dp"
    return str(beside) if beside.exists() else (shutil.which("compact-dp") or "compact-dp")


def find_awk(names=("mawk", "gawk", "awk")) -> str | None:
    for n in names:
        if shutil.which(n):
            return n
    return None


def claude_transcript(target_mb: float = 3.5) -> Path:
    """A generated Claude Code transcript of about ``target_mb`` MB."""
    DATA.mkdir(exist_ok=True)
    path = DATA / f"claude_{target_mb:g}mb_v{GENERATOR_VERSION}.jsonl"
    if not path.exists():
        requests = int(180 * target_mb / 0.95)
        text = examples.claude_code(requests, seed=11, compact_at=requests * 2 // 3,
                                    pause_at=requests // 3)
        path.write_text(text)
    return path


def session_messages(path: Path) -> int:
    from compact_dp.sessions.read import read_session
    return len(read_session([str(path)]).kinds)


def sessions_section(cdp: str, runs: int, python_start: float, goals: list) -> None:
    """Reading and deciding a 3.5 MB session against the bash-agent path; the status
    line; the real sessions when present."""
    big = claude_transcript()
    n = session_messages(big)
    bash = conversation(n)
    mb = big.stat().st_size / 1e6
    t_session = median_seconds([cdp, "--json", str(big)], runs)
    t_bash = median_seconds([cdp, "--json", *NATIVE_ARGS, str(bash)], runs)
    m_session = peak_rss_mib([cdp, "--json", str(big)])
    m_bash = peak_rss_mib([cdp, "--json", *NATIVE_ARGS, str(bash)])
    print(f"\nsessions: a {mb:.1f} MB Claude Code transcript ({n:,} messages) against a "
          f"bash-agent file of {n:,} lines ({bash.stat().st_size / 1e6:.1f} MB)")
    print(f"  decide --json   claude-code {t_session * 1000:7.1f} ms  {m_session:5.1f} MiB   "
          f"bash-agent {t_bash * 1000:7.1f} ms  {m_bash:5.1f} MiB   "
          f"ratio {t_session / t_bash:.2f}×")
    small = claude_transcript(1.0)
    mb_small = small.stat().st_size / 1e6
    t_small = median_seconds([cdp, "--json", str(small)], runs)
    print(f"  linear: {t_small * 1000:.1f} ms at {mb_small:.1f} MB, {t_session * 1000:.1f} ms "
          f"at {mb:.1f} MB")
    goals.append((f"{mb:.1f} MB session: time / bash-agent path", t_session / t_bash, 4.0,
                   "same number of messages"))
    goals.append((f"{mb:.1f} MB session: peak memory (MiB)", m_session, 64.0, ""))
    goals.append((f"session: time at {mb:.1f} MB / at {mb_small:.1f} MB", t_session / t_small,
                  1.2 * mb / mb_small, f"{mb / mb_small:.1f} would be linear with no start-up"))
    # the status line, called after every assistant message
    import tempfile
    with tempfile.TemporaryDirectory() as cache:
        status = json.dumps({"transcript_path": str(big), "model": {"id": "claude-opus-4-6"},
                             "context_window": {"context_window_size": 200000}})
        env = dict(os.environ, COMPACT_DP_CACHE=cache)
        # the other sessions of its folder, which the forecast learns from, read once (the
        # status line would catch up over calls, PROJECT_READING seconds each)
        start = time.perf_counter()
        subprocess.run([cdp, "--json", str(big)], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        warmed = time.perf_counter() - start

        def call() -> float:
            start = time.perf_counter()
            subprocess.run([cdp, "statusline"], input=status.encode(), env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return time.perf_counter() - start
        first = call()
        t_line = statistics.median(call() for _ in range(max(runs, 9)))
    print(f"  statusline      first call {first * 1000:.1f} ms, then {t_line * 1000:.1f} ms "
          f"(median) = {t_line / python_start:.1f}× python -c pass (the folder's other "
          f"sessions read once before, in {warmed:.1f} s)")
    goals.append(("statusline on 3.5 MB / python -c pass", t_line / python_start, 4.0,
                  "median of repeated calls"))
    huge_statusline(cdp, runs, python_start, goals)
    project_statusline(cdp, runs, python_start, goals)
    if SHARED.is_dir():
        print("  real sessions (beside the repository):")
        for f in sorted(SHARED.glob("*.jsonl")):
            t = median_seconds([cdp, "--json", str(f)], max(3, runs // 2))
            print(f"    {f.name[:28]:<28} {f.stat().st_size / 1e6:5.2f} MB  {t * 1000:6.1f} ms")


def huge_statusline(cdp: str, runs: int, python_start: float, goals: list,
                    target_mb: float = 300) -> None:
    """The status line on a 300 MB transcript: catching up call by call (none may take
    over a second), then called again on the unchanged file (within 4× python -c pass)."""
    import tempfile
    path = DATA / f"claude_{target_mb:g}mb_v{GENERATOR_VERSION}.jsonl"
    if not path.exists():
        requests = int(180 * target_mb / 0.95)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(examples.claude_code(requests, seed=5, compact_at=requests * 2 // 3,
                                            pause_at=requests // 3))
        tmp.rename(path)
    status = json.dumps({"transcript_path": str(path), "model": {"id": "claude-opus-4-6"},
                         "context_window": {"context_window_size": 200000}}).encode()
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, COMPACT_DP_CACHE=cache)

        def call() -> tuple[float, str]:
            start = time.perf_counter()
            p = subprocess.run([cdp, "statusline"], input=status, env=env,
                               capture_output=True)
            return time.perf_counter() - start, p.stdout.decode()
        catching = []
        while len(catching) < 200:
            took, line = call()
            catching.append(took)
            if "reading the transcript" not in line:
                break
        unchanged = statistics.median(call()[0] for _ in range(max(runs, 9)))
    mb = path.stat().st_size / 1e6
    print(f"  statusline on {mb:.0f} MB: caught up in {len(catching)} calls (the longest "
          f"{max(catching) * 1000:.0f} ms), then {unchanged * 1000:.1f} ms on the unchanged "
          f"file = {unchanged / python_start:.1f}× python -c pass")
    goals.append((f"statusline on {mb:.0f} MB, unchanged / python -c pass",
                  unchanged / python_start, 4.0, "median of repeated calls"))
    goals.append((f"statusline on {mb:.0f} MB, longest call catching up (s)",
                  max(catching), 1.0, f"{len(catching)} calls"))


def project_statusline(cdp: str, runs: int, python_start: float, goals: list,
                       count: int = 150) -> None:
    """The status line in a project of ``count`` real sessions (the corpus's largest
    project, copied once under benchmarks/data/, every file last written two hours ago):
    catching up with the project's sessions call by call, then on every later call, when
    the forecast learns from all of them (within 4× python -c pass)."""
    import tempfile
    corpus = corpus_folder()
    if corpus is None:
        print("  statusline in a project: skipped (needs ../shared/transcripts/corpus)")
        return
    folder = DATA / "project_v1" / "-home-bench-cli"
    if not (folder.parent / ".done").exists():
        shutil.rmtree(folder.parent, ignore_errors=True)
        folder.mkdir(parents=True)
        sources = sorted((corpus / "claude-code" / "entireio__cli").rglob("full.jsonl"))
        past = time.time() - 7200
        for n, src in enumerate(sources[:count]):
            target = folder / f"s{n:03d}.jsonl"
            shutil.copyfile(src, target)
            os.utime(target, (past, past))
        (folder.parent / ".done").write_text("")
    files = sorted(folder.glob("*.jsonl"))
    mb = sum(f.stat().st_size for f in files) / 1e6
    transcript = max(files, key=lambda f: f.stat().st_size)
    status = json.dumps({"transcript_path": str(transcript),
                         "model": {"id": "claude-opus-4-6"},
                         "context_window": {"context_window_size": 200000}}).encode()
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, COMPACT_DP_CACHE=cache)

        def call() -> float:
            start = time.perf_counter()
            subprocess.run([cdp, "statusline"], input=status, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return time.perf_counter() - start
        catching = [call()]
        while len(catching) < 300 and not (catching[-1] < 3 * python_start and
                                           len(catching) > 1 and
                                           catching[-2] < 3 * python_start):
            catching.append(call())
        unchanged = statistics.median(call() for _ in range(max(runs, 9)))
    print(f"  statusline in a project of {len(files)} real sessions ({mb:.0f} MB): caught up "
          f"in {len(catching)} calls (the longest {max(catching) * 1000:.0f} ms), then "
          f"{unchanged * 1000:.1f} ms = {unchanged / python_start:.1f}× python -c pass")
    goals.append((f"statusline, project of {len(files)} / python -c pass",
                  unchanged / python_start, 4.0, "the forecast learning from all of them"))
    goals.append(("statusline, project: longest call catching up (s)", max(catching), 1.0,
                  f"{len(catching)} calls"))


def corpus_smoke(cdp: str, goals: list) -> None:
    """The shared tool that cuts real sessions at random bytes (when ../shared is there)."""
    tool = HERE.parent.parent / "shared" / "tools" / "corpus-smoke"
    if not tool.exists():
        print("\ncorpus-smoke: skipped (needs ../shared/tools/corpus-smoke)")
        return
    p = subprocess.run([str(tool), cdp, "--cuts", "200", "--seconds", "600"],
                       capture_output=True, text=True)
    last = (p.stdout.strip().splitlines() or ["no output"])[-1]
    print(f"\ncorpus-smoke --cuts 200: {last}")
    failed = int(last.split(": ")[-1].split()[0]) if "failed" in last else 1
    goals.append(("corpus-smoke: runs failed on cut real sessions", failed, 0.0, ""))


def _simulation_error(item: tuple[str, str]) -> tuple[str, float | str | None]:
    """One corpus session's recorded-policy simulation error (None: under 20 requests or
    no bill; why, when it cannot be replayed)."""
    from compact_dp.replaying.batch import FileJob, replay_file
    from compact_dp.replaying.compare import simulation_error
    fmt, path = item
    try:
        res = replay_file(path, FileJob(["recorded"], {}, None, "auto", 20000, "auto",
                                        "auto", None, None, {}, chosen=True), detail=False)
    except Exception as e:
        return fmt, f"{path}: {type(e).__name__}: {e}"
    if res["requests"] < 20 or not res.get("recorded"):
        return fmt, None
    return fmt, simulation_error(res["policies"][0], res["recorded"])


def simulation_errors(goals: list) -> None:
    """|simulated − recorded| / recorded of the recorded policy on every corpus session of
    20 or more requests, per format: p50, p90 (linear between ranks) and the worst, against
    the goals (Claude Code p90 0.5 %, max 3 %; Codex 1 %, 5 %)."""
    from concurrent.futures import ProcessPoolExecutor
    corpus = corpus_folder()
    if corpus is None:
        print("\nsimulation error: skipped (needs ../shared/transcripts/corpus)")
        return
    items = [(fmt, str(f)) for fmt in ("claude-code", "codex")
             for f in sorted((corpus / fmt).rglob("*.jsonl"))
             if "subagents" not in f.parts and not f.name.startswith("agent-")]
    with ProcessPoolExecutor(os.cpu_count() or 1) as pool:
        found = list(pool.map(_simulation_error, items, chunksize=4))
    print("\nsimulation error of the recorded policy, corpus sessions of ≥ 20 requests:")
    for fmt, name, (p90_goal, max_goal) in (("claude-code", "Claude Code", (0.5, 3.0)),
                                           ("codex", "Codex", (1.0, 5.0))):
        errors = sorted(abs(e) * 100 for f, e in found if f == fmt and isinstance(e, float))
        for why in (e for f, e in found if f == fmt and isinstance(e, str)):
            print(f"  not replayed: {why}")
        if len(errors) < 2:
            print(f"  {name}: {len(errors)} sessions")
            continue
        p50, p90 = (statistics.quantiles(errors, n=10, method="inclusive")[i] for i in (4, 8))
        print(f"  {name:<12} {len(errors):4} sessions  p50 {p50:.3f} %  p90 {p90:.3f} % "
              f"(goal ≤ {p90_goal:g} %)  max {errors[-1]:.3f} % (goal ≤ {max_goal:g} %)")
        goals.append((f"{name} simulation error p90 (%)", p90, p90_goal, f"{len(errors)} "
                       "sessions"))
        goals.append((f"{name} simulation error max (%)", errors[-1], max_goal, ""))


def setting_checks(cdp: str, goals: list) -> None:
    """The session's setting on every corpus session (compact_dp/replaying/checks.py): how many
    sessions show a recorded peak past the window learned, a `never` off the bill where
    nothing was compacted, a policy whose objective beats hindsight's, an assumption with
    no reason.  Each goal is zero."""
    from compact_dp.replaying.checks import CHECKS, counts
    corpus = corpus_folder()
    if corpus is None:
        print("\nsetting checks: skipped (needs ../shared/transcripts/corpus)")
        return
    policies = ["recorded", "dp", "hindsight", "never", "threshold:60", "threshold:83"]
    start = time.perf_counter()
    out = subprocess.run([cdp, "replay", "--json", *[a for p in policies for a in
                                                     ("--policy", p)],
                          str(corpus / "claude-code"), str(corpus / "codex")],
                         capture_output=True, check=True).stdout
    seconds = time.perf_counter() - start
    sessions = [s for s in json.loads(out)["sessions"] if s.get("recorded")]
    found = counts(sessions)
    print(f"\nthe session's setting, {len(sessions)} corpus sessions with a bill "
          f"({seconds:.1f} s for six policies, hindsight included):")
    for name in CHECKS:
        print(f"  {name:<24} {found[name]:4} sessions (goal 0)")
        goals.append((f"setting: sessions with {name}", found[name], 0.0, ""))


def corpus_folder() -> Path | None:
    """The real-session corpus, unpacked once into a cache folder (None without ../shared)."""
    if not CORPUS_UNPACK.exists():
        return None
    out = subprocess.run([str(CORPUS_UNPACK)], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def fresh_id(value: bytes, salt: bytes) -> bytes:
    """A deterministic stand-in for an id, of the same length and shape: letters and
    digits replaced (hex digits by hex digits), the rest — dashes, a ``msg_`` prefix —
    kept."""
    head, sep, tail = value.partition(b"_")
    if not sep:
        head, tail = b"", value
    else:
        head += sep
    digest = b""
    counter = 0
    while len(digest) < len(tail):
        digest += hashlib.blake2b(salt + b"|" + value + b"|" + str(counter).encode(),
                                  digest_size=64).digest()
        counter += 1
    alnum = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    out = bytearray(tail)
    for i, c in enumerate(tail):
        if c in b"0123456789abcdef":
            out[i] = b"0123456789abcdef"[digest[i] % 16]
        elif chr(c).isalnum() and c < 128:
            out[i] = alnum[digest[i] % len(alnum)]
    return head + bytes(out)


def history_tree(target: int = TREE_BYTES) -> Path | None:
    """A Claude Code history of about ``target`` bytes, laid out as ~/.claude/projects is
    (``<tree>/projects/<project>/<session>.jsonl``; CLAUDE_CONFIG_DIR is ``<tree>``): the
    corpus's Claude Code sessions copied until the size is reached, every id rewritten per
    copy and file (same length, so every size and bill is the original's) and nothing else
    changed.  Built once under benchmarks/data/ (gitignored)."""
    corpus = corpus_folder()
    if corpus is None:
        return None
    tree = DATA / f"history_{target // 10**6}mb_v{TREE_VERSION}"
    if (tree / ".done").exists():
        return tree
    sources = sorted(p for p in (corpus / "claude-code").rglob("*.jsonl"))
    if os.path.exists(tree):
        shutil.rmtree(tree)
    written = 0
    copy = 0
    while written < target:
        for n, src in enumerate(sources):
            if written >= target:
                break
            salt = f"{copy}:{src.relative_to(corpus)}".encode()
            repo = src.relative_to(corpus / "claude-code").parts[0]
            project = tree / "projects" / f"-home-bench-{repo.replace('_', '-')}-{copy}"
            project.mkdir(parents=True, exist_ok=True)
            name = fresh_id(str(uuid.UUID(int=n)).encode(), salt).decode()
            if src.name.startswith("agent-"):
                name = "agent-" + name[:8]
            data = ID_FIELD.sub(lambda m: b'"%s":%s"%s"' % (
                m.group(1), m.group(2), fresh_id(m.group(3), salt)),  # noqa: B023 (used now)
                src.read_bytes())
            (project / f"{name}.jsonl").write_bytes(data)
            written += len(data)
        copy += 1
    (tree / ".done").write_text(f"{written}\n")
    return tree


CCUSAGE = ("ccusage@latest", "ccusage@20.0.24")   # latest first; the last release whose
# linux-x64 binary the registry has (20.0.26 names one it does not publish)


def child_cpu(argv: list[str], env: dict | None = None, timeout: float | None = None
              ) -> tuple[float, int, float]:
    """(CPU seconds — user + sys of the command and every process it waited for —, exit
    status, peak resident MiB of the largest of them) of one run, stdout discarded; in a
    fresh probe process, so that no earlier child's peak counts."""
    probe = ("import resource, subprocess, sys\n"
             "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
             "stderr=subprocess.DEVNULL)\n"
             "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
             "print(r.ru_utime + r.ru_stime, p.returncode, r.ru_maxrss)")
    try:
        out = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True,
                             text=True, env=env, timeout=timeout).stdout.split()
    except subprocess.TimeoutExpired:
        return 0.0, -1, 0.0
    return float(out[0]), int(out[1]), int(out[2]) / 1024


def best_cpu(argv: list[str], runs: int, env: dict | None = None) -> tuple[float, float]:
    """The least CPU time of ``runs`` runs (a shared machine only ever adds to it) and the
    peak memory."""
    results = [child_cpu(argv, env) for _ in range(runs)]
    for _cpu, status, _ in results:
        if status != 0:
            raise SystemExit(f"failed (exit {status}): {' '.join(argv)}")
    return min(r[0] for r in results), max(r[2] for r in results)


def ccusage_command(tree: Path) -> tuple[list[str] | None, str]:
    """The first ccusage that installs and reads the tree, and what happened to the
    others (npx installs it once into its cache; each try is time-limited)."""
    if not shutil.which("npx"):
        return None, "no npx"
    env = dict(os.environ, CLAUDE_CONFIG_DIR=str(tree))
    notes = []
    for spec in CCUSAGE:
        argv = ["npx", "--yes", spec, "session", "--json", "--offline"]
        try:
            p = subprocess.run(argv, capture_output=True, env=env, timeout=600)
        except subprocess.TimeoutExpired:
            notes.append(f"{spec} timed out")
            continue
        try:
            sessions = json.loads(p.stdout).get("session") if p.returncode == 0 else None
        except (ValueError, AttributeError):
            sessions = None
        if sessions:
            return argv, "; ".join(notes + [f"{len(sessions):,} sessions"])
        last = (p.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        notes.append(f"{spec} failed: {last[:70]}")
    return None, "; ".join(notes)


def history_section(cdp: str, runs: int, goals: list) -> None:
    """A whole Claude Code history (~1 GB, built once from the corpus): replayed with the
    recorded policy, with the four policies the issue's goal names (recorded, dp, never,
    threshold:80) and with the defaults (those and hindsight, whose search replays a
    session once per compaction point), --jobs by default, against ccusage on the same
    files; CPU time of all the processes, per megabyte."""
    tree = history_tree()
    if tree is None:
        print("\nhistory: skipped (needs ../shared/transcripts/corpus)")
        return
    files = sorted((tree / "projects").rglob("*.jsonl"))
    mb = sum(f.stat().st_size for f in files) / 1e6
    print(f"\nhistory: {mb:,.0f} MB, {len(files):,} Claude Code sessions "
          f"({tree.relative_to(HERE.parent)}), --jobs {os.cpu_count()} (the default); "
          f"CPU = user + sys of every process, least of {runs}")
    rates = {}
    four = [x for p in ("recorded", "dp", "never", "threshold:80") for x in ("--policy", p)]
    for label, policies in (("--policy recorded", ["--policy", "recorded"]),
                            ("recorded dp never threshold:80", four),
                            ("the defaults (+ hindsight)", [])):
        cpu, peak = best_cpu([cdp, "replay", "--json", *policies, str(tree / "projects")],
                             runs)
        rates[label] = (mb / cpu, cpu)
        print(f"  compact-dp replay {label:<30} {cpu:6.2f} CPU-s  {mb / cpu:6.1f} MB/CPU-s  "
              f"peak {peak:.0f} MiB per process")
    goals.append(("replay --policy recorded: MB per CPU-s", rates["--policy recorded"][0],
                  223.0, f"{mb:,.0f} MB history", True))
    goals.append(("replay, 4 policies: MB per CPU-s",
                  rates["recorded dp never threshold:80"][0], 110.0,
                  "recorded dp never threshold:80", True))
    goals.append(("replay, the defaults: MB per CPU-s", rates["the defaults (+ hindsight)"][0],
                  110.0, "with hindsight", True))
    argv, note = ccusage_command(tree)
    if argv is None:
        print(f"  ccusage: not run ({note})")
        return
    cpu, _ = best_cpu(argv, runs, dict(os.environ, CLAUDE_CONFIG_DIR=str(tree)))
    ratio = rates["--policy recorded"][1] / cpu
    print(f"  {' '.join(argv[2:])}: {cpu:6.2f} CPU-s  {mb / cpu:6.1f} MB/CPU-s  ({note}); "
          f"compact-dp recorded takes {ratio:.2f}× its CPU time")
    goals.append(("replay recorded CPU / ccusage session CPU", ratio, 1.0,
                  f"{argv[2]}, npx included"))


def corpus_home() -> Path | None:
    """The corpus's Claude Code sessions as they came, laid out as a user's home
    (``<home>/.claude/projects/<repo>/...``): real sessions of other projects, read the
    way ``compact-dp replay`` with no FILE reads a user's own.  Copied once under
    benchmarks/data/ (gitignored)."""
    corpus = corpus_folder()
    if corpus is None:
        return None
    home = DATA / "home_corpus_v1"
    if not (home / ".done").exists():
        if home.exists():
            shutil.rmtree(home)
        shutil.copytree(corpus / "claude-code", home / ".claude" / "projects")
        (home / ".done").write_text("")
    return home


def home_section(cdp: str, runs: int, goals: list) -> None:
    """``compact-dp replay --policy recorded`` with no FILE (the default folders) against
    ``ccusage session --json --offline`` on a home holding the corpus's sessions."""
    home = corpus_home()
    if home is None:
        print("\nthe corpus as a home: skipped (needs ../shared/transcripts/corpus)")
        return
    files = list((home / ".claude" / "projects").rglob("*.jsonl"))
    mb = sum(f.stat().st_size for f in files) / 1e6
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    env["HOME"] = str(home)
    cpu, _ = best_cpu([cdp, "replay", "--json", "--policy", "recorded"], runs, env)
    print(f"\nthe corpus as a home: {mb:,.0f} MB, {len(files):,} files; "
          f"`compact-dp replay --policy recorded` (no FILE): {cpu:.2f} CPU-s, "
          f"{mb / cpu:.0f} MB/CPU-s")
    argv, note = ccusage_command(home / ".claude")
    if argv is None:
        print(f"  ccusage: not run ({note})")
        return
    theirs, _ = best_cpu(argv, runs, dict(env, CLAUDE_CONFIG_DIR=str(home / ".claude")))
    print(f"  {' '.join(argv[2:])}: {theirs:.2f} CPU-s ({note}); compact-dp takes "
          f"{cpu / theirs:.2f}× its CPU time")
    goals.append(("home: replay recorded CPU / ccusage CPU", cpu / theirs, 1.0,
                  f"{mb:,.0f} MB of real sessions"))


def fast_reading_check(goals: list) -> None:
    """Replay's reading (orjson where it gives the same numbers) against the standard
    reading, every number of every Claude Code file of the corpus (the tests sample it)."""
    corpus = corpus_folder()
    if corpus is None:
        print("\nfast reading: not checked (needs ../shared/transcripts/corpus)")
        return
    from compact_dp.sessions.read import read_session
    files = sorted((corpus / "claude-code").rglob("*.jsonl")) + \
        sorted(SHARED.glob("**/*.jsonl"))

    def everything(path: Path, fast: bool):
        try:
            s = read_session([str(path)], fast=fast)
        except Exception as e:                # the same failure is the same answer
            return repr(e)
        return (s.totals(), s.kinds, s.nbytes, s.tokens, s.warnings, s.touches,
                [(r.seen, r.time, r.llm, r.usage and r.usage.numbers(), r.segment, r.key,
                  r.adjust, r.sent, r.done) for r in s.requests],
                [(c.at, c.time) for c in s.compactions])
    differ = [f for f in files if everything(f, True) != everything(f, False)]
    print(f"\nfast reading = standard reading: {len(files) - len(differ):,} of "
          f"{len(files):,} Claude Code files, every number" +
          "".join(f"\n  DIFFERS: {f}" for f in differ[:10]))
    goals.append(("fast reading: files differing from the standard", len(differ), 0.0, ""))


def replay_section(cdp: str, count: int, goals: list) -> None:
    """Many sessions: serial against a pool of two processes."""
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        for i in range(count):
            Path(folder, f"s{i:03d}.jsonl").write_text(
                examples.claude_code(200, seed=100 + i, compact_at=120, pause_at=60))
        times: dict[int, float] = {}
        for jobs in (1, 2):
            runs = []
            for _ in range(3):                  # a median: one run is at the noise's mercy
                start = time.perf_counter()
                subprocess.run([cdp, "replay", "--json", "--jobs", str(jobs), folder],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               check=True)
                runs.append(time.perf_counter() - start)
            times[jobs] = sorted(runs)[1]
    print(f"\nreplay of {count} sessions: serial {times[1]:.2f} s, --jobs 2 {times[2]:.2f} s "
          f"= {times[1] / times[2]:.2f}× faster")
    goals.append((f"replay {count} sessions: serial / --jobs 2", times[1] / times[2], None,
                  "must exceed 1.2: the pool pays"))


# issue 27's goals: (name, today's figure as the issue measured it, target, test)
GOALS_27 = [
    ("forecast bias, long sessions pooled", "0.68", "0.8–1.25", lambda x: 0.8 <= x <= 1.25),
    ("forecast bias, walk-forward, pooled", "1.00", "0.8–1.25", lambda x: 0.8 <= x <= 1.25),
    ("projects (≥ 5 of ≥ 20 req.) outside 0.67–1.5", "3 of 6", "0", lambda x: x == 0),
    ("forecast log error / elapsed rule's, long", "0.62", "≤ 0.6", lambda x: x <= 0.6),
    ("turn-end dollars: median predicted/realized", "0.93", "0.67–1.5",
     lambda x: 0.67 <= x <= 1.5),
    ("turn-end dollars: Spearman ρ", "0.55", "≥ 0.6", lambda x: x >= 0.6),
    ("dp / hindsight objective saving, median", "0.15", "≥ 0.5", lambda x: x >= 0.5),
    ("dp / hindsight objective saving, summed", "0.58", "≥ 0.75", lambda x: x >= 0.75),
    ("sessions with dp's objective above recorded", "0.39", "≤ 0.15", lambda x: x <= 0.15),
    ("dp's compactions / hindsight's", "1.4", "≤ 1.2", lambda x: x <= 1.2),
    ("dp cheaper than threshold:60 and :83", "0.67", "≥ 0.75", lambda x: x >= 0.75),
]


def held_out_projects(corpus: Path) -> dict[str, list[Path]]:
    """The projects a leave-one-project-out run holds out in turn: each repository of the
    corpus (its Claude Code and its Codex sessions together) and the sessions beside this
    repository."""
    groups: dict[str, list[Path]] = {}
    for agent in ("claude-code", "codex"):
        for repo in sorted(p for p in (corpus / agent).iterdir() if p.is_dir()):
            groups.setdefault(repo.name, []).append(repo)
    groups["(beside this repository)"] = [SHARED]
    return groups


def leave_one_project_out(cdp: str, corpus: Path, profile_only: bool = False,
                          jobs: int | None = None) -> tuple[list[dict], dict[str, str]]:
    """Every session backtested with the built-in profile fitted without its own project
    (make calibrate's fit on the others, read once here), walk-forward within the project
    (each forecast sees the project's earlier sessions only) unless ``profile_only``.
    Returns the sessions' results and the failures."""
    from compact_dp.calibration.fit import fit
    from compact_dp.history import find_sessions
    from compact_dp.sessions.read import read_session
    groups = held_out_projects(corpus)
    read: dict[str, list] = {}
    for repo, folders in groups.items():
        read[repo] = []
        for f in find_sessions([str(x) for x in folders]):
            try:
                session = read_session([f], fast=True)
            except Exception:                   # what calibrate skips, so does this
                continue
            if session.format in ("claude-code", "codex") and session.has_usage:
                read[repo].append(session)
    folder = DATA / "lopo"
    folder.mkdir(parents=True, exist_ok=True)
    results: list[dict] = []
    failed: dict[str, str] = {}
    for repo, folders in groups.items():
        if not read[repo]:
            continue
        others = [s for r, ss in read.items() if r != repo for s in ss]
        profile = fit(others, None, f"make calibrate without {repo}")
        path = folder / f"without-{re.sub(r'[^A-Za-z0-9_.-]', '_', repo)}.json"
        path.write_text(json.dumps(profile.as_dict(), indent=1) + "\n")
        argv = [cdp, "backtest", "--json", *(["--profile-only"] if profile_only else []),
                *(["--jobs", str(jobs)] if jobs else []), *map(str, folders)]
        p = subprocess.run(argv, capture_output=True, text=True,
                           env=dict(os.environ, COMPACT_DP_PROFILE=str(path)))
        if p.returncode != 0:
            failed[repo] = (p.stderr.strip().splitlines() or ["no output"])[-1]
            continue
        for r in json.loads(p.stdout)["sessions"]:
            r["held_out"] = repo
            results.append(r)
    return results, failed


def lopo_figures(results: list[dict]) -> tuple[dict, list[tuple[str, int, float]]]:
    """Issue 27's figures over the sessions of a leave-one-project-out run, and each
    project's (its working folder) forecast bias over its sessions of 20 or more requests,
    for the projects with 5 or more of them."""
    from compact_dp.replaying.backtest import score, totals
    total = totals(results)
    long = [r for r in results if r["requests"] >= 100]
    long_scores = score([p for r in long for p in r["points"]])["scores"] or {}
    by: dict[str, list[dict]] = {}
    for r in results:
        if r["requests"] >= 20:
            by.setdefault(f"{r['format']} {r['project']}", []).append(r)
    projects = []
    for name, members in sorted(by.items(), key=lambda kv: -len(kv[1])):
        points = [p for r in members for p in r["points"]]
        if len(members) >= 5 and points:
            projects.append((name, len(members), score(points)["scores"]["forecast_bias"]))
    s = total["scores"] or {}
    outside = sum(1 for _n, _m, b in projects if not 0.67 <= b <= 1.5)
    values = [long_scores.get("forecast_bias"), s.get("forecast_bias"), float(outside),
              long_scores.get("forecast_log_error_vs_elapsed"), s.get("dollars_median_ratio"),
              s.get("dollars_spearman"), total.get("dp_hindsight_share_median"),
              total.get("dp_hindsight_share_sum"), total.get("dp_objective_worse_share"),
              total.get("dp_compactions_over_hindsight"), total.get("dp_beats_thresholds_share")]
    return {"total": total, "long": long_scores, "values": values,
            "outside": f"{outside} of {len(projects)}"}, projects


def resampled(results: list, figures_of, rounds: int = 200, seed: int = 27,
              project=lambda r: r.get("held_out", "")) -> list[list[float | None]]:
    """``figures_of`` over ``rounds`` resamples of the sessions: each held-out project's
    sessions drawn again with replacement, as many as it has.  How far the figures move
    says what the corpus can tell apart: 89 long sessions, most of them from one project,
    leave a share such as "cheaper than both thresholds" about ±0.08 wide, and a mend that
    moves a figure less than that is not evidence.  The projects themselves are not drawn
    again (there are 12): how the figures vary between projects is not in the interval.
    Seeded, so that two runs print the same intervals.  ``project``: what a result's
    project is (a session's ``held_out``)."""
    rng = random.Random(seed)
    groups: dict[str, list[dict]] = {}
    for r in results:
        groups.setdefault(project(r), []).append(r)
    return [figures_of([rng.choice(members) for members in groups.values()
                        for _ in members]) for _ in range(rounds)]


def interval(values: list[float | None], good=None,
             share: float = 0.9) -> tuple[float, float, float | None] | None:
    """The central ``share`` of the values (the sorted values at the positions nearest
    (1 ± share) / 2 of the way along) and the share of them that ``good`` holds for (None
    without ``good``); None when no value is known."""
    known = sorted(v for v in values if v is not None)
    if not known:
        return None
    tail = (1.0 - share) / 2.0
    lo = known[int(tail * (len(known) - 1) + 0.5)]
    hi = known[int((1.0 - tail) * (len(known) - 1) + 0.5)]
    return lo, hi, (sum(1 for v in known if good(v)) / len(known) if good else None)


RUN_FIELDS = ("held_out", "session_id", "requests", "points", "policies")


def run_sessions(data: object, where: str) -> list[dict]:
    """The sessions of a run ``backtest_section`` saved; ValueError, naming ``where``, for
    anything else."""
    if not isinstance(data, list) or not all(isinstance(r, dict) and
                                             all(k in r for k in RUN_FIELDS) for r in data):
        raise ValueError(f"{where}: not a run saved by bench.py (a list of backtested "
                         f"sessions, each with {', '.join(RUN_FIELDS)})")
    return data


def _session_keys(run: list[dict]) -> list[tuple]:
    """Each session's key for pairing two runs: its project and session id, and which of
    the sessions with both it is in the run's order (the runs list a project's files in
    one order; a path would not do, for the corpus is unpacked under each user's home)."""
    seen: dict[tuple, int] = {}
    keys = []
    for r in run:
        k = (r["held_out"], r["session_id"])
        seen[k] = seen.get(k, -1) + 1
        keys.append((*k, seen[k]))
    return keys


def compare_runs(old: list[dict], new: list[dict], rounds: int = 200) -> bool:
    """Print how a change moved issue 27's figures: the sessions the two runs share, each
    figure's difference (new less old) with the central 90 % of its difference over paired
    resamples (both runs' figures on the same drawn sessions, so that what every session
    shares is not lost in how the sessions differ), and the objective and dollars dp saved
    against what was recorded.  A difference whose interval holds 0 is one the corpus
    cannot tell from chance.  False when the runs share no session."""
    before = dict(zip(_session_keys(old), old))
    pairs = [(before[k], r) for k, r in zip(_session_keys(new), new) if k in before]
    if not pairs:
        print("compare: the two runs share no session")
        return False

    def figures(sample: list) -> list:
        a, b = (lopo_figures([pair[k] for pair in sample])[0]["values"] for k in (0, 1))
        return [None if x is None or y is None else y - x for x, y in zip(a, b)]

    again = resampled(pairs, figures, rounds, project=lambda pair: pair[1]["held_out"])
    apart = (f" (left out: {len(old) - len(pairs)} only in the old, "
             f"{len(new) - len(pairs)} only in the new)" if len(pairs) < max(len(old), len(new))
             else "")
    print(f"compare: {len(pairs)} sessions in both runs{apart}; new less old, and the "
          f"central 90 % of {rounds} paired resamples")
    whole = figures(pairs)
    for k, (name, *_rest) in enumerate(GOALS_27):
        spread = interval([v[k] for v in again])
        if whole[k] is None or spread is None:
            continue
        beyond = "" if spread[0] <= 0 <= spread[1] else "  beyond chance"
        print(f"  {name:<46} {whole[k]:+8.3f}  {spread[0]:+.3f} … {spread[1]:+.3f}{beyond}")
    for what, label in (("objective", "objective"), ("comparable_cost", "dollars")):
        print(f"  dp's {label} saved against recorded, the sessions in both: "
              f"${objective_saved([a for a, _ in pairs], 'dp', what)[0]:,.2f} → "
              f"${objective_saved([b for _, b in pairs], 'dp', what)[0]:,.2f}")
    return True


def backtest_section(cdp: str, goals: list) -> None:
    """Issue 27's goals on the corpus and the shared sessions, leave-one-project-out: the
    built-in profile fitted without the project scored, each forecast walk-forward within
    its project (needs ../shared; in-sample figures are not evidence)."""
    corpus = corpus_folder()
    if corpus is None or not SHARED.is_dir():
        print("\nbacktest: skipped (needs ../shared/transcripts: the corpus and the sessions "
              "beside the repository)")
        return
    start = time.perf_counter()
    results, failed = leave_one_project_out(cdp, corpus)
    seconds = time.perf_counter() - start
    for repo, line in failed.items():
        print(f"\nbacktest without {repo} failed: {line}")
    if not results:
        goals.append(("backtest: issue 27 goals missed", float(len(GOALS_27)), 0.0,
                      "it did not run"))
        return
    RUN.write_text(json.dumps(results))
    figures, projects = lopo_figures(results)
    total = figures["total"]
    s = total["scores"] or {}
    print(f"\nbacktest, leave one project out: {total['sessions']:,} sessions "
          f"({total['long_sessions']:,} of ≥ 100 requests), {s.get('points', 0):,} turn ends, "
          f"{len(held_out_projects(corpus))} projects held out in turn, {seconds:.0f} s; "
          "each held-out project backtested (walk-forward) with the profile fitted on the "
          "others (benchmarks/data/lopo/), e.g.\n"
          "  COMPACT_DP_PROFILE=benchmarks/data/lopo/without-entireio__cli.json compact-dp "
          'backtest "$(../shared/transcripts/corpus/unpack)"/claude-code/entireio__cli')
    again = resampled(results, lambda sample: lopo_figures(sample)[0]["values"])
    print(f"  {'what':<46} {'issue':>7} {'here':>7}  {'goal':<9} {'':6}  "
          "90 % of resamples   goal met in")
    missed = 0
    for k, ((name, today, target, good), value) in enumerate(zip(GOALS_27,
                                                                  figures["values"])):
        ok = value is not None and good(value)
        missed += not ok
        shown = figures["outside"] if name.startswith("projects") else \
            "-" if value is None else f"{value:.3f}"
        spread = interval([v[k] for v in again], good)
        digits = 0 if name.startswith("projects") else 3     # a count of projects
        spread_shown = "" if spread is None else \
            f"{spread[0]:6.{digits}f} – {spread[1]:<6.{digits}f}   {spread[2]:6.0%}"
        print(f"  {name:<46} {today:>7} {shown:>7}  {target:<9} {'ok' if ok else 'MISSED':6}  "
              f"{spread_shown}")
    print(f"  (resamples: {len(again)} draws of each project's sessions with replacement; "
          "a figure's interval says how far\n  another sample of the same projects could "
          "put it, and \"goal met in\" how often it would be met)")
    print(f"  dp / cheapest schedule in dollars, dollar saving: median "
          f"{_fmt(total.get('dp_dollar_share_median'))}, summed "
          f"{_fmt(total.get('dp_dollar_share_sum'))} (no goal: like with like, in dollars)")
    print(f"  dp compactions / hindsight's {_fmt(total.get('dp_compactions_vs_hindsight'))}; "
          "sessions where dp costs more than recorded "
          f"{_fmt(total.get('dp_worse_than_recorded_share'))}; pause advice that paid "
          f"{_fmt(s.get('pause_advice_paid'))} ({s.get('pause_advice', 0)} of "
          f"{s.get('pause_points', 0)} pauses)")
    ties, beaten, long = threshold_ties(results)
    if long:
        print(f"  dp ties the cheaper threshold to the cent on {ties} of {long} long sessions "
              f"(the same compactions, or only the agent's own: a tie is not a win); dp "
              f"cheaper on {beaten} of the {long - ties} others "
              f"({_fmt(beaten / (long - ties) if long > ties else None)})")
    if total.get("dp_known_beats_thresholds_share") is not None:
        known_ties = threshold_ties(results, "dp:known")[0]
        hindsight_beats = threshold_ties(results, "hindsight")[1]
        saved = {name: objective_saved(results, name) for name in ("dp", "dp:known")}
        print("  dp told how many requests really came (dp:known; no forecast can know it), "
              "long sessions: cheaper than both\n  thresholds "
              f"{_fmt(total['dp_known_beats_thresholds_share'])} ({known_ties} exact ties), "
              "objective above recorded "
              f"{_fmt(total.get('dp_known_objective_worse_share'))}, share of hindsight's "
              f"objective saving: median {_fmt(total.get('dp_known_hindsight_share_median'))},"
              f" summed {_fmt(total.get('dp_known_hindsight_share_sum'))}; compactions / "
              f"hindsight's {_fmt(total.get('dp_known_compactions_over_hindsight'))}\n"
              "  hindsight (the whole future known) is cheaper than both thresholds on "
              f"{hindsight_beats} of {long}: the goal is within reach of a schedule that "
              "knows enough\n"
              "  every session: objective saved against recorded "
              + ", ".join(f"{name} ${total_saved:,.2f} (above recorded on {worse})"
                          for name, (total_saved, worse) in saved.items()))
    print("  forecast bias per project (its sessions of ≥ 20 requests):")
    for name, n, bias in projects:
        print(f"    {bias:5.2f}  {n:3d} sessions  {name[-60:]}")
    alone, with_project = best_from_elapsed(results)
    print("  the best any forecast from the requests so far could do, in-sample (the mean of "
          "what remained at each j,\n  pooled bias 1.000): long sessions' bias "
          f"{alone[0]:.3f}, their log error / elapsed rule's {alone[1]:.3f}; knowing the "
          f"project too, {with_project[0]:.3f} and {with_project[1]:.3f}")
    goals.append(("backtest: issue 27 goals missed", float(missed), 0.0,
                  f"of {len(GOALS_27)}, leave one project out"))


def threshold_ties(results: list[dict], name: str = "dp") -> tuple[int, int, int]:
    """Of the long sessions, those where dp's (``name``'s) comparable cost equals the
    cheaper threshold's (to a millionth of a cent), those where it beats both (backtest's
    own ``dp_beats_thresholds``, ``dp_known_beats_thresholds``; for another policy, such
    as hindsight, its cost below both, backtest's rule), and how many there are: the few
    turn ends of a long agentic session often leave dp and a threshold the same moments,
    or leave all three to the agent's own compaction."""
    from compact_dp.replaying.backtest import GOAL_KEYS
    beat = GOAL_KEYS[name] + "beats_thresholds" if name in GOAL_KEYS else None
    ties = beaten = long = 0
    for r in results:
        runs = r.get("policies") or {}
        if r["requests"] < 100 or name not in runs:
            continue
        costs = [run["comparable_cost"] for n, run in runs.items() if n.startswith("threshold:")]
        if not costs:
            continue
        long += 1
        dp, best = runs[name]["comparable_cost"], min(costs)
        beaten += bool(r.get(beat)) if beat else dp < best
        ties += abs(dp - best) < 1e-8
    return ties, beaten, long


def objective_saved(results: list[dict], name: str, what: str = "objective"
                    ) -> tuple[float, int]:
    """Over every session replayed with ``name``: Σ (the recorded objective less its own;
    ``what``: another figure, such as ``comparable_cost``, the dollars), and the sessions
    where its figure is above the recorded one's."""
    runs = [r["policies"] for r in results if name in (r.get("policies") or {})]
    return (sum(p["recorded"][what] - p[name][what] for p in runs),
            sum(p[name][what] > p["recorded"][what] for p in runs))


def best_from_elapsed(results: list[dict]) -> tuple[tuple[float, float], tuple[float, float]]:
    """What no forecast from j (the requests so far) can beat on long sessions, without
    telling them apart from the rest: every turn end forecast the mean of what remained at
    the turn ends of the same j (bins of 0.05 in ln(j + 1)), over every session, itself
    included (in-sample, so better than any real forecast), and the same within each
    project. Returns (the long sessions' bias, their log error over the elapsed rule's)
    for the two. A session is long because it went on past what its j promised: even
    this forecast, unbiased pooled, is short on them."""
    rows = [(r["held_out"], r["requests"] >= 100, p["request"], p["remaining"])
            for r in results for p in r["points"]]

    def figures(key) -> tuple[float, float]:
        sums: dict = {}
        for row in rows:
            got = sums.setdefault(key(row), [0.0, 0])
            got[0] += row[3]
            got[1] += 1
        long = [(sums[key(row)][0] / sums[key(row)][1], row) for row in rows if row[1]]
        if not long:
            return float("nan"), float("nan")
        bias = sum(f for f, _ in long) / sum(row[3] for _, row in long)
        error = sum(abs(math.log(f / row[3])) for f, row in long)
        elapsed = sum(abs(math.log(max(row[2], 1) / row[3])) for _, row in long)
        return bias, error / elapsed if elapsed else float("nan")

    def bin_of(j: int) -> int:
        return int(math.log1p(j) / 0.05)

    return (figures(lambda row: bin_of(row[2])),
            figures(lambda row: (row[0], bin_of(row[2]))))


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def decision_sections(args, cdp: str, sizes: list[int], goals: list) -> dict:
    """Sections 1-5: the decision, sessions, the status line, replay, corpus-smoke;
    returns the times per size (for --awk-program)."""
    awk = find_awk()
    if awk is None:
        print("no awk found (apt-get install mawk): the read-pass baseline is missing")
        raise SystemExit(2)
    if awk != "mawk":
        print(f"note: mawk not found, the read-pass baseline uses {awk}")
    python_start = median_seconds([sys.executable, "-c", "pass"], args.runs)
    print(f"compact-dp: {cdp}\nbaselines: {awk} read pass; python -c pass = "
          f"{python_start * 1000:.1f} ms (median of {args.runs})\n")
    head = (f"{'lines':>8} {'MB':>6} {awk + ' pass':>10} {'awk form':>9} {'ratio':>6} "
            f"{'native':>8} {'ratio':>6}  vs python start-up (awk / native)")
    print(head)
    print("-" * len(head))
    results = {}
    for n in sizes:
        path = conversation(n)
        mb = path.stat().st_size / 1e6
        floor = median_seconds([awk, "{n+=length($0)} END{print n}", str(path)], args.runs)
        t_awk = median_seconds([cdp, *AGENT_ARGS, str(path)], args.runs)
        t_nat = median_seconds([cdp, *NATIVE_ARGS, str(path)], args.runs)
        results[n] = (floor, t_awk, t_nat)
        print(f"{n:>8,} {mb:>6.1f} {floor * 1000:>8.1f}ms {t_awk * 1000:>7.1f}ms "
              f"{t_awk / floor:>5.1f}× {t_nat * 1000:>6.1f}ms {t_nat / floor:>5.1f}×  "
              f"{t_awk / python_start:>4.1f}× / {t_nat / python_start:.1f}×")
    big = max(sizes)
    if big >= 100000:
        ratio = results[big][1] / results[big][0]
        goals.append((f"{big:,} lines: awk form / {awk} pass", ratio, 8.0, "aim 4×"))
        mem = peak_rss_mib([cdp, *AGENT_ARGS, str(conversation(big))])
        goals.append((f"peak memory on {big:,} lines (MiB)", mem, 64.0, ""))
    if 200 in results:
        goals.append(("200 lines: awk form / python -c pass", results[200][1] / python_start,
                      2.5, ""))
        goals.append(("200 lines: native decision / awk form", results[200][2] /
                      results[200][1], 2.0, "start-up, medians of the same run"))
    if 10000 in results and 100000 in results:
        goals.append(("linear: time at 100k / time at 10k", results[100000][1] /
                      results[10000][1], 12.0, "10 would be exactly linear"))
    if not args.skip_sessions:
        sessions_section(cdp, args.runs, python_start, goals)
        replay_section(cdp, args.sessions, goals)
        corpus_smoke(cdp, goals)
        simulation_errors(goals)
        setting_checks(cdp, goals)
        backtest_section(cdp, goals)
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--sizes", default="200,1000,10000,100000")
    ap.add_argument("--awk-program", help="also time mawk/gawk running this awk program")
    ap.add_argument("--awk-max-lines", type=int, default=10000,
                    help="largest size to run --awk-program on (it is quadratic)")
    ap.add_argument("--sessions", type=int, default=48, help="sessions for the replay test")
    ap.add_argument("--skip-sessions", action="store_true")
    ap.add_argument("--history-only", action="store_true",
                    help="only the whole-history replay and the fast-reading check")
    ap.add_argument("--backtest-only", action="store_true",
                    help="only the leave-one-project-out backtest")
    ap.add_argument("--history-runs", type=int, default=2,
                    help="runs of each history replay (the least CPU time counts)")
    ap.add_argument("--compare", nargs="+", metavar="RUN.json",
                    help="how a change moved issue 27's figures: an earlier run's "
                    f"{RUN.relative_to(HERE.parent)} (copied away) against the last, or two runs")
    args = ap.parse_args()
    if args.compare:
        if len(args.compare) > 2:
            ap.error("--compare takes one run, or two")
        runs = []
        for path in [*args.compare, str(RUN)][:2]:
            try:
                runs.append(run_sessions(json.loads(Path(path).read_text()), path))
            except FileNotFoundError:
                ap.error(f"--compare: no {path}" + (" (python benchmarks/bench.py "
                         "--backtest-only saves a run there)" if path == str(RUN) else ""))
            except OSError as e:
                ap.error(f"--compare: {path}: {e.strerror}")
            except ValueError as e:
                ap.error(f"--compare: {e}" if str(e).startswith(path) else
                         f"--compare: {path}: not JSON ({e})")
        return 0 if compare_runs(*runs) else 1
    sizes = [int(s) for s in args.sizes.split(",")]
    cdp = find_command()
    goals: list = []
    if args.backtest_only:
        results: dict = {}
        backtest_section(cdp, goals)
    else:
        results = {} if args.history_only else decision_sections(args, cdp, sizes, goals)
        history_section(cdp, args.history_runs, goals)
        home_section(cdp, args.history_runs, goals)
        fast_reading_check(goals)
    print("\ngoal" + " " * 44 + "value   limit")
    ok = True
    for name, value, limit, note, *at_least in goals:
        # a limit is a most, or with at_least a least; None: must exceed 1.2
        good = value > 1.2 if limit is None else value >= limit if at_least else \
            value <= limit
        ok &= good
        shown = "   >1.2" if limit is None else f"{'≥' if at_least else ' '}{limit:6.1f}"
        print(f"{name:<46} {value:>7.2f} {shown}  {'ok' if good else 'MISSED'}  {note}")
    if args.awk_program and results:
        print()
        for prog_awk in ("mawk", "gawk"):
            if not shutil.which(prog_awk):
                continue
            for n in sizes:
                if n > args.awk_max_lines:
                    continue
                path = conversation(n)
                t = median_seconds([prog_awk, *AGENT_ARGS[:-2], "-f", args.awk_program,
                                    str(path)], max(1, args.runs // 3))
                print(f"{prog_awk} -f {Path(args.awk_program).name} on {n:,} lines: "
                      f"{t * 1000:,.0f} ms = {t / results[n][1]:,.1f}× compact-dp")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
