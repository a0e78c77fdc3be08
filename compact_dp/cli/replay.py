"""``compact-dp replay FILE|DIR...``: what each compaction policy would have cost."""

from __future__ import annotations

from typing import Any

from ..core.params import STATS
from ..environment import Env
from ..errors import UsageError, os_reason
from .options import CACHE, FORMAT, KEEP, MODEL, TOKENS, Option, param_options
from .typerkit import command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..replaying.records import Doc
    from .typerkit import Command

DOC = """Replay recorded sessions and compare what each compaction policy would have cost.

FILE is a session in any format (- : standard input); a DIR is searched recursively
(sub-agents' subagents/ folders left out); with neither, your own history:
~/.claude/projects and ~/.codex/sessions ($CLAUDE_CONFIG_DIR, $CODEX_HOME).  Policies:
recorded (what happened: the recorded compactions), dp (this tool's decision and its
forced fallback), dp:known (the same told how many requests really came: what the
forecast costs), hindsight (the cheapest schedule, known afterwards), never (compact only
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
    """A whole number ≥ low from an option (``default`` without it)."""
    from ..core.params import whole_number as whole
    return default if text is None else whole(text, where, low)


def build(env: Env) -> Command:
    def replay(files: list[str] | None, policy: list[str] | None, json: bool, detail: bool,
               **given: str | None) -> int:
        return replay_command(env, files or [], policy, json,
                              {k: v for k, v in given.items() if v is not None}, detail)
    return command("replay", replay, OPTIONS, "Session files or folders (default: your "
                   "own history).", DOC, pages=("replay.md", "history.md"))


def replay_command(env: Env, paths: list[str], policy: list[str] | None, json_out: bool,
                   given: dict[str, str], detail: bool = False) -> int:
    """The options read as the Python API's keywords, then ``compact_dp.replay``: the one
    replay of many sessions, which the command only shows (or plots)."""
    from ..api import replay
    from ..core.params import BY_AWK
    from .native import auto_compact_of

    plot = given.pop("plot", None)
    if plot is not None:
        check_plot_path(plot)
    n, off = auto_compact_of(given.pop("auto_compact_tokens", None))
    keywords: dict[str, Any] = {     # checked by the API, in its words (--by: …)
        name: given.pop(name) for name in ("by", "sort", "since", "until", "project",
                                           "format", "tokens", "model", "keep",
                                           "compact_at", "price", "cache_ttl")
        if name in given}
    answer = replay(
        paths, policies=policy, **keywords,
        keep_tokens=whole_number(given.pop("keep_tokens", None), "--keep-tokens", 20000, 0),
        jobs=whole_number(given.pop("jobs", None), "--jobs", 0, 1) or None,
        auto_compact_tokens="off" if off else n,
        params={k: v for k, v in given.items() if k in BY_AWK},
        detail=json_out or bool(plot) or detail, env=env)
    if plot:
        write_plots(plot, [s for s in answer.sessions if "policies" in s])
    if json_out:
        from ..views.record import dumps
        return env.write(dumps(answer.as_dict()) + "\n")
    return env.write(answer.render(env, detail))


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
