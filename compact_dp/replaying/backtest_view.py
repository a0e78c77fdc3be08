"""Showing a backtest: a row per session, a total, and the goals the advice is held to."""

from __future__ import annotations

from ..environment import Env
from ..views.console import buffered_console, fitted_table, text_of
from ..views.words import count

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .records import Doc

# a session is named as replay names it: its project and its id (replay.view)
HEADERS = ["project", "session", "requests", "points", "R / actual", "log err / elapsed's",
           "$ said / got", "ρ", "compact paid", "dp vs best"]
PRIORITY = [0, 0, 1, 4, 1, 2, 3, 3, 2, 1]


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def _num(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _cells(name: list[str], requests: int, s: Doc | None, share: float | None
           ) -> list[str]:
    if s is None:
        return name + [f"{requests:,}", "0"] + ["-"] * 5 + [_pct(share)]
    return name + [f"{requests:,}", f"{s['points']:,}", _num(s["forecast_bias"]),
            _num(s["forecast_log_error_vs_elapsed"]), _num(s["dollars_sum_ratio"]),
            _num(s["dollars_spearman"]), _pct(s["compact_advice_paid"]), _pct(share)]


def render(results: list[Doc], total: Doc, env: Env) -> str:
    console = buffered_console(env)
    styled = console.is_terminal and not console.no_color
    from .view import cut, short_id
    rows = [_cells([cut(r["project"]), short_id(r)], r["requests"], r.get("scores"),
                   r["policies"].get("dp", {}).get("objective_share")) for r in results]
    rows.append(_cells(["total", count(total["sessions"], "session")],
                       sum(r["requests"] for r in results), total.get("scores"),
                       total.get("dp_hindsight_share_median")))
    console.print(fitted_table(HEADERS, rows, PRIORITY, console.width, styled, left=2))
    s = total.get("scores") or {}
    lines = [
        "R / actual: the forecast's Σ over the requests that came (goal 0.75–1.33); log err "
        "/ elapsed's: its mean |log| error over the rule 'as many remain as were made' "
        "(goal ≤ 0.8); $ said / got: predicted over realized saving (median ratio "
        f"{_num(s.get('dollars_median_ratio'))}, goal 0.67–1.5); ρ: their rank correlation "
        "(goal ≥ 0.5); dp vs best: dp's saving over the best schedule in hindsight's, "
        "against what was recorded, both in the objective hindsight minimises (④ counted "
        "for each compaction; total: the median of sessions of 100 or more requests, goal "
        "≥ 50 %)."]
    summed, dollars = total.get("dp_hindsight_share_sum"), total.get("dp_dollar_share_median")
    if summed is not None or dollars is not None:
        lines.append(f"dp's share of hindsight's saving, sessions of 100 or more requests: "
                     f"summed {_pct(summed)} in the objective; in dollars, against the "
                     f"cheapest schedule in dollars, median {_pct(dollars)}, summed "
                     f"{_pct(total.get('dp_dollar_share_sum'))}.")
    beats = total.get("dp_beats_thresholds_share")
    if beats is not None:
        known = total.get("dp_known_beats_thresholds_share")
        told = "" if known is None else \
            f"; told how many requests really came (dp:known), on {known:.0%}"
        lines.append(f"dp cheaper than threshold:60 and threshold:83 on {beats:.0%} of "
                     f"{count(total['long_sessions'], 'session')} of 100 or more requests (goal "
                     f"≥ 70 %){told}.")
    from rich.text import Text
    for line in lines:
        console.print(Text(line, style="dim"))
    return text_of(console)
