"""Write a decision the way the front end asked: the plain number, ``--json`` or
``--explain``.  The plain number is the hot path and imports nothing more."""

from __future__ import annotations

from ..core.decision import Decision
from ..core.policy import PolicyResult
from ..environment import Env

PLAIN, JSON, EXPLAIN = "plain", "json", "explain"


def plain(decision: Decision, policy: PolicyResult | None = None, end: str = "\n") -> str:
    """What the plain form prints: the lines to keep (0 = do not compact); for an agent that
    summarises the whole history, ``compact`` or ``skip``.  ``end``: awk's ORS."""
    if decision.whole:
        compact = policy.action == "compact" if policy is not None else decision.compact
        return ("compact" if compact else "skip") + end
    return f"{policy.keep if policy is not None else decision.keep}{end}"


def emit(decision: Decision, env: Env, output: str = PLAIN,
         policy: PolicyResult | None = None, end: str = "\n") -> int:
    """Write the decision in the requested form and return the exit status."""
    if output == JSON:
        from .record import to_dict, to_json
        return env.write(to_json(to_dict(decision, policy)) + "\n")
    if output == EXPLAIN:
        from .explain import render
        return env.write(render(decision, env, policy))
    return env.write(plain(decision, policy, end))
