"""The decision in words: amounts of money, line counts, and the sentence that says why.

Shared by ``--explain``, ``--json`` (its ``reason``), replay's tables and the status line,
so every view says the same thing the same way: thousands separators on every count.
"""

from __future__ import annotations

import math

from ..core.decision import Weighing
from ..core.policy import PolicyResult
from ..core.search import NO_CANDIDATE, break_even_calls
from ..core.wait import AUTO, BEFORE_COLD, TURN_END

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..core.wait import Wait


def dollars(x: float, places: int) -> str:
    """Dollars to a fixed number of places, thousands separated: "$1,234.50".  Every "$"
    the house prints is written here: the callers say a loss in words ("loses $1.36") or
    put the sign before the "$" themselves (``money``, replay's ``cents``)."""
    return f"${x:,.{places}f}"


def money(x: float) -> str:
    """Dollars with enough digits to see small amounts ($0.37, -$0.0042)."""
    sign, x = ("-", -x) if x < 0 else ("", x)
    if not math.isfinite(x):
        return f"{sign}${x}"
    if x >= 1 or x == 0:
        return sign + dollars(x, 2)
    return sign + (f"${x:.2g}" if x < 0.01 else dollars(x, 3).rstrip("0"))


CENTURY = 36525 * 86400.0           # past it a duration is no real one: not counted in days


def duration(seconds: float, short: bool = False) -> str:
    """"45 s", "4 min", "4.2 h", "3 days", "over 100 years" — or, for the status bar,
    "45s", "4m", "4.2h", "3d", ">100y"."""
    units = ("s", "m", "h", "d") if short else (" s", " min", " h", " days")
    if seconds < (60 if short else 90):
        return f"{seconds:.0f}{units[0]}"
    if seconds < (3600 if short else 5400):
        return f"{seconds / 60:.0f}{units[1]}"
    if seconds < 172800:
        return f"{seconds / 3600:.1f}{units[2]}"
    if seconds >= CENTURY:           # (a clock or a profile gone wrong: no 300-digit days)
        return ">100y" if short else "over 100 years"
    return f"{seconds / 86400:.0f}{units[3]}"


def count(n: int, noun: str) -> str:
    """A number and its noun, the one plural rule: "1 session", "2 sessions", "0 files"
    (the noun's last word takes the s: "1 session file", "3 session files")."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def lines(n: int, unit: str = "line") -> str:
    return count(n, unit)


def tokens(n: float) -> str:
    """A token count in short, the one way: "950", "1.2k", "555k", "1M", "1.05M" (a
    window, a context, a price table's column)."""
    if n >= 999_500:                       # what would round to "1,000k"
        return f"{n / 1e6:.3g}M"
    if n >= 10_000:
        return f"{n / 1000:,.0f}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return f"{n:.0f}"


def reason(decision: Weighing, policy: PolicyResult | None = None) -> str:
    """The decision in one sentence, with its reason (and the policy's, if one was asked)."""
    text = _decision_reason(decision, printed=policy is None)
    if policy is not None:
        verb = "compact" if policy.action == "compact" else "skip"
        what = f" keeping {lines(policy.keep, decision.unit)}" if policy.action == "compact" and \
            not decision.whole else ""
        text += f" Policy: {verb}{what} ({policy.reason})."
    return text


def wait_words(w: Wait) -> str:
    """When the moment worth waiting for comes, in words."""
    n = w.requests or 0.0
    if w.until == AUTO:
        return f"the agent's own compaction comes in about {n:,.0f} requests"
    if w.until == TURN_END:
        return f"the best plan compacts at a turn end about {n:,.0f} requests on"
    return f"before the cache goes cold, in {duration(w.seconds or 0.0)}"


def before_cold(dec: Weighing) -> str:
    """The sentence for the wait before the cache goes cold ("" when there is none)."""
    w, p = dec.wait, dec.pause
    if w is None or w.until != BEFORE_COLD or p is None:
        return ""
    return (f" If the next request comes after the cache goes cold (in "
            f"{duration(p.if_idle_seconds)}), compacting before then saves "
            f"{money(p.saving)}.")


def _decision_reason(dec: Weighing, printed: bool = True) -> str:
    if dec.lines == 0:
        return "skip: the conversation is empty."
    if dec.model.turn_keep:
        if dec.keep == 0:
            return "skip: no user line to start a kept window on."
        turns = dec.target_turns or 0
        return (f"compact: keep the last {lines(dec.keep, dec.unit)}, starting on user line "
                f"{turns:,} from the end (the last {turns:,} of {dec.user_lines:,} user "
                "turns).")
    d, t = dec.derived, dec.terms
    assert d is not None
    if dec.candidates == 0:
        return (f"skip: no candidate k — with {lines(dec.lines, dec.unit)} there is nothing left "
                f"to summarise after keeping at least {d.min_keep:,}.")
    if t is None or dec.best_benefit == NO_CANDIDATE and not t.benefit > NO_CANDIDATE:
        return ("skip: no candidate's net benefit beats the starting value of −10¹⁸: each "
                "is NaN (a 0 × ∞ or ∞ − ∞ among the parameters) or lower still; check the "
                "prices and counts.")
    what = "compacting now" if dec.whole else f"the best candidate (keep {lines(t.k, dec.unit)})"
    if not dec.best_benefit > 0:
        loss = "gains nothing" if dec.best_benefit == 0 else \
            f"loses {money(-dec.best_benefit)}"
        text = f"skip: {what} {loss}"
        calls = break_even_calls(d, dec.model, t.k, t.K)
        if calls is not None:
            text += (f"; it would pay off only after {calls:,} more LLM calls, "
                     f"{d.R:,.4g} are expected")
        else:
            text += "; more LLM calls would not make it pay off"
        return text + "." + before_cold(dec)
    e = dec.ending
    if e is not None and e.held:
        pays = "never pays back" if e.pays_back_after is None else \
            f"pays back only after {e.pays_back_after:,} more LLM calls"
        return (f"skip: {what} would save {money(dec.best_benefit)} over the {d.R:,.4g} "
                f"LLM calls expected, but the turn now starting is likely the last "
                f"({e.chance:.0%}); it makes about {e.requests:,.0f} and the compaction "
                f"{pays}.")
    u = dec.uncertainty
    if u is not None and u.held:
        low = "gain nothing" if u.benefit == 0 else f"lose {money(-u.benefit)}"
        return (f"skip: {what} would save {money(dec.best_benefit)} over the {d.R:,.4g} "
                f"LLM calls expected, but that is within the forecast's error: with "
                f"{u.requests:,.4g} (R × e^−{u.log_error:.2f}/2, half its measured log "
                f"error) it "
                f"would {low}." + before_cold(dec))
    w = dec.wait
    if w is not None and w.held:
        return (f"skip: {what} would save {money(dec.best_benefit)}, but waiting is "
                f"expected to save {money(w.expected_benefit)} more: {wait_words(w)}.")
    if dec.whole:
        return (f"compact: summarise the whole history ({dec.total_tokens:,} tokens); net "
                f"benefit {money(dec.best_benefit)}.")
    if dec.guard:
        return f"skip: the best cut keeps {lines(dec.aligned_keep, dec.unit)}, but the {dec.guard}."
    if dec.keep >= dec.lines:
        prints = f" (prints {dec.keep:,})" if printed else ""
        return (f"skip{prints}: the best cut (keep {lines(dec.best_k, dec.unit)}) moves back "
                f"to the first {dec.unit} because no earlier {dec.unit} is a user "
                f"{'line' if dec.unit == 'line' else 'turn'}, so everything is kept.")
    moved = "" if dec.keep == dec.best_k else \
        f" The best k, {dec.best_k:,}, moved back to the user line that starts the window."
    return (f"compact: keep the last {lines(dec.keep, dec.unit)} ({dec.kept_tokens:,} tokens), "
            f"summarise {dec.total_tokens - dec.kept_tokens:,}; net benefit "
            f"{money(dec.best_benefit)}.{moved}")
