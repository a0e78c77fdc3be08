"""What each agent does, by the format of its sessions, with its documented defaults and
where they were read (docs/replay.md, "The session's setting"): the decision model that
fits it, what it keeps when it compacts, where a compaction can happen, the window it
opens a model with, when it compacts by itself, its cache TTL, and the model it runs when
a file names none.

* **bash-agent** (and OpenAI chat logs) ask compact-dp before every request and keep the
  best number of recent messages.
* **Claude Code** and **Codex** summarise the whole history when they compact (Claude
  Code may keep a few recent messages verbatim; Codex keeps recent user prompts inside
  its summary).  A user can only type ``/compact`` between turns, and the agent compacts
  by itself when the context reaches its threshold, which a ``PreCompact`` hook may hold
  back until a safety margin.

These are defaults: what a session recorded of its own world wins over them (world.py).
Every figure here says where it was read and when (checked 2026-12-01).
"""

from __future__ import annotations

# Where a compaction may happen: before any request, or at a turn end (an agent's
# ``points``); and, in a replay's schedule of points, where the recording itself compacted.
# Replay, hindsight and backtest name a point by these and by no other spelling.
REQUEST, TURN, RECORDED = "request", "turn", "recorded"
POINTS = (REQUEST, TURN)
# What set a recorded compaction off: the agent by itself at its threshold, or a user at
# the prompt (Claude Code's compactMetadata.trigger spells them so).
AUTO, MANUAL = "auto", "manual"
# How close (% of the window) to the end a held-back automatic compaction goes ahead: the
# PreCompact hook never blocks within it (its --margin default), and replay's dp and
# hindsight let the context wait no further (world.hold_limit), since not compacting there
# would fail the next request.  One figure, so replay holds back as the hook does.
HOLD_MARGIN = 10.0
LONG_WINDOW = 1_000_000                  # the 1M-token window of current Claude models


def version_of(text: str | None) -> tuple[int, ...] | None:
    """``2.1.217`` as (2, 1, 217); None for anything else."""
    if not text:
        return None
    parts = text.strip().split(".")
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        return None


class Agent:
    """One agent's behaviour (the defaults; world.py learns each session's own)."""

    __slots__ = ("format", "model", "keep", "points", "cache_ttl", "seed_summary", "name")

    def __init__(self, format: str, name: str, model: str, keep: str, points: str, *,
                 cache_ttl: str = "5m", seed_summary: float | None = None):
        self.format, self.name, self.model, self.keep, self.points = (format, name, model,
                                                                       keep, points)
        # S for a seed model before the session shows a summary of its own: the seed
        # models answer as they always did (the cache-aware one takes the profile's)
        self.seed_summary = seed_summary
        self.cache_ttl = cache_ttl              # its provider's, for a model not in the table

    @property
    def whole(self) -> bool:
        return self.keep == "none"

    def window(self, llm: str | None, table_window: int | None, started: float | None
               ) -> tuple[int | None, str]:
        """The window it opens ``llm`` with, and why (None: the price table's or nothing
        known)."""
        return table_window, "the price table"

    def auto_point(self, window: float, version: str | None, environ: dict[str, str]
                   ) -> tuple[float | None, str]:
        """The prompt size at which it compacts by itself in a window (None: never), and
        why."""
        return None, f"{self.name} does not compact by itself"

    def default_llm(self, version: str | None) -> tuple[str, str] | None:
        """The model it runs when a file names none, and why (None: no such default)."""
        return None


class ClaudeCode(Agent):
    """Claude Code: it compacts itself at the window less a reserve for the summary's output
    and a buffer.  From 2.1.21 the reserve is min(max output, 20,000) and the buffer
    13,000, 33,000 in all (services/compact/autoCompact.ts; CHANGELOG 2.1.21, "Fixed
    auto-compact triggering too early on models with large output token limits"); before,
    the whole 32,000-token output was reserved, 45,000 in all ("Autocompact buffer:
    45.0k" in /context).  ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` (``autoCompactWindow``) can
    only lower the window it is computed on, ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` only bring
    it earlier, and ``DISABLE_AUTO_COMPACT`` or ``DISABLE_COMPACT`` turn it off
    (code.claude.com env-vars; anthropics/claude-code#31806)."""

    RESERVE = 33_000.0
    OLD_RESERVE = 45_000.0
    SINCE = (2, 1, 21)
    # Claude Code opened these models at 200k until 1M context became generally available
    # on 2026-03-13 (claude.com/blog/1m-context-ga: "Max, Team, and Enterprise users on
    # Opus 4.6 will default to 1M context automatically"); transcripts name a model
    # without its [1m] suffix, so a session's own prompts are the better evidence
    LONG_SINCE = {"claude-opus-4-6": "2026-03-13", "claude-sonnet-4-6": "2026-03-13"}

    def window(self, llm: str | None, table_window: int | None, started: float | None
               ) -> tuple[int | None, str]:
        since = self.LONG_SINCE.get(llm or "")
        if since is not None and table_window == LONG_WINDOW:
            from .sessions.timefmt import date_of
            day = date_of(started, utc=True)
            if day is not None and day < since:
                return 200_000, f"Claude Code opened {llm} at 200k before {since}"
            return table_window, f"Claude Code opens {llm} at 1M from {since}"
        return table_window, "the price table"

    def auto_point(self, window: float, version: str | None, environ: dict[str, str]
                   ) -> tuple[float | None, str]:
        for off in ("DISABLE_AUTO_COMPACT", "DISABLE_COMPACT"):
            if environ.get(off) not in (None, "", "0", "false"):
                return None, f"off: {off} is set"
        v = version_of(version)
        old = v is not None and v < self.SINCE
        reserve = self.OLD_RESERVE if old else self.RESERVE
        capped, words = window, ""
        for name in ("CLAUDE_CODE_AUTO_COMPACT_WINDOW",):
            given = _number(environ.get(name))
            if given is not None and given < window:
                capped, words = given, f" ({name} {given:,.0f})"
        point = capped - reserve
        which = f"Claude Code {version}" if version else "Claude Code"
        why = (f"{which}'s default: the window{words} less {reserve:,.0f} "
               f"({'before' if old else 'from'} 2.1.21)")
        pct = _number(environ.get("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"))
        if pct is not None and 0 < pct <= 100 and capped * pct / 100 < point:
            point, why = capped * pct / 100, f"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE {pct:g} %"
        return max(0.0, point), why


class Codex(Agent):
    """Codex: it compacts itself at 90 % of the model's catalog window, or at
    ``model_auto_compact_token_limit`` (no higher, from 0.100) (openai/codex,
    protocol/src/openai_models.rs: "core derives it from context_window (90%)"; PR #5292,
    2025-10-17, "Auto compact at ~90%"); before 0.48 it had only a fixed limit above
    gpt-5's window.  Its ``token_count`` events report the usable window, 95 % of the
    catalog's (272,000 × 0.95 = 258,400, openai/codex#19319).  A rollout that names no
    model ran the CLI's default (ccusage bills such a rollout as ``gpt-5``)."""

    SINCE = (0, 48)
    USABLE = 0.95
    CATALOG = 272_000                   # the catalog window of GPT-5 models in Codex
    DEFAULT_MODELS = (                  # (first version, its default model)
        ((0, 0), "gpt-5"),              # PR #1943, August 2025
        ((0, 40), "gpt-5-codex"),       # PR #4076, 2025-09-23
        ((0, 58), "gpt-5.1-codex"),     # PRs #6653/#6654, 2025-11-14
    )

    def window(self, llm: str | None, table_window: int | None, started: float | None
               ) -> tuple[int | None, str]:
        catalog = min(self.CATALOG, table_window or self.CATALOG)
        return int(catalog * self.USABLE), \
            f"Codex's usable window: {catalog:,} × 95 % (its catalog)"

    @classmethod
    def catalog_of(cls, reported: float) -> float:
        """The catalog window a reported one is 95 % of (258,400 → 272,000), or itself:
        Codex before 0.57 reported the catalog window."""
        catalog = reported / cls.USABLE
        return float(round(catalog)) if abs(catalog - round(catalog, -3)) < 1 else reported

    def auto_point(self, window: float, version: str | None, environ: dict[str, str]
                   ) -> tuple[float | None, str]:
        v = version_of(version)
        if v is not None and v < self.SINCE:
            return None, f"Codex {version} compacted by itself only past the window"
        which = f"Codex {version}" if version else "Codex"
        return int(self.catalog_of(window) * 9 / 10), \
            f"{which}'s default: 90 % of the catalog window"

    def default_llm(self, version: str | None) -> tuple[str, str] | None:
        v = version_of(version) or (0, 0)
        chosen = self.DEFAULT_MODELS[0][1]
        for since, model in self.DEFAULT_MODELS:
            if v >= since:
                chosen = model
        which = f"Codex {version}" if version else "a Codex CLI of unknown version"
        return chosen, f"the rollout names no model: {which}'s default, {chosen}"


def _number(text: str | None) -> float | None:
    try:
        x = float(text) if text else None
    except ValueError:
        return None
    return x if x is not None and x == x and x > 0 else None


AGENTS: dict[str, Agent] = {a.format: a for a in (
    Agent("bash-agent", "bash-agent", "v3.0.7", "best", REQUEST),
    Agent("openai", "an OpenAI chat log", "v3.0.7", "best", REQUEST),
    ClaudeCode("claude-code", "Claude Code", "cache-clock", "none", TURN,
               seed_summary=8000.0),
    Codex("codex", "Codex", "cache-clock", "none", TURN, cache_ttl="2h",
          seed_summary=8000.0),
)}


def agent_of(format: str) -> Agent:
    return AGENTS.get(format, AGENTS["bash-agent"])

