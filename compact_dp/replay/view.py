"""Showing replays: a table per session (fitted to the width), a terminal picture of the
input tokens per request, the total over many sessions, and JSON."""

from __future__ import annotations

from ..environment import Env
from ..views.console import buffered_console, fitted_table, text_of

BARS = "▁▂▃▄▅▆▇█"
# (header, priority when the width is short: lower is kept longer)
COLUMNS = (("policy", 0), ("compactions", 2), ("input $", 1), ("summaries $", 4),
           ("peak input", 5), ("cached", 6), ("vs recorded", 1))


def sparkline(values: list[float], width: int, top: float) -> str:
    """Values squeezed into ``width`` cells (the maximum of each bucket), scaled to top."""
    if not values:
        return ""
    cells = []
    n = min(width, len(values))
    for c in range(n):
        lo, hi = c * len(values) // n, (c + 1) * len(values) // n
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


def comparison(summary: dict, recorded: dict | None, baseline: dict | None) -> str:
    """The recorded policy: its simulation error against the bill; the others: what they
    save against the recorded policy (input and summaries)."""
    if recorded is None or baseline is None:
        return "-"
    if summary["policy"] == "recorded":
        return f"{simulation_error(summary, recorded):+.2%} error"
    saving = baseline["comparable_cost"] - summary["comparable_cost"]
    share = saving / baseline["comparable_cost"] if baseline["comparable_cost"] else 0.0
    verb = "saves" if saving >= 0 else "costs"
    return f"{verb} {dollars(abs(saving))} ({abs(share):.0%})"


def simulation_error(summary: dict, recorded: dict) -> float:
    """The recorded policy's input cost against the bill (like with like: a summary request
    the recording does not show is left out)."""
    bill = recorded["input_cost"]
    simulated = summary["input_cost"] - summary["unrecorded_cost"]
    return (simulated - bill) / bill if bill else 0.0


def row(summary: dict, recorded: dict | None, baseline: dict | None) -> list[str]:
    forced = f" ({summary['forced']:,} forced)" if summary["forced"] else ""
    return [summary["policy"], f"{summary['compactions']:,}" + forced,
            dollars(summary["input_cost"]), dollars(summary["summary_output_cost"]),
            f"{summary['peak_context']:,.0f}", f"{summary['cache_hit_share']:.1%}",
            comparison(summary, recorded, baseline)]


def table(title: str, summaries: list[dict], recorded: dict | None, width: int,
          styled: bool):
    baseline = next((s for s in summaries if s["policy"] == "recorded"), None)
    columns = COLUMNS if recorded and baseline else COLUMNS[:-1]
    return fitted_table([h for h, _ in columns],
                        [row(s, recorded, baseline)[:len(columns)] for s in summaries],
                        [p for _, p in columns], width, styled, left=1, title=title)


def bill_line(recorded: dict) -> str:
    return (f"recorded bill: input {dollars(recorded['input_cost'])} over "
            f"{recorded['requests']:,} requests ({recorded['cache_read_tokens']:,} read, "
            f"{recorded['cache_write_5m_tokens'] + recorded['cache_write_1h_tokens']:,} "
            f"written); output {dollars(recorded['output_cost'])}, from mid-stream "
            "snapshots that undercount, so priced apart")


def render_text(results: list[dict], env: Env, width: int | None = None,
                styled: bool | None = None, pictures: bool = True) -> str:
    """Per session a table and a sparkline per policy; a total table for several."""
    from rich.text import Text

    console = buffered_console(env, width, styled)
    styled = console.is_terminal and not console.no_color
    width = console.width
    good = [r for r in results if "policies" in r]
    for res in good:
        summaries = res["policies"]
        n = res["requests"]
        title = (f"{res['session']} · {res['format']} · {n:,} request{'' if n == 1 else 's'}"
                 f" · model {res['model']}, keep {res['keep']}")
        console.print(table(title, summaries, res.get("recorded"), width, styled))
        if res.get("recorded"):
            console.print(Text(bill_line(res["recorded"]), style="dim"))
        if pictures and summaries and "context" in summaries[0]:
            _pictures(console, summaries, width)
        console.print()
    if len(good) > 1:
        total = totals_of(good)
        console.print(table(f"total · {total['sessions']:,} sessions", total["policies"],
                            total["recorded"], width, styled))
        if total["recorded"]:
            console.print(Text(bill_line(total["recorded"]), style="dim"))
    skipped = len(results) - len(good)
    if skipped:
        console.print(Text(f"{skipped:,} file{'' if skipped == 1 else 's'} skipped (each "
                           "named on standard error)", style="dim"))
    return text_of(console)


def _pictures(console, runs: list[dict], width: int) -> None:
    from rich.text import Text

    top = max((r["peak_context"] for r in runs), default=0)
    name_w = max(len(r["policy"]) for r in runs) + 1
    cells = max(10, width - name_w - 2)
    console.print(Text(f"input tokens per request (▁ = 0 … █ = {top:,.0f}); ▲ = compaction",
                       style="dim"))
    for r in runs:
        values = r["context"]
        console.print(f"{r['policy']:<{name_w}} " + sparkline(values, cells, top))
        console.print(" " * (name_w + 1) + marks(len(values),
                                                 [c["request"] - 1
                                                  for c in r["compaction_points"]], cells))


def totals_of(results: list[dict]) -> dict:
    from .batch import totals
    return totals(results)


def to_json(results: list[dict]) -> str:
    from ..views.record import to_json as dumps
    from .batch import skip_reason
    sessions = []
    skipped = [{"session": res["session"], "error": skip_reason(res)}
               for res in results if "policies" not in res]
    for res in results:
        if "policies" not in res:
            continue
        summaries = res["policies"]
        baseline = next((s for s in summaries if s["policy"] == "recorded"), None)
        recorded = res.get("recorded")
        policies = []
        for s in summaries:
            extra: dict = {}
            if recorded and baseline:
                if s["policy"] == "recorded":
                    extra["simulation_error"] = simulation_error(s, recorded)
                else:
                    extra["saving"] = baseline["comparable_cost"] - s["comparable_cost"]
            policies.append({**s, **extra})
        entry = {k: v for k, v in res.items() if k != "policies"}
        entry["policies"] = policies
        sessions.append(entry)
    out: dict = {"sessions": sessions, "skipped": skipped}
    if len([r for r in results if "policies" in r]) > 1:
        out["total"] = totals_of(results)
    return dumps(out)
