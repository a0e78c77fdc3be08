"""What every policy of one replayed session shares: the session, the parameters, the
prices, where the agent can compact, what a compaction leaves, and the recorded cache
events taken as given (docs/replay.md).
"""

from __future__ import annotations

from ..agents import AUTO, MANUAL, REQUEST, TURN, Agent
from ..core.awkvalue import AwkValue
from ..core.models import Model
from ..pricing.table import Prices, defaults, find
from ..question import Asker
from ..sessions.session import USER, Compaction, Request, Session
from ..world import World

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .bill import SessionFiles



# a recorded compaction as replay takes it: its place among the session's compactions,
# what set it off (agents.AUTO or MANUAL) and its own count of the context (None: none)
Recorded = tuple[int, str, "float | None"]


class Restart:
    """What a compaction leaves: the tokens of the new context before any kept message
    (the fixed prefix, the summary and what the agent re-injects) and how many of them are
    still in the cache (the fixed prefix the summary request shared)."""

    __slots__ = ("left", "cached", "source")

    def __init__(self, left: float, cached: float, source: str):
        self.left, self.cached, self.source = left, min(cached, left), source


class Events:
    """Recorded cache events at each request: a break caps reads, an outside cache gives
    a minimum of reads, an extension adds reads to a warm cache's, a late hit finds an
    expired cache still answering.  A break is kept twice: what the recording read, for
    a context that is still the recorded one, and the share of a warm cache's reads it
    kept, for one that is not (see Replay._bill)."""

    def __init__(self) -> None:
        self.ceiling: dict[int, float] = {}
        self.kept: dict[int, float] = {}
        self.floor: dict[int, float] = {}
        self.extend: dict[int, float] = {}
        self.late: dict[int, float] = {}


class Setting:
    """The session and the parameters every policy is replayed with."""

    def __init__(self, session: Session, values: dict[str, AwkValue], model: Model,
                 agent: Agent, *, whole: bool, keep_tokens: int, cache_ttl: str | None,
                 price: str | None, summary_tokens: float, world: World | None = None,
                 aftermath: Restart | None = None, points: str | None = None,
                 compaction_usage: list[Request] | None = None,
                 asker: Asker | None = None):
        self.session, self.values, self.model, self.agent = session, values, model, agent
        self.whole, self.keep_tokens, self.cache_ttl = whole, keep_tokens, cache_ttl
        if world is None:
            world = World(agent)
            world.context_window = values["max_context"].num
        self.world = world
        self.price, self.S, self.window = price, summary_tokens, world.context_window
        self.points = points or agent.points
        self.auto = None if self.points == REQUEST else world.auto_compact_tokens
        self.hold_limit = world.hold_limit
        # the TTL before a request shows one: --cache-ttl, else the session's (world.py)
        self.first_ttl: str | None = cache_ttl or world.ttl
        self.compaction_usage = compaction_usage or []
        self._prices: dict[str | None, Prices] = {}
        self._lookups: tuple[dict[int, Compaction], set[int], dict[int, list[float]]] | None \
            = None
        self._compactions: dict[int, Recorded] | None = None
        first = next((p for p in session.segment_prefixes if p is not None), None)
        self.V0: float = values["V"].num if first is None else first
        self.hidden = 0.0       # history before the first message (a part-way start)
        self.after = aftermath or Restart(self.V0 + self.S, self.V0,
                                            "the fixed prefix and the summary")
        self.events = Events()                  # filled by simulate.recorded_events
        self.groups: dict[str, str | None] = {}  # models sharing a cache (shared_caches)
        self.files: SessionFiles | None = None  # the session's other files (bill.py)
        # what the decision is asked with at each moment (question.Asker): dp asks it,
        # and the penalty ④ takes its forecast; the rest of the setting is billing's
        self.asker: Asker = asker if asker is not None else Asker(
            model, values, whole, None, None, None)

    def lookups(self) -> tuple[dict[int, Compaction], set[int], dict[int, list[float]]]:
        """What every run looks up as it goes, worked out once for the session (hindsight
        runs hundreds): the recorded boundaries by message, the requests a turn end comes
        before (where the points are turn ends), and the unanswered prompts' times by the
        request they came before."""
        if self._lookups is None:
            session = self.session
            touches: dict[int, list[float]] = {}
            for j, when in session.touches:
                touches.setdefault(j, []).append(when)
            self._lookups = ({c.at: c for c in session.compactions},
                           set(session.turn_requests()) if self.points == TURN else set(),
                           touches)
        return self._lookups

    def _recorded(self, boundary: Compaction) -> Recorded:
        """What a recorded compaction showed of itself, worked out once for the session
        from the recording (the same for every policy): which it is, what set it off and
        the context it went off at, as it measured it (Claude Code's ``preTokens``).
        Without a recorded trigger (Codex), a human message after it and before the next
        request makes it a user's ``/compact``; else it is the agent's own (in the middle
        of a turn, or as a prompt was submitted)."""
        if self._compactions is None:
            session = self.session
            marks = session.marks if len(session.marks) == len(session.compactions) else \
                [None] * len(session.compactions)
            kinds, requests = session.kinds, session.requests
            self._compactions = {}
            for k, (c, mark) in enumerate(zip(session.compactions, marks)):
                trigger = mark.trigger if mark is not None else None
                if trigger not in (AUTO, MANUAL):
                    end = next((r.seen for r in requests if r.seen > c.at), len(kinds))
                    trigger = MANUAL if USER in kinds[c.at:end] else AUTO
                pre = float(mark.pre_tokens) if mark is not None and mark.pre_tokens else None
                self._compactions[c.at] = (k, trigger, pre)
        return self._compactions.get(boundary.at, (0, AUTO, None))

    def trigger(self, boundary: Compaction) -> str:
        """What set a recorded compaction off: agents.AUTO (the agent, by itself) or
        MANUAL (a user at the prompt, typing ``/compact``)."""
        return self._recorded(boundary)[1]

    def recorded_size(self, boundary: Compaction, prompt: float) -> float:
        """The context a recorded automatic compaction went off at: as it measured itself;
        else, where the point is the session's own, at least that point (the agent
        compacted there by itself: Codex's count of a prompt runs ahead of replay's);
        else ``prompt``, replay's count of the recorded context."""
        pre = self._recorded(boundary)[2]
        if pre is not None:
            return pre
        if self.auto is not None and self.world.own_auto:
            return max(prompt, self.auto)
        return prompt

    def agent_compacts(self, boundary: Compaction, prompt: float) -> bool:
        """Whether the agent makes a recorded automatic compaction by itself in this
        replay's setting too: it compacts by itself at all, and the context had reached
        its point (``recorded_size``)."""
        return self.auto is not None and self.recorded_size(boundary, prompt) >= self.auto

    def compacted_prefix(self, boundary: Compaction) -> float:
        """V of the context a recorded compaction summarised, as recorded: the prefix of
        the context it ends, which in a session begun part-way holds the history before
        the file (``recorded_prefix`` of the request after it is the next context's)."""
        k = self._recorded(boundary)[0]
        prefixes = self.session.segment_prefixes
        found = prefixes[k] if k < len(prefixes) else None
        if found is not None:
            return found
        return self.V0 + (self.hidden if k == 0 else 0.0)

    def prices(self, model: str | None) -> Prices:
        """The request's model's prices: --price, else the table (for a request that names
        no model, the one its agent runs then: world.py), else the parameters; with no
        write premium where the session's usage counts no writes."""
        key = self.price or model or self.world.fallback_llm
        if key not in self._prices:
            found = find(key) if key else None
            if found is not None and found.cache_write and not self.world.write_premium:
                found = found.without_writes()
            self._prices[key] = found or defaults(self.values, self.agent.cache_ttl)
        return self._prices[key]

    def cache_key(self, llm: str | None) -> str | None:
        """The cache a model's requests read and write: its own, unless the recording shows
        models sharing one (``groups``: simulate.shared_caches)."""
        return self.groups.get(llm or "", llm)

    def window_of(self, request: Request) -> float:
        """The window of the request's model (Codex reports one per model)."""
        return self.world.window_for(request.llm)

    def recorded_prefix(self, request: Request) -> float:
        """V of a request as recorded (its context's), else the first context's."""
        prefixes = self.session.segment_prefixes
        prefix = prefixes[request.segment] if request.segment < len(prefixes) else None
        return prefix if prefix is not None else self.V0

    def ttl_of(self, request: Request, previous: str) -> str:
        """The TTL a request writes with: --cache-ttl, else what its usage shows, else the
        previous one (the provider's default at first)."""
        if self.cache_ttl:
            return self.cache_ttl
        u = request.usage
        if u is not None and u.written:
            return u.ttl
        return previous
