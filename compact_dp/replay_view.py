"""Showing replays: a rich table per session, a terminal picture, the total, and JSON."""

from __future__ import annotations

from .render import rich_console

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


def summary_rows(runs) -> list[list[str]]:
    return [[r.policy, f"{len(r.requests):,}", f"{len(r.compactions):,}"
             + (f" ({sum(c.forced for c in r.compactions)} forced)"
                if any(c.forced for c in r.compactions) else ""),
             dollars(r.total_cost), dollars(r.summary_cost), f"{r.peak_context:,.0f}",
             f"{r.mean_context:,.0f}", f"{r.cache_hit_share:.1%}"] for r in runs]


HEADERS = ["policy", "calls", "compactions", "total $", "summary $", "peak input",
           "mean input", "cached"]


def render_text(results: list[dict], width: int | None = None,
                terminal: bool | None = None) -> str:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    console, styled = rich_console(width, terminal)
    width = console.width
    for res in results:
        runs = res["runs"]
        table = Table(title=f"{res['session']} · {res['lines']:,} lines", title_justify="left",
                      box=box.SIMPLE_HEAD if styled else box.ASCII, show_edge=False)
        _columns(table)
        for row in summary_rows(runs):
            table.add_row(*row)
        console.print(table)
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
        table = Table(title=f"total · {len(results)} sessions", title_justify="left",
                      box=box.SIMPLE_HEAD if styled else box.ASCII, show_edge=False)
        _columns(table)
        for row in total_rows(results):
            table.add_row(*row)
        console.print(table)
    return console.file.getvalue()


def _columns(table) -> None:
    for i, h in enumerate(HEADERS):
        table.add_column(h, justify="left" if i == 0 else "right", no_wrap=True)


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


def total_rows(results: list[dict]) -> list[list[str]]:
    return [[t["policy"], f"{t['requests']:,}", f"{t['compactions']:,}"
             + (f" ({t['forced']} forced)" if t["forced"] else ""),
             dollars(t["total_cost"]), dollars(t["summary_cost"]), f"{t['peak_context']:,.0f}",
             f"{t['mean_context']:,.0f}", f"{t['cache_hit_share']:.1%}"]
            for t in totals(results)]


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
