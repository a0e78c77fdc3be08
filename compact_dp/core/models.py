"""The decision models and the quantities that do not depend on k (steps 2–9).

Four models come from bash-agent's releases — ``v3.0.7`` (default), ``v2``, ``v4.2`` and the
``turn-keep`` fallback — and share one core.  A ``Model`` is a value: its flags say what it
does, so code asks ``model.keep_guards``, never ``model.name == "v4.2"``.  ``derive``
computes E, L, R, avg, r_t, ④, Q, M and the candidate range with awk's comparison rules;
``search`` finds the best k; ``decision`` puts it together.  docs/model.md has the formulas.
"""

from __future__ import annotations

from ..errors import AwkFatal, UsageError
from . import awkvalue as av
from .awkvalue import AwkValue
from .quantities import Derived, information_loss
from .retention import compounded_retention
from .scan import Conversation


class Model:
    """What distinguishes one model from another; all share one core."""

    __slots__ = ("name", "summary", "v2_users", "quality", "quality_gate",
                 "repriced_summary", "keep_guards", "turn_keep", "cache_aware")

    def __init__(self, name: str, summary: str, *, v2_users: bool = False,
                 quality: bool = True, quality_gate: bool = False,
                 repriced_summary: bool = False, keep_guards: bool = False,
                 turn_keep: bool = False, cache_aware: bool = False):
        self.name = name
        self.summary = summary
        self.v2_users = v2_users                  # v2's user-line test (a prefix)
        self.quality = quality                    # has term ⑤
        self.quality_gate = quality_gate          # ⑤ only when T > 0.30 M
        self.repriced_summary = repriced_summary  # ③ pays p_input for the history
        self.keep_guards = keep_guards            # a keep ceiling and a minimum kept size
        self.turn_keep = turn_keep                # the forced fallback, not a cost model
        self.cache_aware = cache_aware            # write prices and the cache's TTL

    @property
    def reads(self) -> frozenset[str]:
        """The awk variables this model reads (for string-value warnings)."""
        if self.turn_keep:
            return frozenset({"ratio"})
        names = {"t", "total_requests", "total_compact", "total_input", "baseline_e",
                 "e_fixed", "L_fixed", "V", "p_input", "p_cache", "p_out", "S",
                 "min_keep_ratio", "r", "beta"}
        if self.cache_aware:
            names |= {"after_tokens", "after_cached"}
        if self.quality:
            names |= {"max_context", "quality_penalty"}
        return frozenset(names)

    def __repr__(self) -> str:
        return f"Model({self.name!r})"


MODEL_TABLE: dict[str, Model] = {m.name: m for m in (
    Model("v3.0.7", "the 5-term model: ① − ② − ③ − ④ + ⑤"),
    Model("v2", "the 4-term model (no ⑤) with the older user-line test",
          v2_users=True, quality=False),
    Model("v4.2", "③ re-priced, a 30 % gate on ⑤, a keep ceiling and a minimum kept size",
          quality_gate=True, repriced_summary=True, keep_guards=True),
    Model("turn-keep", "the forced-compaction fallback: keep the last share of user turns",
          quality=False, turn_keep=True),
    Model("cache-clock", "v3.0.7 with cache write prices, the cache's TTL and cold caches",
          cache_aware=True),
)}
MODELS = tuple(MODEL_TABLE)
AWK_MODELS = ("v3.0.7", "v2", "v4.2", "turn-keep")   # bash-agent's: the awk form runs these
DEFAULT_MODEL = MODEL_TABLE["v3.0.7"]


def get_model(name: str) -> Model:
    try:
        return MODEL_TABLE[name]
    except KeyError:
        raise UsageError(f"unknown model {name!r} (choose from {', '.join(MODELS)})") from None


def _clamp(x: float, lo: float, hi: float) -> float:
    """awk's ``if (x < lo) x = lo; if (x > hi) x = hi`` (NaN passes through)."""
    if x < lo:
        x = lo
    if x > hi:
        x = hi
    return x


def _whole(x: float) -> int:
    """A whole number as an int; NaN stays NaN (typed as int: it only ever fails <=)."""
    return int(x) if x == x else x  # type: ignore[return-value]


def _check_divisor(x: float, where: str) -> None:
    if x == 0:
        raise AwkFatal(f"division by zero in {where}")


def derive(values: dict[str, AwkValue], conv: Conversation, model: Model,
           horizon: tuple[float, str] | None = None) -> Derived:
    """Steps 2–9, comparisons done with awk's rules for each value's nature.  ``horizon``:
    R from a forecast (and where it came from) instead of E × L (core.horizon)."""
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
        L_val, src["L"] = AwkValue.number(reqs.num / t.num), "estimated: requests / turns"
    else:
        L_val, src["L"] = AwkValue.number(5.0), "default (no stats)"
    if av.lt(L_val, 1):
        L_val, src["L"] = AwkValue.number(1.0), src["L"] + ", raised to at least 1"
    L = L_val.num
    if av.gt(reqs, 0) and av.gt(g["total_input"], 0):
        _check_divisor(reqs.num, "avg = total_input / total_requests")
        avg, src["avg"] = g["total_input"].num / reqs.num, "estimated: input tokens / requests"
    else:
        avg, src["avg"] = 4000.0, "default (no stats)"
    c = g["total_compact"].num
    R = E * L
    src["R"] = "seed: E × L"
    if horizon is not None:
        R, src["R"] = horizon
    r_t = compounded_retention(values["r"].num, c)
    N_remain = R * avg
    p_input = values["p_input"].num
    info_loss = information_loss(values["beta"].num, r_t, N_remain, p_input)
    Q = M = None
    if model.quality:
        qp, mc = values["quality_penalty"], values["max_context"]
        Q = 0.2 if av.equals_empty_string(qp) else qp.num
        src["Q"] = "default (empty)" if av.equals_empty_string(qp) else "given"
        if av.equals_empty_string(mc) or av.le(mc, 0):
            M, src["M"] = 200000.0, "default (empty or ≤ 0)"
        else:
            M, src["M"] = mc.num, "given"
    NR, T = conv.nr, conv.total
    ratio = values["min_keep_ratio"].num
    # NR > 0, so the clamps leave whole numbers in [0, NR] — or NaN (a ratio of +nan, which
    # awk accepts): then no k satisfies the loop's k <= bound, and nothing is scored
    min_keep = _whole(_clamp(av.awk_int(NR * ratio + 0.5), 3, NR))
    max_keep = None
    if model.keep_guards:
        ceiling = av.awk_int(NR * (1 - ratio) + 0.5)
        if ceiling > NR:
            ceiling = NR
        max_keep = NR if ceiling < min_keep else _whole(ceiling)
    V, S = values["V"].num, values["S"].num
    X: float | None = None
    U = 0.0
    if model.cache_aware:
        X, U = aftermath(V, S, values["after_tokens"].num, values["after_cached"].num, src)
    return Derived(E=E, L=L, R=R, avg=avg, c=c, r_t=r_t, N_remain=N_remain,
                   info_loss=info_loss, Q=Q, M=M, min_keep=min_keep, max_keep=max_keep,
                   T=T, NR=NR, V=V, S=S, p_input=p_input,
                   p_cache=values["p_cache"].num, p_out=values["p_out"].num,
                   beta=values["beta"].num, X=X, U=U, sources=src)


def aftermath(V: float, S: float, after: float, cached: float, src: dict[str, str]
              ) -> tuple[float | None, float]:
    """X and U from what a compaction leaves: ``after`` tokens before any kept message (0:
    not measured — v3.0.7's assumption that it is V + S, and that the summary it leaves
    costs the later requests nothing), ``cached`` of them still in the cache (0: V)."""
    X = after - V if after > 0 else None
    U = V - min(cached, after if after > 0 else V + S) if cached > 0 else 0.0
    src["X"] = "after_tokens − V" if after > 0 else "not measured: the summary, S"
    src["U"] = "V − after_cached" if cached > 0 else "0: V stays cached"
    return X, max(0.0, U)


def turn_keep_target(total_turns: int, ratio: float) -> int | None:
    """How many user turns the fallback keeps: int(turns × ratio + 0.5) within [1, turns]
    (None when ratio makes it NaN)."""
    target = _clamp(av.awk_int(total_turns * ratio + 0.5), 1, total_turns)
    return int(target) if target == target else None
