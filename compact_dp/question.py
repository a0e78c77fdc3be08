"""What a decision about a session is asked with, and where each part came from.

Each parameter comes from, in order: the caller; what the session records (turns,
requests, compactions, input, V, S, what its compactions left); the price table (the
session's model, or ``price``); the env var; what real sessions of that agent showed (the
profile: calibration); the documented default.  Every value keeps its *origin* — a code
logic may test (``GIVEN``, ``SESSION``, …) — and the words ``--explain`` shows.

The forecast of the requests to come (``horizon``): ``seed`` is E × L; ``auto`` the
profile's forecast from the requests so far, its level learned on the project's earlier
sessions where the caller asks for them (``project``: calibration.project) — the default of
the cache-aware model on a session with usage; ``profile`` the profile's alone; a number
fixes it.
"""

from __future__ import annotations

import math

from .agents import agent_of
from .asking import Answer, Ask, PolicyAsk, answer, awk_names, model_named
from .calibration.profile import Profile, load_profile, project_weight
from .core.awkvalue import AwkValue
from .core.horizon import AUTO, SEED, end_chance, forecast, parse_horizon
from .core.horizon import PROFILE as ALONE
from .core.middle import upper_middle
from .core.models import Model
from .core.params import BY_AWK, native_values
from .core.scan import Conversation
from .core.wait import Outlook
from .errors import BadValue
from .pricing.clock import CacheClock, cache_clock
from .pricing.table import Prices, defaults, find
from .sessions.session import USER, Aftermath, Session
from .sessions.sizing import share
from .views.words import count
from .world import GIVEN, Given, World, learn

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from .calibration.project import Evidence, History

# where a value came from (GIVEN, the caller, is the world's word too)
SESSION, PRICES, ENV, PROFILE, DEFAULT = ("session", "prices", "env", "profile", "default")
KEEP_MODES = ("auto", "best", "none")
STAT_WORDS = {"t": "user turns", "total_requests": "API requests",
              "total_compact": "compactions", "total_input": "recorded prompt tokens",
              "V": "the fixed prefix: the first request's prompt less its messages",
              "S": "the last compaction's summary",
              "after_tokens": "what its compactions left",
              "after_cached": "what of it was still cached"}
PRICE_PARAMS = {"p_input": "input", "p_cache": "cache_read", "p_out": "output"}
SHOWN = list(STAT_WORDS) + list(PRICE_PARAMS) + ["max_context"]


class Sourced:
    """A parameter's value, its origin (a code) and where it came from in words."""

    __slots__ = ("value", "origin", "words")

    def __init__(self, value: float, origin: str, words: str):
        self.value, self.origin, self.words = value, origin, words


class Options:
    """The one set of keywords every entry point takes (the CLI's options, the Python
    API's arguments): parameter values by name, and how to ask."""

    def __init__(self, params: Mapping[str, object] | None = None, *,
                 model: str | Model | None = None, keep: str = "auto",
                 price: str | None = None, cache_ttl: str | None = None,
                 p_write: float | None = None, now: float | None = None,
                 horizon: str | float | None = None, policy: PolicyAsk | None = None,
                 environ: Mapping[str, str] | None = None,
                 auto_compact_tokens: float | None = None, auto_off: bool = False,
                 live_window: float | None = None, project: str | History | None = None,
                 project_now: float | None = None, project_deadline: float | None = None):
        if keep not in KEEP_MODES:
            raise BadValue("keep", f"{keep!r} is not one of {', '.join(KEEP_MODES)}")
        if isinstance(horizon, str):
            try:
                horizon = parse_horizon(horizon)
            except ValueError as e:
                raise BadValue("horizon", str(e)) from None
        elif horizon is not None:
            if not (horizon > 0 and math.isfinite(horizon)):
                raise BadValue("horizon", f"{horizon!r} is not a positive number of requests")
            horizon = float(horizon)         # horizon=20 from a caller means 20.0 requests
        self.params = dict(params or {})
        self.model, self.keep, self.price, self.cache_ttl = model, keep, price, cache_ttl
        self.p_write, self.now, self.horizon, self.policy = p_write, now, horizon, policy
        self.environ: Mapping[str, str] = environ or {}
        # the setting (world.py): the agent's auto-compaction point, or none; the window
        # the agent itself reported (the status line's context_window_size)
        self.auto_compact_tokens, self.auto_off = auto_compact_tokens, auto_off
        self.live_window = live_window
        # the project's earlier sessions, for the forecast's level (calibration.project):
        # None, the profile's alone; "auto", found from the session's file; or given (a
        # History, backtest's); taken as they stood at ``project_now`` (else ``now``, else
        # the clock), reading what is not cached until ``project_deadline`` (monotonic)
        self.project, self.project_now = project, project_now
        self.project_deadline = project_deadline


def session_stats(session: Session) -> dict[str, float]:
    """The parameters the session itself records (docs/formats.md): user turns, requests,
    compactions, input tokens, the fixed prefix V, the last summary's size S, and what
    its compactions left (the medians of its own)."""
    stats: dict[str, float] = {"t": session.user_turns,
                               "total_requests": session.request_count}
    if session.format != "bash-agent":           # bash-agent files record no compaction
        stats["total_compact"] = session.compaction_count
    if session.input_tokens is not None:
        stats["total_input"] = session.input_tokens
    if session.prefix is not None:
        stats["V"] = session.prefix
    stats.update(compaction_stats(session.aftermath))
    return stats


def compaction_stats(aftermath: list[Aftermath]) -> dict[str, float]:
    """S, the last summary's size, and what compactions left (the medians of their own),
    from the compactions seen so far (replay asks it with the ones before its moment)."""
    stats: dict[str, float] = {}
    if aftermath and aftermath[-1].summary is not None:
        stats["S"] = aftermath[-1].summary
    left = upper_middle(a.left for a in aftermath if a.left is not None)
    read = upper_middle(a.first_read for a in aftermath if a.first_read is not None)
    if left is not None and read is not None:
        stats["after_tokens"] = left or 1.0
        stats["after_cached"] = read or 1.0
    return stats


PART_WAY = 2.0        # a first prefix this many times the agent's fresh one: part-way


def hidden_history(session: Session, profile: Profile) -> tuple[float, float] | None:
    """(the fixed prefix, the history the file does not show) of a session that starts
    part-way into another (an Entire checkpoint, a continued session): its first prompt,
    less its messages, is far longer than the agent's fixed prefix when it starts afresh,
    so the rest is earlier conversation — which a compaction replaces like any other."""
    V = session.segment_prefixes[0] if session.segment_prefixes else None
    fresh = profile.agent(session.format).prefix
    if V is None or fresh is None or not V > PART_WAY * fresh:
        return None
    return fresh, V - fresh


def session_conversation(session: Session, hidden: float = 0.0) -> Conversation:
    """The live context as the core sees it: message sizes and user turns (v2's older
    user-line test is a bash-agent byte rule; other formats' turns serve it too) — or, for
    a summary, its totals only; ``hidden``: history the file does not show (a message
    before the first)."""
    extra = round(hidden) if session.live_start == 0 else 0
    if not session.full:
        return Conversation.summed(session.live_messages + (extra > 0),
                                   session.live_tokens + extra, session.live_user_count)
    start = session.live_start
    users = session.live_users()
    v2 = session.users_v2 if session.users_v2 is not None else users
    sizes = session.tokens[start:]
    if sum(sizes) != session.live_tokens:     # the requests' adjustments, spread over it
        sizes = share(max(0, session.live_tokens), sizes)
    if extra > 0:
        sizes = [extra] + sizes
        users = [i + 1 for i in users]
        v2 = [i + 1 for i in v2]
    return Conversation(sizes, users, v2)


class Question:
    """Everything a session's decision was asked with, and where each part came from."""

    def __init__(self, ask: Ask, sources: dict[str, Sourced], prices: Prices,
                 price_source: str, cache: CacheClock | None, keep: str,
                 warnings: list[str], profile: Profile, horizon: str, fmt: str,
                 asking: Asker):
        self.ask, self.sources, self.prices = ask, sources, prices
        self.price_source, self.cache, self.keep = price_source, cache, keep
        self.warnings, self.profile, self.horizon = warnings, profile, horizon
        self.fmt = fmt
        self.hidden = 0.0           # history before the file's first message (part-way)
        self.horizon_why = ""       # why this horizon, in words
        self.world: World | None = None     # the session's setting (world.py)
        self.level: float | None = None     # the forecast's level (auto and profile)
        self.project: Evidence | None = None    # what the project's sessions showed
        self.asking = asking        # the question as replay asks it at other moments

    def asker(self, known: list[tuple[int, dict[str, float]]] | None = None) -> Asker:
        """This question, to be asked again at other moments of the session (replay), with
        what the decision knew of compactions before each request (``known``)."""
        a = self.asking
        return Asker(a.model, a.values, a.whole, a.forecast, a.ender, a.outlook, known)

    def record(self) -> dict[str, object]:
        """The ``--json`` fields of the question: keep, prices, cache, profile."""
        p = self.prices
        out: dict[str, object] = {"keep": self.keep, "horizon": self.horizon,
                                  "horizon_reason": self.horizon_why, "prices": {
            "model": p.llm, "known": p.known, "source": self.price_source,
            "input": p.input, "cache_read": p.cache_read, "cache_write": p.cache_write,
            "output": p.output, "context_window": p.context_window, "date": p.date},
            "profile": self.profile.record()}
        if self.world is not None:
            out["setting"] = self.world.record()
            out["assumed"] = list(self.world.assumed)
        if self.cache is not None:
            out["cache"] = self.cache.record()
        return out


class Asker:
    """What the decision is asked with at any moment of one session, besides that moment's
    own figures: the model, the session's parameters, the forecast of R, the end chance,
    the schedule's outlook, and what the decision knew of compactions before each request.

    ``Question.asker`` makes it from the question the command asks at the transcript's
    end; replay's dp and its penalty ④ ask it at each of their moments, so that replay
    asks what the command asks on the transcript cut there (tests/test_one_question.py),
    and replay's own setting keeps only what billing needs."""

    def __init__(self, model: Model, values: dict[str, AwkValue], whole: bool,
                 forecast: Callable[[float], tuple[float, str]] | None,
                 ender: Callable[[float, float], float] | None, outlook: Outlook | None,
                 known: list[tuple[int, dict[str, float]]] | None = None):
        self.model, self.values, self.whole = model, values, whole
        self.forecast = forecast    # R at a number of requests so far (None: seed's E × L)
        self.ender = ender          # the end chance from (turns arriving, requests)
        self.outlook = outlook      # the schedule's inputs, as at the transcript's end
        # (first request index, S and what compactions left), in order
        self.known = known or []

    def told_the_end(self, total: int) -> Asker:
        """This asker told how many requests the session really makes (``total``): R is
        what really remains, and the schedule knows the session ends there — no forecast,
        so no end chance and no hold inside the forecast's error.  Replay's ``dp:known``
        asks it, to tell what the forecast costs dp from what the model does."""
        def remaining(j: float) -> tuple[float, str]:
            return (max(1.0, total - j),
                    f"known: {count(total, 'request')} in the session, "
                    f"{count(round(j), 'request')} made so far")
        o = self.outlook
        outlook = None if o is None else Outlook(
            o.growth, o.auto, o.hold, o.retention, None, o.cache_left, o.compaction_seconds,
            o.compaction_source, o.requests, o.exponent, end_known=True)
        return Asker(self.model, self.values, self.whole, remaining, None, outlook,
                     self.known)

    def known_at(self, index: int) -> dict[str, float]:
        """S and what compactions left, as the decision before request ``index`` knew them
        (no look at compactions still to come)."""
        from bisect import bisect_right
        i = bisect_right(self.known, index, key=lambda k: k[0]) - 1
        return self.known[i][1] if i >= 0 else {}

    def values_at(self, prices: Prices, *, turns: float, requests: float,
                  compactions: float, billed: float, V: float, S: float, window: float
                  ) -> dict[str, AwkValue]:
        """The decision's parameters at a moment: the session's, with the running stats,
        the prices of the model the next request uses, the fixed prefix and window of the
        context then, and what the decision knew then of compactions (``known_at``)."""
        v = dict(self.values)
        numbers = {"t": turns, "total_requests": requests, "total_compact": compactions,
                   "total_input": billed, "V": V, "S": S, "p_input": prices.input,
                   "p_cache": prices.cache_read, "p_out": prices.output,
                   "max_context": window, **self.known_at(int(requests))}
        for name, x in numbers.items():
            v[name] = AwkValue.number(x)
        return v

    def ask(self, values: dict[str, AwkValue], policy: PolicyAsk | None, *,
            p_write: float | None, cold: bool, requests: float, turns: float,
            growth: float | None = None, unit: str = "message",
            words: dict[str, str] | None = None) -> Ask:
        """The question at a moment: ``turns`` the human turns with the one the end chance
        is about, ``growth`` the live context's growth then (context_growth; None: the
        moment the outlook was made for, the transcript's end)."""
        horizon = self.forecast(requests) if self.forecast is not None else None
        ending = self.ender(turns, requests) if self.ender is not None else None
        outlook = o = self.outlook
        if o is not None and growth is not None:
            # the cache's state and the compaction's duration change no answer, only what
            # the views say: left out
            outlook = Outlook(growth, o.auto, o.hold, o.retention, o.log_error,
                              requests=requests, exponent=o.exponent, end_known=o.end_known)
        return Ask(self.model, values, policy, whole=self.whole, p_write=p_write, cold=cold,
                   horizon=horizon, unit=unit, words=words, end_chance=ending,
                   outlook=outlook)


def resolve_prices(session: Session, price: str | None, fallback: str | None = None
                   ) -> tuple[Prices | None, str, list[str]]:
    """The table entry for ``price``, else for the session's model, else for the model its
    agent runs when a file names none (``fallback``, world.py); a warning when the table
    does not know it."""
    if price:
        found = find(price)
        if found is None:
            raise BadValue("price", f"{price!r} is not in the price table (compact-dp "
                           "prices lists it)")
        return found, f"price table, {price}", []
    if session.llm:
        found = find(session.llm)
        if found is not None:
            return found, f"price table, the session's model {session.llm}", []
        return None, "", [f"model {session.llm!r} is not in the price table: using the "
                          "default prices (--price MODEL or --p-* to set them)"]
    if fallback:
        found = find(fallback)
        if found is not None:
            return found, f"price table, {fallback} (assumed: the session names no model)", []
    return None, "", []


def session_world(session: Session, options: Options, given: Mapping[str, object],
                  env: Mapping[str, str]) -> World:
    """The session's world (world.py), with what the caller gave of it: ``max_context``,
    ``--auto-compact-tokens``, ``--cache-ttl``, ``--keep``, the window the agent itself
    reported (the status line)."""
    window = None
    raw = given.get("max_context")
    if raw is not None:
        window = native_values({"max_context": raw})["max_context"].num
    return learn(session, Given(window, options.auto_compact_tokens, options.auto_off,
                                options.cache_ttl, options.keep, options.live_window), env)


def profile_figures(session: Session, profile: Profile, V: float | None
                     ) -> dict[str, tuple[float, str]]:
    """S and what a compaction leaves, from what real sessions of this agent showed; a
    profile that saw no compaction of this agent knows no summary, and the agent's own
    size stands in (agents.py), never bash-agent's 500 tokens: with it, a Codex session
    held out of the profile compacted a 20k context into a "500-token" summary that
    left 24k, 18 times."""
    figures = profile.agent(session.format)
    out: dict[str, tuple[float, str]] = {}
    name = f"{session.format} sessions ({profile.source})"
    if figures.summary_tokens is not None:
        out["S"] = (figures.summary_tokens, f"the median summary of {name}")
    else:
        seed = agent_of(session.format).seed_summary
        if seed is not None:
            out["S"] = (seed, f"{session.format}'s summaries (format default: "
                        f"{profile.source} saw no compaction)")
    if figures.after_extra is not None and V is not None:
        left = V + figures.after_extra
        out["after_tokens"] = (left, f"V + {figures.after_extra:,.0f}: what compactions "
                               f"of {name} left")
        if figures.after_cached is not None:
            out["after_cached"] = (min(left, figures.after_cached),
                                   f"what was still cached after them in {name}")
    return out


UNMEASURED_AFTER = "V + S: the summary replaces the history (nothing measured what a " \
    "compaction leaves)"


def unmeasured_after(V: float, S: float) -> float:
    """What a compaction leaves where nothing measured it, for the cache-aware model: the
    fixed prefix and the summary, which every later request reads (the core's own
    reading of an unmeasured compaction, that the summary costs them nothing, is the seed
    models', v3.0.7's to the bit)."""
    return V + S


def session_question(session: Session, options: Options) -> Question:
    """The question for a session (the module docstring says where each part comes from)."""
    env = options.environ
    agent = agent_of(session.format)
    chosen = model_named(options.model, env, agent.model)
    profile = load_profile(env)
    given = awk_names(options.params)
    sourced = {name: (GIVEN, "given") for name in given}
    for name, value in session_stats(session).items():
        if name not in given:
            given[name] = value
            sourced[name] = (SESSION, f"from the session: {STAT_WORDS[name]}")
    # what real sessions showed (the profile) is the cache-aware model's to use; a seed
    # model answers as bash-agent's did, with bash-agent's defaults
    measured = agent.whole and chosen.cache_aware
    split = hidden_history(session, profile) if measured else None
    if split is not None and "V" not in given or split is not None and \
            sourced.get("V", ("",))[0] == SESSION:
        given["V"] = split[0]
        sourced["V"] = (PROFILE, f"{session.format}'s fresh prefix: the file starts "
                        f"part-way, {split[1]:,.0f} tokens of history before it")
    world = session_world(session, options, given, env)
    prices, price_source, warnings = resolve_prices(session, options.price,
                                                    world.fallback_llm)
    if prices is not None:
        for name, attr in PRICE_PARAMS.items():
            if name not in given:
                given[name] = getattr(prices, attr)
                sourced[name] = (PRICES, price_source)
    if "max_context" not in given and world.window_known:
        given["max_context"] = world.context_window
        sourced["max_context"] = (SESSION, world.sources["context_window"])
    if agent.seed_summary is not None and not measured and "S" not in given and \
            not env.get(BY_AWK["S"].env or ""):
        given["S"] = agent.seed_summary
        sourced["S"] = (DEFAULT, f"{session.format}'s summaries (format default)")
    if measured:
        V = given.get("V")
        for name, (value, words) in profile_figures(
                session, profile, float(V) if isinstance(V, (int, float)) else None).items():
            param = BY_AWK[name]
            if name not in given and not (param.env and env.get(param.env)):
                given[name] = value
                sourced[name] = (PROFILE, words)
    values = native_values(given, env)
    if measured and "after_tokens" not in given and \
            not env.get(BY_AWK["after_tokens"].env or ""):
        given["after_tokens"] = unmeasured_after(values["V"].num, values["S"].num)
        sourced["after_tokens"] = (DEFAULT, UNMEASURED_AFTER)
        values = native_values(given, env)
    sources: dict[str, Sourced] = {}
    for name in SHOWN:
        origin, words = sourced.get(name, (DEFAULT, "default"))
        param = BY_AWK[name]
        if origin == DEFAULT and param.env and env.get(param.env):
            origin, words = ENV, f"env {param.env}"
        sources[name] = Sourced(values[name].num, origin, words)
    if prices is None:
        prices = defaults(values, agent.cache_ttl)
        price_source = "the parameters (no price table entry)"
    else:
        prices, price_source = _overridden(prices, price_source, values, sources)
    whole = (agent.keep if options.keep == "auto" else options.keep) == "none"
    cache = None
    if chosen.cache_aware:
        now = options.now
        if now is None:
            import time
            now = time.time()
        cache = cache_clock(session, prices, values["p_input"].num, now, options.cache_ttl,
                            options.p_write)
    evidence: list[Evidence] = []

    def project() -> Evidence | None:
        if not evidence:
            found = project_evidence(session, options, profile)
            if found is None:
                return None
            evidence.append(found)
        return evidence[0]
    forecaster, horizon_words, why, found, level = _horizon(
        session, chosen, profile, options.horizon, values, project)
    hidden = split[1] if split is not None and sourced["V"][0] == PROFILE else 0.0
    outlook = session_outlook(session, values, world, profile, cache,
                              hidden if session.live_start == 0 else 0.0) \
        if chosen.cache_aware and horizon_words == AUTO else None
    # the question at the transcript's end, asked as replay asks it at each moment
    asking = Asker(chosen, values, whole, forecaster, _ender(profile, horizon_words),
                   outlook)
    ask = asking.ask(values, options.policy, p_write=cache.p_write if cache else None,
                     cold=cache.cold if cache else False,
                     requests=values["total_requests"].num, turns=arriving_turns(session),
                     unit="line" if session.format == "bash-agent" else "message",
                     words={"M": sources["max_context"].words})
    question = Question(ask, sources, prices, price_source, cache,
                        "none" if whole else "best", warnings, profile, horizon_words,
                        session.format, asking)
    question.horizon_why = why
    question.world = world
    question.project, question.level = found, level
    question.hidden = hidden
    return question


def after_compaction(values: dict[str, AwkValue]) -> float:
    """The context a compaction leaves beyond the fixed prefix: X measured, else S."""
    left = values["after_tokens"].num
    return left - values["V"].num if left > 0 else values["S"].num


def growth_of(session: Session, values: dict[str, AwkValue]) -> float:
    """How fast the live context grows, in tokens a request (``context_growth``)."""
    return context_growth(session.live_tokens, session.live_request_count,
                          session.compaction_count > 0, values)


def context_growth(tokens: float, requests: float, compacted: bool,
                   values: dict[str, AwkValue]) -> float:
    """What a context holds, less what the compaction that began it left (``values``: as
    known then), over the requests that built it: the one rule, for the decision on a
    transcript and for replay's dp at each of its moments."""
    built = tokens - (after_compaction(values) if compacted else 0.0)
    return max(0.0, built) / max(1, requests)


def session_outlook(session: Session, values: dict[str, AwkValue], world: World,
                    profile: Profile, cache: CacheClock | None, hidden: float = 0.0
                    ) -> Outlook:
    """What the schedule weighs waiting with (core.wait): the context's growth, the
    agent's own compaction point and how far a held one may go, the forecast's log error,
    the seconds the cache still holds, and how long a compaction of the context as it
    is (``hidden``: history before the file's first message) is expected to take."""
    left = cache.seconds_left if cache is not None and cache.state == "warm" else None
    figures = profile.agent(session.format)
    tokens = values["V"].num + session.live_tokens + hidden
    seconds = figures.duration(tokens)
    n = figures.timed_compactions
    words = (f"{n:,} timed compaction{'s' if n != 1 else ''} of {session.format} sessions "
             f"({profile.source}), at a context of {tokens:,.0f} tokens")
    return Outlook(growth_of(session, values), world.auto_compact_tokens, world.hold_limit,
                   values["r"].num, profile.log_error, left, seconds, words,
                   values["total_requests"].num, profile.exponent)


def arriving_turns(session: Session) -> float:
    """The human turns with the one the end chance is about: the next, unless the
    conversation's last message is a human prompt still unanswered."""
    return session.user_turns + (0 if session.last_kind == USER else 1)


def project_evidence(session: Session, options: Options, profile: Profile
                     ) -> Evidence | None:
    """What the project's earlier sessions showed by the moment decided (None: not asked
    for, or the session is in no folder of sessions)."""
    asked = options.project
    if asked is None:
        return None
    from .calibration.project import History, project_history
    if isinstance(asked, History):
        history: History | None = asked
    else:
        history = project_history(session.path or "", session.format, session.cwd,
                                  options.environ, options.project_deadline)
    if history is None:
        return None
    now = options.project_now if options.project_now is not None else options.now
    if now is None:
        import time
        now = time.time()
    import os
    path = os.path.abspath(session.path) if session.path and session.path != "-" else None
    return history.evidence(now, profile.exponent, profile.agent(session.format).level,
                            project_weight(profile), path, session.session_id)


def _horizon(session: Session, model: Model, profile: Profile,
             asked: str | float | None, values: dict[str, AwkValue],
             project: Callable[[], Evidence | None] | None = None
             ) -> tuple[Callable[[float], tuple[float, str]] | None, str, str,
                        Evidence | None, float | None]:
    """The forecast of R at any number of requests so far, with its source in words (None:
    the seed's E × L), the horizon's name, why it is the one used, the project evidence it
    learned from and the level it forecasts with."""
    if asked is not None:
        why = "--horizon given"
    elif not model.cache_aware:
        asked, why = SEED, f"the default of the seed model {model.name}"
    elif not session.has_usage:
        asked, why = SEED, "the default: the session records no usage to forecast from"
    elif values["e_fixed"].num > 0 or values["L_fixed"].num > 0:
        asked, why = SEED, "the default when e_fixed or L_fixed is given"
    else:
        asked, why = AUTO, "the default for a session with recorded usage"
    if asked == SEED:
        return None, SEED, why, None, None
    if asked in (AUTO, ALONE):
        figures = profile.agent(session.format)
        found = project() if asked == AUTO and project is not None else None
        level = found.level if found is not None else figures.level
        exponent, name = profile.exponent, str(asked)
        where = (f"{session.format}, {profile.source}"
                 f"{f'; {found.words()}' if found is not None else ''}")

        def forecaster(j: float) -> tuple[float, str]:
            return (forecast(j, level, exponent),
                    f"{name}: {level:.4g} × (j + 1)^{exponent:.3g} with j = "
                    f"{count(round(j), 'request')} so far ({where})")
        return forecaster, name, why, found, level
    assert isinstance(asked, float)
    fixed = (asked, f"fixed: {asked:g} requests, given")
    return (lambda j: fixed), f"{asked:g}", why, None, None


def _ender(profile: Profile, horizon: str) -> Callable[[float, float], float] | None:
    """The chance that the turn arriving is the session's last, from the human turns
    (the arriving one included) and the requests so far; None unless the horizon is the
    forecast (the guard belongs to it: the seed rule has no notion of an end)."""
    if horizon not in (AUTO, ALONE):
        return None
    b0, bt, bj = profile.end
    return lambda turns, j: end_chance(turns, j, b0, bt, bj)


def _overridden(prices: Prices, source: str, values: dict[str, AwkValue],
                sources: dict[str, Sourced]) -> tuple[Prices, str]:
    """The table's prices with the ones the caller gave (--p-input, ...) put in, so that
    ``--json`` shows the prices the decision really used."""
    given = [name for name in PRICE_PARAMS if sources[name].origin == GIVEN]
    if not given:
        return prices, source
    changes: dict[str, object] = {}
    for name in given:
        attr, num = PRICE_PARAMS[name], values[name].num
        changes[attr] = int(num) if attr == "context_window" and math.isfinite(num) else num
    return prices.replaced(**changes), f"{source}; {', '.join(given)} given"


def decide_session(session: Session, options: Options) -> tuple[Answer, Question]:
    """Decide for a read session's live context; returns the answer and the question
    (with where each part came from)."""
    asked = session_question(session, options)
    return answer(asked.ask, session_conversation(session, asked.hidden)), asked
