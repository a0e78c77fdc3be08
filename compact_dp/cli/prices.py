"""``compact-dp prices [MODEL...]``: the dated price table, for people and (--json) for
programs."""

from __future__ import annotations

from ..environment import Env
from .options import Option
from .typerkit import command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .typerkit import Command

DOC = """List the price table compact-dp bills with ($ per million tokens).

Each row: the model id (with its aliases in --json), input, cache read, cache writes for
the 5-minute and 1-hour TTL (or - where the provider charges no write premium: a write
costs input), output, the context window, and the date the prices were read.  With MODEL
arguments, only those (matched as the decision matches a session's model id).
"""
OPTIONS = [Option("--json", "json", "print the table as JSON", takes_value=False)]


def build(env: Env) -> Command:
    def prices(files: list[str] | None, json: bool) -> int:
        return prices_command(env, files or [], json)
    return command("prices", prices, OPTIONS, "Model ids to show (default: all).", DOC,
                   "MODEL", pages=("pricing.md",))


def prices_command(env: Env, models: list[str], json_out: bool) -> int:
    from ..api import prices
    from ..pricing.table import table
    from ..views.console import buffered_console, fitted_table, text_of
    from ..views.words import tokens

    answer = prices(models)
    rows = answer.models
    if json_out:
        from ..views.record import dumps
        return env.write(dumps(answer.as_dict()) + "\n")
    console = buffered_console(env)
    styled = console.is_terminal and not console.no_color
    headers = ["model", "in", "read", "w 5m", "w 1h", "out", "window", "date"]

    def money(x: float | None) -> str:
        return "-" if x is None else f"{x:g}"

    cells = [[p.llm, money(p.input), money(p.cache_read),
              money((p.cache_write or {}).get("5m", (p.cache_write or {}).get("30m"))),
              money((p.cache_write or {}).get("1h")), money(p.output),
              tokens(p.context_window), p.date] for p in rows]
    console.print(fitted_table(headers, cells, [0, 1, 2, 4, 5, 1, 6, 3], console.width,
                               styled, left=1,
                               title=f"USD per million tokens · checked {table()['checked']}"))
    console.print("in, read, out: uncached input, cache read, output; w 5m, w 1h: a cache "
                  "write with that TTL (- : no write premium, a write costs input; gpt-5.6 "
                  "writes live 30 minutes). Sources and notes: compact-dp prices --json.")
    return env.write(text_of(console))
