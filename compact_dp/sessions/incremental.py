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
import zlib

from ..errors import InputError
from .model import Session
from .read import HEAD, finish_tail, read_session, reader_for
from .sizing import size_session
from .sniff import sniff

CACHE_VERSION = 3
CHECK = 64                     # bytes before the saved offset that must not have changed
RESUMABLE = ("claude-code", "codex")


def cache_dir(environ: dict | None = None) -> str:
    """$COMPACT_DP_CACHE, else $XDG_CACHE_HOME/compact-dp, else ~/.cache/compact-dp
    (~/Library/Caches/compact-dp on macOS)."""
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
    """What one incremental read did: the session, and how many bytes it read."""

    def __init__(self, session: Session, bytes_read: int, resumed: bool):
        self.session, self.bytes_read, self.resumed = session, bytes_read, resumed


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
    """Atomically replace the cache file; any failure just leaves no cache."""
    try:
        os.makedirs(os.path.dirname(file), exist_ok=True)
        tmp = f"{file}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            marshal.dump(saved, f)
        os.replace(tmp, file)
    except OSError:
        try:
            os.unlink(tmp)
        except (OSError, UnboundLocalError):
            pass


def read_incremental(path: str, folder: str | None = None, tokens: str = "auto",
                     format: str = "auto") -> Reading:
    """The sized session of a file that may have grown since the last call."""
    folder = cache_dir() if folder is None else folder
    try:
        f = open(path, "rb")
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory") from None
    except OSError as e:
        raise InputError(f"{path}: {e.strerror or e}") from None
    try:
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
            found = sniff(head) if format == "auto" else format
            f.seek(0)
            if found not in RESUMABLE:
                f.close()
                return Reading(read_session([path], format, tokens), st.st_size, False)
            reader, offset, resumed = reader_for(found), 0, False
        else:
            found = saved["format"]
            reader = reader_for(found)
            reader = type(reader).from_state(saved["reader"])
            resumed = True
            f.seek(offset)
        data = f.read()
    except OSError as e:
        raise InputError(f"{path}: {e.strerror or e}") from None
    finally:
        f.close()
    end = data.rfind(b"\n") + 1                 # only complete lines are kept
    markers = (b'"user"', b'"assistant"', b'"system"') if found == "claude-code" else None
    if end:
        import json                            # only when there is something new to parse
        loads = json.loads
        for line in data[:end].split(b"\n"):
            if not line.strip() or markers is not None and \
                    not any(m in line for m in markers):
                continue
            try:
                reader.feed(loads(line))
            except ValueError:
                reader.skip_bad_line()
    offset += end
    check = ((saved["check"] if saved is not None else b"") + data[:end])[-CHECK:]
    state = reader.state()
    _save(file, {"version": CACHE_VERSION, "path": path, "ino": st.st_ino, "dev": st.st_dev,
                 "offset": offset, "check": check, "format": found, "reader": state})
    tail = data[end:]
    if tail.strip():                            # a line still being written: not saved
        reader = type(reader).from_state(marshal.loads(marshal.dumps(state)))
    warning = finish_tail(reader, tail, markers)
    session = reader.session(path)
    if warning:
        session.warnings.append(warning)
    if not session.requests and session.kinds:
        session.warnings.append("no API request recorded yet: sizes come from the content "
                                "and the stats from the defaults")
    return Reading(size_session(session, tokens), len(data), resumed)

