"""The ``compact-dp`` entry point: pick the awk-compatible or the native command line."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Dispatch on the arguments; the awk form never imports the native CLI's packages."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        from .awkcli import is_awk_form
        if is_awk_form(argv):
            from .awkcli import run
        else:
            from .cli import run
        return run(argv)
    except KeyboardInterrupt:
        from .errors import fail
        return fail("interrupted", 130)
    except Exception as e:            # the last line of defence: one line, never a traceback
        import os
        if os.environ.get("COMPACT_DP_DEBUG"):
            raise
        from .errors import fail
        return fail(f"internal error: {type(e).__name__}: {e} (set COMPACT_DP_DEBUG=1 for "
                    "the traceback, and please report it)")


def entry() -> None:
    """Console-script wrapper: exit with main()'s status."""
    sys.exit(main())
