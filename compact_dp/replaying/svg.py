"""An SVG picture of context size over the requests, one line per policy (no dependencies).

Axes with ticks and labels, a legend, and a circle where each compaction happened, so a
browser shows at a glance when and how hard each policy cut the context.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .records import Doc

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2")
WIDTH, HEIGHT = 860, 420
LEFT, RIGHT, TOP, BOTTOM = 80, 170, 40, 60


def nice_step(span: float, ticks: int = 5) -> float:
    """A round tick step (1, 2 or 5 × 10^n) giving about ``ticks`` ticks over span."""
    if span <= 0:
        return 1.0
    raw = span / ticks
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def plot_svg(title: str, runs: list[Doc]) -> str:
    """runs: run summaries with their detail (``context``: every request's prompt,
    ``compaction_points``: each with the 1-based ``request`` it came before)."""
    n = max((len(r["context"]) for r in runs), default=0)
    top = max((r["peak_context"] for r in runs), default=0) or 1
    ystep = nice_step(top)
    ymax = ystep * (int(top / ystep) + 1)
    xstep = max(1.0, nice_step(max(n - 1, 1)))          # whole requests only
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i: float) -> float:
        return LEFT + (i / max(n - 1, 1)) * plot_w

    def y(v: float) -> float:
        return TOP + plot_h - (v / ymax) * plot_h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           f'<text x="{WIDTH / 2:.0f}" y="22" text-anchor="middle" font-size="15">'
           f'{escape(title)}</text>',
           f'<g class="axes" stroke="#333">'
           f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{LEFT + plot_w}" y2="{TOP + plot_h}"/>'
           f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}"/></g>']
    tick = 0.0
    while tick <= ymax + 1e-9:
        out.append(f'<line x1="{LEFT - 4}" y1="{y(tick):.1f}" x2="{LEFT + plot_w}" '
                   f'y2="{y(tick):.1f}" stroke="#ddd"/>'
                   f'<text x="{LEFT - 8}" y="{y(tick) + 4:.1f}" text-anchor="end">'
                   f'{tick:,.0f}</text>')
        tick += ystep
    tick = 0.0
    while tick <= max(n - 1, 1) + 1e-9:
        out.append(f'<line x1="{x(tick):.1f}" y1="{TOP + plot_h}" x2="{x(tick):.1f}" '
                   f'y2="{TOP + plot_h + 4}" stroke="#333"/>'
                   f'<text x="{x(tick):.1f}" y="{TOP + plot_h + 18}" text-anchor="middle">'
                   f'{tick + 1:,.0f}</text>')
        tick += xstep
    out.append(f'<text x="{LEFT + plot_w / 2:.0f}" y="{HEIGHT - 18}" text-anchor="middle">'
               'LLM request</text>')
    out.append(f'<text x="18" y="{TOP + plot_h / 2:.0f}" text-anchor="middle" '
               f'transform="rotate(-90 18 {TOP + plot_h / 2:.0f})">input tokens per request'
               '</text>')
    for j, run in enumerate(runs):
        colour = COLOURS[j % len(COLOURS)]
        prompts = run["context"]
        points = " L ".join(f"{x(i):.1f} {y(p):.1f}" for i, p in enumerate(prompts))
        name = escape(run["policy"])
        if points:
            out.append(f'<path class="policy" data-policy="{name}" d="M {points}" '
                       f'fill="none" stroke="{colour}" stroke-width="1.8"/>')
        if len(prompts) == 1:                 # a path of one point draws nothing: a dot
            out.append(f'<circle class="point" data-policy="{name}" cx="{x(0):.1f}" '
                       f'cy="{y(prompts[0]):.1f}" r="3" fill="{colour}"/>')
        for c in run["compaction_points"]:
            before = c["request"] - 1
            if before < len(prompts):
                out.append(f'<circle class="compaction" data-policy="{name}" '
                           f'cx="{x(before):.1f}" cy="{y(prompts[before]):.1f}" r="4" '
                           f'fill="{colour}"><title>{name}: compaction before request '
                           f'{before + 1}, {c["dropped_tokens"]:,.0f} tokens summarised'
                           f'</title></circle>')
        ly = TOP + 10 + 22 * j
        out.append(f'<line x1="{WIDTH - RIGHT + 20}" y1="{ly}" x2="{WIDTH - RIGHT + 44}" '
                   f'y2="{ly}" stroke="{colour}" stroke-width="3"/>'
                   f'<text x="{WIDTH - RIGHT + 50}" y="{ly + 4}">{name} '
                   f'({len(run["compaction_points"])} ●)</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
