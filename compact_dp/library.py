"""The library: sessions and the Python API, over the one orchestration in ``engine``.

    >>> import compact_dp
    >>> d = compact_dp.decide("conversation.jsonl", {"turns": 5, "requests": 40})
    >>> d.keep, d.compact

A source is read as a session (any format, docs/formats.md); what the session records —
user turns, requests, compactions, input tokens, the fixed prefix — fills the parameters
the caller did not give.
"""

from __future__ import annotations

import io
import math
import os
import time

from .core.decision import Decision
from .core.models import Model
from .core.params import BY_AWK, native_values
from .core.policy import DEFAULT_FORCE_PERCENT, PolicyResult
from .core.scan import Conversation
from .engine import Answer, Ask, PolicyAsk, answer, awk_names, model_named
from .errors import UsageError
from .pricing.table import Prices, defaults, find, parse_ttl
from .sessions.model import Session
from .sessions.read import read_session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Iterable, Mapping, Union

    from .sessions.incremental import Reading

    Source = Union[str, os.PathLike[str], bytes, IO[bytes], Iterable[Union[str, bytes]]]


# --- sessions: what a session records, its live context, and its defaults ----------------

STAT_WORDS = {"t": "user turns", "total_requests": "API requests",
              "total_compact": "compactions", "total_input": "recorded prompt tokens",
              "V": "the fixed prefix: the first request's prompt less its messages",
              "S": "the last compaction's summary"}
PRICE_PARAMS = {"p_input": "input", "p_cache": "cache_read", "p_out": "output",
                "max_context": "context_window"}


class FormatDefaults:
    """What a format's agent does: the model that fits it, whether it keeps messages when
    it compacts, and how long its summaries run (docs/formats.md)."""

    def __init__(self, model: str, keep: str, summary_tokens: float | None = None):
        self.model, self.keep, self.summary_tokens = model, keep, summary_tokens


FORMAT_DEFAULTS = {
    "bash-agent": FormatDefaults("v3.0.7", "best"),
    "openai": FormatDefaults("v3.0.7", "best"),
    # Claude Code and Codex keep no message (Codex keeps recent user prompts only) and
    # write summaries of several thousand tokens (8–10k in the real sessions we read)
    "claude-code": FormatDefaults("cache-clock", "none", 8000.0),
    "codex": FormatDefaults("cache-clock", "none", 8000.0),
}
KEEP_MODES = ("auto", "best", "none")


def session_stats(session: Session) -> dict[str, float]:
    """The parameters the session itself records (docs/formats.md): user turns, requests,
    compactions, input tokens, the fixed prefix V, the last summary's size S."""
    stats: dict[str, float] = {"t": session.user_turns,
                               "total_requests": len(session.requests)}
    if session.format != "bash-agent":           # bash-agent files record no compaction
        stats["total_compact"] = len(session.compactions)
    if session.input_tokens is not None:
        stats["total_input"] = session.input_tokens
    if session.prefix is not None:
        stats["V"] = session.prefix
    if session.summary_tokens is not None:
        stats["S"] = session.summary_tokens
    return stats


def session_conversation(session: Session) -> Conversation:
    """The live context as the core sees it: message sizes and user turns (v2's older
    user-line test is a bash-agent byte rule; other formats' turns serve it too)."""
    start = session.live_start
    users = session.live_users()
    v2 = session.users_v2 if session.users_v2 is not None else users
    return Conversation(session.tokens[start:], users, v2)


class CacheClock:
    """The prompt cache of the model the next request uses: its TTL, when it was last
    used, and so whether it is still warm at ``now`` (docs/model.md)."""

    def __init__(self, ttl: str, ttl_seconds: float, ttl_source: str, last: float | None,
                 now: float, p_write: float, p_write_source: str):
        self.ttl, self.ttl_seconds, self.ttl_source = ttl, ttl_seconds, ttl_source
        self.last, self.now = last, now
        self.p_write, self.p_write_source = p_write, p_write_source

    @property
    def idle(self) -> float | None:
        return None if self.last is None else max(0.0, self.now - self.last)

    @property
    def state(self) -> str:
        idle = self.idle
        if idle is None:
            return "unknown"
        return "cold" if idle > self.ttl_seconds else "warm"

    @property
    def cold(self) -> bool:
        return self.state == "cold"

    @property
    def seconds_left(self) -> float | None:
        idle = self.idle
        return None if idle is None else max(0.0, self.ttl_seconds - idle)

    def record(self) -> dict[str, object]:
        return {"state": self.state, "ttl": self.ttl, "ttl_seconds": self.ttl_seconds,
                "ttl_source": self.ttl_source, "last_request_at": self.last,
                "now": self.now, "idle_seconds": self.idle,
                "seconds_left": self.seconds_left, "p_write": self.p_write,
                "p_write_source": self.p_write_source}


class Question:
    """Everything a session's decision was asked with, and where each part came from."""

    def __init__(self, ask: Ask, sources: Sources, prices: Prices, price_source: str,
                 cache: CacheClock | None, keep: str, warnings: list[str]):
        self.ask, self.sources, self.prices, self.price_source = ask, sources, prices, \
            price_source
        self.cache, self.keep, self.warnings = cache, keep, warnings

    def record(self) -> dict[str, object]:
        """The ``--json`` fields of the question: keep, prices, cache."""
        out: dict[str, object] = {"keep": self.keep, "prices": {
            "model": self.prices.model, "known": self.prices.known,
            "source": self.price_source, "input": self.prices.input,
            "cache_read": self.prices.cache_read, "cache_write": self.prices.cache_write,
            "output": self.prices.output, "context_window": self.prices.context_window,
            "date": self.prices.date}}
        if self.cache is not None:
            out["cache"] = self.cache.record()
        return out


Sources = dict[str, tuple[float, str]]


def resolve_prices(session: Session, price: str | None) -> tuple[Prices | None, str, list[str]]:
    """The table entry for --price, else for the session's model (a warning when the table
    does not know it)."""
    if price:
        found = find(price)
        if found is None:
            raise UsageError(f"--price: {price!r} is not in the price table (compact-dp "
                             "prices lists it)")
        return found, f"price table, --price {price}", []
    if session.model:
        found = find(session.model)
        if found is not None:
            return found, f"price table, the session's model {session.model}", []
        return None, "", [f"model {session.model!r} is not in the price table: using the "
                          "default prices (--price MODEL or --p-* to set them)"]
    return None, "", []


def recorded_ttl(session: Session) -> str | None:
    """The TTL the session's cache writes used: the last request that wrote anything says
    5m or 1h (by its larger part)."""
    for r in reversed(session.requests):
        u = r.usage
        if u is not None and u.written:
            return "1h" if u.write_1h > u.write_5m else "5m"
    return None


def session_ask(session: Session, params: Mapping[str, object] | None,
                model: str | Model | None, env: Mapping[str, str] | None,
                policy: PolicyAsk | None = None, *, keep: str = "auto",
                price: str | None = None, cache_ttl: str | None = None,
                p_write: float | None = None, now: float | None = None) -> Question:
    """The question for a session.  Each parameter comes from, in order: the caller; what
    the session records; the price table (for the session's model, or --price); the env
    var; the format's default; the documented default."""
    if keep not in KEEP_MODES:
        raise UsageError(f"--keep: {keep!r} is not one of {', '.join(KEEP_MODES)}")
    env = env or {}
    fmt = FORMAT_DEFAULTS.get(session.format, FORMAT_DEFAULTS["bash-agent"])
    chosen = model_named(model or env.get("COMPACT_DP_MODEL") or fmt.model)
    given = awk_names(params)
    words = {name: "given" for name in given}
    for name, value in session_stats(session).items():
        if name not in given:
            given[name] = value
            words[name] = f"from the session: {STAT_WORDS[name]}"
    prices, price_source, warnings = resolve_prices(session, price)
    if prices is not None:
        for name, attr in PRICE_PARAMS.items():
            if name not in given:
                given[name] = getattr(prices, attr)
                words[name] = price_source
    if "S" not in given and fmt.summary_tokens is not None and \
            not env.get(BY_AWK["S"].env or ""):
        given["S"] = fmt.summary_tokens
        words["S"] = f"{session.format}'s summaries (format default)"
    values = native_values(given, env)
    sources: Sources = {}
    for name in list(STAT_WORDS) + list(PRICE_PARAMS):
        where = words.get(name)
        if where is None:
            param = BY_AWK[name]
            where = f"env {param.env}" if param.env and env.get(param.env) else "default"
        sources[name] = (values[name].num, where)
    if prices is None:
        prices = defaults(values["p_input"].num, values["p_cache"].num, values["p_out"].num,
                          values["max_context"].num)
        price_source = "the parameters (no price table entry)"
    else:
        prices, price_source = _overridden(prices, price_source, values, words)
    whole = (fmt.keep if keep == "auto" else keep) == "none"
    cache = None
    if chosen.cache_aware:
        cache = cache_clock(session, prices, values, cache_ttl, p_write, now)
    ask = Ask(chosen, values, policy, whole=whole,
              p_write=cache.p_write if cache else None, cold=cache.cold if cache else False)
    return Question(ask, sources, prices, price_source, cache,
                    "none" if whole else "best", warnings)


def _overridden(prices: Prices, source: str, values: dict, words: dict[str, str]
                ) -> tuple[Prices, str]:
    """The table's prices with the ones the caller gave (--p-input, ...) put in, so that
    ``--json`` shows the prices the decision really used."""
    given = [name for name in PRICE_PARAMS if words.get(name) == "given"]
    if not given:
        return prices, source
    changes: dict[str, object] = {}
    for name in given:
        attr, num = PRICE_PARAMS[name], values[name].num
        changes[attr] = int(num) if attr == "context_window" and math.isfinite(num) else num
    return prices.replaced(**changes), f"{source}; {', '.join(given)} given"


def cache_clock(session: Session, prices: Prices, values: dict, cache_ttl: str | None,
                p_write: float | None, now: float | None) -> CacheClock:
    """The cache state for the next request: TTL from --cache-ttl, else the session's
    writes, else the provider's default; warm while the model's last request is younger."""
    if cache_ttl:
        ttl, ttl_source = cache_ttl, "--cache-ttl"
    else:
        found = recorded_ttl(session)
        ttl, ttl_source = (found, "the session's cache writes") if found else \
            (prices.default_ttl, f"{prices.provider} default" if prices.known else "default")
    try:
        seconds = parse_ttl(ttl)
    except ValueError as e:
        raise UsageError(f"--cache-ttl: {e}") from None
    model = session.model
    last = next((r.time for r in reversed(session.requests)
                 if r.time is not None and (model is None or r.model == model)), None)
    if p_write is not None:
        write, write_source = p_write, "given"
    elif prices.known:
        write = prices.write(ttl if ttl in (prices.cache_write or {}) else None)
        write_source = f"price table, {ttl} writes" if prices.cache_write else \
            "no write premium: writes cost input"
    else:
        write, write_source = values["p_input"].num, "no write premium: writes cost input"
    return CacheClock(ttl, seconds, ttl_source, last, time.time() if now is None else now,
                      write, write_source)


def decide_session(session: Session, params: Mapping[str, object] | None = None, *,
                   model: str | Model | None = None, env: Mapping[str, str] | None = None,
                   policy: PolicyAsk | None = None, keep: str = "auto",
                   price: str | None = None, cache_ttl: str | None = None,
                   p_write: float | None = None, now: float | None = None
                   ) -> tuple[Answer, Question]:
    """Decide for a read session's live context; returns the answer and the question
    (with where each part came from).  keep, price, cache_ttl, p_write, now: see
    session_ask."""
    asked = session_ask(session, params, model, env, policy, keep=keep, price=price,
                        cache_ttl=cache_ttl, p_write=p_write, now=now)
    answered = answer(asked.ask, session_conversation(session))
    decision = answered.decision
    if session.format != "bash-agent":
        decision.unit = "message"
    if decision.derived is not None and decision.derived.M is not None:
        decision.derived.sources["M"] = asked.sources["max_context"][1]
    return answered, asked


def decide_transcript(path: str, env: Mapping[str, str], seconds: float, now: float
                      ) -> tuple[Reading, Answer | None, Question | None]:
    """What the status line and the hooks ask after every message: read a live transcript
    on from where the last call stopped (``$COMPACT_DP_CACHE``), for at most ``seconds``,
    and decide — or, when the reading is not done yet, say so (no answer)."""
    from .sessions.incremental import cache_dir, read_incremental
    reading = read_incremental(os.path.expanduser(path), cache_dir(env),
                               deadline=time.monotonic() + seconds)
    if reading.session is None:
        return reading, None, None
    answered, question = decide_session(reading.session, env=env, now=now)
    return reading, answered, question


# --- the Python API ----------------------------------------------------------------------

def load(source: Source, format: str = "auto", tokens: str = "auto") -> Session:
    """Read a path, raw bytes, a binary file object, or an iterable of lines as a session."""
    if isinstance(source, (str, os.PathLike)):
        return read_session([os.fspath(source)], format, tokens)
    if isinstance(source, (bytes, bytearray)):
        stream: IO[bytes] = io.BytesIO(bytes(source))
    elif hasattr(source, "read"):
        stream = source  # type: ignore[assignment]
    else:
        lines = [x.encode() if isinstance(x, str) else x for x in source]  # type: ignore
        stream = io.BytesIO(b"".join(x + b"\n" for x in lines))
    return read_session(["-"], format, tokens, stdin=stream)


def decide(source: Source, params: Mapping[str, object] | None = None, *,
           model: str | Model | None = None, env: Mapping[str, str] | None = None,
           format: str = "auto", tokens: str = "auto", keep: str = "auto",
           price: str | None = None, cache_ttl: str | None = None,
           now: float | None = None) -> Decision:
    """The decision for one conversation, as the native command line computes it."""
    return decide_session(load(source, format, tokens), params, model=model, env=env,
                          keep=keep, price=price, cache_ttl=cache_ttl,
                          now=now)[0].decision


def should_compact(source: Source, trigger: str = "auto", context_tokens: float = 0,
                   params: Mapping[str, object] | None = None, *,
                   model: str | Model | None = None,
                   force_percent: float = DEFAULT_FORCE_PERCENT,
                   env: Mapping[str, str] | None = None, format: str = "auto",
                   tokens: str = "auto", keep: str = "auto", price: str | None = None,
                   cache_ttl: str | None = None, now: float | None = None) -> PolicyResult:
    """The agent's whole answer: the decision plus the forced-compaction fallback."""
    answered, _ = decide_session(load(source, format, tokens), params, model=model, env=env,
                                 policy=PolicyAsk(trigger, context_tokens, force_percent),
                                 keep=keep, price=price, cache_ttl=cache_ttl, now=now)
    assert answered.policy is not None
    return answered.policy


__all__ = ["decide", "should_compact", "load", "decide_session", "session_ask",
           "session_stats", "session_conversation", "Question", "CacheClock"]
