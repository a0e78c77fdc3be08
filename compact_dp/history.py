"""A user's history of sessions: where the agents keep them, finding them in folders,
naming the project each belongs to and the day it began, and choosing some of them
(docs/history.md).

* Claude Code: ``$CLAUDE_CONFIG_DIR/projects`` (each of a comma-separated list), else
  ``~/.claude/projects``; one folder per project, named after its working folder with every
  character but a letter or a digit written as ``-`` (so ``-home-me-my-app`` may be
  ``/home/me/my-app`` or ``/home/me/my/app``: the session's own ``cwd`` says which).
* Codex: ``$CODEX_HOME/sessions``, else ``~/.codex/sessions``; ``YYYY/MM/DD/rollout-*.jsonl``,
  each naming its working folder (``cwd``).
"""

from __future__ import annotations

import os
import re

from .environment import home_of
from .errors import os_reason
from .files import regular_or_absent

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .environment import Env
    from .sessions.session import Session

NOT_NAME = re.compile(r"[^A-Za-z0-9]")       # what Claude Code writes as '-' in a folder name


def default_folders(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(agent, folder) of the agents' own session folders that exist, each once; ``~`` is
    the environment's $HOME (none without it: the environment given is the whole truth)."""
    home = home_of(environ)
    claude = [os.path.join(d.strip(), "projects")
              for d in (environ.get("CLAUDE_CONFIG_DIR") or "").split(",") if d.strip()] \
        or ([os.path.join(home, ".claude", "projects")] if home else [])
    codex = environ.get("CODEX_HOME") or (os.path.join(home, ".codex") if home else "")
    found = [("Claude Code", d) for d in claude] + \
        ([("Codex", os.path.join(codex, "sessions"))] if codex else [])
    seen: set[str] = set()
    out = []
    for agent, d in found:                      # a folder named twice is read once
        if os.path.isdir(d) and os.path.realpath(d) not in seen:
            seen.add(os.path.realpath(d))
            out.append((agent, d))
    return out


def session_files(env: Env, paths: list[str]) -> list[str]:
    """The session files under the paths given; with none, under the agents' own folders
    (docs/history.md), each named on standard error with how many it holds."""
    from .errors import UsageError
    from .views.words import count

    unreadable: list[tuple[str, str]] = []

    def say_unreadable() -> None:
        for folder, why in unreadable:
            env.warn(f"cannot read the folder {folder} ({why}): its sessions are left out")
    if paths:
        files = find_sessions(paths, unreadable)
        say_unreadable()
        if not files:
            raise UsageError(f"no session files under {', '.join(paths)}")
        return files
    folders = default_folders(env.environ)
    if not folders:
        raise UsageError("no FILE or DIR given, and no session folder found "
                         "($CLAUDE_CONFIG_DIR/projects or ~/.claude/projects, "
                         "$CODEX_HOME/sessions or ~/.codex/sessions)")
    seen: set[str] = set()                  # each file once, in whichever folder it is
    found = [(agent, folder, find_sessions([folder], unreadable, seen))
             for agent, folder in folders]
    say_unreadable()
    if not any(files for _, _, files in found):
        raise UsageError("no FILE or DIR given, and no session files in "
                         f"{', '.join(folder for _, folder in folders)}")
    for agent, folder, files in found:
        env.note(f"{agent}: {count(len(files), 'session file')} in {folder}")
    return [f for _, _, files in found for f in files]


def is_session_file(name: str) -> bool:
    return name.endswith((".jsonl", ".json")) and not name.startswith("agent-")


def find_sessions(paths: list[str], unreadable: list[tuple[str, str]] | None = None,
                  seen: set[str] | None = None) -> list[str]:
    """The session files: files as given; folders searched recursively for *.jsonl and
    *.json, leaving out sub-agents' files (``subagents/`` folders, ``agent-*.jsonl``).
    A folder that cannot be listed goes into ``unreadable`` (with why), to be said: its
    sessions are missing from the answer.  Each file once, however often it is named or
    found (``seen``: the real paths of the files already found, shared across calls): a
    path is the same file as another when their real paths are one (a symlink,
    ``a/../a``, a folder and its subfolder)."""
    seen = set() if seen is None else seen
    out: list[str] = []

    def failed(e: OSError) -> None:
        if unreadable is not None:
            unreadable.append((e.filename or "", os_reason(e)))

    def once(path: str) -> None:
        real = path if path == "-" else os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            out.append(path)
    for path in paths:
        if not os.path.isdir(path):
            once(path)
            continue
        found = []
        for root, dirs, files in os.walk(path, onerror=failed):
            dirs[:] = sorted(d for d in dirs if d != "subagents")
            # (a named pipe or a device among them would be waited on forever)
            found += [os.path.join(root, f) for f in files
                      if is_session_file(f) and regular_or_absent(os.path.join(root, f))]
        for f in sorted(found):
            once(f)
    return out


# --- each request once ----------------------------------------------------------------------

class Counted:
    """What a run of many files counts of each (``each_request_once``), by the files'
    positions in the run: ``inside`` maps a file left out to the file that holds every
    one of its requests; ``elsewhere`` maps a file counted to the keys of its requests
    (its own and its side files') that another file of the run counts; ``adopts`` maps a
    file counted to the files left out into it whose side files it bills (sub-agents no
    file counted holds)."""

    def __init__(self) -> None:
        self.inside: dict[int, int] = {}
        self.elsewhere: dict[int, set[int]] = {}
        self.adopts: dict[int, list[int]] = {}


def inside_words(requests: int, other: str) -> str:
    """Why a file is left out: every one of its ``requests`` is in ``other``."""
    what = "its one request is" if requests == 1 else f"its {requests:,} requests are all"
    return f"{what} in {other} (the start of a resumed session, or a copy): counted there"


def each_request_once(keys: Sequence[Sequence[int | None]],
                      side: Sequence[Sequence[int]] | None = None) -> Counted:
    """The one rule by which a run (files, folders, the default history) counts each
    request once across all its files; ``keys``: the request keys of each file's own
    requests, in the run's order (None: a request with no key); ``side``: the keys of
    each file's side files (its compactions' and sub-agents' requests).

    * A file every one of whose requests is in another file is the start of a resumed
      session (the agent copies the old requests into the new file and goes on), or a
      copy: it is left out, ``inside`` the largest such file (of equal ones, the first in
      the run, so of two copies the first counts).  A file with a request without a key,
      or with none at all, is never left out: nothing shows it is inside another.
    * Of the files counted, a request in several (a session resumed twice, each new file
      repeating the old requests, then going on its own way) is counted by the first in
      the run; the others have it ``elsewhere``.  Side requests are counted the same way,
      and those of a file left out that no file counted holds are billed by the file it
      is inside (``adopts``)."""
    sets = [set(k) for k in keys]
    holders: dict[int, list[int]] = {}
    for i, ks in enumerate(sets):
        for key in ks:
            if key is not None:
                holders.setdefault(key, []).append(i)
    out = Counted()
    for i, ks in enumerate(sets):
        if not ks or None in ks:
            continue
        first = next(iter(ks))
        assert first is not None
        for k in sorted(holders[first], key=lambda k: (-len(sets[k]), k)):
            if k != i and (len(sets[k]) > len(ks) or k < i) and ks <= sets[k]:
                out.inside[i] = k
                break
    owner: dict[int, int] = {}
    sides = [list(s) for s in side] if side is not None else [[] for _ in keys]
    billed: dict[int, list[int]] = {}          # a file counted: every key it would bill
    for i in range(len(keys)):
        if i not in out.inside:
            billed[i] = [key for key in keys[i] if key is not None] + sides[i]
            for key in billed[i]:
                owner.setdefault(key, i)
    for i, k in out.inside.items():
        if any(key not in owner for key in sides[i]):
            out.adopts.setdefault(k, []).append(i)
            billed[k] += sides[i]
            for key in sides[i]:
                owner.setdefault(key, k)
    for i, bills in billed.items():
        others = {key for key in bills if owner[key] != i}
        if others:
            out.elsewhere[i] = others
    return out


def _last_part(path: str) -> str:
    parts = [p for p in re.split(r"[/\\]", path) if p]
    return parts[-1] if parts else path


def project_of(session: Session, path: str, environ: Mapping[str, str] | None = None) -> str:
    """The project a session belongs to: the last part of its working folder.

    A Claude Code session lies in a folder named after the project's working folder, one
    character for one; its ``cwd`` (the last one it names, maybe a subfolder) says which
    characters were separators: the project is the part of ``cwd`` that folder names.
    With no ``cwd``, the folder's name less the home folder's encoding
    (``-home-me-work-my-app`` → ``work-my-app``); for other files, their folder's name."""
    folder = os.path.basename(os.path.dirname(os.path.abspath(path))) if path != "-" else ""
    cwd = (session.cwd or "").rstrip("/\\")
    if cwd:
        if folder.startswith("-") and len(cwd) > len(folder) and \
                NOT_NAME.sub("-", cwd).startswith(folder + "-"):
            cwd = cwd[:len(folder)]              # a subfolder of the project's
        return _last_part(cwd)
    if folder.startswith("-"):                   # Claude Code's, with no cwd to read it by
        prefix = NOT_NAME.sub("-", (environ or {}).get("HOME", "").rstrip("/")) + "-"
        rest = folder[len(prefix):] if folder.startswith(prefix) else folder.lstrip("-")
        return rest or folder
    return folder or "-"


def day_of(started: float | None) -> str | None:
    """The local date (YYYY-MM-DD) a session began on."""
    from .sessions.timefmt import date_of
    return date_of(started)


def parse_day(text: str, where: str) -> str:
    """A date as ccusage takes it, YYYYMMDD, or YYYY-MM-DD: as YYYY-MM-DD."""
    from datetime import date

    from .errors import BadValue
    m = re.fullmatch(r"(\d{4})(-?)(\d\d)\2(\d\d)", text)
    try:
        if m is None:
            raise ValueError
        return date(int(m[1]), int(m[3]), int(m[4])).isoformat()
    except ValueError:
        raise BadValue(where, f"{text!r} is not a date (YYYYMMDD or YYYY-MM-DD)") from None


def matches(project: str, pattern: str) -> bool:
    """--project: a glob when the pattern has * ? or [, else a part of the name; either
    way regardless of case."""
    from fnmatch import fnmatchcase
    name, pattern = project.lower(), pattern.lower()
    return fnmatchcase(name, pattern) if any(c in pattern for c in "*?[") else pattern in name


class Selection:
    """The sessions asked for: begun from ``since`` to ``until`` (YYYY-MM-DD, both days
    included; a session with no date is outside any such range), of a project matching
    ``project`` (picklable: workers choose before they replay)."""

    def __init__(self, since: str | None = None, until: str | None = None,
                 project: str | None = None):
        self.since, self.until, self.project = since, until, project

    def admits(self, project: str, day: str | None) -> bool:
        if self.since or self.until:
            if day is None or day < (self.since or day) or day > (self.until or day):
                return False
        return self.project is None or matches(project, self.project)
