"""What every JSON-lines reader shares: counting what it skipped, and saving its state.

A reader's state is plain lists, dicts and numbers, so the status line can save it after
any complete line (marshal) and resume on the bytes appended later.
"""

from __future__ import annotations


class LineReader:
    """The base of the Claude Code, Codex and OpenAI chat readers."""

    format = ""

    def __init__(self) -> None:
        self.kinds: list[str] = []        # per message: its kind (model.USER, TOOL, …)
        self.nbytes: list[int] = []       # per message: the JSON size of its content
        self.skipped = {"not json": 0, "malformed": 0}
        self.recognised = 0               # lines of this reader's format
        self.seen_lines = 0               # lines fed, recognised or not

    def skip_bad_line(self) -> None:
        """A line that is not JSON."""
        self.skipped["not json"] += 1
        self.seen_lines += 1

    def skip_malformed(self) -> None:
        """JSON of a shape the format does not have (a list where a name belongs, …)."""
        self.skipped["malformed"] += 1

    def feed(self, obj: object) -> None:
        raise NotImplementedError

    def state(self) -> dict:
        return dict(vars(self))

    @classmethod
    def from_state(cls, state: dict) -> "LineReader":
        reader = cls()
        for name, value in state.items():
            setattr(reader, name, value)
        return reader
