"""The dated price table (``prices.json``, shipped with the package) and lookups in it.

Every entry says where its numbers come from and when they were read: prices change, and a
bill recomputed with last year's prices is wrong in a way nobody notices.  Model ids are
matched exactly, then through aliases, then without a date suffix (``-20251001``) or a
``[1m]`` context marker.  An id the table does not know gets ``None`` — the caller warns and
uses the documented defaults, never a guess from a similar name.

A provider's cache granularity (``cache_granularity``: OpenAI caches prefixes of at least
``cache_min`` tokens in ``cache_block``-token steps) is said once per provider; an entry's own
``cache_block``/``cache_min`` (``null``: none known) overrides it, as GPT-5.6 does.
"""

from __future__ import annotations

import math
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ..core.awkvalue import AwkValue

    # prices.json as read: the package's own document, so its shape is known by
    # construction (tests/test_pricing.py reads it), not checked again here
    Table = dict[str, Any]

TABLE_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "prices.json")
TTL_SECONDS = {"5m": 300.0, "30m": 1800.0, "1h": 3600.0, "2h": 7200.0}
LONG_CONTEXT = 1_000_000            # a "[1m]" model id: the 1M-token window

_TABLE: Table | None = None


class Prices:
    """One model's $/MTok prices, its cache rules and its window."""

    __slots__ = ("llm", "provider", "input", "output", "cache_read", "cache_write",
                 "default_ttl", "context_window", "cache_block", "cache_min", "source", "date",
                 "note", "known", "long", "long_above")

    def __init__(self, llm: str, provider: str, input: float, output: float,
                 cache_read: float, cache_write: dict[str, float] | None, default_ttl: str,
                 context_window: int, source: str = "", date: str = "", note: str = "",
                 known: bool = True, cache_block: int | None = None,
                 cache_min: int | None = None):
        self.llm, self.provider = llm, provider
        self.input, self.output, self.cache_read = input, output, cache_read
        self.cache_write = cache_write              # None: no write premium
        self.default_ttl, self.context_window = default_ttl, context_window
        # None: no granularity known (a hit may be any length)
        self.cache_block, self.cache_min = cache_block, cache_min
        self.source, self.date, self.note, self.known = source, date, note, known
        # the long-context tier: a request whose prompt is above ``long_above`` tokens is
        # billed whole at ``long``'s prices (None: one rate across the window)
        self.long: Prices | None = None
        self.long_above = 0

    def at(self, prompt: float) -> Prices:
        """The prices a request of ``prompt`` tokens (reads and writes included) is billed
        at: its tier's."""
        long = self.long
        return long if long is not None and prompt > self.long_above else self

    def without_writes(self) -> Prices:
        """These prices with writes billed as input (a session whose usage counts none)."""
        new = self.replaced(cache_write=None)
        if self.long is not None:
            new.long = self.long.replaced(cache_write=None)
        return new

    def write(self, ttl: str | None = None) -> float:
        """$/MTok of a cache write with that TTL: the premium, or plain input."""
        if not self.cache_write:
            return self.input
        ttl = ttl or self.default_ttl
        if ttl in self.cache_write:
            return self.cache_write[ttl]
        return self.cache_write.get(self.default_ttl, self.input)

    def ttl_seconds(self, ttl: str | None = None) -> float:
        return parse_ttl(ttl or self.default_ttl)

    def replaced(self, **changes: object) -> Prices:
        """A copy with some prices changed (the ones a caller gave)."""
        new = Prices.__new__(Prices)
        for name in self.__slots__:
            setattr(new, name, changes.get(name, getattr(self, name)))
        return new

    def as_dict(self) -> dict[str, object]:
        """The entry as ``prices --json`` prints it (the LLM id under ``model``; the tier
        as ``long_context``: its threshold and prices)."""
        out = {"model" if name == "llm" else name: getattr(self, name)
               for name in self.__slots__ if name not in ("long", "long_above")}
        long = self.long
        out["long_context"] = None if long is None else {
            "above": self.long_above, "input": long.input, "output": long.output,
            "cache_read": long.cache_read, "cache_write": long.cache_write,
            "source": long.source, "date": long.date, "note": long.note}
        return out


def parse_ttl(text: str | float) -> float:
    """``5m``, ``30m``, ``1h`` or a number of seconds."""
    if isinstance(text, (int, float)):
        return float(text)
    if text in TTL_SECONDS:
        return TTL_SECONDS[text]
    unit = {"s": 1.0, "m": 60.0, "h": 3600.0}.get(text[-1:], None)
    number = text[:-1] if unit else text
    try:
        value = float(number) * (unit or 1.0)
    except ValueError:
        raise ValueError(f"{text!r} is not a TTL (5m, 1h, 30m or seconds)") from None
    if not value > 0:
        raise ValueError(f"{text!r} is not a TTL (it must be positive)")
    if value == math.inf:
        raise ValueError(f"{text!r} is not a TTL (it must be finite)")
    return value


def table() -> Table:
    """The whole table (read once)."""
    global _TABLE
    if _TABLE is None:
        from ..lightjson import loads
        with open(TABLE_FILE, "rb") as f:
            data = loads(f.read())
        assert isinstance(data, dict), f"{TABLE_FILE}: not a JSON object"
        _TABLE = data
    return _TABLE


def entries() -> list[Prices]:
    return [_prices(e) for e in table()["models"]]


def chosen_entries(models: list[str]) -> list[Prices]:
    """The entries of the models named (matched as ``find`` matches), else every one
    (``compact-dp prices``, the Python API's ``prices``)."""
    if not models:
        return entries()
    rows = []
    for m in models:
        found = find(m)
        if found is None:
            from ..errors import UsageError
            raise UsageError(f"{m!r} is not in the price table")
        rows.append(found)
    return rows


def table_doc(rows: list[Prices]) -> dict[str, object]:
    """``prices --json``: the table's currency, when it was checked, its billing rules,
    and the rows."""
    data = table()
    return {"currency": data["currency"], "checked": data["checked"], "rules": data["rules"],
            "models": [p.as_dict() for p in rows]}


def _prices(e: Table, window: int | None = None) -> Prices:
    granularity = table().get("cache_granularity", {}).get(e["provider"], {})

    def priced(t: Table) -> Prices:
        return Prices(e["model"], e["provider"], float(t["input"]), float(t["output"]),
                      float(t["cache_read"]),
                      {k: float(v) for k, v in t["cache_write"].items()} if t["cache_write"]
                      else None, e["default_ttl"], window or int(e["context_window"]),
                      t.get("source", ""), t.get("date", ""), t.get("note", ""),
                      cache_block=e.get("cache_block", granularity.get("cache_block")),
                      cache_min=e.get("cache_min", granularity.get("cache_min")))
    prices = priced(e)
    if e.get("long_context"):
        prices.long, prices.long_above = priced(e["long_context"]), \
            int(e["long_context"]["above"])
    return prices


def _strip_date(model: str) -> str:
    head, _, tail = model.rpartition("-")
    return head if len(tail) == 8 and tail.isdigit() else model


def find(model: str | None) -> Prices | None:
    """The table's entry for a model id, or None when the table does not know it."""
    if not model:
        return None
    window = None
    name = model.strip()
    if name.lower().endswith("[1m]"):
        name, window = name[:-4], LONG_CONTEXT
    for candidate in (name, _strip_date(name)):
        for e in table()["models"]:
            if candidate == e["model"] or candidate in e.get("aliases", ()):
                return _prices(e, window)
    return None


def defaults(values: Mapping[str, AwkValue], ttl: str = "5m") -> Prices:
    """Prices from the decision's parameters (p_input, p_cache, p_out, max_context) for a
    model the table lacks: no write premium, the agent's provider's TTL.  The decision and
    replay both price such a model so."""
    return Prices("(defaults)", "unknown", values["p_input"].num, values["p_out"].num,
                  values["p_cache"].num, None, ttl, int(values["max_context"].num),
                  known=False)
