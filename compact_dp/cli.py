"""The native command line: ``compact-dp [OPTIONS] FILE...`` and ``compact-dp replay …`` (SPEC §7).

Named options for every parameter, defaults from the env vars, strict validation.  Typer is
imported here only, never on the awk-compatible path.
"""

from __future__ import annotations

import inspect
import os
import sys
from typing import List, Optional

import typer

from . import errors
from .params import PARAMS, BadValue, native_values, strict_number
from .policy import DEFAULT_FORCE_PERCENT, TRIGGERS

MODEL_HELP = "Decision model: v3.0.7 (default), v2, v4.2 or turn-keep (env COMPACT_DP_MODEL)."


def keyword(name: str, annotation, default) -> inspect.Parameter:
    """One typer parameter, for commands whose signature is built from the PARAMS table."""
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                             default=default)


def param_options(skip: tuple[str, ...] = ()) -> list[inspect.Parameter]:
    """A --option per parameter of the table (values stay strings: we validate strictly)."""
    out = []
    for p in PARAMS:
        if p.awk in skip:
            continue
        env = f"env {p.env}, " if p.env else ""
        out.append(keyword(p.awk, Optional[str], typer.Option(
            None, f"--{p.option}", metavar="NUMBER", show_default=False,
            help=f"{p.meaning} ({env}default {p.default}; awk name {p.awk})")))
    return out


def model_option() -> inspect.Parameter:
    return keyword("model", Optional[str], typer.Option(None, "--model", metavar="NAME",
                                                        help=MODEL_HELP))


def typer_command(func, signature: list[inspect.Parameter], name: str = "compact-dp"):
    """A typer command from a function taking **kwargs and an explicit signature."""
    func.__signature__ = inspect.Signature(signature)
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False,
                      rich_markup_mode=None,
                      context_settings={"help_option_names": ["-h", "--help"]})
    app.command(name=name)(func)
    return typer.main.get_command(app)


def decide_command(files: List[str], model: Optional[str], json_out: bool, explain: bool,
                   trigger: Optional[str], context_tokens: Optional[str],
                   force_percent: Optional[str], **given: Optional[str]) -> int:
    """Decide for FILE... (or standard input) and print the lines to keep."""
    from .models import decide_conversation, get_model
    from .policy import apply_policy
    from .render import emit
    from .scan import scan_paths

    files = files or []                    # typer passes None when no FILE is given
    if json_out and explain:
        raise errors.UsageError("--json and --explain cannot be combined")
    model_obj = get_model(model or os.environ.get("COMPACT_DP_MODEL") or "v3.0.7")
    values = native_values({k: v for k, v in given.items() if v is not None})
    policy_args = _policy_args(trigger, context_tokens, force_percent)
    if not files and sys.stdin is not None and sys.stdin.isatty():
        raise errors.UsageError("no conversation file given (use - to read standard input)")
    conv = scan_paths(files, v2_users=model_obj.v2_users)
    decision = decide_conversation(values, conv, model_obj)
    output = "json" if json_out else "explain" if explain else "plain"
    if policy_args is None:
        return emit(decision, output)
    result = apply_policy(decision, conv, policy_args[0], policy_args[1],
                          values["max_context"].num, values["min_keep_ratio"].num,
                          policy_args[2])
    status = emit(decision, output, result)
    return status or result.exit_status


def _policy_args(trigger, context_tokens, force_percent):
    """(trigger, context tokens, force percent) when a policy is asked for, else None."""
    if trigger is None and context_tokens is None:
        if force_percent is not None:
            raise errors.UsageError("--force-percent needs --trigger or --context-tokens")
        return None
    trigger = trigger or "auto"
    if trigger not in TRIGGERS:
        raise errors.UsageError(f"--trigger: {trigger!r} is not one of {', '.join(TRIGGERS)}")
    tokens = strict_number(context_tokens, "--context-tokens") if context_tokens else 0.0
    percent = DEFAULT_FORCE_PERCENT
    if force_percent is not None:
        p = strict_number(force_percent, "--force-percent")
        if p != int(p) or p < 0:
            raise errors.UsageError(f"--force-percent: {force_percent!r} is not a whole "
                                    "number of percent")
        percent = int(p)
    return trigger, tokens, percent


def _decide(**kwargs) -> int:
    """Decide for FILE... (or standard input) and print the lines to keep (0 = don't).

    Any -v or -f argument selects the awk-compatible form instead (compact-dp -v t=5 ...
    -f compact_dp.awk FILE).  To compare policies over recorded sessions: compact-dp replay
    --help.
    """
    return decide_command(**kwargs)


DECIDE_SIGNATURE = [
    keyword("files", List[str], typer.Argument(
        None, metavar="FILE...", show_default=False,
        help="Conversation JSONL files, read as one stream; - or none reads standard input.")),
    model_option(),
    keyword("json_out", bool, typer.Option(False, "--json", help="Print one JSON object.")),
    keyword("explain", bool, typer.Option(
        False, "--explain", help="Show every term and the decision in words.")),
    keyword("trigger", Optional[str], typer.Option(
        None, "--trigger", metavar="auto|plan_clear|plan_confirm",
        help="Apply the forced-compaction policy (exit 0 = compact now, 1 = do not).")),
    keyword("context_tokens", Optional[str], typer.Option(
        None, "--context-tokens", metavar="N",
        help="Context size of the last request (policy).")),
    keyword("force_percent", Optional[str], typer.Option(
        None, "--force-percent", metavar="P",
        help="Force above P % of max context (default 90).")),
    *param_options(),
]


def run(argv: list[str]) -> int:
    """Run the native form; errors are one line on stderr and exit status 2."""
    if argv and argv[0] == "replay":
        from .replay_cli import run as run_replay
        return run_replay(argv[1:])
    return invoke(typer_command(_decide, DECIDE_SIGNATURE), argv)


def invoke(command, argv: list[str], prog: str = "compact-dp") -> int:
    """Call a typer command without its standalone error panel (we want one line)."""
    from .models import AwkFatal
    from .scan import InputError
    try:
        result = command.main(args=argv, prog_name=prog, standalone_mode=False)
    except typer.Exit as e:
        return e.exit_code
    except typer.Abort:
        return errors.fail("interrupted", 130)
    except typer.TyperException as e:
        return errors.fail(f"error: {e.format_message()}")
    except InputError as e:
        return errors.fail(f"error: cannot open {e}")
    except AwkFatal as e:
        return errors.fail(f"fatal: {e}")
    except (errors.UsageError, BadValue, ValueError) as e:
        return errors.fail(f"error: {e}")
    return result if isinstance(result, int) else 0
