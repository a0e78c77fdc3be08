"""Exit statuses and the one-line error messages every entry point shares (SPEC §7)."""

from __future__ import annotations

import os
import sys

EXIT_OK = 0            # answered
EXIT_SKIP = 1          # a policy was asked for and says: do not compact
EXIT_ERROR = 2         # usage error, bad value, unreadable input, awk fatal error, closed output

PROG = "compact-dp"


class UsageError(Exception):
    """Bad command-line syntax or a bad value; the message is shown as one line."""


def fail(message: str, status: int = EXIT_ERROR) -> int:
    """Print one line on standard error and return the exit status to use."""
    try:
        sys.stderr.write(f"{PROG}: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return status


def warn(message: str) -> None:
    fail(f"warning: {message}", 0)


def write_stdout(text: str) -> int:
    """Write the answer; a closed pipe is one line on stderr and exit 2, never a traceback."""
    try:
        try:
            sys.stdout.write(text)
        except UnicodeEncodeError:     # a non-UTF-8 stdout: keep the text readable
            enc = sys.stdout.encoding or "ascii"
            sys.stdout.write(text.encode(enc, "replace").decode(enc))
        sys.stdout.flush()
    except BrokenPipeError:
        # Point stdout at /dev/null so the interpreter's final flush cannot fail again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return fail("standard output was closed before the answer was written (broken pipe)")
    except OSError as e:
        return fail(f"cannot write standard output: {e.strerror or e}")
    return EXIT_OK
