"""Write a decision the way the front end asked: the plain number, ``--json`` or
``--explain``.  The plain number is the hot path and imports nothing more."""

from __future__ import annotations

from ..core.decision import Weighing
from ..core.policy import PolicyResult
from ..environment import Env
from ..sessions.session import Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..question import Question

PLAIN, JSON, EXPLAIN = "plain", "json", "explain"


def plain(decision: Weighing, policy: PolicyResult | None = None, end: str = "\n") -> str:
    """What the plain form prints: the lines to keep (0 = do not compact); for an agent that
    summarises the whole history, ``compact`` or ``skip``.  ``end``: awk's ORS."""
    if decision.whole:
        compact = policy.action == "compact" if policy is not None else decision.compact
        return ("compact" if compact else "skip") + end
    return f"{policy.keep if policy is not None else decision.keep}{end}"


def emit(decision: Weighing, env: Env, output: str = PLAIN,
         policy: PolicyResult | None = None, end: str = "\n",
         session: Session | None = None, question: Question | None = None) -> int:
    """Write the decision in the requested form and return the exit status; with a
    session, --json gains its ``session`` object and --explain its facts."""
    if output == JSON:
        from .record import session_record, to_dict, to_json
        record = session_record(session, question) if session is not None else None
        return env.write(to_json(to_dict(decision, policy, record)) + "\n")
    if output == EXPLAIN:
        from .explain import render, session_lines
        if session is None:
            return env.write(render(decision, env, policy))
        units = ("line", "user line") if session.format == "bash-agent" else \
            ("message", "user turn")
        state = None
        if question is not None and question.cache is not None:
            from .explain import cache_words
            state = cache_words(question.cache)
        return env.write(render(decision, env, policy,
                                preamble=session_lines(session, question), units=units,
                                cache_state=state))
    return env.write(plain(decision, policy, end))
