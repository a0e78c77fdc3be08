"""A Claude Code session's compaction requests, recorded beside it in
``<session>/subagents/agent-acompact-*.jsonl`` (one summary request per file).

They are billed like any request but are not in the main file; the recorded bill
(``replay``) counts them.  Other files of that folder are sub-agents' sidechains, with
caches and bills of their own, and are not the session's.
"""

from __future__ import annotations

import glob
import os

from .normalised import Request
from .read import read_raw


def compaction_requests(path: str) -> list[Request]:
    """The compaction requests recorded for the session file at ``path``, oldest first."""
    folder = os.path.join(os.path.splitext(path)[0], "subagents")
    out: list[Request] = []
    for f in sorted(glob.glob(os.path.join(folder, "agent-acompact-*.jsonl"))):
        session = read_raw(f, "claude-code", sidechains=True)
        out.extend(session.requests)
    out.sort(key=lambda r: (r.time is None, r.time or 0.0))
    return out
