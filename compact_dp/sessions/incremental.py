"""Reading a growing session again without rescanning it: the status line's cache.

Claude Code runs the status line after every assistant message, on a transcript that only
grows.  The reader's state after the last complete line is saved, keyed by the file's path
(and checked against its identity and a checksum of the bytes just before where it
stopped); the next call seeks there and reads only what was appended.  A file that shrank,
was replaced or was rewritten is read again from the start.

The state is a *summary* (sessions.normalised): Claude Code and Codex summarise the whole
history when they compact, so their decision needs the live context's size and a few
counts, never a message list — the state stays a few kilobytes however long the
transcript grows, and an unchanged file costs a load of that and nothing more.

The cache lives in the user's cache directory: one small file per transcript, mode 600,
holding numbers (no text of the conversation), written to a temporary file and renamed
over the old one — a crash leaves the old state or the new one, concurrent sessions each
have their own, and a state that cannot be read is ignored.  States untouched for
``PRUNE_DAYS`` days are removed when a new one is first written.  compact-dp never writes
the transcript.
"""

from __future__ import annotations

import marshal
import os
import time
import zlib

from ..errors import InputError, os_reason
from .read import (
    BOM,
    HEAD,
    chunks,
    feed_lines,
    finished,
    markers_of,
    read_session,
    reader_class,
    reader_for,
)
from .session import Session
from .sniff import sniff

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import IO

    from .session import State

CACHE_VERSION = 7
CHECK = 64                     # bytes before the saved offset that must not have changed
RESUMABLE = ("claude-code", "codex")
PRUNE_DAYS = 30
SUFFIX = ".state"


def cache_dir(environ: Mapping[str, str]) -> str:
    """$COMPACT_DP_CACHE, else $XDG_CACHE_HOME/compact-dp, else ~/.cache/compact-dp
    (~/Library/Caches/compact-dp on macOS); an empty variable counts as unset, and so does
    a relative XDG_CACHE_HOME (the XDG rule).  "" (no cache: every call reads afresh)
    without a home (environment.home_of), or when that folder is not there: a cache never
    creates a home, nor a folder at the root for an empty HOME."""
    if environ.get("COMPACT_DP_CACHE"):
        return environ["COMPACT_DP_CACHE"]
    if os.path.isabs(environ.get("XDG_CACHE_HOME", "")):
        return os.path.join(environ["XDG_CACHE_HOME"], "compact-dp")
    from ..environment import home_of
    home = home_of(environ)
    if not (home and os.path.isdir(home)):
        return ""
    if os.uname().sysname == "Darwin":
        return os.path.join(home, "Library", "Caches", "compact-dp")
    return os.path.join(home, ".cache", "compact-dp")


class Reading:
    """What one incremental read did: the session (None when the time ran out before the
    end of the file: the next call goes on from where this one stopped), how many bytes it
    read, and how far into the file it is."""

    def __init__(self, session: Session | None, bytes_read: int, resumed: bool,
                 done: int = 0, size: int = 0, kept: bool = True, afresh: bool = False):
        self.session, self.bytes_read, self.resumed = session, bytes_read, resumed
        self.done, self.size = done, size
        self.kept = kept            # False: the progress could not be saved (no cache)
        self.afresh = afresh        # its state began as a retry: an error is the reader's


def _cache_file(folder: str, path: str) -> str:
    if not folder:
        return ""                               # no cache: nothing opens or saves ""
    key = zlib.crc32(path.encode("utf-8", "surrogateescape"))
    name = os.path.basename(path)[:48].replace(os.sep, "_")
    return os.path.join(folder, f"{key:08x}-{name}{SUFFIX}")


def _checksum(data: bytes) -> int:
    return zlib.crc32(data) << 32 | zlib.adler32(data)


def _load(file: str, path: str, st: os.stat_result) -> State | None:
    try:
        with open(file, "rb") as f:
            saved = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(saved, dict) or saved.get("version") != CACHE_VERSION or \
            saved.get("path") != path or saved.get("ino") != st.st_ino or \
            saved.get("dev") != st.st_dev or type(saved.get("offset")) is not int or \
            type(saved.get("check")) is not int or not 0 <= saved["offset"] <= st.st_size or \
            saved.get("format") not in RESUMABLE:
        return None
    return saved


def _save(file: str, saved: State) -> bool:
    """Atomically replace the state file (mode 600); any failure (a full disk, the status
    line's time running out mid-write) leaves the old state or none, and no temporary
    file.  A new state first prunes the old ones."""
    from ..files import save_cache
    folder = os.path.dirname(file)
    if not os.path.exists(file) and os.path.isdir(folder):
        prune(folder)
    return save_cache(file, saved)


def prune(folder: str, days: float = PRUNE_DAYS, now: float | None = None) -> int:
    """Remove the states (and stray temporary files) untouched for ``days`` days; returns
    how many went."""
    limit = (time.time() if now is None else now) - days * 86400
    gone = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        if not (name.endswith(SUFFIX) or name.endswith(".tmp")):
            continue
        target = os.path.join(folder, name)
        try:
            if os.stat(target).st_mtime < limit:
                os.unlink(target)
                gone += 1
        except OSError:
            pass
    return gone


def read_incremental(path: str, folder: str, tokens: str = "auto", format: str = "auto",
                     deadline: float | None = None, afresh: bool = False) -> Reading:
    """The session (a summary, for the formats that resume) of a file that may have grown
    since the last call.  With a ``deadline`` (time.monotonic()), reading stops there and
    the progress is saved: the next call goes on from that point.  ``afresh``: the saved
    state is not used (what it gave could not be decided on) and is replaced."""
    from ..core.scan import open_source
    with open_source(path, None) as f:
        try:
            return _read(f, path, folder, tokens, format, deadline, afresh)
        except OSError as e:
            raise InputError(f"{path}: {os_reason(e)}") from None


# what a saved state of another shape makes resuming raise (a hand-edited state, or one a
# compiled reader refuses where the pure one took it): the file is then read afresh, once —
# the states that read saves say so ("afresh"), and an error resuming them is the reader's
# own (it would otherwise start over on every call whose time runs out before the error)
STATE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError)


def _read(f: IO[bytes], path: str, folder: str, tokens: str, format: str,
          deadline: float | None, afresh: bool = False) -> Reading:
    st = os.fstat(f.fileno())
    file = _cache_file(folder, path)
    saved = None if afresh else _load(file, path, st)
    if saved is not None:
        offset = saved["offset"]
        f.seek(max(0, offset - CHECK))
        if _checksum(f.read(min(CHECK, offset))) == saved["check"] and \
                saved.get("tokens") == tokens:
            if saved.get("afresh") is True:
                return _read_from(f, path, file, st, tokens, format, deadline, saved, True)
            try:
                return _read_from(f, path, file, st, tokens, format, deadline, saved, False)
            except STATE_ERRORS:
                # not refused on every call until the file changes
                return _read_from(f, path, file, st, tokens, format, deadline, None, True)
    return _read_from(f, path, file, st, tokens, format, deadline, None, afresh)


def _read_from(f: IO[bytes], path: str, file: str, st: os.stat_result, tokens: str,
               format: str, deadline: float | None, saved: State | None,
               afresh: bool) -> Reading:
    """Read on from a saved state, or (None) from the start; ``afresh``: this reading
    began as the retry of a state that could not be resumed."""
    if saved is None:
        f.seek(0)                               # the check may have read elsewhere
        head = f.read(HEAD)
        found = sniff(head.removeprefix(BOM)) if format == "auto" else format
        if found not in RESUMABLE:
            return Reading(read_session([path], format, tokens), st.st_size, False,
                           st.st_size, st.st_size)
        reader = reader_for(found, tokens, keep=False)
        offset = len(BOM) if head.startswith(BOM) else 0
        resumed = False
    else:
        found = saved["format"]
        reader = reader_class(found).from_state(saved["reader"])
        offset, resumed = saved["offset"], True
    f.seek(offset)
    rest: list[bytes] = []                      # a line not finished yet
    start, stopped = offset, False
    for taken in feed_lines(reader, chunks(f, b""), rest):
        offset += taken
        if deadline is not None and time.monotonic() > deadline:
            stopped = True
            break
    read = f.tell() - start
    stopped = stopped and f.read(1) != b""
    kept = True
    if offset != start or not resumed:
        f.seek(max(0, offset - CHECK))
        check = _checksum(f.read(min(CHECK, offset)))
        kept = _save(file, {"version": CACHE_VERSION, "path": path, "ino": st.st_ino,
                     "dev": st.st_dev, "offset": offset, "check": check, "format": found,
                     "tokens": tokens, "afresh": afresh, "reader": reader.state()})
    if stopped:
        return Reading(None, read, resumed, offset, st.st_size, kept, afresh)
    session = finished(reader, b"".join(rest), markers_of(found), path, found,
                       sniffed=format == "auto")          # the state is saved already
    return Reading(session, read, resumed, offset, st.st_size, kept, afresh)
