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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from .sessions.normalised import Session

NOT_NAME = re.compile(r"[^A-Za-z0-9]")       # what Claude Code writes as '-' in a folder name


def default_folders(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(agent, folder) of the agents' own session folders that exist; ``~`` is the
    environment's $HOME (none without it: the environment given is the whole truth)."""
    home = environ.get("HOME") or ""
    claude = [os.path.join(d.strip(), "projects")
              for d in (environ.get("CLAUDE_CONFIG_DIR") or "").split(",") if d.strip()] \
        or ([os.path.join(home, ".claude", "projects")] if home else [])
    codex = environ.get("CODEX_HOME") or (os.path.join(home, ".codex") if home else "")
    found = [("Claude Code", d) for d in claude] + \
        ([("Codex", os.path.join(codex, "sessions"))] if codex else [])
    return [(agent, d) for agent, d in found if os.path.isdir(d)]


def is_session_file(name: str) -> bool:
    return name.endswith((".jsonl", ".json")) and not name.startswith("agent-")


def find_sessions(paths: list[str], unreadable: list[tuple[str, str]] | None = None
                  ) -> list[str]:
    """The session files: files as given; folders searched recursively for *.jsonl and
    *.json, leaving out sub-agents' files (``subagents/`` folders, ``agent-*.jsonl``).
    A folder that cannot be listed goes into ``unreadable`` (with why), to be said: its
    sessions are missing from the answer."""
    out: list[str] = []

    def failed(e: OSError) -> None:
        if unreadable is not None:
            unreadable.append((e.filename or "", e.strerror or str(e)))
    for path in paths:
        if not os.path.isdir(path):
            out.append(path)
            continue
        found = []
        for root, dirs, files in os.walk(path, onerror=failed):
            dirs[:] = sorted(d for d in dirs if d != "subagents")
            found += [os.path.join(root, f) for f in files if is_session_file(f)]
        out += sorted(found)
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
    if started is None:
        return None
    import time
    try:
        return time.strftime("%Y-%m-%d", time.localtime(started))
    except (OverflowError, OSError, ValueError):
        return None


def parse_day(text: str, where: str) -> str:
    """A date as ccusage takes it, YYYYMMDD, or YYYY-MM-DD: as YYYY-MM-DD."""
    from datetime import date

    from .errors import UsageError
    m = re.fullmatch(r"(\d{4})(-?)(\d\d)\2(\d\d)", text)
    try:
        if m is None:
            raise ValueError
        return date(int(m[1]), int(m[3]), int(m[4])).isoformat()
    except ValueError:
        raise UsageError(f"{where}: {text!r} is not a date (YYYYMMDD or YYYY-MM-DD)") \
            from None


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
