"""``compact-dp calibrate [DIR...]``: fit the profile on your own sessions."""

from __future__ import annotations

from ..environment import Env
from ..errors import UsageError, os_reason
from ..views.words import count
from .options import Option
from .typerkit import command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..calibration.profile import Profile
    from .typerkit import Command

DOC = """Fit the profile — what your compactions leave behind, and the forecast of how many
requests a session still makes — on your own sessions, and save it where every command
finds it.

DIR defaults to your agents' own folders (~/.claude/projects, ~/.codex/sessions, or
$CLAUDE_CONFIG_DIR and $CODEX_HOME).  A few sessions move the built-in figures a little,
many move them a lot (the page below says how).  The profile is written atomically to
~/.config/compact-dp/profile.json (or $XDG_CONFIG_HOME), the old one kept as
profile.json.bak; the decision, the status line, the hooks, replay and backtest use it, and
--explain names it.
"""
OPTIONS = [
    Option("--output", "output", "write the profile here instead", metavar="FILE"),
    Option("--fresh", "fresh", "fit on these sessions alone, not pulled towards the built-in "
           "profile (how the built-in one is made)", takes_value=False),
    Option("--source", "source", "what the profile says it was fitted on", metavar="TEXT"),
    Option("--dry-run", "dry_run", "fit and show, write nothing", takes_value=False),
    Option("--json", "json", "print the profile as JSON", takes_value=False),
]


def build(env: Env) -> Command:
    def calibrate(files: list[str] | None, output: str | None, fresh: bool,
                  source: str | None, dry_run: bool, json: bool) -> int:
        return calibrate_command(env, files or [], output, fresh, source, dry_run, json)
    return command("calibrate", calibrate, OPTIONS, "Session files or folders.", DOC,
                   "DIR", pages=("calibrate.md",))


def calibrate_command(env: Env, paths: list[str], output: str | None, fresh: bool,
                      source: str | None, dry_run: bool, json_out: bool) -> int:
    import os

    from ..calibration.fit import fit
    from ..calibration.profile import load_profile, user_profile_path
    from ..errors import CompactDpError
    from ..files import make_folder_for, regular_or_absent, write_atomic
    from ..history import each_request_once, inside_words, session_files
    from ..sessions.read import read_session
    from ..views.record import to_json

    target = output or user_profile_path(env.environ)
    if target is None and not dry_run:
        raise UsageError("no folder for the profile: neither HOME nor XDG_CONFIG_HOME is "
                         "set (--output FILE writes it elsewhere)")
    # the default's folders: the config folder (~/.config) and compact-dp's in it
    may_make = () if output or target is None else \
        (os.path.dirname(os.path.dirname(target)), os.path.dirname(target))
    if target is not None and not dry_run:      # a wrong --output fails before the fit
        make_folder_for(target, may_make, "--output", dry_run=True)
    sessions, skipped = [], 0
    for path in session_files(env, paths):
        try:
            session = read_session([path])
        except CompactDpError as e:       # said as replay says it, with the reason
            env.warn(f"skipped {path}: {str(e).replace(f'{path}: ', '', 1)}")
            skipped += 1
            continue
        if session.format in ("claude-code", "codex") and session.has_usage:
            sessions.append(session)
    if not sessions:
        raise UsageError(f"no Claude Code or Codex session with usage under "
                         f"{', '.join(paths) or 'your own history'}")
    once = each_request_once([[r.key for r in s.requests] for s in sessions])
    for i, k in sorted(once.inside.items()):
        env.warn(f"skipped {sessions[i].path}: "
                 f"{inside_words(len(sessions[i].requests), sessions[k].path or '-')}")
    env.note(f"calibrate: {count(len(sessions), 'session')} read" +
             (f", {count(skipped, 'file')} skipped" if skipped else "") +
             (f", {len(once.inside):,} left out" if once.inside else ""))
    sessions = [s for i, s in enumerate(sessions) if i not in once.inside]
    prior = None if fresh else load_profile({"COMPACT_DP_PROFILE": "none"})
    try:
        profile = fit(sessions, prior, source or f"{count(len(sessions), 'session')} of your own")
    except ValueError as e:                  # nothing to fit on, and no prior to keep
        raise UsageError(f"calibrate: {e}") from None
    text = to_json(profile.as_dict()) if json_out else _words(profile)
    if target is not None and not dry_run:
        make_folder_for(target, may_make, "--output")
        if not regular_or_absent(target):
            raise UsageError(f"--output {target} is not a regular file; not touching it")
        kept = os.path.exists(target)
        try:
            import json as stdjson
            import shutil
            if kept:
                shutil.copy2(target, target + ".bak")      # the profile it replaces
            write_atomic(target, stdjson.dumps(profile.as_dict(), indent=1) + "\n")
        except OSError as e:
            raise UsageError(f"cannot write {target}: {os_reason(e)}") from None
        env.note(f"calibrate: profile written to {target}" +
                 (f" (the one it replaces kept as {target}.bak)" if kept else ""))
    return env.write(text + "\n")


def _words(profile: Profile) -> str:
    lines = [f"profile: {profile.source}",
             f"forecast: R = level × (j + 1)^{profile.exponent:.3f}, j = requests so far"]
    for name, a in sorted(profile.agents.items()):
        if name == "*":
            continue
        after = (f"leaves V + {a.after_extra:,.0f} tokens, {a.after_cached:,.0f} cached, "
                 f"summary {a.summary_tokens:,.0f}") if a.after_extra is not None and \
            a.after_cached is not None and a.summary_tokens is not None else \
            "no compaction measured"
        lines.append(f"{name}: level {a.level:.1f} ({count(a.sessions, 'session')}); "
                     f"a compaction {after} ({count(a.compactions, 'compaction')})")
    return "\n".join(lines)
