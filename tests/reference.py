"""A plain, O(n²) transcription of the decision (docs/model.md, docs/awk.md), for the
property tests.

Written for obviousness, not speed: every k sums its own window, r_t is the plain loop,
records come from a straightforward split, and awk's values are judged by a regular
expression.  It imports nothing from the package, so a bug in the package's awk value rules,
scanner or search shows up as a disagreement here.  (The one thing both share is Python's
float arithmetic.)

Values are given the way awk receives them: a dict from variable name to the *text* of the
assignment (after escape processing); a name missing from the dict is unset.
"""

from __future__ import annotations

import math
import re

BLANKS = " \t\n\r\f\v"
NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
LOOKS_NUMERIC = re.compile(rf"[{BLANKS}]*(?:{NUMBER}|[+-](?:inf|nan))[{BLANKS}]*\Z", re.I)
PREFIX = re.compile(rf"[{BLANKS}]*({NUMBER})")


class Fatal(Exception):
    """awk's fatal division by zero."""


class Val:
    """An awk value: ``kind`` is number, strnum, string or unset."""

    def __init__(self, kind: str, num: float, text: str | None = None):
        self.kind, self.num, self.text = kind, num, text


def value(text: str | None) -> Val:
    """What awk makes of an assigned string (None: never assigned)."""
    if text is None:
        return Val("unset", 0.0)
    if LOOKS_NUMERIC.match(text):
        return Val("strnum", float(text.strip(BLANKS)), text)
    m = PREFIX.match(text)
    return Val("string", float(m.group(1)) if m else 0.0, text)


def number(x: float) -> Val:
    return Val("number", float(x))


def as_text(v: Val) -> str:
    """The string awk compares: the input text, or a number as CONVFMT=%.6g writes it."""
    if v.text is not None:
        return v.text
    if v.kind == "unset":
        return ""
    if math.isfinite(v.num) and v.num == int(v.num):
        return str(int(v.num))
    return "%.6g" % v.num


def compare(v: Val, const: float) -> int | None:
    """awk's ``v <op> const``: numeric unless v is a (non-numeric) string."""
    if v.kind == "string":
        a = v.text.encode("utf-8", "surrogateescape")
        b = as_text(number(const)).encode()
        return (a > b) - (a < b)
    if v.num != v.num:
        return None
    return (v.num > const) - (v.num < const)


def gt(v, c):
    r = compare(v, c)
    return r is not None and r > 0


def lt(v, c):
    r = compare(v, c)
    return r is not None and r < 0


def le(v, c):
    r = compare(v, c)
    return r is not None and r <= 0


def awk_int(x: float) -> float:
    return float(math.trunc(x)) if math.isfinite(x) else x


def records(data: bytes) -> list[bytes]:
    """Split on \\n only; a last record without \\n still counts; empty input has none."""
    if not data:
        return []
    parts = data.split(b"\n")
    if data.endswith(b"\n"):
        parts.pop()
    return parts


def size(line: bytes) -> int:
    return (len(line) + 3) // 4 + 1


def is_user(line: bytes, model: str) -> bool:
    if model == "v2":
        return line.startswith(b'{"role":"user","content":"')
    return b'"role":"user"' in line and b'"content":[' not in line


def turn_keep(lines: list[bytes], ratio: float) -> int:
    NR = len(lines)
    if NR == 0:
        return 0
    total_turns = sum(1 for x in lines if is_user(x, "v3.0.7"))
    target = awk_int(total_turns * ratio + 0.5)
    if target < 1:
        target = 1
    if target > total_turns:
        target = total_turns
    passed = count = 0
    i = NR - 1
    while i >= 0 and passed < target:
        count += 1
        if is_user(lines[i], "v3.0.7"):
            passed += 1
        i -= 1
    return count if passed else 0


def decide(lines: list[bytes], given: dict[str, str], model: str) -> int:
    """The printed number."""
    return explain(lines, given, model)[0]


def explain(lines: list[bytes], given: dict[str, str], model: str,
            p_write: float | None = None, cold: bool = False, whole: bool = False):
    """(printed number, best_k, best benefit, facts): facts has the --json fields and
    ``rows``, every scored k's terms in order.

    ``model="cache-clock"`` (docs/model.md): v3.0.7 with the write price ``p_write``
    (default p_input) in ② and, on a ``cold`` cache, in ③, plus ⓪ = (V + T)(p_write −
    p_cache) / 10⁶.  ``whole``: the one candidate is k = 0."""
    v = {name: value(given.get(name)) for name in (
        "t", "total_requests", "total_compact", "total_input", "baseline_e", "e_fixed",
        "L_fixed", "V", "p_input", "p_cache", "p_out", "S", "min_keep_ratio", "r", "beta",
        "max_context", "quality_penalty", "ratio")}
    if model == "turn-keep":
        return turn_keep(lines, v["ratio"].num), 0, -1e18, {}
    NR = len(lines)
    if NR == 0:
        return 0, 0, -1e18, {}
    sizes = [size(x) for x in lines]
    T = sum(sizes)
    n = lambda name: v[name].num  # noqa: E731
    if gt(v["e_fixed"], 0):
        E = n("e_fixed")
    elif gt(v["baseline_e"], 0):
        remaining = n("baseline_e") - n("t")
        floor = awk_int(n("baseline_e") / 2) if gt(v["baseline_e"], 1) else 2
        E = remaining if remaining > floor else floor
    else:
        E = 2
    try:
        if gt(v["L_fixed"], 0):
            L = v["L_fixed"]
        elif gt(v["t"], 0) and gt(v["total_requests"], 0):
            L = number(n("total_requests") / n("t"))
        else:
            L = number(5)
        if lt(L, 1):
            L = number(1)
        L = L.num
        if gt(v["total_requests"], 0) and gt(v["total_input"], 0):
            avg = n("total_input") / n("total_requests")
        else:
            avg = 4000
    except ZeroDivisionError:
        raise Fatal from None
    c = n("total_compact")
    R = E * L
    l_instr = 70
    r_t = 1.0
    i = 1
    while i <= c + 1:
        r_t = r_t * n("r")
        i += 1
    if r_t < 0.37:
        r_t = 0.37
    N_remain = R * avg
    info_loss = n("beta") * (1.0 - r_t) * N_remain * n("p_input") / 1000000
    cache = model == "cache-clock"
    p_w = n("p_input") if p_write is None else p_write
    if model != "v2":
        qp, mc = v["quality_penalty"], v["max_context"]
        Q = 0.2 if as_text(qp) == "" else qp.num
        M = 200000 if (as_text(mc) == "" or le(mc, 0)) else mc.num
    min_keep = awk_int(NR * n("min_keep_ratio") + 0.5)
    if min_keep < 3:
        min_keep = 3
    if min_keep > NR:
        min_keep = NR
    hi = NR
    if model == "v4.2":
        max_keep = awk_int(NR * (1 - n("min_keep_ratio")) + 0.5)
        if max_keep > NR:
            max_keep = NR
        if max_keep < min_keep:
            max_keep = NR
        hi = max_keep
    V, S = n("V"), n("S")
    p_input, p_cache, p_out = n("p_input"), n("p_cache"), n("p_out")
    facts = {"min_keep": min_keep, "terms": None, "rows": [],
             "derived": {"E": E, "L": L, "R": R, "avg": avg, "r_t": r_t, "info_loss": info_loss}}
    if model != "v2":
        facts["derived"].update(Q=Q, M=M)
    best_k, best = 0, -1e18
    k = min_keep
    if whole:
        k, hi = 0, 0
    while k <= hi:
        K = 0
        for j in range(NR - int(k), NR):
            K += sizes[j]
        H = T - K
        if H > 0:
            savings = (R - 1) * p_cache * H / 1000000
            cache_miss = (S + K) * ((p_w if cache else p_input) - p_cache) / 1000000
            if model == "v4.2":
                compact_cost = (p_cache * V + p_input * (H + l_instr) + p_out * S) / 1000000
            else:
                read = p_w if cache and cold else p_cache
                compact_cost = (read * (V + H) + p_input * l_instr + p_out * S) / 1000000
            benefit = savings - cache_miss - compact_cost - info_loss
            quality = 0.0
            if model != "v2":
                quality = 0
                if model != "v4.2" or T > M * 0.30:
                    if M * 1000000 == 0:
                        raise Fatal
                    quality = Q * p_input * ((V + T) * (V + T) - (V + K) * (V + K)) / (M * 1000000)
                benefit = benefit + quality
            rewrite = 0.0
            if cache and cold:
                rewrite = (V + T) * (p_w - p_cache) / 1000000
                benefit = benefit + rewrite
            row = {"k": int(k), "K": K, "H": H, "savings": savings, "cache_miss": cache_miss,
                   "compact_cost": compact_cost, "info_loss": info_loss, "quality": quality,
                   "benefit": benefit}
            if cache:
                row["rewrite"] = rewrite
            facts["rows"].append(row)
            if benefit > best:
                best, best_k = benefit, int(k)
                facts["terms"] = {key: row[key] for key in row if key != "k"}
        k += 1
    if not best > 0 or whole:
        return 0, best_k, best, facts
    adj = best_k
    cut = NR - adj + 1
    while cut > 1 and not is_user(lines[cut - 1], model):
        cut -= 1
        adj = NR - cut + 1
    if model == "v4.2":
        if adj > max_keep:
            return 0, best_k, best, facts
        H_actual = T - sum(sizes[: NR - adj])
        if H_actual < 20 * S:
            return 0, best_k, best, facts
    return adj, best_k, best, facts


def policy(lines, keep: int, trigger: str, context_tokens: float, max_context: float,
           ratio: float, force_percent: int = 90) -> tuple[int, int]:
    """bash-agent's agent_compact_context: (printed keep, exit status)."""
    total = len(lines)
    if keep == 0 or (keep >= total and total > 0):
        forced = trigger in ("plan_clear", "plan_confirm") or \
            context_tokens > math.trunc(max_context) * force_percent // 100
        if not forced:
            return 0, 1
        keep = turn_keep(lines, ratio)
    if (0 < keep < total) or trigger in ("plan_clear", "plan_confirm"):
        return keep, 0
    return 0, 1
