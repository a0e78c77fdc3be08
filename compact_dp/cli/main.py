"""The ``compact-dp`` entry point: pick the form or the command, and the one error boundary.

* Any ``-v``/``-f`` argument (before ``--``) selects the awk-compatible form.
* Otherwise the first operand may name a command (``replay``, ``help``, ``hooks``, …);
  options written before it belong to it (``compact-dp --model v4.2 replay F``).
* Otherwise it is the native decision.

Every ``CompactDpError`` becomes one line on standard error and its exit status, here and
nowhere else; anything else is a bug, reported as an internal error in one line too
(``COMPACT_DP_DEBUG=1`` re-raises it, and the tests run that way).
"""

from __future__ import annotations

import sys

from ..environment import Env
from ..errors import EXIT_ERROR, EXIT_INTERRUPTED, CompactDpError, InputError, UsageError
from .options import COMMANDS


def is_awk_form(argv: list[str]) -> bool:
    """-v or -f anywhere before ``--`` selects the awk form."""
    for a in argv:
        if a == "--":
            return False
        if a.startswith("-v") or a.startswith("-f"):
            return True
    return False


def first_operand_at(argv: list[str]) -> int | None:
    """Where the first operand is (not an option or its value; none after ``--``)."""
    from .options import DECIDE_OPTIONS, value_options

    takes_value = value_options(DECIDE_OPTIONS)
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return None
        if a.startswith("-") and a != "-":
            i += 2 if a in takes_value else 1
            continue
        return i
    return None


def split_command(argv: list[str]) -> tuple[str | None, list[str]]:
    """(command, its arguments) when the first operand names a command, else (None, argv).
    Options before the command name move after it."""
    i = first_operand_at(argv)
    if i is None or argv[i] not in COMMANDS:
        return None, argv
    return argv[i], argv[i + 1:] + argv[:i]


def dispatch(argv: list[str], env: Env) -> int:
    if is_awk_form(argv):
        from .awk import run
        env.sigpipe = True                    # awk dies of a closed pipe: so does its form
        return run(argv, env)
    command, rest = split_command(argv)
    if command is None:
        from .native import run
        try:
            return run(argv, env)
        except InputError as e:
            raise with_command_hint(e, argv) from None
    if command == "help":
        return show_help(rest, env)
    if command == "hooks":
        from .hookspath import run as run_hooks
        return run_hooks(rest, env)
    if command == "statusline":                # light: Claude Code runs it every message
        from ..integrations.statusline import run as run_statusline
        return run_statusline(rest, env)
    if command == "hook":
        from ..integrations.hooks import run as run_hook
        return run_hook(rest, env)
    from .app import run as run_app
    return run_app(command, rest, env)


def with_command_hint(e: InputError, argv: list[str]) -> InputError:
    """``compact-dp replya``: the first operand opened as a file and is none; when it is
    close to a command's name, the error says which (only then: an existing file is never
    second-guessed)."""
    import os

    from .options import did_you_mean
    i = first_operand_at(argv)
    operand = argv[i] if i is not None else ""
    if not operand or not str(e).startswith(f"{operand}: ") or os.path.lexists(operand):
        return e
    hint = did_you_mean(operand, COMMANDS)
    return InputError(f"{e}{hint}") if hint else e


def show_help(rest: list[str], env: Env) -> int:
    """``compact-dp help [COMMAND]``: the page ``--help`` would show."""
    topic = next((a for a in rest if not a.startswith("-")), None)
    if topic is None:
        from .native import decide_help
        return env.write(decide_help(env.width))
    if topic == "help":
        return env.write("Usage: compact-dp help [COMMAND]\n\nShows COMMAND's help page, or "
                         "the decision's when no COMMAND is given.\n")
    if topic not in COMMANDS:
        raise UsageError(f"no help for {topic!r} (commands: {', '.join(COMMANDS)})")
    return dispatch([topic, "--help"], env)


def main(argv: list[str] | None = None, env: Env | None = None) -> int:
    """Run the command; returns the exit status (0, 1 or 2; 130 when interrupted)."""
    env = Env.from_process() if env is None else env
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return dispatch(argv, env)
    except CompactDpError as e:
        return env.fail(e.line(), e.status)
    except KeyboardInterrupt:
        return env.fail("interrupted", EXIT_INTERRUPTED)
    except Exception as e:            # the last line of defence: one line, never a traceback
        if env.environ.get("COMPACT_DP_DEBUG"):
            raise
        return env.fail(f"internal error: {type(e).__name__}: {e} (set COMPACT_DP_DEBUG=1 "
                        "for the traceback, and please report it)", EXIT_ERROR)


def entry() -> None:
    """Console-script wrapper: exit with main()'s status."""
    sys.exit(main())
