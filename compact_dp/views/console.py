"""A rich Console that writes to a buffer, styled only where the Env says colours show."""

from __future__ import annotations

import io
import re

from ..environment import Env

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


def buffered_console(env: Env, width: int | None = None, styled: bool | None = None
                     ) -> Console:
    """A Console over a StringIO (read it back with ``text_of``)."""
    from rich.console import Console

    styled = env.styled if styled is None else styled
    return Console(file=io.StringIO(), width=width or env.width, force_terminal=styled,
                   no_color=not styled, highlight=False, emoji=False,
                   color_system="auto" if styled else None)


# the spaces (and colour codes among them) at the end of a line
LINE_END = re.compile(r"(?:[ \t]|\x1b\[[0-9;]*m)+$", re.M)
CODE = re.compile(r"\x1b\[[0-9;]*m")


def text_of(console: Console) -> str:
    """What the console printed, with no line ending in a space: rich pads every cell and
    every justified line to its width, which piped output must not carry (docs/output.md).
    A colour code among those spaces stays, so a terminal's styles still end."""
    buffer = console.file
    assert isinstance(buffer, io.StringIO)
    return LINE_END.sub(lambda m: "".join(CODE.findall(m.group())), buffer.getvalue())


def fitting_columns(cells: list[list[str]], headers: list[str], priority: list[int],
                    width: int, gap: int) -> list[int]:
    """Indices of the columns to show: by priority (lower first) while the table still fits
    ``width``, each column taking its widest cell plus ``gap``; columns of priority ≤ 1 are
    always shown.  A cell is never cut: a column is shown whole or left out."""
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]
    chosen: list[int] = []
    used = 0
    for i in sorted(range(len(headers)), key=lambda i: priority[i]):
        if used + widths[i] + gap <= width or priority[i] <= 1:
            chosen.append(i)
            used += widths[i] + gap
    return sorted(chosen)


def fitted_table(headers: list[str], cells: list[list[str]], priority: list[int],
                 width: int, styled: bool, left: int = 0, styles: list[str | None] | None = None,
                 title: str | None = None) -> Table:
    """A rich Table of the columns that fit ``width`` (see fitting_columns), right-aligned
    but for the first ``left`` columns; the caption names the columns left out."""
    from rich import box
    from rich.table import Table

    gap = 2 if styled else 3                   # padding (+ the ASCII box's bar)
    keep = fitting_columns(cells, headers, priority, width - 2, gap)
    widths = [max([len(headers[i])] + [len(row[i]) for row in cells]) for i in keep]
    # even the columns that must show do not fit: let cells fold onto a second line
    # rather than be cut
    fold = sum(widths) + gap * len(keep) > width - 2
    table = Table(box=box.SIMPLE_HEAD if styled else box.ASCII, pad_edge=False,
                  header_style="bold", show_edge=not styled, title=title,
                  title_justify="left")
    for i in keep:
        table.add_column(headers[i], justify="left" if i < left else "right",
                         no_wrap=not fold, overflow="fold")
    for j, row in enumerate(cells):
        table.add_row(*[row[i] for i in keep], style=styles[j] if styles else None)
    hidden = [h for i, h in enumerate(headers) if i not in keep]
    if hidden:
        table.caption = f"columns left out to fit the width: {', '.join(hidden)}"
    return table
