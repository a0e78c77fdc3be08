"""The decision's parameters: awk names, native option names, env vars and defaults (SPEC §2, §7).

One table serves the awk-compatible parser, the native command line, the public API and the
agent hooks, so a name or a default is written down exactly once.
"""

from __future__ import annotations

import math
import os

from .awkvalue import UNSET, AwkValue, looks_numeric


class Param:
    """One parameter: awk -v name, native option (without --), env var, default, meaning."""

    __slots__ = ("awk", "option", "env", "default", "meaning")

    def __init__(self, awk: str, option: str, env: str | None, default: str, meaning: str):
        self.awk, self.option, self.env = awk, option, env
        self.default, self.meaning = default, meaning


PARAMS: tuple[Param, ...] = (
    Param("t", "turns", None, "0", "user-input turns so far"),
    Param("total_requests", "requests", None, "0", "LLM requests so far"),
    Param("total_compact", "compactions", None, "0", "compactions so far (c)"),
    Param("total_input", "input-tokens", None, "0", "cumulative input tokens"),
    Param("baseline_e", "baseline-turns", "DP_BASELINE_E", "8", "baseline expected remaining turns"),
    Param("e_fixed", "fixed-turns", "DP_E_FIXED", "0", "fixed E override when > 0"),
    Param("L_fixed", "calls-per-turn", "DP_L", "0", "fixed LLM calls per turn when > 0"),
    Param("V", "prefix-tokens", "DP_V", "5000", "fixed prefix tokens"),
    Param("p_input", "p-input", "DP_P_INPUT", "3.0", "uncached input $/MTok"),
    Param("p_cache", "p-cache", "DP_P_CACHE", "0.30", "cache-hit input $/MTok"),
    Param("p_out", "p-out", "DP_P_OUT", "15.0", "output $/MTok"),
    Param("S", "summary-tokens", "DP_S", "500", "summary output tokens"),
    Param("min_keep_ratio", "min-keep-ratio", "DP_MIN_KEEP_RATIO", "0.12",
          "minimum share of lines kept (also turn-keep's ratio)"),
    Param("r", "retention", "DP_R", "0.8", "single-summary retention"),
    Param("beta", "beta", "DP_BETA", "0.03", "information-loss coefficient"),
    Param("max_context", "max-context", "MAX_CONTEXT_TOKENS", "200000", "context window M"),
    Param("quality_penalty", "quality-penalty", "DP_QUALITY_PENALTY", "0.2", "quality penalty Q"),
)
BY_AWK = {p.awk: p for p in PARAMS}
AWK_NAMES = frozenset(BY_AWK) | {"ratio"}


class BadValue(ValueError):
    """A native-form value that is not a finite decimal number."""


def strict_number(text: str, where: str) -> float:
    """Parse a native-form value: a finite decimal number or a clear error naming ``where``."""
    if not looks_numeric(text):
        raise BadValue(f"{where}: {text!r} is not a number")
    x = float(text.strip())
    if not math.isfinite(x):
        raise BadValue(f"{where}: {text!r} is not a finite number")
    return x


def native_values(given: dict[str, str | float | None], env: dict[str, str] | None = None
                  ) -> dict[str, AwkValue]:
    """Every parameter as a number: the given value, else its env var (unless empty), else
    the SPEC §2 default — the native form's and the hooks' ``${N:-${DP_X:-default}}``.

    ``given`` is keyed by awk name; ``ratio`` (turn-keep) follows ``min_keep_ratio``.
    """
    env = os.environ if env is None else env
    values: dict[str, AwkValue] = {}
    for p in PARAMS:
        raw = given.get(p.awk)
        where = "--" + p.option
        if raw is None and p.env and env.get(p.env, ""):
            raw, where = env[p.env], p.env
        if raw is None:
            raw = p.default
        x = raw if isinstance(raw, float) else strict_number(str(raw), where)
        if not math.isfinite(x):
            raise BadValue(f"{where}: {raw!r} is not a finite number")
        values[p.awk] = AwkValue.number(x)
    values["ratio"] = values["min_keep_ratio"]
    return values


def awk_values(assignments: dict[str, str]) -> dict[str, AwkValue]:
    """The awk form: each assigned string keeps its awk nature; the rest stay unset."""
    values = {name: UNSET for name in AWK_NAMES}
    for name, text in assignments.items():
        if name in values:
            values[name] = AwkValue.from_input(text)
    return values


def string_valued(values: dict[str, AwkValue], read: frozenset[str]) -> list[str]:
    """Names of the variables the model reads whose values are strings (for warnings)."""
    return [n for n in sorted(read) if values[n].is_string]
