"""What every JSON-lines reader shares: the recorder it tells, counting what it skipped,
and saving its state.

A reader's own state is a few named fields (``FIELDS``), plain data like the recorder's, so
the status line can save a reader after any complete line (marshal) and resume it on the
bytes appended later.
"""

from __future__ import annotations

from .recorder import Recorder
from .session import Session, skipped_warnings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import ClassVar

    from .session import State


class LineReader:
    """The base of the Claude Code, Codex and OpenAI chat readers."""

    format = ""
    unit = "line(s)"                      # what a skipped count counts, in words
    FIELDS: ClassVar[tuple[str, ...]] = ("skipped", "recognised", "seen_lines", "session_id",
                                         "cwd", "started", "window", "now", "previous", "version",
                                         "windows", "auto_limit", "write_counts")

    def __init__(self, tokens: str = "auto", keep: bool = True) -> None:
        self.rec = Recorder(self.format, tokens, keep)
        self.skipped = {"not json": 0, "malformed": 0, "too long": 0}
        self.recognised = 0               # lines of this reader's format
        self.seen_lines = 0               # lines fed, recognised or not
        self.session_id: str | None = None    # the first the file names
        self.cwd: str | None = None           # the last working folder it names
        self.started: float | None = None     # its first timestamp
        self.window: int | None = None        # the context window the agent reported
        self.windows: dict[str, int] = {}     # ... for each model it reported it for
        self.auto_limit: int | None = None    # the auto-compaction limit it reported
        self.version: str | None = None       # the agent's version (the last one named)
        self.write_counts = True              # its usage counts cache writes apart
        self.now: float | None = None         # the time of the line being read
        self.previous: float | None = None    # ... of the line with a time before it

    def where(self, session_id: object, cwd: object, time: float | None) -> None:
        """Note a line's session id, working folder and time (``now``: the latest)."""
        if time is not None:
            self.previous, self.now = self.now, time
        if self.session_id is None and isinstance(session_id, str) and session_id:
            self.session_id = session_id
        if isinstance(cwd, str) and cwd:
            self.cwd = cwd
        if self.started is None and time is not None:
            self.started = time

    def gap(self) -> float | None:
        """The seconds from the line before to the line being read (None: unknown)."""
        now, before = self.now, self.previous
        return None if now is None or before is None else now - before

    def skip_bad_line(self) -> None:
        """A line that is not JSON."""
        self.skipped["not json"] += 1
        self.seen_lines += 1

    def skip_long_line(self) -> None:
        """A line too long to parse in bounded memory (read.MAX_LINE)."""
        self.skipped["too long"] += 1
        self.seen_lines += 1

    def skip_malformed(self) -> None:
        """JSON of a shape the format does not have (a list where a name belongs, …)."""
        self.skipped["malformed"] += 1

    def skip_deep_line(self) -> None:
        """JSON nested too deep for the parser: malformed, as a line nested past
        ``jsonsize.MAX_DEPTH`` is.  How deep the parser goes depends on the Python frames
        below it (compiled code has none), so this line, parsed in one build, is one the
        other calls malformed too."""
        self.skip_malformed()
        self.seen_lines += 1

    def feed(self, obj: object) -> None:
        raise NotImplementedError

    def session(self, path: str | None = None) -> Session:
        s = self.rec.session(path)
        s.warnings += skipped_warnings(self.skipped, self.unit)
        s.session_id, s.cwd, s.started, s.window = (self.session_id, self.cwd, self.started,
                                                    self.window)
        s.windows, s.auto_limit, s.version = dict(self.windows), self.auto_limit, self.version
        s.write_counts = self.write_counts
        return s

    def state(self) -> State:
        return {"fields": {name: getattr(self, name) for name in self.FIELDS},
                "recorder": self.rec.state()}

    @classmethod
    def from_state(cls, state: State) -> LineReader:
        reader = cls()                     # (then every field as saved: a compiled class
        for name, value in state["fields"].items():   # has no __new__ to skip __init__)
            setattr(reader, name, value)
        reader.rec = Recorder.from_state(state["recorder"])
        reader.resumed()
        return reader

    def resumed(self) -> None:
        """Rebuild what the saved fields imply (a reader's lookups, not saved twice)."""


# The readers check every shape they read (tests/test_bad_input.py feeds them any JSON), so
# the one error a parsed line can still cause is nesting deeper than the stack; anything
# else (TypeError, KeyError, …) is a bug, and must surface as one, not as a malformed line.
LINE_ERRORS = (RecursionError,)


def feed_line(reader: LineReader, line: bytes, loads: Callable[[bytes], object]) -> None:
    """One line into the reader: a line that is not JSON, or JSON of a shape the format
    does not have, is skipped and counted — never an error for the whole file."""
    try:
        obj = loads(line)
    except ValueError:
        reader.skip_bad_line()
        return
    except RecursionError:
        reader.skip_deep_line()
        return
    feed_parsed(reader, obj)


def feed_parsed(reader: LineReader, obj: object) -> None:
    """A parsed line into the reader: JSON of a shape the format does not have is skipped
    and counted as malformed (a whole line, or a whole last line: read.finish_tail)."""
    try:
        reader.feed(obj)
    except LINE_ERRORS:
        reader.skip_malformed()
