"""The schedule: compact now, or wait for a better moment (docs/model.md, "When to wait").

The five terms weigh compacting *now* against never compacting.  An agent that summarises
its whole history can also compact later: at a later turn end, or the agent does it by
itself at its threshold.  Under the forecast — R requests still to come, L of them a turn,
the context growing by g tokens a request — the value of a plan of compactions is the sum
of each compaction's benefit (what it removes, every later request reads that much less),
each weighed by the same terms with the context it would summarise then and the requests
left after it.  A small dynamic programme over the turn ends to come finds the best plan
that compacts now and the best that does not; when the second is worth more, the advice is
"not yet", with when.

Two more holds and one piece of news, for the cache-aware model with the forecast:

* **uncertainty** — the forecast is off by a measured log error σ (the profile's); a
  compaction that would not pay with R e^(−σ/2) requests to come is inside that error, and
  is not advised (LOW_END);
* **a pause** — on a warm cache, what compacting now would save if the user then stepped
  away past the TTL: the next request would rewrite the whole context at the write price,
  where after a compaction it rewrites only what the compaction left (``pause``);
* **before the cache goes cold** — when the advice is "not yet" and that pause saving is
  positive, the moment worth waiting for is the last before the cache expires.

Pure and light, as the rest of the core: the status line runs it on every call.
"""

from __future__ import annotations

import math

from .quantities import Derived
from .retention import compounded_retention
from .search import L_INSTR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .models import Model

TURN_END, AUTO, BEFORE_COLD = "turn_end", "auto_compaction", "before_cold"
MAX_MOMENTS = 24        # turn ends weighed at most (further apart when more would come)
MAX_EXTRA = 8           # compactions a plan counts apart in ④ (past it, ④ no longer moves)
MAX_STATES = 400        # points a plan may compact at (turn ends and the agent's own)
SURVIVAL = 4.0          # moments weighed up to where the session goes on with chance e^-4
HUGE_REACH = 64.0       # ... and never past this many times R
# The uncertainty hold's low end, R e^(−LOW_END σ): how far short of the forecast a
# compaction must still pay.  Measured, not derived (docs/backtest.md, 2026-12-06): over
# the corpus leave-one-project-out, half σ saved the most dollars against what was
# recorded of none, a quarter, three quarters and the whole σ, walk-forward, profile-alone
# and in-sample, and the most in dp's objective but walk-forward (where three quarters
# saved as much); with none dp was worse than recorded most often.  (The wait's hold
# keeps the whole σ: halved there, dp waited where it should not have.)
LOW_END = 0.5


class Outlook:
    """What the schedule is asked with, besides the decision: how fast the context grows
    (tokens a request), the prompt at which the agent compacts by itself (None: never) and
    how far a held-back one may go (``hold``), the retention of one summary (for ④ of
    later compactions), the forecast's log error σ (None: no uncertainty hold), the
    seconds the cache still holds (None: cold or unknown), and how long a compaction is
    expected to take (for the views; None: not measured).  ``end_known``: R is no
    forecast but the requests that really came (replay's ``dp:known``), so the session
    surely makes R more requests and no more."""

    __slots__ = ("growth", "auto", "hold", "retention", "log_error", "cache_left",
                 "compaction_seconds", "compaction_source", "requests", "exponent",
                 "end_known")

    def __init__(self, growth: float, auto: float | None = None, hold: float | None = None,
                 retention: float = 0.8, log_error: float | None = None,
                 cache_left: float | None = None, compaction_seconds: float | None = None,
                 compaction_source: str = "", requests: float = 0.0, exponent: float = 0.0,
                 end_known: bool = False):
        self.growth = growth if growth > 0 and math.isfinite(growth) else 0.0
        # the requests made so far and the forecast's exponent: R at a later moment
        self.requests = requests if requests > 0 and math.isfinite(requests) else 0.0
        self.exponent = exponent if 0 <= exponent <= 1 else 0.0
        self.auto, self.hold, self.retention = auto, hold, retention
        self.log_error, self.cache_left = log_error, cache_left
        self.compaction_seconds, self.compaction_source = compaction_seconds, \
            compaction_source
        self.end_known = end_known


class Wait:
    """The moment worth waiting for: ``until`` (TURN_END, AUTO or BEFORE_COLD), how far
    (requests, or seconds before the cache goes cold), and how much more waiting is
    expected to save than compacting now (``expected_benefit``, $); ``now`` and ``then``:
    the best plan's value that compacts now and that waits; ``held``: it turned a
    compaction down."""

    __slots__ = ("until", "requests", "seconds", "expected_benefit", "now", "then", "held")

    def __init__(self, until: str, expected_benefit: float, requests: float | None = None,
                 seconds: float | None = None, now: float | None = None,
                 then: float | None = None, held: bool = False):
        self.until, self.expected_benefit = until, expected_benefit
        self.requests, self.seconds = requests, seconds
        self.now, self.then, self.held = now, then, held


class Uncertainty:
    """The forecast's log error σ, the requests at its low end (R e^(−LOW_END σ)), the net
    benefit there, and whether that turned a compaction down (``held``: it would not
    pay)."""

    __slots__ = ("log_error", "requests", "benefit", "held")

    def __init__(self, log_error: float, requests: float, benefit: float, held: bool):
        self.log_error, self.requests, self.benefit, self.held = (log_error, requests,
                                                                  benefit, held)


class Pause:
    """What compacting now would save if the user then paused past the cache's TTL:
    ``saving`` (the net benefit plus ``rewrite``, the re-write of the context it avoids),
    if idle longer than ``if_idle_seconds`` (what the cache has left)."""

    __slots__ = ("saving", "rewrite", "if_idle_seconds")

    def __init__(self, saving: float, rewrite: float, if_idle_seconds: float):
        self.saving, self.rewrite, self.if_idle_seconds = saving, rewrite, if_idle_seconds


class Whole:
    """The net benefit of one whole-history compaction under the forecast, with the context
    it summarises (c tokens beyond V), the requests left from it (r) and how many
    compactions the plan made before it (k) — the cache-aware model's terms at K = 0 on a
    warm cache, written in the order ``search.BenefitCurve`` evaluates them."""

    def __init__(self, d: Derived, retention: float):
        self.d = d
        write = d.write_price
        self.miss = ((d.S + d.U) if d.X is None else (d.X + d.U)) * (write - d.p_cache) \
            / 1000000
        self.left = 0.0 if d.X is None else d.X
        self.fixed = (d.p_input * L_INSTR + d.p_out * d.S)
        self.quality = d.Q is not None and d.M is not None
        self.loss = [d.beta * (1.0 - compounded_retention(retention, d.c + k)) * d.avg *
                     d.p_input / 1000000 for k in range(MAX_EXTRA + 1)]
        self.loss[0] = d.beta * (1.0 - d.r_t) * d.avg * d.p_input / 1000000

    def __call__(self, c: float, r: float, k: int) -> float:
        d = self.d
        savings = (r - 1) * d.p_cache * (c - self.left) / 1000000
        cost = (d.p_cache * (d.V + c) + self.fixed) / 1000000
        b = savings - self.miss - cost - self.loss[min(k, MAX_EXTRA)] * r
        if self.quality:
            assert d.Q is not None and d.M is not None
            vc = d.V + c
            b = b + d.Q * d.p_input * (vc * vc - d.V * d.V) / (d.M * 1000000)
        return b


class Plan:
    """The best plan from a state: its value ($, against never compacting) and its first
    compaction (offset in requests, and whether the agent makes it by itself)."""

    __slots__ = ("value", "first", "forced")

    def __init__(self, value: float, first: float | None = None, forced: bool = False):
        self.value, self.first, self.forced = value, first, forced


class Schedule:
    """The dynamic programme: after any compaction the context is what a compaction leaves,
    so the best plan from a compaction depends only on where it is and how many came
    before it (``best``); from now, on the context as it is (``waiting``).  The states are
    the turn ends weighed and the points where the agent would compact by itself after
    one; they are worked out from the last backwards, so no plan is evaluated twice and
    the recursion stays one step deep.

    The forecast says how many requests are to come *from any moment* (R grows with the
    requests made, core.horizon), so a session reaching n more requests has R(j + n) still
    to come; the chance it gets there is the survival with that mean residual life,
    P(n) = R / R(j + n) × exp(−∫₀ⁿ dt / R(j + t)) (its mean is R, as the forecast says).
    A compaction n requests on is worth P(n) × its benefit with R(j + n) to come.

    With the end known (``Outlook.end_known``) the session makes exactly R more requests:
    R(j + n) = R − n and P(n) = 1 short of R, 0 from there."""

    def __init__(self, d: Derived, outlook: Outlook):
        self.d, self.o = d, outlook
        self.whole = Whole(d, outlook.retention)
        self.R = d.R
        self.j1 = max(0.0, outlook.requests) + 1.0
        self.a = min(max(outlook.exponent, 0.0), 1.0)
        self.after = d.S if d.X is None else d.X       # context a compaction leaves, > V
        self.end = self.reach(SURVIVAL)
        step = max(d.L, 1.0)
        count = max(0, math.ceil(self.end / step) - 1)
        stride = max(1, math.ceil(count / MAX_MOMENTS))
        self.moments = [i * step for i in range(stride, count + 1, stride)]
        loss = self.whole.loss
        self.extra = next((k for k in range(MAX_EXTRA + 1) if loss[k] == loss[MAX_EXTRA]),
                          MAX_EXTRA)
        auto = outlook.auto
        # the agent's own point after a compaction (none when a compaction leaves more)
        self.auto = auto if auto is not None and auto > d.V + self.after else None
        self.memo: dict[tuple[float, int], Plan] = {}

    def remaining(self, n: float) -> float:
        """R(j + n): the requests still to come once n more are made."""
        if self.o.end_known:
            return max(1.0, self.R - n)
        grown: float = ((self.j1 + n) / self.j1) ** self.a
        return max(1.0, self.R * grown)

    def survival(self, n: float) -> float:
        """P(n): the chance that the session makes n more requests — the survival whose
        mean residual life is R(j + n): R / R(j + n) × exp(−∫₀ⁿ dt / R(j + t)), so the
        requests expected from now are R."""
        if n <= 0:
            return 1.0
        if self.o.end_known:
            return 1.0 if n < self.R else 0.0
        x = (self.j1 + n) / self.j1
        if self.a >= 1.0:
            hazard = self.j1 / self.R * math.log(x)
        else:
            grown: float = x ** (1.0 - self.a)
            hazard = self.j1 / (self.R * (1.0 - self.a)) * (grown - 1.0)
        return self.R / self.remaining(n) * math.exp(-hazard) if hazard < 700 else 0.0

    def reach(self, hazard: float) -> float:
        """The n where the cumulative hazard reaches ``hazard`` (P(n) = e^(−hazard)), at
        most HUGE_REACH × R (with the end known: R, where it ends)."""
        if self.o.end_known:
            return self.R
        if self.a >= 1.0:
            z = hazard * self.R / self.j1
            n = self.j1 * (math.exp(z) - 1.0) if z < 50 else math.inf
        else:
            base = 1.0 + hazard * self.R * (1.0 - self.a) / self.j1
            n = self.j1 * (base ** (1.0 / (1.0 - self.a)) - 1.0) if self.a < 0.98 \
                else math.inf
        return min(n, HUGE_REACH * self.R)

    def worth(self, c: float, n: float, k: int) -> float:
        """What a compaction of context c, n requests on, the (k+1)-th of a plan, is worth
        now: its benefit with R(j + n) to come, times the chance the session gets there."""
        return self.survival(n) * self.whole(c, self.remaining(n), k)

    def forced_at(self, n0: float, c0: float, point: float | None) -> float:
        """Where the agent compacts by itself from context c0 at offset n0 (inf: never)."""
        g = self.o.growth
        if point is None or g <= 0:
            return math.inf
        return n0 + max(0.0, point - self.d.V - c0) / g

    def plan(self, n0: float, c0: float, k: int, point: float | None) -> Plan:
        """The best plan from offset n0 with context c0, k compactions made so far."""
        a = self.forced_at(n0, c0, point)
        g = self.o.growth
        best = Plan(0.0)
        if a < self.end:
            assert point is not None
            value = self.worth(point - self.d.V, a, k) + self.best(a, k + 1).value
            best = Plan(value, a, True)
        for m in self.moments:
            if m <= n0:
                continue
            if m >= a:
                break
            value = self.worth(c0 + (m - n0) * g, m, k) + self.best(m, k + 1).value
            if value > best.value:
                best = Plan(value, m, False)
        return best

    def best(self, n0: float, k: int) -> Plan:
        """The best plan from a compaction at offset n0, the k-th of the plan."""
        key = (n0, min(k, self.extra))
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self.plan(n0, self.after, key[1], self.auto)
        return found

    def prepare(self, starts: list[float]) -> bool:
        """Every state the plans from ``starts`` reach, evaluated from the last backwards
        (False: too many — the agent would compact by itself more than MAX_STATES times
        over the horizon — and the schedule says nothing)."""
        states = set(starts + self.moments)
        todo = list(states)
        while todo:
            n = self.forced_at(todo.pop(), self.after, self.auto)
            if n < self.end and n not in states:
                if len(states) >= MAX_STATES:
                    return False
                states.add(n)
                todo.append(n)
        for n in sorted(states, reverse=True):
            for k in range(self.extra, -1, -1):
                self.best(n, k)
        return True

    def waiting(self) -> Plan | None:
        """The best plan that does not compact now (None: the agent compacts now anyway —
        the context is past its point and the hold's — or the plans are too many)."""
        d, o = self.d, self.o
        point = o.auto
        if point is not None and d.V + d.T >= point:
            point = o.hold if o.hold is not None and o.hold > d.V + d.T else None
            if point is None:
                return None
        first = self.forced_at(0.0, float(d.T), point)
        if not self.prepare([0.0] + ([first] if first < self.end else [])):
            return None
        return self.plan(0.0, float(d.T), 0, point)


def uncertainty(d: Derived, model: Model, k: int, K: int, sigma: float) -> Uncertainty:
    """The benefit of keeping k (K tokens) at the forecast's low end, R e^(−LOW_END σ)."""
    from .search import BenefitCurve
    low = d.R * math.exp(-LOW_END * sigma)
    b_low = BenefitCurve(d.with_remaining_calls(low), model).terms(k, K).benefit
    return Uncertainty(sigma, low, b_low, False)


def later(d: Derived, now: float, outlook: Outlook) -> Wait | None:
    """The moment worth waiting for under the forecast, when a plan that does not compact
    now is worth more than the best that does (``now``: the net benefit of compacting now,
    a whole-history compaction)."""
    schedule = Schedule(d, outlook)
    waiting = schedule.waiting()
    if waiting is None or waiting.first is None:
        return None
    value_now = now + schedule.best(0.0, 1).value
    if not waiting.value > value_now:
        return None
    return Wait(AUTO if waiting.forced else TURN_END, waiting.value - value_now,
                requests=waiting.first, now=value_now, then=waiting.value)


def beyond_doubt(d: Derived, model: Model, outlook: Outlook) -> bool:
    """Waiting is still the better plan with R e^σ requests to come, the forecast's high
    end (more requests make compacting now worth more): a wait the forecast's error could
    undo does not hold a compaction back (without σ, the forecast's own R decides)."""
    sigma = outlook.log_error
    if sigma is None or not sigma > 0:
        return True
    from .search import BenefitCurve
    high = d.with_remaining_calls(d.R * math.exp(sigma))
    now = BenefitCurve(high, model).terms(0, 0).benefit
    return later(high, now, outlook) is not None


def pause(d: Derived, now: float, outlook: Outlook) -> Pause | None:
    """What compacting now (net benefit ``now``) would save if the user then paused past
    the TTL, on a warm cache with a write premium (None: nothing, or not warm)."""
    left = outlook.cache_left
    write = d.write_price
    if left is None or not left > 0 or d.cold or not write > d.p_cache or \
            not -1e17 < now < math.inf:
        return None
    rewrite = (d.T + d.U) * (write - d.p_cache) / 1000000
    saving = now + rewrite
    return Pause(saving, rewrite, left) if saving > 0 else None
