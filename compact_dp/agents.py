"""What each agent does, by the format of its sessions: the decision model that fits it,
what it keeps when it compacts, where a compaction can happen, when it compacts by itself,
and what a compaction leaves behind (docs/replay.md, docs/formats.md).

* **bash-agent** (and OpenAI chat logs) ask compact-dp before every request and keep the
  best number of recent messages.
* **Claude Code** and **Codex** keep no message when they compact (Codex keeps recent user
  prompts inside its summary).  A user can only type ``/compact`` between turns — after the
  last reply, before the next message — and the agent compacts by itself when the context
  reaches its threshold (Claude Code: 33,000 tokens short of the window; Codex: 90 % of
  it), which a ``PreCompact`` hook may hold back until a safety margin.

What a compaction leaves is measured on real sessions (``make calibrate``): the summary,
the context right after it and what of that was still cached.  A session's own recorded
compactions win over these defaults.
"""

from __future__ import annotations

REQUEST, TURN = "request", "turn"        # where a compaction may happen
POINTS = (REQUEST, TURN)
HOLD_MARGIN = 10.0     # a held-back automatic compaction goes ahead this close (%) to the end


class Agent:
    """One agent's behaviour."""

    __slots__ = ("format", "model", "keep", "points", "auto_reserve", "auto_percent",
                 "cache_ttl", "seed_summary")

    def __init__(self, format: str, model: str, keep: str, points: str, *,
                 auto_reserve: float | None = None, auto_percent: float | None = None,
                 cache_ttl: str = "5m", seed_summary: float | None = None):
        self.format, self.model, self.keep, self.points = format, model, keep, points
        # S for a seed model before the session shows a summary of its own: the seed
        # models answer as they always did (the cache-aware one takes the profile's)
        self.seed_summary = seed_summary
        self.auto_reserve = auto_reserve        # compacts itself this many tokens short
        self.auto_percent = auto_percent        # ... or at this share of the window
        self.cache_ttl = cache_ttl              # its provider's, for a model not in the table

    def auto_threshold(self, window: float) -> float | None:
        """The prompt size at which the agent compacts by itself (None: it never does)."""
        if self.auto_reserve is not None:
            return window - self.auto_reserve
        if self.auto_percent is not None:
            return window * self.auto_percent / 100
        return None

    @property
    def whole(self) -> bool:
        return self.keep == "none"


AGENTS = {a.format: a for a in (
    Agent("bash-agent", "v3.0.7", "best", REQUEST),
    Agent("openai", "v3.0.7", "best", REQUEST),
    Agent("claude-code", "cache-clock", "none", TURN, auto_reserve=33_000.0,
          seed_summary=8000.0),
    Agent("codex", "cache-clock", "none", TURN, auto_percent=90.0, cache_ttl="2h",
          seed_summary=8000.0),
)}


def agent_of(format: str) -> Agent:
    return AGENTS.get(format, AGENTS["bash-agent"])
