"""Showing replays: a rich table per session, a terminal picture, the total, and JSON."""

from __future__ import annotations

from ..environment import Env
from ..views.console import buffered_console, fitted_table, text_of

BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float], width: int, top: float) -> str:
    """Values squeezed into ``width`` cells (the maximum of each bucket), scaled to top."""
    if not values:
        return ""
    cells = []
    for c in range(min(width, len(values))):
        lo = c * len(values) // min(width, len(values))
        hi = (c + 1) * len(values) // min(width, len(values))
        v = max(values[lo:hi])
        cells.append(BARS[min(len(BARS) - 1, int(v / top * (len(BARS) - 1) + 0.5))]
                     if top > 0 else BARS[0])
    return "".join(cells)


def marks(n: int, points: list[int], width: int) -> str:
    """A row with ▲ under the cells where compactions happened."""
    cells = min(width, n)
    row = [" "] * cells
    for p in points:
        if n:
            row[min(cells - 1, p * cells // n)] = "▲"
    return "".join(row)


def dollars(x: float) -> str:
    return f"${x:,.3f}"


# (header, priority when the width is short: lower is kept longer)
COLUMNS = (("policy", 0), ("calls", 4), ("compactions", 2), ("total $", 1),
           ("summary $", 5), ("peak input", 3), ("mean input", 6), ("cached", 7))


def row(summary: dict) -> list[str]:
    """One table row from a Run.summary() or a totals() entry."""
    forced = f" ({summary['forced']:,} forced)" if summary["forced"] else ""
    return [summary["policy"], f"{summary['requests']:,}", f"{summary['compactions']:,}" + forced,
            dollars(summary["total_cost"]), dollars(summary["summary_cost"]),
            f"{summary['peak_context']:,.0f}", f"{summary['mean_context']:,.0f}",
            f"{summary['cache_hit_share']:.1%}"]


def render_text(results: list[dict], env: Env, width: int | None = None,
                styled: bool | None = None) -> str:
    """Per session a table and a sparkline per policy; a total table for several."""
    from rich.text import Text

    console = buffered_console(env, width, styled)
    styled = console.is_terminal and not console.no_color
    width = console.width
    for res in results:
        runs = res["runs"]
        console.print(_table(f"{res['session']} · {res['lines']:,} lines",
                             [r.summary() for r in runs], width, styled))
        top = max((r.peak_context for r in runs), default=0)
        name_w = max(len(r.policy) for r in runs) + 1
        cells = max(10, width - name_w - 2)
        console.print(Text(f"input tokens per request (▁ = 0 … █ = {top:,.0f}); ▲ = "
                           "compaction", style="dim"))
        for r in runs:
            values = [q.input for q in r.requests]
            console.print(f"{r.policy:<{name_w}} " + sparkline(values, cells, top))
            console.print(" " * (name_w + 1) + marks(len(values),
                                                     [c.request for c in r.compactions],
                                                     cells))
        console.print()
    if len(results) > 1:
        console.print(_table(f"total · {len(results):,} sessions", totals(results), width,
                             styled))
    return text_of(console)


def _table(title: str, summaries: list[dict], width: int, styled: bool):
    return fitted_table([h for h, _ in COLUMNS], [row(s) for s in summaries],
                        [p for _, p in COLUMNS], width, styled, left=1, title=title)


def totals(results: list[dict]) -> list[dict]:
    """Per policy over all sessions: sums, the peak, request-weighted means."""
    out = []
    for j, first in enumerate(results[0]["runs"]):
        runs = [res["runs"][j] for res in results]
        n = sum(len(r.requests) for r in runs)
        inputs = sum(r.mean_context * len(r.requests) for r in runs)
        cached = sum(r.cache_hit_share * r.mean_context * len(r.requests) for r in runs)
        out.append({"policy": first.policy, "requests": n,
                    "compactions": sum(len(r.compactions) for r in runs),
                    "forced": sum(sum(c.forced for c in r.compactions) for r in runs),
                    "total_cost": sum(r.total_cost for r in runs),
                    "summary_cost": sum(r.summary_cost for r in runs),
                    "peak_context": max(r.peak_context for r in runs),
                    "mean_context": inputs / n if n else 0,
                    "cache_hit_share": cached / inputs if inputs else 0.0})
    return out


def to_json(results: list[dict]) -> str:
    import orjson
    sessions = []
    for res in results:
        sessions.append({"session": res["session"], "lines": res["lines"], "policies": [
            {**r.summary(),
             "context": [q.input for q in r.requests],
             "compaction_points": [{"request": c.request + 1, "line": c.line,
                                    "dropped_lines": c.dropped_lines,
                                    "dropped_tokens": c.dropped_tokens,
                                    "kept_lines": c.kept_lines, "forced": c.forced,
                                    "cost": c.cost} for c in r.compactions]}
            for r in res["runs"]]})
    out = {"sessions": sessions}
    if len(results) > 1:
        out["total"] = totals(results)
    return orjson.dumps(out).decode()
