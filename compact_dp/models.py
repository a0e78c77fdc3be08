"""The decision models (SPEC §3): v3.0.7 (default), v2, v4.2 and the turn-keep fallback.

The three cost models share one core.  ``derive`` computes the quantities that do not
depend on k (steps 2–9) with awk's comparison rules; ``search.py`` finds the best k over
prefix sums of the line sizes, evaluating the terms in awk's exact order; then the cut moves
back to a user line and, for v4.2, the guards apply.  The work is linear in the number of
lines where the awk is quadratic.
"""

from __future__ import annotations

from bisect import bisect_right
from types import SimpleNamespace

from . import awkvalue as av
from .awkvalue import AwkValue
from .retention import compounded_retention
from .scan import Conversation
from .search import NO_CANDIDATE, BenefitCurve, best_candidate, kept_tokens_table

MODELS = ("v3.0.7", "v2", "v4.2", "turn-keep")
DEFAULT_MODEL = "v3.0.7"


class AwkFatal(Exception):
    """What awk treats as a fatal run-time error (division by zero): exit status 2."""


class Model:
    """What distinguishes the models; all share one core."""

    __slots__ = ("name", "v2_users", "quality", "quality_gate", "repriced_summary",
                 "keep_guards")

    def __init__(self, name: str, v2_users: bool, quality: bool, quality_gate: bool,
                 repriced_summary: bool, keep_guards: bool):
        self.name = name
        self.v2_users = v2_users                  # v2's user-line test (a prefix)
        self.quality = quality                    # has term ⑤
        self.quality_gate = quality_gate          # v4.2: ⑤ only when T > 0.30 M
        self.repriced_summary = repriced_summary  # v4.2: ③ pays p_input for the history
        self.keep_guards = keep_guards            # v4.2: keep ceiling, minimum-size guard

    @property
    def reads(self) -> frozenset[str]:
        """The awk variables this model reads (for string-value warnings)."""
        if self.name == "turn-keep":
            return frozenset({"ratio"})
        names = {"t", "total_requests", "total_compact", "total_input", "baseline_e",
                 "e_fixed", "L_fixed", "V", "p_input", "p_cache", "p_out", "S",
                 "min_keep_ratio", "r", "beta"}
        if self.quality:
            names |= {"max_context", "quality_penalty"}
        return frozenset(names)


MODEL_TABLE = {
    "v3.0.7": Model("v3.0.7", False, True, False, False, False),
    "v2": Model("v2", True, False, False, False, False),
    "v4.2": Model("v4.2", False, True, True, True, True),
    "turn-keep": Model("turn-keep", False, False, False, False, False),
}


def get_model(name: str) -> Model:
    try:
        return MODEL_TABLE[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r} (choose from {', '.join(MODELS)})") from None


# Plain namespaces rather than dataclasses: importing dataclasses costs ~10 ms of start-up.
class Derived(SimpleNamespace):
    """Steps 2–9: the quantities that do not depend on k, and where each came from.

    E, L, R, avg, c, r_t, N_remain, info_loss; Q, M (None for v2); min_keep, max_keep
    (None but for v4.2); T, NR; the prices V, S, p_input, p_cache, p_out, beta; and
    ``sources``, a dict saying where E, L, avg, Q, M came from.
    """

    def with_remaining_calls(self, R: float) -> "Derived":
        """The same quantities had R calls been expected (① and ④ depend on R)."""
        N_remain = R * self.avg
        info_loss = self.beta * (1.0 - self.r_t) * N_remain * self.p_input / 1000000
        return Derived(**{**vars(self), "R": R, "N_remain": N_remain, "info_loss": info_loss})


class Terms(SimpleNamespace):
    """The five terms for one candidate k (K = tokens of the last k lines, H = T − K):
    k, K, H, savings, cache_miss, compact_cost, info_loss, quality, benefit."""


class Decision:
    """Everything a caller may want to know about one decision."""

    def __init__(self, model: str, lines: int, total_tokens: int, keep: int = 0,
                 user_lines: int = 0, conv: Conversation | None = None):
        self.model = model
        self.lines = lines
        self.total_tokens = total_tokens
        self.keep = keep                        # what the command prints
        self.user_lines = user_lines
        self.conv = conv                        # the scanned conversation (for --explain)
        self.derived: Derived | None = None
        self.best_k = 0
        self.best_benefit = NO_CANDIDATE
        self.terms: Terms | None = None         # at best_k
        self.guard: str | None = None           # v4.2: which guard turned the answer to 0
        self.aligned_keep = 0                   # best_k moved back to a user line
        self.kept_tokens = 0                    # tokens in that aligned window
        self.target_turns: int | None = None    # turn-keep

    @property
    def compact(self) -> bool:
        """True when the answer means: summarise some lines, keep the rest."""
        return 0 < self.keep < self.lines

    def __repr__(self) -> str:
        return (f"Decision(model={self.model!r}, lines={self.lines}, keep={self.keep}, "
                f"best_k={self.best_k}, best_benefit={self.best_benefit!r})")


def _int_clamp(x: float, lo: float, hi: float) -> float:
    """awk's ``if (x < lo) x = lo; if (x > hi) x = hi`` (NaN passes through)."""
    if x < lo:
        x = lo
    if x > hi:
        x = hi
    return x


def _check_divisor(x: float, where: str) -> None:
    if x == 0:
        raise AwkFatal(f"division by zero in {where}")


def derive(values: dict[str, AwkValue], conv: Conversation, model: Model,
           total: int | None = None) -> Derived:
    """Steps 2–9 of SPEC §3, comparisons done with awk's rules for each value's nature."""
    g = {n: values[n] for n in ("t", "total_requests", "total_compact", "total_input",
                                "baseline_e", "e_fixed", "L_fixed")}
    src: dict[str, str] = {}
    t, reqs = g["t"], g["total_requests"]
    if av.gt(g["e_fixed"], 0):
        E, src["E"] = g["e_fixed"].num, "fixed by e_fixed"
    elif av.gt(g["baseline_e"], 0):
        b = g["baseline_e"].num
        remaining = b - t.num
        floor = av.awk_int(b / 2) if av.gt(g["baseline_e"], 1) else 2.0
        E = remaining if remaining > floor else floor
        src["E"] = ("estimated: baseline_e − turns" if remaining > floor
                    else "floor: half of baseline_e" if av.gt(g["baseline_e"], 1) else "floor: 2")
    else:
        E, src["E"] = 2.0, "default (no baseline_e)"
    if av.gt(g["L_fixed"], 0):
        L_val, src["L"] = g["L_fixed"], "fixed by L_fixed"
    elif av.gt(t, 0) and av.gt(reqs, 0):
        _check_divisor(t.num, "L = total_requests / t")
        L_val, src["L"] = AwkValue.number(reqs.num / t.num), "estimated from stats: requests / turns"
    else:
        L_val, src["L"] = AwkValue.number(5.0), "default (no stats)"
    if av.lt(L_val, 1):
        L_val, src["L"] = AwkValue.number(1.0), src["L"] + ", raised to at least 1"
    L = L_val.num
    if av.gt(reqs, 0) and av.gt(g["total_input"], 0):
        _check_divisor(reqs.num, "avg = total_input / total_requests")
        avg, src["avg"] = g["total_input"].num / reqs.num, "estimated from stats: input tokens / requests"
    else:
        avg, src["avg"] = 4000.0, "default (no stats)"
    c = g["total_compact"].num
    R = E * L
    r_t = compounded_retention(values["r"].num, c)
    N_remain = R * avg
    beta, p_input = values["beta"].num, values["p_input"].num
    info_loss = beta * (1.0 - r_t) * N_remain * p_input / 1000000
    Q = M = None
    if model.quality:
        qp, mc = values["quality_penalty"], values["max_context"]
        Q = 0.2 if av.equals_empty_string(qp) else qp.num
        src["Q"] = "default (empty)" if av.equals_empty_string(qp) else "given"
        if av.equals_empty_string(mc) or av.le(mc, 0):
            M, src["M"] = 200000.0, "default (empty or ≤ 0)"
        else:
            M, src["M"] = mc.num, "given"
    NR, T = conv.nr, conv.total if total is None else total
    ratio = values["min_keep_ratio"].num
    # NR > 0 and ratio is never NaN, so the clamps leave whole numbers in [0, NR]
    min_keep = int(_int_clamp(av.awk_int(NR * ratio + 0.5), 3, NR))
    max_keep = None
    if model.keep_guards:
        ceiling = av.awk_int(NR * (1 - ratio) + 0.5)
        if ceiling > NR:
            ceiling = NR
        max_keep = NR if ceiling < min_keep else int(ceiling)
    return Derived(E=E, L=L, R=R, avg=avg, c=c, r_t=r_t, N_remain=N_remain,
                   info_loss=info_loss, Q=Q, M=M, min_keep=min_keep, max_keep=max_keep,
                   T=T, NR=NR, V=values["V"].num, S=values["S"].num, p_input=p_input,
                   p_cache=values["p_cache"].num, p_out=values["p_out"].num, beta=beta,
                   sources=src)


def terms_at(d: Derived, model: Model, k: int, K: int) -> Terms:
    """The five terms for one k, evaluated exactly as SPEC §3 writes them."""
    return BenefitCurve(d, model).terms(k, K)


def align_to_user_line(keep: int, nr: int, users) -> int:
    """Grow the kept window backwards until it starts on a user line (or line 1)."""
    cut = nr - keep + 1                       # 1-based first kept line
    if cut <= 1:
        return keep
    i = bisect_right(users, cut - 1) - 1      # last user line at or before the cut
    cut = users[i] + 1 if i >= 0 else 1
    return nr - cut + 1


def decide_conversation(values: dict[str, AwkValue], conv: Conversation,
                        model: Model) -> Decision:
    """The whole decision for one scanned conversation."""
    NR, T = conv.nr, conv.total
    if model.name == "turn-keep":
        return turn_keep(values["ratio"].num, conv)
    dec = Decision(model.name, NR, T, user_lines=len(conv.user_lines(model.v2_users)),
                   conv=conv)
    if NR == 0:
        return dec
    prefix = kept_tokens_table(conv.sizes)           # tokens of the first i lines
    d = derive(values, conv, model, T)
    dec.derived = d
    best_k, best = best_candidate(d, model, conv.sizes, prefix)
    dec.best_k, dec.best_benefit = best_k, best
    if best_k:
        dec.terms = terms_at(d, model, best_k, T - prefix[NR - best_k])
    if not best > 0:
        return dec
    adj = align_to_user_line(best_k, NR, conv.user_lines(model.v2_users))
    dec.aligned_keep = adj
    dec.kept_tokens = kept = T - prefix[NR - adj]
    if model.keep_guards:
        if adj > d.max_keep:
            dec.guard = f"keep ceiling fired ({adj} > max_keep {d.max_keep})"
            return dec
        if kept < 20 * d.S:
            dec.guard = (f"minimum-size guard fired (kept {kept:,} tokens < 20 × S = "
                         f"{20 * d.S:,g})")
            return dec
    dec.keep = adj
    return dec


def turn_keep(ratio: float, conv: Conversation) -> Decision:
    """The forced-compaction fallback: keep the last ``ratio`` share of user turns."""
    NR, users = conv.nr, conv.users
    dec = Decision("turn-keep", NR, conv.total, user_lines=len(users), conv=conv)
    if NR == 0:
        return dec
    total_turns = len(users)
    target = _int_clamp(av.awk_int(total_turns * ratio + 0.5), 1, total_turns)
    dec.target_turns = int(target) if target == target else None
    if total_turns and target >= 1:
        first_kept = users[total_turns - int(target)]
        dec.keep = NR - first_kept
    return dec
