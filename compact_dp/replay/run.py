"""A replay of one session, put together: its setting from the same question the
decision asks (question.py), the policies by name, and their runs."""

from __future__ import annotations

from ..agents import agent_of
from ..core.models import Model
from ..errors import UsageError
from ..sessions.normalised import Session
from .engine import Replay, recorded_events, shared_caches
from .hindsight import HindsightPolicy
from .policies import Policy, make_policy
from .records import Run
from .setting import Aftermath, Setting

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

POLICY_NAMES = "recorded, dp, never, threshold:P, hindsight or hindsight:free"


def policy_for(spec: str, setting: Setting | None = None) -> Policy:
    """A policy by name; ``hindsight`` needs the setting it is the best schedule of."""
    if spec in ("hindsight", "hindsight:free"):
        if setting is None:
            return make_policy("never")          # only checking the name
        return HindsightPolicy(setting, free=spec.endswith(":free"))
    try:
        return make_policy(spec)
    except UsageError as e:
        if "unknown policy" in str(e):
            raise UsageError(f"unknown policy {spec!r} ({POLICY_NAMES})") from None
        raise


def replay_session(setting: Setting, policies: list[str]) -> list[Run]:
    """Every policy over one session (the recorded events found once, shared by all)."""
    return [Replay(setting, policy_for(p, setting), setting.events).run() for p in policies]


def setting_for(session: Session, params: Mapping[str, object], model: Model, whole: bool,
                keep_tokens: int, cache_ttl: str | None, price: str | None,
                env: Mapping[str, str] | None = None, points: str | None = None,
                horizon: str | float | None = None) -> Setting:
    """The replay's setting, from the same sources as the decision (question.py): the
    parameters, what the session's own compactions left (else the agent's figures), the
    forecast, and the recorded cache events."""
    from ..question import Options, session_question
    from .bill import SessionFiles
    keep = "none" if whole else "best"
    if keep == agent_of(session.format).keep:
        keep = "auto"                         # the agent's own: the setting says why
    question = session_question(session, Options(
        params, model=model, environ=env, keep=keep, price=price,
        cache_ttl=cache_ttl, horizon=horizon))
    values = question.ask.values
    files = SessionFiles(session)
    V0 = next((p for p in session.segment_prefixes if p is not None), values["V"].num)
    if question.hidden:
        V0 = values["V"].num                  # the fixed part; the rest is history
    S = values["S"].num
    left, cached = values["after_tokens"].num, values["after_cached"].num
    after = Aftermath(left if left > 0 else V0 + S, cached if cached > 0 else V0,
                      question.sources["after_tokens"].words)
    setting = Setting(session, values, model, agent_of(session.format), whole=whole,
                      keep_tokens=keep_tokens, cache_ttl=cache_ttl, price=price,
                      summary_tokens=S, world=question.world, aftermath=after,
                      points=points, compaction_usage=files.compaction_requests)
    setting.files = files
    if question.hidden:                       # a part-way start: V0 is the fixed part
        setting.V0, setting.hidden = V0, question.hidden
    setting.forecast = question.forecaster()
    setting.ender = question.ender()
    setting.outlook = question.ask.outlook
    setting.groups = shared_caches(setting)
    setting.events = recorded_events(setting)
    return setting
