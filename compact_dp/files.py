"""Writing files without ever leaving a half-written one.

compact-dp reads conversations and never writes them.  What it does write — a picture, a
cache, a settings file — goes to a temporary file in the same directory that replaces the
target in one ``os.replace``: a crash leaves the old file or the new one, never a mix.
"""

from __future__ import annotations

import os
import shutil


def write_atomic(path: str, data: str | bytes, backup: str | None = None,
                 mode: int | None = None) -> None:
    """Replace ``path`` by ``data`` atomically; first copy the old file to ``backup``."""
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    raw = data.encode() if isinstance(data, str) else data
    try:
        with open(tmp, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        elif os.path.exists(path):
            shutil.copymode(path, tmp)
        if backup is not None and os.path.exists(path):
            shutil.copy2(path, backup)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
