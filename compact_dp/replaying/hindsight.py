"""The cheapest schedule of compactions in hindsight, under the replay's own billing.

Where the agent can compact — turn ends, and while its context is past its automatic
threshold, until the safety margin; before any request where the points are requests
(bash-agent, ``--compact-at request``) (docs/replay.md) — choose the set of compactions that
makes the whole session cheapest: every request's input, the summary requests, and, for
``hindsight`` (not ``hindsight:free``), each compaction's information penalty ④ as the
decision counts it.  A schedule that lets the context reach the margin is not one the agent
could follow.

What a compaction leaves does not depend on what came before it (the context starts again
from what it leaves, every cache holds the fixed prefix), so the cost between two
compactions depends only on the two: a dynamic programme over the compaction points finds
the best schedule exactly.  The cost from each point on is one replay that compacts there
and never again (a *sweep*): at every later point it notes what was spent so far, with the
summary request a compaction there would make (its prompt is the context since the point
before), and whether the agent could still be there.  The penalty depends on how many
compactions came before, so the programme counts them too.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right

from ..agents import RECORDED as AT_RECORDED
from ..agents import REQUEST, TURN
from ..core.models import derive
from ..core.scan import Conversation
from ..sessions.session import Compaction, Request
from .policies import Compact, Policy, SchedulePolicy, stats_values
from .setting import Setting
from .simulate import Position, Replay

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .policies import State

INFINITE = float("inf")
MAX_COMPACTIONS = 64          # a schedule with more is never cheapest in practice

# (request index, when): 0 where the recording compacted before it, 1 at the turn end
# before it, 2 right before it — in the order a replay meets them
Point = tuple[int, int]
RECORDED, TURN_END, BEFORE = 0, 1, 2
START: Point = (-1, -1)       # the session's start: no compaction
KINDS = {RECORDED: AT_RECORDED, TURN_END: TURN, BEFORE: REQUEST}


class Sweep(Policy):
    """Compact at ``start`` only; at every later point note what was spent so far with the
    summary request a compaction there would make, and whether the context had reached the
    margin before it."""

    name = "sweep"

    def __init__(self, start: Point, at: dict[Point, tuple[Replay, Position]]):
        self.start = start
        self.before = 0.0                 # spent when the start was reached
        self.marks: list[tuple[Point, float, bool]] = []
        self.blocked = False              # the context reached the margin after the start
        # the sweep from the session's start never compacts, so its state at a point is
        # every other sweep's until it compacts there: it keeps a copy of itself at each
        # point (in ``at``), and the others run on from their start's copy.  A recorded
        # point is reached on the recorded context only by taking every recorded
        # compaction before it: the sweep from the one before keeps that copy
        self.copies = start == START or start[1] == RECORDED
        self.at = at

    def _point(self, replay: State, request: Request, when: int) -> Compact | None:
        here = (replay.index, when)
        if when == RECORDED and isinstance(replay, Replay) and replay.diverged:
            # a recorded compaction is the recording's only on the recorded context: after
            # a compaction of the schedule's own, the programme does not offer it
            return None
        if self.copies and isinstance(replay, Replay) and here > self.start and (
                self.start == START or when == RECORDED):
            self.at[here] = replay.copy_at()
        if here < self.start:
            return None
        s = replay.setting
        prompt = replay.prompt_now(request)
        if here == self.start:
            # its summary request belongs to the leg before: there it is billed on the
            # context it really replaces (here, with no compaction before, it is not)
            self.before = replay.spent + summary_cost(replay, request)
            return Compact(0)
        if when == BEFORE and s.points != REQUEST and (s.auto is None or prompt < s.auto):
            return None                   # at turn ends: mid-turn only past the threshold
        self.marks.append((here, replay.spent + summary_cost(replay, request),
                           not self.blocked))
        return None

    def at_turn_end(self, replay: State, request: Request) -> Compact | None:
        return self._point(replay, request, TURN_END)

    def at_recorded(self, replay: State, request: Request, boundary: Compaction,
                    trigger: str) -> Compact | None:
        return self._point(replay, request, RECORDED)

    def before_request(self, replay: State, request: Request) -> Compact | None:
        action = self._point(replay, request, BEFORE)
        if action is None and (replay.index, BEFORE) > self.start and \
                replay.prompt_now(request) >= replay.setting.hold_limit:
            self.blocked = True                   # the agent would not have got here
            self.finished = self.start != START   # no later point is reachable (but
            #                                       the copies go on to the end)
        return action


def summary_cost(replay: State, request: Request) -> float:
    """What the summary request of a compaction now would cost."""
    billed = replay.summary_bill(request)
    return billed.input_cost + billed.output_cost


class Penalties:
    """④ of a compaction before request ``index`` with ``before`` compactions before it,
    as the decision counts it there (its forecast of the requests to come, the session's
    input per request so far): ``penalties(index, before)``.  The programme asks for the
    same pair from every state that reaches a point, so each is worked out once, from the
    turn ends and the running input counted once for the session (asked afresh, they made
    hindsight cost ten times all the other policies together)."""

    def __init__(self, setting: Setting):
        self.setting = setting
        session = setting.session
        self.turn_ends = session.turn_requests()          # in order
        self.billed = [0]                                  # input of requests[:k]
        for r in session.requests:
            self.billed.append(self.billed[-1] + (r.usage.prompt if r.usage is not None
                                                  else 0))
        self.known: dict[tuple[int, int], float] = {}

    def __call__(self, index: int, before: int) -> float:
        key = (index, before)
        if key not in self.known:
            self.known[key] = self._penalty(index, before)
        return self.known[key]

    def _penalty(self, index: int, before: int) -> float:
        setting = self.setting
        requests = setting.session.requests
        turns = bisect_right(self.turn_ends, index) + 1
        billed = float(self.billed[min(index, len(requests))])
        model = requests[index].llm if index < len(requests) else None
        values = stats_values(setting, model, turns, index, before, billed)
        forecast = setting.asker.forecast
        horizon = forecast(index) if forecast is not None else None
        return derive(values, Conversation.summed(1, 1, 0), setting.model, horizon).info_loss


def best_schedule(setting: Setting, free: bool = False
                  ) -> tuple[set[tuple[int, str]], float, float]:
    """The cheapest schedule's points (request index, "turn" or "request"), its billed
    cost and its penalties (0 when ``free``)."""
    sweeps: dict[Point, tuple[Sweep, float]] = {}
    penalty = Penalties(setting)
    copies: dict[Point, tuple[Replay, Position]] = {}

    def sweep(start: Point) -> tuple[Sweep, float]:
        if start not in sweeps:
            policy = Sweep(start, copies)
            if start == START:
                replay = Replay(setting, policy, setting.events)
                replay.run()
            else:
                replay, position = copies.pop(start)
                replay.policy = policy
                replay.run(position)
            end = INFINITE if policy.blocked else replay.spent - policy.before
            sweeps[start] = (policy, end)
        return sweeps[start]

    # value[point][n]: the least cost of everything before the compaction at ``point``,
    # the n-th, its penalty included (and the penalties in it); came[...] the state before
    value: dict[Point, dict[int, tuple[float, float]]] = {START: {0: (0.0, 0.0)}}
    came: dict[tuple[Point, int], tuple[Point, int]] = {}
    sweep(START)
    queue: list[Point] = [START]
    queued = {START}
    best_end = (INFINITE, 0.0, (START, 0))
    while queue:
        here = heapq.heappop(queue)
        legs, end = sweep(here)
        states = list(value.get(here, {}).items())
        for n, (cost, pens) in states:
            if cost + end < best_end[0]:
                best_end = (cost + end, pens, (here, n))
        for point, spent, ok in legs.marks:
            if not ok:
                break
            leg = spent - legs.before
            if point not in queued:
                queued.add(point)
                heapq.heappush(queue, point)
            for n, (cost, pens) in states:
                if n >= MAX_COMPACTIONS:
                    continue
                pen = 0.0 if free else penalty(point[0], n)
                total = cost + leg + pen
                there = value.setdefault(point, {})
                if n + 1 not in there or total < there[n + 1][0]:
                    there[n + 1] = (total, pens + pen)
                    came[(point, n + 1)] = (here, n)
    total, pens, state = best_end
    points: set[tuple[int, str]] = set()
    while state[0] != START:
        points.add((state[0][0], KINDS[state[0][1]]))
        state = came[state]
    return points, total - pens, pens


class HindsightPolicy(SchedulePolicy):
    """Replays the cheapest schedule found in hindsight (so its run is billed and shown
    like any other policy's)."""

    def __init__(self, setting: Setting, free: bool = False):
        points, self.cost, self.penalties = best_schedule(setting, free)
        super().__init__(points, "hindsight:free" if free else "hindsight")
