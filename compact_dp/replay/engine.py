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

from ..agents import TURN, agent_of
from ..core.models import Model
from ..core.scan import Conversation
from ..sessions.model import ASSISTANT, CONTEXT, USER, Compaction, Request, Session
from .billing import Cache, input_cost, output_cost, readable
from .policies import Policy, RecordedPolicy, make_policy
from .records import Billed, Compacted, Run
from .setting import L_INSTR, Aftermath, Events, Setting

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

BREAK_TOLERANCE = 256   # reads this much below a warm cache are not a break (the tail)


class Context:
    """The messages a policy's context holds: always their count, tokens and human turns;
    their indices too where messages may be kept (``listed``)."""

    __slots__ = ("tokens", "kinds", "listed", "indices", "total", "count", "users")

    def __init__(self, tokens: list[int], kinds: list[str], listed: bool):
        self.tokens, self.kinds, self.listed = tokens, kinds, listed
        self.indices: list[int] = []
        self.total = self.count = self.users = 0

    def add(self, i: int) -> None:
        self.total += self.tokens[i]
        self.count += 1
        self.users += self.kinds[i] == USER
        if self.listed:
            self.indices.append(i)

    def dropped(self, keep: int) -> float:
        """The tokens keeping only the last ``keep`` messages would drop."""
        if not keep:
            return float(self.total)
        return float(sum(self.tokens[i] for i in self.indices[:len(self.indices) - keep]))

    def keep_last(self, keep: int) -> None:
        """Drop all but the last ``keep`` messages."""
        if not keep:
            self.indices, self.total, self.count, self.users = [], 0, 0, 0
            return
        drop = self.indices[:len(self.indices) - keep]
        self.indices = self.indices[len(drop):]
        self.total -= sum(self.tokens[i] for i in drop)
        self.count -= len(drop)
        self.users -= sum(1 for i in drop if self.kinds[i] == USER)

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

    def __init__(self, setting: Setting, policy: Policy, events: Events | None = None):
        self.setting, self.policy = setting, policy
        self.events = events if events is not None else Events()
        self.result = Run(policy.name)
        session = setting.session
        self.context = Context(session.tokens, session.kinds, listed=not setting.whole)
        self.prefix = setting.V0          # the context's fixed part (own compactions)
        self.diverged = False             # the context is not the recorded one any more
        self.caches: dict[str | None, Cache] = {}
        self.ttl = "5m"
        self.turns = self.requests = 0
        self.billed_input = 0.0
        self.last_prompt = 0.0
        self.last_model: str | None = None
        self.skip_context = False         # dropping a recorded compaction's summary
        self.index = 0                    # the request about to be billed

    # --- what policies see ---------------------------------------------------------------

    def conversation(self) -> Conversation:
        return self.context.conversation()

    def prefix_now(self, request: Request) -> float:
        if self.policy.recorded:
            return self.setting.recorded_prefix(request)
        return self.prefix

    def prompt_now(self, request: Request) -> float:
        return self.prefix_now(request) + self.context.total

    @property
    def compactions(self) -> int:
        return len(self.result.compactions)

    # --- running ---------------------------------------------------------------------------

    def run(self) -> Run:
        s = self.setting
        session = s.session
        boundaries = {c.at: c for c in session.compactions}
        recorded_summaries = iter(s.compaction_usage)
        kinds = session.kinds
        turn_points = s.points == TURN and not self.policy.recorded
        cursor = 0
        self.ttl = s.cache_ttl or s.prices(session.model).default_ttl
        for j, request in enumerate(session.requests):
            self.index = j
            seen = max(request.seen, cursor)
            turn_end = False
            for i in range(cursor, seen):
                if i in boundaries:
                    self._recorded_boundary(request, next(recorded_summaries, None),
                                            boundaries[i])
                if turn_points and not turn_end and j and kinds[i] == USER:
                    turn_end = True
                    self._offer(self.policy.at_turn_end(self, request), request)
                self._arrive(i)
            cursor = seen
            if not self.policy.recorded:
                self._offer(self.policy.before_request(self, request), request)
            self._bill(j, request)
            if kinds[seen:seen + 1] == [ASSISTANT]:
                self._arrive(seen)            # the reply joins the context
                cursor = seen + 1
        if session.requests and self.policy.recorded:
            for at, boundary in sorted(boundaries.items()):
                if at >= cursor:              # compacted after the last request
                    self._recorded_boundary(session.requests[-1],
                                            next(recorded_summaries, None), boundary)
        return self.result

    def _offer(self, decision, request: Request) -> None:
        if decision is not None and (decision.keep < self.context.count or
                                     self.setting.whole and self.context.count):
            self._compact(request, decision.keep, decision.forced)

    def _arrive(self, i: int) -> None:
        kinds = self.setting.session.kinds
        if self.skip_context and kinds[i] == CONTEXT:
            return
        self.skip_context = False
        if kinds[i] == USER:
            self.turns += 1
        self.context.add(i)

    def _recorded_boundary(self, request: Request, usage: Request | None,
                           boundary: Compaction) -> None:
        """A recorded compaction: what happened starts over; the others carry on without
        the recorded summary."""
        if not self.policy.recorded:
            self.diverged = True
            self.skip_context = True
            return
        self._compact(request, 0, False, recorded=usage, boundary=boundary)

    def _compact(self, request: Request, keep: int, forced: bool,
                 recorded: Request | None = None, boundary: Compaction | None = None) -> None:
        """A summary request over the context, then keep its last ``keep`` messages.  It
        runs on the model the conversation was using, at the moment of the compaction."""
        s = self.setting
        count = self.context.count
        prefix = self.prefix_now(request)
        model = recorded.model if recorded is not None and recorded.model else \
            self.last_model if boundary is not None and self.last_model else request.model
        prices = s.prices(model)
        time = recorded.time if recorded is not None and recorded.time is not None \
            else boundary.time if boundary is not None and boundary.time is not None \
            else request.time
        dropped = self.context.dropped(keep)
        if recorded is not None and recorded.usage is not None:
            u = recorded.usage                 # the recorded summary request, as billed
            billed = self._charge(self.compactions, time, model, u.prompt, u.read, u.ttl,
                                  s.S, uncached=u.input, write_1h=u.write_1h)
        else:
            prompt = prefix + dropped + L_INSTR
            read = readable(self.caches.get(model), time, prompt, prices)
            billed = self._charge(self.compactions, time, model, prompt, read, self.ttl, s.S)
            billed.billed = not self.policy.recorded
        self.caches[model] = Cache(billed.prompt, time, billed.ttl)
        self.context.keep_last(keep)
        self.result.compactions.append(Compacted(len(self.result.requests), time,
                                                 count - self.context.count, dropped,
                                                 keep, forced, billed))
        cached = s.after.cached
        if not self.policy.recorded:
            self.prefix = s.after.left
            self.diverged = True
        else:
            cached = s.recorded_prefix(request)
        for cache in self.caches.values():    # only the fixed prefix is still the same
            cache.valid = min(cache.valid, cached)

    def _charge(self, index: int, time: float | None, model: str | None, prompt: float,
                read: float, ttl: str, output: float, uncached: float = 0.0,
                write_1h: float | None = None) -> Billed:
        prices = self.setting.prices(model)
        written = max(0.0, prompt - read - uncached)
        return Billed(index, time, model, prompt, read, written, ttl,
                      input_cost(prices, read, written, ttl, uncached, write_1h), output,
                      output_cost(prices, output))

    def _bill(self, j: int, request: Request) -> None:
        s = self.setting
        self.ttl = s.ttl_of(request, self.ttl)
        prompt = self.prompt_now(request)
        read = readable(self.caches.get(request.model), request.time, prompt,
                        s.prices(request.model))
        if j in self.events.ceiling:
            read = min(read, self.events.ceiling[j])
        if j in self.events.floor:
            shared = prompt if not self.diverged else min(prompt, s.recorded_prefix(request))
            read = max(read, min(self.events.floor[j], shared))
        output = float(request.usage.output) if request.usage is not None else \
            self._reply_tokens(request)
        billed = self._charge(j, request.time, request.model, prompt, read, self.ttl, output)
        self.caches[request.model] = Cache(prompt, request.time, self.ttl)
        self.result.requests.append(billed)
        self.requests += 1
        self.billed_input += prompt
        self.last_prompt = prompt
        self.last_model = request.model

    def _reply_tokens(self, request: Request) -> float:
        """Without usage, the output is the size of the reply that answered the request."""
        session = self.setting.session
        i = request.seen
        return float(session.tokens[i]) if i < len(session.kinds) and \
            session.kinds[i] == ASSISTANT else 0.0


def recorded_events(setting: Setting) -> Events:
    """Compare the recording with a replay of what happened under the cache rules alone."""
    events = Events()
    session = setting.session
    if not session.has_usage:
        return events
    pure = Replay(setting, RecordedPolicy(), events=None).run()
    for billed, request in zip(pure.requests, session.requests):
        u = request.usage
        if u is None:
            continue
        if billed.read > u.read + BREAK_TOLERANCE:
            events.ceiling[billed.index] = float(u.read)
        elif billed.read < u.read <= setting.recorded_prefix(request):
            events.floor[billed.index] = float(u.read)
    return events


def replay_session(setting: Setting, policies: list[str]) -> list[Run]:
    """Every policy over one session (the recorded events found once, shared by all)."""
    return [Replay(setting, make_policy(p), setting.events).run() for p in policies]


def setting_for(session: Session, params: Mapping[str, object], model: Model, whole: bool,
                keep_tokens: int, cache_ttl: str | None, price: str | None,
                env: Mapping[str, str] | None = None, points: str | None = None) -> Setting:
    """The replay's setting, from the same sources as the decision (library.session_ask):
    the parameters, what the session's own compactions left (else the agent's figures),
    and the recorded cache events."""
    from ..library import session_ask
    from .bill import SessionFiles
    question = session_ask(session, params, model, env, keep="none" if whole else "best",
                           price=price, cache_ttl=cache_ttl)
    values = question.ask.values
    files = SessionFiles(session)
    V0 = next((p for p in session.segment_prefixes if p is not None), values["V"].num)
    S = values["S"].num
    left, cached = values["after_tokens"].num, values["after_cached"].num
    after = Aftermath(left if left > 0 else V0 + S, cached if cached > 0 else V0,
                      question.sources.get("after_tokens", (0, "the fixed prefix and the "
                                                              "summary"))[1])
    setting = Setting(session, values, model, agent_of(session.format), whole=whole,
                      keep_tokens=keep_tokens, cache_ttl=cache_ttl, price=price,
                      summary_tokens=S, window=values["max_context"].num, aftermath=after,
                      points=points, compaction_usage=files.compaction_requests)
    setting.files = files
    setting.events = recorded_events(setting)
    return setting
