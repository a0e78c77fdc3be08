"""The forced-compaction policy around the decision (bash-agent's agent_compact_context).

The decision may say "don't" (0, or keep everything).  The agent compacts anyway when the
trigger is a plan step or the last request already filled more than 90 % of the window, and
then keeps lines by the turn-keep rule (or nothing, for agents that summarise the whole
history).  This module is that wrapper, so callers get the agent's final answer — keep N
lines, or do nothing — in one call.  docs/policy.md says it in words.
"""

from __future__ import annotations

from ..errors import EXIT_OK, EXIT_SKIP, UsageError
from .decision import Weighing, turn_keep

TRIGGERS = ("auto", "plan_clear", "plan_confirm")
PLAN_TRIGGERS = ("plan_clear", "plan_confirm")
DEFAULT_FORCE_PERCENT = 90


class PolicyResult:
    """The agent's action: ``compact`` keeping ``keep`` lines, or ``skip``."""

    def __init__(self, action: str, keep: int, forced: bool, reason: str):
        self.action, self.keep, self.forced, self.reason = action, keep, forced, reason

    def __repr__(self) -> str:
        return f"PolicyResult({self.action!r}, keep={self.keep}, forced={self.forced})"

    @property
    def exit_status(self) -> int:
        return EXIT_OK if self.action == "compact" else EXIT_SKIP


def force_limit(max_context: float, force_percent: float = DEFAULT_FORCE_PERCENT) -> int:
    """bash's ``MAX_CONTEXT_TOKENS * 90 / 100`` in integer arithmetic."""
    return int(max_context) * int(force_percent) // 100


def apply_policy(decision: Weighing, trigger: str, context_tokens: float, max_context: float,
                 ratio: float, force_percent: float = DEFAULT_FORCE_PERCENT) -> PolicyResult:
    """Fall back to turn-keep when forced, then compact only when it is worth it."""
    if trigger not in TRIGGERS:
        raise UsageError(f"unknown trigger {trigger!r} (choose from {', '.join(TRIGGERS)})")
    total = decision.lines
    keep = decision.keep
    undecided = not decision.compact if decision.whole else keep == 0 or keep >= total > 0
    forced = False
    reason = "the cost model's answer"
    if undecided:
        limit = force_limit(max_context, force_percent)
        if trigger in PLAN_TRIGGERS:
            forced, reason = True, f"forced by the {trigger} trigger"
        elif context_tokens > limit:
            forced = True
            reason = f"forced: the last request used {context_tokens:,.0f} tokens > {limit:,}"
        if not forced:
            return PolicyResult("skip", 0, False, "the cost model says do not compact "
                                "and nothing forces it")
        if decision.whole:
            return PolicyResult("compact", 0, True, reason + "; the whole history is "
                                "summarised")
        keep = turn_keep(ratio, decision.conv).keep
        reason += f"; turn-keep keeps the last {keep:,} lines"
    elif decision.whole:
        return PolicyResult("compact", 0, False, reason)
    if 0 < keep < total or trigger in PLAN_TRIGGERS:
        return PolicyResult("compact", keep, forced, reason)
    return PolicyResult("skip", 0, forced, reason + ", which leaves nothing to summarise")
