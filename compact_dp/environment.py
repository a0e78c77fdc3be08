"""The process environment, passed down from ``main`` instead of read deep inside.

httpie's lesson: one object holds the streams, the environment variables and what is known
about the terminal, so every front end writes through it and a test builds one with
``Env(stdout=io.StringIO(), environ={...})`` instead of patching ``sys``.

Only the standard library's cheapest modules are imported: the awk form and the status
line start through here.
"""

from __future__ import annotations

import os
import sys

from .errors import EXIT_ERROR, EXIT_OK, os_reason

TYPE_CHECKING = False       # typing costs ~10 ms of start-up; mypy reads this as True
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import IO

PROG = "compact-dp"
MIN_WIDTH = 40            # narrower than this (COLUMNS=0, a terminal reporting 0) is a lie
DEFAULT_WIDTH = 80        # when nothing says how wide the output is


def home_of(environ: Mapping[str, str]) -> str:
    """``~``: the environment's $HOME when it is an absolute path, else none ("").  The
    environment given is the whole truth, never mixed with the process's own or the
    account's: a caller (a test, the Python API) that gives no HOME has no home, and an
    empty or relative one would put folders at the root or under the working folder."""
    home = environ.get("HOME") or ""
    return home if os.path.isabs(home) else ""


def process_environ() -> Mapping[str, str]:
    """The process's own environment variables: what the command reads (``Env.from_process``)
    and what the Python API reads unless given ``environ=`` — the one place either looks."""
    return os.environ


class Env:
    """Streams, variables and terminal facts for one run of the command."""

    def __init__(self, stdin: IO[bytes] | None = None, stdout: IO[str] | None = None,
                 stderr: IO[str] | None = None, environ: Mapping[str, str] | None = None,
                 stdin_isatty: bool = False, stdout_isatty: bool = False,
                 terminal_columns: int | None = None, stderr_isatty: bool = False,
                 program: str = ""):
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.environ: Mapping[str, str] = {} if environ is None else environ
        self.stdin_isatty = stdin_isatty
        self.stdout_isatty = stdout_isatty
        self.stderr_isatty = stderr_isatty
        self.terminal_columns = terminal_columns
        self.program = program                  # argv[0]: how this run was started
        # a closed pipe on stdout: no error (exit 0), or, as awk is, death by SIGPIPE (the
        # awk form, whose exit status must be awk's; only in a real process)
        self.sigpipe = False

    @classmethod
    def from_process(cls) -> Env:
        """The real process: sys streams, os.environ, and the terminal if there is one."""
        stdin = getattr(sys.stdin, "buffer", None) if sys.stdin is not None else None
        columns = None
        out_tty = bool(sys.stdout is not None and _isatty(sys.stdout))
        if out_tty:
            try:
                columns = os.get_terminal_size(sys.stdout.fileno()).columns
            except (OSError, ValueError):
                columns = None
        return cls(stdin=stdin, stdout=sys.stdout, stderr=sys.stderr, environ=process_environ(),
                   stdin_isatty=bool(sys.stdin is not None and _isatty(sys.stdin)),
                   stdout_isatty=out_tty, terminal_columns=columns,
                   stderr_isatty=bool(sys.stderr is not None and _isatty(sys.stderr)),
                   program=sys.argv[0] if sys.argv else "")

    # --- what the output may look like ----------------------------------------------------

    @property
    def width(self) -> int:
        """COLUMNS, else the terminal's width, else 80; widths under 40 are ignored."""
        try:
            columns = int(self.environ.get("COLUMNS", ""))
        except ValueError:
            columns = 0
        for candidate in (columns, self.terminal_columns or 0):
            if candidate >= MIN_WIDTH:
                return candidate
        return DEFAULT_WIDTH

    @property
    def styled(self) -> bool:
        """Colours only on a terminal, and never with NO_COLOR set (https://no-color.org)."""
        return self.stdout_isatty and not self.environ.get("NO_COLOR")

    # --- writing ---------------------------------------------------------------------------

    def fail(self, message: str, status: int = EXIT_ERROR) -> int:
        """One line on standard error; returns the exit status to use."""
        try:
            if self.stderr is not None:
                self.stderr.write(f"{PROG}: {message}\n")
                self.stderr.flush()
        except (OSError, ValueError):
            pass
        return status

    def note(self, message: str) -> None:
        """One line on standard error that is no failure (what was read, a warning)."""
        self.fail(message, EXIT_OK)

    def warn(self, message: str) -> None:
        self.note(f"warning: {message}")

    def write(self, text: str) -> int:
        """Write the answer.  A reader that closed the pipe early (``| head``) has all it
        wanted: that is no error, so nothing is said and the exit status is the answer's;
        a full disk is one line on stderr and exit 2 — never a traceback."""
        out = self.stdout
        if out is None:
            return self.fail("standard output is closed")
        try:
            try:
                out.write(text)
            except UnicodeEncodeError:
                # awk's bytes (an ORS of \377 arrives surrogate-escaped) go out as bytes;
                # a symbol a non-UTF-8 stdout lacks (--explain's ①) becomes '?'
                enc = getattr(out, "encoding", None) or "ascii"
                buffer = getattr(out, "buffer", None)
                try:
                    raw = text.encode(enc, "surrogateescape")
                except UnicodeEncodeError:
                    raw = text.encode(enc, "replace")
                if buffer is not None:
                    out.flush()
                    buffer.write(raw)
                else:
                    out.write(raw.decode(enc, "replace"))
            out.flush()
        except OSError as e:
            _discard_to_devnull(out)
            if isinstance(e, BrokenPipeError):
                if self.sigpipe and _is_real(out):
                    import signal
                    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
                    os.kill(os.getpid(), signal.SIGPIPE)
                return EXIT_OK
            return self.fail(f"cannot write standard output: {os_reason(e)}")
        return EXIT_OK


def _discard_to_devnull(out: IO[str]) -> None:
    """Point a stream that failed (a closed pipe, a full disk) at /dev/null: what is left
    in its buffer then goes nowhere, so the interpreter's final flush at exit cannot fail
    a second time ("Exception ignored …", exit 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _is_real(stream: IO[str]) -> bool:
    """A stream on a file descriptor (not a test's StringIO)."""
    try:
        stream.fileno()
        return True
    except (AttributeError, ValueError, OSError):
        return False


def _isatty(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
