"""``compact-dp replay FILE...``: compare compaction policies over recorded sessions."""

from __future__ import annotations

import os
from typing import List, Optional

import typer

from . import errors
from .cli import invoke, keyword, model_option, param_options, typer_command
from .params import native_values, strict_number

DEFAULT_POLICIES = ["dp", "never", "threshold:80"]
STATS = ("t", "total_requests", "total_compact", "total_input")   # replay computes these


def replay_command(files: List[str], policy: Optional[List[str]], keep_tokens: str,
                   plot: Optional[str], json_out: bool, jobs: int, model: Optional[str],
                   **given: Optional[str]) -> int:
    """Replay recorded sessions and compare what each compaction policy would have cost.

    Policies: dp (this tool's decision and the forced fallback), never (compact only when
    the window would overflow), threshold:P (at P % of the window keep the last
    --keep-tokens tokens, cut on a user line).  Billing is a plain prompt-cache model:
    see the README.
    """
    from .models import get_model
    from .replay import make_policy
    from .replay_view import render_text, to_json
    from .render import write_stdout

    if not files:
        raise errors.UsageError("replay needs at least one conversation FILE")
    model_name = model or os.environ.get("COMPACT_DP_MODEL") or "v3.0.7"
    if get_model(model_name).name == "turn-keep":
        raise errors.UsageError("replay's dp policy needs a cost model (v3.0.7, v2, v4.2)")
    values = native_values({k: v for k, v in given.items() if v is not None})
    keep = strict_number(keep_tokens, "--keep-tokens")
    if keep < 0 or keep != int(keep):
        raise errors.UsageError(f"--keep-tokens: {keep_tokens!r} is not a whole number ≥ 0")
    if jobs < 1:
        raise errors.UsageError("--jobs must be at least 1")
    policies = policy or DEFAULT_POLICIES
    for p in policies:
        make_policy(p, values, model_name, int(keep))       # reject bad specs up front
    for f in files:
        if os.path.isdir(f):
            raise errors.UsageError(f"cannot open {f}: is a directory")
    args = [(f, policies, values, model_name, int(keep)) for f in files]
    if jobs > 1 and len(files) > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(min(jobs, len(files))) as pool:
            results = list(pool.map(_replay_one, args))
    else:
        results = [_replay_one(a) for a in args]
    if plot:
        _write_plot(plot, results)
    if json_out:
        return write_stdout(to_json(results) + "\n")
    return write_stdout(render_text(results))


def _replay_one(args):
    from .replay import replay_session
    return replay_session(*args)


def _write_plot(path: str, results: list[dict]) -> None:
    """The SVG picture of the first session (with several, one file per session)."""
    from .svgplot import plot_svg
    root, ext = os.path.splitext(path)
    for i, res in enumerate(results):
        target = path if i == 0 else f"{root}-{i + 1}{ext or '.svg'}"
        title = f"{os.path.basename(res['session'])}: input tokens per request"
        try:
            with open(target, "w") as f:
                f.write(plot_svg(title, res["runs"]))
        except OSError as e:
            raise errors.UsageError(f"cannot write {target}: {e.strerror or e}") from None


def _replay(**kwargs) -> int:
    return replay_command(**kwargs)


_replay.__doc__ = replay_command.__doc__
REPLAY_SIGNATURE = [
    keyword("files", List[str], typer.Argument(
        None, metavar="FILE...", show_default=False, help="Recorded conversation files.")),
    keyword("policy", Optional[List[str]], typer.Option(
        None, "--policy", metavar="dp|never|threshold:P",
        help="A policy to compare; repeat for several (default: dp, never, threshold:80).")),
    keyword("keep_tokens", str, typer.Option(
        "20000", "--keep-tokens", metavar="N", help="threshold:P keeps the last N tokens.")),
    keyword("plot", Optional[str], typer.Option(
        None, "--plot", metavar="FILE.svg", help="Also write the picture as SVG.")),
    keyword("json_out", bool, typer.Option(False, "--json", help="Print one JSON object.")),
    keyword("jobs", int, typer.Option(1, "--jobs", metavar="N",
                                      help="Replay sessions in N parallel processes.")),
    model_option(),
    *param_options(skip=STATS),
]


def run(argv: list[str]) -> int:
    return invoke(typer_command(_replay, REPLAY_SIGNATURE, "replay"), argv,
                  prog="compact-dp replay")
