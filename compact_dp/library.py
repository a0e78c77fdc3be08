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
import os

from .core.decision import Decision
from .core.models import Model
from .core.params import BY_AWK, native_values
from .core.policy import DEFAULT_FORCE_PERCENT, PolicyResult
from .core.scan import Conversation
from .engine import Answer, Ask, PolicyAsk, answer, awk_names, model_named
from .sessions.model import Session
from .sessions.read import read_session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Iterable, Mapping, Union

    Source = Union[str, os.PathLike[str], bytes, IO[bytes], Iterable[Union[str, bytes]]]


# --- sessions: the stats a session records, and its live context -------------------------

STAT_WORDS = {"t": "user turns", "total_requests": "API requests",
              "total_compact": "compactions", "total_input": "recorded prompt tokens",
              "V": "the fixed prefix: the first request's prompt less its messages"}


def session_stats(session: Session) -> dict[str, float]:
    """The parameters the session itself records (docs/formats.md): user turns, requests,
    compactions, input tokens, the fixed prefix V."""
    stats: dict[str, float] = {"t": session.user_turns,
                               "total_requests": len(session.requests)}
    if session.format != "bash-agent":           # bash-agent files record no compaction
        stats["total_compact"] = len(session.compactions)
    if session.input_tokens is not None:
        stats["total_input"] = session.input_tokens
    if session.prefix is not None:
        stats["V"] = session.prefix
    return stats


def session_conversation(session: Session) -> Conversation:
    """The live context as the core sees it: message sizes and user turns."""
    start = session.live_start
    return Conversation(session.tokens[start:], session.live_users(), session.users_v2)


Sources = dict[str, tuple[float, str]]


def session_ask(session: Session, params: Mapping[str, object] | None,
                model: str | Model | None, env: Mapping[str, str] | None,
                policy: PolicyAsk | None = None) -> tuple[Ask, Sources]:
    """The question for a session: a parameter given by the caller wins, then what the
    session records, then the env var, then the default.  Also says, for each parameter a
    session can record, its value and where it came from."""
    given = awk_names(params)
    recorded = session_stats(session)
    words = {name: "given" for name in given}
    for name, value in recorded.items():
        if name not in given:
            given[name] = value
            words[name] = f"from the session: {STAT_WORDS[name]}"
    values = native_values(given, env)
    env = env or {}
    sources: Sources = {}
    for name in STAT_WORDS:
        where = words.get(name)
        if where is None:
            param = BY_AWK[name]
            where = (f"env {param.env}" if param.env and env.get(param.env) else
                     "default") + ("" if name in ("V", "total_compact") and
                                   session.format != "bash-agent" else
                                   ": the session does not record it")
        sources[name] = (values[name].num, where)
    return Ask(model_named(model, env), values, policy), sources


def decide_session(session: Session, params: Mapping[str, object] | None = None, *,
                   model: str | Model | None = None, env: Mapping[str, str] | None = None,
                   policy: PolicyAsk | None = None) -> tuple[Answer, Sources]:
    """Decide for a read session's live context; returns the answer and the sources."""
    ask, sources = session_ask(session, params, model, env, policy)
    answered = answer(ask, session_conversation(session))
    if session.format != "bash-agent":
        answered.decision.unit = "message"
    return answered, sources


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
           format: str = "auto", tokens: str = "auto") -> Decision:
    """The decision for one conversation, as the native command line computes it."""
    return decide_session(load(source, format, tokens), params, model=model,
                          env=env)[0].decision


def should_compact(source: Source, trigger: str = "auto", context_tokens: float = 0,
                   params: Mapping[str, object] | None = None, *,
                   model: str | Model | None = None,
                   force_percent: float = DEFAULT_FORCE_PERCENT,
                   env: Mapping[str, str] | None = None, format: str = "auto",
                   tokens: str = "auto") -> PolicyResult:
    """The agent's whole answer: the decision plus the forced-compaction fallback."""
    answered, _ = decide_session(load(source, format, tokens), params, model=model, env=env,
                                 policy=PolicyAsk(trigger, context_tokens, force_percent))
    assert answered.policy is not None
    return answered.policy


__all__ = ["decide", "should_compact", "load", "decide_session", "session_ask",
           "session_stats", "session_conversation"]
