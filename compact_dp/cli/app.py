"""The commands for people — ``replay`` and friends — as typer commands.

They are not on an agent's hot path, so they may pay typer's start-up for its help pages
and parsing.  Their options come from the same ``Option`` table as the decision's; every
error still leaves through the one boundary in ``main`` as one line.
"""

from __future__ import annotations

import contextlib
import io

import typer
from typer._click.exceptions import NoSuchOption

from ..environment import Env
from ..errors import EXIT_INTERRUPTED, CompactDpError, UsageError


def run(name: str, argv: list[str], env: Env) -> int:
    """Run command ``name``; click's own errors become our UsageError."""
    if name == "replay":
        from .replay import build
    elif name == "prices":
        from .prices import build
    elif name == "calibrate":
        from .calibrate import build
    elif name == "backtest":
        from .backtest import build
    elif name == "install":
        from .install import build_install as build
    elif name == "uninstall":
        from .install import build_uninstall as build
    else:
        raise UsageError(f"unknown command {name!r}")
    cmd = build(env)
    # click writes its help to sys.stdout: catch it, and write it the way every answer is
    # written (Env.write: a closed pipe or a full disk is one line)
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            result = cmd.main(args=argv, prog_name=f"compact-dp {name}",
                              standalone_mode=False)
        status = result if isinstance(result, int) else 0
    except typer.Exit as e:
        status = e.exit_code
    except typer.Abort:
        return env.fail("interrupted", EXIT_INTERRUPTED)
    except NoSuchOption as e:              # click guesses among look-alikes: we do not
        from .options import did_you_mean
        flags = [f for p in cmd.params for f in p.opts if f.startswith("--")] + ["--help"]
        raise UsageError(f"no such option: {e.option_name}" +
                         did_you_mean(e.option_name, flags)) from None
    except typer.TyperException as e:
        raise UsageError(e.format_message()) from None
    except CompactDpError:
        raise
    if status == EXIT_INTERRUPTED:         # typer turns Ctrl-C into a silent Exit(130)
        return env.fail("interrupted", EXIT_INTERRUPTED)
    if printed.getvalue():
        return env.write(printed.getvalue()) or status
    return status
