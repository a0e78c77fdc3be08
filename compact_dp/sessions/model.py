"""The normalised session every format becomes (docs/formats.md).

* **messages** in file order, each one a kind — a human turn (``user``), a tool result
  (``tool``), the model's output (``assistant``) or other context the client added
  (``context``: meta lines, command output, a compaction's summary) — its content bytes and,
  once sized, its tokens;
* **requests** — the API calls — each with the messages it saw (``messages[:seen]``), its
  time, model and recorded usage (when the format records it);
* **compactions**, each starting a new context at a message index; the messages from the
  last one on are the **live context** the decision works on.

Plain classes with slots; the readers keep their state in plain lists so a reader can be
saved and resumed (the status line reads only the bytes appended since its last call).
"""

from __future__ import annotations

USER, TOOL, ASSISTANT, CONTEXT = "user", "tool", "assistant", "context"
KINDS = (USER, TOOL, ASSISTANT, CONTEXT)


MAX_COUNT = 10 ** 15           # no request holds a quadrillion tokens: above is garbage


def count(x: object) -> int:
    """A token count from a file: a positive whole number below MAX_COUNT (an int, or a
    float or numeric string holding one, rounded); anything else 0."""
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


def skipped_warnings(skipped: dict[str, int], unit: str = "line(s)") -> list[str]:
    """One warning per kind of line a reader left out (never the quiet ones)."""
    return [f"{n:,} {unit} {'are not JSON' if what == 'not json' else 'are ' + what} and "
            "were skipped" for what, n in skipped.items() if n and what != "sidechain"
            and what != "synthetic"]


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
        return self.input + self.write_5m + self.write_1h + self.read

    @property
    def written(self) -> int:
        return self.write_5m + self.write_1h

    def __repr__(self) -> str:
        return (f"Usage(input={self.input}, write_5m={self.write_5m}, "
                f"write_1h={self.write_1h}, read={self.read}, output={self.output})")


class Request:
    """One API request: it saw ``messages[:seen]`` (of the whole file), in the context
    that began after ``segment`` compactions."""

    __slots__ = ("seen", "time", "model", "usage", "segment")

    def __init__(self, seen: int, time: float | None, model: str | None,
                 usage: Usage | None, segment: int = 0):
        self.seen, self.time, self.model, self.usage = seen, time, model, usage
        self.segment = segment


class Compaction:
    """A compaction: the context starts again at message ``at``."""

    __slots__ = ("at", "time", "trigger", "pre_tokens")

    def __init__(self, at: int, time: float | None, trigger: str | None,
                 pre_tokens: int | None):
        self.at, self.time, self.trigger, self.pre_tokens = at, time, trigger, pre_tokens


class Session:
    """A whole session file, normalised; ``size()`` (sessions.sizing) fills the tokens."""

    def __init__(self, format: str, kinds: list[str], nbytes: list[int],
                 requests: list[Request], compactions: list[Compaction],
                 turns: int | None = None, path: str | None = None):
        self.format = format
        self.kinds = kinds                      # per message
        self.nbytes = nbytes                    # per message: content bytes
        self.tokens: list[int] = []             # per message, once sized
        self.requests = requests
        self.compactions = compactions
        self.path = path
        self._turns = turns                     # human turns, when the format counts them
        self.token_source = "bytes"             # "usage" or "bytes", once sized
        self.prefix: float | None = None        # V of the live context, once sized
        self.segment_prefixes: list[float | None] = []   # V of each context (usage)
        self.summary_tokens: int | None = None  # the last compaction's summary, once sized
        self.warnings: list[str] = []
        self.users_v2: list[int] | None = None  # bash-agent: v2's user-line test

    # --- counts for the stats and --json --------------------------------------------------

    @property
    def live_start(self) -> int:
        return self.compactions[-1].at if self.compactions else 0

    @property
    def user_turns(self) -> int:
        """Human turns in the whole file."""
        if self._turns is not None:
            return self._turns
        return sum(1 for k in self.kinds if k == USER)

    @property
    def has_usage(self) -> bool:
        return any(r.usage is not None for r in self.requests)

    @property
    def models(self) -> list[str]:
        """Model ids of the requests, in order of first use."""
        out: list[str] = []
        for r in self.requests:
            if r.model and r.model not in out:
                out.append(r.model)
        return out

    @property
    def last_request(self) -> Request | None:
        return self.requests[-1] if self.requests else None

    @property
    def last_request_tokens(self) -> int | None:
        """The last request's recorded prompt (uncached + written + read)."""
        last = self.last_request
        return last.usage.prompt if last is not None and last.usage is not None else None

    @property
    def input_tokens(self) -> int | None:
        """Recorded prompt tokens of every request, summed (None without usage)."""
        if not self.has_usage:
            return None
        return sum(r.usage.prompt for r in self.requests if r.usage is not None)

    @property
    def model(self) -> str | None:
        """The model of the last request (what the next one most likely uses)."""
        for r in reversed(self.requests):
            if r.model:
                return r.model
        return None

    def segment_bounds(self, segment: int) -> tuple[int, int]:
        """[start, end) message indices of the context after ``segment`` compactions."""
        start = self.compactions[segment - 1].at if segment else 0
        end = self.compactions[segment].at if segment < len(self.compactions) else \
            len(self.kinds)
        return start, end

    def live_requests(self) -> list[Request]:
        return [r for r in self.requests if r.segment == len(self.compactions)]

    def live_users(self) -> list[int]:
        """Indices (in the live context) of its human turns."""
        start = self.live_start
        return [i - start for i in range(start, len(self.kinds)) if self.kinds[i] == USER]
