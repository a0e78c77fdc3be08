"""The middle of some figures: one home for the two medians the house takes.

* ``median`` averages the two middle values on an even count: the score of a backtest and
  a calibrated figure, where a value between two sessions' is fine.
* ``upper_middle`` takes the upper of the two: a figure that must be one a session really
  showed — a number of kept messages, what a real compaction left — and so stays whole.
  (Changing either would change answers the golden tests pin.)
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import TypeVar

    N = TypeVar("N", int, float)


def median(xs: Iterable[float]) -> float | None:
    """The median, the mean of the two middle values on an even count (None: no values)."""
    s = sorted(xs)
    if not s:
        return None
    mid = len(s) // 2
    return float(s[mid]) if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def upper_middle(xs: Iterable[N]) -> N | None:
    """The middle value, the upper of the two on an even count (None: no values)."""
    s = sorted(xs)
    return s[len(s) // 2] if s else None
