"""r_t: retention after c + 1 summaries, by repeated multiplication (docs/model.md, step 6).

awk multiplies ``r_t = r_t * r`` once per summary.  With ``total_compact=1e12`` that loop
would run for hours, so we stop as soon as the rest of the loop provably cannot change the
result — a fixed point, a 2-cycle, or a value already past the 0.37 floor — and never
otherwise.  The result is bit-identical to the plain loop.
"""

from __future__ import annotations

import math

FLOOR = 0.37
_ULP_BOUND = 2.3e-16        # > ln(1 + 2**-53): the most one rounding can move ln|r_t|
_LN_FLOOR = math.log(FLOOR)
_LN_OVERFLOW = 710.0        # > ln(DBL_MAX): past this |r_t| is certainly inf
CHECK_EVERY = 4096


def iterations(c: float) -> float:
    """How many times ``for (i = 1; i <= c + 1; i++)`` runs (inf for an endless loop)."""
    limit = c + 1.0
    if not limit >= 1.0:
        return 0
    return math.floor(limit) if math.isfinite(limit) else math.inf


def _bounded(r: float, n: float) -> float | None:
    """Settle a very long loop from error bounds alone, when the bounds are conclusive."""
    a = abs(r)
    if a == 1.0 or a == 0.0 or math.isinf(a):
        return None
    lg = math.log(a)
    if a < 1.0 and n * (lg + _ULP_BOUND) < _LN_FLOOR - 1e-9:
        return FLOOR                      # |r_t| certainly fell below the floor
    if a > 1.0 and n * (lg - _ULP_BOUND) > _LN_OVERFLOW:
        if r > 0 or (math.isfinite(n) and n % 2 == 0):
            return math.inf
        return FLOOR                      # -inf, clamped
    return None


def compounded_retention(r: float, c: float) -> float:
    """r_t after the loop and the 0.37 floor, exactly as awk computes it."""
    n = iterations(c)
    if n and r != r:
        return r
    if n > 1_000_000:
        settled = _bounded(r, n)
        if settled is not None:
            return settled
    shrinking = abs(r) <= 1.0
    x, i = 1.0, 0.0
    while i < n:
        # Multiply in tight runs; between runs look for states that settle the rest:
        # each is absorbing, so checking only now and then never changes the result.
        step = min(CHECK_EVERY, n - i) if i else 1
        for _ in range(int(step)):
            x *= r
        i += step
        after = x * r
        if after == x:                                  # fixed point
            break
        if shrinking and abs(x) < FLOOR:                # can only shrink further
            break
        if after * r == x:                              # 2-cycle: parity decides
            if (n - i) % 2 == 1:
                x = after
            break
    if x < FLOOR:
        x = FLOOR
    return x
