"""The recorded bill: what a session cost, read straight from its usage.

A Claude Code session is several files: the main transcript, its compaction requests
(``<session>/subagents/agent-acompact-*.jsonl``) and its sub-agents' sidechains (the other
``agent-*.jsonl`` of that folder, and, from older versions, ``agent-*.jsonl`` files beside
the transcript that carry the session's id).  Each is billed like any request; a request
is counted once across all of them, by its key (``requestId``, else ``message.id``: one
API request is one bill), and once across all the files of a run (history.py).  The replay's
simulation error is about the main chain and its compactions; the sub-agents' requests
are the same under every policy and are reported apart, then added to the total.
"""

from __future__ import annotations

import glob
import os

from ..errors import CompactDpError
from ..sessions.read import read_raw
from ..sessions.session import Request, Session
from .billing import input_cost, output_cost

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable
    from typing import Any

    from ..pricing.table import Prices

SUMS = ("input_tokens", "cache_read_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens",
        "output_tokens")


def side_files(path: str, session_id: str | None) -> tuple[list[str], list[str]]:
    """(compaction files, sub-agent files) recorded beside a Claude Code session."""
    folder = os.path.join(os.path.splitext(path)[0], "subagents")
    inside = sorted(glob.glob(os.path.join(folder, "agent-*.jsonl")))
    compactions = [f for f in inside if os.path.basename(f).startswith("agent-acompact-")]
    agents = [f for f in inside if f not in compactions]
    if session_id:
        for f in agents_beside(os.path.dirname(path)):
            if _names_session(f, session_id):
                agents.append(f)
    return compactions, agents


_LISTED: dict[str, tuple[int, list[str]]] = {}   # folder -> (its mtime, its agent files)


def agents_beside(folder: str) -> list[str]:
    """The ``agent-*.jsonl`` files of a folder, in order, listed once while the folder is
    unchanged: every session of a project folder asks, and listing the folder for each
    made replaying n sessions of one project cost n² (10,000 sessions: 25 minutes)."""
    try:
        changed = os.stat(folder or ".").st_mtime_ns
    except OSError:
        return []
    known = _LISTED.get(folder)
    if known is not None and known[0] == changed:
        return known[1]
    try:
        names = sorted(e.name for e in os.scandir(folder or ".")
                       if e.name.startswith("agent-") and e.name.endswith(".jsonl"))
    except OSError:
        names = []
    if len(_LISTED) >= 64:
        _LISTED.clear()
    _LISTED[folder] = (changed, [os.path.join(folder, n) for n in names])
    return _LISTED[folder][1]


def _names_session(path: str, session_id: str) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return f'"sessionId":"{session_id}"'.encode() in head.replace(b'": "', b'":"')


def requests_of(files: Iterable[str], seen: set[int]) -> list[Request]:
    """Every request of the files, oldest first, less those already ``seen`` (which
    gains theirs)."""
    out: list[Request] = []
    for f in files:
        for r in read_raw(f, "claude-code", sidechains=True, fast=True).requests:
            if r.key is not None:
                if r.key in seen:
                    continue
                seen.add(r.key)
            out.append(r)
    out.sort(key=lambda r: (r.time is None, r.time or 0.0))
    return out


class SessionFiles:
    """A session's requests from all its files, each counted once; ``adopted``: the main
    files of sessions left out into this one (a resumed session's start), whose side
    files this one bills too (history.each_request_once)."""

    def __init__(self, session: Session, adopted: Iterable[str] = ()):
        seen = {r.key for r in session.requests if r.key is not None}
        compactions: list[str] = []
        agents: list[str] = []
        if session.format == "claude-code":
            for path, sid in [(session.path, session.session_id)] + \
                    [(p, session_id_of(p)) for p in adopted]:
                if path:
                    more = side_files(path, sid)
                    compactions += [f for f in more[0] if f not in compactions]
                    agents += [f for f in more[1] if f not in agents]
        self.compaction_requests = requests_of(compactions, seen)
        self.subagent_requests = requests_of(agents, seen)
        self.subagent_files = len(agents)

    def side_keys(self) -> list[int]:
        """The keys of the requests billed from the side files."""
        return [r.key for r in self.compaction_requests + self.subagent_requests
                if r.key is not None]


def session_id_of(path: str) -> str | None:
    """The session id a Claude Code file names (its side files beside it carry it)."""
    try:
        return read_raw(path, "claude-code", fast=True).session_id
    except CompactDpError:
        return None


def bill(requests: Iterable[Request], prices_for: Callable[[str | None], Prices]
         ) -> dict[str, Any]:
    """Requests, token sums and their cost from the recorded usage (writes without a TTL
    split count as 5-minute writes)."""
    sums = dict.fromkeys(SUMS, 0)
    cost_in = cost_out = 0.0
    models: list[str] = []
    n = 0
    for r in requests:
        u = r.usage
        if u is None:
            continue
        n += 1
        p = prices_for(r.llm)
        sums["input_tokens"] += u.input
        sums["cache_read_tokens"] += u.read
        sums["cache_write_5m_tokens"] += u.write_5m
        sums["cache_write_1h_tokens"] += u.write_1h
        sums["output_tokens"] += u.output
        cost_in += input_cost(p, u.read, u.written, "5m", u.input, u.write_1h)
        cost_out += output_cost(p, u.output, u.prompt)
        if r.llm and r.llm not in models:
            models.append(r.llm)
    return {"requests": n, "models": models, **sums, "input_cost": cost_in,
            "output_cost": cost_out}


def recorded_bill(session: Session, files: SessionFiles,
                  prices_for: Callable[[str | None], Prices],
                  elsewhere: Collection[int] = ()) -> dict[str, Any]:
    """The main chain and its compactions (what the simulation error is about), the
    sub-agents apart, and everything in ``total_cost``; less the requests whose keys are
    ``elsewhere`` (another file of the run counts them), and the compactions before them."""
    def here(requests: list[Request]) -> list[Request]:
        return [r for r in requests if r.key is None or r.key not in elsewhere] \
            if elsewhere else requests
    main = bill(here(session.requests + files.compaction_requests), prices_for)
    agents = bill(here(files.subagent_requests), prices_for)
    agents["files"] = files.subagent_files
    total = sum(b[key] for b in (main, agents) for key in ("input_cost", "output_cost"))
    return {**main, "compactions": compactions_here(session, elsewhere),
            "subagents": agents, "total_cost": total}


def compactions_here(session: Session, elsewhere: Collection[int] = ()) -> int:
    """The recorded compactions a file counts: each belongs to the first request after
    it, and is counted where that request is (one after the last request: here)."""
    if not elsewhere:
        return session.compaction_count
    gone = 0
    done = 0
    for r in session.requests:
        if r.segment > done:
            if r.key is not None and r.key in elsewhere:
                gone += r.segment - done
            done = r.segment
    return session.compaction_count - gone
