"""The Python API, in sqlite-utils' manner: load a session, then ask it.

    >>> import compact_dp
    >>> session = compact_dp.load("session.jsonl")
    >>> d = session.decide()
    >>> d.compact, d.keep, d.benefit, d.as_dict()["terms"]

``load`` reads any supported format (docs/formats.md) from a path, bytes, a binary file or
lines.  ``Session.decide`` takes one set of keywords — the parameters by name (``turns=5``,
``max_context=200000``: every name of docs/options.md, with ``_`` for ``-``) and how to
ask (``model``, ``keep``, ``price``, ``cache_ttl``, ``p_write``, ``now``, ``horizon``,
``trigger``, ``context_tokens``, ``force_percent``, ``environ``: by default the process's
own, as the command reads it) — and returns a ``Decision``, whose ``as_dict()`` is what
``compact-dp --json`` prints in the same environment.  docs/api.md has
runnable examples.  Every failure is a ``CompactDpError``; bad values name the keyword.
"""

from __future__ import annotations

import io
import os

from .asking import Answer, PolicyAsk
from .core.policy import DEFAULT_FORCE_PERCENT, PolicyResult
from .errors import BadValue
from .question import Options, Question, decide_session
from .sessions.read import read_session
from .sessions.session import Session as Recording

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import IO

    from .core.decision import Weighing
    from .core.models import Model
    from .core.quantities import Derived, Terms

    Source = str | os.PathLike[str] | bytes | bytearray | IO[bytes] | Iterable[str | bytes]


class Decision:
    """What compact-dp decided for a session, and why: ``compact`` (summarise now),
    ``keep`` (the messages to keep; 0 with none), ``benefit`` (the net $ of the best
    candidate), ``terms``, ``derived``, ``reason`` — and ``action``, ``forced`` when a
    trigger asked for the agent's whole policy."""

    def __init__(self, answer: Answer, question: Question, session: Recording):
        self.core: Weighing = answer.decision
        self.policy: PolicyResult | None = answer.policy
        self.question, self.session = question, session

    @property
    def compact(self) -> bool:
        if self.policy is not None:
            return self.policy.action == "compact"
        return self.core.compact

    @property
    def keep(self) -> int:
        return self.policy.keep if self.policy is not None else self.core.keep

    @property
    def benefit(self) -> float:
        return self.core.best_benefit

    @property
    def terms(self) -> Terms | None:
        return self.core.terms

    @property
    def derived(self) -> Derived | None:
        return self.core.derived

    @property
    def action(self) -> str:
        return "compact" if self.compact else "skip"

    @property
    def exit_status(self) -> int:
        """What the command would exit with: 0, or 1 when a trigger's policy says skip."""
        return self.policy.exit_status if self.policy is not None else 0

    @property
    def forced(self) -> bool:
        return self.policy.forced if self.policy is not None else False

    @property
    def reason(self) -> str:
        from .views.words import reason
        return reason(self.core, self.policy)

    def as_dict(self) -> dict[str, object]:
        """The ``--json`` object (docs/output.md)."""
        from .views.record import document, session_record, to_dict
        return document(to_dict(self.core, self.policy,
                                session_record(self.session, self.question)))

    def __repr__(self) -> str:
        return (f"Decision(compact={self.compact}, keep={self.keep}, "
                f"benefit={self.benefit!r})")


class Session:
    """A session read from a file or bytes (any format), ready to be asked."""

    def __init__(self, recording: Recording):
        self.recording = recording

    @property
    def format(self) -> str:
        return self.recording.format

    def decide(self, *, model: str | Model | None = None, keep: str = "auto",
               price: str | None = None, cache_ttl: str | None = None,
               p_write: float | None = None, now: float | None = None,
               horizon: str | float | None = None, trigger: str | None = None,
               context_tokens: float | None = None,
               force_percent: float = DEFAULT_FORCE_PERCENT,
               environ: Mapping[str, str] | None = None, **params: object) -> Decision:
        """Decide for the live context (see the module docstring for the keywords);
        ``environ``: the variables to read, by default the process's own, as the command
        reads them (its DP_* values, COMPACT_DP_MODEL, the profile ``calibrate`` wrote);
        ``environ={}`` reads none."""
        if environ is None:
            from .environment import process_environ
            environ = process_environ()
        policy = None
        if trigger is not None or context_tokens is not None:
            policy = PolicyAsk(trigger or "auto", float(context_tokens or 0), force_percent)
        answer, question = decide_session(self.recording, Options(
            params, model=model, keep=keep, price=price, cache_ttl=cache_ttl,
            p_write=p_write, now=now, horizon=horizon, policy=policy, environ=environ,
            project="auto"))
        return Decision(answer, question, self.recording)

    def __getattr__(self, name: str) -> object:
        if name == "recording" or name.startswith("__"):   # asked before __init__ ran (copy)
            raise AttributeError(name)
        return getattr(self.recording, name)     # requests, compactions, tokens, …

    def __repr__(self) -> str:
        return (f"Session(format={self.format!r}, requests={self.recording.request_count}, "
                f"messages={self.recording.live_messages})")


def load(source: Source, format: str = "auto", tokens: str = "auto") -> Session:
    """Read a path, raw bytes, a binary file object, or an iterable of lines (str or
    bytes, with or without their newline) as a session."""
    if isinstance(source, (str, os.PathLike)):
        return Session(read_session([os.fspath(source)], format, tokens))
    if isinstance(source, (bytes, bytearray)):
        stream: IO[bytes] = io.BytesIO(bytes(source))
    elif hasattr(source, "read"):
        probe = source.read(0)
        if isinstance(probe, str):
            raise BadValue("source", "a text-mode file: open it in binary mode ('rb')")
        stream = source  # type: ignore[assignment]  # anything with read() is a file here
    else:
        try:
            lines = [x.encode() if isinstance(x, str) else bytes(x)
                     for x in source]
        except TypeError:
            raise BadValue("source", f"{type(source).__name__} is not a path, bytes, a "
                           "binary file or lines") from None
        stream = io.BytesIO(b"".join(x if x.endswith(b"\n") else x + b"\n" for x in lines))
    return Session(read_session(["-"], format, tokens, stdin=stream))


def decide(source: Source, **options: object) -> Decision:
    """``load(source).decide(**options)`` (``format`` and ``tokens`` go to ``load``)."""
    fmt = str(options.pop("format", "auto"))
    tokens = str(options.pop("tokens", "auto"))
    return load(source, fmt, tokens).decide(**options)  # type: ignore[arg-type]
