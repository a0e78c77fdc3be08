"""The ``--json`` object: every number of the decision, exactly the core's doubles.

JSON has no infinities or NaN; those (possible with odd parameters) are written as the
strings ``"inf"``, ``"-inf"`` and ``"nan"``.
"""

from __future__ import annotations

import math

from ..core.decision import Weighing
from ..core.policy import PolicyResult
from ..sessions.session import Session
from .words import reason

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..question import Question

SCHEMA_VERSION = 1      # docs/output.md says when it changes
TERM_FIELDS = ("K", "H", "savings", "cache_miss", "compact_cost", "info_loss", "quality",
               "benefit")


def number(x: object) -> object:
    """JSON numbers: exact floats; the non-finite ones as strings."""
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if x != x else ("inf" if x > 0 else "-inf")
    return x


def session_record(session: Session, question: Question | None) -> dict[str, object]:
    """The ``session`` object of ``--json``: what the file holds, where each parameter came
    from, the prices and the cache's state (docs/output.md)."""
    sources = question.sources if question is not None else {}
    out: dict[str, object] = {"format": session.format, "requests": session.request_count,
            "compactions": session.compaction_count,
            "last_request_tokens": session.last_request_tokens,
            "user_turns": session.user_turns, "messages": session.live_messages,
            "models": session.llms, "tokens": session.token_source,
            "context_tokens": session.live_tokens, "prefix_tokens": number(session.prefix),
            "summary_tokens": question.sources["S"].value if question is not None else
            session.summary_tokens,
            "last_request_at": session.last_request.time if session.last_request else None,
            "sources": {name: src.words for name, src in sources.items()},
            "warnings": list(session.warnings) + (question.warnings if question else [])}
    if question is not None:
        out.update(question.record())
    return out


def to_dict(dec: Weighing, policy: PolicyResult | None = None,
            session: dict[str, object] | None = None) -> dict[str, object]:
    """The decision as one JSON-ready object (docs/output.md lists the fields)."""
    out: dict[str, object] = {"model": dec.model.name, "lines": dec.lines,
                              "total_tokens": dec.total_tokens, "keep": dec.keep}
    d = dec.derived
    if d is not None:
        out["min_keep"] = number(d.min_keep)
        out["best_k"] = dec.best_k
        out["best_benefit"] = number(dec.best_benefit)
        derived: dict[str, object] = {"E": d.E, "L": d.L, "R": d.R, "avg": d.avg,
                                      "r_t": d.r_t, "info_loss": d.info_loss}
        if d.Q is not None:
            derived.update(Q=d.Q, M=d.M)
        if dec.model.cache_aware:
            derived.update(X=d.X, U=d.U)          # X: null when not measured
        shown: dict[str, object] = {k: number(v) for k, v in derived.items()}
        source = d.sources.get("R", "seed: E × L")
        shown["horizon"], shown["horizon_source"] = source.split(":", 1)[0], source
        out["derived"] = shown
        t = dec.terms
        out["terms"] = None if t is None else {
            **{k: number(getattr(t, k)) for k in TERM_FIELDS},
            "cold_rewrite": number(t.rewrite), "billed": number(t.billed)}
    if dec.ending is not None:
        e = dec.ending
        out["ending"] = {"chance": number(e.chance), "requests": number(e.requests),
                         "pays_back_after": e.pays_back_after, "held": e.held}
    if dec.outlook is not None:
        out.update(schedule_record(dec))
    out["decision"] = "compact" if dec.compact else "skip"
    out["reason"] = reason(dec)
    if policy is not None:
        out["action"] = policy.action
        out["forced"] = policy.forced
        out["keep"] = policy.keep
        out["reason"] = reason(dec, policy)
    if session is not None:
        out["session"] = session
    return out


def schedule_record(dec: Weighing) -> dict[str, object]:
    """The schedule's fields (core.wait; docs/output.md): ``wait``, ``uncertainty``,
    ``pause`` (null where there is none) and ``compaction_seconds``."""
    o = dec.outlook
    assert o is not None
    w, u, p = dec.wait, dec.uncertainty, dec.pause
    return {
        "wait": None if w is None else {
            "until": w.until, "expected_benefit": number(w.expected_benefit),
            "requests": None if w.requests is None else number(w.requests),
            "seconds": None if w.seconds is None else number(w.seconds),
            "value_now": None if w.now is None else number(w.now),
            "value_then": None if w.then is None else number(w.then), "held": w.held},
        "uncertainty": None if u is None else {
            "log_error": number(u.log_error), "requests_low": number(u.requests),
            "benefit_low": number(u.benefit), "held": u.held},
        "pause": None if p is None else {
            "saving": number(p.saving), "rewrite": number(p.rewrite),
            "if_idle_seconds": number(p.if_idle_seconds)},
        "compaction_seconds": None if o.compaction_seconds is None else
        number(o.compaction_seconds),
        "growth": number(o.growth)}


def document(body: dict[str, object]) -> dict[str, object]:
    """A JSON document the tool prints (the decision, replay, prices), its
    ``schema_version`` first: programs that read it learn when its meaning changed."""
    return {"schema_version": SCHEMA_VERSION, **body}


def to_json(body: dict[str, object]) -> str:
    return dumps(document(body))


def dumps(doc: dict[str, object]) -> str:
    """A document as ``--json`` prints it (the Python API's ``as_dict()``, written)."""
    import orjson
    return orjson.dumps(doc).decode()
