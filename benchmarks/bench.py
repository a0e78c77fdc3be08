#!/usr/bin/env python3
"""Time compact-dp against baselines measured in the same run, and print ratios.

    python benchmarks/bench.py [--runs 7] [--sizes 200,1000,10000,100000]
                               [--awk-program compact_dp.awk] [--awk-max-lines 10000]

Baselines: one plain ``mawk '{n+=length($0)} END{print n}'`` pass over the same file (the
floor any tool pays to read it) and a bare ``python -c pass`` (the interpreter's start-up).
Each time is the median of --runs runs after one warm-up.  Machines are noisy: read the
ratios, not the milliseconds.  The goals (issue 5) are checked at the end.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
GENERATOR_VERSION = 3
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--sizes", default="200,1000,10000,100000")
    ap.add_argument("--awk-program", help="also time mawk/gawk running this awk program")
    ap.add_argument("--awk-max-lines", type=int, default=10000,
                    help="largest size to run --awk-program on (it is quadratic)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    cdp = find_command()
    awk = find_awk()
    if awk is None:
        print("no awk found (apt-get install mawk): the read-pass baseline is missing")
        return 2
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
    goals = []
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
    print("\ngoal" + " " * 44 + "value   limit")
    ok = True
    for name, value, limit, note in goals:
        good = value <= limit
        ok &= good
        print(f"{name:<46} {value:>7.2f} {limit:>7.1f}  {'ok' if good else 'MISSED'}  {note}")
    if args.awk_program:
        print()
        for prog_awk in ("mawk", "gawk"):
            if not shutil.which(prog_awk):
                continue
            for n in sizes:
                if n > args.awk_max_lines:
                    continue
                path = conversation(n)
                t = median_seconds([prog_awk, *AGENT_ARGS, "-f", args.awk_program, str(path)],
                                   max(1, args.runs // 3))
                print(f"{prog_awk} -f {Path(args.awk_program).name} on {n:,} lines: "
                      f"{t * 1000:,.0f} ms = {t / results[n][1]:,.1f}× compact-dp")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
