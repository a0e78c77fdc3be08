"""``--explain``: every term for the candidate k values and the decision in words (rich).

People trust a compaction they can see.  This shows the table the decision was made from,
the derived quantities with where each came from, the sentence that says why, and how
close the runner-up was.  The table fits the width it is given: when all columns do not
fit, the ones that can be read elsewhere go first (④ is the same for every k and H is
T − K) — a number is never cut.
"""

from __future__ import annotations

from ..core.decision import Weighing
from ..core.policy import PolicyResult
from ..core.quantities import Terms
from ..core.search import BenefitCurve, candidate_bounds, cold_rewrite, prefix_sums
from ..environment import Env
from ..sessions.session import Session
from .console import buffered_console, fitted_table, text_of
from .words import count, duration, money, reason, wait_words
from .words import lines as counted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

    from ..pricing.clock import CacheClock
    from ..question import Question

ALL_ROWS_UP_TO = 40     # candidates shown in full up to this many
AROUND_BEST = 3         # rows either side of the best k in a long table
BEST, CUT = "*", "+"    # row markers: the best k, and where the cut lands after alignment
MIN_WHERE = 24          # the narrowest "where from" column beside the values
INDENT = 2              # a "where from" under its name, when it does not fit beside
# (header, Terms attribute or None for k, priority: lower is kept longer when narrow)
COLUMNS = (("k", None, 0), ("K", "K", 2), ("H", "H", 7), ("①", "savings", 3),
           ("②", "cache_miss", 4), ("③", "compact_cost", 5), ("④", "info_loss", 8),
           ("⑤", "quality", 6), ("⓪", "rewrite", 6), ("net $", "benefit", 1))
LEGEND = ("Terms in $: ① cache savings from dropping H tokens, ② one-time cache miss of the "
          "new prefix, ③ the summary request, ④ information lost to repeated summaries, "
          "⑤ quality gained by a shorter context{rewrite}; net = ① − ② − ③ − ④ + ⑤{plus}.")


def all_terms(dec: Weighing) -> list[Terms]:
    """Terms for every candidate k the awk loop scores, in order."""
    d = dec.derived
    assert d is not None
    curve = BenefitCurve(d, dec.model)
    lo, hi = candidate_bounds(d, dec.whole)
    if dec.whole:                         # one candidate: keep nothing
        return [curve.terms(0, 0)] if lo <= hi else []
    prefix = prefix_sums(dec.conv.sizes)
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


def horizon_words(source: str) -> str:
    """The R line's words: which horizon, and why it was the one used."""
    if source.startswith("seed"):
        return "expected remaining LLM calls, E × L"
    return f"expected remaining LLM calls, {source}"


def derived_lines(dec: Weighing) -> list[tuple[str, str, str]]:
    """(name, value, where it came from) for the quantities that do not depend on k."""
    d = dec.derived
    assert d is not None
    src = d.sources
    lines = [
        ("E", f"{d.E:,g}", f"expected remaining turns: {src.get('E', '')}"),
        ("L", f"{d.L:,g}", f"LLM calls per turn: {src.get('L', '')}"),
        ("R", f"{d.R:,g}", horizon_words(src.get("R", "seed: E × L"))),
        ("avg", f"{d.avg:,.6g}", f"input tokens per request: {src.get('avg', '')}"),
        ("r_t", f"{d.r_t:.6g}", f"retention after c + 1 = {d.c + 1:,g} "
                            f"{'summary' if d.c + 1 == 1 else 'summaries'} (floor 0.37)"),
        ("④", money(d.info_loss), "information loss, the same for every k"),
    ]
    e = dec.ending
    if e is not None:
        pays = "never" if e.pays_back_after is None else f"after {e.pays_back_after:,}"
        held = "; so not now" if e.held else ""
        lines += [("end", f"{e.chance:.0%}", f"chance the turn now starting is the last "
                   f"(about {e.requests:,.0f} calls); the compaction pays back {pays}{held}")]
    lines += schedule_lines(dec)
    if d.Q is not None:
        lines += [("Q", f"{d.Q:g}", f"quality penalty: {src.get('Q', '')}"),
                  ("M", f"{d.M:,.6g}", f"context window: {src.get('M', '')}")]
    if dec.whole:
        lines += [("keep", "none", "the agent summarises the whole history when it "
                   "compacts: only whether to compact now is decided")]
    else:
        lines += [("min_keep", f"{d.min_keep:,}",
                   "int(NR × min_keep_ratio + 0.5), at least 3, at most NR")]
    if d.max_keep is not None:
        lines += [("max_keep", f"{d.max_keep:,}",
                   "int(NR × (1 − min_keep_ratio) + 0.5), at most NR (v4.2)")]
    size_rule = "(bytes + 3) // 4 + 1 each" if dec.unit == "line" else "sized as above"
    lines += [("T", f"{d.T:,}", f"tokens in {d.NR:,} {dec.unit}s, {size_rule}")]
    return lines


def schedule_lines(dec: Weighing) -> list[tuple[str, str, str]]:
    """(name, value, where from) of the schedule (core.wait): the growth it expects, the
    uncertainty hold, the moment worth waiting for, the pause, how long compacting takes."""
    o = dec.outlook
    if o is None:
        return []
    lines = [("growth", f"{o.growth:,.0f}", "tokens the context grows a request: what it "
              "holds, less what a compaction left, over the requests since")]
    u = dec.uncertainty
    if u is not None:
        held = "; so not now" if u.held else ""
        lines.append(("σ", f"{u.log_error:.2f}", f"the forecast's measured log error: with "
                      f"R × e^−σ/2 = {u.requests:,.4g} calls the net benefit is "
                      f"{money(u.benefit)}{held}"))
    w = dec.wait
    if w is not None:
        held = "; so not now" if w.held else ""
        lines.append(("wait", w.until, f"{wait_words(w)}: {money(w.expected_benefit)} more "
                      f"than compacting now is expected{held}"))
    p = dec.pause
    if p is not None:
        lines.append(("pause", money(p.saving), "what compacting now saves if the next "
                      f"request comes after the cache goes cold (in "
                      f"{duration(p.if_idle_seconds)}): it avoids re-writing "
                      f"{money(p.rewrite)} of context"))
    if o.compaction_seconds is not None:
        lines.append(("compacting", f"~{duration(o.compaction_seconds)}",
                      f"how long a compaction takes: {o.compaction_source}"))
    return lines


def session_lines(session: Session, question: Question | None
                  ) -> list[tuple[str, str, str]]:
    """(name, value, where from) for the session: its format, the live context, the prices,
    the cache's state, and each parameter it can supply."""
    start, total = session.live_start, session.live_start + session.live_messages
    unit = "lines" if session.format == "bash-agent" else "messages"
    compactions = session.compaction_count
    after = f"{unit} after the last of {count(compactions, 'compaction')}" if compactions \
        else f"{unit}, no compaction"
    sized = ("sized from the recorded prompts" if session.token_source == "usage" else
             "each (bytes + 3) // 4 + 1 tokens of its "
             + ("whole line" if session.format == "bash-agent" else "content"))
    value = f"{total - start:,} of {total:,}" if start else f"{total:,}"
    lines = [("format", session.format, "--format to choose another"),
             ("context", value, f"{after}; {sized}")]
    if session.llm:
        others = [m for m in session.llms if m != session.llm]
        lines.append(("model id", "", f"{session.llm}, the last request's"
                      + (f" (also: {', '.join(others)})" if others else "")))
    if question is None:
        return lines
    p = question.prices
    lines.append(("prices", p.llm if p.known else "defaults",
                  f"{question.price_source}" + (f", {p.date}" if p.date else "")))
    lines.append(("horizon", question.horizon, question.horizon_why))
    cache = question.cache
    if cache is not None:
        lines.append(("cache", cache_words(cache), f"TTL {cache.ttl} ({cache.ttl_source}); "
                      f"writes ${cache.p_write:g}/MTok ({cache.p_write_source})"))
    world = question.world
    if world is not None and world.agent.whole:   # the setting (its window is M, below)
        auto = world.auto_compact_tokens
        lines.append(("auto-compact", "off" if auto is None else f"{auto:,.0f}",
                      world.sources.get("auto_compact_tokens", "")))
        lines.append(("keeps", world.keeps, world.sources.get("keeps", "")))
        for assumed in world.assumed:
            lines.append(("assumed", "", assumed))
    names = {"t": "turns", "total_requests": "requests", "total_compact": "compactions",
             "total_input": "input", "V": "V", "S": "S"}
    if question.ask.model.cache_aware:
        names.update(after_tokens="after", after_cached="cached after")
    for key, label in names.items():
        if key in question.sources:
            src = question.sources[key]
            lines.append((label, f"{src.value:,.0f}", src.words))
    for w in session.warnings + question.warnings:
        lines.append(("warning", "", w))
    return lines


def fact_lines(facts: list[tuple[str, str, str]], width: int) -> list[Text]:
    """(name, value, where from) as three columns, the value right-aligned and the where
    folded between words.  When the room left beside the values is narrower than
    MIN_WHERE or than the longest word, each where goes under its name, indented: a
    long value ("cold since 334 days") must not squeeze the words into a sliver.  A word
    is never broken (one longer than the whole line runs past it)."""
    import textwrap

    from rich.text import Text

    if not facts:
        return []
    name_w = max(len(name) for name, _, _ in facts)
    value_w = max(len(value) for _, value, _ in facts)
    left = name_w + 2 + value_w + 2
    longest = max((len(w) for _, _, where in facts for w in where.split()), default=0)
    beside = width - left >= max(MIN_WHERE, longest)
    indent = left if beside else INDENT
    out = []
    for name, value, where in facts:
        head = Text.assemble((name.ljust(name_w), "bold cyan"), "  ", value.rjust(value_w))
        folded = textwrap.wrap(where, width - indent, break_long_words=False,
                               break_on_hyphens=False)
        if beside and folded:
            head.append("  ")
            head.append(folded.pop(0), style="dim")
        out.append(head)
        out += [Text(" " * indent) + Text(w, style="dim") for w in folded]
    return out


def cache_words(cache: CacheClock) -> str:
    """"warm, 3 min left", "cold since 4.2 h", "unknown"."""
    idle, left = cache.idle, cache.seconds_left
    if idle is None or left is None:
        return "unknown"
    if cache.cold:
        return f"cold since {duration(idle - cache.ttl_seconds)}"
    return f"warm, {duration(left)} left"


def runner_up(rows: list[Terms], best_k: int) -> Terms | None:
    others = [t for t in rows if t.k != best_k]
    if not others:
        return None
    best = others[0]
    for t in others[1:]:
        if t.benefit > best.benefit:
            best = t
    return best


def _cells(t: Terms, attr: str | None, dec: Weighing, marked: set[int]) -> str:
    if attr is None:
        mark = BEST if t.k == dec.best_k and dec.terms is not None else \
            CUT if t.k in marked else ""
        return f"{t.k:,}{mark}"
    value = getattr(t, attr)
    return f"{value:,}" if attr in ("K", "H") else f"{value:,.4f}"


def render(dec: Weighing, env: Env, policy: PolicyResult | None = None,
           width: int | None = None, styled: bool | None = None,
           preamble: list[tuple[str, str, str]] | None = None,
           units: tuple[str, str] = ("line", "user line"),
           cache_state: str | None = None) -> str:
    """The whole explanation as text (with colour codes only where the Env shows them).

    ``preamble``: (name, value, where from) lines the front end adds above the derived
    quantities — the session's format and stats, the cache state.
    """
    from rich.text import Text

    console = buffered_console(env, width, styled)
    styled = console.is_terminal and not console.no_color
    width = console.width
    console.print(Text(f"compact-dp · model {dec.model.name} · {counted(dec.lines, units[0])} · "
                       f"{dec.total_tokens:,} tokens · {counted(dec.user_lines, units[1])}",
                       style="bold"))
    d = dec.derived
    for line in fact_lines((preamble or []) + (derived_lines(dec) if d else []), width):
        console.print(line, soft_wrap=True)
    if d is not None:
        rows = all_terms(dec)
        marked = {dec.aligned_keep} if dec.aligned_keep else set()
        if rows:
            console.print(_terms_table(dec, rows, marked, width, styled))
            cold = d.cold
            console.print(Text(LEGEND.format(
                rewrite=", ⓪ the re-write a cold cache costs even without compacting"
                if cold else "", plus=" + ⓪" if cold else "")
                + f" {BEST} = best k" + (f", {CUT} = where the cut lands after moving back "
                                         "to a user line" if marked and not dec.whole
                                         else "") + ".", style="dim"))
            second = runner_up(rows, dec.best_k)
            if second is not None and dec.terms is not None:
                console.print(f"Runner-up: keep {second.k:,} lines, net "
                              f"{money(second.benefit)} (margin "
                              f"{money(dec.best_benefit - second.benefit)}).")
        if dec.aligned_keep and dec.aligned_keep != dec.best_k:
            console.print(_alignment_note(dec))
        if dec.model.keep_guards:
            console.print(f"v4.2 guards: keep at most {d.max_keep:,} lines and at least "
                          f"20 × S = {20 * d.S:,g} tokens; "
                          + (dec.guard if dec.guard else "none fired") + ".")
        if dec.model.cache_aware:
            console.print(cache_effect(dec, cache_state))
    console.print(Text(reason(dec, policy), style="bold"))
    return text_of(console)


def _terms_table(dec: Weighing, rows: list[Terms], marked: set[int], width: int,
                 styled: bool) -> Table:
    columns = [c for c in COLUMNS if c[1] != "rewrite" or dec.derived and dec.derived.cold]
    if not dec.model.quality:
        columns = [c for c in columns if c[1] != "quality"]
    picked = pick_rows(rows, dec.best_k, marked)
    cells: list[list[str]] = []
    styles: list[str | None] = []
    for item in picked:
        if isinstance(item, int):
            cells.append([f"…{item:,}"] + [""] * (len(columns) - 1))
            styles.append("dim")
            continue
        cells.append([_cells(item, attr, dec, marked) for _, attr, _ in columns])
        styles.append("bold green" if item.k == dec.best_k else
                      "yellow" if item.k in marked else None)
    table = fitted_table([h for h, _, _ in columns], cells, [p for _, _, p in columns],
                         width, styled, styles=styles)
    if any(isinstance(x, int) for x in picked):
        note = "…N = N rows left out"
        table.caption = f"{note}; {table.caption}" if table.caption else note
    return table


def cache_effect(dec: Weighing, state: str | None) -> str:
    """What the cache's state does to this decision, in words."""
    d = dec.derived
    assert d is not None
    write = d.write_price
    rewrite = cold_rewrite(d)
    head = f"Cache {state}" if state else "Cache cold" if d.cold else "Cache warm"
    if d.cold:
        kept = dec.terms.K if dec.terms is not None else 0
        gain = kept * (write - d.p_cache) / 1e6
        return (f"{head}: not compacting, the next request re-writes V + T = "
                f"{d.V + d.T:,.0f} tokens ({money(rewrite)} more than reading them, ⓪); "
                f"compacting, the summary request re-writes V + H instead, so the cold "
                f"cache moves the benefit by K × (write − read) = {money(gain)}"
                + (" — nothing when the whole history is summarised." if dec.whole
                   else "."))
    return (f"{head}: the summary request reads V + H from the cache; once it "
            f"expires the next request re-writes V + T = {d.V + d.T:,.0f} tokens "
            f"({money(rewrite)}) unless it compacts first.")


def _alignment_note(dec: Weighing) -> str:
    users = dec.conv.user_lines(dec.model.v2_users)
    if dec.aligned_keep == dec.lines and not (users and users[0] == 0):
        return (f"Turn alignment: no user line at or before the cut at {dec.best_k:,}, so "
                f"the kept window grows back to line 1 (all {dec.lines:,} lines).")
    return (f"Turn alignment: the cut moves back from {dec.best_k:,} to "
            f"{dec.aligned_keep:,} lines so the kept window starts on a user line.")
