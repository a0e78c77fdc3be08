"""A user's history of sessions: where the agents keep them, finding them in folders, and
naming the project each belongs to (docs/history.md).

* Claude Code: ``$CLAUDE_CONFIG_DIR/projects`` (each of a comma-separated list), else
  ``~/.claude/projects``; one folder per project, named after its working folder with
  ``/`` and ``.`` written as ``-``.
* Codex: ``$CODEX_HOME/sessions``, else ``~/.codex/sessions``; ``YYYY/MM/DD/rollout-*.jsonl``,
  each naming its working folder (``cwd``).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

    from .sessions.model import Session


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


def find_sessions(paths: list[str]) -> list[str]:
    """The session files: files as given; folders searched recursively for *.jsonl and
    *.json, leaving out sub-agents' files (``subagents/`` folders, ``agent-*.jsonl``)."""
    out: list[str] = []
    for path in paths:
        if not os.path.isdir(path):
            out.append(path)
            continue
        found = []
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d != "subagents")
            found += [os.path.join(root, f) for f in files if is_session_file(f)]
        out += sorted(found)
    return out


def project_of(session: Session, path: str) -> str:
    """The project a session belongs to: its working folder's name (Codex's ``cwd``,
    Claude Code's ``cwd`` or its project folder's name), else its folder's."""
    if session.cwd:
        return os.path.basename(session.cwd.rstrip("/\\")) or session.cwd
    folder = os.path.basename(os.path.dirname(os.path.abspath(path)))
    if folder.startswith("-"):                    # Claude Code's -home-me-work-proj
        return folder.rsplit("-", 1)[-1] or folder
    return folder
