"""The package's one error type, and the exit statuses it maps to.

Every failure a user can cause — a bad option, an unreadable or unknown file, awk's fatal
division by zero — is a ``CompactDpError``.  It carries the prefix and the exit status its
one-line message is shown with, so a single boundary (``cli.main``) turns any of them into
``compact-dp: PREFIX: MESSAGE`` on standard error.  Anything else that escapes is a bug and
is reported as an internal error, never dressed up as a usage error.

This module is pure: it prints nothing (``environment.Env`` does the writing).
"""

from __future__ import annotations

EXIT_OK = 0            # answered (with a policy: compact now)
EXIT_SKIP = 1          # a policy was asked for and says: do not compact
EXIT_ERROR = 2         # usage error, bad value, unreadable input, awk fatal error, closed output
EXIT_INTERRUPTED = 130


def os_reason(e: OSError) -> str:
    """An OSError in words, as every message about a file or stream says it: the system's
    own reason ("Permission denied"), else whatever the error says of itself."""
    return e.strerror or str(e)


class CompactDpError(Exception):
    """A failure to report as one line: ``{prefix}: {message}``, then exit ``status``."""

    prefix = "error"
    status = EXIT_ERROR

    def line(self) -> str:
        return f"{self.prefix}: {self}"


class UsageError(CompactDpError):
    """Bad command-line syntax, an unknown name, or a value the native form rejects."""


class BadValue(UsageError):
    """A parameter value that is not valid for the native form or the Python API.

    ``where`` names it in the caller's words: a parameter as the Python API spells it
    (``turns``, ``cache_ttl``) or an env var (``DP_R``).  The message says it so; on the
    command line (``line``) a parameter is its option, ``--turns``, ``--cache-ttl``."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}")
        self.where, self.message = where, message

    def line(self) -> str:
        shown = self.where if self.where.isupper() or self.where.startswith("-") else \
            "--" + self.where.replace("_", "-")
        return f"{self.prefix}: {shown}: {self.message}"


class NotAHook(UsageError):
    """``compact-dp hook`` without a hook's name, or with a name that is none: exit 1,
    because Claude Code takes a hook's exit 2 to mean "block" (a UserPromptSubmit hook
    would erase the prompt) and reports any other status without blocking."""

    status = EXIT_SKIP


class InputError(CompactDpError):
    """A conversation file that cannot be opened or read; the message names it."""

    prefix = "error: cannot open"


class FormatError(CompactDpError):
    """A file that is readable but is not a session in the format asked for (or any)."""


class NotASession(FormatError):
    """A file in no known session format at all: found in a folder, it is no news (a
    ``metadata.json`` beside the sessions), so many-file commands count it, not name it.
    ``path`` (the file, as named) and ``what`` (what it is, in words) without the hint
    for the command line: the hooks say them in their own words."""

    def __init__(self, path: str, what: str, hint: str = ""):
        super().__init__(f"{path}: {what}" + (f"; {hint}" if hint else ""))
        self.path, self.what = path, what


class EmptySession(FormatError):
    """A file with nothing in it to replay (no line at all): in a folder, many-file
    commands leave it out with a count; named, it is an error.  (The decision answers 0 on
    it, as the awk does.)"""


class AwkFatal(CompactDpError):
    """What awk treats as a fatal run-time error (division by zero)."""

    prefix = "fatal"
