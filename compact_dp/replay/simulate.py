"""Replay: what a compaction policy would have cost over a recorded session.

A session file is a recording of the session that grew it.  Replay grows it again, request
by request, and before every request lets each policy compact the context *as that policy
has shaped it*; then it bills the request the way providers bill (docs/replay.md):

* each model has its own prompt cache; the part of a prompt equal to the cached prefix is
  a read, provided the cache was used within its TTL (a hit refreshes the TTL); the rest is
  written at the write price of the cache's TTL (or billed as uncached input where the
  provider has no write premium);
* a compaction is a summary request over the current context (it reads what the cache
  holds), after which only the fixed prefix V is still cached;
* time comes from the session's timestamps (without them the cache never expires).

Policies: ``recorded`` (the recorded compactions, at the recorded moments — what
happened), ``dp`` (this tool's decision with its forced fallback), ``never`` (only when the
window would overflow) and ``threshold:P`` (at P % of the window, what most agents do).

Not every cache miss in a recording is a TTL expiry: a client may rewrite the start of the
conversation, and a session's first request often reads a prefix another session wrote.
Such recorded events are taken as given, for every policy: a *break* (the recording reads
less than a warm cache would hold) caps the reads at that request; an *outside cache* (the
recording reads, at most the fixed prefix, where the cache would be empty) gives that many
tokens as read.
"""

from __future__ import annotations

from ..core.awkvalue import AwkValue
from ..core.params import native_values
from ..core.scan import Conversation
from ..engine import Ask, PolicyAsk, answer
from ..core.decision import turn_keep
from ..core.models import Model
from ..errors import UsageError
from ..pricing.table import Prices, defaults, find, parse_ttl
from ..sessions.model import ASSISTANT, CONTEXT, USER, Compaction, Request, Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

L_INSTR = 70            # the summary instruction's tokens (the model's l_instr)
BREAK_TOLERANCE = 256   # reads this much below a warm cache are not a break (the tail)


# --- what a run records ---------------------------------------------------------------------

class Billed:
    """One billed request: its prompt split into reads, writes (at ``ttl``) and the
    uncached rest, with its input and output costs."""

    __slots__ = ("index", "time", "model", "prompt", "read", "written", "ttl",
                 "input_cost", "output", "output_cost", "billed")

    def __init__(self, index: int, time: float | None, model: str | None, prompt: float,
                 read: float, written: float, ttl: str, input_cost: float, output: float,
                 output_cost: float):
        self.index, self.time, self.model, self.prompt = index, time, model, prompt
        self.read, self.written, self.ttl = read, written, ttl
        self.input_cost, self.output, self.output_cost = input_cost, output, output_cost
        self.billed = True        # False: a summary request the recording does not show


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

    def _all(self) -> list[Billed]:
        return self.requests + [c.request for c in self.compactions]

    @property
    def input_cost(self) -> float:
        """Every request's input side, the summary requests' included."""
        return sum(r.input_cost for r in self._all())

    @property
    def output_cost(self) -> float:
        return sum(r.output_cost for r in self._all())

    @property
    def summary_cost(self) -> float:
        return sum(c.request.input_cost + c.request.output_cost for c in self.compactions)

    @property
    def unrecorded_cost(self) -> float:
        """Input of the summary requests the recording does not show (no file of them
        beside the session): left out when comparing with the recorded bill."""
        return sum(c.request.input_cost for c in self.compactions if not c.request.billed)

    @property
    def summary_output_cost(self) -> float:
        """The summaries written (S tokens each at the output price: a recorded summary's
        own output count is a mid-stream snapshot, so S stands in for it too)."""
        return sum(c.request.output_cost for c in self.compactions)

    @property
    def comparable_cost(self) -> float:
        """What differs between policies: every request's input and the summaries' output
        (the replies are the same under every policy)."""
        return self.input_cost + self.summary_output_cost

    @property
    def peak_context(self) -> float:
        return max((r.prompt for r in self.requests), default=0)

    @property
    def mean_context(self) -> float:
        return sum(r.prompt for r in self.requests) / len(self.requests) \
            if self.requests else 0.0

    @property
    def cache_hit_share(self) -> float:
        total = sum(r.prompt for r in self._all())
        return sum(r.read for r in self._all()) / total if total else 0.0

    def summary(self) -> dict[str, object]:
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
                "total_cost": self.input_cost + self.output_cost,
                "cache_read_tokens": sum(r.read for r in self._all()),
                "cache_write_tokens": sum(r.written for r in self._all()),
                "peak_context": self.peak_context, "mean_context": self.mean_context,
                "cache_hit_share": self.cache_hit_share}


# --- what every policy of one session shares ---------------------------------------------------

class Setting:
    """The session and the parameters every policy is replayed with."""

    def __init__(self, session: Session, values: dict[str, AwkValue], model: Model,
                 whole: bool, keep_tokens: int, cache_ttl: str | None,
                 price: str | None, summary_tokens: float, window: float,
                 compaction_usage: list[Request] | None = None):
        self.session, self.values, self.model = session, values, model
        self.whole, self.keep_tokens, self.cache_ttl = whole, keep_tokens, cache_ttl
        self.price, self.S, self.window = price, summary_tokens, window
        self.compaction_usage = compaction_usage or []
        self._prices: dict[str | None, Prices] = {}
        first = next((p for p in session.segment_prefixes if p is not None), None)
        self.V0: float = values["V"].num if first is None else first
        self.events = recorded_events(self)

    def prices(self, model: str | None) -> Prices:
        """The request's model's prices: --price, else the table, else the parameters."""
        key = self.price or model
        if key not in self._prices:
            found = find(key) if key else None
            v = self.values
            self._prices[key] = found or defaults(v["p_input"].num, v["p_cache"].num,
                                                  v["p_out"].num, v["max_context"].num)
        return self._prices[key]

    def prefix(self, request: Request, recorded: bool) -> float:
        """V of a request: the recorded one for what happened, the first context's for
        counterfactuals (whose own summaries are added to it)."""
        if recorded and request.segment < len(self.session.segment_prefixes):
            p = self.session.segment_prefixes[request.segment]
            if p is not None:
                return p
        return self.V0

    def ttl_of(self, request: Request, previous: str) -> str:
        """The TTL a request writes with: --cache-ttl, else what its usage shows, else the
        previous one (the provider's default at first)."""
        if self.cache_ttl:
            return self.cache_ttl
        u = request.usage
        if u is not None and u.written:
            return "1h" if u.write_1h > u.write_5m else "5m"
        return previous


class Events:
    """Recorded cache events at each request: a break caps reads, an outside cache gives
    a minimum of reads."""

    def __init__(self) -> None:
        self.ceiling: dict[int, float] = {}
        self.floor: dict[int, float] = {}


def recorded_events(setting: Setting) -> Events:
    """Compare the recording with a replay of what happened under the cache rules alone."""
    events = Events()
    if not setting.session.has_usage:
        return events
    pure = Replay(setting, RecordedPolicy(), events=None).run()
    for billed, request in zip(pure.requests, setting.session.requests):
        u = request.usage
        if u is None:
            continue
        if billed.read > u.read + BREAK_TOLERANCE:
            events.ceiling[billed.index] = float(u.read)
        elif billed.read < u.read <= setting.prefix(request, True):
            events.floor[billed.index] = float(u.read)
    return events


# --- the policies -----------------------------------------------------------------------------

class Decision:
    """A policy's answer before a request: keep the last ``keep`` messages (0: none)."""

    def __init__(self, keep: int, forced: bool = False):
        self.keep, self.forced = keep, forced


class Policy:
    name = "policy"
    recorded = False

    def decide(self, replay: "Replay", request: Request) -> Decision | None:
        raise NotImplementedError


class RecordedPolicy(Policy):
    """What happened: the recorded compactions at the recorded moments."""

    name = "recorded"
    recorded = True

    def decide(self, replay, request):
        return None


class DpPolicy(Policy):
    """This tool's decision, with the forced fallback, as the agent would have seen it."""

    name = "dp"

    def decide(self, replay, request):
        s = replay.setting
        prices = s.prices(request.model)
        v = dict(s.values)
        numbers = {"t": replay.turns, "total_requests": replay.requests,
                   "total_compact": len(replay.result.compactions),
                   "total_input": replay.billed_input,
                   "V": s.prefix(request, replay.policy.recorded),
                   "S": s.S, "p_input": prices.input, "p_cache": prices.cache_read,
                   "p_out": prices.output, "max_context": s.window}
        for name, x in numbers.items():
            v[name] = AwkValue.number(x)
        cold = False
        p_write = None
        if s.model.cache_aware:
            ttl = replay.ttl
            p_write = prices.write(ttl)
            cache = replay.caches.get(request.model)
            cold = cache is not None and request.time is not None and \
                cache.last is not None and request.time - cache.last > parse_ttl(cache.ttl)
        ask = Ask(s.model, v, PolicyAsk("auto", replay.last_prompt), whole=s.whole,
                  p_write=p_write, cold=cold)
        result = answer(ask, replay.conversation()).policy
        assert result is not None
        if result.action != "compact":
            return None
        return Decision(0 if s.whole else result.keep, result.forced)


class NeverPolicy(Policy):
    """Compact only when the request would not fit the window."""

    name = "never"

    def decide(self, replay, request):
        s = replay.setting
        if replay.prompt_now(request) <= s.window:
            return None
        if s.whole:
            return Decision(0, True)
        keep = turn_keep(s.values["min_keep_ratio"].num, replay.conversation()).keep
        return Decision(keep, True)


class ThresholdPolicy(Policy):
    """What most agents do: at P % of the window keep the last N tokens (cut back to a
    user message), or nothing for agents that summarise everything."""

    def __init__(self, percent: float):
        self.name = f"threshold:{percent:g}"
        self.percent = percent

    def decide(self, replay, request):
        s = replay.setting
        if replay.prompt_now(request) < s.window * self.percent / 100:
            return None
        if s.whole:
            return Decision(0)
        tokens, kinds = replay.context_tokens(), replay.context_kinds()
        kept, k = 0, 0
        for t in reversed(tokens):
            if kept >= s.keep_tokens:
                break
            kept += t
            k += 1
        while 0 < k < len(tokens) and kinds[-k] != USER:
            k += 1                    # grow back until the window starts on a user line
        return Decision(k)


def make_policy(spec: str) -> Policy:
    """``recorded``, ``dp``, ``never`` or ``threshold:P``."""
    if spec == "recorded":
        return RecordedPolicy()
    if spec == "dp":
        return DpPolicy()
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
    raise UsageError(f"unknown policy {spec!r} (recorded, dp, never or threshold:P)")


# --- the replay ---------------------------------------------------------------------------------

class Cache:
    """One model's cache: how many leading tokens of the current context it holds, when it
    was last used, and with which TTL."""

    __slots__ = ("valid", "last", "ttl")

    def __init__(self, valid: float, last: float | None, ttl: str):
        self.valid, self.last, self.ttl = valid, last, ttl


class Replay:
    """One policy over one session."""

    def __init__(self, setting: Setting, policy: Policy, events: Events | None = None):
        self.setting, self.policy = setting, policy
        self.events = events if events is not None else Events()
        self.result = Run(policy.name)
        self.context: list[int] = []       # message indices the context holds, in order
        self.summary = 0.0                 # tokens of this policy's own summary (prefix)
        self.diverged = False              # the context is not the recorded one any more
        self.caches: dict[str | None, Cache] = {}
        self.ttl = "5m"
        self.turns = self.requests = 0
        self.billed_input = 0.0
        self.last_prompt = 0.0
        self.last_model: str | None = None
        self.skip_context = False          # dropping a recorded compaction's summary

    # --- the context ------------------------------------------------------------------

    def context_tokens(self) -> list[int]:
        t = self.setting.session.tokens
        return [t[i] for i in self.context]

    def context_kinds(self) -> list[str]:
        k = self.setting.session.kinds
        return [k[i] for i in self.context]

    def conversation(self) -> Conversation:
        kinds = self.context_kinds()
        users = [i for i, k in enumerate(kinds) if k == USER]
        return Conversation(self.context_tokens(), users, users)

    def prefix_now(self, request: Request) -> float:
        return self.setting.prefix(request, self.policy.recorded) + self.summary

    def prompt_now(self, request: Request) -> float:
        return self.prefix_now(request) + sum(self.context_tokens())

    # --- running ---------------------------------------------------------------------

    def run(self) -> Run:
        session = self.setting.session
        boundaries = {c.at: c for c in session.compactions}
        recorded_summaries = iter(self.setting.compaction_usage)
        cursor = 0
        self.ttl = self.setting.cache_ttl or self.setting.prices(session.model).default_ttl
        for j, request in enumerate(session.requests):
            seen = max(request.seen, cursor)
            for i in range(cursor, seen):
                if i in boundaries:
                    self._recorded_boundary(request, next(recorded_summaries, None),
                                            boundaries[i])
                self._arrive(i)
            cursor = seen
            if not self.policy.recorded:
                decision = self.policy.decide(self, request)
                if decision is not None and decision.keep < len(self.context):
                    self._compact(request, decision.keep, decision.forced)
            self._bill(j, request)
            if session.kinds[seen:seen + 1] == [ASSISTANT]:
                self._arrive(seen)            # the reply joins the context
                cursor = seen + 1
        if session.requests and self.policy.recorded:
            for at, boundary in sorted(boundaries.items()):
                if at >= cursor:             # compacted after the last request
                    self._recorded_boundary(session.requests[-1],
                                            next(recorded_summaries, None), boundary)
        return self.result

    def _arrive(self, i: int) -> None:
        kinds = self.setting.session.kinds
        if self.skip_context and kinds[i] == CONTEXT:
            return
        self.skip_context = False
        if kinds[i] == USER:
            self.turns += 1
        self.context.append(i)

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
        drop = len(self.context) - keep
        tokens = self.context_tokens()
        dropped = float(sum(tokens[:drop]))
        model = recorded.model if recorded is not None and recorded.model else \
            self.last_model if boundary is not None and self.last_model else request.model
        prices = s.prices(model)
        time = recorded.time if recorded is not None and recorded.time is not None \
            else boundary.time if boundary is not None and boundary.time is not None \
            else request.time
        if recorded is not None and recorded.usage is not None:
            u = recorded.usage                 # the recorded summary request, as billed
            billed = self._charge(len(self.result.compactions), time, model, u.prompt, u.read,
                                  prices, "1h" if u.write_1h > u.write_5m else "5m",
                                  s.S, uncached=u.input, write_1h=u.write_1h)
        else:
            prompt = self.prefix_now(request) + dropped + L_INSTR
            read = self._readable(model, time, prompt)
            billed = self._charge(len(self.result.compactions), time, model, prompt, read,
                                  prices, self.ttl, s.S)
            billed.billed = not self.policy.recorded
        self._used(model, time, billed.prompt, billed.ttl)
        self.result.compactions.append(Compacted(len(self.result.requests), time, drop, dropped,
                                              keep, forced, billed))
        self.context = self.context[drop:]
        if not self.policy.recorded:
            self.summary = s.S
            self.diverged = True
        for cache in self.caches.values():    # only the fixed prefix is still the same
            cache.valid = min(cache.valid, s.prefix(request, self.policy.recorded))

    def _readable(self, model: str | None, time: float | None, prompt: float,
                  index: int | None = None) -> float:
        """What a request of ``prompt`` tokens reads from ``model``'s cache now."""
        cache = self.caches.get(model)
        read = 0.0
        if cache is not None:
            warm = time is None or cache.last is None or \
                time - cache.last <= parse_ttl(cache.ttl)
            read = min(cache.valid, prompt) if warm else 0.0
        if index is not None:
            if index in self.events.ceiling:
                read = min(read, self.events.ceiling[index])
            if index in self.events.floor:
                shared = prompt if not self.diverged else \
                    min(prompt, self.setting.prefix(self.setting.session.requests[index],
                                                    self.policy.recorded))
                read = max(read, min(self.events.floor[index], shared))
        return read

    def _charge(self, index: int, time: float | None, model: str | None, prompt: float,
                read: float, prices: Prices, ttl: str, output: float,
                uncached: float = 0.0, write_1h: float | None = None) -> Billed:
        """Reads at the read price, writes at the write price of their TTL, the uncached
        rest at the input price; the output at the output price."""
        written = max(0.0, prompt - read - uncached)
        if write_1h is not None:               # a recorded split of 5-minute and 1-hour
            cost = (read * prices.cache_read + (written - write_1h) * prices.write("5m")
                    + write_1h * prices.write("1h") + uncached * prices.input) / 1e6
        else:
            cost = (read * prices.cache_read + written * prices.write(ttl)
                    + uncached * prices.input) / 1e6
        return Billed(index, time, model, prompt, read, written, ttl, cost, output,
                      output * prices.output / 1e6)

    def _used(self, model: str | None, time: float | None, prompt: float, ttl: str) -> None:
        self.caches[model] = Cache(prompt, time, ttl)

    def _bill(self, j: int, request: Request) -> None:
        s = self.setting
        self.ttl = s.ttl_of(request, self.ttl)
        prompt = self.prompt_now(request)
        read = self._readable(request.model, request.time, prompt, j)
        output = float(request.usage.output) if request.usage is not None else \
            self._reply_tokens(request)
        billed = self._charge(j, request.time, request.model, prompt, read,
                              s.prices(request.model), self.ttl, output)
        self._used(request.model, request.time, prompt, self.ttl)
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


def replay_session(setting: Setting, policies: list[str]) -> list[Run]:
    """Every policy over one session (the recorded events found once, shared by all)."""
    return [Replay(setting, make_policy(p), setting.events).run() for p in policies]


def recorded_bill(session: Session, compaction_usage: list[Request],
                  prices_for) -> dict[str, object]:
    """The bill read straight from the usage: the main chain plus the compaction requests;
    writes without a TTL split count as 5-minute writes."""
    requests = [r for r in session.requests if r.usage is not None] + \
        [r for r in compaction_usage if r.usage is not None]
    sums = {"input_tokens": 0, "cache_read_tokens": 0, "cache_write_5m_tokens": 0,
            "cache_write_1h_tokens": 0, "output_tokens": 0}
    input_cost = output_cost = 0.0
    models: list[str] = []
    for r in requests:
        u = r.usage
        assert u is not None
        p = prices_for(r.model)
        sums["input_tokens"] += u.input
        sums["cache_read_tokens"] += u.read
        sums["cache_write_5m_tokens"] += u.write_5m
        sums["cache_write_1h_tokens"] += u.write_1h
        sums["output_tokens"] += u.output
        input_cost += (u.input * p.input + u.read * p.cache_read + u.write_5m * p.write("5m")
                       + u.write_1h * p.write("1h")) / 1e6
        output_cost += u.output * p.output / 1e6
        if r.model and r.model not in models:
            models.append(r.model)
    return {"requests": len(requests), "compactions": len(session.compactions),
            "models": models, **sums, "input_cost": input_cost, "output_cost": output_cost}


def setting_for(session: Session, params: Mapping[str, object], model: Model, whole: bool,
                keep_tokens: int, cache_ttl: str | None, price: str | None,
                env: Mapping[str, str] | None = None) -> Setting:
    """The replay's setting, from the same sources as the decision (library.session_ask)."""
    from ..library import session_ask
    from ..sessions.subagents import compaction_requests
    question = session_ask(session, params, model, env, keep="none" if whole else "best",
                           price=price, cache_ttl=cache_ttl)
    values = question.ask.values
    usage = compaction_requests(session.path) if session.path and \
        session.format == "claude-code" else []
    return Setting(session, values, model, whole, keep_tokens, cache_ttl, price,
                   values["S"].num, values["max_context"].num, usage)


__all__ = ["Setting", "Replay", "Run", "make_policy", "replay_session", "recorded_bill",
           "setting_for", "native_values"]
