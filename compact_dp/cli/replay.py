"""``compact-dp replay FILE|DIR...``: what each compaction policy would have cost."""

from __future__ import annotations

from ..asking import model_named
from ..core.params import STATS, strict_number
from ..environment import Env
from ..errors import InputError, UsageError, os_reason
from ..views.words import count
from .options import CACHE, FORMAT, KEEP, MODEL, TOKENS, Option, param_options
from .typerkit import command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..replaying.batch import FileJob
    from ..replaying.records import Doc
    from .typerkit import Command

DEFAULT_POLICIES = ["recorded", "dp", "hindsight", "never", "threshold:80"]
DOC = """Replay recorded sessions and compare what each compaction policy would have cost.

FILE is a session in any format (- : standard input); a DIR is searched recursively
(sub-agents' subagents/ folders left out); with neither, your own history:
~/.claude/projects and ~/.codex/sessions ($CLAUDE_CONFIG_DIR, $CODEX_HOME).  Policies:
recorded (what happened: the recorded compactions), dp (this tool's decision and its
forced fallback), hindsight (the cheapest schedule, known afterwards), never (compact only
when the window would overflow), threshold:P (at P % of the window).  Billing follows the
provider's cache rules and the session's clock; the recorded policy's simulation error
against the recorded bill shows how far to trust the others.  One session gets a table
and a picture; several, a row each and a total (the pages below say more).
Each request counts once: a file named or found twice is read once, and a file whose
requests are all in another (the start of a resumed session, a copy) is left out.
"""
OPTIONS = [
    Option("--policy", "policy", "a policy to compare; repeat for several (default: "
           "recorded, dp, hindsight, never, threshold:80; recorded and hindsight for "
           "sessions with usage)", metavar="NAME", multiple=True),
    Option("--by", "by", "one row per session (the default), project, day or month",
           metavar="KEY"),
    Option("--since", "since", "only sessions begun on this day or later (YYYYMMDD or "
           "YYYY-MM-DD, local time)", metavar="DATE"),
    Option("--until", "until", "only sessions begun on this day or earlier", metavar="DATE"),
    Option("--project", "project", "only projects whose name has this part, or matches "
           "this glob (*, ? or [ab]); any case", metavar="PATTERN"),
    Option("--sort", "sort", "rows by date (the default, oldest first), project (A to Z), "
           "requests, cost or saving (the largest first)", metavar="KEY"),
    Option("--detail", "detail", "with several sessions, also each one's table and "
           "picture", takes_value=False),
    FORMAT, TOKENS, MODEL, KEEP,
    Option("--compact-at", "compact_at", "where a policy may compact: turn (a turn end, "
           "or the agent's own auto-compaction) or request (before any request); "
           "default: the agent's (turn for Claude Code and Codex)", metavar="WHERE"),
    Option("--keep-tokens", "keep_tokens", "threshold:P keeps the last N tokens when "
           "messages are kept (default 20000)", metavar="N"),
    Option("--plot", "plot", "also write the picture as SVG (one file per session)",
           metavar="FILE.svg"),
    Option("--json", "json", "print one JSON object", takes_value=False),
    Option("--jobs", "jobs", "replay sessions in up to N parallel processes, at most one "
           "per core and per file (default: the number of cores)", metavar="N"),
    *[o for o in CACHE if o.dest in ("price", "cache_ttl", "auto_compact_tokens")],
    *param_options(skip=STATS),
]


def whole_number(text: str | None, where: str, default: int, low: int) -> int:
    """A whole number ≥ low from an option, in the same words as every other bad value."""
    if text is None:
        return default
    x = strict_number(text, where)
    if x != int(x) or x < low:
        raise UsageError(f"{where}: {text!r} is not a whole number ≥ {low}")
    return int(x)


def build(env: Env) -> Command:
    def replay(files: list[str] | None, policy: list[str] | None, json: bool, detail: bool,
               **given: str | None) -> int:
        return replay_command(env, files or [], policy, json,
                              {k: v for k, v in given.items() if v is not None}, detail)
    return command("replay", replay, OPTIONS, "Session files or folders (default: your "
                   "own history).", DOC, pages=("replay.md", "history.md"))


def session_files(env: Env, paths: list[str]) -> list[str]:
    """The session files under the paths given; with none, under the agents' own folders
    (docs/history.md), each named on standard error with how many it holds."""
    from ..history import default_folders, find_sessions

    unreadable: list[tuple[str, str]] = []

    def say_unreadable() -> None:
        for folder, why in unreadable:
            env.warn(f"cannot read the folder {folder} ({why}): its sessions are left out")
    if paths:
        files = find_sessions(paths, unreadable)
        say_unreadable()
        if not files:
            raise UsageError(f"no session files under {', '.join(paths)}")
        return files
    folders = default_folders(env.environ)
    if not folders:
        raise UsageError("no FILE or DIR given, and no session folder found "
                         "($CLAUDE_CONFIG_DIR/projects or ~/.claude/projects, "
                         "$CODEX_HOME/sessions or ~/.codex/sessions)")
    seen: set[str] = set()                  # each file once, in whichever folder it is
    found = [(agent, folder, find_sessions([folder], unreadable, seen))
             for agent, folder in folders]
    say_unreadable()
    if not any(files for _, _, files in found):
        raise UsageError("no FILE or DIR given, and no session files in "
                         f"{', '.join(folder for _, folder in folders)}")
    for agent, folder, files in found:
        env.note(f"{agent}: {count(len(files), 'session file')} in {folder}")
    return [f for _, _, files in found for f in files]


def one_of(given: dict[str, str], name: str, choices: tuple[str, ...],
           default: str | None) -> str | None:
    """The option's value, one of ``choices`` (popped from ``given``)."""
    value = given.pop(name, None)
    if value is None:
        return default
    if value not in choices:
        raise UsageError(f"--{name.replace('_', '-')}: {value!r} is not one of "
                         f"{', '.join(choices)}")
    return value


def replay_command(env: Env, paths: list[str], policy: list[str] | None, json_out: bool,
                   given: dict[str, str], detail: bool = False) -> int:
    from ..agents import POINTS
    from ..core.params import BY_AWK, native_values
    from ..history import Selection, parse_day
    from ..replaying.batch import FileJob, cores, counted_once, run_batch
    from ..replaying.compare import BY, SORTS
    from ..replaying.run import policy_for as make_policy
    from ..sessions.recorder import TOKEN_MODES
    from .native import auto_compact_of

    by = one_of(given, "by", BY, None)
    sort = one_of(given, "sort", SORTS, "date") or "date"
    if sort == "project" and by in ("day", "month"):
        raise UsageError(f"--sort project: rows by {by} have no project (sort them by "
                         f"{', '.join(s for s in SORTS if s != 'project')}, or use --by "
                         "project)")
    since, until = (parse_day(given.pop(k), f"--{k}") if k in given else None
                    for k in ("since", "until"))
    project = given.pop("project", None)
    select = Selection(since, until, project) if since or until or project else None
    model = model_named(given.pop("model")) if "model" in given else None
    if model is not None and model.turn_keep:
        raise UsageError("replay's dp policy needs a cost model, not turn-keep")
    keep = one_of(given, "keep", ("auto", "best", "none"), "auto") or "auto"
    points = one_of(given, "compact_at", POINTS, None)
    keep_tokens = whole_number(given.pop("keep_tokens", None), "--keep-tokens", 20000, 0)
    jobs = whole_number(given.pop("jobs", None), "--jobs", cores(), 1)
    plot = given.pop("plot", None)
    if plot is not None:
        check_plot_path(plot)
    fmt, tokens = given.pop("format", "auto"), given.pop("tokens", "auto")
    if tokens not in TOKEN_MODES:
        raise UsageError(f"--tokens: {tokens!r} is not one of usage, bytes (or auto)")
    price, cache_ttl = given.pop("price", None), given.pop("cache_ttl", None)
    if cache_ttl is not None:                    # as the decision checks it, before reading
        from ..pricing.table import parse_ttl
        try:
            parse_ttl(cache_ttl)
        except ValueError as e:
            raise UsageError(f"--cache-ttl: {e}") from None
    auto = auto_compact_of(given.pop("auto_compact_tokens", None))
    params = {k: v for k, v in given.items() if k in BY_AWK}
    native_values(params, env.environ)          # bad values fail before any reading
    policies = policy or DEFAULT_POLICIES
    for p in policies:
        make_policy(p)
    files = session_files(env, paths)
    options = FileJob(policies, params, model, keep, keep_tokens, fmt, tokens, price,
                      cache_ttl, dict(env.environ), chosen=bool(policy),
                      detail=json_out or bool(plot) or detail or len(files) == 1,
                      select=select, points=points, auto=auto)
    stdin = standard_input(paths, env)
    results = _run(files, options, jobs, env, show_progress=len(files) > 1, stdin=stdin)
    results = [r for r in results if not r.get("left_out")]
    explicit = [r for r in results if "error" in r and
                (not r.get("skippable") or r["session"] in paths)]
    if explicit:
        raise UsageError(explicit[0]["error"])
    results = counted_once(results, lambda again, extras: run_batch(
        again, options, jobs, stdin=stdin, extras=extras))
    say_skipped(env, results, paths)
    for r in results:
        for warning in r.get("warnings", ()):
            env.warn(f"{r['session']}: {warning}")
    if plot:
        write_plots(plot, [r for r in results if "policies" in r])
    from ..replaying.view import render_text, to_json
    if json_out:
        return env.write(to_json(results, by or "session", sort) + "\n")
    return env.write(render_text(results, env, many=len(files) > 1 or by is not None,
                                 by=by, sort=sort, detail=detail))


def say_skipped(env: Env, results: list[Doc], given: list[str]) -> None:
    """Each skipped session named with why; ``.json`` files found in folders that are in
    no session format at all (a ``metadata.json`` beside the sessions), and empty files,
    counted in a line each — ``--json`` lists them.  A ``.jsonl`` file is meant to be a
    session: named."""
    from ..replaying.batch import skip_reason

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


def _run(files: list[str], options: FileJob, jobs: int, env: Env, show_progress: bool,
         stdin: bytes | None) -> list[Doc]:
    """Replay with a rich progress bar on a terminal's standard error."""
    from ..replaying.batch import run_batch
    if not (show_progress and env.stderr_isatty):
        return run_batch(files, options, jobs, stdin=stdin)
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(file=env.stderr), transient=True) as bar:
        task = bar.add_task("replaying", total=len(files))
        return run_batch(files, options, jobs,
                         lambda n: bar.update(task, completed=n), stdin)


def check_plot_path(path: str) -> None:
    """--plot writes SVG: refuse other extensions and '-' rather than write a wrong file."""
    if path == "-" or not path.lower().endswith(".svg"):
        raise UsageError(f"--plot: {path!r} must be a file name ending in .svg (the picture "
                         "is SVG)")


def write_plots(path: str, results: list[Doc]) -> None:
    """The SVG picture of the first session (with several, one file per session)."""
    import os

    from ..files import write_atomic
    from ..replaying.svg import plot_svg
    root, ext = os.path.splitext(path)
    for i, res in enumerate(results):
        target = path if i == 0 else f"{root}-{i + 1}{ext}"
        title = f"{os.path.basename(res['session'])}: input tokens per request"
        try:
            write_atomic(target, plot_svg(title, res["policies"]))
        except OSError as e:
            raise UsageError(f"cannot write {target}: {os_reason(e)}") from None
