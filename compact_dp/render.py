"""Rendering a decision: the plain number, ``--json`` and the sentence that explains it (SPEC §7).

The plain number is the hot path; orjson and rich are imported only by the modes that use them.
"""

from __future__ import annotations

import math

from .errors import write_stdout
from .models import Decision, Derived


def emit(decision: Decision, output: str = "plain", policy=None) -> int:
    """Write the decision in the requested form and return the exit status."""
    if output == "json":
        return write_stdout(to_json(decision, policy) + "\n")
    if output == "explain":
        from .explain import render
        return write_stdout(render(decision, decision.conv.sizes, policy))
    answer = policy.keep if policy is not None else decision.keep
    return write_stdout(f"{answer}\n")


def money(x: float) -> str:
    """Dollars with enough digits to see small amounts ($0.37, -$0.0042)."""
    sign, x = ("-", -x) if x < 0 else ("", x)
    if not math.isfinite(x):
        return f"{sign}${x}"
    if x >= 1 or x == 0:
        return f"{sign}${x:,.2f}"
    return sign + (f"${x:.2g}" if x < 0.01 else f"${x:.3f}".rstrip("0"))


def lines(n: int) -> str:
    return f"{n:,} line" + ("" if n == 1 else "s")


def break_even_calls(d: Derived, model_name: str, k: int, K: int) -> int | None:
    """The smallest whole number of remaining LLM calls R for which keeping k lines pays off.

    For a fixed k the benefit is linear in R (① grows with R − 1, ④ with R), so solve for
    the crossing point, then step to the first whole R whose benefit, evaluated the exact
    way, is positive.  None when more calls would never help.
    """
    from .models import get_model, terms_at

    model = get_model(model_name)

    def benefit(R: float) -> float:
        return terms_at(d.with_remaining_calls(R), model, k, K).benefit

    b0, b1 = benefit(0.0), benefit(1.0)
    slope = b1 - b0
    if not (slope > 0 and math.isfinite(slope) and math.isfinite(b0)):
        return None
    R = max(0, math.floor(-b0 / slope) - 2)
    for _ in range(64):
        if benefit(float(R)) > 0:
            return R
        R += 1
    return None


def reason(decision: Decision, policy=None) -> str:
    """The decision in one sentence, with its reason."""
    text = _decision_reason(decision)
    if policy is not None:
        verb = "compact" if policy.action == "compact" else "skip"
        text += f" Policy: {verb}" + (f" ({policy.reason})." if policy.reason else ".")
    return text


def _decision_reason(dec: Decision) -> str:
    if dec.lines == 0:
        return "skip: the conversation is empty."
    if dec.model == "turn-keep":
        if dec.keep == 0:
            return "skip: no user line to start a kept window on."
        return (f"compact: keep the last {lines(dec.keep)}, starting on user line "
                f"{dec.target_turns:,} from the end (the last {dec.target_turns:,} of "
                f"{dec.user_lines:,} user turns).")
    d = dec.derived
    if dec.best_k == 0:
        return (f"skip: no candidate k — with {lines(dec.lines)} there is nothing left to "
                f"summarise after keeping at least {d.min_keep}.")
    t = dec.terms
    if not dec.best_benefit > 0:
        loss = "gains nothing" if dec.best_benefit == 0 else \
            f"loses {money(-dec.best_benefit)}"
        text = f"skip: the best candidate (keep {lines(dec.best_k)}) {loss}"
        calls = break_even_calls(d, dec.model, t.k, t.K)
        if calls is not None:
            text += (f"; it would pay off only after {calls:,} more LLM calls, "
                     f"{d.R:,.4g} are expected")
        else:
            text += "; more LLM calls would not make it pay off"
        return text + "."
    if dec.guard:
        return f"skip: the best cut keeps {lines(dec.aligned_keep)}, but the {dec.guard}."
    if dec.keep >= dec.lines:
        return (f"skip (prints {dec.keep}): the best cut (keep {lines(dec.best_k)}) moves back "
                f"to line 1 because no earlier line is a user line, so everything is kept.")
    moved = "" if dec.keep == dec.best_k else \
        f" The best k, {dec.best_k}, moved back to the user line that starts the window."
    return (f"compact: keep the last {lines(dec.keep)} ({dec.kept_tokens:,} tokens), "
            f"summarise {dec.total_tokens - dec.kept_tokens:,}; net benefit "
            f"{money(dec.best_benefit)}.{moved}")


def _number(x):
    """JSON numbers: exact floats; the non-finite ones (JSON has none) as strings."""
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if x != x else ("inf" if x > 0 else "-inf")
    return x


def to_dict(dec: Decision, policy=None) -> dict:
    """The ``--json`` object of SPEC §7."""
    out: dict = {"model": dec.model, "lines": dec.lines, "total_tokens": dec.total_tokens,
                 "keep": dec.keep}
    d = dec.derived
    if d is not None:
        out["min_keep"] = d.min_keep
        out["best_k"] = dec.best_k
        out["best_benefit"] = _number(dec.best_benefit)
        derived = {"E": d.E, "L": d.L, "R": d.R, "avg": d.avg, "r_t": d.r_t,
                   "info_loss": d.info_loss}
        if d.Q is not None:
            derived.update(Q=d.Q, M=d.M)
        out["derived"] = {k: _number(v) for k, v in derived.items()}
        t = dec.terms
        out["terms"] = None if t is None else {
            k: _number(getattr(t, k)) for k in ("K", "H", "savings", "cache_miss",
                                                "compact_cost", "info_loss", "quality",
                                                "benefit")}
    out["decision"] = "compact" if dec.compact else "skip"
    out["reason"] = reason(dec)
    if policy is not None:
        out["action"] = policy.action
        out["forced"] = policy.forced
        out["keep"] = policy.keep
        out["reason"] = reason(dec, policy)
    return out


def to_json(dec: Decision, policy=None) -> str:
    import orjson
    return orjson.dumps(to_dict(dec, policy)).decode()


def terminal_width() -> int:
    """COLUMNS, else the terminal's width, else 100 (piped output)."""
    import os
    import sys
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 100


def rich_console(width: int | None = None, terminal: bool | None = None):
    """A rich Console writing to a buffer: styled only on a terminal without NO_COLOR.
    Returns (console, styled); the text is ``console.file.getvalue()``."""
    import io
    import os
    import sys

    from rich.console import Console

    if terminal is None:
        terminal = sys.stdout is not None and sys.stdout.isatty()
    styled = bool(terminal and not os.environ.get("NO_COLOR"))   # https://no-color.org
    console = Console(file=io.StringIO(), width=width or terminal_width(),
                      force_terminal=styled, no_color=not styled, highlight=False,
                      emoji=False, color_system="auto" if styled else None)
    return console, styled
