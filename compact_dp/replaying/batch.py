"""Replaying many sessions: find them, replay each (in parallel processes with --jobs),
and add them up.

A worker returns plain data — each policy's summary and the recorded bill, with every
request's prompt only where a picture will show it — so a process pool pays off and
memory stays flat in the number of sessions.  A folder is searched recursively;
files under a ``subagents/`` folder are sub-agents' sidechains, not sessions, and files that
are not sessions, cannot be read or meet a bug are skipped, each named with its reason, so
one stray file does not stop a thousand.
"""

from __future__ import annotations

import os

from ..core.models import Model
from ..errors import (
    CompactDpError,
    EmptySession,
    FormatError,
    InputError,
    NotASession,
    UsageError,
    os_reason,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from typing import TypeVar

    from ..environment import Env
    from ..history import Selection
    from ..sessions.session import Session
    from .records import Doc

    # what a file's replay leaves to the other files of its run (history.each_request_once):
    # the keys of the requests they count, and the files left out into it whose side
    # files it bills
    Extra = tuple[frozenset[int], list[str]]
    T = TypeVar("T")
    R = TypeVar("R")


# the policies a replay compares unless told (recorded and hindsight only where a
# session has usage: replay_file)
DEFAULT_POLICIES = ("recorded", "dp", "hindsight", "never", "threshold:80")


class FileJob:
    """Everything a worker needs to replay one file (picklable)."""

    def __init__(self, policies: list[str], params: dict[str, object], model: Model | None,
                 keep: str, keep_tokens: int, format: str, tokens: str, price: str | None,
                 cache_ttl: str | None, environ: dict[str, str], chosen: bool = False,
                 detail: bool = True, select: Selection | None = None,
                 points: str | None = None, auto: tuple[float | None, bool] = (None, False)):
        self.policies, self.params, self.model = policies, params, model
        self.chosen = chosen                  # policies named by the user: all of them run
        self.detail = detail                  # every request's prompt, for the pictures
        self.select = select                  # the sessions asked for (None: all)
        self.keep, self.keep_tokens = keep, keep_tokens
        self.format, self.tokens, self.price, self.cache_ttl = format, tokens, price, cache_ttl
        self.environ = environ
        self.points = points                  # where a policy may compact (None: the agent's)
        self.auto = auto                      # --auto-compact-tokens: (N or None, off)


def _preload() -> None:
    """What ``replay_file`` imports, imported once before the pool starts: forked workers
    share it instead of each importing it again (~70 ms of CPU apiece)."""
    from ..history import project_of  # noqa: F401
    from ..question import session_question  # noqa: F401
    from ..sessions import bash_agent, codex, fast, openai_chat  # noqa: F401
    from . import bill, compare, run  # noqa: F401


def replay_file(path: str, options: FileJob, detail: bool = True,
                stdin: bytes | None = None, extra: Extra | None = None) -> Doc:
    """One session: its facts, the recorded bill (with usage), and every policy's run
    summary (``detail``: with every request's prompt and every compaction), compared with
    the recorded one; or ``left_out`` when it is not one of ``options.select``.
    ``stdin``: the bytes of standard input, for the path ``-``; ``extra``: what other
    files of the run count (``counted_once``).  With ``keys`` and ``side_keys``, the
    keys of its requests, for ``counted_once``."""
    import io

    from ..agents import agent_of
    from ..asking import model_named
    from ..history import day_of, project_of
    from ..sessions.read import read_session
    from .bill import compactions_here, recorded_bill
    from .compare import BEST, annotate
    from .run import replay_session, session_penalty, setting_for

    elsewhere, adopted = extra if extra is not None else (frozenset(), [])
    session = read_session([path], options.format, options.tokens,
                           None if stdin is None else io.BytesIO(stdin), fast=True)
    refuse_empty(session, path)
    project, date = project_of(session, path, options.environ), day_of(session.started)
    if options.select is not None and not options.select.admits(project, date):
        return {"session": path, "left_out": True}
    agent = agent_of(session.format)
    model = model_named(options.model, options.environ, agent.model)
    if model.turn_keep:
        raise UsageError("replay's dp policy needs a cost model, not turn-keep")
    keep = agent.keep if options.keep == "auto" else options.keep
    setting = setting_for(session, options.params, model, keep == "none",
                          options.keep_tokens, options.cache_ttl, options.price,
                          options.environ, points=options.points, auto=options.auto,
                          adopted=adopted)
    # by default, recorded only where a bill checks it, and hindsight only where it can
    # be compared and is exact (no message kept: what a compaction leaves is the same
    # whatever came before)
    policies = [p for p in options.policies if options.chosen or
                session.has_usage and (p != BEST or keep == "none") or
                p not in ("recorded", BEST)]
    runs = replay_session(setting, policies)
    gone = {j for j, r in enumerate(session.requests)
            if r.key is not None and r.key in elsewhere}
    for run in runs:
        run.leave_out(gone)
    warnings = list(session.warnings)
    if "recorded" in policies and not session.has_usage:
        warnings.append("no recorded usage: the recorded policy is the session's own "
                        "compactions priced by the model, with no bill to check it against")
    if gone:
        warnings.append(f"{len(gone):,} of its requests are counted in another file of "
                        "this run (a session resumed more than once): replayed, not billed "
                        "here")
    assert setting.files is not None
    result: Doc = {"session": path, "format": session.format, "project": project,
                    "session_id": session.session_id, "started": session.started,
                    "date": date, "messages": len(session.kinds),
                    "requests": len(session.requests) - len(gone),
                    "compactions": compactions_here(session, elsewhere), "model": model.name,
                    "keep": keep, "points": setting.points,
                    "setting": setting.world.record(), "assumed": list(setting.world.assumed),
                    "penalty": session_penalty(setting),
                    "policies": [r.summary(detail) for r in runs], "warnings": warnings,
                    "keys": [r.key for r in session.requests],
                    "side_keys": setting.files.side_keys()}
    if model.cache_aware:           # its forecast and what a compaction leaves: the profile's
        from ..calibration.profile import load_profile
        result["profile"] = load_profile(options.environ).record()
    if session.has_usage:
        result["recorded"] = recorded_bill(session, setting.files, setting.prices, elsewhere)
    annotate(result["policies"], result.get("recorded"))
    return result


def refuse_empty(session: Session, path: str) -> None:
    """A file of no line at all (read as bash-agent's, which reads any bytes) has no
    session to replay: it must not become a row of zeros counted among the sessions."""
    if session.format == "bash-agent" and not session.kinds:
        raise EmptySession(f"{path}: an empty file, no session in it")


def counted_once(results: list[Doc], rerun: Callable[[list[str], list[Extra]], list[Doc]]
                 ) -> list[Doc]:
    """The results of a run with each request counted once (history.each_request_once):
    a file whose requests are all in another is left out, named with why (skipped); a
    file some of whose requests another file counts is replayed again (``rerun``), billed
    for the rest — as is one that bills the side files of a file left out into it.  Every
    result loses its ``keys``."""
    from ..history import each_request_once

    counted = [i for i, r in enumerate(results) if "keys" in r]
    keys = [results[i].pop("keys") for i in counted]
    side = [results[i].pop("side_keys", []) for i in counted]
    once = each_request_once(keys, side)
    again = sorted(set(once.elsewhere) | set(once.adopts))
    if again:
        extras = [(frozenset(once.elsewhere.get(n, ())),
                   [results[counted[m]]["session"] for m in once.adopts.get(n, [])])
                  for n in again]
        for n, doc in zip(again, rerun([results[counted[n]]["session"] for n in again],
                                       extras)):
            doc.pop("keys", None)
            doc.pop("side_keys", None)
            results[counted[n]] = doc
    out = list(results)
    for n, k in once.inside.items():
        out[counted[n]] = inside(results[counted[n]], len(keys[n]),
                                 results[counted[k]]["session"])
    return out


def starts_left_out(results: list[Doc]) -> list[Doc]:
    """The results of a run less the files whose requests are all in another file of it
    (history.each_request_once), each a skipped result saying so (backtest: the points of
    a session are its own, so a request in two files that go on their own ways is a point
    of each).  Every result loses its ``keys``."""
    from ..history import each_request_once

    counted = [i for i, r in enumerate(results) if "keys" in r]
    keys = [results[i].pop("keys") for i in counted]
    out = list(results)
    for n, k in each_request_once(keys).inside.items():
        out[counted[n]] = inside(results[counted[n]], len(keys[n]),
                                 results[counted[k]]["session"])
    return out


def inside(result: Doc, requests: int, other: str) -> Doc:
    """A file left out because every one of its requests is in ``other``: a skipped
    result, saying so."""
    from ..history import inside_words
    path = result["session"]
    return {"session": path, "skippable": True, "inside": other,
            "error": f"{path}: {inside_words(requests, other)}"}


def _worker(args: tuple[str, FileJob, bytes | None, Extra | None]) -> Doc:
    path, options, stdin, extra = args
    return guarded(path, options.environ,
                   lambda: replay_file(path, options, options.detail, stdin, extra))


def guarded(path: str, environ: Mapping[str, str], work: Callable[[], Doc]) -> Doc:
    """``work()`` for one session file, or what went wrong as plain data: its error line,
    whether a folder's walk may skip it, whether it is no session at all.  (Replay's and
    backtest's workers both: one broken file must not stop a thousand.)"""
    try:
        return work()
    except CompactDpError as e:
        return {"session": path, "error": e.line().removeprefix("error: "),
                "skippable": isinstance(e, (FormatError, InputError)),
                "not_session": isinstance(e, NotASession),
                "empty": isinstance(e, EmptySession)}
    except Exception as e:
        if environ.get("COMPACT_DP_DEBUG"):
            raise
        return {"session": path, "error": f"internal error: {type(e).__name__}: {e}",
                "skippable": True}


def skip_reason(result: Doc) -> str:
    """Why a file was skipped, without its path (said next to it)."""
    error: str = result["error"]
    return error.replace(f"{result['session']}: ", "", 1)


def cores() -> int:
    """The cores this process may run on (its affinity, where the system says)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _worker_signals() -> None:
    """A worker ends at SIGTERM the system's way: forked, it would otherwise inherit
    pool_map's handler and hand SystemExit back to the main process as a result."""
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _chunk(work: Callable[[T], R], items: list[T]) -> list[R]:
    return [work(item) for item in items]


def pool_map(work: Callable[[T], R], items: list[T], jobs: int) -> Iterator[R]:
    """``map(work, items)`` in ``jobs`` processes, in order.  However it ends — done, an
    error, Ctrl-C, or SIGTERM sent to this process alone (the workers are not told: they
    would wait on the pool's pipes for ever, orphaned) — no worker outlives it: a pool
    left early is stopped and its workers killed.  SIGTERM becomes SystemExit(143) while
    the pool runs, so that the stop happens."""
    import signal
    import threading
    from concurrent.futures import ProcessPoolExecutor

    def terminated(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)
    # only where nobody else handles SIGTERM: a program that calls the Python API keeps
    # its own handler (and the pool may then outlive a SIGTERM, as any pool would)
    trap = threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    if trap:
        signal.signal(signal.SIGTERM, terminated)
    pool = ProcessPoolExecutor(jobs, initializer=_worker_signals)
    size = max(1, len(items) // (jobs * 8))
    # chunks submitted as pool.map would, but never cancelled: on 3.11 the pool's own
    # thread, finding its workers killed, fails on a cancelled future with a traceback
    # on stderr; left pending, each is just marked broken
    chunks = [pool.submit(_chunk, work, items[i:i + size])
              for i in range(0, len(items), size)]
    done = False
    try:
        for chunk in chunks:
            yield from chunk.result()
        done = True
    finally:
        if done:
            pool.shutdown()
        else:
            workers = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False)
            for worker in workers:
                worker.kill()
            for worker in workers:
                worker.join(5)
        if trap and signal.getsignal(signal.SIGTERM) is terminated:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def run_batch(paths: list[str], options: FileJob, jobs: int,
              progress: Callable[[int], None] | None = None,
              stdin: bytes | None = None, extras: list[Extra] | None = None) -> list[Doc]:
    """Replay every file, in order, in up to ``jobs`` processes — never more than there
    are cores (more would only take turns on them, each paying its start) or files;
    ``progress(n)`` after each.  ``stdin``: what standard input held, for the path ``-``
    (sent to its worker only); ``extras``: per path, what other files count."""
    work = [(p, options, stdin if p == "-" else None, extras[i] if extras else None)
            for i, p in enumerate(paths)]
    results: list[Doc] = []
    workers = min(jobs, cores(), len(paths))
    if workers > 1:
        _preload()
        for result in pool_map(_worker, work, workers):
            results.append(result)
            if progress:
                progress(len(results))
    else:
        for item in work:
            results.append(_worker(item))
            if progress:
                progress(len(results))
    return results


def totals(results: Iterable[Doc]) -> Doc:
    """Per policy over all sessions: sums, the peak, request-weighted means, the savings
    and hindsight's share (compare.row); the recorded bills added up."""
    from .compare import row, simulation_error

    good = [res for res in results if "policies" in res]
    per: dict[str, Doc] = {}
    recorded: dict[str, float] = {}
    for res in good:
        for key, value in (res.get("recorded") or {}).items():
            if isinstance(value, (int, float)):
                recorded[key] = recorded.get(key, 0) + value
        for s in res["policies"]:
            t = per.setdefault(s["policy"], {"policy": s["policy"], "sessions": 0,
                                             "requests": 0, "compactions": 0, "forced": 0,
                                             "input_cost": 0.0, "output_cost": 0.0,
                                             "summary_cost": 0.0,
                                             "summary_output_cost": 0.0,
                                             "comparable_cost": 0.0,
                                             "penalty": 0.0, "objective": 0.0,
                                             "unrecorded_cost": 0.0,
                                             "cache_read_tokens": 0.0,
                                             "cache_write_tokens": 0.0, "peak_context": 0.0,
                                             "_inputs": 0.0})
            t["sessions"] += 1
            for key in ("requests", "compactions", "forced", "input_cost", "output_cost",
                        "summary_cost", "summary_output_cost", "comparable_cost",
                        "penalty", "objective", "unrecorded_cost", "cache_read_tokens",
                        "cache_write_tokens"):
                t[key] += s[key]
            t["peak_context"] = max(t["peak_context"], s["peak_context"])
            t["_inputs"] += s["mean_context"] * s["requests"]
    summed = row(good)
    compared = {p["policy"]: p for p in summed.pop("policies")}
    out = []
    for t in per.values():
        inputs = t.pop("_inputs")
        t["mean_context"] = inputs / t["requests"] if t["requests"] else 0.0
        total = t["cache_read_tokens"] + t["cache_write_tokens"]
        t["cache_hit_share"] = t["cache_read_tokens"] / total if total else 0.0
        t["total_cost"] = t["input_cost"] + t["output_cost"]
        if t["policy"] == "recorded" and recorded:
            t["simulation_error"] = simulation_error(t, recorded)
        t.update({k: v for k, v in compared.get(t["policy"], {}).items() if k != "policy"})
        out.append(t)
    return {**summed, "policies": out, "recorded": recorded or None}


def say_skipped(env: Env, results: list[Doc], given: list[str]) -> None:
    """Each skipped session named with why; ``.json`` files found in folders that are in
    no session format at all (a ``metadata.json`` beside the sessions), and empty files,
    counted in a line each — ``--json`` lists them.  A ``.jsonl`` file is meant to be a
    session: named."""
    from ..views.words import count

    def quiet(r: Doc) -> bool:
        return bool(r.get("not_session")) and r["session"] not in given and \
            r["session"].endswith(".json")

    def empty(r: Doc) -> bool:
        return bool(r.get("empty")) and r["session"] not in given
    for r in results:
        if "error" in r and not quiet(r) and not empty(r):
            env.warn(f"skipped {r['session']}: {skip_reason(r)}")
    left_out = sum(1 for r in results if quiet(r))
    if left_out:
        env.note(f"left out {count(left_out, '.json file')} in the folders that are not "
                 "sessions")
    nothing = sum(1 for r in results if empty(r))
    if nothing:
        env.note(f"left out {count(nothing, 'empty file')} in the folders (no session in "
                 f"{'it' if nothing == 1 else 'them'})")


def standard_input(paths: list[str], env: Env) -> bytes | None:
    """The bytes of standard input when ``-`` is one of the paths (read once, whole: a
    worker process cannot read this one's stdin)."""
    if "-" not in paths:
        return None
    if paths.count("-") > 1:
        raise UsageError("- (standard input) can be replayed once")
    if env.stdin is None:
        raise InputError("-: standard input is closed")
    try:
        return env.stdin.read()
    except OSError as e:
        raise InputError(f"standard input: {os_reason(e)}") from None


def run_shown(files: list[str], options: FileJob, jobs: int, env: Env, show_progress: bool,
              stdin: bytes | None, progress: Callable[[int], None] | None = None
              ) -> list[Doc]:
    """Replay with a rich progress bar on a terminal's standard error (else
    ``progress(n)`` after each file, when given)."""
    if not (show_progress and env.stderr_isatty):
        return run_batch(files, options, jobs, progress, stdin)
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(file=env.stderr), transient=True) as bar:
        task = bar.add_task("replaying", total=len(files))
        return run_batch(files, options, jobs,
                         lambda n: bar.update(task, completed=n), stdin)
