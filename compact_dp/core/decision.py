"""The whole decision for one scanned conversation: derive, search, align, guard.

The work is linear in the number of lines (prefix sums and a pruned search) where the awk
is quadratic; the answer is the awk's to the last bit.
"""

from __future__ import annotations

from bisect import bisect_right

from .awkvalue import AwkValue
from .models import MODEL_TABLE, Model, derive, turn_keep_target
from .quantities import Derived, Terms
from .scan import Conversation
from .search import (
    NO_CANDIDATE,
    BenefitCurve,
    best_candidate,
    break_even_calls,
    candidate_bounds,
    prefix_sums,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .wait import Outlook, Pause, Uncertainty, Wait

END_LIKELY = 0.5        # from this chance that the turn now starting is the last, guard


class Weighing:
    """The core's weighing of every candidate k for one context: the numbers, the best
    candidate and the answer the awk would print.  (The Python API's ``Decision`` wraps
    one with the question and the policy; the two names keep the layers apart.)"""

    def __init__(self, model: Model, lines: int, total_tokens: int, user_lines: int,
                 conv: Conversation, whole: bool = False):
        self.model = model
        self.lines = lines
        self.total_tokens = total_tokens
        self.user_lines = user_lines
        self.conv = conv                        # the scanned conversation (for --explain)
        self.whole = whole                      # the agent summarises the whole history
        self.unit = "line"                      # what the conversation is made of, in words
        self.keep = 0                           # what the command prints
        self.compact = False                    # summarise some lines now
        self.derived: Derived | None = None
        self.candidates = 0                     # how many k were scored
        self.best_k = 0
        self.best_benefit = NO_CANDIDATE
        self.terms: Terms | None = None         # at best_k (None: no candidate)
        self.guard: str | None = None           # which v4.2 guard turned the answer to 0
        self.aligned_keep = 0                   # best_k moved back to a user line
        self.kept_tokens = 0                    # tokens in that aligned window
        self.target_turns: int | None = None    # turn-keep
        self.ending: Ending | None = None       # the near-end guard's figures, if asked
        # the schedule (core.wait), when the forecast asked for it: what it was asked with,
        # the moment worth waiting for, the uncertainty hold, what compacting before a
        # pause would save
        self.outlook: Outlook | None = None
        self.wait: Wait | None = None
        self.uncertainty: Uncertainty | None = None
        self.pause: Pause | None = None

    def __repr__(self) -> str:
        return (f"Weighing(model={self.model.name!r}, lines={self.lines}, keep={self.keep}, "
                f"compact={self.compact}, best_k={self.best_k}, "
                f"best_benefit={self.best_benefit!r})")


class Ending:
    """The near-end guard: the chance that the turn now starting is the session's last, the
    requests that turn would still make (L, at most R), and after how many requests the
    compaction pays back (None: never).  ``held``: the guard turned a compaction down."""

    __slots__ = ("chance", "requests", "pays_back_after", "held")

    def __init__(self, chance: float, requests: float, pays_back_after: int | None,
                 held: bool):
        self.chance, self.requests = chance, requests
        self.pays_back_after, self.held = pays_back_after, held


def align_to_user_line(keep: int, nr: int, users: list[int]) -> int:
    """Grow the kept window backwards until it starts on a user line (or line 1)."""
    cut = nr - keep + 1                       # 1-based first kept line
    if cut <= 1:
        return keep
    i = bisect_right(users, cut - 1) - 1      # last user line at or before the cut
    cut = users[i] + 1 if i >= 0 else 1
    return nr - cut + 1


def decide_conversation(values: dict[str, AwkValue], conv: Conversation, model: Model,
                        *, whole: bool = False, p_write: float | None = None,
                        cold: bool = False, horizon: tuple[float, str] | None = None,
                        unit: str = "line", words: dict[str, str] | None = None,
                        end_chance: float | None = None, outlook: Outlook | None = None
                        ) -> Weighing:
    """The decision: the lines to keep (0 = do not compact), with every number behind it.

    ``whole``: the agent keeps no message when it compacts (Claude Code), so only *whether*
    to compact now is decided.  ``p_write``, ``cold``: the cache-aware model's write price
    and whether the cache expired since the last request (ignored by the other models).
    ``horizon``: R and its source, when a forecast replaces E × L (core.horizon).
    ``unit``: what the conversation is made of, in words; ``words``: where the caller's M
    came from.  ``end_chance``: the chance that the turn now starting is the session's last
    (with a forecast); see ``hold_near_end``.  ``outlook``: what the schedule weighs
    waiting with (core.wait; with a forecast, for the cache-aware model).
    """
    dec = _decide(values, conv, model, whole, p_write, cold, horizon, unit, words)
    if end_chance is not None and dec.derived is not None and dec.terms is not None:
        hold_near_end(dec, end_chance)
    if outlook is not None and model.cache_aware and dec.derived is not None and \
            dec.terms is not None:
        weigh_waiting(dec, outlook)
    return dec


def weigh_waiting(dec: Weighing, outlook: Outlook) -> None:
    """With a forecast, the cache-aware model's schedule (core.wait): a compaction whose
    gain is inside the forecast's error is held; so is one that a later moment is expected
    to beat (a turn end, the agent's own compaction) even at the forecast's high end; on a
    warm cache, what compacting
    before a pause would save, and — when the advice is "not yet" — the moment before the
    cache goes cold as the one worth waiting for."""
    from . import wait
    d, t = dec.derived, dec.terms
    assert d is not None and t is not None
    dec.outlook = outlook
    now = dec.best_benefit
    sigma = outlook.log_error
    if sigma is not None and sigma > 0 and now > 0:
        dec.uncertainty = u = wait.uncertainty(d, dec.model, t.k, t.K, sigma)
        u.held = dec.compact and not u.benefit > 0
        if u.held:
            dec.compact, dec.keep = False, 0
    if dec.whole and now > 0:
        dec.wait = w = wait.later(d, now, outlook)
        if w is not None and dec.compact and wait.beyond_doubt(d, dec.model, outlook):
            w.held = True
            dec.compact, dec.keep = False, 0
    dec.pause = wait.pause(d, now, outlook)
    e = dec.ending
    if dec.pause is not None and not dec.compact and dec.wait is None and \
            not (e is not None and e.held):
        dec.wait = wait.Wait(wait.BEFORE_COLD, dec.pause.saving,
                             seconds=dec.pause.if_idle_seconds)


def hold_near_end(dec: Weighing, chance: float) -> None:
    """Near a likely end, do not advise a compaction that cannot pay back.

    The forecast R is an average over sessions that go on and sessions that stop; a
    compaction is paid now and earns per request after it.  When the turn now starting is
    likely the last (``chance`` ≥ END_LIKELY), the requests that matter are that turn's,
    about L; a compaction that pays back only after more of them is turned down."""
    d, t = dec.derived, dec.terms
    assert d is not None and t is not None
    last = min(d.L, d.R)
    after = break_even_calls(d, dec.model, t.k, t.K)
    held = dec.compact and chance >= END_LIKELY and (after is None or after > last)
    dec.ending = Ending(chance, last, after, held)
    if held:
        dec.compact, dec.keep = False, 0


def _decide(values: dict[str, AwkValue], conv: Conversation, model: Model, whole: bool,
            p_write: float | None, cold: bool, horizon: tuple[float, str] | None, unit: str,
            words: dict[str, str] | None) -> Weighing:
    if model.turn_keep:
        dec = turn_keep(values["ratio"].num, conv)
        dec.unit = unit
        return dec
    NR, T = conv.nr, conv.total
    dec = Weighing(model, NR, T, conv.user_count(model.v2_users), conv, whole)
    dec.unit = unit
    if NR == 0:
        return dec
    d = derive(values, conv, model, horizon)
    if words and d.M is not None and "M" in words:
        d.sources["M"] = words["M"]
    if model.cache_aware:
        d.p_write, d.cold = p_write, cold
    dec.derived = d
    lo, hi = candidate_bounds(d, whole)
    dec.candidates = max(0, hi - lo + 1)
    if whole:                      # one candidate, k = 0: keep nothing (K = 0)
        if lo <= hi:
            dec.terms = BenefitCurve(d, model).terms(0, 0)
            b = dec.terms.benefit
            dec.best_benefit = b if b > NO_CANDIDATE else NO_CANDIDATE
            dec.compact = dec.best_benefit > 0
        return dec
    users = conv.user_lines(model.v2_users)
    prefix = prefix_sums(conv.sizes)
    best_k, best = best_candidate(d, model, prefix)
    dec.best_k, dec.best_benefit = best_k, best
    if best_k:
        dec.terms = BenefitCurve(d, model).terms(best_k, T - prefix[NR - best_k])
    if not best > 0:
        return dec
    adj = align_to_user_line(best_k, NR, users)
    dec.aligned_keep = adj
    dec.kept_tokens = kept = T - prefix[NR - adj]
    if d.max_keep is not None:
        if adj > d.max_keep:
            dec.guard = f"keep ceiling fired ({adj} > max_keep {d.max_keep})"
            return dec
        if kept < 20 * d.S:
            dec.guard = (f"minimum-size guard fired (kept {kept:,} tokens < 20 × S = "
                         f"{20 * d.S:,g})")
            return dec
    dec.keep = adj
    dec.compact = 0 < adj < NR
    return dec


def turn_keep(ratio: float, conv: Conversation, model: Model | None = None) -> Weighing:
    """The forced-compaction fallback: keep the last ``ratio`` share of user turns."""
    NR, users = conv.nr, conv.users
    dec = Weighing(model or MODEL_TABLE["turn-keep"], NR, conv.total, len(users), conv)
    if NR == 0:
        return dec
    target = turn_keep_target(len(users), ratio)
    dec.target_turns = target
    if users and target is not None and target >= 1:
        dec.keep = NR - users[len(users) - target]
        dec.compact = 0 < dec.keep < NR
    return dec
