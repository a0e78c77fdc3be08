"""The cache clock: the prompt cache of the model the next request uses — its TTL, when it
was last used, and so whether it is still warm at a moment (docs/model.md)."""

from __future__ import annotations

from ..errors import BadValue
from .table import Prices, parse_ttl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..sessions.session import Session

GRACE = 15.0          # seconds past the TTL a cache still answers


def is_warm(last: float | None, now: float | None, ttl_seconds: float) -> bool:
    """A cache last used (a response ended) at ``last`` still answers a request sent at
    ``now``: within its TTL and GRACE — the one place this rule is written.  Without a
    time it never expires.

    On real sessions, hits go on up to 13 s past the TTL measured so (from the end of the
    last response to the sending of the next) and misses start 2 s past it."""
    return now is None or last is None or now - last <= ttl_seconds + GRACE


class CacheClock:
    """The cache's TTL (and where it came from), its last use, the moment asked about, and
    the write price of that TTL."""

    def __init__(self, ttl: str, ttl_seconds: float, ttl_source: str, last: float | None,
                 now: float, p_write: float, p_write_source: str):
        self.ttl, self.ttl_seconds, self.ttl_source = ttl, ttl_seconds, ttl_source
        self.last, self.now = last, now
        self.p_write, self.p_write_source = p_write, p_write_source

    @property
    def idle(self) -> float | None:
        return None if self.last is None else max(0.0, self.now - self.last)

    @property
    def state(self) -> str:
        if self.last is None:
            return "unknown"
        return "warm" if is_warm(self.last, self.now, self.ttl_seconds) else "cold"

    @property
    def cold(self) -> bool:
        return self.state == "cold"

    @property
    def seconds_left(self) -> float | None:
        idle = self.idle
        return None if idle is None else max(0.0, self.ttl_seconds - idle)

    def record(self) -> dict[str, object]:
        return {"state": self.state, "ttl": self.ttl, "ttl_seconds": self.ttl_seconds,
                "ttl_source": self.ttl_source, "last_request_at": self.last,
                "now": self.now, "idle_seconds": self.idle,
                "seconds_left": self.seconds_left, "p_write": self.p_write,
                "p_write_source": self.p_write_source}


def cache_clock(session: Session, prices: Prices, p_input: float, now: float,
                cache_ttl: str | None = None, p_write: float | None = None) -> CacheClock:
    """The cache state for the next request: the TTL from ``cache_ttl``, else the
    session's writes, else the provider's; warm while the model's last response ended
    within it (and GRACE)."""
    if cache_ttl:
        ttl, ttl_source = cache_ttl, "--cache-ttl"
    else:
        found = session.recorded_ttl
        ttl, ttl_source = (found, "the session's cache writes") if found else \
            (prices.default_ttl, f"{prices.provider} default" if prices.known else "default")
    try:
        seconds = parse_ttl(ttl)
    except ValueError as e:
        raise BadValue("cache_ttl", str(e)) from None
    last = session.last_time(session.llm)
    if p_write is not None:
        write, write_source = p_write, "given"
    elif prices.known:
        write = prices.write(ttl if ttl in (prices.cache_write or {}) else None)
        write_source = f"price table, {ttl} writes" if prices.cache_write else \
            "no write premium: writes cost input"
    else:
        write, write_source = p_input, "no write premium: writes cost input"
    return CacheClock(ttl, seconds, ttl_source, last, now, write, write_source)
