"""Reading a growing session again without rescanning it: the status line's cache.

Claude Code runs the status line after every assistant message, on a transcript that only
grows.  The reader's state after the last complete line is saved, keyed by the file's path
(and checked against its size, identity and the bytes just before where it stopped); the
next call seeks there and reads only what was appended.  A file that shrank, was replaced
or was rewritten is read again from the start.

The cache lives in the user's cache directory, one small file per transcript, written to a
temporary file and renamed over the old one: a crash leaves the old cache or the new one,
concurrent sessions each have their own, and a cache that cannot be read is ignored.
compact-dp never writes the transcript.
"""

from __future__ import annotations

import marshal
import os
import time
import zlib

from ..errors import InputError
from .model import Session
from .read import (BOM, CLAUDE_MARKERS, HEAD, chunks, feed_block, finished, line_blocks,
                   read_session, reader_for)
from .sizing import size_session
from .sniff import sniff

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

CACHE_VERSION = 3
CHECK = 64                     # bytes before the saved offset that must not have changed
RESUMABLE = ("claude-code", "codex")


def cache_dir(environ: Mapping[str, str] | None = None) -> str:
    """$COMPACT_DP_CACHE, else $XDG_CACHE_HOME/compact-dp, else ~/.cache/compact-dp
    (~/Library/Caches/compact-dp on macOS); an empty variable counts as unset."""
    env = os.environ if environ is None else environ
    if env.get("COMPACT_DP_CACHE"):
        return env["COMPACT_DP_CACHE"]
    if env.get("XDG_CACHE_HOME"):
        return os.path.join(env["XDG_CACHE_HOME"], "compact-dp")
    home = os.path.expanduser("~")
    if os.uname().sysname == "Darwin":
        return os.path.join(home, "Library", "Caches", "compact-dp")
    return os.path.join(home, ".cache", "compact-dp")


class Reading:
    """What one incremental read did: the session (None when the time ran out before the
    end of the file: the next call goes on from where this one stopped), how many bytes it
    read, and how far into the file it is."""

    def __init__(self, session: Session | None, bytes_read: int, resumed: bool,
                 done: int = 0, size: int = 0):
        self.session, self.bytes_read, self.resumed = session, bytes_read, resumed
        self.done, self.size = done, size

    @property
    def complete(self) -> bool:
        return self.session is not None


def _cache_file(folder: str, path: str) -> str:
    key = zlib.crc32(path.encode("utf-8", "surrogateescape"))
    name = os.path.basename(path)[:48].replace(os.sep, "_")
    return os.path.join(folder, f"{key:08x}-{name}.state")


def _load(file: str, path: str, st: os.stat_result) -> dict | None:
    try:
        with open(file, "rb") as f:
            saved = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(saved, dict) or saved.get("version") != CACHE_VERSION or \
            saved.get("path") != path or saved.get("ino") != st.st_ino or \
            saved.get("dev") != st.st_dev or st.st_size < saved.get("offset", 1 << 62):
        return None
    return saved


def _save(file: str, saved: dict) -> None:
    """Atomically replace the cache file; any failure (a full disk, the status line's time
    running out mid-write) leaves the old cache or none, and no temporary file."""
    tmp = f"{file}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(file), exist_ok=True)
        with open(tmp, "wb") as f:
            marshal.dump(saved, f)
        os.replace(tmp, file)
    except OSError:
        pass
    finally:
        if os.path.exists(tmp):
            try:
                os.unlink(tmp)
            except OSError:
                pass


def read_incremental(path: str, folder: str | None = None, tokens: str = "auto",
                     format: str = "auto", deadline: float | None = None) -> Reading:
    """The sized session of a file that may have grown since the last call.  With a
    ``deadline`` (time.monotonic()), reading stops there and the progress is saved: the
    next call goes on from that point."""
    folder = cache_dir() if folder is None else folder
    try:
        f = open(path, "rb")
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory") from None
    except OSError as e:
        raise InputError(f"{path}: {e.strerror or e}") from None
    with f:
        try:
            return _read(f, path, folder, tokens, format, deadline)
        except OSError as e:
            raise InputError(f"{path}: {e.strerror or e}") from None


def _read(f, path: str, folder: str, tokens: str, format: str,
          deadline: float | None) -> Reading:
    st = os.fstat(f.fileno())
    file = _cache_file(folder, path)
    saved = _load(file, path, st)
    if saved is not None:
        offset = saved["offset"]
        f.seek(max(0, offset - CHECK))
        if f.read(min(CHECK, offset)) != saved["check"]:
            saved = None
    if saved is None:
        head = f.read(HEAD)
        found = sniff(head.removeprefix(BOM)) if format == "auto" else format
        if found not in RESUMABLE:
            return Reading(read_session([path], format, tokens), st.st_size, False,
                           st.st_size, st.st_size)
        reader = reader_for(found)
        offset = len(BOM) if head.startswith(BOM) else 0
        check, resumed = b"", False
    else:
        found = saved["format"]
        reader = type(reader_for(found)).from_state(saved["reader"])
        offset, check, resumed = saved["offset"], saved["check"], True
    f.seek(offset)
    markers = CLAUDE_MARKERS if found == "claude-code" else None
    rest: list[bytes] = []                      # a line not finished yet
    start, stopped = offset, False
    for block in line_blocks(chunks(f, b""), rest):
        feed_block(reader, block, markers)
        offset += len(block)
        check = block[-CHECK:] if len(block) >= CHECK else (check + block)[-CHECK:]
        if deadline is not None and time.monotonic() > deadline:
            stopped = True
            break
    read = f.tell() - start
    stopped = stopped and f.read(1) != b""
    state = reader.state()
    if read or not resumed:
        _save(file, {"version": CACHE_VERSION, "path": path, "ino": st.st_ino,
                     "dev": st.st_dev, "offset": offset, "check": check, "format": found,
                     "reader": state})
    if stopped:
        return Reading(None, read, resumed, offset, st.st_size)
    pending = b"".join(rest)
    if pending.strip():                         # a line still being written: not saved
        reader = type(reader).from_state(marshal.loads(marshal.dumps(state)))
    session = finished(reader, pending, markers, path, found, sniffed=format == "auto")
    return Reading(size_session(session, tokens), read, resumed, offset, st.st_size)
