"""The world a session ran in, learned from the session itself: its context window, the
point where its agent compacts by itself, its cache TTL, what a compaction keeps, and
the model it runs when the file names none — each with where it came from, and the
figures nobody showed (``assumed``) said, never used in silence (docs/replay.md, "The
session's setting").

Each figure is taken, in order, from what the caller gave (an option), from what the
session recorded of it, from what its agent documents for that version and model
(agents.py), from the price table, and only then from a generic default, which is
*assumed*.  What a session recorded:

* **the window** — Codex reports it (``model_context_window``, per model); Claude Code's
  status line sends it.  A prompt (or a compaction's ``preTokens``) larger than a window
  proves a larger one, and an automatic compaction well before a window's own point
  proves a smaller one: Claude Code's transcripts name a model without its ``[1m]``
  suffix, so these are the evidence between 200k and 1M.
* **the auto-compaction point** — Claude Code's automatic compactions record the
  context's size (``compactMetadata.preTokens``): the point is the smallest (the agent
  checks before each request, and a turn can overshoot).  A session that sent a prompt
  past the documented point and then another without compacting shows the agent did not
  compact there: its auto-compaction was off (or set higher).
* **the TTL** — its cache writes: 1 hour when most of them were 1-hour writes.
* **what a compaction keeps** — Claude Code's ``preservedSegment``: recent messages kept
  verbatim after the summary.

This module is as light as the decision: the status line builds a world on every call.
"""

from __future__ import annotations

from .agents import AUTO, LONG_WINDOW, Agent, agent_of
from .sessions.session import write_ttl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from .pricing.table import Prices
    from .sessions.session import Session

STANDARD_WINDOW = 200_000
WINDOWS = (STANDARD_WINDOW, LONG_WINDOW)     # the windows Claude models run with
EARLY = 0.9             # an automatic compaction this far before a window's point: smaller
OVERSHOOT = 1.01        # a prompt this far past the point, followed in its context: not auto
GIVEN = "given"         # a figure's source when the caller gave it (a what-if)


class World:
    """A session's setting: every figure with its source in words; ``assumed``: the ones
    the session did not show and no documented default gave."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.context_window = float(STANDARD_WINDOW)
        self.window_known = True                   # False: nothing said it (the default)
        self.windows: dict[str, float] = {}        # per model, where it differs
        self.auto_compact_tokens: float | None = None
        self.auto_from_window = False              # the point is the agent's rule for it
        self.ttl: str | None = None                # None: each request's, as recorded
        self.keeps = "none"
        self.kept_messages: int | None = None      # what recorded compactions kept
        self.fallback_llm: str | None = None       # the model of requests that name none
        self.write_premium = True                  # False: its usage counts no writes
        self.sources: dict[str, str] = {}
        self.assumed: list[str] = []

    def window_for(self, llm: str | None) -> float:
        """The window of a request on ``llm``."""
        return self.windows.get(llm or "", self.context_window)

    @property
    def hold_limit(self) -> float:
        """How far a held-back automatic compaction may wait: agents.HOLD_MARGIN short of the
        window, and never before the agent's own point (which is the limit then)."""
        from .agents import HOLD_MARGIN
        margin = self.context_window * (1 - HOLD_MARGIN / 100)
        auto = self.auto_compact_tokens
        return self.context_window if auto is None else max(auto, margin)

    @property
    def own_auto(self) -> bool:
        """The automatic compaction point is the session's own — learned from it, the
        limit it reported, or its agent's rule for its own window — not a what-if the
        caller gave (a point, or a window the rule took it from): so the recording's
        automatic compactions are where the agent compacts in this setting too."""
        return self.auto_compact_tokens is not None and \
            self.sources.get("auto_compact_tokens") != GIVEN and \
            not (self.auto_from_window and self.sources.get("context_window") == GIVEN)

    def record(self) -> dict[str, object]:
        """The ``setting`` object of ``--json`` (docs/replay.md)."""
        return {"context_window": self.context_window,
                "windows": dict(self.windows) or None,
                "auto_compact_tokens": self.auto_compact_tokens, "ttl": self.ttl,
                "keeps": self.keeps, "kept_messages": self.kept_messages,
                "model": self.fallback_llm, "sources": dict(self.sources)}


class Given:
    """What a caller gave of the setting (None: learn it)."""

    def __init__(self, context_window: float | None = None,
                 auto_compact_tokens: float | None = None, auto_off: bool = False,
                 ttl: str | None = None, keep: str | None = None,
                 live_window: float | None = None):
        self.context_window, self.auto_compact_tokens = context_window, auto_compact_tokens
        self.auto_off, self.ttl, self.keep = auto_off, ttl, keep
        self.live_window = live_window      # what the agent itself said (the status line)


def learn(session: Session, given: Given | None = None,
          environ: Mapping[str, str] | None = None) -> World:
    """The world ``session`` ran in (the module docstring says how)."""
    from .pricing.table import find

    given = given or Given()
    env = dict(environ or {})
    agent = agent_of(session.format)
    world = World(agent)
    llms = [m for m in session.llms if m]
    fallback = agent.default_llm(session.version) if not llms and session.request_count \
        else None
    if fallback is not None:
        world.fallback_llm = fallback[0]
        world.sources["model"] = fallback[1]
        world.assumed.append(f"model: {fallback[1]}")
        llms = [fallback[0]]
    # the model that carries the conversation: the one whose prompts grew largest (a
    # side model, Claude Code's Haiku calls, may have made the last request)
    peaks = {m: p for m, p in session.peaks.items() if m}
    main = max(peaks, key=lambda m: peaks[m]) if peaks else \
        session.llm or world.fallback_llm
    known = {m: find(m) for m in llms}
    for m, entry in known.items():
        if entry is None:
            world.assumed.append(f"prices of {m}: not in the price table, billed at the "
                                 "default prices")
    if session.request_count and not llms and agent.whole:
        world.assumed.append("prices: the session names no model, billed at the default "
                             "prices")
    _window(world, session, given, known, main)
    _auto(world, session, given, env)
    _ttl(world, session, given, known, main)
    _keeps(world, session, given)
    if not session.write_counts and any(e is not None and e.cache_write
                                        for e in known.values()):
        world.write_premium = False
        world.assumed.append("cache writes: the rollout counts none apart, so they are "
                             "billed as input, as it records them")
    return world


def _window(world: World, session: Session, given: Given,
            known: Mapping[str, Prices | None], main: str | None) -> None:
    agent = world.agent
    if given.context_window is not None:
        world.context_window = given.context_window
        world.sources["context_window"] = GIVEN
        return
    if given.live_window:
        world.context_window = given.live_window
        world.sources["context_window"] = f"{agent.name}'s status line"
        return
    if session.windows:                       # Codex: what it reported, per model
        for m, w in session.windows.items():
            world.windows[m or (main or "")] = float(w)
        world.context_window = float(session.window or max(session.windows.values()))
        world.sources["context_window"] = "the context window the agent reported"
        return
    entry = known.get(main) if main else None
    table = entry.context_window if entry is not None else None
    window, words = agent.window(main, table, session.started)
    if window is None:
        window, words = STANDARD_WINDOW, "the default"
        world.window_known = False
        if session.request_count and agent.whole:
            world.assumed.append(f"context window: {STANDARD_WINDOW:,} (the model is not "
                                 "in the price table)")
    evidence = max([*session.peaks.values(), 0] +
                   [m.pre_tokens or 0 for m in session.marks])
    if evidence > window:
        larger = [w for w in WINDOWS if w >= evidence]
        window = larger[0] if larger else evidence
        words = f"{window:,.0f}: a prompt of {evidence:,} proves more than {words}'s"
    elif agent.format == "claude-code":
        autos = [m.pre_tokens for m in session.marks
                 if m.trigger == AUTO and m.pre_tokens]
        if autos and window > STANDARD_WINDOW >= max(autos):
            point, _ = agent.auto_point(window, session.version, {})
            if point is not None and min(autos) < EARLY * point:
                window = STANDARD_WINDOW
                words = (f"200,000: the session compacted by itself at {min(autos):,}, "
                         f"long before a {window:,.0f} window's point")
    world.context_window = float(window)
    world.sources["context_window"] = words


def _auto(world: World, session: Session, given: Given, env: Mapping[str, str]) -> None:
    agent = world.agent
    if given.auto_off or given.auto_compact_tokens is not None:
        world.auto_compact_tokens = None if given.auto_off else given.auto_compact_tokens
        world.sources["auto_compact_tokens"] = GIVEN
        return
    autos = [m.pre_tokens for m in session.marks if m.trigger == AUTO and m.pre_tokens]
    if autos:
        world.auto_compact_tokens = float(min(autos))
        n = len(autos)
        world.sources["auto_compact_tokens"] = (
            f"the session's own automatic compaction{'s' if n > 1 else ''} "
            f"(the smallest of {n:,})" if n > 1 else
            "the session's own automatic compaction")
        return
    if session.auto_limit:
        limit = float(session.auto_limit)
        world.auto_compact_tokens = limit
        world.sources["auto_compact_tokens"] = "the limit the agent reported"
        return
    window = world.context_window
    point, words = agent.auto_point(window, session.version, dict(env))
    # the evidence of "off" is about the session's own window: a window the caller gave
    # is a what-if, and the recording says nothing of that window's point
    learned = world.sources.get("context_window") != GIVEN
    if point is not None and learned and session.passed > point * OVERSHOOT:
        world.auto_compact_tokens = None
        world.sources["auto_compact_tokens"] = (
            f"off: the session went on past a prompt of {session.passed:,} without "
            f"compacting ({words}: {point:,.0f})")
        return
    world.auto_compact_tokens = point
    world.sources["auto_compact_tokens"] = words
    world.auto_from_window = True


def _ttl(world: World, session: Session, given: Given, known: Mapping[str, Prices | None],
         main: str | None) -> None:
    if given.ttl:
        world.ttl = given.ttl
        world.sources["ttl"] = GIVEN
        return
    w5, w1 = session.writes_5m, session.writes_1h
    if w5 or w1:
        world.ttl = write_ttl(w5, w1)
        share = w1 / (w5 + w1)
        world.sources["ttl"] = f"the session's cache writes ({share:.0%} of them 1-hour)"
        return
    entry = known.get(main) if main else None
    if entry is not None:
        world.ttl = entry.default_ttl
        world.sources["ttl"] = f"{entry.provider}'s default (no cache write recorded)"
        return
    world.ttl = world.agent.cache_ttl
    world.sources["ttl"] = f"{world.agent.name}'s provider's default"
    if session.request_count and world.agent.whole:
        world.assumed.append(f"cache TTL: {world.ttl} (no cache write recorded, and the "
                             "model is not in the price table)")


def _keeps(world: World, session: Session, given: Given) -> None:
    agent = world.agent
    keep = given.keep if given.keep not in (None, "auto") else agent.keep
    if given.keep not in (None, "auto"):
        world.keeps = "best" if keep == "best" else "none"
        world.sources["keeps"] = GIVEN
        return
    if keep == "best":
        world.keeps = "best"
        world.sources["keeps"] = f"{agent.name} keeps the decision's best k"
        return
    kept = [m.kept for m in session.marks if m.kept is not None]
    if kept and max(kept) > 0:
        from .core.middle import upper_middle
        world.keeps = "recent"
        world.kept_messages = upper_middle(kept)
        world.sources["keeps"] = (
            "the session's compactions kept recent messages verbatim (preservedSegment: "
            f"{', '.join(f'{k:,}' for k in kept)})")
        return
    world.keeps = "none"
    world.sources["keeps"] = (
        f"{agent.name}'s compactions recorded keep no message" if kept else
        "Codex keeps recent user prompts inside its summary, no message" if
        agent.format == "codex" else f"{agent.name} keeps no message")
