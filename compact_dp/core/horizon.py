"""R, the LLM requests still to come in the session: the seed rule or a forecast.

The five terms weigh a compaction over the requests still to come, so they are only as
true as R.  bash-agent's rule, ``seed``, is R = E × L (expected remaining turns times
requests per turn); it stays the awk form's and every bash-agent model's, to the bit.  On
real Claude Code and Codex sessions it is wrong both ways — it shrinks as turns pile up,
while what remains hardly depends on anything a session has shown — so ``auto`` forecasts
it from the requests made so far, j:

    R = max(1, level × (j + 1) ** exponent)

with a level per agent and one exponent fitted on real sessions (calibration: the fit is
in docs/calibrate.md, how well it does in docs/backtest.md).  Where the session's project
has earlier sessions, ``auto`` pools their level with the profile's (``pooled_level``);
``profile`` is the profile's forecast alone.  ``N`` fixes it.

The chance that the session ends with the turn now starting,
σ(b0 + bt ln t + bj ln(j + 1)), guards the advice near a likely end.
"""

from __future__ import annotations

import math

SEED, AUTO, PROFILE = "seed", "auto", "profile"
HORIZONS = (SEED, AUTO, PROFILE)
HUGE = 1e12                     # more requests than any session makes


def _count(x: float) -> float:
    """A count as the forecast reads it: NaN or negative is 0, beyond HUGE is HUGE."""
    if not x == x or x < 0:
        return 0.0
    return min(float(x), HUGE)


def forecast(requests: float, level: float, exponent: float) -> float:
    """The expected requests still to come, the next one included (at least 1, at most
    HUGE: a profile's level may be any positive number, R stays a count)."""
    j = _count(requests)
    grown: float = (j + 1.0) ** exponent     # typeshed: float ** float may be complex
    return min(max(1.0, level * grown), HUGE)


def pooled_level(prior: float, weight: float, remaining: float, exposure: float) -> float:
    """The level of a project: what its earlier sessions showed — ``remaining``, the
    requests that came after their points, over ``exposure``, the sum of (j + 1) ** exponent
    at those points — pooled with the profile's level ``prior`` as if it were ``weight``
    of exposure.  No evidence gives the prior; much gives the project's own."""
    if not (weight >= 0 and remaining >= 0 and exposure > 0):
        return prior
    return (remaining + weight * prior) / (exposure + weight)


def end_chance(turns: float, requests: float, b0: float, bt: float, bj: float) -> float:
    """The chance that the turn now starting is the session's last."""
    t, j = max(1.0, _count(turns)), _count(requests)
    z = b0 + bt * math.log(t) + bj * math.log(j + 1.0)
    return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def parse_horizon(text: str) -> str | float:
    """``seed``, ``auto``, ``profile`` or a number of requests (> 0); ValueError
    otherwise."""
    if text in HORIZONS:
        return text
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not seed, auto, profile or a number of "
                         "requests") from None
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{text!r} is not a positive number of requests")
    return value
