"""Showing replays: a table per session (fitted to the width), a terminal picture of the
input tokens per request, the total over many sessions, and JSON."""

from __future__ import annotations

from ..environment import Env
from ..views.console import buffered_console, fitted_table, text_of
from ..views.words import count, dollars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from .records import Doc

BARS = "▁▂▃▄▅▆▇█"
# (header, priority when the width is short: lower is kept longer)
COLUMNS = (("policy", 0), ("compactions", 2), ("input $", 1), ("summaries $", 4),
           ("peak input", 5), ("cached", 6), ("vs recorded", 1), ("of best", 3))


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


def cents(x: float | None) -> str:
    """$1.80, or -$1.36 for a loss; - for nothing to show."""
    if x is None:
        return "-"
    return ("-" if x < -0.005 else "") + dollars(abs(x), 2)


def percent(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def comparison(summary: Doc, baseline: Doc | None) -> str:
    """The recorded policy: its simulation error against the bill; the others: what they
    save against the recorded policy (input and summaries)."""
    if "simulation_error" in summary:
        return f"{summary['simulation_error']:+.2%} error"
    if "saving" not in summary or baseline is None:
        return "-"
    saving = summary["saving"]
    base = summary.get("compared_cost", baseline["comparable_cost"])
    share = saving / base if base else 0.0
    verb = "saves" if saving >= 0 else "costs"
    return f"{verb} {dollars(abs(saving), 3)} ({abs(share):.0%})"


def row(summary: Doc, baseline: Doc | None) -> list[str]:
    forced = f" ({summary['forced']:,} forced)" if summary["forced"] else ""
    return [summary["policy"], f"{summary['compactions']:,}" + forced,
            dollars(summary["input_cost"], 3), dollars(summary["summary_output_cost"], 3),
            f"{summary['peak_context']:,.0f}", f"{summary['cache_hit_share']:.1%}",
            comparison(summary, baseline), percent(summary.get("objective_share"))]


def table(title: str, summaries: list[Doc], width: int, styled: bool) -> Table:
    """One table row per policy; the comparisons only where there are some."""
    baseline = next((s for s in summaries if s["policy"] == "recorded"), None)
    shown = [i for i, (header, _) in enumerate(COLUMNS)
             if header == "vs recorded" and any("saving" in s for s in summaries) or
             header == "of best" and any(s.get("objective_share") is not None
                                         for s in summaries) or
             header not in ("vs recorded", "of best")]
    cells = [row(s, baseline) for s in summaries]
    return fitted_table([COLUMNS[i][0] for i in shown], [[c[i] for i in shown] for c in cells],
                        [COLUMNS[i][1] for i in shown], width, styled, left=1, title=title)


def bill_line(recorded: Doc) -> str:
    return (f"recorded bill: input {dollars(recorded['input_cost'], 3)} over "
            f"{count(recorded['requests'], 'request')} ({recorded['cache_read_tokens']:,} read, "
            f"{recorded['cache_write_5m_tokens'] + recorded['cache_write_1h_tokens']:,} "
            f"written); output {dollars(recorded['output_cost'], 3)}, from mid-stream "
            "snapshots that undercount, so priced apart")


def hindsight_line(summaries: list[Doc]) -> str | None:
    """What hindsight minimises, and dp's saving against what was recorded in both
    measures (dollars; the objective, which charges ④ for each compaction)."""
    by = {s["policy"]: s for s in summaries}
    recorded, dp = by.get("recorded"), by.get("dp")
    if "hindsight" not in by or recorded is None or dp is None:
        return None

    def saved(key: str) -> str:
        x = recorded[key] - dp[key]
        return f"{'saves' if x >= 0 else 'loses'} {dollars(abs(x), 3)}"
    return ("hindsight: the schedule with the least objective (input and summaries, plus "
            f"the information penalty ④ for each compaction); dp {saved('comparable_cost')}"
            f" in dollars and {saved('objective')} in the objective against what was "
            "recorded")


def assumed_line(results: list[Doc]) -> str | None:
    """One line when any session was billed at a price it did not show."""
    priced = [r for r in results if any(a.startswith(("prices", "model"))
                                        for a in r.get("assumed", ()))]
    if not priced:
        return None
    n = len(priced)
    return (f"assumed: {n:,} session{'' if n == 1 else 's'} billed at prices the session "
            "did not show (a model it does not name, or one not in the price table); "
            "--json says which, under assumed")


def short_id(res: Doc) -> str:
    """The session's id (else its file's name) cut to 8 characters, as a name, not a
    path: it never folds."""
    import os
    name: str = res.get("session_id") or \
        os.path.splitext(os.path.basename(res["session"]))[0]
    return name if len(name) <= 9 else name[:8] + "…"


def render_text(results: list[Doc], env: Env, width: int | None = None,
                styled: bool | None = None, many: bool = False, by: str | None = None,
                sort: str = "date", detail: bool = False) -> str:
    """One session: its table and a sparkline per policy.  ``many`` (several files, or
    ``by``): a row per session, project, day or month, and a total; ``detail`` adds every
    session's table and pictures, and the policies' total."""
    from rich.text import Text

    console = buffered_console(env, width, styled)
    styled = console.is_terminal and not console.no_color
    width = console.width
    good = [r for r in results if "policies" in r]
    for res in good if detail or not many else ():
        summaries = res["policies"]
        n = res["requests"]
        title = (f"{res['project']} · {short_id(res)} · {res['format']} · "
                 f"{count(n, 'request')} · model {res['model']}, keep {res['keep']}")
        console.print(table(title, summaries, width, styled))
        console.print(Text(f"file: {res['session']}", style="dim"), soft_wrap=True)
        if "profile" in res and not many:
            print_profile(console, res["profile"])
        if res.get("recorded"):
            console.print(Text(bill_line(res["recorded"]), style="dim"))
        for line in (hindsight_line(summaries), None if many else assumed_line([res])):
            if line:
                console.print(Text(line + ".", style="dim"))
        if summaries and "context" in summaries[0]:
            _pictures(console, summaries, width)
        console.print()
    if many and good:
        total = totals_of(good)
        if detail:
            console.print(table(f"total · {count(total['sessions'], 'session')}", total["policies"],
                                width, styled))
            if total["recorded"]:
                console.print(Text(bill_line(total["recorded"]), style="dim"))
            console.print()
        _rows(console, good, total, by or "session", sort, width, styled)
    elif many:
        console.print(Text("no session to show", style="dim"))
    skipped = len(results) - len(good)
    if skipped:
        console.print(Text(f"{count(skipped, 'file')} skipped (standard error "
                           "says why)", style="dim"))
    return text_of(console)


def _rows(console: Console, good: list[Doc], total: Doc, by: str, sort: str, width: int,
          styled: bool) -> None:
    """The table of many sessions: a row per group and the total, then what the columns
    mean."""
    from rich.text import Text

    from .compare import compared_policies, groups
    names = compared_policies(good)
    main = next((p for p in names if p != "hindsight"), None)
    share = main is not None and "hindsight" in names
    first = {"session": ["project", "session", "date"], "project": ["project", "sessions",
                                                                     "since"],
             "day": ["day", "sessions"], "month": ["month", "sessions"]}[by]
    headers = first + ["requests", "compactions", "bill"] + names + \
        ([f"{main} of best"] if share else [])
    priority = {"session": [0, 3, 2], "project": [0, 3, 2], "day": [0, 3],
                "month": [0, 3]}[by] + [4, 5, 1] + \
        [1 if p == main else 2 if p == "hindsight" else 7 for p in names] + ([6] if share else [])
    sorted_by = sort_column(sort, by, names)
    if sorted_by in headers:                 # the order of the rows stays in sight
        priority[headers.index(sorted_by)] = 0

    def cells(label: list[str], r: Doc) -> list[str]:
        by_name = {p["policy"]: p for p in r["policies"]}
        return label + [f"{r['requests']:,}", f"{r['compactions']:,}",
                        cents(r["recorded_cost"])] + \
            [cents(by_name[p]["saving"]) if p in by_name else "-" for p in names] + \
            ([percent(by_name[main]["objective_share"]) if main in by_name else "-"]
             if share else [])
    rows = []
    for r in groups(good, by, sort):
        if by == "session":
            label = [cut(r["project"]), short_id({"session": r["key"],
                                                  "session_id": r["session_id"]}),
                     r["first"] or "-"]
        elif by == "project":
            label = [cut(r["key"]), f"{r['sessions']:,}", r["first"] or "-"]
        else:
            label = [r["key"] or "no date", f"{r['sessions']:,}"]
        rows.append(cells(label, r))
    n = total["sessions"]
    label = ["total", count(n, "session") if by == "session" else
             f"{n:,}"] + [""] * (len(first) - 2)
    rows.append(cells(label, total))
    console.print(fitted_table(headers, rows, priority, width, styled,
                               left=3 if by == "session" else 1,
                               styles=[None] * (len(rows) - 1) + ["bold"]))
    words = ["bill: the recorded cost, sub-agents included"]
    if names:
        words.append(f"{', '.join(names)}: what that policy would have saved against what "
                     "was recorded (input and summaries, replayed)")
    if share:
        words.append(f"{main} of best: {main}'s saving over hindsight's, the best schedule, "
                     "both in the objective hindsight minimises (④ counted for each "
                     "compaction)")
    recorded = next((p for p in total["policies"] if p["policy"] == "recorded"), None)
    if recorded is not None and "simulation_error" in recorded:
        words.append(f"the replay of what was recorded is {recorded['simulation_error']:+.2%}"
                     " off the bill")
    if sort != "date":
        words.append(f"rows sorted by {sorted_by}" + ("'s saving" if sort == "saving" else "")
                     + (", A to Z" if sort == "project" else ", the largest first"))
    console.print(Text("; ".join(words) + ".", style="dim"))
    for line in (hindsight_line(total["policies"]), assumed_line(good)):
        if line:
            console.print(Text(line + ".", style="dim"))
    used = next((r["profile"] for r in good if "profile" in r), None)
    if used is not None:
        print_profile(console, used)


def print_profile(console: Console, record: Doc) -> None:
    """Where dp's forecast and what its compactions leave came from (``Profile.record``):
    ``calibrate`` changes them, so a replay says which profile it used — a file's path on
    a line of its own, whole, as the session's file is."""
    from rich.text import Text

    from ..calibration.profile import BUILT_IN
    words = "dp's forecast and compaction figures: "
    if record.get("path") in (None, BUILT_IN):
        console.print(Text(f"{words}the built-in profile ({record['source']}).", style="dim"))
        return
    console.print(Text(f"{words}the profile ({record['source']}) in", style="dim"))
    console.print(Text(str(record["path"]), style="dim"), soft_wrap=True)


def sort_column(sort: str, by: str, names: list[str]) -> str:
    """The column of the table of many sessions that ``--sort`` orders its rows by
    (compare.sort_key): saving is the first compared policy's."""
    if sort == "saving":
        return names[0] if names else "saving"
    first = {"session": "date", "project": "since", "day": "day", "month": "month"}[by]
    return {"date": first, "project": "project", "requests": "requests",
            "cost": "bill"}[sort]


def cut(name: str, width: int = 24) -> str:
    """A project's name, whole when short, else cut with … (a cell never folds)."""
    return name if len(name) <= width else name[:width - 1] + "…"


def _pictures(console: Console, runs: list[Doc], width: int) -> None:
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


def totals_of(results: list[Doc]) -> Doc:
    from .batch import totals
    return totals(results)


def json_doc(results: list[Doc], by: str = "session", sort: str = "date") -> Doc:
    """``sessions`` (each with its policies compared), ``skipped``, ``total`` (with
    several) and ``groups``: the rows of the table of many sessions (``--json``, and
    the Python API's ``Replay.as_dict``)."""
    from .batch import skip_reason
    from .compare import groups
    good = [res for res in results if "policies" in res]
    sessions = [{**{k: v for k, v in res.items() if k != "policies"},
                 "policies": res["policies"]} for res in good]
    skipped = [{"session": res["session"], "error": skip_reason(res)}
               for res in results if "policies" not in res]
    out: Doc = {"sessions": sessions, "skipped": skipped}
    if len(good) > 1:
        out["total"] = totals_of(good)
    out["by"], out["groups"] = by, groups(good, by, sort)
    return out
