"""``compact-dp backtest [FILE|DIR...]``: was the advice true?"""

from __future__ import annotations

from ..environment import Env
from ..errors import UsageError
from ..views.words import count
from .options import Option
from .replay import say_skipped, session_files, whole_number
from .typerkit import command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..replay.records import Doc
    from .typerkit import Command

    Work = tuple[str, int | None, dict[str, str]]    # a session, --every, the environment

DOC = """Measure compact-dp's advice against what really happened next.

For every recorded Claude Code or Codex session with usage, at every turn end (where a
user could type /compact; --every N adds every N-th request), put what the decision said
then — the forecast of requests to come, the dollars it predicted compacting would save,
compact or not — beside what happened: the requests that came, and what compacting there
once really saved, billed by replay's engine over the rest of the session.  Then the
forecast's bias and log error (beside the rule "as many remain as were made"), the
dollars' calibration, the share of compact advice that paid, and replay's dp against the
best schedule in hindsight and the thresholds.
"""
OPTIONS = [
    Option("--every", "every", "also every N-th request (default: turn ends only)",
           metavar="N"),
    Option("--json", "json", "print one JSON object", takes_value=False),
    Option("--jobs", "jobs", "sessions in N parallel processes (default: the cores)",
           metavar="N"),
]


def build(env: Env) -> Command:
    def backtest(files: list[str] | None, every: str | None, json: bool,
                 jobs: str | None) -> int:
        return backtest_command(env, files or [], every, json, jobs)
    return command("backtest", backtest, OPTIONS, "Session files or folders.", DOC,
                   pages=("backtest.md",))


def _one(args: Work) -> Doc:
    from ..replay.backtest import backtest_session
    from ..replay.batch import guarded
    path, every, environ = args
    result = guarded(path, environ, lambda: backtest_session(path, environ, every))
    if "error" not in result:
        result["points_detail"] = result.pop("points")
    return result


def backtest_command(env: Env, paths: list[str], every_text: str | None, json_out: bool,
                     jobs_text: str | None) -> int:
    from ..replay.backtest import totals
    from ..replay.batch import cores, skip_reason, starts_left_out

    every = whole_number(every_text, "--every", 0, 1) or None
    jobs = whole_number(jobs_text, "--jobs", cores(), 1)
    if "-" in paths:
        raise UsageError("backtest reads a session twice, so from its file: - (standard "
                         "input) cannot be backtested")
    files = session_files(env, paths)
    work = [(f, every, dict(env.environ)) for f in files]
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
    from ..replay.backtest_view import render
    return env.write(render(good, total, env))


def _run(work: list[Work], jobs: int, env: Env) -> list[Doc]:
    """Each session in a worker, with a progress bar on a terminal's standard error."""
    from ..replay.batch import cores
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
            from concurrent.futures import ProcessPoolExecutor
            with ProcessPoolExecutor(jobs) as pool:
                for result in pool.map(_one, work, chunksize=max(1, len(work) // (jobs * 8))):
                    step(result)
        else:
            for item in work:
                step(_one(item))
    finally:
        if progress is not None:
            progress.stop()
    return results
