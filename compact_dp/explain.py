"""``--explain``: every term for the candidate k values and the decision in words (rich).

People trust a compaction they can see.  This shows the table the decision was made from,
the derived quantities with where each came from, the sentence that says why, and how
close the runner-up was.  Only this module imports rich.
"""

from __future__ import annotations

from .models import Decision, Terms, get_model
from .search import BenefitCurve, candidate_bounds, kept_tokens_table
from .render import money, reason, rich_console

ALL_ROWS_UP_TO = 40     # candidates shown in full up to this many
AROUND_BEST = 3         # rows either side of the best k in a long table
COLUMNS = ("k", "K", "H", "①", "②", "③", "④", "⑤", "net $")
LEGEND = ("$ per term: ① cache savings from dropping H tokens, ② one-time cache miss of the "
          "new prefix, ③ the summary request, ④ information lost to repeated summaries, "
          "⑤ quality gained by a shorter context; net = ① − ② − ③ − ④ + ⑤.")


def all_terms(dec: Decision, sizes) -> list[Terms]:
    """Terms for every candidate k the awk loop scores, in order."""
    d = dec.derived
    curve = BenefitCurve(d, get_model(dec.model))
    lo, hi = candidate_bounds(d)
    prefix = kept_tokens_table(sizes)
    return [curve.terms(k, d.T - prefix[d.NR - k]) for k in range(lo, hi + 1)]


def pick_rows(rows: list[Terms], best_k: int, marked: set[int]) -> list[Terms | int]:
    """All rows for short tables; otherwise the first and last, the rows around the best
    k, the rows where the net benefit changes sign, and marked rows.  An int in the result
    stands for that many rows left out."""
    if len(rows) <= ALL_ROWS_UP_TO:
        return list(rows)
    keep = {0, len(rows) - 1}
    for i, t in enumerate(rows):
        if abs(t.k - best_k) <= AROUND_BEST or t.k in marked:
            keep.add(i)
        if i and (rows[i - 1].benefit > 0) != (t.benefit > 0):
            keep.update((i - 1, i))
    out: list[Terms | int] = []
    last = -1
    for i in sorted(keep):
        if i - last > 1:
            out.append(i - last - 1)
        out.append(rows[i])
        last = i
    return out


def derived_lines(dec: Decision) -> list[tuple[str, str, str]]:
    """(name, value, where it came from) for the quantities that do not depend on k."""
    d = dec.derived
    src = d.sources
    lines = [
        ("E", f"{d.E:g}", f"expected remaining turns: {src.get('E', '')}"),
        ("L", f"{d.L:g}", f"LLM calls per turn: {src.get('L', '')}"),
        ("R", f"{d.R:g}", "expected remaining LLM calls, E × L"),
        ("avg", f"{d.avg:,.6g}", f"input tokens per request: {src.get('avg', '')}"),
        ("r_t", f"{d.r_t:.6g}", f"retention after c + 1 = {d.c + 1:g} summaries (floor 0.37)"),
        ("④", money(d.info_loss), "information loss, the same for every k"),
    ]
    if d.Q is not None:
        lines += [("Q", f"{d.Q:g}", f"quality penalty: {src.get('Q', '')}"),
                  ("M", f"{d.M:,.6g}", f"context window: {src.get('M', '')}")]
    lines += [("min_keep", f"{d.min_keep}", "int(NR × min_keep_ratio + 0.5), at least 3")]
    if d.max_keep is not None:
        lines += [("max_keep", f"{d.max_keep}", "int(NR × (1 − min_keep_ratio) + 0.5) (v4.2)")]
    lines += [("T", f"{d.T:,}", f"tokens in {d.NR:,} lines, (bytes + 3) // 4 + 1 each")]
    return lines


def runner_up(rows: list[Terms], best_k: int) -> Terms | None:
    others = [t for t in rows if t.k != best_k]
    if not others:
        return None
    best = others[0]
    for t in others[1:]:
        if t.benefit > best.benefit:
            best = t
    return best


def _money_cell(x: float) -> str:
    return f"{x:,.4f}"


def render(dec: Decision, sizes, policy=None, width: int | None = None,
           terminal: bool | None = None) -> str:
    """The whole explanation as text (with colour codes only for a terminal)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    console, terminal = rich_console(width, terminal)
    console.print(Text(f"compact-dp · model {dec.model} · {dec.lines:,} lines · "
                       f"{dec.total_tokens:,} tokens · {dec.user_lines:,} user lines",
                       style="bold"))
    d = dec.derived
    if d is not None:
        facts = Table(box=None, show_header=False, pad_edge=False, padding=(0, 2, 0, 0))
        for name, value, where in derived_lines(dec):
            facts.add_row(Text(name, style="bold cyan"), Text(value), Text(where, style="dim"))
        console.print(facts)
        rows = all_terms(dec, sizes)
        marked = {dec.aligned_keep} if dec.aligned_keep else set()
        if rows:
            table = Table(box=box.SIMPLE_HEAD if terminal else box.ASCII, pad_edge=False,
                          header_style="bold", show_edge=terminal is False)
            for i, name in enumerate(COLUMNS):
                table.add_column(name, justify="right", no_wrap=True)
            for item in pick_rows(rows, dec.best_k, marked):
                if isinstance(item, int):
                    table.add_row(f"… {item:,} rows left out", *[""] * 8, style="dim")
                    continue
                style = "bold green" if item.k == dec.best_k else \
                    "yellow" if item.k in marked else None
                tag = " best" if item.k == dec.best_k else " aligned" if item.k in marked else ""
                table.add_row(f"{item.k}{tag}", f"{item.K:,}", f"{item.H:,}",
                              *[_money_cell(getattr(item, f)) for f in
                                ("savings", "cache_miss", "compact_cost", "info_loss",
                                 "quality", "benefit")], style=style)
            console.print(table)
            console.print(Text(LEGEND, style="dim"))
            second = runner_up(rows, dec.best_k)
            if second is not None and dec.terms is not None:
                console.print(f"Runner-up: keep {second.k} lines, net {money(second.benefit)} "
                              f"(margin {money(dec.best_benefit - second.benefit)}).")
        if dec.aligned_keep and dec.aligned_keep != dec.best_k:
            console.print(_alignment_note(dec))
        if dec.model == "v4.2":
            console.print(f"v4.2 guards: keep at most {d.max_keep} lines and at least "
                          f"20 × S = {20 * d.S:,g} tokens; "
                          + (dec.guard if dec.guard else "none fired") + ".")
    console.print(Text(reason(dec, policy), style="bold"))
    return console.file.getvalue()


def _alignment_note(dec: Decision) -> str:
    users = dec.conv.user_lines(get_model(dec.model).v2_users)
    if dec.aligned_keep == dec.lines and not (users and users[0] == 0):
        return (f"Turn alignment: no user line at or before the cut at {dec.best_k}, so the "
                f"kept window grows back to line 1 (all {dec.lines:,} lines).")
    return (f"Turn alignment: the cut moves back from {dec.best_k} to {dec.aligned_keep} "
            f"lines so the kept window starts on a user line.")
