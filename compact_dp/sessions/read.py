"""Reading a session file in one streaming pass: sniff the format, feed the reader, size.

Files are only ever read.  Lines are parsed by the standard library's C JSON scanner
through ``lightjson``, which skips json's import (orjson's import alone costs more than
parsing a session), and a Claude Code line is parsed only if it can be conversation at
all — most lines are progress events.
"""

from __future__ import annotations

import sys

from ..core.scan import CHUNK, open_source
from ..errors import FormatError, InputError, NotASession, UsageError, os_reason
from .line_reader import feed_line, feed_parsed
from .recorder import TOKEN_MODES
from .session import MAX_LINE, Session
from .sniff import FORMATS, claude_code_bookkeeping, sniff

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import IO

    from .line_reader import LineReader

HEAD = 1 << 16
# a Claude Code line can be conversation only if it names one of these roles or types
CLAUDE_MARKERS = (b'"user"', b'"assistant"', b'"system"')


def reader_class(format: str, fast: bool = False) -> type[LineReader]:
    """``fast``: a Claude Code session is read with orjson where it gives the same numbers
    (``fast``; replay only: it costs an import the status line must not pay)."""
    if format == "claude-code":
        if fast:
            from .fast import FastClaudeCodeReader
            return FastClaudeCodeReader
        from .claude_code import ClaudeCodeReader
        return ClaudeCodeReader
    if format == "codex":
        from .codex import CodexReader
        return CodexReader
    from .openai_chat import OpenAIChatReader
    return OpenAIChatReader


def reader_for(format: str, tokens: str = "auto", keep: bool = True,
               sidechains: bool = False, fast: bool = False) -> LineReader:
    """A reader of ``format`` telling a recorder (``keep``: a full session)."""
    cls = reader_class(format, fast)
    if sidechains:
        from .claude_code import ClaudeCodeReader
        assert issubclass(cls, ClaudeCodeReader), "only Claude Code files have sidechains"
        return cls(tokens, keep, sidechains=True)
    return cls(tokens, keep)


def chunks(stream: IO[bytes], head: bytes, chunk: int = CHUNK) -> Iterator[bytes]:
    if head:
        yield head
    while True:
        data = stream.read(chunk)
        if not data:
            return
        yield data


BOM = b"\xef\xbb\xbf"
class LongLine:
    """A line longer than MAX_LINE: its length only (it is never parsed, so a 1 GB line
    costs no more memory than a short one)."""

    __slots__ = ("length",)

    def __init__(self, length: int):
        self.length = length


def feed_block(reader: LineReader, block: bytes | LongLine, markers: tuple[bytes, ...] | None
               ) -> None:
    """Feed the complete lines of a block (that ends with a newline, or is empty)."""
    if isinstance(block, LongLine):
        reader.skip_long_line()
        return
    if not block:
        return
    from ..lightjson import loads  # here: a bash-agent decision never needs it
    for line in block.split(b"\n"):
        if not line.strip() or markers is not None and not any(m in line for m in markers):
            continue
        feed_line(reader, line, loads)


def line_spans(data: Iterable[bytes], rest: list[bytes], limit: int = MAX_LINE
               ) -> Iterator[tuple[bytes, int, int] | LongLine]:
    """The chunks cut after their last newline: spans ``(chunk, start, stop)`` of whole
    lines, found in place (a chunk is not copied: most bytes are in lines no reader
    parses).  A line not finished yet waits in ``rest``, in pieces joined once when it ends
    (not copied again for every chunk of a long line) and given as a span of its own; what
    ``rest`` holds at the end is the unterminated tail.  A line that grows past ``limit``
    is dropped as it is read and comes out as a ``LongLine``."""
    held = sum(map(len, rest))
    long = 0                              # bytes of a line past the limit, dropped
    for chunk in data:
        cut = chunk.rfind(b"\n") + 1
        if not cut:
            if long or held + len(chunk) > limit:
                long += held + len(chunk)
                rest.clear()
                held = 0
            else:
                rest.append(chunk)
                held += len(chunk)
            continue
        first = chunk.find(b"\n") + 1
        if long or held + first > limit:
            yield LongLine(long + held + first)
            long = 0
        elif rest:
            rest.append(chunk[:first])
            yield b"".join(rest), 0, held + first
        else:
            first = 0
        if first < cut:
            yield chunk, first, cut
        tail = chunk[cut:]
        rest[:] = [tail] if tail else []
        held = len(tail)
    if long:                              # an unterminated line past the limit
        rest.clear()
        yield LongLine(long + held)


def feed_lines(reader: LineReader, data: Iterable[bytes], rest: list[bytes]
               ) -> Iterator[int]:
    """The one reading loop: every whole line of ``data`` fed to ``reader`` (a Claude Code
    line only if it can be conversation), yielding the bytes each block took; ``rest`` ends
    holding the unterminated tail.  A ``FastClaudeCodeReader`` is fed orjson's values —
    known by its class, looked for only once its module is loaded (orjson is an import the
    status line must not pay)."""
    markers = markers_of(reader.format)
    fast = sys.modules.get("compact_dp.sessions.fast")
    if fast is not None:
        from .fast import FastClaudeCodeReader
        from .fast import feed_block as fast_block
        if isinstance(reader, FastClaudeCodeReader):
            for span in line_spans(data, rest):
                if isinstance(span, LongLine):
                    reader.skip_long_line()
                    yield span.length
                else:
                    block, start, stop = span
                    fast_block(reader, block, start, stop)
                    yield stop - start
            return
    for line_block in line_blocks(data, rest):
        feed_block(reader, line_block, markers)
        yield line_block.length if isinstance(line_block, LongLine) else len(line_block)


def markers_of(format: str) -> tuple[bytes, ...] | None:
    """What a line of ``format`` names if it can be conversation (None: any line can)."""
    return CLAUDE_MARKERS if format == "claude-code" else None


def line_blocks(data: Iterable[bytes], rest: list[bytes], limit: int = MAX_LINE
                ) -> Iterator[bytes | LongLine]:
    """``line_spans`` as blocks of whole lines (each span's bytes)."""
    for span in line_spans(data, rest, limit):
        if isinstance(span, LongLine):
            yield span
        else:
            block, start, stop = span
            yield block if start == 0 and stop == len(block) else block[start:stop]


def finish_tail(reader: LineReader, tail: bytes, markers: tuple[bytes, ...] | None) -> str | None:
    """Feed an unterminated last line if it is whole; else say it was left out."""
    if not tail.strip():
        return None
    if markers is not None and not any(m in tail for m in markers):
        return None
    from ..lightjson import loads
    try:
        obj = loads(tail)
    except RecursionError:
        reader.skip_deep_line()
        return None
    except ValueError:
        return (f"the last line ({len(tail):,} bytes) is incomplete — a session still being "
                "written? — and was left out")
    feed_parsed(reader, obj)
    return None


def finished(reader: LineReader, tail: bytes, markers: tuple[bytes, ...] | None, name: str,
             format: str, sniffed: bool) -> Session:
    """The session of a reader fed every whole line: the tail fed if it is whole, and what
    the file turned out to be said — not this format (an error), only sub-agent lines (an
    error), no request yet (a warning).  The reader is done with: the open request is closed."""
    warning = finish_tail(reader, tail, markers)
    check_recognised(reader, name, format, sniffed)
    session = reader.session(name)
    if warning:
        session.warnings.append(warning)
    if format == "claude-code" and not reader.rec.message_count and \
            reader.skipped.get("sidechain"):
        raise FormatError(f"{name}: only sub-agent lines (isSidechain): a subagents/ file, "
                          "not a main session")
    if not session.request_count and reader.rec.message_count:
        session.warnings.append("no API request recorded yet: sizes come from the content "
                                "and the stats from the defaults")
    return session


def not_a_session(name: str, head: bytes) -> NotASession:
    """The error for a file in no known format, saying what it is where it can: a file of
    Claude Code's own bookkeeping (its summary lines) has no conversation to read, and
    ``--format bash-agent`` would only read its JSON as lines."""
    kinds = claude_code_bookkeeping(head.removeprefix(BOM))
    if kinds:
        return NotASession(name, "a Claude Code file with no conversation in it (only "
                           f"{', '.join(kinds)} lines)")
    return NotASession(name, "not a session in a known format (bash-agent, claude-code, "
                       "codex, openai)", "--format bash-agent reads any text as bash-agent "
                       "lines")


def check_recognised(reader: LineReader, name: str, format: str, sniffed: bool = False) -> None:
    """A file in which the reader recognised nothing of its format is not that format."""
    if not reader.recognised and reader.seen_lines:
        raise FormatError(f"{name}: no {format} line in it " + _hint(format, sniffed))


def _hint(format: str, sniffed: bool) -> str:
    if sniffed:
        return (f"though its first bytes look like {format}'s; --format "
                f"{'|'.join(f for f in FORMATS if f != format)} reads it as another")
    return "(a session in another format? --format auto tells)"


def read_session(paths: list[str], format: str = "auto", tokens: str = "auto",
                 stdin: IO[bytes] | None = None, fast: bool = False) -> Session:
    """The normalised, sized session of FILE... (``-`` or none: standard input);
    ``fast``: with orjson where it gives the same numbers (``reader_class``)."""
    if format != "auto" and format not in FORMATS:
        raise UsageError(f"--format: {format!r} is not one of auto, {', '.join(FORMATS)}")
    if tokens not in TOKEN_MODES:
        raise UsageError(f"--tokens: {tokens!r} is not one of usage, bytes (or auto)")
    paths = list(paths) or ["-"]
    stream = open_source(paths[0], stdin)
    name = paths[0] if paths[0] != "-" else "standard input"
    try:
        head = stream.read(HEAD)
        found = sniff(head.removeprefix(BOM)) if format == "auto" else format
        if found is None:
            raise not_a_session(name, head)
        if found != "bash-agent" and len(paths) > 1:
            raise UsageError(f"a {found} session is one file; got {len(paths):,}")
        if found == "bash-agent":
            session = _bash_agent(paths, stream, head, stdin)
        else:
            session = _jsonl(reader_for(found, tokens, fast=fast), stream, head, name,
                             sniffed=format == "auto")
    except OSError as e:
        raise InputError(f"{name}: {os_reason(e)}") from None
    finally:
        if stream is not stdin:
            stream.close()
    if tokens == "usage" and not session.has_usage and session.format != "bash-agent":
        session.warnings.append("the session records no usage: --tokens usage falls back "
                                "to bytes")
    return session


def read_raw(path: str, format: str, sidechains: bool = False, fast: bool = False
             ) -> Session:
    """One file in a known format, sub-agents' lines included (their own files)."""
    stream = open_source(path, None)
    try:
        head = stream.read(HEAD)
        return _jsonl(reader_for(format, sidechains=sidechains, fast=fast), stream, head,
                      path)
    except OSError as e:
        raise InputError(f"{path}: {os_reason(e)}") from None
    finally:
        stream.close()


def _bash_agent(paths: list[str], stream: IO[bytes], head: bytes,
                stdin: IO[bytes] | None) -> Session:
    from .bash_agent import BashAgentScanner

    scanner = BashAgentScanner()
    scanner.add_stream(_Chained(head, stream))
    for path in paths[1:]:
        scanner.add_path(path, stdin)
    return scanner.session(paths[0])


def _jsonl(reader: LineReader, stream: IO[bytes], head: bytes, name: str, sniffed: bool = False
           ) -> Session:
    from ..lightjson import loads

    format = reader.format
    if head.startswith(BOM):
        head = head[len(BOM):]
    if format == "openai" and head.lstrip()[:1] in (b"[", b"{") and \
            not _one_object_per_line(head):
        try:
            document = loads(head + stream.read())
        except (ValueError, RecursionError):
            raise FormatError(f"{name}: not valid JSON (an OpenAI chat array or one "
                              "message per line)" + ("; --format bash-agent reads any "
                                                     "lines" if sniffed else "")) from None
        feed_parsed(reader, document)
        return finished(reader, b"", None, name, format, sniffed)
    rest: list[bytes] = []
    for _ in feed_lines(reader, chunks(stream, head), rest):
        pass
    session = finished(reader, b"".join(rest), markers_of(format), name, format, sniffed)
    if format == "claude-code" and not sniffed and not reader.recognised and \
            not _typed_line_in(head):
        # no line could be conversation, so none was parsed (check_recognised saw none):
        # text named --format claude-code is not a session with nothing in it yet (a new
        # transcript's first lines are typed JSON, bookkeeping before the conversation)
        raise FormatError(f"{name}: no {format} line in it " + _hint(format, sniffed))
    return session


def _typed_line_in(head: bytes) -> bool:
    """Whether a line of ``head`` reads as a JSON object with a ``type`` (every Claude Code
    line does; one longer than the head is cut, so it is not parsed), or ``head`` is blank
    (an empty file is a session with nothing in it yet)."""
    if not head.strip():
        return True
    return any(line.lstrip().startswith(b"{") and b'"type"' in line
               for line in head.split(b"\n"))


def _one_object_per_line(head: bytes) -> bool:
    from ..lightjson import loads
    first = head.lstrip().split(b"\n", 1)[0]
    try:
        return isinstance(loads(first), dict)
    except (ValueError, RecursionError):
        return False


class _Chained:
    """A stream that first returns ``head`` (already read for sniffing), then the rest."""

    def __init__(self, head: bytes, stream: IO[bytes]):
        self.head, self.stream = head, stream

    def read(self, n: int = -1) -> bytes:
        if self.head:
            data, self.head = self.head, b""
            return data
        return self.stream.read(n)
