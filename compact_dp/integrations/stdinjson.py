"""The JSON object Claude Code writes on the status line's and the hooks' stdin.

Claude Code closes stdin after writing the object, but a reader that waits for the end of
stdin hangs on a client that keeps its end open — and the status line must answer every
time.  So stdin is read until the bytes parse as one JSON value, stdin ends, or
``SECONDS`` pass, whichever comes first.  ``select`` is a small C module: the hot paths
stay light.
"""

from __future__ import annotations

import os
import time

from ..lightjson import loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

SECONDS = 0.5              # Claude Code writes the whole object at once: ample


def read_json(stream: IO[bytes] | None, seconds: float = SECONDS) -> object:
    """The JSON value on ``stream``; ValueError when there is none (not JSON, cut short,
    nested past what the parser recurses to, nothing within ``seconds``, or no stdin at
    all)."""
    try:
        return _read(stream, seconds)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _read(stream: IO[bytes] | None, seconds: float) -> object:
    if stream is None:
        raise ValueError("no standard input")
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return loads(stream.read())          # in memory (the tests, the Python API)
    import select

    deadline = time.monotonic() + seconds
    data = b""
    while (left := deadline - time.monotonic()) > 0:
        try:
            ready = select.select([fd], [], [], left)[0]
        except (OSError, ValueError):        # no select on this stream: read it all
            return loads(data + stream.read())
        if not ready:
            break                            # the time is up
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break                            # stdin ended
        data += chunk
        if data.rstrip().endswith((b"}", b"]")):
            try:
                return loads(data)
            except ValueError:
                pass                         # not whole yet
    return loads(data)
