"""The Python API: ``decide`` and ``should_compact`` without a subprocess.

    >>> import compact_dp
    >>> d = compact_dp.decide("conversation.jsonl", {"turns": 5, "requests": 40})
    >>> d.keep, d.compact

Parameters are keyed by awk name (``total_requests``) or native option name
(``requests``/``input-tokens``/``input_tokens``); missing ones take the SPEC §2 defaults
(or, with ``env=os.environ``, the env vars first).  Values must be finite numbers.
"""

from __future__ import annotations

import os
from typing import IO, Iterable, Mapping, Union

from .models import DEFAULT_MODEL, Decision, decide_conversation, get_model
from .params import BY_AWK, PARAMS, BadValue, native_values
from .policy import DEFAULT_FORCE_PERCENT, PolicyResult, apply_policy
from .scan import Conversation, Scanner, scan_lines, scan_paths

Source = Union[str, "os.PathLike[str]", bytes, IO[bytes], Iterable[Union[str, bytes]]]
_BY_OPTION = {p.option.replace("-", "_"): p.awk for p in PARAMS}


def _awk_names(params: Mapping[str, object] | None) -> dict[str, object]:
    given: dict[str, object] = {}
    for key, value in (params or {}).items():
        name = key if key in BY_AWK else _BY_OPTION.get(key.replace("-", "_"))
        if name is None:
            raise BadValue(f"unknown parameter {key!r}")
        given[name] = float(value) if isinstance(value, (int, float)) else value
    return given


def load(source: Source, v2_users: bool = False) -> Conversation:
    """Scan a path, raw bytes, a binary file object, or an iterable of lines."""
    if isinstance(source, (str, os.PathLike)):
        return scan_paths([os.fspath(source)], v2_users)
    if not isinstance(source, bytes) and not hasattr(source, "read"):
        return scan_lines(list(source), v2_users)
    scanner = Scanner(v2_users)
    if isinstance(source, bytes):
        import io
        source = io.BytesIO(source)
    scanner.add_stream(source)  # type: ignore[arg-type]
    return scanner.conv


def decide(source: Source, params: Mapping[str, object] | None = None, *,
           model: str = DEFAULT_MODEL, env: Mapping[str, str] | None = None) -> Decision:
    """The decision for one conversation, as the native command line computes it."""
    return _decide(source, params, model, env)[0]


def _decide(source, params, model, env):
    m = get_model(model)
    values = native_values(_awk_names(params), env if env is not None else {})
    return decide_conversation(values, load(source, m.v2_users), m), values


def should_compact(source: Source, trigger: str = "auto", context_tokens: float = 0,
           params: Mapping[str, object] | None = None, *, model: str = DEFAULT_MODEL,
           force_percent: float = DEFAULT_FORCE_PERCENT,
           env: Mapping[str, str] | None = None) -> PolicyResult:
    """The agent's whole answer (SPEC §6): the decision plus the forced-compaction fallback."""
    decision, values = _decide(source, params, model, env)
    return apply_policy(decision, decision.conv, trigger, context_tokens, values["max_context"].num,
                        values["min_keep_ratio"].num, force_percent)
