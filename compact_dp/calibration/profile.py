"""The profile: what real sessions of each agent showed, which the decision and replay use
where a session does not show its own (docs/calibrate.md).

* **What a compaction leaves**, per agent: the summary's tokens; how much context it left
  beyond the fixed prefix of the context it replaced (the summary plus what the agent
  re-injects); how much of that was still cached.
* **The fixed prefix** of a session that starts afresh (system prompt, tools, memory
  files): a file whose first prompt, less its messages, is far longer started part-way
  into a session, and the rest is history it does not show.
* **The forecast** of the requests still to come (core.horizon): a level per agent, one
  exponent, and the coefficients of the chance that a turn is the session's last; and how
  much evidence the level is worth against a project's own earlier sessions
  (``project_weight``, calibration.project).

The built-in profile (``default.json``) is fitted on real sessions of other projects by
``make calibrate``; ``compact-dp calibrate`` fits one on the user's own sessions and writes
it to the user's config folder, where every command finds it.  ``COMPACT_DP_PROFILE``
names another file, or ``none`` for the built-in one.
"""

from __future__ import annotations

import math
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

VERSION = 1
BUILT_IN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "default.json")
FALLBACK = "*"                  # the agent entry for any other format


class AgentFigures:
    """One agent's figures (None where nothing was measured)."""

    __slots__ = ("summary_tokens", "after_extra", "after_cached", "level", "compactions",
                 "sessions", "prefix", "compaction_seconds", "compaction_seconds_per_mtok",
                 "timed_compactions")

    def __init__(self, summary_tokens: float | None = None, after_extra: float | None = None,
                 after_cached: float | None = None, level: float = 38.0,
                 compactions: int = 0, sessions: int = 0, prefix: float | None = None,
                 compaction_seconds: float | None = None,
                 compaction_seconds_per_mtok: float | None = None,
                 timed_compactions: int = 0):
        self.summary_tokens, self.after_extra = summary_tokens, after_extra
        self.after_cached, self.level = after_cached, level
        self.compactions, self.sessions = compactions, sessions
        self.prefix = prefix        # the fixed prefix of a session that starts afresh
        # how long a compaction takes: seconds at an empty context, and more per million
        # tokens of context, from the compactions timed (docs/calibrate.md)
        self.compaction_seconds = compaction_seconds
        self.compaction_seconds_per_mtok = compaction_seconds_per_mtok
        self.timed_compactions = timed_compactions

    def duration(self, tokens: float) -> float | None:
        """The seconds a compaction of a context of ``tokens`` is expected to take (None:
        none was timed)."""
        base, slope = self.compaction_seconds, self.compaction_seconds_per_mtok
        if base is None or not self.timed_compactions:
            return None
        return max(0.0, base + (slope or 0.0) * max(0.0, tokens) / 1e6)

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}


class Profile:
    """Per-agent figures, the forecast's shape, and where they came from."""

    def __init__(self, agents: dict[str, AgentFigures], exponent: float,
                 end: tuple[float, float, float], source: str, fitted: str = "",
                 path: str | None = None, project_weight: float | None = None,
                 log_error: float | None = None):
        self.agents, self.exponent, self.end = agents, exponent, end
        self.source, self.fitted, self.path = source, fitted, path
        # the level's weight against a project's own sessions, in their Σ (j + 1)^a (None:
        # the built-in profile's, for a profile written before it was measured)
        self.project_weight = project_weight
        # the forecast's mean |ln(forecast / what came)| at the turn ends it was fitted on
        # (None: not measured): the uncertainty the decision holds a compaction within
        self.log_error = log_error

    def agent(self, format: str) -> AgentFigures:
        return self.agents.get(format) or self.agents.get(FALLBACK) or AgentFigures()

    def record(self) -> dict[str, object]:
        """Which profile, for ``--json`` (the decision's and replay's): what it was fitted
        on and its file."""
        return {"source": self.source, "path": self.path}

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "profile_version": VERSION, "source": self.source, "fitted": self.fitted,
            "exponent": self.exponent, "end_chance": list(self.end)}
        if self.project_weight is not None:
            out["project_weight"] = self.project_weight
        out["log_error"] = self.log_error
        out["agents"] = {k: a.as_dict() for k, a in sorted(self.agents.items())}
        return out

    @classmethod
    def from_dict(cls, data: object, path: str | None = None) -> Profile:
        """The profile a file holds; ValueError for anything else, checked to the last
        figure here, so that a hand-edited file fails where it is read, never later in a
        decision."""
        if not isinstance(data, dict) or type(data.get("profile_version")) is not int or \
                data["profile_version"] != VERSION:                 # (True == 1 too)
            raise ValueError("not a compact-dp profile of this version")
        entries, end = data.get("agents"), data.get("end_chance")
        if not isinstance(entries, dict) or not all(isinstance(e, dict)
                                                    for e in entries.values()):
            raise ValueError("agents: not an object of objects")
        if not isinstance(end, list) or len(end) != 3:
            raise ValueError("end_chance: not three numbers")
        agents = {}
        for name, entry in entries.items():
            figures = {k: _number(entry[k], f"{name}.{k}", *RANGES[k])
                       for k in AgentFigures.__slots__ if entry.get(k) is not None}
            for k in ("compactions", "sessions", "timed_compactions"):
                if k in figures:
                    figures[k] = int(figures[k])
            agents[name] = AgentFigures(**figures)  # type: ignore[arg-type]
        b0, bt, bj = (_number(x, "end_chance") for x in end)
        source, fitted = data.get("source"), data.get("fitted", "")
        if not isinstance(source, str) or not isinstance(fitted, str):
            raise ValueError("source, fitted: not text")
        weight = data.get("project_weight")
        log_error = data.get("log_error")
        return cls(agents, _number(data.get("exponent"), "exponent", 0.0, 1.0), (b0, bt, bj),
                   source, fitted, path,
                   None if weight is None else _number(weight, "project_weight", 0.0),
                   None if log_error is None else _number(log_error, "log_error", 0.0))


# what each agent figure may be: tokens and counts are never negative, a level is positive
RANGES: dict[str, tuple[float, float]] = {
    "summary_tokens": (0.0, math.inf), "after_extra": (-math.inf, math.inf),
    "after_cached": (0.0, math.inf), "level": (1e-300, math.inf),
    "compactions": (0.0, math.inf), "sessions": (0.0, math.inf), "prefix": (0.0, math.inf),
    "compaction_seconds": (0.0, math.inf), "compaction_seconds_per_mtok": (0.0, math.inf),
    "timed_compactions": (0.0, math.inf)}


def _number(x: object, what: str, lo: float = -math.inf, hi: float = math.inf) -> float:
    """A finite JSON number in [lo, hi] (not a string, not true or false)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or \
            not lo <= x <= hi:
        raise ValueError(f"{what}: {x!r} is not a number in the range it must be in")
    return float(x)


def user_profile_path(environ: Mapping[str, str]) -> str | None:
    """$XDG_CONFIG_HOME/compact-dp/profile.json, else $HOME/.config/compact-dp/...; None
    without either: the environment given is the whole truth, as for the session folders
    (history.default_folders), so that a caller's own environment is never mixed with the
    process's."""
    from ..environment import home_of
    home = home_of(environ)
    base = environ.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
    return os.path.join(base, "compact-dp", "profile.json") if base else None


_CACHE: dict[str, Profile] = {}


def load_profile(environ: Mapping[str, str]) -> Profile:
    """The profile in force: $COMPACT_DP_PROFILE (a file, or ``none``), else the user's
    (from ``compact-dp calibrate``), else the built-in one.  A user profile that cannot be
    read, or holds anything but a valid profile, is passed over for the built-in one
    (the decision must never fail on it)."""
    named = environ.get("COMPACT_DP_PROFILE")
    mine = user_profile_path(environ)
    candidates = [] if named == "none" else [named] if named else [mine] if mine else []
    for path in candidates + [BUILT_IN]:
        if path in _CACHE:
            return _CACHE[path]
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError:
            continue
        try:
            from ..lightjson import loads
            profile = Profile.from_dict(loads(raw), path)
        except (ValueError, RecursionError):
            if path == BUILT_IN:
                raise
            continue
        _CACHE[path] = profile
        return profile
    raise FileNotFoundError(BUILT_IN)


def project_weight(profile: Profile) -> float:
    """The profile's weight against a project's own sessions (the built-in profile's when
    it was written without one)."""
    if profile.project_weight is not None:
        return profile.project_weight
    built_in = load_profile({"COMPACT_DP_PROFILE": "none"}).project_weight
    return built_in if built_in is not None else DEFAULT_PROJECT_WEIGHT


DEFAULT_PROJECT_WEIGHT = 50.0    # only for a built-in profile without one (never shipped)
