"""``compact-dp backtest [FILE|DIR...]``: was the advice true?"""

from __future__ import annotations

from ..environment import Env
from ..errors import UsageError
from ..history import session_files
from ..replaying.batch import say_skipped
from ..views.words import count
from .options import Option
from .replay import whole_number
from .typerkit import command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..calibration.project import History, Past
    from ..replaying.records import Doc
    from .typerkit import Command

    # a session, --every, the environment, its project's sessions (None: the profile alone)
    Work = tuple[str, int | None, dict[str, str], History | None]

DOC = """Measure compact-dp's advice against what really happened next.

For every recorded Claude Code or Codex session with usage, at every turn end (where a
user could type /compact; --every N adds every N-th request), put what the decision said
then — the forecast of requests to come, the dollars it predicted compacting would save,
compact or not — beside what happened: the requests that came, and what compacting there
once really saved, billed by replay's engine over the rest of the session.  Then the
forecast's bias and log error (beside the rule "as many remain as were made"), the
dollars' calibration, the share of compact advice that paid, and replay's dp against the
best schedule in hindsight and the thresholds.

Walk-forward: each forecast learns from the earlier sessions of the session's own project
(its working folder) among the ones given, as they stood at that moment — what the status
line would have known.  --profile-only forecasts from the profile alone.
"""
OPTIONS = [
    Option("--every", "every", "also every N-th request (default: turn ends only)",
           metavar="N"),
    Option("--json", "json", "print one JSON object", takes_value=False),
    Option("--jobs", "jobs", "sessions in N parallel processes (default: the cores)",
           metavar="N"),
    Option("--profile-only", "profile_only", "forecast from the profile alone, not from "
           "each project's earlier sessions", takes_value=False),
]


def build(env: Env) -> Command:
    def backtest(files: list[str] | None, every: str | None, json: bool,
                 jobs: str | None, profile_only: bool) -> int:
        return backtest_command(env, files or [], every, json, jobs, profile_only)
    return command("backtest", backtest, OPTIONS, "Session files or folders.", DOC,
                   pages=("backtest.md",))


def _one(args: Work) -> Doc:
    from ..replaying.backtest import backtest_session
    from ..replaying.batch import guarded
    path, every, environ, history = args
    result = guarded(path, environ, lambda: backtest_session(path, environ, every,
                                                             history=history))
    if "error" not in result:
        result["points_detail"] = result.pop("points")
    return result


def _past(path: str) -> Past | None:
    """What a session showed, for its project's forecast (None: nothing to learn)."""
    from ..calibration.project import read_past
    try:
        return read_past(path)[0]
    except Exception:               # a session backtest cannot read says so itself, later
        return None


def histories(files: list[str], jobs: int) -> dict[str, History]:
    """Each file's project's sessions among ``files`` (a file with nothing to learn from
    has none: backtest skips it or says why)."""
    import os

    from ..calibration.project import History, project_key
    absolute = [os.path.abspath(f) for f in files]
    pasts = _map(_past, absolute, jobs)
    projects: dict[tuple[str, str], list[Past]] = {}
    for past in pasts:
        if past is not None:
            projects.setdefault(project_key(past.format, past.cwd, past.path), []).append(past)
    out: dict[str, History] = {}
    for group in projects.values():
        history = History(group)
        for past in group:
            out[past.path] = history
    return {f: out[a] for f, a in zip(files, absolute) if a in out}


def _map(work: Callable[[str], Past | None], items: list[str], jobs: int
         ) -> list[Past | None]:
    jobs = max(1, min(jobs, len(items)))
    if jobs == 1:
        return [work(i) for i in items]
    from ..replaying.batch import pool_map
    return list(pool_map(work, items, jobs))


def backtest_command(env: Env, paths: list[str], every_text: str | None, json_out: bool,
                     jobs_text: str | None, profile_only: bool = False) -> int:
    from ..replaying.backtest import totals
    from ..replaying.batch import cores, skip_reason, starts_left_out

    every = whole_number(every_text, "--every", 0, 1) or None
    jobs = whole_number(jobs_text, "--jobs", cores(), 1)
    if "-" in paths:
        raise UsageError("backtest reads a session twice, so from its file: - (standard "
                         "input) cannot be backtested")
    files = session_files(env, paths)
    found = {} if profile_only else histories(files, min(jobs, cores()))
    work = [(f, every, dict(env.environ), found.get(f)) for f in files]
    results = _run(work, jobs, env)
    named = [r for r in results if "error" in r and
             (not r["skippable"] or r["session"] in paths)]
    if named:                   # a file asked for by name, as replay does
        raise UsageError(named[0]["error"])
    results = starts_left_out(results)
    failed = [r for r in results if "error" in r]
    good = [r for r in results if "error" not in r]
    if not good:
        raise UsageError("no session to backtest (Claude Code or Codex, with usage) among "
                         f"{count(len(results), 'file')}")
    skipped = [{"session": r["session"], "error": skip_reason(r)} for r in failed]
    say_skipped(env, results, paths)
    for r in good:
        r["points"] = r.pop("points_detail")
    total = totals(good)
    if json_out:
        from ..views.record import to_json
        return env.write(to_json({"sessions": good, "total": total,
                                  "skipped": skipped}) + "\n")
    from ..replaying.backtest_view import render
    return env.write(render(good, total, env))


def _run(work: list[Work], jobs: int, env: Env) -> list[Doc]:
    """Each session in a worker, with a progress bar on a terminal's standard error."""
    from ..replaying.batch import cores
    jobs = max(1, min(jobs, len(work), cores()))
    progress = None
    if env.stderr_isatty and len(work) > 1:
        from rich.console import Console
        from rich.progress import Progress
        progress = Progress(console=Console(file=env.stderr), transient=True)
    results: list[Doc] = []

    def step(result: Doc) -> None:
        results.append(result)
        if progress is not None:
            progress.update(task, completed=len(results))
    if progress is not None:
        progress.start()
        task = progress.add_task("backtesting", total=len(work))
    try:
        if jobs > 1:
            from ..replaying.batch import pool_map
            for result in pool_map(_one, work, jobs):
                step(result)
        else:
            for item in work:
                step(_one(item))
    finally:
        if progress is not None:
            progress.stop()
    return results
