"""Replay: what a compaction policy would have cost over a recorded session.

``setting`` (what every policy of a session shares) · ``billing`` (the cache rules, once)
· ``policies`` · ``simulate`` (the loop: grow the session again, compact where the agent
could, bill every request) · ``hindsight`` (the cheapest schedule) · ``run`` (a session's
replay put together) · ``bill`` (the recorded bill) · ``batch`` (many sessions) ·
``backtest`` (the advice against what happened) · ``view``, ``backtest_view``, ``svg``
(showing them).  Imports go one way, into the core and ``simulate``.
"""
