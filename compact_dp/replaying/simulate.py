"""The replay loop: grow a recorded session again, request by request, let a policy
compact where the agent could, and bill every request (docs/replay.md).

Before each request the messages it saw arrive.  Where the agent can compact — at a turn
end, before the next human message; before any request for bash-agent; at the agent's own
automatic threshold — the policy may compact its context, as that policy has shaped it.
Then the request is billed by the cache rules (``billing``) on the session's clock, and
its reply joins the context.

Not every cache miss in a recording is a TTL expiry: a client may rewrite the start of the
conversation, and a session's first request often reads a prefix another session wrote.
Such recorded events are taken as given, for every policy (``recorded_events``): a *break*
(the recording reads less than a warm cache would hold) caps the reads at that request;
an *outside cache* (the recording reads, at most the fixed prefix, where the cache would be
empty) gives that many tokens as read.
"""

from __future__ import annotations

from ..agents import RECORDED, REQUEST, TURN
from ..core.scan import Conversation
from ..core.search import L_INSTR
from ..sessions.session import (
    ASSISTANT,
    CONTEXT,
    TOOL,
    USER,
    Compaction,
    Request,
    Usage,
    seen_after,
)
from .billing import Cache, input_cost, output_cost, readable
from .policies import Compact, Policy, RecordedPolicy
from .records import Billed, Compacted, Run
from .setting import Events, Setting

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar

    from ..pricing.table import Prices

# where a run stands when its policy is asked: request index, the next message to arrive,
# the message being arrived at (a turn end), which question, recorded boundaries passed
Position = tuple[int, int, int, str, int]

BREAK_TOLERANCE = 256   # reads this much below a warm cache are not a break (the tail)
EXTENSION_TOKENS = 32   # reads this much past a warm cache are an extension (Anthropic)
EXTENSION_BLOCKS = 256  # ... where the cache works in 128-token blocks (OpenAI)


class Context:
    """The messages a policy's context holds: always their count, tokens and human turns;
    their indices too where messages may be kept (``listed``).  ``extra``: the recorded
    adjustments since the context began (growth with no message, removals), part of the
    history a compaction replaces."""

    __slots__ = ("tokens", "kinds", "listed", "indices", "total", "count", "users", "extra")

    def __init__(self, tokens: list[int], kinds: list[str], listed: bool):
        self.tokens, self.kinds, self.listed = tokens, kinds, listed
        self.indices: list[int] = []
        self.total = self.count = self.users = self.extra = 0

    def adjust(self, tokens: int) -> None:
        """A request's recorded adjustment; a removal takes no more than the context holds
        (never the policy's own prefix or summary)."""
        tokens = max(tokens, -self.total)
        self.total += tokens
        self.extra += tokens

    def add(self, i: int) -> None:
        self.total += self.tokens[i]
        self.count += 1
        self.users += self.kinds[i] == USER
        if self.listed:
            self.indices.append(i)

    def dropped(self, keep: int) -> float:
        """The tokens keeping only the last ``keep`` messages would drop (the adjustments
        go with the history)."""
        if not keep:
            return float(self.total)
        return float(sum(self.tokens[i] for i in self.indices[:len(self.indices) - keep])
                     + self.extra)

    def keep_last(self, keep: int) -> None:
        """Drop all but the last ``keep`` messages."""
        if not keep:
            self.indices, self.total, self.count, self.users, self.extra = [], 0, 0, 0, 0
            return
        drop = self.indices[:len(self.indices) - keep]
        self.indices = self.indices[len(drop):]
        self.total -= sum(self.tokens[i] for i in drop) + self.extra
        self.extra = 0
        self.count -= len(drop)
        self.users -= sum(1 for i in drop if self.kinds[i] == USER)

    def copy(self) -> Context:
        twin = Context(self.tokens, self.kinds, self.listed)
        twin.indices = list(self.indices)
        twin.total, twin.count, twin.users, twin.extra = (self.total, self.count, self.users,
                                                          self.extra)
        return twin

    def token_list(self) -> list[int]:
        return [self.tokens[i] for i in self.indices]

    def kind_list(self) -> list[str]:
        return [self.kinds[i] for i in self.indices]

    def conversation(self) -> Conversation:
        if not self.listed:
            return Conversation.summed(self.count, self.total, self.users)
        kinds = self.kind_list()
        users = [i for i, k in enumerate(kinds) if k == USER]
        return Conversation(self.token_list(), users, users)


class Replay:
    """One policy over one session."""

    # what ``copy_at`` copies as it is (the rest it copies apart: context, caches, result)
    SCALARS: ClassVar[tuple[str, ...]] = (
        "prefix", "diverged", "ttl", "turns", "requests", "billed_input", "last_prompt",
        "last_llm", "skip_context", "index", "position", "spent", "estimates")

    def __init__(self, setting: Setting, policy: Policy, events: Events | None = None):
        self.setting, self.policy = setting, policy
        self.events = events if events is not None else Events()
        self.result = Run(policy.name)
        session = setting.session
        self.context = Context(session.tokens, session.kinds, listed=not setting.whole)
        if not policy.recorded and setting.hidden:
            self.context.adjust(round(setting.hidden))    # the history before the file
        self.prefix = setting.V0          # the context's fixed part (own compactions)
        self.diverged = False             # the context is not the recorded one any more
        self.caches: dict[str | None, Cache] = {}
        self.ttl = "5m"
        self.turns = self.requests = 0
        self.billed_input = 0.0
        self.last_prompt = 0.0
        self.last_llm: str | None = None
        self.skip_context = False         # dropping a recorded compaction's summary
        self.index = 0                    # the request about to be billed
        self.position: Position = (0, 0, -1, "", 0)   # where the policy is asked (copies)
        self.spent = 0.0                  # what the run was billed so far, comparably:
        #                                   input, and the summaries' output
        # the messages in the context no request has seen yet: they are sized from the
        # usage of the request that first sees them, which a decision now cannot know
        # (``unsized``)
        self.unseen: list[int] = []
        self.estimates = session.estimates if len(session.estimates) == \
            len(session.tokens) else session.tokens

    # --- what policies see ---------------------------------------------------------------

    def conversation(self) -> Conversation:
        return self.context.conversation()

    def prefix_now(self, request: Request) -> float:
        if self.policy.recorded:
            return self.setting.recorded_prefix(request)
        return self.prefix

    @property
    def unsized(self) -> int:
        """What the context's messages no request has seen yet hold beyond what a decision
        now could know of them (sizing.Sizer.estimates), which its T leaves out."""
        tokens, estimates = self.context.tokens, self.estimates
        return sum(tokens[i] - estimates[i] for i in self.unseen)

    def prompt_now(self, request: Request) -> float:
        return self.prefix_now(request) + self.context.total

    @property
    def compactions(self) -> int:
        return len(self.result.compactions)

    @property
    def context_requests(self) -> int:
        """The requests made since this run's context began (its last compaction)."""
        done = self.result.compactions
        return self.requests - (done[-1].before if done else 0)

    # --- running ---------------------------------------------------------------------------

    def run(self, resume: Position | None = None) -> Run:
        """Replay the session; ``resume``: from where a copy of this replay was taken
        (``copy_at``) instead of from the start."""
        s = self.setting
        session = s.session
        boundaries, turn_ends, touches = s.lookups()
        if self.policy.recorded:
            turn_ends = set()                 # the recorded policy is asked nothing
        kinds = session.kinds
        j0, cursor, i0, phase, used = resume if resume is not None else (0, 0, -1, "", 0)
        recorded_summaries = iter(s.compaction_usage[used:])
        if resume is None:
            self.ttl = s.first_ttl or s.prices(session.llm).default_ttl
        policy = self.policy
        requests = session.requests
        for j in range(j0, len(requests)):
            if policy.finished:
                break
            request = requests[j]
            self.index = j
            here = resume is not None and j == j0
            if not (here and phase == REQUEST):
                seen = seen_after(request, cursor)
                turn_end = False
                for i in range(i0 if here else cursor, seen):
                    # (resumed at a turn end, its message's boundary was passed already;
                    # resumed at a recorded boundary, it is the question asked again)
                    if i in boundaries and not (here and i == i0 and phase != RECORDED):
                        if policy.copies:
                            self.position = (j, cursor, i, RECORDED, used)
                        used += 1
                        self._recorded_boundary(request, next(recorded_summaries, None),
                                                boundaries[i])
                    if j in turn_ends and not turn_end and kinds[i] == USER:
                        turn_end = True
                        if policy.copies:
                            self.position = (j, cursor, i, TURN, used)
                        self._offer(policy.at_turn_end(self, request), request)
                    self._arrive(i)
                cursor = seen
                for when in touches.get(j, ()):
                    self._touch(when)
                self.context.adjust(request.adjust)
            seen = cursor
            if not policy.recorded:
                if policy.copies:
                    self.position = (j, cursor, -1, REQUEST, used)
                self._offer(policy.before_request(self, request), request)
            self._bill(j, request)
            if seen < len(kinds) and kinds[seen] == ASSISTANT:
                self._arrive(seen)            # the reply joins the context
                cursor = seen + 1
        if requests and policy.recorded:
            for at, boundary in sorted(boundaries.items()):
                if at >= cursor:              # compacted after the last request
                    self._recorded_boundary(requests[-1],
                                            next(recorded_summaries, None), boundary)
        return self.result

    def copy_at(self) -> tuple[Replay, Position]:
        """This replay as it stands at the point its policy is being asked about (its
        policy keeps ``copies``), to be given a policy and run on from there
        (``run(position)``): the same context, caches and counts, a result of its own."""
        twin = Replay(self.setting, self.policy, self.events)
        for name in self.SCALARS:
            setattr(twin, name, getattr(self, name))
        twin.context = self.context.copy()
        twin.unseen = list(self.unseen)
        twin.caches = {llm: cache.copy() for llm, cache in self.caches.items()}
        twin.result.compactions = list(self.result.compactions)
        return twin, self.position

    def _offer(self, decision: Compact | None, request: Request) -> None:
        if decision is not None and (decision.keep < self.context.count or
                                     self.setting.whole and self.context.count):
            self._compact(request, decision.keep, decision.forced, at=decision.at)

    def _arrive(self, i: int) -> None:
        kinds = self.setting.session.kinds
        if self.skip_context and kinds[i] == CONTEXT:
            return
        self.skip_context = False
        if kinds[i] == USER:
            self.turns += 1
        self.context.add(i)
        self.unseen.append(i)

    def _recorded_boundary(self, request: Request, usage: Request | None,
                           boundary: Compaction) -> None:
        """A recorded compaction: what happened starts over.  Another policy is asked
        whether it compacts here too: where its context is still the recorded one, its
        compaction is the recorded one, billed as recorded, and what follows is the
        recording; otherwise it carries on without the recorded summary (compacting here
        its own way, if it said so)."""
        if self.policy.recorded:
            self._compact(request, 0, False, recorded=usage, boundary=boundary)
            return
        trigger = self.setting.trigger(boundary)
        decision = self.policy.at_recorded(self, request, boundary, trigger)
        if decision is not None and not self.diverged:
            self._compact(request, 0, decision.forced, recorded=usage, boundary=boundary,
                          as_recorded=True)
            return
        self.diverged = True
        self.skip_context = True
        if decision is not None:
            if decision.at is None:           # its own compaction, of its own context, then
                decision.at = boundary.time
            self._offer(decision, request)

    def summary_bill(self, request: Request, keep: int = 0, recorded: Request | None = None,
                     boundary: Compaction | None = None, as_recorded: bool = False,
                     at: float | None = None) -> Billed:
        """The summary request a compaction now would make, keeping the last ``keep``
        messages (nothing changes): it runs on the model the conversation was using, at
        the moment of the compaction (``at``, else when the next request is sent), and
        reads what that model's cache holds."""
        s = self.setting
        model = recorded.llm if recorded is not None and recorded.llm else \
            self.last_llm if boundary is not None and self.last_llm else request.llm
        time = recorded.time if recorded is not None and recorded.time is not None \
            else boundary.time if boundary is not None and boundary.time is not None \
            else at if at is not None else request.sent
        if recorded is not None and recorded.usage is not None:
            u = recorded.usage                 # the recorded summary request, as billed
            return self._charge(self.compactions, time, model, u.prompt, u.read, u.ttl,
                                s.S, uncached=u.input, write_1h=u.write_1h)
        recording = self.policy.recorded or as_recorded
        # the prefix of the context summarised: the recorded one's where this run's is the
        # recorded (another policy's still holds the history before a part-way file)
        prefix = s.compacted_prefix(boundary) if self.policy.recorded and \
            boundary is not None else self.prefix_now(request)
        prompt = prefix + self.context.dropped(keep) + L_INSTR
        read = readable(self.caches.get(s.cache_key(model)), time, prompt, s.prices(model))
        billed = self._charge(self.compactions, time, model, prompt, read, self.ttl, s.S)
        billed.billed = not recording
        return billed

    def _compact(self, request: Request, keep: int, forced: bool,
                 recorded: Request | None = None, boundary: Compaction | None = None,
                 as_recorded: bool = False, at: float | None = None) -> None:
        """A summary request over the context, then keep its last ``keep`` messages; only
        what the compaction leaves is still cached.  ``as_recorded``: another policy
        taking the recorded compaction, billed and left as the recorded policy's."""
        s = self.setting
        count = self.context.count
        billed = self.summary_bill(request, keep, recorded, boundary, as_recorded, at)
        dropped = self.context.dropped(keep)
        self.caches[s.cache_key(billed.llm)] = Cache(billed.prompt, billed.time, billed.ttl)
        self.context.keep_last(keep)
        if not keep:
            self.unseen = []
        self.spent += billed.input_cost + billed.output_cost
        self.result.compactions.append(Compacted(len(self.result.requests), billed.time,
                                                 count - self.context.count, dropped,
                                                 keep, forced, billed))
        cached = s.after.cached
        if as_recorded:
            self.prefix = cached = s.recorded_prefix(request)
        elif not self.policy.recorded:
            self.prefix = s.after.left
            self.diverged = True
        else:
            cached = s.recorded_prefix(request)
        for cache in self.caches.values():    # only the fixed prefix is still the same
            cache.valid = min(cache.valid, cached)

    def _charge(self, index: int, time: float | None, model: str | None, prompt: float,
                read: float, ttl: str, output: float, uncached: float = 0.0,
                write_1h: float | None = None, prices: Prices | None = None) -> Billed:
        if prices is None:
            prices = self.setting.prices(model)
        written = max(0.0, prompt - read - uncached)
        return Billed(index, time, model, prompt, read, written, ttl,
                      input_cost(prices, read, written, ttl, uncached, write_1h), output,
                      output_cost(prices, output, prompt), uncached)

    def _bill(self, j: int, request: Request) -> None:
        s = self.setting
        if request.side and request.usage is not None:
            self._bill_side(j, request, request.usage)
            return
        if self.unseen:                       # what this request sees is seen
            self.unseen = [i for i in self.unseen if i >= request.seen]
        self.ttl = s.ttl_of(request, self.ttl)
        if (self.policy.recorded or not self.diverged) and request.usage is not None:
            # what happened, exactly: so far this run's context is the recorded one
            prompt = float(request.usage.prompt)
        else:
            prompt = self.prompt_now(request)
        prices = s.prices(request.llm)
        events = self.events
        cache = self.caches.get(s.cache_key(request.llm))
        read = readable(cache, request.sent, prompt, prices)
        if j in events.late:      # the cache answered past its TTL, up to what it read then
            read = min(readable(cache, None, prompt, prices), events.late[j])
        if j in events.ceiling:
            # a break: the recorded context reads what the recording read; another
            # context loses the same share of its warm cache (an absolute cap would bill
            # a larger context's surplus as a miss at every break, a third of a Codex
            # rollout's requests, and spare a smaller one every break)
            read = min(read, events.ceiling[j]) if not self.diverged else \
                read * events.kept[j]
        if j in events.extend and read > 0:
            read = min(prompt, read + events.extend[j])
        if j in events.floor:
            shared = prompt if not self.diverged else min(prompt, s.recorded_prefix(request))
            read = max(read, min(self.events.floor[j], shared))
        u = request.usage
        output = float(u.output) if u is not None else self._reply_tokens(request)
        # the client's uncached tail (tokens after its last cache breakpoint, where writes
        # are priced apart), the same under any policy: billed as input, and not in the
        # cache afterwards.  Without a write premium every uncached token is cached.
        tail = min(float(u.input), prompt - read) if u is not None and prices.cache_write \
            else 0.0
        billed = self._charge(j, request.sent, request.llm, prompt, read, self.ttl, output,
                              uncached=tail, prices=prices)
        self.caches[s.cache_key(request.llm)] = Cache(prompt - tail, request.done, self.ttl)
        self.result.requests.append(billed)
        self.spent += billed.input_cost
        self.requests += 1
        self.billed_input += prompt
        self.last_prompt = prompt
        self.last_llm = request.llm

    def _bill_side(self, j: int, request: Request, u: Usage) -> None:
        """A side request carries none of the main context, so no policy changes it: it
        is billed as recorded, and touches neither the main cache nor the context."""
        billed = self._charge(j, request.sent, request.llm, float(u.prompt), float(u.read),
                              u.ttl, float(u.output), uncached=float(u.input),
                              write_1h=float(u.write_1h))
        self.result.requests.append(billed)
        self.spent += billed.input_cost
        self.requests += 1

    def _touch(self, time: float) -> None:
        """A prompt sent and answered by nothing still read and wrote the cache of the
        model in use; no recording shows its bill (it stays out of the simulation error)."""
        model = self.last_llm
        prices = self.setting.prices(model)
        prompt = self.prefix_now(self.setting.session.requests[self.index]) + \
            self.context.total
        read = readable(self.caches.get(self.setting.cache_key(model)), time, prompt, prices)
        billed = self._charge(self.index, time, model, prompt, read, self.ttl, 0.0)
        billed.billed = False
        self.caches[self.setting.cache_key(model)] = Cache(prompt, time, self.ttl)
        self.result.touches.append(billed)
        self.spent += billed.input_cost

    def _reply_tokens(self, request: Request) -> float:
        """Without usage, the output is the size of the reply that answered the request."""
        session = self.setting.session
        i = request.seen
        return float(session.tokens[i]) if i < len(session.kinds) and \
            session.kinds[i] == ASSISTANT else 0.0


SHARED_READ = 0.9      # a switch that reads this much of the previous prompt: one cache


def shared_caches(setting: Setting) -> dict[str, str | None]:
    """The models whose requests share one cache, as the recording shows: at a switch
    from model A to model B, B's request reads at least SHARED_READ of A's last prompt —
    more than the fixed prefix and more than B's own last prompt could give — so B read
    what A had cached (a Codex rollout switching between GPT-5.6's variants does).
    Returns each such model's group (the model it was first seen sharing with)."""
    group: dict[str, str | None] = {}

    def root(m: str) -> str:
        while group.get(m) not in (None, m):
            m = str(group[m])
        return m
    last: dict[str, float] = {}
    before: Request | None = None
    for r in setting.session.requests:
        u = r.usage
        if u is None or r.side:
            continue
        model = r.llm or ""
        if before is not None and before.llm != r.llm and before.usage is not None:
            previous = float(before.usage.prompt)
            if u.read >= SHARED_READ * previous and u.read > setting.recorded_prefix(r) and \
                    u.read > last.get(model, 0.0) + BREAK_TOLERANCE:
                a, b = root(before.llm or ""), root(model)
                if a != b:
                    group[b] = a
                    group.setdefault(a, a)
        last[model] = float(u.prompt)
        before = r
    return {m: root(m) or None for m in group}


def recorded_events(setting: Setting) -> Events:
    """Compare the recording with a replay of what happened under the cache rules alone;
    where they disagree by more than a tolerance, the recording is an event.  A break
    (reads below a warm cache's), an outside cache (reads where the rules' cache is empty:
    at a model's first request, or at most the fixed prefix), an extension (a warm cache
    that reads past what it held: the client cached the finished reply, which Claude Code
    does after a turn's last reply, never right after a tool result), a late hit (the
    rules' cache had expired, yet the recording read more than the fixed prefix: the
    provider kept it past its TTL then, for any context)."""
    events = Events()
    session = setting.session
    if not session.has_usage:
        return events
    pure = Replay(setting, RecordedPolicy(), events=None).run()
    used: set[str | None] = set()
    for billed, (_, request, start, end) in zip(pure.requests, session.arrivals()):
        tool = TOOL in session.kinds[start:end]
        u = request.usage
        first = setting.cache_key(request.llm) not in used
        used.add(setting.cache_key(request.llm))
        if u is None or request.side:
            continue
        if billed.read > u.read + BREAK_TOLERANCE:
            events.ceiling[billed.index] = float(u.read)
            events.kept[billed.index] = u.read / billed.read
        elif billed.read == 0 < u.read and (first or u.read <= setting.recorded_prefix(request)):
            events.floor[billed.index] = float(u.read)
        elif billed.read == 0 < u.read:
            events.late[billed.index] = float(u.read)
        elif billed.read > 0:
            blocked = setting.prices(request.llm).cache_block is not None
            if u.read - billed.read > (EXTENSION_BLOCKS if blocked else EXTENSION_TOKENS) \
                    and (blocked or not tool):
                events.extend[billed.index] = float(u.read - billed.read)
    return events
