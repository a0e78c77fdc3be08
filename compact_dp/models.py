"""The decision models (SPEC §3): v3.0.7 (default), v2, v4.2 and the turn-keep fallback.

The three cost models share one core.  ``derive`` computes the per-call quantities
(steps 2–9), ``terms_at`` the five terms for one k in awk's exact evaluation order, and
``decide`` searches every candidate k with K taken from a running suffix sum, so the work
is linear in the number of lines where the awk is quadratic.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field, replace
from typing import Mapping

from . import awkvalue as av
from .awkvalue import AwkValue
from .retention import compounded_retention
from .scan import Conversation

L_INSTR = 70.0
NO_CANDIDATE = -1e18
MODELS = ("v3.0.7", "v2", "v4.2", "turn-keep")
DEFAULT_MODEL = "v3.0.7"


class AwkFatal(Exception):
    """What awk treats as a fatal run-time error (division by zero): exit status 2."""


@dataclass(frozen=True)
class Model:
    name: str
    v2_users: bool          # v2's user-line test (prefix) instead of "role":"user"
    quality: bool           # has term ⑤
    quality_gate: bool      # v4.2: ⑤ only when T > 0.30 M
    repriced_summary: bool  # v4.2: ③ pays p_input for the dropped history
    keep_guards: bool       # v4.2: keep ceiling and minimum-drop guard

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


@dataclass
class Derived:
    """Steps 2–9: the quantities that do not depend on k, and where each came from."""

    E: float
    L: float
    R: float
    avg: float
    c: float
    r_t: float
    N_remain: float
    info_loss: float
    Q: float | None
    M: float | None
    min_keep: int
    max_keep: int | None
    T: int
    NR: int
    V: float
    S: float
    p_input: float
    p_cache: float
    p_out: float
    beta: float
    sources: dict[str, str] = field(default_factory=dict)

    def with_remaining_calls(self, R: float) -> "Derived":
        """The same quantities had R calls been expected (① and ④ depend on R)."""
        N_remain = R * self.avg
        info_loss = self.beta * (1.0 - self.r_t) * N_remain * self.p_input / 1000000
        return replace(self, R=R, N_remain=N_remain, info_loss=info_loss)


@dataclass
class Terms:
    """The five terms for one candidate k (K = tokens of the last k lines)."""

    k: int
    K: int
    H: int
    savings: float
    cache_miss: float
    compact_cost: float
    info_loss: float
    quality: float
    benefit: float


@dataclass
class Decision:
    """Everything a caller may want to know about one decision."""

    model: str
    lines: int
    total_tokens: int
    keep: int
    derived: Derived | None = None
    best_k: int = 0
    best_benefit: float = NO_CANDIDATE
    terms: Terms | None = None
    guard: str | None = None          # v4.2: which guard turned the answer into 0
    aligned_keep: int = 0             # best_k moved back to a user line (before guards)
    kept_tokens: int = 0              # tokens in that aligned window
    conv: Conversation | None = field(default=None, repr=False)  # for --explain
    user_lines: int = 0
    target_turns: int | None = None   # turn-keep

    @property
    def compact(self) -> bool:
        return 0 < self.keep < self.lines


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


QUALITY_DIVISOR = "the quality term ⑤ (M × 1000000 with M = max_context)"


def derive(values: Mapping[str, AwkValue], conv: Conversation, model: Model) -> Derived:
    """Steps 2–9 of SPEC §3, comparisons done with awk's rules for each value's nature."""
    g = {n: values[n] for n in ("t", "total_requests", "total_compact", "total_input",
                                "baseline_e", "e_fixed", "L_fixed")}
    src: dict[str, str] = {}
    t, reqs = g["t"], g["total_requests"]
    if av.gt(g["e_fixed"], 0):
        E, src["E"] = g["e_fixed"].num, "fixed (e_fixed)"
    elif av.gt(g["baseline_e"], 0):
        b = g["baseline_e"].num
        remaining = b - t.num
        floor = av.awk_int(b / 2) if av.gt(g["baseline_e"], 1) else 2.0
        E = remaining if remaining > floor else floor
        src["E"] = "baseline_e − t" if remaining > floor else "floor of baseline_e"
    else:
        E, src["E"] = 2.0, "default"
    if av.gt(g["L_fixed"], 0):
        L_val, src["L"] = g["L_fixed"], "fixed (L_fixed)"
    elif av.gt(t, 0) and av.gt(reqs, 0):
        _check_divisor(t.num, "L = total_requests / t")
        L_val, src["L"] = AwkValue.number(reqs.num / t.num), "stats (requests / turns)"
    else:
        L_val, src["L"] = AwkValue.number(5.0), "default"
    if av.lt(L_val, 1):
        L_val, src["L"] = AwkValue.number(1.0), src["L"] + ", raised to 1"
    L = L_val.num
    if av.gt(reqs, 0) and av.gt(g["total_input"], 0):
        _check_divisor(reqs.num, "avg = total_input / total_requests")
        avg, src["avg"] = g["total_input"].num / reqs.num, "stats (input tokens / requests)"
    else:
        avg, src["avg"] = 4000.0, "default"
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
        src["Q"] = "default" if av.equals_empty_string(qp) else "quality_penalty"
        if av.equals_empty_string(mc) or av.le(mc, 0):
            M, src["M"] = 200000.0, "default"
        else:
            M, src["M"] = mc.num, "max_context"
    NR, T = conv.nr, conv.total
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
    """The five terms for one k, written exactly as SPEC §3 evaluates them."""
    H = d.T - K
    V, S, pi, pc, po = d.V, d.S, d.p_input, d.p_cache, d.p_out
    savings = (d.R - 1) * pc * H / 1000000
    cache_miss = (S + K) * (pi - pc) / 1000000
    if model.repriced_summary:
        compact_cost = (pc * V + pi * (H + L_INSTR) + po * S) / 1000000
    else:
        compact_cost = (pc * (V + H) + pi * L_INSTR + po * S) / 1000000
    benefit = savings - cache_miss - compact_cost - d.info_loss
    quality = 0.0
    if model.quality:
        if not model.quality_gate or d.T > d.M * 0.30:
            _check_divisor(d.M * 1000000, QUALITY_DIVISOR)
            quality = d.Q * pi * ((V + d.T) * (V + d.T) - (V + K) * (V + K)) / (d.M * 1000000)
        benefit = benefit + quality
    return Terms(k, K, H, savings, cache_miss, compact_cost, d.info_loss, quality, benefit)


def candidate_range(d: Derived) -> range:
    """k = min_keep … max_keep (NR when the model has no ceiling)."""
    hi = d.max_keep if d.max_keep is not None else d.NR
    return range(d.min_keep, hi + 1)


def best_candidate(d: Derived, model: Model, sizes) -> tuple[int, float]:
    """The first k with the strictly largest benefit (step 10), in one linear pass."""
    ks = candidate_range(d)
    best_k, best = 0, NO_CANDIDATE
    if not ks:
        return best_k, best
    NR, T = d.NR, d.T
    K = sum(sizes[NR - ks.start:])
    V, S, pi, pc, po, il = d.V, d.S, d.p_input, d.p_cache, d.p_out, d.info_loss
    a = (d.R - 1) * pc
    miss_rate = pi - pc
    instr, out = pi * L_INSTR, po * S
    pcV = pc * V
    with_quality = model.quality and (not model.quality_gate or T > d.M * 0.30)
    if with_quality:
        q1, vt2, den = d.Q * pi, (V + T) * (V + T), d.M * 1000000
    repriced = model.repriced_summary
    for k in ks:
        if k != ks.start:
            K += sizes[NR - k]
        H = T - K
        if H <= 0:
            continue
        if repriced:
            cost = (pcV + pi * (H + L_INSTR) + out) / 1000000
        else:
            cost = (pc * (V + H) + instr + out) / 1000000
        b = a * H / 1000000 - (S + K) * miss_rate / 1000000 - cost - il
        if with_quality:
            if den == 0:
                _check_divisor(den, QUALITY_DIVISOR)
            vk = V + K
            b = b + q1 * (vt2 - vk * vk) / den
        elif model.quality:
            b = b + 0.0                        # v4.2 below the gate still adds quality = 0
        if b > best:
            best, best_k = b, k
    return best_k, best


def align_to_user_line(keep: int, nr: int, users) -> int:
    """Grow the kept window backwards until it starts on a user line (or line 1)."""
    cut = nr - keep + 1                       # 1-based first kept line
    if cut <= 1:
        return keep
    i = bisect_right(users, cut - 1) - 1      # last user line at or before the cut
    cut = users[i] + 1 if i >= 0 else 1
    return nr - cut + 1


def decide_conversation(values: Mapping[str, AwkValue], conv: Conversation,
                        model: Model) -> Decision:
    """The whole decision for one scanned conversation."""
    NR, T = conv.nr, conv.total
    if model.name == "turn-keep":
        return turn_keep(values["ratio"].num, conv)
    dec = Decision(model.name, NR, T, 0, user_lines=len(conv.user_lines(model.v2_users)),
                   conv=conv)
    if NR == 0:
        return dec
    d = derive(values, conv, model)
    dec.derived = d
    best_k, best = best_candidate(d, model, conv.sizes)
    dec.best_k, dec.best_benefit = best_k, best
    if best_k:
        dec.terms = terms_at(d, model, best_k, sum(conv.sizes[NR - best_k:]))
    if not best > 0:
        return dec
    adj = align_to_user_line(best_k, NR, conv.user_lines(model.v2_users))
    dec.aligned_keep = adj
    dec.kept_tokens = kept = sum(conv.sizes[NR - adj:])
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
    dec = Decision("turn-keep", NR, conv.total, 0, user_lines=len(users), conv=conv)
    if NR == 0:
        return dec
    total_turns = len(users)
    target = _int_clamp(av.awk_int(total_turns * ratio + 0.5), 1, total_turns)
    dec.target_turns = int(target) if target == target else None
    if total_turns and target >= 1:
        first_kept = users[total_turns - int(target)]
        dec.keep = NR - first_kept
    return dec
