#!/usr/bin/env python3
"""Compute the README's live sections: from the sessions beside the repository, and from
this repository's example sessions laid out as a user's home.

    python examples/live_numbers.py            print every section
    python examples/live_numbers.py --write    rewrite them in README.md (make readme)
    python examples/live_numbers.py --console  rerun the ``$ compact-dp`` examples of the
    python examples/live_numbers.py --console  rerun the ``$ compact-dp`` examples of the
                                               README and of docs/replay.md,
                                               docs/backtest.md and docs/calibrate.md, and
                                               write their output (make readme)

The real Claude Code sessions are another project's data: they are read in place from
``../shared/transcripts/claude-code`` and never copied; only numbers computed from them
reach the README, between ``<!-- live:NAME -->`` and ``<!-- /live:NAME -->`` markers.  The
tests compute the sections again and compare, so the README cannot drift from the code.
Without the folder only the examples' sections are written.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "transcripts" / "claude-code"
CONSOLE_DOCS = [ROOT / "README.md", ROOT / "docs" / "replay.md", ROOT / "docs" / "backtest.md",
                ROOT / "docs" / "calibrate.md"]                    # their examples run


def short(name: str) -> str:
    return name[:8] + "…" if len(name) > 20 else name


def dollars(x: float) -> str:
    """$1.80, or −$1.36 for a loss (the sign before the dollar)."""
    return f"{'−' if x < -0.005 else ''}${abs(x):,.2f}"


def tokens_section(files: list[Path]) -> str:
    """--tokens usage against --tokens bytes on every real session."""
    from compact_dp.sessions.read import read_session
    rows = ["| session | requests | live messages | context, usage | context, bytes | "
            "usage / bytes |", "|---|---:|---:|---:|---:|---:|"]
    for f in files:
        usage = read_session([str(f)], tokens="usage")
        nbytes = read_session([str(f)], tokens="bytes")
        a = sum(usage.tokens[usage.live_start:])
        b = sum(nbytes.tokens[nbytes.live_start:])
        rows.append(f"| `{short(f.name)}` | {usage.request_count:,} | "
                    f"{usage.live_messages:,} | {a:,} | {b:,} | "
                    f"{a / b:.2f} |")
    return "\n".join(rows)


def replay_section(files: list[Path]) -> str:
    """The recorded bill, its simulation, what dp, hindsight and the thresholds would have
    cost; then, in words, whether dp won on the long sessions (it is said when it loses)."""
    from compact_dp.core.models import get_model
    from compact_dp.replaying.bill import recorded_bill
    from compact_dp.replaying.compare import simulation_error
    from compact_dp.replaying.run import replay_session, setting_for
    from compact_dp.sessions.read import read_session
    policies = ["recorded", "dp", "hindsight", "threshold:60", "threshold:83"]
    rows = ["| session | requests | recorded bill (input) | replay of what happened | "
            "dp: compactions, input + summaries | dp saves | hindsight saves | "
            "threshold:60 saves | threshold:83 saves |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    long = []
    for f in files:
        session = read_session([str(f)])
        setting = setting_for(session, {}, get_model("cache-clock"), True, 20000, None,
                              None, {})
        runs = {r.policy: r.summary() for r in replay_session(setting, policies)}
        bill = recorded_bill(session, setting.files, setting.prices)
        rec = runs["recorded"]
        error = simulation_error(rec, bill)
        base = rec["comparable_cost"]
        saves = {p: base - runs[p]["comparable_cost"] for p in policies[1:]}
        rows.append(
            f"| `{short(f.name)}` | {bill['requests']:,} | ${bill['input_cost']:,.2f} | "
            f"${rec['input_cost'] - rec['unrecorded_cost']:,.2f} ({error:+.2%}) | "
            f"{runs['dp']['compactions']}, ${runs['dp']['comparable_cost']:,.2f} | "
            + " | ".join(dollars(saves[p]) for p in policies[1:]) + " |")
        if bill["requests"] >= 100:
            long.append((short(f.name), saves, runs["dp"]["compactions"],
                         runs["hindsight"]["compactions"]))
    return "\n".join(rows) + "\n\n" + long_words(long)


def verb(saving: float) -> str:
    """"saves $0.02", "loses $0.76", "saves nothing"."""
    if abs(saving) < 0.005:
        return "saves nothing"
    return f"{'saves' if saving > 0 else 'loses'} {dollars(abs(saving))}"


def long_words(long: list[tuple[str, dict[str, float], int, int]]) -> str:
    """What the table says about the long sessions, in a sentence each."""
    out = []
    for name, saves, n_dp, n_best in long:
        dp, best = saves["dp"], saves["hindsight"]
        thresholds = ("threshold:60", "threshold:83")
        beaten = [p for p in thresholds if saves[p] > dp + 0.005]
        tied = [p for p in thresholds if abs(saves[p] - dp) <= 0.005]
        line = (f"On `{name}` dp {verb(dp)} against what happened ({n_dp} "
                f"compaction{'s' if n_dp != 1 else ''}); the best schedule in hindsight "
                f"{verb(best)} ({n_best})")
        if beaten:
            line += f", and {' and '.join(beaten)} would have done better than dp."
        elif len(tied) == 2:
            line += ", and dp costs the same as both thresholds."
        elif tied:
            other = next(p for p in thresholds if p not in tied)
            line += f", and dp costs the same as {tied[0]} and less than {other}."
        else:
            line += ", and dp beats both thresholds."
        out.append(line)
    return " ".join(out)


def statusline_section(files: list[Path]) -> str:
    """The status line at several moments of the largest real session, each shown 30
    seconds after that moment's last request (as Claude Code would run it)."""
    import json
    import tempfile

    from compact_dp.integrations.statusline import status_line
    from compact_dp.sessions.read import read_session

    path = max(files, key=lambda f: f.stat().st_size)
    lines = path.read_bytes().split(b"\n")
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for share in (0.1, 0.3, 0.5, 0.75, 1.0):
            cut = Path(tmp) / f"cut{int(share * 100)}.jsonl"
            cut.write_bytes(b"\n".join(lines[:max(1, int(len(lines) * share))]) + b"\n")
            session = read_session([str(cut)])
            last = session.requests[-1]
            u = last.usage
            usage = {"input_tokens": u.input, "cache_creation_input_tokens": u.written,
                     "cache_read_input_tokens": u.read}
            if last.segment < len(session.compactions):
                usage = None                   # just compacted: Claude Code sends none
            status = {"transcript_path": str(cut), "context_window": {
                "context_window_size": 200000, "current_usage": usage}}
            line = status_line(json.loads(json.dumps(status)),
                               {"COMPACT_DP_CACHE": str(Path(tmp) / "cache")},
                               last.time + 30, False)
            out.append(f"{int(share * 100):>3} % of the file, request {len(session.requests):>3}:  "
                       f"{line}")
    return "```text\n" + "\n".join(out) + "\n```"


def history_section() -> str:
    """``compact-dp replay`` with no FILE on a home holding this repository's example
    Claude Code and Codex sessions where the agents keep theirs (shown as ``~``)."""
    import os
    import shutil
    import subprocess
    import tempfile

    examples = ROOT / "examples"
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        claude = home / ".claude" / "projects" / "-home-dev-project"
        codex = home / ".codex" / "sessions" / "2026" / "01" / "01"
        for folder in (claude, codex):
            folder.mkdir(parents=True)
        shutil.copy(examples / "claude-code.jsonl", claude / "0f0e0d0c-example.jsonl")
        shutil.copy(examples / "codex.jsonl",
                    codex / "rollout-2026-01-01T10-00-00-0199-example.jsonl")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("DP_", "COMPACT_DP_")) and
               k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
        env.update(HOME=str(home), TZ="UTC", COLUMNS="80", NO_COLOR="1")
        p = subprocess.run([str(Path(sys.executable).parent / "compact-dp"), "replay"],
                           capture_output=True, text=True, env=env, timeout=120)
        shown = (p.stderr + p.stdout).replace(str(home), "~")
    return "```text\n$ compact-dp replay\n" + shown.rstrip("\n") + "\n```"


PICTURE = ROOT / "docs" / "replay-example.svg"


def example_picture() -> str:
    """``compact-dp replay --plot`` of the example Claude Code session: the picture
    docs/replay.md shows, drawn from this repository's own data."""
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "replay.svg"
        subprocess.run([str(Path(sys.executable).parent / "compact-dp"), "replay", "--plot",
                        str(out), str(ROOT / "examples" / "claude-code.jsonl")],
                       capture_output=True, check=True, timeout=120)
        return out.read_text()


SECTIONS = {"tokens": tokens_section, "replay": replay_section,
            "statusline": statusline_section}
EXAMPLE_SECTIONS = {"history": history_section}


def example_sections() -> dict[str, str]:
    """The sections computed from this repository's own examples (always)."""
    return {name: make() for name, make in EXAMPLE_SECTIONS.items()}


def sections() -> dict[str, str] | None:
    """The sections computed from the real sessions (None without them)."""
    if not SHARED.is_dir():
        return None
    files = sorted(SHARED.glob("*.jsonl"))
    return {name: make(files) for name, make in SECTIONS.items()}


def rewrite(text: str, computed: dict[str, str]) -> str:
    for name, body in computed.items():
        pattern = re.compile(rf"(<!-- live:{name} -->\n)(?:.*?\n)?(<!-- /live:{name} -->)",
                             re.S)
        text = pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)  # noqa: B023 (used now)
    return text


CONSOLE = re.compile(r"```console\n(.*?)```", re.S)


def run_console(command: str, bin_dir: str) -> str:
    """A README command's output, as a terminal 80 columns wide shows it (stderr too)."""
    import os
    import subprocess
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}", "COLUMNS": "80",
           "NO_COLOR": "1"}
    env = {k: v for k, v in env.items() if not k.startswith(("DP_", "COMPACT_DP_"))}
    env["COMPACT_DP_PROFILE"] = "none"         # the built-in profile, not the reader's own
    p = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True,
                       env=env, timeout=120)
    return p.stdout + p.stderr


def console_blocks(text: str, bin_dir: str) -> str:
    """Every ```console block with each ``$ command``'s output as it is now."""
    def block(m: re.Match) -> str:
        out = []
        for line in m.group(1).splitlines():
            if line.startswith("$ compact-dp"):
                out.append(line)
                out += run_console(line[2:], bin_dir).splitlines()
        return "```console\n" + "\n".join(out) + "\n```"
    return CONSOLE.sub(block, text)


def main() -> int:
    readme = ROOT / "README.md"
    if "--console" in sys.argv:
        for doc in CONSOLE_DOCS:
            doc.write_text(console_blocks(doc.read_text(), str(Path(sys.executable).parent)))
        return 0
    computed = {**example_sections(), **(sections() or {})}
    if not SHARED.is_dir():
        print(f"{SHARED} is absent: only the examples' sections are computed",
              file=sys.stderr)
    if "--write" in sys.argv:
        readme.write_text(rewrite(readme.read_text(), computed))
        PICTURE.write_text(example_picture())
        return 0
    for name, body in computed.items():
        print(f"<!-- live:{name} -->\n{body}\n<!-- /live:{name} -->\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
