"""``compact-dp replay FILE...``: compare compaction policies over recorded sessions."""

from __future__ import annotations

import os

from ..core.params import STATS, native_values, strict_number
from ..engine import model_named
from ..environment import Env
from ..errors import UsageError
from .typerkit import command
from .options import MODEL, Option, param_options

DEFAULT_POLICIES = ["dp", "never", "threshold:80"]
DOC = """Replay recorded sessions and compare what each compaction policy would have cost.

Policies: dp (this tool's decision and the forced fallback), never (compact only when the
window would overflow), threshold:P (at P % of the window keep the last --keep-tokens
tokens, cut on a user line).  Billing: docs/replay.md.
"""
OPTIONS = [
    Option("--policy", "policy", "a policy to compare; repeat for several (default: dp, "
           "never, threshold:80)", metavar="dp|never|threshold:P", multiple=True),
    Option("--keep-tokens", "keep_tokens", "threshold:P keeps the last N tokens (default "
           "20000)", metavar="N"),
    Option("--plot", "plot", "also write the picture as SVG (FILE.svg)", metavar="FILE.svg"),
    Option("--json", "json", "print one JSON object", takes_value=False),
    Option("--jobs", "jobs", "replay sessions in N parallel processes (default 1)",
           metavar="N"),
    MODEL,
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


def build(env: Env):
    def replay(files: list[str] | None, policy: list[str] | None, keep_tokens: str | None,
               plot: str | None, json: bool, jobs: str | None, model: str | None,
               **given: str | None) -> int:
        return replay_command(env, files or [], policy, keep_tokens, plot, json, jobs, model,
                              {k: v for k, v in given.items() if v is not None})
    return command("replay", replay, OPTIONS, "Recorded conversation files.", DOC)


def replay_command(env: Env, files: list[str], policy: list[str] | None,
                   keep_tokens: str | None, plot: str | None, json_out: bool,
                   jobs_text: str | None, model_name: str | None, given: dict[str, str]
                   ) -> int:
    from ..replay.simulate import make_policy
    from ..replay.view import render_text, to_json

    if not files:
        raise UsageError("replay needs at least one conversation FILE")
    model = model_named(model_name, env.environ)
    if model.turn_keep:
        raise UsageError("replay's dp policy needs a cost model (v3.0.7, v2, v4.2)")
    values = native_values(given, env.environ)
    keep = whole_number(keep_tokens, "--keep-tokens", 20000, 0)
    jobs = whole_number(jobs_text, "--jobs", 1, 1)
    if plot is not None:
        check_plot_path(plot)
    policies = policy or DEFAULT_POLICIES
    for p in policies:
        make_policy(p, values, model, keep)       # reject bad specs up front
    for f in files:
        if os.path.isdir(f):
            raise UsageError(f"cannot open {f}: is a directory")
    args = [(f, policies, values, model, keep) for f in files]
    if jobs > 1 and len(files) > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(min(jobs, len(files))) as pool:
            results = list(pool.map(_replay_one, args))
    else:
        results = [_replay_one(a) for a in args]
    if plot:
        write_plots(plot, results)
    if json_out:
        return env.write(to_json(results) + "\n")
    return env.write(render_text(results, env))


def _replay_one(args):
    from ..replay.simulate import replay_session
    return replay_session(*args)


def check_plot_path(path: str) -> None:
    """--plot writes SVG: refuse other extensions and '-' rather than write a wrong file."""
    if path == "-" or not path.lower().endswith(".svg"):
        raise UsageError(f"--plot: {path!r} must be a file name ending in .svg (the picture "
                         "is SVG)")


def write_plots(path: str, results: list[dict]) -> None:
    """The SVG picture of the first session (with several, one file per session)."""
    from ..files import write_atomic
    from ..replay.svg import plot_svg
    root, ext = os.path.splitext(path)
    for i, res in enumerate(results):
        target = path if i == 0 else f"{root}-{i + 1}{ext}"
        title = f"{os.path.basename(res['session'])}: input tokens per request"
        try:
            write_atomic(target, plot_svg(title, res["runs"]))
        except OSError as e:
            raise UsageError(f"cannot write {target}: {e.strerror or e}") from None
