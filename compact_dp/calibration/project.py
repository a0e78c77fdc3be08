"""The forecast learned on the session's own project: its earlier sessions, pooled with the
profile in proportion to the evidence (docs/calibrate.md, "Each project's own").

A project is where the agent keeps the sessions of one working folder: for Claude Code the
other transcripts in the folder of ``~/.claude/projects/`` the transcript is in, for Codex
the rollouts under the same ``sessions`` folder whose working folder is the session's.
Of each earlier session the forecast needs little — when each of its requests was made and
before which requests its human turns began — and it takes of them only what had happened
by the moment decided (``now``): the requests made before it, from the sessions quiet for
``QUIET`` seconds by then (one still being written may not be over).  At each of their
points (every turn end, every 10th request, as the profile's fit takes them) what came
after is known, so their level is Σ remaining ÷ Σ (j + 1)^a, and the project's level is
``core.horizon.pooled_level``: that, with the profile's level as ``project_weight`` of
evidence (measured between projects by ``fit.project_weight``).

Reading a project's sessions costs a read of each file, once: what each showed is kept in
a small cache file per folder (``cache_dir``, keyed by every file's size and modification
time, written atomically, the one before kept as ``.bak``), and a file is read in steps
with a deadline, so the status line catches up over calls instead of waiting.
"""

from __future__ import annotations

import marshal
import os
import time
import zlib
from array import array
from bisect import bisect_left
from stat import S_ISREG

from ..core.horizon import pooled_level
from ..sessions.session import USER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ..sessions.line_reader import LineReader
    from ..sessions.recorder import Recorder

EVERY = 10                  # the profile's fit's second set of points (fit.EVERY)
QUIET = 300.0               # seconds without a request before a session counts as over
CACHE_VERSION = 2
STEP = 1 << 20              # the least a step reads, whatever its deadline


class Past:
    """One earlier session as the forecast needs it: its format, working folder and
    session id, when it started, when each request was made (``times``, in order: a request
    without a time takes the one before it) and the requests a human turn began before
    (``turns``, from the second request on)."""

    __slots__ = ("path", "format", "cwd", "session_id", "start", "times", "turns")

    def __init__(self, path: str, format: str, cwd: str | None, session_id: str | None,
                 start: float | None, times: list[float | None], turns: list[int]):
        self.path, self.format, self.cwd, self.session_id = path, format, cwd, session_id
        self.start = start
        known = array("d")
        last = start if start is not None else -1e300
        for t in times:
            last = max(last, t) if t is not None else last
            known.append(last)
        self.times, self.turns = known, sorted(set(turns))

    @classmethod
    def of_row(cls, path: str, row: Any) -> Past:
        """A Past as ``row()`` saved it: the times in order, as the bytes of an array of
        doubles (the status line loads a project's rows on every call: bytes load at
        once, where a list of floats is built float by float)."""
        past = cls.__new__(cls)
        past.path = path
        past.format, past.cwd, past.session_id, past.start, times, past.turns = row
        past.times = array("d")
        past.times.frombytes(times)
        return past

    def row(self) -> tuple[object, ...]:
        return (self.format, self.cwd, self.session_id, self.start, self.times.tobytes(),
                self.turns)

    def made_by(self, now: float) -> int:
        """The requests made before ``now``."""
        return bisect_left(self.times, now)

    def evidence(self, now: float, exponent: float) -> tuple[float, float, int] | None:
        """(Σ remaining, Σ (j + 1)^a, points) over its points as they stood at ``now``;
        None when it had not begun by then, or made a request within QUIET before it."""
        n = self.made_by(now)
        if n == 0 or self.times[n - 1] > now - QUIET:
            return None
        remaining = exposure = 0.0
        points = 0
        at = [j for j in self.turns if j < n] + list(range(EVERY, n, EVERY))
        for j in at:
            remaining += n - j
            grown: float = (j + 1.0) ** exponent
            exposure += grown
            points += 1
        return remaining, exposure, points


class Evidence:
    """What a project's earlier sessions showed by a moment, and the level pooled from it."""

    __slots__ = ("sessions", "remaining", "exposure", "unread", "level", "prior", "weight")

    def __init__(self, sessions: int, remaining: float, exposure: float, unread: int,
                 prior: float, weight: float):
        self.sessions, self.remaining, self.exposure = sessions, remaining, exposure
        self.unread, self.prior, self.weight = unread, prior, weight
        self.level = pooled_level(prior, weight, remaining, exposure)

    def words(self) -> str:
        """How the level was made, for --explain and ``derived.horizon_source``."""
        unread = f" ({self.unread:,} more not read yet)" if self.unread else ""
        if not self.sessions:
            return f"no earlier session of this project{unread}"
        own = self.remaining / self.exposure if self.exposure > 0 else self.prior
        s = "" if self.sessions == 1 else "s"
        return (f"{self.sessions:,} earlier session{s} of this project{unread}: their level "
                f"{own:.4g} pooled with the profile's {self.prior:.4g}, as if it were "
                f"{self.weight:,.0f} of their {self.exposure:,.0f}")


class History:
    """A project's earlier sessions (``pasts``), and the files not read yet."""

    def __init__(self, pasts: list[Past], unread: int = 0, where: str = ""):
        self.pasts, self.unread, self.where = pasts, unread, where

    def evidence(self, now: float, exponent: float, prior: float, weight: float,
                 path: str | None = None, session_id: str | None = None) -> Evidence:
        """What the sessions other than this one (``path``, ``session_id``) showed by
        ``now``.  A session whose first request is another longer one's first request is
        the start of that one, kept in a file of its own (a resumed session): the longer
        counts, once."""
        seen: dict[float, tuple[int, tuple[float, float, int]]] = {}
        loose: list[tuple[float, float, int]] = []
        for p in self.pasts:
            if path is not None and p.path == path or \
                    session_id is not None and p.session_id == session_id:
                continue
            shown = p.evidence(now, exponent)
            if shown is None:
                continue
            n = p.made_by(now)
            first = p.times[0] if p.times else None
            if first is None:
                loose.append(shown)
            elif first not in seen or seen[first][0] < n:
                seen[first] = (n, shown)
        used = loose + [shown for _n, shown in seen.values()]
        return Evidence(len(used), sum((u[0] for u in used), 0.0),
                        sum((u[1] for u in used), 0.0), self.unread, prior, weight)


# --- reading a session's past, in steps -------------------------------------------------------

class _Watch:
    """Told by a recorder before each message and request: when each request was made and
    where each human turn began (as backtest's points take them)."""

    def __init__(self, recorder: Recorder, times: list[float | None], turns: list[int],
                 turn_seen: bool):
        self.recorder, self.times, self.turns, self.turn_seen = recorder, times, turns, \
            turn_seen

    def _next(self) -> int:
        return self.recorder.request_count + (self.recorder.open is not None)

    def message(self, kind: str) -> None:
        if kind == USER and not self.turn_seen and self._next() >= 1:
            self.turn_seen = True
            self.turns.append(self._next())

    def request(self, seen: int, time: float | None, sent: float | None) -> None:
        self.times.append(sent if sent is not None else time)
        self.turn_seen = False


def read_past(path: str, fmt: str | None = None, progress: dict[str, Any] | None = None,
              deadline: float | None = None) -> tuple[Past | None, dict[str, Any] | None]:
    """What a session file showed (None: not a Claude Code or Codex session with usage,
    or not of ``fmt``), or, when ``deadline`` (time.monotonic()) came first, the progress
    to go on from (a plain dict, saved in the cache)."""
    from ..errors import CompactDpError
    from ..sessions.read import (
        BOM,
        HEAD,
        chunks,
        feed_lines,
        finished,
        markers_of,
        reader_class,
        reader_for,
    )
    from ..sessions.sniff import sniff
    try:
        f = open(path, "rb")
    except OSError:
        return None, None
    with f:
        reader: LineReader
        if progress is None:
            head = f.read(HEAD)
            found = sniff(head.removeprefix(BOM))
            if found not in ("claude-code", "codex") or fmt is not None and found != fmt:
                return None, None
            reader = reader_for(found, keep=False, fast=True)
            offset = len(BOM) if head.startswith(BOM) else 0
            times: list[float | None] = []
            turns: list[int] = []
            turn_seen = False
        else:
            found = progress["format"]
            reader = reader_class(found, True).from_state(progress["reader"])
            offset, times, turns = progress["offset"], progress["times"], progress["turns"]
            turn_seen = progress["turn_seen"]
        watch = _Watch(reader.rec, times, turns, turn_seen)
        reader.rec.watcher = watch
        f.seek(offset)
        rest: list[bytes] = []
        start = offset
        try:
            for taken in feed_lines(reader, chunks(f, b""), rest):
                offset += taken
                if deadline is not None and offset - start >= STEP and \
                        time.monotonic() > deadline:
                    reader.rec.watcher = None
                    return None, {"format": found, "offset": offset, "times": watch.times,
                                  "turns": watch.turns, "turn_seen": watch.turn_seen,
                                  "reader": reader.state()}
            session = finished(reader, b"".join(rest), markers_of(found), path, found,
                               sniffed=True)
        except (CompactDpError, OSError, RecursionError, ValueError, KeyError, TypeError):
            return None, None
        finally:
            reader.rec.watcher = None
    if not session.has_usage:
        return None, None
    return Past(path, found, session.cwd, session.session_id, session.started, watch.times,
                watch.turns), None


# --- the project of a transcript, and its cache ------------------------------------------------

def _codex_root(path: str) -> str:
    """The ``sessions`` folder of a rollout at ``sessions/YYYY/MM/DD/`` (else its folder)."""
    folder = os.path.dirname(path)
    parts = []
    up = folder
    for _ in range(3):
        up, part = os.path.split(up)
        parts.append(part)
    if all(p.isdigit() for p in parts) and up:
        return up
    return folder


def _candidates(path: str, fmt: str) -> tuple[str, list[str]]:
    """The folder of the project's sessions and the session files in it (not this one)."""
    if fmt == "codex":
        root = _codex_root(path)
        found = []
        for top, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "subagents")
            found += [os.path.join(top, f) for f in files if f.endswith(".jsonl")]
    else:
        root = os.path.dirname(path)
        try:
            names = os.listdir(root)
        except OSError:
            names = []
        found = [os.path.join(root, n) for n in names
                 if n.endswith(".jsonl") and not n.startswith("agent-")]
    return root, sorted(f for f in found if f != path)


def cache_file(folder: str, root: str) -> str:
    if not folder:
        return ""                               # no cache: nothing opens or saves ""
    key = zlib.crc32(root.encode("utf-8", "surrogateescape"))
    return os.path.join(folder, f"project-{key:08x}.cache")


def _load(file: str, root: str) -> dict[str, Any]:
    """The cache's files (path → [size, mtime_ns, row | None, progress | None]); the
    backup when the cache cannot be read, nothing when neither can."""
    for candidate in (file, file + ".bak"):
        try:
            with open(candidate, "rb") as f:
                saved = marshal.load(f)
        except (OSError, EOFError, ValueError, TypeError):
            continue
        if isinstance(saved, dict) and saved.get("version") == CACHE_VERSION and \
                saved.get("root") == root and isinstance(saved.get("files"), dict):
            files: dict[str, Any] = saved["files"]
            return files
    return {}


def _save(file: str, root: str, files: dict[str, Any]) -> None:
    """Write the cache atomically (mode 600), the one it replaces kept as ``.bak``; any
    failure leaves the old one."""
    from ..files import save_cache
    save_cache(file, {"version": CACHE_VERSION, "root": root, "files": files}, backup=True)


def project_history(path: str, fmt: str, cwd: str | None, environ: Mapping[str, str],
                    deadline: float | None = None) -> History | None:
    """The earlier sessions of the transcript's project, from the cache, reading what
    changed (newest first, until ``deadline``, time.monotonic()); None for a file that is
    in no folder of sessions (standard input) or a Codex session with no working folder."""
    from ..sessions.incremental import cache_dir
    if fmt not in ("claude-code", "codex") or not path or path == "-" or \
            fmt == "codex" and not cwd:
        return None
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        return None
    root, candidates = _candidates(path, fmt)
    file = cache_file(cache_dir(environ), root)
    saved = _load(file, root)
    files: dict[str, Any] = {}
    changed = False
    pending: list[tuple[int, str, os.stat_result]] = []
    wall = time.time()
    for name in candidates:
        try:
            st = os.stat(name)
        except OSError:
            continue
        if not S_ISREG(st.st_mode):              # a pipe would be waited on forever
            continue
        entry = saved.get(name)
        if entry is not None and entry[0] == st.st_size and entry[1] == st.st_mtime_ns:
            files[name] = entry
            if entry[3] is not None:
                pending.append((st.st_mtime_ns, name, st))
        elif st.st_mtime < wall - QUIET:          # a file being written is read later
            pending.append((st.st_mtime_ns, name, st))
        else:
            changed |= name in saved
    unread = 0
    for _mtime, name, st in sorted(pending, reverse=True):       # the newest first
        entry = files.get(name)
        progress = entry[3] if entry is not None else None
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                unread += 1
                continue
        past, progress = read_past(name, fmt, progress, deadline)
        files[name] = [st.st_size, st.st_mtime_ns, None if past is None else past.row(),
                       progress]
        changed = True
        if progress is not None:
            unread += 1
    if changed or len(files) != len(saved):
        _save(file, root, files)
    pasts = [Past.of_row(name, e[2]) for name, e in files.items()
             if e[2] is not None and e[3] is None]
    if fmt == "codex":
        pasts = [p for p in pasts if p.cwd == cwd]
    return History([p for p in pasts if p.format == fmt], unread, root)


def project_key(fmt: str, cwd: str | None, path: str) -> tuple[str, str]:
    """Which project a session given to backtest belongs to: its working folder (Claude
    Code keeps one folder of sessions per working folder), else its file's folder."""
    return fmt, cwd or os.path.dirname(os.path.abspath(path))
