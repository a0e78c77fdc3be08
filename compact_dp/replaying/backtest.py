"""Backtest: was the advice true?  At every point where the agent could have compacted, put
what compact-dp said then beside what compacting there really saved (docs/backtest.md).

For a recorded session with usage, at each turn end (and every N-th request with
``every``):

* **what the decision said** — the decision on the transcript as it stood at that moment,
  exactly as the status line computed it: the forecast of requests to come (R), the billed
  dollars it predicted (① − ② − ③ + ⓪), the net benefit, compact or not;
* **what happened** — the requests that really came, and what compacting there once
  really saved: replay's engine bills the rest of the recorded session twice, the agent
  compacting by itself at its threshold both times, once with a compaction at the point.

Walk-forward: each decision's forecast learns from the earlier sessions of the session's
own project among the ones backtested, as they stood at that moment (``history``: the
project's sessions, calibration.project) — what the status line would have known.

Then per session and in total: the forecast's bias and log error beside the elapsed rule's
("as many requests remain as were made"), the dollars' calibration, the share of compact
advice that paid, and replay's ``dp`` against ``hindsight`` and the thresholds.
"""

from __future__ import annotations

import marshal
import math

from ..agents import REQUEST, TURN
from ..core.middle import median
from ..sessions.session import USER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ..calibration.project import History
    from ..question import Question
    from ..sessions.line_reader import LineReader
    from ..sessions.recorder import Recorder
    from ..sessions.session import Session, State
    from .records import Doc
    from .setting import Setting

POLICIES = ["recorded", "dp", "dp:known", "hindsight", "hindsight:free", "threshold:60",
            "threshold:83"]
# the dp policies whose goals are totalled, and the prefix of their figures' keys
GOAL_KEYS = {"dp": "dp_", "dp:known": "dp_known_"}


class Moment:
    """One point: where (the request it comes before, turn end or not), when, and the
    session as compact-dp saw it then (a summary)."""

    __slots__ = ("index", "kind", "time", "session")

    def __init__(self, index: int, kind: str, time: float | None, session: Session):
        self.index, self.kind, self.time, self.session = index, kind, time, session


class _Watching:
    """Told by a recorder before each message and request, it keeps a copy of the
    reader's state (the recorder's and what the reader knew then: the agent's version, the
    window it reported, the session's start) at every point, as the session is read.

    A request is read after its reply (Claude Code's assistant line is both; Codex reports
    the usage after the output items), so the copy before request j is the one taken when
    exactly the messages it saw had been read."""

    def __init__(self, recorder: Recorder, reader: LineReader, every: int | None) -> None:
        self.recorder, self.reader, self.every = recorder, reader, every
        self.moments: list[tuple[int, str, float | None, State]] = []
        self.turn_seen = False
        self.before: dict[int, State] = {}    # message count → a copy, at a request point

    def _next(self) -> int:
        return self.recorder.request_count + (self.recorder.open is not None)

    def _copy(self) -> State:
        copy: State = marshal.loads(marshal.dumps(self.reader.state()))
        return copy

    def _at_point(self) -> bool:
        j = self._next()
        return bool(self.every and j and j % self.every == 0 and not self.turn_seen)

    def message(self, kind: str) -> None:
        if kind == USER and not self.turn_seen and self._next() >= 1:
            self.turn_seen = True
            self.moments.append((self._next(), TURN, self.reader.now,
                                 self._copy()))
        if self._at_point():
            self.before.setdefault(self.recorder.message_count, self._copy())

    def request(self, seen: int, time: float | None, sent: float | None) -> None:
        if self._at_point():
            state = self.before.get(seen)
            self.moments.append((self._next(), REQUEST, sent if sent is not None else time,
                                 state if state is not None else self._copy()))
        self.before = {}
        self.turn_seen = False


def moments(path: str, fmt: str, every: int | None = None) -> list[Moment]:
    """The session as compact-dp would have seen it at each point (read once)."""
    from ..sessions.read import chunks, feed_lines, finish_tail, markers_of, reader_for

    reader = reader_for(fmt, keep=False)
    watch = _Watching(reader.rec, reader, every)
    reader.rec.watcher = watch
    rest: list[bytes] = []
    with open(path, "rb") as f:               # the lines as the reading takes them
        for _ in feed_lines(reader, chunks(f, b""), rest):
            pass
    finish_tail(reader, b"".join(rest), markers_of(fmt))
    out = []
    for index, kind, time, state in watch.moments:
        out.append(Moment(index, kind, time, type(reader).from_state(state).session(path)))
    return out


def realized(setting: Setting, points: list[tuple[int, str]],
             early: dict[int, float] | None = None) -> list[float]:
    """What compacting once at each point really saved over the recorded session, the
    agent compacting by itself at its threshold all the same: billed comparable dollars
    (input and summaries) without it, less with it.  ``early``: a turn end's compaction
    made at that moment (the end of the turn before, ahead of a pause) rather than when
    the next request is sent."""
    from .policies import SchedulePolicy
    from .simulate import Replay

    def cost(at: set[tuple[int, str]]) -> float:
        replay = Replay(setting, SchedulePolicy(at, auto=True, at=early), setting.events)
        replay.run()
        return replay.spent
    base = cost(set())
    return [base - cost({p}) for p in points]


def paused(question: Question) -> float | None:
    """When the turn before a point ended, if the user then paused past the cache's TTL
    (the point's cache is cold): the moment the status line would have offered to compact
    first (None: no pause)."""
    cache = question.cache
    if cache is None or cache.last is None or not cache.cold:
        return None
    return cache.last


def backtest_session(path: str, environ: Mapping[str, str], every: int | None = None,
                     policies: list[str] | None = None, history: History | None = None
                     ) -> Doc:
    """One session's points and its policies, as plain data; ``history``: its project's
    sessions, which each point's forecast learns from as they stood then (None: the
    profile's alone)."""
    from ..agents import agent_of
    from ..asking import model_named
    from ..errors import FormatError
    from ..question import Options, decide_session
    from ..sessions.read import read_session
    from .batch import refuse_empty
    from .run import replay_session, setting_for

    session = read_session([path])
    refuse_empty(session, path)
    agent = agent_of(session.format)
    if not agent.whole or not session.has_usage:
        raise FormatError(f"{path}: backtest needs a Claude Code or Codex session with "
                          "recorded usage")
    model = model_named(None, environ, agent.model)
    started = session.started if session.started is not None else next(
        (r.time for r in session.requests if r.time is not None), None)
    # replay's dp and hindsight's penalties: the project as it stood when the session began
    setting = setting_for(session, {}, model, True, 0, None, None, environ, project=history,
                          project_now=started if started is not None else -math.inf)
    seen = moments(path, session.format, every)
    rows: list[dict[str, Any]] = []
    n = len(session.requests)
    for m in seen:
        if m.index >= n:
            continue
        answer, question = decide_session(m.session, Options(
            environ=environ, now=m.time, project=history,
            project_now=m.time if m.time is not None else -math.inf))
        d, t = answer.decision, answer.decision.terms
        if d.derived is None or t is None:
            continue
        when = paused(question) if m.kind == TURN else None
        row: dict[str, Any] = {
            "request": m.index, "kind": m.kind, "time": m.time, "forecast": d.derived.R,
            "horizon": d.derived.sources.get("R", ""), "remaining": n - m.index,
            "predicted": t.billed, "benefit": d.best_benefit, "compact": d.compact,
            "wait": d.wait.until if d.wait is not None and d.wait.held else None,
            "paused_at": when, "pause_saving": None, "pause_predicted": None}
        if when is not None:
            before, _ = decide_session(m.session, Options(environ=environ, now=when))
            p, bt = before.decision.pause, before.decision.terms
            if p is not None and bt is not None:
                row["pause_saving"] = p.saving
                row["pause_predicted"] = bt.billed + p.rewrite
        rows.append(row)
    saved = realized(setting, [(r["request"], r["kind"]) for r in rows])
    for r, x in zip(rows, saved):
        r["realized"] = x
    early = [r for r in rows if r["paused_at"] is not None]
    first = realized(setting, [(r["request"], r["kind"]) for r in early],
                     {r["request"]: r["paused_at"] for r in early})
    for r in rows:
        r["pause_realized"] = None
    for r, x in zip(early, first):
        r["pause_realized"] = x
    runs: dict[str, dict[str, Any]] = {
        str(s["policy"]): s for s in
        (run.summary() for run in replay_session(setting, policies or POLICIES))}
    from ..history import project_of
    return {"session": path, "project": project_of(session, path, environ),
            "session_id": session.session_id, "format": session.format, "requests": n,
            "points": rows, "policies": runs, **score(rows), **compare(runs),
            "keys": [r.key for r in session.requests]}


# --- the scores --------------------------------------------------------------------------

def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Rank correlation (ties get their mean rank); None under three points or no spread."""
    if len(xs) < 3:
        return None

    def ranks(v: list[float]) -> list[float]:
        order = sorted(range(len(v)), key=lambda i: v[i])
        out = [0.0] * len(v)
        i = 0
        while i < len(order):
            k = i
            while k + 1 < len(order) and v[order[k + 1]] == v[order[i]]:
                k += 1
            for m in range(i, k + 1):
                out[order[m]] = (i + k) / 2
            i = k + 1
        return out
    a, b = ranks(xs), ranks(ys)
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    sab = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    saa = sum((x - ma) ** 2 for x in a)
    sbb = sum((y - mb) ** 2 for y in b)
    return sab / math.sqrt(saa * sbb) if saa and sbb else None


def score(rows: list[Doc]) -> Doc:
    """The forecast's and the dollars' scores over some points."""
    if not rows:
        return {"scores": None}
    pred = [r["forecast"] for r in rows]
    actual = [r["remaining"] for r in rows]
    elapsed = [max(r["request"], 1) for r in rows]
    log = sum(abs(math.log(p / a)) for p, a in zip(pred, actual)) / len(rows)
    log_elapsed = sum(abs(math.log(e / a)) for e, a in zip(elapsed, actual)) / len(rows)
    said = [r["predicted"] for r in rows]
    got = [r["realized"] for r in rows]
    ratios = [p / g for p, g in zip(said, got) if g > 0]
    advised = [r for r in rows if r["compact"]]
    return {"scores": {
        "points": len(rows),
        "forecast_bias": sum(pred) / sum(actual),
        "forecast_log_error": log, "elapsed_log_error": log_elapsed,
        "forecast_log_error_vs_elapsed": log / log_elapsed if log_elapsed else None,
        "dollars_sum_ratio": sum(said) / sum(got) if sum(got) else None,
        "dollars_median_ratio": median(ratios),
        "dollars_spearman": spearman(said, got),
        "compact_advice": len(advised),
        "compact_advice_paid": (sum(1 for r in advised if r["realized"] > 0) / len(advised)
                                if advised else None),
        **pause_score(rows)}}


def pause_score(rows: list[Doc]) -> Doc:
    """The pause advice at the turn ends a pause past the TTL really followed: how many,
    where it was given (compacting first would have saved), the share of those where
    compacting first at the turn's end really saved, and the dollars it predicted (billed:
    ① − ② − ③ + ⓪ and the re-write avoided) against what that really saved."""
    points = [r for r in rows if r.get("paused_at") is not None]
    given = [r for r in points if r.get("pause_predicted") is not None]
    said = [r["pause_predicted"] for r in given]
    got = [r["pause_realized"] for r in given]
    ratios = [p / g for p, g in zip(said, got) if g > 0]
    return {"pause_points": len(points), "pause_advice": len(given),
            "pause_advice_paid": (sum(1 for g in got if g > 0) / len(given)
                                  if given else None),
            "pause_dollars_median_ratio": median(ratios),
            "pause_dollars_spearman": spearman(said, got)}


def compare(runs: dict[str, Doc]) -> Doc:
    """dp against hindsight and the thresholds: every policy's ``saving`` (comparable costs:
    input and summaries) and ``hindsight_share`` (over hindsight's saving) as replay's, and
    like with like (compare.like_with_like): ``objective_share`` over hindsight's saving in
    the objective it minimises, ``dollar_share`` over hindsight:free's in dollars."""
    from .compare import like_with_like, shares
    if "recorded" not in runs:
        return {}
    base = runs["recorded"]["comparable_cost"]
    out: dict[str, object] = {}
    savings = {name: base - run["comparable_cost"] for name, run in runs.items()}
    share = shares(savings)
    for name, run in runs.items():
        if name != "recorded":
            run["saving"], run["hindsight_share"] = savings[name], share[name]
    like_with_like(list(runs.values()))
    thresholds = [r for n, r in runs.items() if n.startswith("threshold:")]
    for name, prefix in GOAL_KEYS.items():
        dp = runs.get(name)
        if dp is not None:
            out[prefix + "beats_thresholds"] = bool(thresholds) and all(
                dp["comparable_cost"] < r["comparable_cost"] for r in thresholds)
    return out


LONG = 100          # requests: a long session, which the policies' goals are held on


def totals(results: list[Doc]) -> Doc:
    """The scores over every point of every session, and the policies' goals over the
    sessions of LONG requests or more: dp's share of hindsight's saving, like with like —
    in the objective (``dp_hindsight_share_*``) and in dollars against the cheapest
    schedule in dollars (``dp_dollar_share_*``), the median of the sessions' and the sum's
    —, the sessions where dp's objective is above what was recorded, dp's compactions
    over hindsight's, and the sessions where dp beats both thresholds; the same of
    ``dp:known`` (dp told the end) under ``dp_known_*``."""
    rows = [r for res in results if "points" in res for r in res["points"]]
    long = [res for res in results if "points" in res and res["requests"] >= LONG]
    done = [res for res in results if "points" in res]
    out = {"sessions": len(done), **score(rows), **schedule_totals(done),
           "long_sessions": len(long)}
    for name in GOAL_KEYS:
        out.update(policy_goals(long, name))
    return out


def policy_goals(long: list[Doc], name: str) -> Doc:
    """The goals of one dp policy (``name``: ``dp``, or ``dp:known`` told the end) over the
    long sessions, its keys prefixed as GOAL_KEYS says: its share of hindsight's saving in
    the objective and in dollars, the sessions where its objective is above the recorded
    one's, its compactions over hindsight's, and the sessions where it beats both
    thresholds."""
    prefix = GOAL_KEYS[name]
    beat = prefix + "beats_thresholds"
    runs = [res["policies"] for res in long if name in res.get("policies", {})]

    def shares(key: str, best: str, saving: str) -> tuple[float | None, float | None]:
        each = [r[name].get(key) for r in runs]
        paired = [(r[name][saving], r[best][saving]) for r in runs
                  if best in r and saving in r[name] and saving in r[best]]
        whole = sum((b for _d, b in paired), 0.0)
        return (median([x for x in each if x is not None]),
                sum((d for d, _b in paired), 0.0) / whole if paired and whole > 1e-9
                else None)
    by_objective = shares("objective_share", "hindsight", "objective_saving")
    by_dollars = shares("dollar_share", "hindsight:free", "saving")
    worse = [r[name]["objective"] > r["recorded"]["objective"] for r in runs
             if "recorded" in r]
    hindsight = sum(r["hindsight"]["compactions"] for r in runs if "hindsight" in r)
    beats = [res[beat] for res in long if beat in res]
    figures = {"hindsight_share_median": by_objective[0],
               "hindsight_share_sum": by_objective[1],
               "dollar_share_median": by_dollars[0],
               "dollar_share_sum": by_dollars[1],
               "objective_worse_share": sum(worse) / len(worse) if worse else None,
               "compactions_over_hindsight": (
                   sum(r[name]["compactions"] for r in runs if "hindsight" in r) / hindsight
                   if hindsight else None),
               "beats_thresholds_share": (sum(1 for b in beats if b) / len(beats)
                                          if beats else None)}
    return {prefix + key: value for key, value in figures.items()}


def schedule_totals(results: list[Doc]) -> Doc:
    """How often dp compacted against the best schedule in hindsight (Σ compactions over
    the sessions), and the share of sessions where dp cost more than what was recorded
    (comparable dollars)."""
    both = [res["policies"] for res in results
            if "dp" in res.get("policies", {}) and "hindsight" in res["policies"]]
    dp = sum(p["dp"]["compactions"] for p in both)
    best = sum(p["hindsight"]["compactions"] for p in both)
    worse = [p for p in both if "recorded" in p and
             p["dp"]["comparable_cost"] > p["recorded"]["comparable_cost"]]
    return {"dp_compactions": dp, "hindsight_compactions": best,
            "dp_compactions_vs_hindsight": dp / best if best else None,
            "dp_worse_than_recorded_share": len(worse) / len(both) if both else None}
