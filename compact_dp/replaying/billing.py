"""How a provider bills one request: the prompt-cache rules, each stated once.

* Each model has its own cache: the leading tokens of the prompt it last saw, when it was
  last used, and the TTL its writes had.
* A request reads from that cache what its prompt shares with it — provided the cache was
  used within its TTL (``warm``, on the clock of pricing.clock; a hit refreshes it) — in
  the provider's steps: OpenAI
  caches prefixes of at least 1,024 tokens in 128-token blocks (``cache_min``,
  ``cache_block`` of the price table); Anthropic any length.
* The rest of the prompt is written at the write price of the TTL — or billed as uncached
  input where the provider has no write premium.
* Output is priced apart.
* A provider may bill a request whose prompt passes a size at other prices (a long-context
  tier: Anthropic's 200k on Sonnet 4 and 4.5 with the 1M beta, OpenAI's 272K from GPT-5.4):
  the whole request, input and output, at the tier's (``Prices.at``).
"""

from __future__ import annotations

from ..pricing.clock import is_warm
from ..pricing.table import Prices, parse_ttl


class Cache:
    """One model's cache: how many leading tokens of the current context it holds, when it
    was last used, and with which TTL."""

    __slots__ = ("valid", "last", "ttl")

    def __init__(self, valid: float, last: float | None, ttl: str):
        self.valid, self.last, self.ttl = valid, last, ttl

    def copy(self) -> Cache:
        return Cache(self.valid, self.last, self.ttl)


def warm(cache: Cache | None, time: float | None) -> bool:
    """The cache still holds its tokens when a request is sent at ``time`` (the clock's
    rule, pricing.clock.is_warm)."""
    return cache is not None and is_warm(cache.last, time, parse_ttl(cache.ttl))


def cached_part(shared: float, prices: Prices) -> float:
    """What a cache can serve of ``shared`` leading tokens: all of them, or whole blocks
    from the provider's minimum on."""
    block, least = prices.cache_block, prices.cache_min
    if least is not None and shared < least:
        return 0.0
    if block:
        return float(int(shared // block) * block)
    return shared


def readable(cache: Cache | None, time: float | None, prompt: float, prices: Prices) -> float:
    """What a request of ``prompt`` tokens reads from ``cache`` at ``time``."""
    if not warm(cache, time):
        return 0.0
    assert cache is not None
    return cached_part(min(cache.valid, prompt), prices)


def input_cost(prices: Prices, read: float, written: float, ttl: str, uncached: float = 0.0,
               write_1h: float | None = None) -> float:
    """$ of a prompt: reads at the read price, writes at their TTL's write price (a
    recorded 5-minute/1-hour split when given), the uncached rest at the input price —
    all at the prices of the prompt's long-context tier, where it has one."""
    prices = prices.at(read + written + uncached)
    if write_1h is not None:
        writes = (written - write_1h) * prices.write("5m") + write_1h * prices.write("1h")
    else:
        writes = written * prices.write(ttl)
    return (read * prices.cache_read + writes + uncached * prices.input) / 1e6


def output_cost(prices: Prices, tokens: float, prompt: float = 0.0) -> float:
    """$ of the output of a request of ``prompt`` tokens (its tier's price)."""
    return tokens * prices.at(prompt).output / 1e6
