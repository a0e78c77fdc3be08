"""A replay of one session, put together: its setting from the same question the
decision asks (question.py), the policies by name, and their runs."""

from __future__ import annotations

from ..agents import agent_of
from ..core.models import Model
from ..errors import UsageError
from ..sessions.session import Session
from .hindsight import HindsightPolicy, Penalties
from .policies import KnownEndPolicy, Policy, make_policy
from .records import Run
from .setting import Restart, Setting
from .simulate import Replay, recorded_events, shared_caches

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..calibration.project import History
    from ..question import Question

POLICY_NAMES = "recorded, dp, dp:known, never, threshold:P, hindsight or hindsight:free"


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
    """Every policy over one session (the recorded events found once, shared by all),
    each charged ④ for its compactions; then hindsight is the best of every schedule
    compared (best_by_objective)."""
    penalty = Penalties(setting)
    runs = []
    for p in policies:
        run = Replay(setting, policy_for(p, setting), setting.events).run()
        run.penalty = sum((penalty(c.before, n) for n, c in enumerate(run.compactions)), 0.0)
        runs.append(run)
    return best_by_objective(runs)


def known_figures(session: Session, question: Question, V0: float,
                  env: Mapping[str, str] | None) -> list[tuple[int, dict[str, float]]]:
    """S and what compactions left (after_tokens, after_cached) as the decision knew them
    before each request — from the session's compactions read by then, else from the
    profile, else the default — where they came from the session at all (a figure given
    stays given): the replayed decision must not know a summary still to come.  As
    (first request index, figures), in order."""
    from ..core.params import native_values
    from ..question import SESSION, compaction_stats, profile_figures, unmeasured_after
    from ..sessions.session import Aftermath
    learned = [name for name in ("S", "after_tokens", "after_cached")
               if name in question.sources and question.sources[name].origin == SESSION]
    if not learned:
        return []
    fallback = {name: value for name, (value, _) in profile_figures(
        session, question.profile, V0).items()}
    defaults = native_values({}, env or {})

    def figures(aftermath: list[Aftermath]) -> dict[str, float]:
        known = compaction_stats(aftermath)
        out: dict[str, float] = {
            name: known.get(name, fallback.get(name, defaults[name].num)) for name in learned}
        if "after_tokens" in out and "after_tokens" not in known and \
                "after_tokens" not in fallback:     # as the question fills it
            S = out.get("S", question.ask.values["S"].num)
            out["after_tokens"] = unmeasured_after(V0, S)
        return out
    requests = session.requests
    firsts = [next((j for j, r in enumerate(requests) if r.seen > c.at), len(requests))
              for c in session.compactions]      # the first request after each compaction
    out: list[tuple[int, dict[str, float]]] = [(0, figures([]))]
    for j in sorted(set(firsts) | {f + 1 for f in firsts}):
        seen: list[Aftermath] = []
        for a, first in zip(session.aftermath, firsts):
            if first > j:
                break
            done = first < j          # its first request came: what it left is known
            seen.append(a if done else Aftermath(a.summary, None, None, None))
        out.append((j, figures(seen)))
    return out


def best_by_objective(runs: list[Run]) -> list[Run]:
    """Hindsight's search (hindsight.py) is exact where what a compaction leaves does
    not depend on what came before it, and near enough elsewhere; a schedule another
    policy followed is in its space too, so where one of them scores better by
    hindsight's measure (the objective; the comparable cost for ``hindsight:free``),
    that schedule is hindsight's, and ``schedule_of`` says whose it was.  Not
    ``dp:known``'s: it measures dp against hindsight, and what it is measured against must
    not depend on whether it ran."""
    out = list(runs)
    candidates = [r for r in runs if r.policy != KnownEndPolicy.name]
    for i, run in enumerate(runs):
        if run.policy not in ("hindsight", "hindsight:free"):
            continue

        def measure(r: Run, free: bool = run.policy.endswith(":free")) -> float:
            return r.comparable_cost if free else r.objective
        best = min(candidates, key=measure)
        if measure(best) < measure(run) - 1e-12:
            out[i] = best.followed_by(run.policy)
    return out


def session_penalty(setting: Setting) -> float:
    """The session's ``penalty``: ④ of one compaction halfway through it, the first — the
    size of what each compaction adds to a policy's objective (the later and the more
    often, the more: docs/replay.md)."""
    n = len(setting.session.requests)
    return Penalties(setting)(n // 2, 0) if n else 0.0


def setting_for(session: Session, params: Mapping[str, object], model: Model, whole: bool,
                keep_tokens: int, cache_ttl: str | None, price: str | None,
                env: Mapping[str, str] | None = None, points: str | None = None,
                horizon: str | float | None = None,
                auto: tuple[float | None, bool] = (None, False),
                adopted: Sequence[str] = (), project: History | None = None,
                project_now: float | None = None) -> Setting:
    """The replay's setting, from the same sources as the decision (question.py): the
    parameters, what the session's own compactions left (else the agent's figures), the
    forecast (its level learned on ``project``'s sessions as they stood at
    ``project_now``, when given: backtest's), and the recorded cache events; ``adopted``:
    files left out into this one, whose side files it bills (bill.SessionFiles)."""
    from ..question import Options, session_question
    from .bill import SessionFiles
    keep = "none" if whole else "best"
    if keep == agent_of(session.format).keep:
        keep = "auto"                         # the agent's own: the setting says why
    question = session_question(session, Options(
        params, model=model, environ=env, keep=keep, price=price,
        cache_ttl=cache_ttl, horizon=horizon, auto_compact_tokens=auto[0], auto_off=auto[1],
        project=project, project_now=project_now))
    values = question.ask.values
    files = SessionFiles(session, adopted)
    V0 = next((p for p in session.segment_prefixes if p is not None), values["V"].num)
    if question.hidden:
        V0 = values["V"].num                  # the fixed part; the rest is history
    S = values["S"].num
    left, cached = values["after_tokens"].num, values["after_cached"].num
    after = Restart(left if left > 0 else V0 + S, cached if cached > 0 else V0,
                    question.sources["after_tokens"].words)
    setting = Setting(session, values, model, agent_of(session.format), whole=whole,
                      keep_tokens=keep_tokens, cache_ttl=cache_ttl, price=price,
                      summary_tokens=S, world=question.world, aftermath=after,
                      points=points, compaction_usage=files.compaction_requests)
    setting.files = files
    if question.hidden:                       # a part-way start: V0 is the fixed part
        setting.V0, setting.hidden = V0, question.hidden
    setting.asker = question.asker(known_figures(session, question, setting.V0, env))
    setting.groups = shared_caches(setting)
    setting.events = recorded_events(setting)
    return setting
