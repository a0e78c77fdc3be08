"""Writing files without ever leaving a half-written one.

compact-dp reads conversations and never writes them.  What it does write — a picture, a
cache, a settings file — goes to a temporary file in the same directory that replaces the
target in one ``os.replace``: a crash leaves the old file or the new one, never a mix.
"""

from __future__ import annotations

import os
from stat import S_ISREG

from .errors import UsageError, os_reason

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def make_folder_for(path: str, may_make: tuple[str, ...], option: str, dry_run: bool = False,
                    folder: str | None = None) -> None:
    """The rule for every file compact-dp writes where a user said: it goes into a folder
    that exists.  A mistyped path (``calibrate --output``, ``install --settings``) must
    not grow a tree of folders (as root, ``/nonexistent``).  The only folders made are
    those of ``may_make``, compact-dp's own for a default path (``~/.claude``; the config
    folder and its ``compact-dp``), for their owner only — a folder above them never;
    ``dry_run`` makes nothing.  ``option`` named the path (for the error); ``folder`` is
    the one to check when not the path's own (a symlink's target's)."""
    folder = folder or os.path.dirname(os.path.abspath(path))
    allowed = {os.path.abspath(f) for f in may_make} | {os.path.realpath(f) for f in may_make}
    missing: list[str] = []
    while not os.path.isdir(folder):
        if os.path.exists(folder):                    # a file where a folder should be
            raise UsageError(f"{'' if may_make else option + ': '}{folder} is not a folder")
        if folder not in allowed and may_make:       # the default path's
            raise UsageError(f"{folder} does not exist; not creating it (only "
                             f"{' and '.join(may_make)} would be made, for the default)")
        if folder not in allowed:
            raise UsageError(f"{option}: {folder} does not exist; not creating it (make it "
                             f"first, or leave {option} out for the default)")
        missing.append(folder)
        folder = os.path.dirname(folder)
    for f in reversed(missing) if not dry_run else ():
        try:
            os.mkdir(f, 0o700)
        except FileExistsError:
            pass
        except OSError as e:
            raise UsageError(f"cannot create {f}: {os_reason(e)}") from None


class NotARegularFile(OSError):
    """The path is there and is no regular file (a device, a pipe, a socket, a folder):
    replacing it would put a file where something else was, so it is left alone."""

    def __init__(self, path: str):
        super().__init__(0, "not a regular file; not touching it", path)

    def __str__(self) -> str:
        return f"{self.filename}: {os_reason(self)}"


def regular_or_absent(path: str) -> bool:
    """Whether ``path`` is a regular file (a link to one counts) or not there at all:
    what compact-dp may read whole or replace.  Reading a named pipe would wait forever."""
    try:
        return S_ISREG(os.stat(path).st_mode)
    except OSError:                     # not there, or what opening it says is said instead
        return True


def write_atomic(path: str, data: str | bytes, mode: int | None = None) -> None:
    """Replace ``path`` by ``data`` atomically, with ``mode`` (else the old file's, else
    the umask's).  The temporary file has that mode from its creation on: it may hold the
    API keys of a settings file that only its owner can read.  A path that is there and
    is no regular file is refused (NotARegularFile): ``/dev/null`` stays a device."""
    if not regular_or_absent(path):
        raise NotARegularFile(path)
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
            import shutil  # (not on the status line's path: it imports re)
            shutil.copymode(path, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def save_cache(file: str, value: Any, backup: bool = False) -> bool:
    """A cache (marshal's bytes) replaced whole, for its owner only (mode 600, in a
    folder of mode 700), the one it replaces kept as ``.bak`` with ``backup``.  A cache
    is never worth an error: any failure leaves the old file and says False."""
    import marshal
    tmp = f"{file}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(file), mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            marshal.dump(value, f)
        if backup and os.path.exists(file):
            os.replace(file, file + ".bak")
        os.replace(tmp, file)
        return True
    except (OSError, ValueError):
        return False
    finally:
        if os.path.exists(tmp):
            try:
                os.unlink(tmp)
            except OSError:
                pass
