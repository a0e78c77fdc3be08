"""Fitting a profile on recorded sessions: what compactions left, and the forecast of the
requests to come (docs/calibrate.md says why each step is as it is).

Deterministic: sessions are taken in path order, every sum is a plain float sum, and the
one iterative step (a three-parameter logistic regression) runs a fixed Newton scheme.
"""

from __future__ import annotations

import math

from ..agents import MANUAL
from ..core.middle import median
from ..sessions.session import Session
from ..views.words import count
from .profile import FALLBACK, AgentFigures, Profile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal, TypedDict

    class Shape(TypedDict):
        """The forecast's figures: the level per format (C), the exponent (a), the end
        chance's coefficients (b0, bt, bj) and its log error at turn ends (e)."""

        C: dict[str, float]
        a: float
        b0: float
        bt: float
        bj: float
        e: float | None

PRIOR_SESSIONS = 20.0      # how many sessions of evidence the prior is worth
LEVEL_PRIOR_SESSIONS = 3.0  # ... for the levels: measured (docs/calibrate.md, step 8)
MOST_WEIGHT = 1e12         # the project weight when projects show no difference at all
MIN_SLOPE_SESSIONS = 100   # below this a history re-fits the levels only
EVERY = 10                 # the second set of points: every 10th request
MAX_GAP = 600.0            # a compaction's gap longer than this waited on someone


# --- what compactions left ----------------------------------------------------------------

def compaction_figures(session: Session) -> list[tuple[float, float, float]]:
    """(summary, left beyond the replaced context's V, still cached) of each recorded
    compaction the session shows whole."""
    out = []
    for k, a in enumerate(session.aftermath):
        before = session.segment_prefixes[k] if k < len(session.segment_prefixes) else None
        if a.summary is None or a.left is None or a.first_read is None or before is None:
            continue
        out.append((float(a.summary), a.left - before, float(a.first_read)))
    return out


def timed_compactions(session: Session) -> list[tuple[float, float]]:
    """(the context's tokens, the seconds it took) of each compaction the session timed:
    the duration it recorded (Claude Code's ``durationMs``), else, for one the agent
    started by itself (not ``manual``: a person may wait before typing /compact), the gap
    from the line before it to its own, when at most MAX_GAP.  The context: what the
    compaction recorded (``preTokens``), else the last prompt before it."""
    last: dict[int, float] = {}
    for r in session.requests:
        if r.usage is not None and not r.side:
            last[r.segment] = float(r.usage.prompt)
    out = []
    for k, m in enumerate(session.marks):
        seconds = m.seconds
        if seconds is None and m.trigger != MANUAL and m.gap is not None and \
                0 < m.gap <= MAX_GAP:
            seconds = m.gap
        tokens = float(m.pre_tokens) if m.pre_tokens else last.get(k)
        if seconds is not None and seconds > 0 and tokens is not None:
            out.append((tokens, float(seconds)))
    return out


def duration_fit(points: list[tuple[float, float]]) -> tuple[float, float] | None:
    """(seconds at no context, seconds per million tokens): the least-squares line through
    (tokens, seconds), its slope at least 0 (a larger context never compacts faster)."""
    if not points:
        return None
    n = float(len(points))
    mx = sum(x for x, _ in points) / n / 1e6
    my = sum(y for _, y in points) / n
    sxx = sum((x / 1e6 - mx) ** 2 for x, _ in points)
    sxy = sum((x / 1e6 - mx) * (y - my) for x, y in points)
    slope = max(0.0, sxy / sxx) if sxx > 1e-12 else 0.0
    return max(0.0, my - slope * mx), slope


def fresh_prefix(session: Session) -> float | None:
    """The fixed prefix of a session that starts afresh: its first prompt less its
    messages, when that first request did not read nearly all of it from a cache (which
    a session continued from another would)."""
    first = session.requests[0] if session.requests else None
    V = session.segment_prefixes[0] if session.segment_prefixes else None
    if first is None or first.usage is None or V is None:
        return None
    return V if first.usage.read < 0.9 * first.usage.prompt else None


# --- the forecast's points ------------------------------------------------------------------

def points(session: Session) -> list[tuple[int, int, int, bool, bool]]:
    """(j, t, remaining, turn end, last turn) at every turn end and every EVERY-th request:
    j requests made so far, t human turns including the one that is arriving, the
    requests from j to the end of the file."""
    n = len(session.requests)
    ends = session.turn_requests()
    starts = set(ends)
    out = []
    turns = 0
    for j, _, start, end in session.arrivals():
        turns += sum(1 for k in session.kinds[start:end] if k == "user")
        if j in starts or (j and j % EVERY == 0):
            out.append((j, max(turns, 1), n - j, j in starts, bool(ends) and j >= ends[-1]))
    return out


# --- the fit -----------------------------------------------------------------------------

def project_sums(pts: list[tuple[int, int, int, bool, bool]], exponent: float
                 ) -> tuple[float, float]:
    """(Σ remaining, Σ (j + 1)^a) over a session's points, every turn end and every
    EVERY-th request once each (a point that is both counts in both sets, as in the fit):
    what a project's forecast learns from a session (calibration.project)."""
    remaining = exposure = 0.0
    for j, _t, rem, turn_end, _last in pts:
        times = turn_end + (j > 0 and j % EVERY == 0)
        grown: float = (j + 1.0) ** exponent
        remaining += times * rem
        exposure += times * grown
    return remaining, exposure


def project_weight(rows: list[tuple[object, float, float]]) -> float:
    """How much evidence the profile's level is worth against a project's own sessions,
    in their Σ (j + 1)^a: the Bühlmann–Straub credibility constant σ² / τ² of the
    sessions' levels (Σ remaining ÷ Σ (j + 1)^a, weighed by Σ (j + 1)^a), σ² their
    spread within a project, τ² the spread of the projects' own levels beyond what σ²
    explains.  ``rows``: (project, Σ remaining, Σ (j + 1)^a) per session."""
    groups: dict[object, list[tuple[float, float]]] = {}
    for key, rem, exp in rows:
        if exp > 0:
            groups.setdefault(key, []).append((rem, exp))
    projects = list(groups.values())
    free = sum(len(g) - 1 for g in projects)
    if len(projects) < 2 or free < 1:
        return MOST_WEIGHT
    weights = [sum(e for _r, e in g) for g in projects]
    means = [sum(r for r, _e in g) / w for g, w in zip(projects, weights)]
    total = sum(weights)
    mean = sum(w * x for w, x in zip(weights, means)) / total
    within = sum(e * (r / e - x) ** 2 for g, x in zip(projects, means) for r, e in g) / free
    between = (sum(w * (x - mean) ** 2 for w, x in zip(weights, means))
               - (len(projects) - 1) * within) / (total - sum(w * w for w in weights) / total)
    if not between > 0:
        return MOST_WEIGHT
    return min(within / between, MOST_WEIGHT)


def fit(sessions: list[Session], prior: Profile | None = None, source: str = "",
        prior_sessions: float = PRIOR_SESSIONS,
        level_sessions: float = LEVEL_PRIOR_SESSIONS) -> Profile:
    """The profile of a history of sessions (``prior``: pulled towards it, the way a
    user's few sessions should be; None: the plain fit the built-in profile is), each
    counted once: the caller has left out the files inside others (the start of a
    resumed session, whose last request is no end: history.each_request_once)."""
    kept = sorted(sessions, key=lambda s: s.path or "")
    figures: dict[str, list[tuple[float, float, float]]] = {}
    timed: dict[str, list[tuple[float, float]]] = {}
    prefixes: dict[str, list[float]] = {}
    history: list[tuple[str, list[tuple[int, int, int, bool, bool]]]] = []
    for s in kept:
        figures.setdefault(s.format, []).extend(compaction_figures(s))
        timed.setdefault(s.format, []).extend(timed_compactions(s))
        history.append((s.format, points(s)))
        fresh = fresh_prefix(s)
        if fresh is not None:
            prefixes.setdefault(s.format, []).append(fresh)
    shape = fit_forecast(history, prior, prior_sessions, level_sessions)
    agents: dict[str, AgentFigures] = {}
    for fmt in sorted({f for f, _ in history} | ({*prior.agents} if prior else set())):
        if fmt == FALLBACK:
            continue
        measured = figures.get(fmt, [])
        old = prior.agent(fmt) if prior else AgentFigures()
        n = len(measured)

        def pooled(i: int, before: float | None) -> float | None:     # (called in this loop)
            mine = median([m[i] for m in measured])                    # noqa: B023
            if mine is None or before is None or prior is None:
                return mine if mine is not None else before
            return (n * mine + prior_sessions * before) / (n + prior_sessions)  # noqa: B023
        mine = median(prefixes.get(fmt, []))
        prefix = mine if prior is None or old.prefix is None or mine is None else \
            (len(prefixes[fmt]) * mine + prior_sessions * old.prefix) / \
            (len(prefixes[fmt]) + prior_sessions)
        base, slope, clocked = _durations(timed.get(fmt, []), old, prior is not None,
                                          prior_sessions)
        agents[fmt] = AgentFigures(pooled(0, old.summary_tokens), pooled(1, old.after_extra),
                                   pooled(2, old.after_cached), shape["C"].get(fmt, old.level),
                                   n + (old.compactions if prior else 0),
                                   sum(1 for f, _ in history if f == fmt),
                                   prefix if prefix is not None else old.prefix,
                                   base, slope, clocked)
    agents[FALLBACK] = AgentFigures(level=shape["C"].get(FALLBACK, 38.0),
                                    sessions=len(history))
    if prior is None:
        from .project import project_key
        weight: float | None = project_weight([
            (project_key(s.format, s.cwd, s.path or ""), *project_sums(pts, shape["a"]))
            for s, (_f, pts) in zip(kept, history)])
    else:
        weight = prior.project_weight      # a between-project figure: one history has one
    return Profile(agents, shape["a"], (shape["b0"], shape["bt"], shape["bj"]),
                   source or count(len(kept), "session"), path=None, project_weight=weight,
                   log_error=shape["e"])


def _durations(points: list[tuple[float, float]], old: AgentFigures, pulled: bool,
               prior_sessions: float) -> tuple[float | None, float | None, int]:
    """An agent's compaction time (seconds, seconds per million tokens, compactions
    timed), pulled towards the prior's with ``prior_sessions`` compactions of weight."""
    mine = duration_fit(points)
    n = len(points)
    if not pulled or old.compaction_seconds is None or not old.timed_compactions:
        if mine is None:
            return old.compaction_seconds, old.compaction_seconds_per_mtok, \
                old.timed_compactions
        return mine[0], mine[1], n
    before = (old.compaction_seconds, old.compaction_seconds_per_mtok or 0.0)
    if mine is None:
        return before[0], before[1], old.timed_compactions
    k = prior_sessions
    return ((n * mine[0] + k * before[0]) / (n + k), (n * mine[1] + k * before[1]) / (n + k),
            n + old.timed_compactions)


def _prior_shape(prior: Profile | None) -> Shape | None:
    if prior is None:
        return None
    return {"C": {k: a.level for k, a in prior.agents.items()}, "a": prior.exponent,
            "b0": prior.end[0], "bt": prior.end[1], "bj": prior.end[2],
            "e": prior.log_error}


def fit_forecast(history: list[tuple[str, list[tuple[int, int, int, bool, bool]]]],
                 prior: Profile | None, prior_sessions: float = PRIOR_SESSIONS,
                 level_sessions: float = LEVEL_PRIOR_SESSIONS) -> Shape:
    """level per format C_f, exponent a, and the end-chance coefficients (b0, bt, bj).

    * weights: each point 1 / √(that session's points in its set), between counting
      points (a few long sessions rule) and counting sessions (short ones do);
    * a: the weighted least-squares slope of ln(remaining) on ln(j + 1) within formats,
      clamped to [0, 1] (R never falls as requests accumulate, nor grows faster than j);
    * C_f: the weighted sum of what remained over the weighted sum of (j + 1)^a, so the
      predictions add up to what happened;
    * the end chance: a logistic regression at turn ends, each counted once;
    * with a prior, each level is pulled towards it with ``level_sessions`` sessions of
      weight, the other values with ``prior_sessions``, and below MIN_SLOPE_SESSIONS only
      the levels are fitted (a is a between-session quantity: within one session what
      remains only falls)."""
    base = _prior_shape(prior)
    rows: list[tuple[float, str, int, int, int, bool, bool]] = []
    count: dict[str, int] = {}
    for fmt, pts in history:
        count[fmt] = count.get(fmt, 0) + 1
        turn = [p for p in pts if p[3]]
        tenth = [p for p in pts if p[0] > 0 and p[0] % EVERY == 0]
        for group, is_turn in ((turn, True), (tenth, False)):
            if group:
                w = 1.0 / math.sqrt(len(group))
                rows.extend((w, fmt, j, t, rem, is_turn, last)
                            for j, t, rem, _te, last in group)
    if not rows:
        if base is None:
            raise ValueError("no session with a turn end or ten requests to fit on")
        return base
    slopes = base is None or len(history) >= MIN_SLOPE_SESSIONS
    moments: dict[str, list[float]] = {}
    for w, fmt, j, _t, rem, _te, _l in rows:
        x, y = math.log1p(j), math.log(rem)
        m = moments.setdefault(fmt, [0.0] * 5)
        m[0] += w
        m[1] += w * x
        m[2] += w * y
        m[3] += w * x * x
        m[4] += w * x * y
    sxx = sum(m[3] - m[1] * m[1] / m[0] for m in moments.values())
    sxy = sum(m[4] - m[1] * m[2] / m[0] for m in moments.values())
    if not slopes:
        assert base is not None
        a = base["a"]
    else:
        a = sxy / sxx if sxx > 1e-12 else (0.0 if base is None else base["a"])
        a = min(max(a, 0.0), 1.0)
    num: dict[str, float] = {}
    den: dict[str, float] = {}
    for w, fmt, j, _t, rem, _te, _l in rows:
        g = w * math.exp(a * math.log1p(j))
        for key in (fmt, FALLBACK):
            num[key] = num.get(key, 0.0) + w * rem
            den[key] = den.get(key, 0.0) + g
    C = {key: num[key] / den[key] for key in num}
    lr = [((1.0, math.log(t), math.log1p(j)), 1.0 if last else 0.0)
          for _w, _f, j, t, _r, te, last in rows if te]
    ends = sum(y for _x, y in lr)
    if slopes and 0 < ends < len(lr):
        b = _logistic(lr)
    elif base is not None:
        b = [base["b0"], base["bt"], base["bj"]]
    else:
        b = [-1.443, -0.771, 0.293]          # nothing to fit on: a neutral-ish guess
    fitted: Shape = {"C": C, "a": a, "b0": b[0], "bt": b[1], "bj": b[2], "e": None}
    if base is None:
        fitted["e"] = log_error(rows, fitted)
        return fitted
    k, n = prior_sessions, len(history)
    out: Shape = {"C": dict(base["C"]), "a": base["a"], "b0": base["b0"],
                  "bt": base["bt"], "bj": base["bj"], "e": base["e"]}
    for key, level in C.items():
        nf = n if key == FALLBACK else count[key]
        if key in base["C"]:
            level = math.exp((nf * math.log(level) + level_sessions *
                              math.log(base["C"][key])) / (nf + level_sessions))
        out["C"][key] = level
    if slopes:
        figure: Literal["a", "b0", "bt", "bj"]
        for figure in ("a", "b0", "bt", "bj"):
            out[figure] = (n * fitted[figure] + k * base[figure]) / (n + k)
    mine = log_error(rows, out)
    if mine is not None:
        out["e"] = mine if base["e"] is None else (n * mine + k * base["e"]) / (n + k)
    return out


def log_error(rows: list[tuple[float, str, int, int, int, bool, bool]], shape: Shape
              ) -> float | None:
    """The forecast's mean |ln(forecast / what remained)| at the turn ends, each weighted
    as in the fit (None: no turn end): the error the decision's uncertainty hold uses."""
    num = den = 0.0
    C, a = shape["C"], shape["a"]
    for w, fmt, j, _t, rem, turn, _l in rows:
        if not turn:
            continue
        level = C.get(fmt, C.get(FALLBACK, 38.0))
        predicted = max(1.0, level * math.exp(a * math.log1p(j)))
        num += w * abs(math.log(predicted / rem))
        den += w
    return num / den if den else None


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-min(z, 700.0)))
    e = math.exp(max(z, -700.0))
    return e / (1.0 + e)


def _logistic(rows: list[tuple[tuple[float, float, float], float]], ridge: float = 1e-3,
              steps: int = 50) -> list[float]:
    """Logistic regression by Newton's method, a small ridge on the two slopes."""
    b = [0.0, 0.0, 0.0]
    total = float(len(rows))
    for _ in range(steps):
        g = [0.0, 0.0, 0.0]
        h = [[0.0] * 3 for _ in range(3)]
        for x, y in rows:
            p = _sigmoid(b[0] * x[0] + b[1] * x[1] + b[2] * x[2])
            r, v = p - y, p * (1.0 - p)
            for i in range(3):
                g[i] += r * x[i]
                for k in range(3):
                    h[i][k] += v * x[i] * x[k]
        for i in (1, 2):
            g[i] += 2 * ridge * total * b[i]
            h[i][i] += 2 * ridge * total
        step = _solve3(h, g)
        b = [b[i] - step[i] for i in range(3)]
        if max(abs(s) for s in step) < 1e-10:
            break
    return b


def _solve3(m: list[list[float]], v: list[float]) -> list[float]:
    """The 3 × 3 system m x = v (Gaussian elimination, partial pivoting)."""
    a = [row[:] + [v[i]] for i, row in enumerate(m)]
    for c in range(3):
        p = max(range(c, 3), key=lambda r: abs(a[r][c]))
        a[c], a[p] = a[p], a[c]
        if abs(a[c][c]) < 1e-300:
            return [0.0, 0.0, 0.0]
        for r in range(c + 1, 3):
            f = a[r][c] / a[c][c]
            for k in range(c, 4):
                a[r][k] -= f * a[c][k]
    x = [0.0, 0.0, 0.0]
    for c in (2, 1, 0):
        x[c] = (a[c][3] - sum(a[c][k] * x[k] for k in range(c + 1, 3))) / a[c][c]
    return x
