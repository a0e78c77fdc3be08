"""What a reader tells about a session, made into a ``Session``: one recorder for every
JSON format, full or summary.

Readers parse lines and call the recorder: a message arrived (``message``; ``grow`` adds
more to it), a request was made (``request``; ``usage`` may still update it until the next
request), a compaction started a new context (``compaction``), a human
turn began (``turn``, for formats that mark turns apart from messages).  The recorder keeps
the totals the decision needs and, for a full session, every message and request; sizes
come from ``sizing.Sizer`` as the events arrive.  Its state is plain data, so the status
line can save it after any complete line and resume on the bytes appended later.
"""

from __future__ import annotations

from .session import (
    CONTEXT,
    USER,
    Aftermath,
    Compaction,
    Mark,
    Request,
    Session,
    Usage,
    prompt_of,
    write_ttl,
)
from .sizing import BYTES, USAGE, Sizer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

    from .session import State

    Row = list[Any]          # a request's row: its fields are named below (SEEN, TIME, …)

TOKEN_MODES = ("auto", USAGE, BYTES)


class Recorder:
    """Events in, a ``Session`` out (``session()``); ``keep``: a full session."""

    FIELDS: ClassVar[tuple[str, ...]] = (
        "format", "keep", "kinds", "nbytes", "requests", "compactions", "touches", "open",
        "request_count", "usage_count", "input_tokens", "output_tokens", "llms", "llm",
        "last", "last_times", "ttl", "user_messages", "turn_events", "live_start",
        "live_users", "live_user_list", "aftermath", "seeking", "sides", "waiting",
        "last_kind", "peaks", "passed", "last_main", "writes", "marks", "segment_start")

    def __init__(self, format: str, tokens: str = "auto", keep: bool = True):
        self.format, self.keep = format, keep
        self.sizer = Sizer(BYTES if tokens == BYTES else USAGE, keep)
        self.kinds: list[str] = []               # per message (keep)
        self.nbytes: list[int] = []
        self.requests: list[Row] = []           # [seen, time, llm, usage, segment, key,
        #                                          sent, done, adjustment] (keep)
        self.compactions: list[tuple[int, float | None]] = []   # (at, time) (keep)
        self.touches: list[tuple[int, float]] = []   # (before request, time) (keep)
        self.open: Row | None = None             # the newest request, still open to usage
        self.request_count = self.usage_count = 0
        self.input_tokens = self.output_tokens = 0
        self.llms: list[str] = []
        self.llm: str | None = None
        self.last: Row | None = None             # the last request, as a row
        self.last_times: dict[str, float] = {}
        self.ttl: str | None = None
        self.user_messages = self.turn_events = 0
        self.live_start = 0
        self.live_users = 0
        self.live_user_list: list[int] = []      # (keep) indices in the live context
        self.aftermath: list[list[int | None]] = []   # [summary, first prompt, first read]
        self.seeking = False                     # the first request after a compaction
        self.sides = format == "codex"           # look for side requests (Codex's)
        self.waiting: list[list[Any]] = []       # requests that may be side requests (ROW, …)
        self.last_kind: str | None = None        # the newest message's kind
        # what the session shows of its world (world.py): the largest prompt per model; the
        # largest prompt another request followed in the same context (the agent did not
        # compact after it); the last main request's [context, prompt]; the cache writes by
        # TTL [5m, 1h]; what each compaction recorded of itself (session.Mark's fields)
        self.peaks: dict[str, int] = {}
        self.passed = 0
        self.last_main: list[int] | None = None
        self.writes = [0, 0]
        self.marks: list[list[Any]] = []
        self.segment_start = 0                   # the requests made before the live context
        # told before every message and request: ``message(kind)``, ``request(seen, time,
        # sent)`` (backtest copies the state there)
        self.watcher: Any = None

    # --- saving and resuming ----------------------------------------------------------------

    def state(self) -> State:
        """Everything, the open request included (its usage may come on the next line)."""
        return {**{name: getattr(self, name) for name in self.FIELDS},
                "sizer": self.sizer.state()}

    @classmethod
    def from_state(cls, state: State) -> Recorder:
        recorder = cls(state["format"])        # (then every field as saved)
        for name in cls.FIELDS:
            setattr(recorder, name, state[name])
        recorder.sizer = Sizer.from_state(state["sizer"])
        return recorder

    # --- events -----------------------------------------------------------------------------

    @property
    def message_count(self) -> int:
        return self.sizer.n

    def message(self, kind: str, nbytes: int, left: bool | None = None) -> int:
        """A new message; returns its index.  ``left``: it is part of what the last
        compaction left (None: by the opening-context rule of ``sizing``)."""
        if self.watcher is not None:
            self.watcher.message(kind)
        index = self.sizer.n
        self.sizer.message(kind == CONTEXT, nbytes, left)
        self.last_kind = kind
        if kind == USER:
            self.user_messages += 1
            self.live_users += 1
            if self.keep:
                self.live_user_list.append(index - self.live_start)
        if self.keep:
            self.kinds.append(kind)
            self.nbytes.append(nbytes)
        return index

    def grow(self, index: int, nbytes: int) -> None:
        """More bytes of message ``index`` (another content block of a response)."""
        if self.keep:
            self.nbytes[index] += nbytes
        self.sizer.add_bytes(index, nbytes)

    def request(self, seen: int, time: float | None, model: str | None,
                usage: list[int] | None, key: int | None = None,
                sent: float | None = None) -> None:
        """A request that saw ``messages[:seen]``; usage is [uncached input, 5-minute
        writes, 1-hour writes, reads, output] or None.  It stays open to ``usage`` (a
        response's later lines) until the next request or compaction."""
        if self.watcher is not None:
            self.watcher.request(seen, time, sent)
        self._close()
        self.open = [min(max(0, seen), self.sizer.n), time, model, usage,
                     len(self.aftermath), key, time if sent is None else sent, time]

    def done(self, time: float | None) -> None:
        """The open request's response went on until ``time`` (its last line)."""
        if self.open is not None and time is not None:
            self.open[DONE] = time

    def usage(self, usage: list[int]) -> None:
        """The open request's usage, from a later line of its response: the first that has
        any, then the largest output count (a response's lines carry mid-stream counts)."""
        if self.open is None:
            return
        if self.open[NUMBERS] is None:
            self.open[NUMBERS] = usage
        elif usage[OUTPUT] > self.open[NUMBERS][OUTPUT]:
            self.open[NUMBERS][OUTPUT] = usage[OUTPUT]

    def turn(self) -> None:
        self.turn_events += 1

    def touch(self, time: float) -> None:
        """A request was sent at ``time`` and answered by nothing (interrupted, failed):
        it used the cache all the same (keep)."""
        if self.keep:
            self.touches.append((self.request_count + (self.open is not None), time))

    def compaction(self, time: float | None, mark: list[Any] | None = None,
                   gap: float | None = None) -> None:
        """A compaction at ``time``; ``mark``: what it recorded of itself (trigger, the
        context's tokens, seconds, messages kept: session.Mark); ``gap``: the seconds
        since the line before it."""
        self._close()
        self._flush(sides=False)             # no side request across a compaction
        self.sizer.compaction()
        self.aftermath.append([None, None, None])
        self.marks.append((mark if mark is not None else [None, None, None, None]) + [gap])
        self.segment_start = self.request_count
        self.seeking = True
        self.live_start = self.sizer.n
        self.live_users = 0
        self.live_user_list = []
        if self.keep:
            self.compactions.append((self.sizer.n, time))

    def _close(self) -> None:
        """The open request is final: count it and size what it saw."""
        row, self.open = self.open, None
        if row is None:
            return
        model, usage, ended = row[LLM], row[NUMBERS], row[DONE]
        self.request_count += 1
        self.last = row
        if ended is not None:
            self.last_times[""] = ended          # any model's
        if isinstance(model, str) and model:
            self.llm = model
            if model not in self.llms:
                self.llms.append(model)
            if ended is not None:
                self.last_times[model] = ended
        prompt = None
        if usage is not None:
            prompt = prompt_of(usage[UNCACHED], usage[WRITE_5M], usage[WRITE_1H], usage[READ])
            self.usage_count += 1
            self.input_tokens += prompt
            self.output_tokens += usage[OUTPUT]
            if usage[WRITE_5M] + usage[WRITE_1H]:
                self.ttl = write_ttl(usage[WRITE_5M], usage[WRITE_1H])
                self.writes[0] += usage[WRITE_5M]
                self.writes[1] += usage[WRITE_1H]
            if self.seeking:
                self.aftermath[-1][1:] = [prompt, usage[READ]]
                self.seeking = False
        self._queue(row, prompt)

    # --- side requests: the ones that do not carry the main context ----------------------------

    def _queue(self, row: Row, prompt: int | None) -> None:
        """Size a closed request — unless it may be a side request (``sides``): a prompt
        under SIDE_LOW of the main one waits, with those after it, until a request within
        SIDE_WINDOW comes back to SIDE_BACK of it (then the low ones were side requests) or
        none does (then they were not)."""
        main = self.sizer.last_prompt
        if self.waiting:
            self.waiting.append([row, prompt])
            if prompt is not None and prompt >= SIDE_BACK * self.waiting[0][MAIN]:
                self._flush(sides=True)
            elif len(self.waiting) > SIDE_WINDOW:
                self._flush(sides=False)
            return
        if self.sides and prompt is not None and self.sizer.started and \
                prompt < SIDE_LOW * main:
            self.waiting = [[row, prompt, main]]
            return
        self._size(row, prompt)

    def _flush(self, sides: bool) -> None:
        waiting, self.waiting = self.waiting, []
        main = waiting[0][MAIN] if waiting else 0
        for item in waiting:
            row, prompt = item[ROW], item[PROMPT]
            if sides and prompt is not None and prompt < SIDE_LOW * main:
                self._size(row, prompt, side=True)
            else:
                self._size(row, prompt)

    def _size(self, row: Row, prompt: int | None, side: bool = False) -> None:
        """Size what a request saw (a side request sizes nothing and changes no context)."""
        adjust = 0 if side else self.sizer.request(row[SEEN], prompt)
        if not side and prompt:
            model = row[LLM] if isinstance(row[LLM], str) else ""
            if prompt > self.peaks.get(model, 0):
                self.peaks[model] = prompt
            last = self.last_main
            if last is not None and last[0] == row[SEGMENT] and last[1] > self.passed:
                self.passed = last[1]
            self.last_main = [row[SEGMENT], prompt]
        if self.keep:
            self.requests.append(row + [adjust, side])

    # --- the session ------------------------------------------------------------------------

    def session(self, path: str | None = None) -> Session:
        """The session as read: the open request is closed and the pending messages are
        estimated (save the state before, to read on later)."""
        self._close()
        self._flush(sides=False)             # no request came back: they were not side
        sizes = self.sizer.finish()
        s = Session(self.format, path, full=self.keep)
        if self.keep:
            s.kinds, s.nbytes, s.tokens = list(self.kinds), list(self.nbytes), sizes.tokens
            s.estimates = sizes.estimates
            s.requests = [_request(r) for r in self.requests]
            s.compactions = [Compaction(at, time) for at, time in self.compactions]
            s.touches = list(self.touches)
        s.request_count = self.request_count
        s.live_request_count = self.request_count - self.segment_start
        s.compaction_count = len(self.aftermath)
        s.user_turns = self.turn_events or self.user_messages
        s.last_kind = self.last_kind
        s.has_usage = self.usage_count > 0
        s.input_tokens = self.input_tokens if s.has_usage else None
        s.output_tokens = self.output_tokens
        s.llms, s.llm = list(self.llms), self.llm
        s.last_request = _request(self.last) if self.last is not None else None
        s.last_times = dict(self.last_times)
        s.recorded_ttl = self.ttl
        s.live_start, s.live_messages = self.live_start, sizes.n - self.live_start
        s.live_tokens, s.live_user_count = sizes.have, self.live_users
        s.token_source = USAGE if s.has_usage and self.sizer.mode == USAGE else BYTES
        contexts = sizes.segments + [[sizes.prefix, sizes.summary, sizes.left]]
        s.segment_prefixes = [None if v is None else float(v) for v, _, _ in contexts]
        s.prefix = next((v for v in reversed(s.segment_prefixes) if v is not None), None)
        s.aftermath = [Aftermath(summary or None, left, first, read)
                       for (_, first, read), (_, summary, left)
                       in zip(self.aftermath, contexts[1:])]
        s.summary_tokens = s.aftermath[-1].summary if s.aftermath else None
        s.peaks, s.passed = dict(self.peaks), self.passed
        s.writes_5m, s.writes_1h = self.writes
        s.marks = [Mark(*m) for m in self.marks]
        return s


# A request's row, a list so that the status line's saved state is plain JSON; the last
# two fields are added when it is sized.  NUMBERS: its usage, as ``request`` takes it.
SEEN, TIME, LLM, NUMBERS, SEGMENT, KEY, SENT, DONE, ADJUST, SIDE = range(10)
UNCACHED, WRITE_5M, WRITE_1H, READ, OUTPUT = range(5)
ROW, PROMPT, MAIN = range(3)                   # a waiting request: its row, prompt, the main's
SIDE_LOW, SIDE_BACK, SIDE_WINDOW = 0.8, 0.9, 8


def _request(row: Row) -> Request:
    usage = row[NUMBERS]
    r = Request(row[SEEN], row[TIME], row[LLM], None if usage is None else Usage(*usage),
                row[SEGMENT], row[KEY])
    r.sent, r.done = row[SENT], row[DONE]
    r.adjust = row[ADJUST] if len(row) > ADJUST else 0
    r.side = bool(row[SIDE]) if len(row) > SIDE else False
    return r
