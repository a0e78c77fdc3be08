"""One orchestration: model → values → conversation → decision → policy.

Every front end — the awk form, the native command line, the Python API, replay's dp
policy, the Claude Code status line — asks its question through ``Ask`` and ``answer``,
so the steps are assembled in one place (sqlite-utils' lesson: the CLI is a thin layer
over the library).  This module stays as light as the core: the awk form imports it.
``question`` adds sessions (where each parameter comes from) on top, ``api`` the Python
API.
"""

from __future__ import annotations

from .core.decision import Weighing, decide_conversation
from .core.models import DEFAULT_MODEL, Model, get_model
from .core.params import BY_AWK, PARAMS
from .core.policy import DEFAULT_FORCE_PERCENT, PolicyResult, apply_policy
from .core.scan import Conversation
from .errors import BadValue

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from .core.awkvalue import AwkValue
    from .core.wait import Outlook

_BY_OPTION = {p.option.replace("-", "_"): p.awk for p in PARAMS}


def model_named(name: str | Model | None, environ: Mapping[str, str] | None = None,
                fallback: str | None = None) -> Model:
    """The model asked for: by name, else COMPACT_DP_MODEL, else ``fallback`` (the agent's
    model), else the default — the one home of this rule."""
    if isinstance(name, Model):
        return name
    if not name and environ is not None:
        name = environ.get("COMPACT_DP_MODEL") or None
    name = name or fallback
    return get_model(name) if name else DEFAULT_MODEL


class PolicyAsk:
    """The forced-compaction policy's inputs: trigger, last request's size, force limit."""

    def __init__(self, trigger: str = "auto", context_tokens: float = 0.0,
                 force_percent: float = DEFAULT_FORCE_PERCENT):
        self.trigger, self.context_tokens = trigger, context_tokens
        self.force_percent = force_percent


class Ask:
    """A question for the core: which model, which parameter values, which policy; for an
    agent that summarises the whole history ``whole``; for the cache-aware model the write
    price and whether the cache is cold; a forecast of the requests to come (``horizon``:
    R and its source) instead of E × L, and with it the chance that the turn now starting
    is the session's last (the near-end guard) and what the schedule weighs waiting with
    (``outlook``, core.wait)."""

    def __init__(self, model: Model, values: dict[str, AwkValue],
                 policy: PolicyAsk | None = None, whole: bool = False,
                 p_write: float | None = None, cold: bool = False,
                 horizon: tuple[float, str] | None = None, unit: str = "line",
                 words: dict[str, str] | None = None, end_chance: float | None = None,
                 outlook: Outlook | None = None):
        self.model, self.values, self.policy, self.whole = model, values, policy, whole
        self.p_write, self.cold, self.horizon = p_write, cold, horizon
        self.unit = unit                   # what the conversation is made of, in words
        self.words = words or {}           # where the caller's M came from, in words
        self.end_chance = end_chance       # that the turn now starting is the last
        self.outlook = outlook             # the schedule's inputs (None: no schedule)


class Answer:
    """The decision and, when a policy was asked for, the policy's result."""

    def __init__(self, decision: Weighing, policy: PolicyResult | None = None):
        self.decision, self.policy = decision, policy

    @property
    def keep(self) -> int:
        """What the plain command prints."""
        return self.policy.keep if self.policy is not None else self.decision.keep


def answer(ask: Ask, conv: Conversation) -> Answer:
    """Decide, then apply the policy if one was asked for."""
    decision = decide_conversation(ask.values, conv, ask.model, whole=ask.whole,
                                   p_write=ask.p_write, cold=ask.cold, horizon=ask.horizon,
                                   unit=ask.unit, words=ask.words, end_chance=ask.end_chance,
                                   outlook=ask.outlook)
    if ask.policy is None:
        return Answer(decision)
    p = ask.policy
    return Answer(decision, apply_policy(decision, p.trigger, p.context_tokens,
                                         ask.values["max_context"].num,
                                         ask.values["min_keep_ratio"].num, p.force_percent))


def awk_names(params: Mapping[str, object] | None) -> dict[str, object]:
    """Parameters keyed by awk name or option name (``input-tokens``, ``input_tokens``)."""
    given: dict[str, object] = {}
    for key, value in (params or {}).items():
        name = key if key in BY_AWK else _BY_OPTION.get(key.replace("-", "_"))
        if name is None:
            raise BadValue(key, "no such parameter")
        given[name] = value
    return given
