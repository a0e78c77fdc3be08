"""Writing files without ever leaving a half-written one.

compact-dp reads conversations and never writes them.  What it does write — a picture, a
cache, a settings file — goes to a temporary file in the same directory that replaces the
target in one ``os.replace``: a crash leaves the old file or the new one, never a mix.
"""

from __future__ import annotations

import os
import shutil


def write_atomic(path: str, data: str | bytes, mode: int | None = None) -> None:
    """Replace ``path`` by ``data`` atomically, with ``mode`` (else the old file's, else
    the umask's).  The temporary file has that mode from its creation on: it may hold the
    API keys of a settings file that only its owner can read."""
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    raw = data.encode() if isinstance(data, str) else data
    try:
        with open(tmp, "wb", opener=lambda name, flags: os.open(
                name, flags, 0o666 if mode is None else mode & 0o777)) as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        elif os.path.exists(path):
            shutil.copymode(path, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
