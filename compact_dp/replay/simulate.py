"""Replay: what a compaction policy would have cost over a recorded session.

A conversation file is a recording of the session that grew it, line by line.  Replay
grows it again and, before every LLM call (after each line that is not an assistant
reply), lets each policy look at the context *as that policy has shaped it* and compact.
Every request is then billed with a plain prompt-cache model that shares nothing with the
decision's formula, so the two can be checked against each other.

Billing (all $/MTok prices from the parameters):

* a request's input = prefix + context, where prefix = V (+ S once a summary exists) and
  context = the tokens of the lines currently kept;
* the part equal to the previous request's input is cached (p_cache) — the context only
  grew since — the rest is uncached (p_input); the first request is uncached, and right
  after a compaction only the fixed prefix V is cached;
* output = the tokens of the assistant line that answers the call (none if no reply was
  recorded), at p_out;
* a summary request costs (V + H) cached + 70 uncached input and S output, H being the
  tokens summarised.
"""

from __future__ import annotations

from ..core.awkvalue import AwkValue
from ..core.decision import turn_keep
from ..core.models import Model
from ..core.scan import Conversation, is_user_line, open_source, read_records, token_size
from ..engine import Ask, PolicyAsk, answer
from ..errors import InputError, UsageError

ASSISTANT_ROLE = b'"role":"assistant"'
SUMMARY_INSTRUCTION = 70          # the summary request's own uncached instruction tokens


class Line:
    __slots__ = ("tokens", "user", "assistant")

    def __init__(self, tokens: int, user: bool, assistant: bool):
        self.tokens, self.user, self.assistant = tokens, user, assistant


def load_session(path: str) -> list[Line]:
    """The recorded lines with what replay needs: token size, user line?, assistant reply?"""
    lines: list[Line] = []
    stream = open_source(path, None)
    try:
        for raw in read_records(stream):
            lines.extend(Line(token_size(len(x)), is_user_line(x), ASSISTANT_ROLE in x)
                         for x in raw)
    except OSError as e:
        raise InputError(f"{path}: {e.strerror or e}") from None
    finally:
        stream.close()
    return lines


# --- policies ------------------------------------------------------------------------------

class Policy:
    """Decides, before a call, how many context lines to keep (None = do not compact)."""

    name = "policy"

    def keep(self, state: "RunState") -> int | None:
        raise NotImplementedError


class DpPolicy(Policy):
    """This tool's decision plus the forced-compaction fallback (docs/policy.md, trigger auto)."""

    def __init__(self, values: dict, model: Model):
        self.name = "dp"
        self.values = values
        self.model = model

    def keep(self, state):
        v = dict(self.values)
        for name, x in (("t", state.user_turns), ("total_requests", state.requests),
                        ("total_compact", state.compactions),
                        ("total_input", state.total_input)):
            v[name] = AwkValue.number(x)
        result = answer(Ask(self.model, v, PolicyAsk("auto", state.last_input)),
                        state.conversation()).policy
        assert result is not None
        state.forced = result.forced
        return result.keep if result.action == "compact" else None


class NeverPolicy(Policy):
    """Compact only when the request would not fit the window; keep by turn-keep."""

    def __init__(self, max_context: float, ratio: float):
        self.name = "never"
        self.max_context, self.ratio = max_context, ratio

    def keep(self, state):
        if state.prefix + state.context_tokens <= self.max_context:
            return None
        state.forced = True
        return turn_keep(self.ratio, state.conversation()).keep


class ThresholdPolicy(Policy):
    """The rule most agents use: at P % of the window keep the last N tokens, cut back to a
    user line."""

    def __init__(self, percent: float, max_context: float, keep_tokens: int):
        self.name = f"threshold:{percent:g}"
        self.limit = max_context * percent / 100
        self.keep_tokens = keep_tokens

    def keep(self, state):
        if state.prefix + state.context_tokens < self.limit:
            return None
        kept, k = 0, 0
        for line in reversed(state.lines):
            if kept >= self.keep_tokens:
                break
            kept += line.tokens
            k += 1
        while 0 < k < len(state.lines) and not state.lines[-k].user:
            k += 1                    # grow back until the window starts on a user line
        return k


def make_policy(spec: str, values: dict, model: Model, keep_tokens: int) -> Policy:
    """``dp``, ``never`` or ``threshold:P``."""
    max_context = values["max_context"].num
    if spec == "dp":
        return DpPolicy(values, model)
    if spec == "never":
        return NeverPolicy(max_context, values["min_keep_ratio"].num)
    if spec.startswith("threshold:"):
        try:
            percent = float(spec.split(":", 1)[1])
        except ValueError:
            percent = -1.0
        if not 0 < percent <= 100:
            raise UsageError(f"policy {spec!r}: P must be a percentage in (0, 100]")
        return ThresholdPolicy(percent, max_context, keep_tokens)
    raise UsageError(f"unknown policy {spec!r} (dp, never or threshold:P)")


# --- the simulation ------------------------------------------------------------------------

class Prices:
    """The billing inputs, as plain floats."""

    def __init__(self, V: float, S: float, p_input: float, p_cache: float, p_out: float):
        self.V, self.S = V, S
        self.p_input, self.p_cache, self.p_out = p_input, p_cache, p_out

    @classmethod
    def from_values(cls, values: dict) -> "Prices":
        return cls(*(values[n].num for n in ("V", "S", "p_input", "p_cache", "p_out")))


class Request:
    """One billed LLM call."""

    __slots__ = ("line", "input", "context", "cached", "uncached", "output", "cost")

    def __init__(self, line, input, context, cached, uncached, output, cost):
        self.line, self.input, self.context = line, input, context
        self.cached, self.uncached, self.output, self.cost = cached, uncached, output, cost


class Compaction:
    """One compaction: before the request with index ``request`` (0-based)."""

    __slots__ = ("request", "line", "dropped_lines", "dropped_tokens", "kept_lines",
                 "forced", "cost")

    def __init__(self, request, line, dropped_lines, dropped_tokens, kept_lines, forced, cost):
        self.request, self.line = request, line
        self.dropped_lines, self.dropped_tokens = dropped_lines, dropped_tokens
        self.kept_lines, self.forced, self.cost = kept_lines, forced, cost


class RunState:
    """What a policy sees before a call: the kept lines and the agent's running stats."""

    def __init__(self, prices: Prices):
        self.lines: list[Line] = []
        self.context_tokens = 0
        self.summary = False
        self.prices = prices
        self.user_turns = 0          # real user lines so far (t)
        self.requests = 0            # assistant replies so far (total_requests)
        self.compactions = 0
        self.total_input = 0.0       # input tokens of the past requests
        self.last_input = 0.0        # input tokens of the previous request
        self.forced = False

    @property
    def prefix(self) -> float:
        return self.prices.V + (self.prices.S if self.summary else 0)

    def conversation(self) -> Conversation:
        conv = Conversation()
        conv.sizes.extend(x.tokens for x in self.lines)
        conv.users.extend(i for i, x in enumerate(self.lines) if x.user)
        return conv


class Run:
    """One policy over one session: its requests and compactions, and their totals."""

    def __init__(self, policy: str):
        self.policy = policy
        self.requests: list[Request] = []
        self.compactions: list[Compaction] = []

    @property
    def total_cost(self) -> float:
        return sum(r.cost for r in self.requests) + self.summary_cost

    @property
    def summary_cost(self) -> float:
        return sum(c.cost for c in self.compactions)

    @property
    def peak_context(self) -> float:
        return max((r.input for r in self.requests), default=0)

    @property
    def mean_context(self) -> float:
        return sum(r.input for r in self.requests) / len(self.requests) if self.requests else 0

    @property
    def cache_hit_share(self) -> float:
        total = sum(r.input for r in self.requests)
        return sum(r.cached for r in self.requests) / total if total else 0.0

    def summary(self) -> dict:
        return {"policy": self.policy, "requests": len(self.requests),
                "compactions": len(self.compactions),
                "forced": sum(c.forced for c in self.compactions),
                "total_cost": self.total_cost, "summary_cost": self.summary_cost,
                "peak_context": self.peak_context, "mean_context": self.mean_context,
                "cache_hit_share": self.cache_hit_share}


def request_cost(prices: Prices, cached: float, uncached: float, output: float) -> float:
    return (cached * prices.p_cache + uncached * prices.p_input + output * prices.p_out) / 1e6


def summary_cost(prices: Prices, dropped_tokens: float) -> float:
    return request_cost(prices, prices.V + dropped_tokens, SUMMARY_INSTRUCTION, prices.S)


def simulate(session: list[Line], policy: Policy, prices: Prices) -> Run:
    """Grow the session line by line under one policy, billing every call."""
    run = Run(policy.name)
    state = RunState(prices)
    cache_valid = False            # does the previous request's input prefix this one?
    for i, line in enumerate(session):
        state.lines.append(line)
        state.context_tokens += line.tokens
        if line.user:
            state.user_turns += 1
        if line.assistant:
            state.requests += 1
            continue
        state.forced = False
        keep = policy.keep(state)
        if keep is not None and 0 <= keep < len(state.lines):
            dropped = state.lines[:len(state.lines) - keep]
            dropped_tokens = sum(x.tokens for x in dropped)
            run.compactions.append(Compaction(len(run.requests), i + 1, len(dropped),
                                              dropped_tokens, keep, state.forced,
                                              summary_cost(prices, dropped_tokens)))
            state.lines = state.lines[len(dropped):]
            state.context_tokens -= dropped_tokens
            state.summary = True
            state.compactions += 1
            cache_valid = False
        input_tokens = state.prefix + state.context_tokens
        if not run.requests:
            cached = 0.0
        elif cache_valid:
            cached = min(state.last_input, input_tokens)
        else:
            cached = min(prices.V, input_tokens)
        reply = session[i + 1].tokens if i + 1 < len(session) and session[i + 1].assistant \
            else 0
        uncached = input_tokens - cached
        run.requests.append(Request(i + 1, input_tokens, state.context_tokens, cached,
                                    uncached, reply, request_cost(prices, cached, uncached,
                                                                  reply)))
        state.total_input += input_tokens
        state.last_input = input_tokens
        cache_valid = True
    return run


def replay_session(path: str, policies: list[str], values: dict, model: Model,
                   keep_tokens: int) -> dict:
    """Every policy over one recorded session (picklable, for --jobs)."""
    session = load_session(path)
    prices = Prices.from_values(values)
    runs = [simulate(session, make_policy(p, values, model, keep_tokens), prices)
            for p in policies]
    return {"session": path, "lines": len(session), "runs": runs}
