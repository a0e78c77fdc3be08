"""The normalised session every format becomes (docs/formats.md).

* **messages** in file order, each one a kind — a human turn (``user``), a tool result
  (``tool``), the model's output (``assistant``) or other context the client added
  (``context``: meta lines, command output, a compaction's summary) — its content bytes and
  its tokens;
* **requests** — the API calls — each with the messages it saw (``messages[:seen]``), its
  time, model and recorded usage (when the format records it);
* **compactions**, each starting a new context at a message index; the messages from the
  last one on are the **live context** the decision works on.

A session is read in one of two shapes.  A *full* session keeps every message and request
(replay and ``--keep best`` need them).  A *summary* keeps only the totals the decision of
an agent that summarises the whole history needs — counts, the live context's size, the
last request — so the status line can read a transcript of any length on from where it
stopped, holding a few numbers.  Both are made by the same ``recorder.Recorder`` from the
same events, so their totals are the same numbers.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    # The saved state of a reader, its recorder or its sizer: plain data (marshal), read
    # back only by the code that wrote it (incremental.CACHE_VERSION), one value per name
    # of the class's FIELDS: its shape is known by construction, not checked.
    State = dict[str, Any]

USER, TOOL, ASSISTANT, CONTEXT = "user", "tool", "assistant", "context"
KINDS = (USER, TOOL, ASSISTANT, CONTEXT)


MAX_COUNT = 10 ** 15           # no request holds a quadrillion tokens: above is garbage


def count(x: object) -> int:
    """A token count from a file: a positive whole number below MAX_COUNT (an int, or a
    float or numeric string holding one, rounded); anything else 0."""
    if type(x) is int:                         # the usual case, first
        return x if 0 < x < MAX_COUNT else 0
    if isinstance(x, bool):
        return 0
    if isinstance(x, str):
        try:
            x = float(x)
        except ValueError:
            return 0
    if isinstance(x, float):
        return int(round(x)) if x == x and 0 < x < MAX_COUNT else 0
    return x if isinstance(x, int) and 0 < x < MAX_COUNT else 0


MAX_LINE = 16 << 20            # a line longer than this is not parsed (bounded memory)
SKIPPED_WORDS = {"not json": "are not JSON",
                 "too long": f"are longer than {MAX_LINE >> 20} MB (not parsed)"}
QUIET = ("sidechain", "synthetic", "duplicate")


def skipped_warnings(skipped: dict[str, int], unit: str = "line(s)") -> list[str]:
    """One warning per kind of line a reader left out (never the quiet ones)."""
    return [f"{n:,} {unit} {SKIPPED_WORDS.get(what, 'are ' + what)} and were skipped"
            for what, n in skipped.items() if n and what not in QUIET]


def write_ttl(write_5m: int, write_1h: int) -> str:
    """The TTL a request's cache writes used: 1h when its 1-hour writes are the larger part
    (the one place this rule is written)."""
    return "1h" if write_1h > write_5m else "5m"


def prompt_of(input: int, write_5m: int, write_1h: int, read: int) -> int:
    """A request's prompt: its uncached input, its cache writes and its cache reads (the
    output is not part of it).  ``Usage.prompt`` and the recorder's rows both count it so."""
    return input + write_5m + write_1h + read


def seen_after(request: Request, done: int) -> int:
    """How many messages ``request`` saw, given that the requests before it saw ``done``: a
    later request never sees less (a side request's own ``seen`` may lag the main line's),
    so the messages that arrived for it are ``messages[done:seen_after(...)]``."""
    return max(request.seen, done)


class Usage:
    """One request's recorded tokens: uncached input, cache writes (5-minute and 1-hour
    TTL), cache reads, output.  The prompt is the first four."""

    __slots__ = ("input", "write_5m", "write_1h", "read", "output")

    def __init__(self, input: int = 0, write_5m: int = 0, write_1h: int = 0, read: int = 0,
                 output: int = 0):
        self.input, self.write_5m, self.write_1h = input, write_5m, write_1h
        self.read, self.output = read, output

    @property
    def prompt(self) -> int:
        return prompt_of(self.input, self.write_5m, self.write_1h, self.read)

    @property
    def written(self) -> int:
        return self.write_5m + self.write_1h

    @property
    def ttl(self) -> str:
        return write_ttl(self.write_5m, self.write_1h)

    def numbers(self) -> list[int]:
        return [self.input, self.write_5m, self.write_1h, self.read, self.output]

    def __repr__(self) -> str:
        return (f"Usage(input={self.input}, write_5m={self.write_5m}, "
                f"write_1h={self.write_1h}, read={self.read}, output={self.output})")


def key_of(ident: object) -> int:
    """A request's key, from what identifies it (a Claude Code response's id, a Codex
    request's place in its session), as a 64-bit number small to remember: two
    checksums of its ``repr`` (a collision needs both).  Keys count a request once across
    the files of a run (history.each_request_once)."""
    import zlib
    raw = repr(ident).encode("utf-8", "surrogatepass")
    return zlib.crc32(raw) << 32 | zlib.adler32(raw)


class Request:
    """One API request: it saw ``messages[:seen]`` (of the whole file), in the context
    that began after ``segment`` compactions."""

    __slots__ = ("seen", "time", "llm", "usage", "segment", "key", "adjust", "sent", "done",
                 "side")

    def __init__(self, seen: int, time: float | None, llm: str | None,
                 usage: Usage | None, segment: int = 0, key: int | None = None):
        self.seen, self.time, self.llm, self.usage = seen, time, llm, usage
        self.segment = segment
        self.key = key          # the response's id, to count it once across files
        self.adjust = 0         # tokens its prompt changed by beyond V and new messages
        # when it was sent (the last line before its response) and when its response
        # ended (its last line): the cache's clock; ``time`` is its response's first line
        self.sent: float | None = time
        self.done: float | None = time
        # a side request (Codex): it does not carry the main context, and is billed as
        # recorded under every policy
        self.side = False

    def __repr__(self) -> str:
        return f"Request(seen={self.seen}, llm={self.llm!r}, usage={self.usage!r})"


class Compaction:
    """A compaction: the context starts again at message ``at``."""

    __slots__ = ("at", "time")

    def __init__(self, at: int, time: float | None):
        self.at, self.time = at, time


class Aftermath:
    """What one recorded compaction left behind: its summary's tokens; the context it
    left before any new message (``left``: the new V, the summary and what the agent
    re-injected); and the first request after it — its prompt and how much of it was still
    read from the cache.  The replay and the decision's ② use these figures
    (docs/replay.md)."""

    __slots__ = ("summary", "left", "first_prompt", "first_read")

    def __init__(self, summary: int | None, left: int | None, first_prompt: int | None,
                 first_read: int | None):
        self.summary, self.left = summary, left
        self.first_prompt, self.first_read = first_prompt, first_read

    def __repr__(self) -> str:
        return (f"Aftermath(summary={self.summary}, left={self.left}, "
                f"first_prompt={self.first_prompt}, first_read={self.first_read})")


class Mark:
    """What a compaction recorded of itself (Claude Code's ``compactMetadata``): what set it
    off (``auto`` or ``manual``), the context's tokens when it did, how long it took, and
    how many messages it kept (``preservedSegment``; 0: none); None where not recorded.
    ``gap``: the seconds from the line before it to its own (the agent's clock; every
    format), what a compaction the agent started by itself took when no duration says."""

    __slots__ = ("trigger", "pre_tokens", "seconds", "kept", "gap")

    def __init__(self, trigger: str | None = None, pre_tokens: int | None = None,
                 seconds: float | None = None, kept: int | None = None,
                 gap: float | None = None):
        self.trigger, self.pre_tokens, self.seconds, self.kept = (trigger, pre_tokens,
                                                                   seconds, kept)
        self.gap = gap

    def __repr__(self) -> str:
        return (f"Mark(trigger={self.trigger!r}, pre_tokens={self.pre_tokens}, "
                f"seconds={self.seconds}, kept={self.kept}, gap={self.gap})")


class Session:
    """A session file, normalised (see the module docstring for full and summary)."""

    def __init__(self, format: str, path: str | None = None, full: bool = True):
        self.format = format
        self.path = path
        self.full = full
        # per message and per request: full sessions only
        self.kinds: list[str] = []
        self.nbytes: list[int] = []             # content bytes
        self.tokens: list[int] = []
        # what a reader that stopped before the request sizing each message estimated
        # it at (sizing.Sizer.estimates; empty: the sizes themselves)
        self.estimates: list[int] = []
        self.requests: list[Request] = []
        self.compactions: list[Compaction] = []
        self.touches: list[tuple[int, float]] = []   # unanswered prompts: (before request,
        #                                              when sent)
        self.users_v2: list[int] | None = None  # bash-agent: v2's user-line test
        # totals: every shape
        self.request_count = 0
        self.live_request_count = 0             # ... of them since the last compaction
        self.compaction_count = 0
        self.user_turns = 0                     # human turns in the whole file
        self.last_kind: str | None = None       # the kind of the file's last message
        self.has_usage = False
        self.input_tokens: int | None = None    # recorded prompt tokens, summed
        self.output_tokens = 0
        self.llms: list[str] = []               # LLM ids, in order of first use
        self.llm: str | None = None             # the last request's (the next one's, likely)
        self.last_request: Request | None = None
        self.last_times: dict[str, float] = {}  # model ("": any) -> when its last response
        #                                         ended (the cache's clock)
        self.recorded_ttl: str | None = None    # the last cache write's TTL
        self.live_start = 0
        self.live_messages = 0
        self.live_tokens = 0
        self.live_user_count = 0
        self.token_source = "bytes"             # "usage" or "bytes"
        self.prefix: float | None = None        # V of the live context
        self.segment_prefixes: list[float | None] = []   # V of each context
        self.summary_tokens: int | None = None  # the last compaction's summary
        self.aftermath: list[Aftermath] = []    # per compaction
        self.warnings: list[str] = []
        # where it was: the agent's session id, its working folder, its first timestamp
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.started: float | None = None
        self.window: int | None = None          # the context window the agent reported
        self.windows: dict[str, int] = {}       # ... per model (Codex reports it)
        self.auto_limit: int | None = None      # the auto-compaction limit it reported
        self.version: str | None = None         # the agent's version, as the file names it
        self.write_counts = True                # its usage counts cache writes apart (a
        #                                         Codex rollout before GPT-5.6 does not)
        # what the session shows of the world it ran in: the largest prompt per model (main
        # chain), its cache writes by TTL, and what each compaction recorded of itself
        self.peaks: dict[str, int] = {}          # "" for requests that name no model
        self.passed = 0                          # the largest prompt followed in its context
        self.writes_5m = self.writes_1h = 0
        self.marks: list[Mark] = []             # per compaction, as ``aftermath``

    TOTALS = ("format", "request_count", "live_request_count", "compaction_count",
              "user_turns", "has_usage",
              "input_tokens", "output_tokens", "llms", "llm", "last_times",
              "recorded_ttl", "live_start", "live_messages", "live_tokens",
              "live_user_count", "token_source", "prefix", "segment_prefixes",
              "summary_tokens", "last_request_tokens", "session_id", "cwd", "started",
              "window", "last_kind", "windows", "auto_limit", "version", "peaks",
              "passed", "writes_5m", "writes_1h", "write_counts")

    def totals(self) -> dict[str, object]:
        """What every shape of a session knows, the same for a full one and a summary."""
        out = {name: getattr(self, name) for name in self.TOTALS}
        out["aftermath"] = [(a.summary, a.left, a.first_prompt, a.first_read)
                            for a in self.aftermath]
        out["marks"] = [(m.trigger, m.pre_tokens, m.seconds, m.kept, m.gap)
                        for m in self.marks]
        last = self.last_request
        out["last_request"] = None if last is None else (last.seen, last.time, last.llm)
        return out

    # --- the live context (after the last compaction) -------------------------------------

    @property
    def last_request_tokens(self) -> int | None:
        """The last request's recorded prompt (uncached + written + read)."""
        last = self.last_request
        return last.usage.prompt if last is not None and last.usage is not None else None

    def last_time(self, model: str | None) -> float | None:
        """When the last response of ``model`` (any model: None) ended."""
        return self.last_times.get(model or "")

    def live_users(self) -> list[int]:
        """Indices (in the live context) of its human turns (full sessions)."""
        start = self.live_start
        return [i - start for i in range(start, len(self.kinds)) if self.kinds[i] == USER]

    def arrivals(self) -> list[tuple[int, Request, int, int]]:
        """Each request ``j`` with the messages that arrived for it, ``kinds[start:end]``:
        those it saw beyond the requests before it (``end = seen_after(request, start)``).
        (A list, not a generator: compiled by mypyc, the generator failed when a caller's
        zip left it unfinished.)"""
        out: list[tuple[int, Request, int, int]] = []
        done = 0
        for j, r in enumerate(self.requests):
            seen = seen_after(r, done)
            out.append((j, r, done, seen))
            done = seen
        return out

    def turn_requests(self) -> list[int]:
        """The requests a human turn began before — the turn ends, where a user could
        type /compact instead — from the second request on (something to compact by
        then).  Full sessions."""
        return [j for j, _, start, end in self.arrivals() if j and USER in self.kinds[start:end]]

    @classmethod
    def of_lines(cls, format: str, kinds: list[str], tokens: list[int],
                 requests: list[Request], path: str | None = None) -> Session:
        """A full session of lines the scanner sized, with no usage, no model and no
        compaction (bash-agent): its totals are plain counts."""
        s = cls(format, path)
        s.kinds, s.tokens, s.requests = kinds, tokens, requests
        s.nbytes = [0] * len(kinds)
        s.request_count = s.live_request_count = len(requests)
        s.user_turns = s.live_user_count = sum(1 for k in kinds if k == USER)
        s.live_messages, s.live_tokens = len(kinds), sum(tokens)
        s.last_request = requests[-1] if requests else None
        s.last_kind = kinds[-1] if kinds else None
        return s
