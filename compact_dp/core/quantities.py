"""The numbers a decision is made of: the k-independent ``Derived`` and the per-k ``Terms``.

They live below both ``models`` (which computes Derived) and ``search`` (which computes
Terms), so neither has to reach up into the other.  Plain classes with ``__slots__``:
importing dataclasses costs ~18 ms of start-up on the awk path.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Derived:
    """Steps 2–9 of the decision: what does not depend on k, and where each came from.

    ``sources`` maps a quantity's name (E, L, avg, Q, M, and the session stats) to a few
    words saying where its value came from; ``--explain`` shows them.
    """

    __slots__ = ("E", "L", "R", "avg", "c", "r_t", "N_remain", "info_loss", "Q", "M",
                 "min_keep", "max_keep", "T", "NR", "V", "S", "p_input", "p_cache",
                 "p_write", "p_out", "beta", "cold", "X", "U", "sources")

    def __init__(self, *, E: float, L: float, R: float, avg: float, c: float, r_t: float,
                 N_remain: float, info_loss: float, Q: float | None, M: float | None,
                 min_keep: int, max_keep: int | None, T: int, NR: int, V: float, S: float,
                 p_input: float, p_cache: float, p_out: float, beta: float,
                 p_write: float | None = None, cold: bool = False, X: float | None = None,
                 U: float = 0.0, sources: dict[str, str] | None = None):
        self.E, self.L, self.R, self.avg, self.c = E, L, R, avg, c
        self.r_t, self.N_remain, self.info_loss = r_t, N_remain, info_loss
        self.Q, self.M = Q, M                      # None for models without term ⑤
        self.min_keep, self.max_keep = min_keep, max_keep   # max_keep: v4.2 only
        self.T, self.NR = T, NR
        self.V, self.S = V, S
        self.p_input, self.p_cache, self.p_out, self.beta = p_input, p_cache, p_out, beta
        # the cache-aware model's write price (None: the model has no write premium) and
        # whether the cache has expired since the last request
        self.p_write = p_write
        self.cold = cold
        # the cache-aware model's aftermath: X tokens a compaction leaves beyond V (the
        # summary and what the agent re-injects; None: not measured), U tokens of V no
        # longer cached after it
        self.X, self.U = X, U
        self.sources: dict[str, str] = {} if sources is None else sources

    @property
    def write_price(self) -> float:
        """What a cache write costs per million tokens: the cache-aware model's write price,
        else p_input (the models without a write premium bill a miss at the input price)."""
        return self.p_input if self.p_write is None else self.p_write

    def fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def with_remaining_calls(self, R: float) -> Derived:
        """The same quantities had R calls been expected (① and ④ depend on R)."""
        N_remain = R * self.avg
        info_loss = information_loss(self.beta, self.r_t, N_remain, self.p_input)
        return Derived(**{**self.fields(), "R": R, "N_remain": N_remain,
                          "info_loss": info_loss})


def information_loss(beta: float, r_t: float, N_remain: float, p_input: float) -> float:
    """Term ④ in awk's evaluation order: beta × (1 − r_t) × N_remain × p_input / 10⁶."""
    return beta * (1.0 - r_t) * N_remain * p_input / 1000000


class Terms:
    """The terms for one candidate k: K tokens kept, H = T − K summarised, ① savings,
    ② cache_miss, ③ compact_cost, ④ info_loss, ⑤ quality, the cache-aware model's
    ⓪ rewrite (what a cold cache costs the no-compaction baseline), and the net benefit."""

    __slots__ = ("k", "K", "H", "savings", "cache_miss", "compact_cost", "info_loss",
                 "quality", "rewrite", "benefit")

    def __init__(self, k: int, K: int, H: int, savings: float, cache_miss: float,
                 compact_cost: float, info_loss: float, quality: float, benefit: float,
                 rewrite: float = 0.0):
        self.k, self.K, self.H = k, K, H
        self.savings, self.cache_miss, self.compact_cost = savings, cache_miss, compact_cost
        self.info_loss, self.quality, self.rewrite = info_loss, quality, rewrite
        self.benefit = benefit

    @property
    def billed(self) -> float:
        """What compacting changes on the bill: ① − ② − ③ + ⓪ (④ and ⑤ are not billed)."""
        return self.savings - self.cache_miss - self.compact_cost + self.rewrite

    def __repr__(self) -> str:
        return f"Terms(k={self.k}, K={self.K}, benefit={self.benefit!r})"
