"""Per-message token sizes, fixed as the session is read: from the recorded prompts
(``usage``) or from the content (``bytes``).

The rules are one forward fold (``Sizer``), so a session read whole and a live transcript
read a piece at a time get the same numbers, and a reader that keeps no message at all
(the status line's summary) still knows the live context's size.  A message's size is fixed
when the first request that sees it is recorded; until then it is *pending*.

With ``usage``, within each context (the messages between two compactions):

* the first request's prompt is the fixed prefix V (system prompt, tools, whatever the
  client adds that the file does not show) plus the messages it saw, which are sized at the
  tokens per byte the session has shown so far (below; the bytes rule before it has shown
  any); V is what remains (at least 0: the messages are scaled down if they alone exceed
  the prompt);
* between two requests the prompt grew by g tokens: g is shared among the messages added
  in between, in proportion to their bytes (whole tokens, largest remainders first);
* a size, once given, never changes.  What a prompt changed by beyond its new messages is
  the request's *adjustment* of the context: a growth with no new message, or, when a
  prompt shrank without a compaction (a resumed session re-sent, old tool results cleared,
  Codex dropping the last turn's reasoning), a removal — the new messages are sized at the
  tokens per byte and the context gives up the rest (V only once the context is empty).
  So V, the sizes of the messages a request saw and the adjustments up to it sum to its
  recorded prompt exactly, and a replay re-applies the adjustments to any context;
* messages no request saw are sized at the tokens per byte known when their context ended,
  or when the file did.

The tokens per byte: the growth shared among new messages so far, over their bytes.

With ``bytes``, each message is ``(bytes + 3) // 4 + 1`` tokens of its content, and V is
the first request's prompt less the messages it saw.

A compaction **leaves** the messages that open the new context — the context messages up
to the first other one (Claude Code's summary and what it re-injects), or those the reader
marks (Codex's replacement history).  The last compaction's **summary** is the context
messages among them, at the sizes they were first given.
"""

from __future__ import annotations

from ..core.scan import token_size

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar

    from .session import State

USAGE, BYTES = "usage", "bytes"
RUN, TEXT = 1, 2        # a pending message: left by the last compaction; of kind context
AT, NBYTES, FLAGS = range(3)   # a pending message's list (plain JSON, saved by the status line)


def share(total: int, weights: list[int]) -> list[int]:
    """Whole numbers in proportion to ``weights`` that sum to ``total`` exactly (the
    largest remainders get the leftover units; equal shares when all weights are 0)."""
    n = len(weights)
    if n < 2:                            # (all of it to one: the usual growth, one message)
        return [total] if n else []
    w = weights if min(weights) >= 0 else [max(0, x) for x in weights]
    whole = sum(w)
    if whole == 0:
        w, whole = [1] * n, n
    parts = [total * x // whole for x in w]
    left = total - sum(parts)
    if left and n == 2:                  # (the next usual: a reply and a tool result)
        parts[0 if total * w[0] % whole >= total * w[1] % whole else 1] += 1
    elif left:
        order = sorted(range(n), key=lambda i: (-(total * w[i] % whole), i))
        for i in order[:left]:
            parts[i] += 1
    return parts


class Sizer:
    """The sizing fold.  ``keep``: remember every message's tokens (a full session); else
    only the sums of the live context.  Its state is plain data (``state()``), so a reader
    can be saved after any line and resumed."""

    FIELDS: ClassVar[tuple[str, ...]] = (
        "mode", "keep", "tokens", "n", "grown", "weighed", "start", "started", "prefix",
        "have", "last_prompt", "last_seen", "pending", "run_open", "summary", "left",
        "segments", "estimates")

    def __init__(self, mode: str = USAGE, keep: bool = True):
        self.mode, self.keep = mode, keep
        self.tokens: list[int] = []          # per message (keep)
        # per message (keep): its size as a reader that stopped before the request that
        # sized it would have estimated it (the same as its size but where that request's
        # growth said otherwise): what a decision at that moment saw (replay's dp asks with
        # it, as the command on the transcript cut there does)
        self.estimates: list[int] = []
        self.n = 0                           # messages so far
        self.grown = self.weighed = 0        # growth shared among new messages, their bytes
        # the current context
        self.start = 0                       # its first message
        self.started = False                 # its first request has been sized
        self.prefix: int | None = None       # its V
        self.have = 0                        # tokens of its sized messages
        self.last_prompt = 0
        self.last_seen = 0
        self.pending: list[list[int]] = []   # [AT index, NBYTES, RUN | TEXT FLAGS]
        self.run_open = True                 # still in the context run that opens it
        self.summary = 0                     # tokens of that run
        self.left: int | None = None         # V + the run's part its first request saw
        self.segments: list[list[int | None]] = []   # closed: [V, summary, left]

    def state(self) -> State:
        return {name: getattr(self, name) for name in self.FIELDS}

    @classmethod
    def from_state(cls, state: State) -> Sizer:
        sizer = cls()                      # (then every field as saved)
        for name in cls.FIELDS:
            setattr(sizer, name, state[name])
        return sizer

    @property
    def per_byte(self) -> float | None:
        return self.grown / self.weighed if self.grown and self.weighed else None

    def estimate(self, nbytes: int, per_byte: float | None) -> int:
        """A message no request has sized yet."""
        if self.mode == BYTES or per_byte is None:
            return token_size(nbytes)
        return round(nbytes * per_byte)

    # --- events ---------------------------------------------------------------------------

    def message(self, context: bool, nbytes: int, left: bool | None = None) -> None:
        """A new message; ``context``: of kind context; ``left``: part of what the last
        compaction left (None: the context messages that open a context are)."""
        in_run = self.run_open and context if left is None else left
        self.run_open = in_run
        self.pending.append([self.n, nbytes, (RUN if in_run else 0) | (TEXT if context else 0)])
        self.n += 1
        if self.keep:
            self.tokens.append(0)
            self.estimates.append(0)

    def add_bytes(self, index: int, nbytes: int) -> None:
        """More bytes of message ``index``, which counts while no request has sized it (a
        response's blocks arrive one line each, tool results between them)."""
        for m in reversed(self.pending):
            if m[AT] == index:
                m[NBYTES] += nbytes
                return
            if m[AT] < index:
                return

    def request(self, seen: int, prompt: int | None) -> int:
        """A request that saw ``messages[:seen]``, with its recorded prompt (None: no
        usage, which sizes nothing).  Returns its *adjustment*: the tokens its prompt
        changed by beyond V and the sizes of the messages it saw first (a growth with no
        new message, a removal), which a replay applies to any context at this request."""
        now = min(max(seen, self.last_seen), self.n)
        if self.mode == BYTES:
            self._settle(now, [token_size(m[NBYTES]) for m in self._seen_now(now)])
            if not self.started:
                self.started = True
                self.prefix = None if prompt is None else max(0, prompt - self.have)
            return 0
        if prompt is None:
            return 0
        new = self._seen_now(now)
        adjust = 0
        if not self.started:
            self.started = True
            per_byte = self.per_byte
            estimates = [self.estimate(m[NBYTES], per_byte) for m in new]
            guessed = list(estimates) if self.keep else None
            if sum(estimates) <= prompt:
                self.prefix = prompt - sum(estimates)
            else:                            # the messages alone exceed the prompt
                self.prefix, estimates = 0, share(prompt, estimates)
            self.left = self.prefix + sum(e for e, m in zip(estimates, new) if m[FLAGS] & RUN)
            self._settle(now, estimates, new, guessed)
        else:
            growth = prompt - self.last_prompt
            if growth >= 0 and new:
                nbytes = [m[NBYTES] for m in new]
                per_byte = self.per_byte         # (what was known before this request)
                guessed = [self.estimate(b, per_byte) for b in nbytes] if self.keep \
                    else None
                if growth > 0:
                    self.grown += growth
                    self.weighed += sum(nbytes)
                self._settle(now, share(growth, nbytes), new, guessed)
            elif growth >= 0:                # grew, with no new message
                self.have += growth
                adjust = growth
            else:                            # shrank: the new messages at their estimate,
                per_byte = self.per_byte     # and the rest a removal from the context
                estimates = [self.estimate(m[NBYTES], per_byte) for m in new]
                self._settle(now, estimates, new)
                adjust = -self._remove(sum(estimates) - growth)
        self.last_prompt = prompt
        return adjust

    def compaction(self) -> None:
        """A new context begins with the next message; the old one's pending messages are
        sized at the tokens per byte known now."""
        self._close()
        self.segments.append([self.prefix, self.summary, self.left])
        self.start = self.last_seen = self.n
        self.started = False
        self.prefix, self.have, self.last_prompt = None, 0, 0
        self.run_open, self.summary, self.left = True, 0, None

    def finish(self) -> Sizer:
        """The end of the file: the pending messages are estimated."""
        self._close()
        return self

    # --- the steps --------------------------------------------------------------------------

    def _seen_now(self, now: int) -> list[list[int]]:
        """The pending messages a request that saw ``messages[:now]`` sees."""
        k = 0
        while k < len(self.pending) and self.pending[k][AT] < now:
            k += 1
        return self.pending[:k]

    def _settle(self, now: int, sizes: list[int], new: list[list[int]] | None = None,
                guessed: list[int] | None = None) -> None:
        """Fix the sizes of the pending messages before ``now`` (``guessed``: what they
        were estimated at until now, where not their sizes)."""
        new = self._seen_now(now) if new is None else new
        for k, (m, size) in enumerate(zip(new, sizes)):
            if self.keep:
                self.tokens[m[AT]] = size
                self.estimates[m[AT]] = guessed[k] if guessed is not None else size
            if m[FLAGS] == RUN | TEXT:
                self.summary += size
        self.have += sum(sizes)
        del self.pending[:len(new)]
        self.last_seen = max(self.last_seen, now)

    def _remove(self, amount: int) -> int:
        """Take ``amount`` tokens from the context (then from V); returns what the context
        gave."""
        take = min(amount, self.have)
        self.have -= take
        assert self.prefix is not None
        self.prefix = max(0, self.prefix - (amount - take))
        return take

    def _close(self) -> None:
        """Estimate the pending messages at the tokens per byte known now."""
        per_byte = self.per_byte
        self._settle(self.n, [self.estimate(m[NBYTES], per_byte) for m in self.pending])
