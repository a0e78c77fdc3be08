"""The policies a replay compares (docs/replay.md).

* ``recorded`` — the recorded compactions at the recorded moments: what happened;
* ``dp`` — this tool's decision, asked where the agent could compact: at a turn end (or
  before any request, for bash-agent); at the agent's own automatic threshold it holds the
  compaction back while it does not pay, until the safety margin, as the PreCompact hook
  does; with its forced fallback;
* ``dp:known`` — the same decision told how many requests really came: no forecast, so
  what dp loses to the forecast is ``dp:known`` less ``dp``, and what is left is the
  model's;
* ``never`` — compact only when the next request would not fit the window;
* ``threshold:P`` — at P % of the window, what most agents do by themselves;
* ``hindsight`` and ``hindsight:free`` — the cheapest schedule of compactions over the
  recorded session, found afterwards (``hindsight``), charging each compaction the
  information penalty ④ or not (``:free``); see there.

A policy answers at two moments: ``at_turn_end`` (a human message is about to arrive; only
where the agent compacts at turn ends) and ``before_request``.
"""

from __future__ import annotations

from ..agents import MANUAL, RECORDED, REQUEST, TURN
from ..asking import PolicyAsk, answer
from ..core.awkvalue import AwkValue
from ..core.decision import turn_keep
from ..errors import UsageError
from ..question import context_growth
from ..sessions.session import USER, Compaction, Request
from .billing import warm

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    from ..asking import Answer
    from ..core.scan import Conversation
    from ..question import Asker
    from .billing import Cache
    from .records import Billed
    from .setting import Setting

    class Context(Protocol):
        def token_list(self) -> list[int]: ...

        def kind_list(self) -> list[str]: ...

    class State(Protocol):
        """What a policy sees of the replay (simulate.Replay)."""

        setting: Setting
        turns: int
        requests: int
        billed_input: float
        last_prompt: float
        ttl: str
        caches: dict[str | None, Cache]
        index: int
        spent: float
        diverged: bool
        last_llm: str | None

        @property
        def context(self) -> Context: ...

        @property
        def compactions(self) -> int: ...

        @property
        def context_requests(self) -> int: ...

        @property
        def unsized(self) -> int: ...

        def conversation(self) -> Conversation: ...

        def prefix_now(self, request: Request) -> float: ...

        def prompt_now(self, request: Request) -> float: ...

        def summary_bill(self, request: Request, keep: int = 0) -> Billed: ...


class Compact:
    """A policy's answer: compact now, keeping the last ``keep`` messages (0: none);
    ``at``: the moment of the summary request (None: when the next request is sent)."""

    __slots__ = ("keep", "forced", "at")

    def __init__(self, keep: int, forced: bool = False, at: float | None = None):
        self.keep, self.forced, self.at = keep, forced, at


class Policy:
    name = "policy"
    recorded = False
    finished = False          # nothing later can change what this run is for: stop it
    copies = False            # takes copies of the replay (Replay.copy_at): keep its position

    def at_turn_end(self, replay: State, request: Request) -> Compact | None:
        return None

    def before_request(self, replay: State, request: Request) -> Compact | None:
        return None

    def at_recorded(self, replay: State, request: Request, boundary: Compaction,
                    trigger: str) -> Compact | None:
        """Where the recording compacted (``boundary``, before ``request``), set off by
        ``trigger`` (agents.AUTO: the agent by itself; MANUAL: a user at the prompt):
        compact there too?  Where the policy's context is still the recorded one, its yes
        is the recorded compaction, billed as recorded."""
        return None


class RecordedPolicy(Policy):
    """What happened: the recorded compactions at the recorded moments."""

    name = "recorded"
    recorded = True


def stats_values(s: Setting, model: str | None, turns: float, requests: float,
                 compactions: float, billed: float, V: float | None = None
                 ) -> dict[str, AwkValue]:
    """The decision's parameters at a moment of the replay (``Asker.values_at``): the
    prices of the model the next request uses; ``V``: the fixed prefix, where not the
    first context's."""
    return s.asker.values_at(s.prices(model), turns=turns, requests=requests,
                             compactions=compactions, billed=billed,
                             V=s.V0 if V is None else V, S=s.S, window=s.window)


def ask_decision(replay: State, request: Request, policy: PolicyAsk | None = None,
                 turn_end: bool = False, asker: Asker | None = None) -> Answer:
    """The decision the agent would have seen now, with its running stats; at a turn end
    the turn arriving counts in the end chance.  ``asker``: another than the setting's
    (``dp:known``'s)."""
    s = replay.setting
    # the model of the last request, as the decision on the transcript knows it (the next
    # request's is not known yet: a user may switch)
    llm = replay.last_llm or request.llm
    prices = s.prices(llm)
    # on the recorded context past a recorded compaction, V is that context's, as the
    # decision on the transcript cut here finds it
    V = s.recorded_prefix(request) if request.segment and not replay.diverged else None
    v = stats_values(s, llm, replay.turns, replay.requests, replay.compactions,
                     replay.billed_input, V)
    cold, p_write = False, None
    if s.model.cache_aware:
        p_write = prices.write(replay.ttl)
        cache = replay.caches.get(s.cache_key(llm))
        cold = cache is not None and not warm(cache, request.sent)
    conv = replay.conversation()
    if s.whole:
        # after the policy's own compaction, the summary and what the agent re-injected
        # are history a next compaction replaces: they count in T, V is the fixed prefix
        # (on the recorded context they are its messages, and V is that context's own)
        extra = 0 if V is not None else max(0, round(replay.prefix_now(request) - s.V0))
        # the messages no request has seen yet, at what the decision could know of them
        conv = type(conv).summed(conv.nr + (1 if extra else 0),
                                 conv.total + extra - replay.unsized, conv.user_count())
    # the growth as the status line reads it, by its rule and with what was known then
    growth = context_growth(conv.total, replay.context_requests, replay.compactions > 0, v)
    ask = (asker or s.asker).ask(v, policy, p_write=p_write, cold=cold,
                                 requests=replay.requests, turns=replay.turns + turn_end,
                                 growth=growth)
    return answer(ask, conv)


class DpPolicy(Policy):
    """This tool's decision, with the forced fallback, as the agent would have seen it."""

    name = "dp"

    def asker(self, setting: Setting) -> Asker | None:
        """What the decision is asked with (None: the setting's own)."""
        return None

    def _decide(self, replay: State, request: Request, turn_end: bool = False
                ) -> Compact | None:
        result = ask_decision(replay, request, PolicyAsk("auto", replay.last_prompt),
                              turn_end, self.asker(replay.setting)).policy
        assert result is not None
        if result.action != "compact":
            return None
        return Compact(0 if replay.setting.whole else result.keep, result.forced)

    def at_turn_end(self, replay: State, request: Request) -> Compact | None:
        return self._decide(replay, request, turn_end=True)

    def at_recorded(self, replay: State, request: Request, boundary: Compaction,
                    trigger: str) -> Compact | None:
        """A user at the prompt typed ``/compact``: asked as the status line shows it
        there.  The agent compacting by itself, on the recorded context and where it
        would in this setting (``Setting.agent_compacts``): let it, unless the decision
        holds it back (as the PreCompact hook would) short of the hold limit; on a
        context of dp's own, its own point decides (``before_request``)."""
        if trigger == MANUAL:
            return self._decide(replay, request)
        s = replay.setting
        prompt = replay.prompt_now(request)
        if replay.diverged or not s.agent_compacts(boundary, prompt):
            return None
        if self._decide(replay, request) is not None:
            return Compact(0)
        return Compact(0, True) if s.recorded_size(boundary, prompt) >= s.hold_limit else None

    def before_request(self, replay: State, request: Request) -> Compact | None:
        s = replay.setting
        if s.points == REQUEST:
            return self._decide(replay, request)
        prompt = replay.prompt_now(request)
        if s.auto is None or prompt < s.auto:
            return None
        held = self._decide(replay, request)
        if held is None and prompt >= s.hold_limit:
            return Compact(0 if s.whole else turn_keep(
                s.values["min_keep_ratio"].num, replay.conversation()).keep, True)
        return held


class KnownEndPolicy(DpPolicy):
    """dp told how many requests the session really makes: R is what really remains at
    each moment and its schedule knows the end (question.Asker.told_the_end).  Nothing a
    live decision can know; it measures how much of dp's shortfall is the forecast's."""

    name = "dp:known"

    def asker(self, setting: Setting) -> Asker:
        return setting.asker.told_the_end(len(setting.session.requests))


class NeverPolicy(Policy):
    """Compact only when the request would not fit the window."""

    name = "never"

    def before_request(self, replay: State, request: Request) -> Compact | None:
        s = replay.setting
        if replay.prompt_now(request) <= s.window_of(request):
            return None
        if s.whole:
            return Compact(0, True)
        return Compact(turn_keep(s.values["min_keep_ratio"].num, replay.conversation()).keep,
                       True)


class ThresholdPolicy(Policy):
    """What most agents do: at P % of the window keep the last N tokens (cut back to a
    user message), or nothing for agents that summarise everything.

    Where compacting waits for a turn end (Claude Code, Codex), so does the threshold: a
    user who compacts at P % types ``/compact`` at the first turn end past it, and in the
    middle of a turn only the agent's own auto-compaction fires. A threshold that cuts
    into the tool loop would be a policy no such agent can carry out."""

    def __init__(self, percent: float):
        self.name = f"threshold:{percent:g}"
        self.percent = percent

    def at_turn_end(self, replay: State, request: Request) -> Compact | None:
        if replay.prompt_now(request) < replay.setting.window * self.percent / 100:
            return None
        return self._compact(replay)

    def at_recorded(self, replay: State, request: Request, boundary: Compaction,
                    trigger: str) -> Compact | None:
        """A user at the prompt typed ``/compact``: past P %, so does this one.  The
        agent compacting by itself on the recorded context, where it would in this
        setting: nothing holds it back."""
        if trigger == MANUAL:
            return self.at_turn_end(replay, request)
        if replay.diverged or not replay.setting.agent_compacts(
                boundary, replay.prompt_now(request)):
            return None
        return Compact(0, True)

    def before_request(self, replay: State, request: Request) -> Compact | None:
        s = replay.setting
        prompt = replay.prompt_now(request)
        if s.points == REQUEST:
            return self._compact(replay) if prompt >= s.window * self.percent / 100 else None
        limit = s.window if s.auto is None else min(s.auto, s.window)
        if prompt < limit:
            return None
        forced = self._compact(replay)
        forced.forced = True
        return forced

    def _compact(self, replay: State) -> Compact:
        s = replay.setting
        if s.whole:
            return Compact(0)
        tokens, kinds = replay.context.token_list(), replay.context.kind_list()
        kept, k = 0, 0
        for t in reversed(tokens):
            if kept >= s.keep_tokens:
                break
            kept += t
            k += 1
        while 0 < k < len(tokens) and kinds[-k] != USER:
            k += 1                    # grow back until the window starts on a user line
        return Compact(k)


class SchedulePolicy(Policy):
    """Compact exactly at the given points: (request index, "turn", "recorded" — where
    the recording compacted, as it did — or "request"); with ``auto``, also wherever the
    agent compacts by itself (its threshold); ``at``: the moment of a turn end's
    compaction, where it is not when the next request is sent (the end of the turn before,
    ahead of a pause)."""

    def __init__(self, points: set[tuple[int, str]], name: str = "schedule",
                 auto: bool = False, at: dict[int, float] | None = None):
        self.points, self.name, self.auto = points, name, auto
        self.at = at or {}

    def at_turn_end(self, replay: State, request: Request) -> Compact | None:
        if (replay.index, TURN) not in self.points:
            return None
        return Compact(0, at=self.at.get(replay.index))

    def at_recorded(self, replay: State, request: Request, boundary: Compaction,
                    trigger: str) -> Compact | None:
        return Compact(0) if (replay.index, RECORDED) in self.points else None

    def before_request(self, replay: State, request: Request) -> Compact | None:
        if (replay.index, REQUEST) in self.points:
            return Compact(0)
        s = replay.setting
        if self.auto and s.auto is not None and replay.prompt_now(request) >= s.auto:
            return Compact(0, True)
        return None


def make_policy(spec: str) -> Policy:
    """``recorded``, ``dp``, ``dp:known``, ``never`` or ``threshold:P``."""
    if spec == "recorded":
        return RecordedPolicy()
    if spec == "dp":
        return DpPolicy()
    if spec == KnownEndPolicy.name:
        return KnownEndPolicy()
    if spec == "never":
        return NeverPolicy()
    if spec.startswith("threshold:"):
        try:
            percent = float(spec.split(":", 1)[1])
        except ValueError:
            percent = -1.0
        if not 0 < percent <= 100:
            raise UsageError(f"policy {spec!r}: P must be a percentage in (0, 100]")
        return ThresholdPolicy(percent)
    raise UsageError(f"unknown policy {spec!r} (recorded, dp, dp:known, never or "
                     "threshold:P)")
