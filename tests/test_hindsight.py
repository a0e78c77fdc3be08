"""hindsight against brute force: on small sessions, the schedule ``hindsight`` finds costs
what the cheapest of every schedule the agent could have followed costs, each replayed by
the same engine; and every policy's ``hindsight_share`` in ``replay --json`` is its saving
over hindsight's.

What the rule promises (replaying/hindsight.py): the cost between two compactions depends
only on the two, so its dynamic programme finds the cheapest schedule *exactly*.  The
costs below are the same dollars added in another order, so they agree to the last
rounding of a float sum (1e-9 $), not merely to the cent.

A schedule the agent could have followed (docs/replay.md): compactions at turn ends, and
before a request only once the context has reached the agent's own automatic threshold;
and never a request sent, uncompacted, at or past the safety margin.  ``hindsight`` adds
each compaction's information penalty ④ as the decision counts it (``Penalties``);
``hindsight:free`` adds none.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compact_dp.agents import RECORDED, REQUEST, TURN
from compact_dp.core.models import get_model
from compact_dp.replaying.hindsight import Penalties, best_schedule
from compact_dp.replaying.policies import Compact, SchedulePolicy
from compact_dp.replaying.run import replay_session, setting_for
from compact_dp.replaying.simulate import Replay
from compact_dp.sessions.read import read_session

from .conftest import NO_SHARED, TRANSCRIPTS, corpus, run_main, write
from .session_fixtures import COLD, codex_turns, turns_session

CACHE_CLOCK = get_model("cache-clock")
ROUNDING = 1e-9                  # dollars: the same sums, added in another order
HAIKU = "claude-haiku-4-5-20251001"


def setting_of(path: Path, window: float):
    session = read_session([str(path)])
    return setting_for(session, {"max_context": str(window)}, CACHE_CLOCK, True, 0, None,
                       None, {})


# --- brute force ------------------------------------------------------------------------------

# where the recording compacted comes first (as its messages arrive), then a turn end
# (its human message), then before the request
ORDER = {RECORDED: -1, TURN: 0, REQUEST: 1}


class Permitted(SchedulePolicy):
    """A schedule replayed as given, noting the first place the agent could not have
    followed it (``broken``, as (request, 0 turn end / 1 before it)): a compaction before
    a request short of the automatic threshold (where the agent compacts at turn ends),
    one with nothing to compact, or a request sent uncompacted at the safety margin."""

    def __init__(self, points: set[tuple[int, str]]):
        super().__init__(points)
        self.broken: tuple[int, int] | None = None

    def _break(self, at: tuple[int, int]) -> None:
        if self.broken is None:
            self.broken = at

    def at_turn_end(self, replay, request):
        if (replay.index, TURN) not in self.points:
            return None
        if not replay.context.count:
            self._break((replay.index, 0))
        return Compact(0)

    def before_request(self, replay, request):
        s = replay.setting
        prompt = replay.prompt_now(request)
        if (replay.index, REQUEST) in self.points:
            short = s.points == TURN and (s.auto is None or prompt < s.auto)
            if short or not replay.context.count:
                self._break((replay.index, 1))
            return Compact(0)
        if prompt >= s.hold_limit:
            self._break((replay.index, 1))
        return None


def candidates(setting) -> list[tuple[int, str]]:
    """Every place a compaction might go, in the order of the session: where the
    recording compacted (hindsight may take the recorded compaction, billed as recorded),
    each turn end (where the agent compacts at them), and before each request."""
    session = setting.session
    ends = session.turn_requests() if setting.points == TURN else []
    requests = session.requests
    recorded = [next(j for j, r in enumerate(requests) if r.seen > c.at)
                for c in session.compactions if requests[-1].seen > c.at]
    points = [(j, RECORDED) for j in recorded] + [(j, TURN) for j in ends] + \
        [(j, REQUEST) for j in range(len(requests))]
    return sorted(points, key=lambda p: (p[0], ORDER[p[1]]))


def every_schedule(setting):
    """(schedule, its run) for every schedule the agent could have followed: every subset
    of the candidates, each replayed; a subset broken before the next candidate it could
    add is not extended (what comes later cannot mend what went before)."""
    points = candidates(setting)

    def visit(chosen: frozenset, k: int):
        policy = Permitted(set(chosen))
        run = Replay(setting, policy, setting.events).run()
        if policy.broken is None:
            assert len(run.compactions) == len(chosen)
            yield chosen, run
        for i in range(k, len(points)):
            here = (points[i][0], ORDER[points[i][1]])
            if policy.broken is not None and policy.broken < here:
                break
            yield from visit(chosen | {points[i]}, i + 1)
    yield from visit(frozenset(), 0)


def brute_force(setting) -> dict[bool, float]:
    """The least cost of every permitted schedule: comparable dollars plus each
    compaction's penalty (the n-th before request j: penalty(j, n)), or without (True)."""
    best = {True: float("inf"), False: float("inf")}
    count = 0
    penalty = Penalties(setting)
    for _, run in every_schedule(setting):
        count += 1
        dollars = run.comparable_cost
        loss = sum(penalty(c.before, n) for n, c in enumerate(run.compactions))
        best[True] = min(best[True], dollars)
        best[False] = min(best[False], dollars + loss)
    assert count > 1
    return best


def assert_hindsight_is_the_cheapest(setting) -> dict[bool, int]:
    """hindsight and hindsight:free against brute force; their replayed runs cost what
    the programme says, and their schedules are ones the agent could follow.  Returns
    each one's compactions."""
    best = brute_force(setting)
    compactions = {}
    for free in (True, False):
        points, dollars, loss = best_schedule(setting, free)
        assert dollars + loss == pytest.approx(best[free], abs=ROUNDING), free
        assert loss == 0 if free else loss >= 0
        (run,) = replay_session(setting, ["hindsight:free" if free else "hindsight"])
        assert run.comparable_cost == pytest.approx(dollars, abs=ROUNDING)
        policy = Permitted(points)
        assert Replay(setting, policy, setting.events).run().comparable_cost == \
            pytest.approx(dollars, abs=ROUNDING)
        assert policy.broken is None, points
        compactions[free] = len(run.compactions)
    return compactions


# --- hand-made sessions -------------------------------------------------------------------------

CLAUDE = {   # turns of prompt growths, the window, and what else happens
    "six turns": ([[9000, 8000], [13000, 9000], [10000], [12000, 6000], [9000, 14000],
                   [11000]], 80000, {"start": 27000}),
    "cold caches and a second model": (
        [[6000], [8000, 9000], [7000, 12000], [9000, 5000], [15000], [8000, 9000]], 72000,
        {"pauses": [0, COLD, 0, 0, COLD, 0], "models": [None, None, HAIKU, HAIKU, None, None]}),
    "a recorded compaction in the middle": (
        [[12000, 9000], [11000, 8000], [9000], [14000, 6000], [10000, 12000]], 75000,
        {"compacted": 2}),
    "a recorded compaction right before a turn's prompt": (   # the boundary is at a turn end
        [[12000, 9000], [11000, 8000], [9000], [14000, 6000], [10000, 12000]], 75000,
        {"compacted": 3, "summary": False}),
    "past the threshold from the start": ([[9000, 8000], [13000], [10000], [4000, 6000]],
                                          50000, {"start": 27000}),
}
CODEX = {
    "six turns": ([[8000, 6000], [15000], [9000, 12000], [14000], [8000, 9000], [12000]],
                  50000),
    "a long first turn": ([[9000, 11000, 13000, 7000], [12000, 14000], [9000, 10000]], 52000),
}


@pytest.mark.parametrize("name", list(CLAUDE))
def test_hindsight_is_the_cheapest_permitted_schedule_of_a_claude_code_session(name,
                                                                                tmp_path):
    turns, window, extra = CLAUDE[name]
    setting = setting_of(write(tmp_path, turns_session(turns, **extra).text()), window)
    assert setting.points == TURN and setting.auto == window - 33000
    assert_hindsight_is_the_cheapest(setting)


@pytest.mark.parametrize("name", list(CODEX))
def test_hindsight_is_the_cheapest_permitted_schedule_of_a_codex_rollout(name, tmp_path):
    turns, window = CODEX[name]
    setting = setting_of(write(tmp_path, codex_turns(turns).text()), window)
    assert setting.points == TURN and setting.auto == window * 0.9
    assert_hindsight_is_the_cheapest(setting)


@pytest.mark.parametrize("kind", ["claude-code", "codex"])
def test_hindsight_is_the_cheapest_schedule_where_any_request_may_compact(kind, tmp_path):
    """With ``--compact-at request`` every request is a point (there is no threshold to
    wait for): the best schedule compacts, and no schedule of any requests is cheaper."""
    built = turns_session([[9000, 8000], [13000, 9000], [10000], [12000, 6000]],
                          start=27000) if kind == "claude-code" else \
        codex_turns([[9000, 11000, 13000, 7000], [12000, 14000], [9000, 10000]])
    session = read_session([str(write(tmp_path, built.text()))])
    setting = setting_for(session, {"max_context": "80000"}, CACHE_CLOCK, True, 0, None,
                          None, {}, points=REQUEST)
    assert setting.points == REQUEST and setting.auto is None
    assert all(assert_hindsight_is_the_cheapest(setting).values())


@pytest.mark.parametrize("before", [0, 2])
def test_hindsight_charges_a_compaction_the_information_loss_the_decision_says_there(
        before, tmp_path):
    """At each turn end, the penalty ④ hindsight charges the n-th compaction is the one
    `compact-dp --json --compactions n` prints for the session as it stood when that
    turn's message arrived (the arriving turn counted): here with the seed rule
    (--fixed-turns), where the turns set L = requests / turns."""
    built = turns_session([[9000, 8000], [13000, 9000], [10000], [12000, 6000]],
                          start=27000)
    session = read_session([str(write(tmp_path, built.text()))])
    setting = setting_for(session, {"e_fixed": "3"}, CACHE_CLOCK, True, 0, None, None, {})
    assert setting.asker.forecast is None                           # the seed rule: E × L
    turns = [i for i, line in enumerate(built.lines) if json.loads(line)["type"] == "user"
             and isinstance(json.loads(line)["message"]["content"], str)]
    ends = session.turn_requests()
    assert len(ends) == len(turns) - 1 == 3
    for j, at in zip(ends, turns[1:]):
        cut = write(tmp_path, "\n".join(built.lines[:at + 1]) + "\n", f"cut-{j}.jsonl")
        said = json.loads(run_main("--json", "--fixed-turns", "3", "--compactions",
                                   str(before), str(cut)).out)
        assert said["session"]["requests"] == j
        assert Penalties(setting)(j, before) == pytest.approx(said["derived"]["info_loss"],
                                                            rel=1e-12)


def test_the_hand_made_sessions_make_hindsight_compact_more_than_once(tmp_path):
    """The cases above test something: in some, the best schedule compacts twice or more
    (where the cost of a leg starts to depend on the compaction before it)."""
    most = 0
    for name, (turns, window, extra) in CLAUDE.items():
        setting = setting_of(write(tmp_path, turns_session(turns, **extra).text(),
                                   f"{len(name)}.jsonl"), window)
        most = max(most, len(best_schedule(setting)[0]), len(best_schedule(setting,
                                                                           True)[0]))
    assert most >= 2


def test_hindsight_may_hold_back_the_agents_own_compaction(tmp_path):
    """Brute force over the schedules of an agent that compacts by itself at its threshold
    (SchedulePolicy with ``auto``: every subset of the turn ends) is never cheaper than
    hindsight, which may hold the automatic compaction back to the margin, as a PreCompact
    hook does: here, where the session ends soon after the threshold, holding it back all
    the way costs less than compacting."""
    setting = setting_of(write(tmp_path, turns_session([[5000, 5000], [6000, 4000]]).text()),
                         60000)
    ends = setting.session.turn_requests()
    points, dollars, loss = best_schedule(setting)
    forced = []
    for mask in range(1 << len(ends)):
        chosen = {(j, TURN) for i, j in enumerate(ends) if mask >> i & 1}
        run = Replay(setting, SchedulePolicy(chosen, auto=True), setting.events).run()
        forced.append(run.comparable_cost + sum(
            Penalties(setting)(c.before, n) for n, c in enumerate(run.compactions)))
        assert run.compactions, "the threshold is crossed: the agent compacts by itself"
    assert dollars + loss < min(forced) and points == set()


def test_without_the_margin_to_hold_back_to_a_codex_rollout_compacts_at_its_threshold(
        tmp_path):
    """Codex compacts at 90 % of the window, which is also the margin: nothing can be held
    back, so every permitted schedule compacts before the first request past it."""
    setting = setting_of(write(tmp_path, codex_turns([[8000, 6000], [6000, 7000]]).text()),
                         34000)
    prompts = [r.usage.prompt for r in setting.session.requests]
    assert setting.auto == setting.hold_limit and prompts[2] < setting.auto <= prompts[3]
    schedules = [points for points, _ in every_schedule(setting)]
    assert schedules and all((3, REQUEST) in points for points in schedules)


# --- real sessions, cut small ------------------------------------------------------------------

def first_requests(path: Path, n: int, tmp_path: Path) -> Path:
    """The lines of a real session up to its n-th request (Claude Code: the n-th
    (message.id, requestId) of the main chain; Codex: the n-th token count)."""
    keys: set = set()
    out = []
    for raw in path.read_bytes().splitlines():
        d = json.loads(raw) if raw.strip() else {}
        p = d.get("payload") or {}
        if d.get("type") == "assistant" and not d.get("isSidechain"):
            keys.add((d["message"].get("id"), d.get("requestId")))
        elif p.get("type") == "token_count" and p.get("info"):
            keys.add(json.dumps(p["info"].get("total_token_usage"), sort_keys=True))
        if len(keys) > n:
            break
        out.append(raw)
    cut = tmp_path / f"{path.stem[:12]}-{n}.jsonl"
    cut.write_bytes(b"\n".join(out) + b"\n")
    return cut


REAL_CLAUDE = [   # the file, its first n requests, a window that makes compacting matter
    ("4d5611e5-241a-462a-8d15-5122611a9569.jsonl", 28, 80000),
    ("ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl", 12, 48000),     # Opus, then Haiku
]
REAL_CODEX = ("EdouardZemb__test-framework/.codex/sessions/2026/02/04/"
              "rollout-2026-02-04T21-48-31-019c2a69-eed3-71a3-aec8-2057b31acb54.jsonl", 43,
              56000)                                              # six turn ends


@pytest.mark.parametrize("name, n, window", REAL_CLAUDE, ids=lambda x: str(x)[:8])
def test_hindsight_is_the_cheapest_on_real_claude_code_sessions_cut_small(name, n, window,
                                                                         tmp_path):
    path = TRANSCRIPTS / name
    if not path.exists():
        pytest.skip(NO_SHARED)
    setting = setting_of(first_requests(path, n, tmp_path), window)
    assert len(setting.session.requests) == n
    assert_hindsight_is_the_cheapest(setting)


def test_hindsight_is_the_cheapest_on_a_real_codex_rollout_cut_small(tmp_path):
    name, n, window = REAL_CODEX
    setting = setting_of(first_requests(corpus() / "codex" / name, n, tmp_path), window)
    assert len(setting.session.requests) == n and setting.session.turn_requests()
    assert assert_hindsight_is_the_cheapest(setting) == {True: 2, False: 2}


# --- hindsight's share ---------------------------------------------------------------------------

POLICIES = ["recorded", "dp", "hindsight", "hindsight:free", "never", "threshold:50",
            "threshold:80"]


def shares_of(path: Path, window: int) -> list[dict]:
    args = [a for p in POLICIES for a in ("--policy", p)]
    r = run_main("replay", "--json", "--max-context", str(window), *args, str(path))
    assert r.status == 0, r.err
    return json.loads(r.out)["sessions"][0]["policies"]


# two long stretches of work, each followed by many small turns: compacting pays
LONG = [[20000] * 5] + [[1000] * 3] * 10 + [[20000] * 3] + [[1000] * 3] * 6


@pytest.mark.parametrize("kind", ["claude-code", "codex"])
def test_every_policys_share_is_its_saving_over_hindsights(kind, tmp_path):
    """hindsight_share = (recorded − policy) / (recorded − hindsight), on comparable costs,
    for every policy: recorded's is 0 and hindsight's 1; the others' differ."""
    built = turns_session(LONG, start=27000) if kind == "claude-code" else codex_turns(LONG)
    policies = shares_of(write(tmp_path, built.text()), 200000)
    cost = {p["policy"]: p["comparable_cost"] for p in policies}
    best = cost["recorded"] - cost["hindsight"]
    assert best > 0.1
    for p in policies:
        assert p["hindsight_share"] == pytest.approx((cost["recorded"] - cost[p["policy"]])
                                                     / best), p["policy"]
    share = {p["policy"]: p["hindsight_share"] for p in policies}
    assert share["recorded"] == 0 and share["hindsight"] == 1
    assert len({round(x, 6) for x in share.values()}) >= 4


def test_every_share_is_null_when_hindsight_saves_nothing(tmp_path):
    """A session that never nears its window: the best schedule is what happened (no
    compaction), so no policy has a share."""
    policies = shares_of(write(tmp_path, turns_session([[2000], [3000], [1000]]).text()),
                         200000)
    cost = {p["policy"]: p["comparable_cost"] for p in policies}
    assert cost["hindsight"] == pytest.approx(cost["recorded"], abs=ROUNDING)
    assert [p["hindsight_share"] for p in policies] == [None] * len(POLICIES)
