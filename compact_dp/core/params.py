"""The decision's parameters: awk names, native option names, env vars, defaults, and what
the native form accepts.

One table serves the awk-compatible parser, the native command line, the public API, the
agent hooks, the tests and the benchmark, so a name, a default or a valid range is written
down exactly once.  docs/options.md is this table in words.
"""

from __future__ import annotations

import math

from ..errors import BadValue
from .awkvalue import UNSET, AwkValue, looks_numeric

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


class Param:
    """One parameter: awk -v name, native option (without --), env var, default, meaning,
    and the native form's range: ``low`` (inclusive unless ``above``), ``high`` (inclusive),
    ``whole`` for counts."""

    __slots__ = ("awk", "option", "env", "default", "meaning", "low", "above", "high",
                 "whole", "in_awk")

    def __init__(self, awk: str, option: str, env: str | None, default: str, meaning: str,
                 *, low: float = 0.0, above: bool = False, high: float = math.inf,
                 whole: bool = False, in_awk: bool = True):
        self.awk, self.option, self.env = awk, option, env
        self.default, self.meaning = default, meaning
        self.low, self.above, self.high, self.whole = low, above, high, whole
        self.in_awk = in_awk          # one of bash-agent's awk variables (else ours only)

    def rule(self) -> str:
        """The valid values in words ("a whole number ≥ 0", "between 0 and 1", "> 0")."""
        if self.whole:
            return "a whole number ≥ 0"
        if self.high != math.inf:
            return f"a number between {self.low:g} and {self.high:g}"
        return f"a number {'>' if self.above else '≥'} {self.low:g}"

    def check(self, x: float, where: str, raw: object) -> float:
        """x itself when the native form accepts it, else a BadValue naming ``where``."""
        ok = (x > self.low if self.above else x >= self.low) and x <= self.high
        if ok and self.whole:
            ok = x == math.floor(x)
        if not ok:
            raise BadValue(where, f"{raw!r} is out of range (must be {self.rule()})")
        return x


PARAMS: tuple[Param, ...] = (
    Param("t", "turns", None, "0", "user-input turns so far", whole=True),
    Param("total_requests", "requests", None, "0", "LLM requests so far", whole=True),
    Param("total_compact", "compactions", None, "0", "compactions so far (c)", whole=True),
    Param("total_input", "input-tokens", None, "0", "cumulative input tokens"),
    Param("baseline_e", "baseline-turns", "DP_BASELINE_E", "8",
          "baseline expected remaining turns"),
    Param("e_fixed", "fixed-turns", "DP_E_FIXED", "0", "fixed E override when > 0"),
    Param("L_fixed", "calls-per-turn", "DP_L", "0", "fixed LLM calls per turn when > 0"),
    Param("V", "prefix-tokens", "DP_V", "5000", "fixed prefix tokens"),
    Param("p_input", "p-input", "DP_P_INPUT", "3.0", "uncached input $/MTok"),
    Param("p_cache", "p-cache", "DP_P_CACHE", "0.30", "cache-hit input $/MTok"),
    Param("p_out", "p-out", "DP_P_OUT", "15.0", "output $/MTok"),
    Param("S", "summary-tokens", "DP_S", "500", "summary output tokens"),
    Param("min_keep_ratio", "min-keep-ratio", "DP_MIN_KEEP_RATIO", "0.12",
          "minimum share of lines kept (also turn-keep's ratio)", high=1.0),
    Param("r", "retention", "DP_R", "0.8", "single-summary retention", high=1.0),
    Param("beta", "beta", "DP_BETA", "0.03", "information-loss coefficient"),
    Param("max_context", "max-context", "MAX_CONTEXT_TOKENS", "200000", "context window M",
          above=True),
    Param("quality_penalty", "quality-penalty", "DP_QUALITY_PENALTY", "0.2",
          "quality penalty Q"),
    # cache-clock only (bash-agent's awk never reads them): what a compaction leaves
    Param("after_tokens", "after-tokens", "DP_AFTER_TOKENS", "0",
          "context right after a compaction, before any kept message (0: V + S)",
          in_awk=False),
    Param("after_cached", "after-cached", "DP_AFTER_CACHED", "0",
          "what of it is still cached (0: V)", in_awk=False),
)
BY_AWK = {p.awk: p for p in PARAMS}
AWK_NAMES = frozenset(p.awk for p in PARAMS if p.in_awk) | {"ratio"}
STATS = ("t", "total_requests", "total_compact", "total_input")   # what a session records
DEFAULTS = {p.awk: p.default for p in PARAMS if p.in_awk}          # the awk's own


def strict_number(text: str, where: str) -> float:
    """Parse a native-form value: a finite decimal number or a clear error naming ``where``."""
    if not looks_numeric(text):
        raise BadValue(where, f"{text!r} is not a number")
    x = float(text.strip())
    if not math.isfinite(x):
        raise BadValue(where, f"{text!r} is not a finite number")
    return x


def whole_number(raw: object, where: str, low: int) -> int:
    """A whole number ≥ low (given as a number, or as text to read), or a BadValue
    naming ``where`` in the same words for the command line and the Python API."""
    x = strict_number(raw, where) if isinstance(raw, str) else raw
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or \
            x != int(x) or x < low:
        raise BadValue(where, f"{raw!r} is not a whole number ≥ {low}")
    return int(x)


def native_values(given: Mapping[str, object], env: Mapping[str, str] | None = None
                  ) -> dict[str, AwkValue]:
    """Every parameter as a number: the given value, else its env var (unless empty), else
    the default — the native form's and the hooks' ``${N:-${DP_X:-default}}``.

    ``given`` is keyed by awk name (values: strings or numbers); ``ratio`` (turn-keep)
    follows ``min_keep_ratio``.  Each value must be a finite number within its range.
    """
    env = {} if env is None else env
    values: dict[str, AwkValue] = {}
    for p in PARAMS:
        raw = given.get(p.awk)
        where = p.option.replace("-", "_")
        if raw is None and p.env and env.get(p.env, ""):
            raw, where = env[p.env], p.env
        if raw is None:
            raw = p.default
        if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
            raise BadValue(where, f"{raw!r} is not a number")
        x = float(raw) if not isinstance(raw, str) else strict_number(raw, where)
        if not math.isfinite(x):
            raise BadValue(where, f"{raw!r} is not a finite number")
        values[p.awk] = AwkValue.number(p.check(x, where, raw))
    values["ratio"] = values["min_keep_ratio"]
    return values


def awk_values(assignments: Mapping[str, str]) -> dict[str, AwkValue]:
    """The awk form: each assigned string keeps its awk nature; the rest stay unset."""
    values = {name: UNSET for name in AWK_NAMES}
    for name, text in assignments.items():
        if name in values:
            values[name] = AwkValue.from_input(text)
    for p in PARAMS:                  # ours only: the awk models never read them
        if not p.in_awk:
            values[p.awk] = AwkValue.number(float(p.default))
    return values


def awk_arguments(assignments: Mapping[str, str]) -> list[str]:
    """``-v name=value`` arguments in table order: how bash-agent calls the awk."""
    out: list[str] = []
    for name in [p.awk for p in PARAMS if p.in_awk] + ["ratio"]:
        if name in assignments:
            out += ["-v", f"{name}={assignments[name]}"]
    return out


def string_valued(values: Mapping[str, AwkValue], read: frozenset[str]) -> list[str]:
    """Names of the variables the model reads whose values are strings (for warnings)."""
    return [n for n in sorted(read) if values[n].is_string]
