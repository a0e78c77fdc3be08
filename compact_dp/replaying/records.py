"""What a replay records: every billed request, every compaction, and a run's totals.

A ``Run`` is one policy over one session.  Its ``summary()`` is plain data (numbers and
lists of numbers): what workers send back and ``--json`` prints.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    # A replay's plain data — a session's result, a policy's summary, a row of sessions, a
    # total — as workers send it back and --json prints it (docs/replay.md and
    # docs/history.md name the keys): JSON objects this package builds and reads itself.
    Doc = dict[str, Any]


class Billed:
    """One billed request: its prompt split into reads, writes (at ``ttl``) and the
    uncached rest, with its input and output costs.  ``index``: the session's request it
    is (an unanswered prompt: the request it came before; a summary: the compaction's
    number)."""

    __slots__ = ("index", "time", "llm", "prompt", "read", "written", "uncached", "ttl",
                 "input_cost", "output", "output_cost", "billed")

    def __init__(self, index: int, time: float | None, llm: str | None, prompt: float,
                 read: float, written: float, ttl: str, input_cost: float, output: float,
                 output_cost: float, uncached: float = 0.0):
        self.index, self.time, self.llm, self.prompt = index, time, llm, prompt
        self.read, self.written, self.uncached, self.ttl = read, written, uncached, ttl
        self.input_cost, self.output, self.output_cost = input_cost, output, output_cost
        self.billed = True        # False: a request the recording does not bill


class Compacted:
    """A compaction before request ``before``: its summary request and what it dropped."""

    __slots__ = ("before", "time", "dropped_messages", "dropped_tokens", "kept_messages",
                 "forced", "request")

    def __init__(self, before: int, time: float | None, dropped_messages: int,
                 dropped_tokens: float, kept_messages: int, forced: bool, request: Billed):
        self.before, self.time = before, time
        self.dropped_messages, self.dropped_tokens = dropped_messages, dropped_tokens
        self.kept_messages, self.forced, self.request = kept_messages, forced, request


class Run:
    """One policy over one session."""

    def __init__(self, policy: str):
        self.policy = policy
        self.requests: list[Billed] = []
        self.compactions: list[Compacted] = []
        self.touches: list[Billed] = []     # prompts answered by nothing (no recorded bill)
        self.penalty = 0.0                  # ④ of its compactions (run.charge_penalties)
        self.schedule_of: str | None = None   # hindsight: the policy whose schedule won

    def followed_by(self, policy: str) -> Run:
        """This run's schedule and bill, as ``policy``'s (hindsight taking a schedule that
        scored better): a new run sharing the billed requests, which no one changes once
        billed.  (Not ``copy.copy``: the compiled build's classes do not pickle.)"""
        twin = Run(policy)
        twin.requests, twin.compactions, twin.touches = (self.requests, self.compactions,
                                                         self.touches)
        twin.penalty, twin.schedule_of = self.penalty, self.policy
        return twin

    def leave_out(self, requests: set[int]) -> None:
        """Drop the requests of these indices, which another file of the run counts (a
        session resumed twice: each new file repeats the old requests, history.py), and
        the compactions and unanswered prompts before them: the rest is what this file
        adds, replayed in the context the whole file grew."""
        if not requests:
            return
        kept = [r for r in self.requests if r.index not in requests]
        before = [0] * (len(self.requests) + 1)    # kept requests before each position
        for i, r in enumerate(self.requests):
            before[i + 1] = before[i] + (r.index not in requests)
        # new Compacted: a run hindsight followed (followed_by) shares them
        self.compactions = [Compacted(before[min(c.before, len(self.requests))], c.time,
                                      c.dropped_messages, c.dropped_tokens,
                                      c.kept_messages, c.forced, c.request)
                            for c in self.compactions
                            if c.before >= len(self.requests) or
                            self.requests[c.before].index not in requests]
        self.touches = [t for t in self.touches if t.index not in requests]
        self.requests = kept

    def _all(self) -> list[Billed]:
        return self.requests + [c.request for c in self.compactions] + self.touches

    @property
    def input_cost(self) -> float:
        """Every request's input side, the summary requests' included."""
        return sum((r.input_cost for r in self._all()), 0.0)

    @property
    def output_cost(self) -> float:
        return sum((r.output_cost for r in self._all()), 0.0)

    @property
    def summary_cost(self) -> float:
        return sum((c.request.input_cost + c.request.output_cost for c in self.compactions), 0.0)

    @property
    def unrecorded_cost(self) -> float:
        """Input of what the recording does not bill: summary requests with no file of
        them beside the session, unanswered prompts.  Left out when comparing with the
        recorded bill."""
        return sum((c.request.input_cost for c in self.compactions if not c.request.billed),
                   0.0) + sum((t.input_cost for t in self.touches), 0.0)

    @property
    def summary_output_cost(self) -> float:
        """The summaries written (S tokens each at the output price: a recorded summary's
        own output count is a mid-stream snapshot, so S stands in for it too)."""
        return sum((c.request.output_cost for c in self.compactions), 0.0)

    @property
    def comparable_cost(self) -> float:
        """What differs between policies: every request's input and the summaries' output
        (the replies are the same under every policy)."""
        return self.input_cost + self.summary_output_cost

    @property
    def objective(self) -> float:
        """What hindsight minimises: the comparable cost and the information penalty ④
        of each compaction, as the decision weighs it."""
        return self.comparable_cost + self.penalty

    @property
    def peak_context(self) -> float:
        return max((r.prompt for r in self.requests), default=0.0)

    @property
    def mean_context(self) -> float:
        return sum((r.prompt for r in self.requests), 0.0) / len(self.requests) \
            if self.requests else 0.0

    @property
    def cache_hit_share(self) -> float:
        total = sum((r.prompt for r in self._all()), 0.0)
        return sum((r.read for r in self._all()), 0.0) / total if total else 0.0

    def summary(self, detail: bool = False) -> Doc:
        """The run's totals (plain data); ``detail``: also every request's prompt
        (``context``) and every compaction (``compaction_points``)."""
        written = {"5m": 0.0, "1h": 0.0, "other": 0.0}
        for r in self._all():
            written[r.ttl if r.ttl in written else "other"] += r.written
        return {"policy": self.policy, "requests": len(self.requests),
                "compactions": len(self.compactions),
                "forced": sum(c.forced for c in self.compactions),
                "input_cost": self.input_cost, "output_cost": self.output_cost,
                "summary_cost": self.summary_cost,
                "summary_output_cost": self.summary_output_cost,
                "unrecorded_cost": self.unrecorded_cost,
                "comparable_cost": self.comparable_cost,
                "penalty": self.penalty, "objective": self.objective,
                **({"schedule_of": self.schedule_of} if self.schedule_of else {}),
                "total_cost": self.input_cost + self.output_cost,
                "cache_read_tokens": sum((r.read for r in self._all()), 0.0),
                "cache_write_tokens": sum((r.written for r in self._all()), 0.0),
                "peak_context": self.peak_context, "mean_context": self.mean_context,
                "cache_hit_share": self.cache_hit_share, **(self.detail() if detail else {})}

    def detail(self) -> Doc:
        return {"context": [r.prompt for r in self.requests],
                "compaction_points": [
                    {"request": c.before + 1, "time": c.time,
                     "dropped_messages": c.dropped_messages,
                     "dropped_tokens": c.dropped_tokens, "kept_messages": c.kept_messages,
                     "forced": c.forced, "input_cost": c.request.input_cost,
                     "output_cost": c.request.output_cost} for c in self.compactions]}
