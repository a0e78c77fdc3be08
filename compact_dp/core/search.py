"""Finding the best k (docs/model.md, step 10) without evaluating every candidate, exactly.

The net benefit, as a real function of K (tokens kept), is  α + β K − γ (V + K)²  with
γ = Q p_input / (M 10⁶) ≥ 0 in every sensible setting: a concave quadratic (a line when ⑤ is
off).  K grows with k, so the benefit along k rises, then falls.  Rounding makes the awk's
doubles differ from that curve by at most ε, and ties decide real cases, so the search

* starts near the peak of the real curve,
* walks right, then left, evaluating the *exact* awk expression at every k,
* and stops a walk at the first k whose value is below the best so far by more than 2 ε:
  by concavity every k beyond it is then certainly below the best, so it can neither win
  nor tie.

When the curve is not provably concave with finite terms (negative prices, NaN, ∞), or is
flat, the walk simply never stops early — it is then the plain full loop.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from itertools import accumulate

from ..errors import AwkFatal
from .models import Model
from .quantities import Derived, Terms

NO_CANDIDATE = -1e18
L_INSTR = 70        # the summary instruction's tokens (l_instr); replay prompts count them too
SAFETY = 1e-12      # ε relative to the size of the terms: > 4000 units of rounding


def cold_rewrite(d: Derived) -> float:
    """⓪, in dollars: what the next request pays beyond reading V + T from the cache when it
    must write them again, (V + T) × (write − read).  A cold cache adds it to every
    candidate's benefit (not compacting pays it, compacting re-writes V + H instead);
    ``--explain`` also quotes it on a warm cache, as what an expiry would cost."""
    return (d.V + d.T) * (d.write_price - d.p_cache) / 1000000


class BenefitCurve:
    """benefit(K) evaluated exactly as the awk does, with the k-independent parts hoisted
    (each hoisted value is a sub-expression awk also evaluates first, so no rounding
    changes).

    The cache-aware model uses the same expressions with its write price in place of
    p_input where a cache write happens, and on a cold cache adds ⓪ (see docs/model.md);
    with a write price equal to p_input and a warm cache it is v3.0.7 to the last bit.
    """

    def __init__(self, d: Derived, model: Model):
        self.T = d.T
        self.V, self.S, self.pi, self.pc = d.V, d.S, d.p_input, d.p_cache
        self.il = d.info_loss
        self.a = (d.R - 1) * d.p_cache
        write = d.write_price
        self.miss_rate = write - d.p_cache
        # what a compaction leaves: measured (cache-clock), the X tokens beyond V replace
        # the history every later request reads and are written once, with the U tokens
        # of V no longer cached; not measured, v3.0.7's S + K written once, nothing
        # subtracted (the expressions are v3.0.7's to the bit)
        if d.X is None:
            self.left, self.SXU = 0.0, d.S + d.U
        else:
            self.left, self.SXU = d.X, d.X + d.U
        self.instr, self.out = d.p_input * L_INSTR, d.p_out * d.S
        self.pcV = d.p_cache * d.V
        # the summary request reads its prompt from a warm cache, writes it on a cold one
        self.summary_read = write if d.cold else d.p_cache
        self.repriced = model.repriced_summary
        self.has_quality = model.quality
        self.rewrite = cold_rewrite(d) if d.cold else None
        self.q1 = self.den = self.vt2 = 0.0
        self.with_quality = False
        if model.quality and d.Q is not None and d.M is not None:
            self.with_quality = not model.quality_gate or d.T > d.M * 0.30
            self.q1, self.den = d.Q * d.p_input, d.M * 1000000
            self.vt2 = (d.V + d.T) * (d.V + d.T)

    def terms(self, k: int, K: int) -> Terms:
        """Every term for one k, for --explain and --json (the same doubles as __call__)."""
        H = self.T - K
        savings = self.a * (H - self.left) / 1000000
        cache_miss = (self.SXU + K) * self.miss_rate / 1000000
        compact_cost = self._cost(H)
        benefit = savings - cache_miss - compact_cost - self.il
        quality = 0.0
        if self.has_quality:
            if self.with_quality:
                quality = self._quality(K)
            benefit = benefit + quality
        rewrite = 0.0
        if self.rewrite is not None:
            rewrite = self.rewrite
            benefit = benefit + rewrite
        return Terms(k=k, K=K, H=H, savings=savings, cache_miss=cache_miss,
                     compact_cost=compact_cost, info_loss=self.il, quality=quality,
                     rewrite=rewrite, benefit=benefit)

    def _cost(self, H: int) -> float:
        if self.repriced:
            return (self.pcV + self.pi * (H + L_INSTR) + self.out) / 1000000
        return (self.summary_read * (self.V + H) + self.instr + self.out) / 1000000

    def _quality(self, K: int) -> float:
        if self.den == 0:
            raise AwkFatal("division by zero in the quality term ⑤ (M × 1000000, "
                           "M = max_context)")
        vk = self.V + K
        return self.q1 * (self.vt2 - vk * vk) / self.den

    def __call__(self, K: int) -> float:
        """The net benefit alone (no Terms object: the search calls this per k)."""
        H = self.T - K
        b = (self.a * (H - self.left) / 1000000 - (self.SXU + K) * self.miss_rate / 1000000
             - self._cost(H) - self.il)
        if self.with_quality:
            b = b + self._quality(K)
        elif self.has_quality:
            b = b + 0.0                    # v4.2 below the gate still adds quality = 0
        if self.rewrite is not None:
            b = b + self.rewrite
        return b

    def shape(self) -> tuple[float, float, float] | None:
        """(β, γ, ε) of the real curve α + β K − γ (V + K)², or None when it is not
        provably concave with finite terms (then every k must be evaluated)."""
        T, V = self.T, abs(self.V)
        h_price = self.pi if self.repriced else self.summary_read
        beta = (-self.a - self.miss_rate + h_price) / 1000000
        gamma = self.q1 / self.den if self.with_quality and self.den else 0.0
        size = (abs(self.a) * (T + abs(self.left)) + (abs(self.SXU) + T) * abs(self.miss_rate)
                + abs(self.summary_read) * (V + T) + abs(self.pcV)
                + abs(self.pi) * (T + L_INSTR) + abs(self.instr) + abs(self.out)
                ) / 1000000 + abs(self.il) + abs(self.rewrite or 0.0)
        if self.with_quality:
            if not self.den:
                return None
            size += abs(self.q1) * (abs(self.vt2) + (V + T) * (V + T)) / abs(self.den)
        eps = SAFETY * size
        if not all(map(math.isfinite, (beta, gamma, size, eps))) or gamma < 0:
            return None
        return beta, gamma, eps


def prefix_sums(sizes: list[int]) -> list[int]:
    """prefix[i] = tokens of the first i lines, so the last k lines keep
    K(k) = T − prefix[NR − k] tokens."""
    return list(accumulate(sizes, initial=0))


def candidate_bounds(d: Derived, whole: bool = False) -> tuple[int, int]:
    """The k the awk loop scores: min_keep … max_keep (or NR), less k = NR, which keeps
    everything (H = 0 is skipped).  Empty when lo > hi.  ``whole``: the agent summarises
    the whole history, so k = 0 is the one candidate (when there is anything to drop)."""
    if whole:
        return (0, 0) if d.T > 0 else (1, 0)
    hi = d.max_keep if d.max_keep is not None else d.NR
    if d.min_keep != d.min_keep or hi != hi:         # NaN: awk's loop runs zero times
        return 1, 0
    return d.min_keep, min(hi, d.NR - 1)


def best_candidate(d: Derived, model: Model, prefix: list[int], whole: bool = False
                   ) -> tuple[int, float]:
    """The first k with the strictly largest benefit, as the awk's full loop finds it;
    (0, NO_CANDIDATE) when no k is scored."""
    lo, hi = candidate_bounds(d, whole)
    if lo > hi:
        return 0, NO_CANDIDATE
    curve = BenefitCurve(d, model)
    NR, T = d.NR, d.T
    shape = curve.shape()
    if shape is None:
        return _walk(curve, prefix, NR, T, lo, hi, lo, math.inf)
    beta, gamma, eps = shape
    start = lo
    if gamma > 0:
        peak_K = beta / (2 * gamma) - d.V
        start = _first_k_keeping(prefix, NR, T, peak_K, lo, hi)
    elif beta > 0:
        start = hi
    return _walk(curve, prefix, NR, T, lo, hi, start, 2 * eps)


def _first_k_keeping(prefix: list[int], NR: int, T: int, K: float, lo: int, hi: int) -> int:
    """About the smallest k in [lo, hi] whose kept tokens reach K (only a starting point)."""
    if not K == K:
        return lo
    # K(k) = T − prefix[NR − k] ≥ K  ⇔  prefix[NR − k] ≤ T − K
    j = bisect_right(prefix, T - K) - 1
    return max(lo, min(hi, NR - j))


def _walk(curve: BenefitCurve, prefix: list[int], NR: int, T: int, lo: int, hi: int,
          start: int, margin: float) -> tuple[int, float]:
    """Evaluate from ``start`` rightwards, then leftwards, each way until a value falls
    more than ``margin`` below the best value already evaluated (margin = ∞: evaluate
    everything), then pick the first k with the largest value, as the awk loop does."""
    values: dict[int, float] = {}
    top: float | None = None                    # the best evaluated value so far
    for ks in (range(start, hi + 1), range(start - 1, lo - 1, -1)):
        for k in ks:
            b = curve(T - prefix[NR - k])
            values[k] = b
            if top is None or b > top:
                top = b
            elif b < top - margin:
                break
    best_k, best = 0, NO_CANDIDATE
    for k in sorted(values):
        if values[k] > best:
            best, best_k = values[k], k
    return best_k, best


def break_even_calls(d: Derived, model: Model, k: int, K: int) -> int | None:
    """The smallest whole number of remaining LLM calls R for which keeping k lines pays off.

    For a fixed k the benefit is linear in R (① grows with R − 1, ④ with R), so solve for
    the crossing point, then step to the first whole R whose benefit, evaluated the exact
    way, is positive.  None when more calls would never help.
    """
    def benefit(R: float) -> float:
        return BenefitCurve(d.with_remaining_calls(R), model).terms(k, K).benefit

    b0, b1 = benefit(0.0), benefit(1.0)
    slope = b1 - b0
    if not (slope > 0 and math.isfinite(slope) and math.isfinite(b0)):
        return None
    R = max(0, math.floor(-b0 / slope) - 2)
    for _ in range(64):
        if benefit(float(R)) > 0:
            return R
        R += 1
    return None
